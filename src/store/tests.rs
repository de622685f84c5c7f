//! Unit tests of the redb store: batches survive reopening; records round-trip and refuse
//! other layouts; a store of another format is not read; a second open is refused clearly.

use super::*;

fn hash(seed: &str) -> String {
    crate::text::sha256_hex(seed.as_bytes())
}

fn doc(seed: &str, ids: Vec<u64>) -> DocumentRecord {
    DocumentRecord { source_hash: hash(seed), len: 1, mtime_ns: 2, indexed_at_s: 3, chunk_ids: ids }
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
        b.put_document("a.md", &doc("h1", ids.clone().collect())).unwrap();
        b.set_manifest(&BTreeMap::from([("record_version".to_owned(), RECORD_VERSION.to_string())])).unwrap();
        b.commit(1).unwrap();
        assert_eq!(store.counts().unwrap(), (1, 2));
        let mut b = store.batch().unwrap();
        let ids = b.allocate_chunk_ids(1).unwrap();
        assert_eq!(ids, 3..4);
        let removed = b.put_document("a.md", &doc("h2", vec![3])).unwrap();
        assert_eq!(removed, vec![1, 2]);
        b.commit(2).unwrap();
    }
    let store = Store::open(&path).unwrap();
    assert!(store.foreign_format().is_none());
    assert_eq!(store.generation().unwrap(), 2);
    assert_eq!(store.counts().unwrap(), (1, 1));
    assert_eq!(store.document("a.md").unwrap().unwrap().source_hash, hash("h2"));
    assert_eq!(store.document("a.md").unwrap().unwrap().chunk_ids, vec![3]);
    assert_eq!(store.manifest().unwrap()["record_version"], RECORD_VERSION.to_string());
    assert_eq!(store.last_batch().unwrap(), vec!["a.md".to_owned()]);
    let mut b = store.batch().unwrap();
    assert_eq!(b.delete_document("a.md").unwrap(), vec![3]);
    b.reset().unwrap();
    b.commit(3).unwrap();
    assert_eq!(store.counts().unwrap(), (0, 0));
    assert!(store.manifest().unwrap().is_empty());
}

#[test]
fn document_records_round_trip_compactly_and_refuse_other_layouts() {
    let ids = vec![7, 8, 9, 10, 3, u64::MAX, 0];
    let record = DocumentRecord {
        source_hash: hash("x"),
        len: 123_456,
        mtime_ns: 1_764_600_000_123_456_789,
        indexed_at_s: 1_764_600_000,
        chunk_ids: ids,
    };
    let bytes = record.encode().unwrap();
    assert_eq!(DocumentRecord::decode(&bytes).unwrap(), record);
    // 1 version + 32 hash + small varints: consecutive ids cost one byte each.
    let consecutive = DocumentRecord { chunk_ids: (1000..1100).collect(), ..record.clone() };
    assert!(consecutive.encode().unwrap().len() < 1 + 32 + 30 + 100 + 3, "not compact");
    // Another version, truncation, trailing bytes and JSON (format 1) are refused, not misread.
    let mut other = bytes.clone();
    other[0] = 1;
    for bad in
        [other, bytes[..bytes.len() - 1].to_vec(), [bytes.clone(), vec![0]].concat(), br#"{"v":1}"#.to_vec()]
    {
        let err = DocumentRecord::decode(&bad).unwrap_err();
        assert!(err.message.contains("reindex --force"), "{}", err.message);
    }
    assert!(DocumentRecord { source_hash: "x".into(), ..record }.encode().is_err(), "a hash must be SHA-256");
}

#[test]
fn a_store_of_another_format_is_not_read_until_wiped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("meta.redb");
    {
        // Format 1's layout: JSON records, a `vectors` table of other types, record_version 1.
        let db = redb::Database::create(&path).unwrap();
        let txn = db.begin_write().unwrap();
        {
            let mut m = txn.open_table(MANIFEST).unwrap();
            m.insert("schema_version", "lvs-1").unwrap();
            m.insert("record_version", "1").unwrap();
            let docs: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("documents");
            txn.open_table(docs).unwrap().insert("a.md", br#"{"v":1}"#.as_slice()).unwrap();
            let vectors: TableDefinition<'_, u64, &str> = TableDefinition::new("vectors");
            txn.open_table(vectors).unwrap().insert(1, "hash").unwrap();
        }
        txn.commit().unwrap();
    }
    let mut store = Store::open(&path).unwrap();
    let foreign = store.foreign_format().cloned().unwrap();
    assert_eq!(foreign.schema_version.as_deref(), Some("lvs-1"));
    assert_eq!(foreign.record_version.as_deref(), Some("1"));
    store.wipe().unwrap();
    assert!(store.foreign_format().is_none());
    assert_eq!(store.counts().unwrap(), (0, 0));
    assert!(store.manifest().unwrap().is_empty());
    assert!(store.vector_keys().unwrap().is_empty());
    let names: Vec<String> = store.table_sizes().unwrap().into_iter().map(|t| t.name).collect();
    assert!(names.contains(&"documents".to_owned()) && !names.contains(&"chunks".to_owned()), "{names:?}");
    drop(store);
    assert!(Store::open(&path).unwrap().foreign_format().is_none());
}

#[test]
fn vector_hashes_are_stored_as_bytes_and_read_back_as_hex() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("meta.redb")).unwrap();
    store
        .update_vectors(Some(&BTreeMap::from([("m".to_owned(), "1".to_owned())])), &[(5, hash("t"))], &[])
        .unwrap();
    assert_eq!(store.vector_keys().unwrap(), HashMap::from([(5, hash("t"))]));
    assert_eq!(store.vector_count().unwrap(), 1);
}

#[test]
fn a_second_open_in_the_same_process_is_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("meta.redb");
    let _first = Store::open(&path).unwrap();
    let err = Store::open(&path).err().unwrap();
    assert!(err.message.contains("another process"), "{}", err.message);
}
