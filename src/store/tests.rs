//! Unit tests of the redb store: batches survive reopening; a second open is refused clearly.

use super::*;

fn doc(hash: &str, ids: Vec<u64>) -> DocumentRecord {
    DocumentRecord {
        v: RECORD_VERSION,
        source_hash: hash.into(),
        len: 1,
        mtime_ns: 2,
        indexed_at: "t".into(),
        chunk_ids: ids,
    }
}

fn chunk(path: &str) -> ChunkRecord {
    ChunkRecord {
        v: RECORD_VERSION,
        path: path.into(),
        anchor: "p1~0~0".into(),
        text: "本文".into(),
        heading_path: None,
        embedding_text_hash: "h".into(),
        start_line: 1,
        end_line: 1,
    }
}

#[test]
fn batches_replace_documents_and_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("meta.redb");
    {
        let store = Store::open(&path).unwrap();
        let mut b = store.batch().unwrap();
        let ids = b.allocate_chunk_ids(2).unwrap();
        assert_eq!(ids, 1..3);
        b.put_document(
            "a.md",
            &doc("h1", ids.clone().collect()),
            &[],
            &[(1, chunk("a.md")), (2, chunk("a.md"))],
        )
        .unwrap();
        b.set_manifest(&BTreeMap::from([("schema_version".to_owned(), "x".to_owned())])).unwrap();
        b.commit(1).unwrap();
        let mut b = store.batch().unwrap();
        let ids = b.allocate_chunk_ids(1).unwrap();
        assert_eq!(ids, 3..4);
        let removed = b.put_document("a.md", &doc("h2", vec![3]), &[], &[(3, chunk("a.md"))]).unwrap();
        assert_eq!(removed, vec![1, 2]);
        b.commit(2).unwrap();
    }
    let store = Store::open(&path).unwrap();
    assert_eq!(store.generation().unwrap(), 2);
    assert_eq!(store.counts().unwrap(), (1, 1));
    assert_eq!(store.document("a.md").unwrap().unwrap().source_hash, "h2");
    assert_eq!(store.chunks(&[1, 3]).unwrap().len(), 1);
    assert_eq!(store.manifest().unwrap()["schema_version"], "x");
    assert_eq!(store.last_batch().unwrap(), vec!["a.md".to_owned()]);
    let mut b = store.batch().unwrap();
    assert_eq!(b.delete_document("a.md").unwrap(), vec![3]);
    b.reset().unwrap();
    b.commit(3).unwrap();
    assert_eq!(store.counts().unwrap(), (0, 0));
    assert!(store.manifest().unwrap().is_empty());
}

#[test]
fn a_second_open_in_the_same_process_is_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("meta.redb");
    let _first = Store::open(&path).unwrap();
    let err = Store::open(&path).err().unwrap();
    assert!(err.message.contains("another process"), "{}", err.message);
}
