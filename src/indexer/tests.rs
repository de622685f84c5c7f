//! Unit tests of the indexer: crash repair by generations, incompatible settings, the writer
//! lock and incremental reindexing.

use super::*;

fn workspace(files: &[(&str, &str)]) -> (tempfile::TempDir, Arc<Workspace>, IndexLayout) {
    let dir = tempfile::tempdir().unwrap();
    for (p, text) in files {
        let path = dir.path().join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let ws =
        Arc::new(Workspace::new(dir.path().to_path_buf(), crate::workspace::DEFAULT_INTERNAL_DIR).unwrap());
    let layout = IndexLayout::new(dir.path().join(crate::workspace::DEFAULT_INTERNAL_DIR));
    (dir, ws, layout)
}

fn filter() -> GlobFilter {
    GlobFilter::new(&[], &[]).unwrap()
}

fn search_paths(layout: &IndexLayout, q: &str) -> Vec<String> {
    let index = LexicalIndex::open_or_create(&layout.lexical_dir()).unwrap();
    index.search(q, 10, None).unwrap().into_iter().map(|h| h.path).collect()
}

#[test]
fn an_interrupted_commit_is_replayed_on_open() {
    let (_dir, ws, layout) = workspace(&[("a.md", "# 見出し\n\n京都の話。\n")]);
    {
        let mut ix =
            Indexer::open(Arc::clone(&ws), filter(), ChunkOptions::default(), &layout, None).unwrap();
        ix.reindex(ReindexOptions::default(), &mut |_| {}).unwrap();
    }
    // Simulate a crash after the store committed generation g+1 but before the lexical index did.
    std::fs::write(_dir.path().join("b.md"), "大阪の話。\n").unwrap();
    {
        let store = Store::open(&layout.store_path()).unwrap();
        let g = store.generation().unwrap();
        let mut batch = store.batch().unwrap();
        let ids = batch.allocate_chunk_ids(1).unwrap();
        let chunk = ChunkRecord {
            v: RECORD_VERSION,
            path: "b.md".into(),
            anchor: "p1~0000000000000000~0000000000000000".into(),
            text: "大阪の話。".into(),
            heading_path: None,
            embedding_text_hash: String::new(),
            start_line: 1,
            end_line: 1,
        };
        let record = DocumentRecord {
            v: RECORD_VERSION,
            source_hash: "x".into(),
            len: 0,
            mtime_ns: 0,
            indexed_at: String::new(),
            chunk_ids: ids.clone().collect(),
        };
        batch.put_document("b.md", &record, &[], &[(ids.start, chunk)]).unwrap();
        batch.commit(g + 1).unwrap();
    }
    assert!(search_paths(&layout, "大阪").is_empty(), "the lexical index lags behind");
    let ix = Indexer::open(Arc::clone(&ws), filter(), ChunkOptions::default(), &layout, None).unwrap();
    drop(ix);
    assert_eq!(search_paths(&layout, "大阪"), ["b.md"]);
    assert_eq!(search_paths(&layout, "京都"), ["a.md"]);
}

#[test]
fn a_lexical_index_far_behind_is_rebuilt_from_the_store() {
    let (_dir, ws, layout) = workspace(&[("a.md", "京都の話。\n"), ("b.md", "奈良の話。\n")]);
    {
        let mut ix =
            Indexer::open(Arc::clone(&ws), filter(), ChunkOptions::default(), &layout, None).unwrap();
        ix.reindex(ReindexOptions::default(), &mut |_| {}).unwrap();
    }
    std::fs::remove_dir_all(layout.lexical_dir()).unwrap();
    drop(Indexer::open(Arc::clone(&ws), filter(), ChunkOptions::default(), &layout, None).unwrap());
    assert_eq!(search_paths(&layout, "奈良"), ["b.md"]);
}

#[test]
fn incompatible_settings_need_force_and_keep_data_until_then() {
    let (_dir, ws, layout) = workspace(&[("a.md", "# A\n\none\n\ntwo\n")]);
    let mut ix = Indexer::open(Arc::clone(&ws), filter(), ChunkOptions::default(), &layout, None).unwrap();
    ix.reindex(ReindexOptions::default(), &mut |_| {}).unwrap();
    drop(ix);
    let changed = ChunkOptions { max_elements: 1, ..ChunkOptions::default() };
    let mut ix = Indexer::open(Arc::clone(&ws), filter(), changed, &layout, None).unwrap();
    let err = ix.reindex(ReindexOptions::default(), &mut |_| {}).unwrap_err();
    assert!(err.message.starts_with("Index is incompatible with current configuration:\n- chunking_max_elements: indexed '20', current '1'"), "{}", err.message);
    assert!(err.message.contains("force"));
    assert_eq!(search_paths(&layout, "two"), ["a.md"], "data is kept");
    let mut destructive = false;
    let r = ix
        .reindex(ReindexOptions { all: false, force: true }, &mut |p| destructive |= p.destructive)
        .unwrap();
    assert!(destructive);
    assert_eq!(r.chunks_indexed, 2);
    assert!(ix.compatibility().unwrap().is_compatible);
}

#[test]
fn one_writer_at_a_time_with_a_clear_message() {
    let (_dir, ws, layout) = workspace(&[("a.md", "x\n")]);
    let _first = Indexer::open(Arc::clone(&ws), filter(), ChunkOptions::default(), &layout, None).unwrap();
    let err = Indexer::open(Arc::clone(&ws), filter(), ChunkOptions::default(), &layout, None).err().unwrap();
    assert!(err.message.contains("Another local-vector-search-mcp process is writing"), "{}", err.message);
}

#[test]
fn unreadable_files_are_reported_not_fatal_and_reconcile_follows_edits() {
    let (dir, ws, layout) = workspace(&[("ok.md", "京都\n")]);
    std::fs::write(dir.path().join("bad.md"), b"\xff\xfe binary \x00").unwrap();
    let mut ix = Indexer::open(Arc::clone(&ws), filter(), ChunkOptions::default(), &layout, None).unwrap();
    let r = ix.reindex(ReindexOptions::default(), &mut |_| {}).unwrap();
    assert_eq!((r.indexed_files, r.failed_files.len()), (1, 1));
    assert!(r.failed_files[0].starts_with("bad.md: "), "{:?}", r.failed_files);
    assert!(r.warning.is_some());
    std::fs::write(dir.path().join("ok.md"), "奈良\n").unwrap();
    let ok = RelPath::new("ok.md").unwrap();
    assert_eq!(ix.reconcile(std::slice::from_ref(&ok)).unwrap(), 1);
    assert_eq!(search_paths(&layout, "奈良"), ["ok.md"]);
    std::fs::remove_file(dir.path().join("ok.md")).unwrap();
    assert_eq!(ix.reconcile(&[ok]).unwrap(), 1);
    assert!(search_paths(&layout, "奈良").is_empty());
}
