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

fn link_graph(layout: &IndexLayout) -> LinkGraph {
    LinkGraph::read(&layout.links_path()).unwrap()
}

#[test]
fn the_link_graph_follows_commits_moves_and_crashes() {
    let (dir, ws, layout) = workspace(&[("a.md", "# A\n\n[b](b.md)\n"), ("b.md", "# B\n\n[a](a.md#a)\n")]);
    let mut ix = Indexer::open(Arc::clone(&ws), filter(), ChunkOptions::default(), &layout, None).unwrap();
    ix.reindex(ReindexOptions::default(), &mut |_| {}).unwrap();
    let g = link_graph(&layout);
    assert_eq!(g.generation, ix.store().generation().unwrap());
    assert_eq!(g.docs.keys().collect::<Vec<_>>(), ["a.md", "b.md"]);
    assert_eq!(g.docs["a.md"].links[0].raw, "b.md");
    assert_eq!(LinkGraph::read_generation(&layout.links_path()), Some(g.generation));
    // A move: both paths are reconciled; the graph drops the old path and adds the new one.
    std::fs::rename(dir.path().join("b.md"), dir.path().join("c.md")).unwrap();
    ix.reconcile(&[RelPath::new("b.md").unwrap(), RelPath::new("c.md").unwrap()]).unwrap();
    let g = link_graph(&layout);
    assert_eq!(g.docs.keys().collect::<Vec<_>>(), ["a.md", "c.md"]);
    // An edit of one file updates only its record.
    std::fs::write(dir.path().join("a.md"), "# A\n\n[c](c.md)\n").unwrap();
    ix.reconcile(&[RelPath::new("a.md").unwrap()]).unwrap();
    assert_eq!(link_graph(&layout).docs["a.md"].links[0].raw, "c.md");
    let generation = ix.store().generation().unwrap();
    assert_eq!((link_graph(&layout).generation, layout.links_generation()), (generation, Some(generation)));
    // An edit that changes no link or anchor leaves links.bin alone; links.gen moves on.
    std::fs::write(dir.path().join("a.md"), "# A\n\n[c](c.md)\n\nA new paragraph.\n").unwrap();
    ix.reconcile(&[RelPath::new("a.md").unwrap()]).unwrap();
    assert_eq!(link_graph(&layout).generation, generation);
    let generation = ix.store().generation().unwrap();
    assert_eq!(layout.links_generation(), Some(generation));
    drop(ix);
    // A crash before the snapshot was written: the next writer rewrites it from the store.
    std::fs::remove_file(layout.links_path()).unwrap();
    drop(Indexer::open(Arc::clone(&ws), filter(), ChunkOptions::default(), &layout, None).unwrap());
    let g = link_graph(&layout);
    assert_eq!((g.generation, g.docs.len()), (generation, 2));
    assert_eq!(layout.links_generation(), Some(generation));
    assert_eq!(g.docs["c.md"].links[0].raw, "a.md#a");
    // A crash after the store committed an edit that changed links, before the snapshot: the
    // old snapshot, valid one generation back. The store has no copy of the links: the last
    // batch's files are read again.
    let old = std::fs::read(layout.links_path()).unwrap();
    let mut ix = Indexer::open(Arc::clone(&ws), filter(), ChunkOptions::default(), &layout, None).unwrap();
    std::fs::write(dir.path().join("c.md"), "# C\n\n[b](b.md) [d](d.md)\n").unwrap();
    ix.reconcile(&[RelPath::new("c.md").unwrap()]).unwrap();
    let generation = ix.store().generation().unwrap();
    drop(ix);
    std::fs::write(layout.links_path(), &old).unwrap();
    std::fs::write(layout.links_generation_path(), (generation - 1).to_string()).unwrap();
    drop(Indexer::open(Arc::clone(&ws), filter(), ChunkOptions::default(), &layout, None).unwrap());
    let g = link_graph(&layout);
    let raws: Vec<&str> = g.docs["c.md"].links.iter().map(|l| l.raw.as_str()).collect();
    assert_eq!(
        (raws, g.generation, layout.links_generation()),
        (vec!["b.md", "d.md"], generation, Some(generation))
    );
    assert_eq!(g.docs["a.md"].links[0].raw, "c.md", "the other documents come from the snapshot");
    // No copy of the graph in the store, and no `links.json` beside `links.bin`.
    let store = Store::open(&layout.store_path()).unwrap();
    let tables: Vec<String> = store.table_sizes().unwrap().into_iter().map(|t| t.name).collect();
    assert!(!tables.iter().any(|t| t == "links"), "{tables:?}");
    assert!(!layout.dir().join("links.json").exists());
}

/// A crash after the store committed generation g+1 but before the lexical index did: the
/// store's record of each path of that batch, written by hand.
fn commit_store_only(layout: &IndexLayout, docs: &[(&str, &str, usize)]) {
    let store = Store::open(&layout.store_path()).unwrap();
    let g = store.generation().unwrap();
    let mut batch = store.batch().unwrap();
    for (path, indexed_text, chunks) in docs {
        let ids = batch.allocate_chunk_ids(*chunks).unwrap();
        let record = DocumentRecord {
            source_hash: crate::text::sha256_hex(indexed_text.as_bytes()),
            len: 0,
            mtime_ns: 0,
            indexed_at_s: 0,
            chunk_ids: ids.collect(),
        };
        batch.put_document(path, &record).unwrap();
    }
    batch.commit(g + 1).unwrap();
}

#[test]
fn a_reconcile_that_changes_nothing_commits_nothing() {
    let (_dir, ws, layout) = workspace(&[("a.md", "# A\n\ntext\n")]);
    let mut ix = Indexer::open(Arc::clone(&ws), filter(), ChunkOptions::default(), &layout, None).unwrap();
    ix.reindex(ReindexOptions::default(), &mut |_| {}).unwrap();
    let generation = ix.store().generation().unwrap();
    // The watcher's echo of a write already indexed, and a path that never existed.
    let paths = [RelPath::new("a.md").unwrap(), RelPath::new("gone.md").unwrap()];
    assert_eq!(ix.reconcile(&paths).unwrap(), 0);
    assert_eq!(ix.store().generation().unwrap(), generation);
    assert_eq!(Snapshot::read(&layout).unwrap().generation, generation);
    assert_eq!(LexicalIndex::open_or_create(&layout.lexical_dir()).unwrap().generation(), Some(generation));
}

#[test]
fn a_session_left_by_another_boot_rebuilds_the_lexical_index_from_the_store() {
    let (_dir, ws, layout) = workspace(&[("a.md", "# 京都\n\n京都の記録。\n")]);
    let open = || Indexer::open(Arc::clone(&ws), filter(), ChunkOptions::default(), &layout, None).unwrap();
    let mut ix = open();
    ix.reindex(ReindexOptions::default(), &mut |_| {}).unwrap();
    assert!(layout.interrupted(), "the marker lives while the writer is open");
    let generation = ix.store().generation().unwrap();
    drop(ix);
    assert!(!layout.interrupted(), "a clean close removes it");
    // The same boot: a marker left by a crash only makes the next writer check generations.
    std::fs::write(
        layout.session_path(),
        std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default().trim(),
    )
    .unwrap();
    drop(open());
    assert!(!layout.interrupted());
    // A lexical index that lost its documents but not its generation (what unsynced files can
    // look like after a power loss), and a marker of an earlier boot.
    {
        let lexical = LexicalIndex::open_or_create(&layout.lexical_dir()).unwrap();
        let mut w = lexical.writer(WriterSize::Bulk(0)).unwrap();
        w.delete_all().unwrap();
        w.commit(generation).unwrap();
    }
    assert!(search_paths(&layout, "京都").is_empty());
    std::fs::write(layout.session_path(), "an-earlier-boot").unwrap();
    drop(open());
    assert_eq!(search_paths(&layout, "京都"), ["a.md"], "rebuilt from the store");
    assert!(!layout.interrupted());
}

#[test]
fn an_interrupted_commit_is_replayed_on_open_from_the_markdown() {
    let (dir, ws, layout) = workspace(&[("a.md", "# 見出し\n\n京都の話。\n")]);
    {
        let mut ix =
            Indexer::open(Arc::clone(&ws), filter(), ChunkOptions::default(), &layout, None).unwrap();
        ix.reindex(ReindexOptions::default(), &mut |_| {}).unwrap();
    }
    // b.md is on disk as indexed; c.md was edited and d.md deleted after the store's commit.
    std::fs::write(dir.path().join("b.md"), "大阪の話。\n").unwrap();
    std::fs::write(dir.path().join("c.md"), "神戸の話。\n").unwrap();
    commit_store_only(
        &layout,
        &[("b.md", "大阪の話。\n", 1), ("c.md", "奈良の話。\n", 1), ("d.md", "名古屋\n", 1)],
    );
    let stored = Store::open(&layout.store_path()).unwrap().documents().unwrap();
    assert!(search_paths(&layout, "大阪").is_empty(), "the lexical index lags behind");
    let ix = Indexer::open(Arc::clone(&ws), filter(), ChunkOptions::default(), &layout, None).unwrap();
    let now = ix.store().documents().unwrap();
    assert_eq!(now["b.md"].chunk_ids, stored["b.md"].chunk_ids, "an unchanged file keeps its chunk ids");
    assert_ne!(now["c.md"].chunk_ids, stored["c.md"].chunk_ids, "a changed file is indexed anew");
    assert_eq!(now["c.md"].source_hash, crate::text::sha256_hex("神戸の話。\n".as_bytes()));
    assert!(!now.contains_key("d.md"), "a file gone since is removed");
    assert_eq!(ix.store().counts().unwrap(), (3, 3));
    let generation = ix.store().generation().unwrap();
    drop(ix);
    assert_eq!(LexicalIndex::open_or_create(&layout.lexical_dir()).unwrap().generation(), Some(generation));
    assert_eq!(search_paths(&layout, "大阪"), ["b.md"]);
    assert_eq!(search_paths(&layout, "神戸"), ["c.md"]);
    assert!(search_paths(&layout, "奈良").is_empty() && search_paths(&layout, "名古屋").is_empty());
    assert_eq!(search_paths(&layout, "京都"), ["a.md"]);
    // Nothing is left to repair: the next open changes nothing.
    let ix = Indexer::open(Arc::clone(&ws), filter(), ChunkOptions::default(), &layout, None).unwrap();
    assert_eq!(ix.store().generation().unwrap(), generation);
}

#[test]
fn a_lexical_index_far_behind_is_rebuilt_from_the_markdown() {
    let (dir, ws, layout) =
        workspace(&[("a.md", "京都の話。\n"), ("b.md", "奈良の話。\n"), ("c.md", "堺\n")]);
    {
        let mut ix =
            Indexer::open(Arc::clone(&ws), filter(), ChunkOptions::default(), &layout, None).unwrap();
        ix.reindex(ReindexOptions::default(), &mut |_| {}).unwrap();
    }
    std::fs::remove_dir_all(layout.lexical_dir()).unwrap();
    std::fs::write(dir.path().join("a.md"), "札幌の話。\n").unwrap();
    std::fs::remove_file(dir.path().join("c.md")).unwrap();
    let ix = Indexer::open(Arc::clone(&ws), filter(), ChunkOptions::default(), &layout, None).unwrap();
    assert_eq!(ix.store().counts().unwrap(), (2, 2));
    drop(ix);
    assert_eq!(search_paths(&layout, "奈良"), ["b.md"]);
    assert_eq!(search_paths(&layout, "札幌"), ["a.md"]);
    assert!(search_paths(&layout, "京都").is_empty() && search_paths(&layout, "堺").is_empty());
}

/// Writes `manifest` over the store's (an index "written" by another format version).
fn set_stored_manifest(layout: &IndexLayout, manifest: &[(&str, &str)]) {
    let store = Store::open(&layout.store_path()).unwrap();
    let mut batch = store.batch().unwrap();
    let m: BTreeMap<String, String> =
        manifest.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    batch.set_manifest(&m).unwrap();
    let g = store.generation().unwrap();
    batch.commit(g).unwrap();
}

#[test]
fn an_index_of_an_older_format_is_rebuilt_and_a_newer_one_needs_force() {
    let (dir, ws, layout) = workspace(&[("a.md", "京都の話。\n"), ("b.md", "奈良の話。\n")]);
    let open = || Indexer::open(Arc::clone(&ws), filter(), ChunkOptions::default(), &layout, None).unwrap();
    open().reindex(ReindexOptions::default(), &mut |_| {}).unwrap();
    // Older: the next reindex rebuilds it without being asked to.
    set_stored_manifest(&layout, &[("schema_version", "lvs-1"), ("record_version", "1")]);
    let mut ix = open();
    let mut destructive = false;
    let r = ix.reindex(ReindexOptions::default(), &mut |p| destructive |= p.destructive).unwrap();
    assert_eq!((r.indexed_files, destructive), (2, true));
    assert_eq!(ix.store().manifest().unwrap()["schema_version"], SCHEMA_VERSION);
    drop(ix);
    assert_eq!(search_paths(&layout, "京都"), ["a.md"]);
    // Older, and the first thing the writer does is an edit: the edit rebuilds it whole.
    set_stored_manifest(&layout, &[("schema_version", "lvs-1"), ("record_version", "1")]);
    std::fs::write(dir.path().join("b.md"), "神戸の話。\n").unwrap();
    let mut ix = open();
    assert_eq!(ix.reconcile(&[RelPath::new("b.md").unwrap()]).unwrap(), 2);
    assert_eq!(ix.store().counts().unwrap(), (2, 2));
    drop(ix);
    assert_eq!(search_paths(&layout, "京都"), ["a.md"]);
    assert_eq!(search_paths(&layout, "神戸"), ["b.md"]);
    // Newer: refused by reindex and edits alike, in one sentence, and left as it is.
    set_stored_manifest(&layout, &[("schema_version", "lvs-99"), ("record_version", "99")]);
    let mut ix = open();
    for err in [
        ix.reindex(ReindexOptions::default(), &mut |_| {}).unwrap_err(),
        ix.reconcile(&[RelPath::new("a.md").unwrap()]).unwrap_err(),
    ] {
        assert!(
            err.message.starts_with("The index was written in format lvs-99 by a newer version"),
            "{}",
            err.message
        );
        assert!(
            err.message.contains("reindex --force")
                && err.message.trim_end_matches('.').matches(". ").count() == 0
        );
    }
    assert_eq!(ix.store().manifest().unwrap()["schema_version"], "lvs-99", "not touched");
    let r = ix.reindex(ReindexOptions { all: false, force: true }, &mut |_| {}).unwrap();
    assert_eq!(r.indexed_files, 2);
    assert_eq!(ix.store().manifest().unwrap()["schema_version"], SCHEMA_VERSION);
}

#[test]
fn a_large_reindex_leaves_the_lexical_index_in_one_segment_and_a_small_one_does_not_merge() {
    // More files than a commit holds: several commits, each a segment per indexing thread.
    let files: Vec<(String, String)> = (0..COMPACT_AFTER as usize + 200)
        .map(|i| (format!("d/{i:04}.md"), format!("# 見出し{i}\n\n京都の話 {i}。\n")))
        .collect();
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    let (dir, ws, layout) = workspace(&refs);
    let mut ix = Indexer::open(Arc::clone(&ws), filter(), ChunkOptions::default(), &layout, None).unwrap();
    let r = ix.reindex(ReindexOptions::default(), &mut |_| {}).unwrap();
    assert_eq!(r.indexed_files, files.len() as u64);
    assert_eq!(ix.writer.merge_all().unwrap(), 0, "one segment is left");
    let generation = ix.store().generation().unwrap();
    // A small change: its own segment, no merge of the whole index.
    std::fs::write(dir.path().join("d/0000.md"), "# 見出し\n\n奈良の話。\n").unwrap();
    ix.reindex(ReindexOptions::default(), &mut |_| {}).unwrap();
    assert_eq!(ix.writer.merge_all().unwrap(), 2, "the edit's segment stayed apart");
    drop(ix);
    let index = LexicalIndex::open_or_create(&layout.lexical_dir()).unwrap();
    assert_eq!(index.generation(), Some(generation + 1), "merges keep the commit's generation");
    assert_eq!(search_paths(&layout, "奈良"), ["d/0000.md"]);
    assert_eq!(index.search("京都", 50, None).unwrap().len(), 50);
}

#[test]
fn an_index_of_an_older_analyzer_is_rebuilt_and_a_newer_one_needs_force() {
    let (_dir, ws, layout) = workspace(&[("a.md", "コード スニペットの話。\n"), ("b.md", "奈良の話。\n")]);
    let open = || Indexer::open(Arc::clone(&ws), filter(), ChunkOptions::default(), &layout, None).unwrap();
    open().reindex(ReindexOptions::default(), &mut |_| {}).unwrap();
    let with_analyzer = |v: &str| {
        let mut m = lexical_manifest(&ChunkOptions::default());
        m.insert("analyzer_version".to_owned(), v.to_owned());
        let pairs: Vec<(&str, &str)> = m.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        set_stored_manifest(&layout, &pairs);
    };
    // Older: its tokens are not ours, so the next reindex rebuilds it without being asked to
    // (the user changed nothing but the binary); `diagnose` says why in the log's words.
    with_analyzer("1");
    assert_eq!(
        crate::indexer::diagnose(&layout).as_deref(),
        Some(
            format!("the index was written in format {SCHEMA_VERSION} with analyzer 1 by an older version")
                .as_str()
        )
    );
    let mut ix = open();
    let mut destructive = false;
    let r = ix.reindex(ReindexOptions::default(), &mut |p| destructive |= p.destructive).unwrap();
    assert_eq!((r.indexed_files, destructive), (2, true));
    assert_eq!(ix.store().manifest().unwrap()["analyzer_version"], ANALYZER_VERSION);
    drop(ix);
    assert_eq!(search_paths(&layout, "コードスニペット"), ["a.md"]);
    // Newer: refused in one sentence that names both, until forced.
    with_analyzer("99");
    let mut ix = open();
    let err = ix.reindex(ReindexOptions::default(), &mut |_| {}).unwrap_err();
    assert_eq!(
        err.message,
        format!(
            "The index was written in format {SCHEMA_VERSION} with analyzer 99 by a newer version of local-vector-search-mcp (this one uses {SCHEMA_VERSION} with analyzer {ANALYZER_VERSION}); use that version, or run `reindex --force` to rebuild the index for this one."
        )
    );
    assert_eq!(ix.store().manifest().unwrap()["analyzer_version"], "99", "not touched");
    let r = ix.reindex(ReindexOptions { all: false, force: true }, &mut |_| {}).unwrap();
    assert_eq!(r.indexed_files, 2);
    assert_eq!(ix.store().manifest().unwrap()["analyzer_version"], ANALYZER_VERSION);
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
    assert!(err.is(crate::error::ErrorDetail::WriterBusy), "callers branch on the detail, not the text");
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

// ---- The indexing service's bookkeeping (deterministic: no threads, no clocks) ----

mod queue {
    use super::service::Queue;

    #[test]
    fn a_completion_clears_only_the_generation_it_covered() {
        let mut q = Queue::default();
        let g1 = q.schedule("a.md");
        let batch = q.take_batch();
        assert_eq!(batch, vec![("a.md".to_owned(), g1)]);
        // A newer change arrives while the batch is being indexed.
        let g2 = q.schedule("a.md");
        q.complete(&batch, Ok(()));
        assert!(q.is_synced("a.md", g1), "the first change is in the index");
        assert!(!q.is_synced("a.md", g2), "the newer change must stay pending");
        assert_eq!(q.status().paths, vec!["a.md"]);
        let batch = q.take_batch();
        q.complete(&batch, Ok(()));
        assert!(q.is_synced("a.md", g2));
        assert_eq!(q.status().pending_files, 0);
    }

    /// The soak's `search_missed` (`docs/reliability.md`, "Soak, round 2"): the watcher's echo
    /// of a mutation's own write is scheduled while the mutation's batch is still being
    /// indexed; the mutation must not count as synced until that batch completes.
    #[test]
    fn a_newer_change_does_not_mark_an_older_one_synced_before_its_batch_completes() {
        let mut q = Queue::default();
        let g1 = q.schedule("a.md");
        let batch = q.take_batch();
        let g2 = q.schedule("a.md");
        assert!(!q.is_searchable("a.md", g1), "the batch of the first change has not committed");
        q.searchable(&batch);
        assert!(q.is_searchable("a.md", g1) && !q.is_searchable("a.md", g2));
        q.complete(&batch, Ok(()));
        assert!(q.is_synced("a.md", g1) && !q.is_synced("a.md", g2));
        // Not yet taken: a change scheduled before the take is covered by that batch.
        let g3 = q.schedule("a.md");
        let batch = q.take_batch();
        assert_eq!(batch, vec![("a.md".to_owned(), g3)]);
        assert!(!q.is_synced("a.md", g2));
        q.complete(&batch, Ok(()));
        assert!(q.is_synced("a.md", g2) && q.is_synced("a.md", g3));
        assert_eq!(q.status().pending_files, 0);
    }

    #[test]
    fn a_failed_batch_keeps_its_paths_dirty_with_the_error_until_a_success() {
        let mut q = Queue::default();
        let g = q.schedule("b.md");
        let batch = q.take_batch();
        q.complete(&batch, Err("disk full".to_owned()));
        let s = q.status();
        assert_eq!((s.pending_files, s.last_error.as_deref()), (1, Some("disk full")));
        assert!(!q.is_synced("b.md", g));
        assert!(!q.has_queued(), "a failed path waits for the next change or a reindex");
        q.schedule("b.md");
        let batch = q.take_batch();
        q.complete(&batch, Ok(()));
        assert_eq!(q.status().last_error, None);
        assert_eq!(q.status().pending_files, 0);
    }

    #[test]
    fn a_full_reindex_clears_what_is_not_queued_again() {
        let mut q = Queue::default();
        q.schedule("a.md");
        let _taken = q.take_batch();
        q.report_error(super::WATCHER_PATH, "watch failed".to_owned());
        q.schedule("c.md");
        q.clear_all();
        assert_eq!(q.status().paths, vec!["c.md"], "c.md is still queued");
        assert_eq!(q.status().last_error.as_deref(), Some("watch failed"));
        let batch = q.take_batch();
        q.complete(&batch, Ok(()));
        assert_eq!(q.status().last_error, None);
    }

    #[test]
    fn pending_paths_are_listed_in_path_order() {
        let mut q = Queue::default();
        for p in ["b/z.md", "a.md", "b/a.md", "B.md"] {
            q.schedule(p);
        }
        let paths = q.status().paths;
        let mut sorted = paths.clone();
        sorted.sort_by(|a, b| crate::workspace::compare_paths(a, b));
        assert_eq!(paths, sorted);
        assert_eq!(paths.len(), 4);
    }
}

mod reindex_gate {
    use super::super::Progress;
    use super::service::ReindexSlot;
    use crate::ErrorCode;
    use crate::indexer::ReindexOptions;
    use crate::wire::ReindexResult;

    #[test]
    fn a_second_request_joins_the_running_one() {
        let mut slot = ReindexSlot::default();
        let first = slot.request(ReindexOptions { all: true, force: false });
        assert!(first.started);
        let second = slot.request(ReindexOptions::default());
        assert!(!second.started);
        assert_eq!(second.current.unwrap().scope, "all", "the running run is reported");
        assert!(slot.status().is_running);
    }

    /// A run waiting for another process's writer shows that run's progress (read from its
    /// progress file, which counts as moving on only when it changes), then its own from zero.
    #[test]
    fn a_waiting_run_shows_the_other_process_run_then_its_own() {
        use super::service::OtherRun;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("reindex-progress.json");
        let mut other = OtherRun::default();
        assert!(other.observe(&file).progress.is_none(), "no file: nothing to show");
        let mut theirs = ReindexSlot::default();
        theirs.request(ReindexOptions { all: true, force: false });
        let p = |n| Progress {
            processed: n,
            total: Some(6),
            current_path: Some("r/one.md".into()),
            destructive: false,
            commits: 0,
        };
        theirs.progress(&p(2));
        std::fs::write(&file, serde_json::to_vec(&theirs.status().current.unwrap()).unwrap()).unwrap();
        let first = other.observe(&file);
        assert!(!first.advanced, "the first look is no movement yet");
        assert!(!other.observe(&file).advanced, "the same bytes: not moving");
        theirs.progress(&p(3));
        std::fs::write(&file, serde_json::to_vec(&theirs.status().current.unwrap()).unwrap()).unwrap();
        let seen = other.observe(&file);
        assert!(seen.advanced);
        let mut mine = ReindexSlot::default();
        mine.request(ReindexOptions::default());
        mine.other_process(seen.progress.as_ref().unwrap());
        let shown = mine.status().current.unwrap();
        assert_eq!((shown.processed_files, shown.total_files, shown.scope.as_str()), (3, Some(6), "changed"));
        assert_eq!(shown.current_path.as_deref(), Some("r/one.md"));
        mine.own_run();
        let own = mine.status().current.unwrap();
        assert_eq!((own.processed_files, own.total_files, own.current_path), (0, None, None));
    }

    #[test]
    fn searches_are_refused_only_while_a_destructive_rebuild_runs() {
        let mut slot = ReindexSlot::default();
        slot.check_searchable().unwrap();
        slot.request(ReindexOptions { all: false, force: true });
        slot.progress(&Progress {
            processed: 0,
            total: Some(3),
            current_path: None,
            destructive: false,
            commits: 0,
        });
        slot.check_searchable().expect("an incremental pass keeps search open");
        slot.progress(&Progress {
            processed: 1,
            total: None,
            current_path: None,
            destructive: true,
            commits: 0,
        });
        let err = slot.check_searchable().unwrap_err();
        assert_eq!(err.code, ErrorCode::IndexNotReady);
        assert!(err.message.contains("kb_status"), "{}", err.message);
        // Later progress without the flag does not reopen it: only the lexical commit does.
        slot.progress(&Progress {
            processed: 2,
            total: None,
            current_path: None,
            destructive: false,
            commits: 0,
        });
        assert!(slot.check_searchable().is_err());
        slot.lexical_done();
        slot.check_searchable().expect("vectors catching up do not block search");
        slot.embedding((5, 10));
        assert_eq!(slot.status().current.unwrap().embedding.unwrap().embedded_chunks, 5);
        slot.finish(Ok(ReindexResult::default()));
        let status = slot.status();
        assert!(!status.is_running);
        assert_eq!(status.last.unwrap().outcome, "succeeded");
    }

    #[test]
    fn a_failed_run_is_reported_and_frees_the_slot() {
        let mut slot = ReindexSlot::default();
        slot.request(ReindexOptions::default());
        slot.progress(&Progress {
            processed: 0,
            total: None,
            current_path: None,
            destructive: true,
            commits: 0,
        });
        slot.finish(Err(crate::Error::internal("boom")));
        slot.check_searchable().unwrap();
        let last = slot.status().last.unwrap();
        assert_eq!((last.outcome.as_str(), last.error.as_deref()), ("failed", Some("boom")));
        assert!(slot.request(ReindexOptions::default()).started);
    }
}

/// The watcher's overflow case: notify's event for dropped OS events (inotify `IN_Q_OVERFLOW`,
/// FSEvents `MustScanSubDirs`) asks for a full reconcile; ordinary events do not.
#[test]
fn an_overflow_event_asks_for_a_rescan_and_ordinary_events_do_not() {
    use notify::event::{CreateKind, Flag};
    use notify::{Event, EventKind};
    let overflow = Event::new(EventKind::Other).set_flag(Flag::Rescan);
    assert!(super::watch::needs_rescan(&overflow));
    let created = Event::new(EventKind::Create(CreateKind::File)).add_path("/kb/a.md".into());
    assert!(!super::watch::needs_rescan(&created));
}

/// Edits whose batch could not get the writer (another process kept it past the wait) are
/// queued again, not left pending until the next edit; a newer change keeps its generation.
#[test]
fn a_batch_that_could_not_get_the_writer_is_queued_again() {
    let mut q = super::service::Queue::default();
    let g = q.schedule("a.md");
    let batch = q.take_batch();
    assert!(!q.has_queued());
    q.complete(&batch, Err("busy".to_owned()));
    q.requeue(&batch);
    assert!(q.has_queued());
    assert!(!q.is_synced("a.md", g));
    assert_eq!(q.status().last_error.as_deref(), Some("busy"));
    let again = q.take_batch();
    q.complete(&again, Ok(()));
    assert!(q.is_synced("a.md", g) && q.status().pending_files == 0);
}

mod debounce {
    use std::time::{Duration, Instant};

    use super::super::watch::Debouncer;
    use crate::indexer::QUIET_PERIOD;
    use crate::workspace::RelPath;

    fn rel(p: &str) -> RelPath {
        RelPath::new(p).unwrap()
    }

    #[test]
    fn a_path_is_due_only_after_its_quiet_period() {
        let t0 = Instant::now();
        let mut d = Debouncer::default();
        d.note(rel("a.md"), t0);
        assert!(d.due(t0 + QUIET_PERIOD - Duration::from_millis(1)).is_empty());
        let due = d.due(t0 + QUIET_PERIOD);
        assert_eq!(due.iter().map(RelPath::as_str).collect::<Vec<_>>(), vec!["a.md"]);
        assert!(d.due(t0 + QUIET_PERIOD * 10).is_empty(), "handed over once");
    }

    #[test]
    fn every_event_restarts_the_quiet_period_of_its_path_only() {
        let t0 = Instant::now();
        let step = QUIET_PERIOD / 2;
        let mut d = Debouncer::default();
        d.note(rel("busy.md"), t0);
        d.note(rel("calm.md"), t0);
        // An editor keeps writing busy.md every half period.
        d.note(rel("busy.md"), t0 + step);
        let due = d.due(t0 + QUIET_PERIOD);
        assert_eq!(due.iter().map(RelPath::as_str).collect::<Vec<_>>(), vec!["calm.md"]);
        d.note(rel("busy.md"), t0 + step * 2);
        assert!(d.due(t0 + step * 3).is_empty());
        let due = d.due(t0 + step * 2 + QUIET_PERIOD);
        assert_eq!(due.iter().map(RelPath::as_str).collect::<Vec<_>>(), vec!["busy.md"]);
    }

    #[test]
    fn the_debounce_thread_sleeps_until_the_earliest_path_is_due() {
        let t0 = Instant::now();
        let step = QUIET_PERIOD / 4;
        let mut d = Debouncer::default();
        assert_eq!(d.next_due(), None, "nothing pending: no deadline");
        d.note(rel("a.md"), t0 + step);
        d.note(rel("b.md"), t0);
        assert_eq!(d.next_due(), Some(t0 + QUIET_PERIOD));
        // b.md is written again: a.md is now the first due
        d.note(rel("b.md"), t0 + step * 2);
        assert_eq!(d.next_due(), Some(t0 + step + QUIET_PERIOD));
        let due = d.due(t0 + step + QUIET_PERIOD);
        assert_eq!(due.iter().map(RelPath::as_str).collect::<Vec<_>>(), vec!["a.md"]);
        assert_eq!(d.next_due(), Some(t0 + step * 2 + QUIET_PERIOD));
    }

    #[test]
    fn an_event_from_the_past_is_due_at_once() {
        let t0 = Instant::now();
        let mut d = Debouncer::default();
        d.note(rel("a.md"), t0 + QUIET_PERIOD);
        // A clock read before the event (the poller raced it) never underflows.
        assert!(d.due(t0).is_empty());
    }
}

/// The indexing service over `ws` and `layout` with the read side it reloads.
fn service(
    ws: &Arc<Workspace>,
    layout: &IndexLayout,
    embed: Option<Box<EmbedFn>>,
) -> (IndexService, Arc<ReadSide>) {
    let readers = Arc::new(ReadSide::new(layout.clone(), None));
    let writer = WriterParts {
        workspace: Arc::clone(ws),
        filter: filter(),
        chunk_options: ChunkOptions::default(),
        layout: layout.clone(),
        embedding: embed.is_some().then(crate::config::EmbeddingConfig::default),
    };
    let service =
        IndexService::start(ServiceParts { writer, readers: Arc::clone(&readers), embed, auto_index: true });
    (service, readers)
}

#[test]
fn the_service_opens_its_own_writer_and_its_read_side_sees_each_edit() {
    let (dir, ws, layout) = workspace(&[("a.md", "# A\n\n最初の段落。\n")]);
    let (service, readers) = service(&ws, &layout, None);
    let mut progress = |_: &crate::wire::ReindexProgress| {};
    service.run_reindex(ReindexOptions::default(), &mut progress).unwrap();
    // The reader is opened before the edit, so it must be reloaded to see it.
    let lexical = readers.lexical().unwrap();
    assert_eq!(lexical.search("最初", 10, None).unwrap().len(), 1);
    std::fs::write(dir.path().join("a.md"), "# A\n\n書き換えた段落。\n").unwrap();
    let a = RelPath::new("a.md").unwrap();
    let generation = service.schedule(&a);
    assert!(
        service.wait_synced(&a, generation, std::time::Duration::from_secs(60)),
        "the edit was not indexed"
    );
    let same = readers.lexical().unwrap();
    assert!(Arc::ptr_eq(&lexical, &same), "one shared reader, not one per search");
    assert_eq!(same.search("書き換え", 10, None).unwrap().len(), 1);
    assert!(same.search("最初", 10, None).unwrap().is_empty());
}

#[test]
fn the_read_side_rereads_the_link_graph_only_when_the_writer_replaced_it() {
    let (_dir, _ws, layout) = workspace(&[]);
    std::fs::create_dir_all(layout.dir()).unwrap();
    let readers = ReadSide::new(layout.clone(), None);
    let Err(e) = readers.links() else { panic!("a link graph before any was written") };
    assert_eq!(e.code, ErrorCode::IndexNotReady);
    assert!(e.message.contains("run kb_reindex"), "{}", e.message);
    LinkGraph::new(3).write(&layout.links_path()).unwrap();
    let first = readers.links().unwrap();
    assert_eq!(first.generation(), 3);
    assert!(Arc::ptr_eq(&first, &readers.links().unwrap()), "an unchanged file is not read again");
    // A longer file (another stamp, whatever the clock's resolution): read again.
    LinkGraph::new(3_000_000).write(&layout.links_path()).unwrap();
    assert_eq!(readers.links().unwrap().generation(), 3_000_000);
    // Without embeddings the vector side says so instead of reading anything.
    let e = readers.vector_candidates("q", 5, &Snapshot::default(), || Ok(None)).expect_err("embeddings off");
    assert_eq!(e.code, ErrorCode::IndexNotReady);
}

#[test]
fn dropping_the_service_joins_the_embedding_thread() {
    let (_dir, ws, layout) = workspace(&[("a.md", "# A\n\ntext\n")]);
    // The embedding client lives on the embedding thread: it is gone once that thread ended.
    let client = Arc::new(());
    let held = Arc::clone(&client);
    let embed: Box<EmbedFn> = Box::new(move |texts: &[&str]| {
        let _ = &held;
        Ok(texts.iter().map(|_| vec![1.0, 0.0]).collect())
    });
    let (service, _readers) = service(&ws, &layout, Some(embed));
    assert_eq!(Arc::strong_count(&client), 2);
    drop(service);
    assert_eq!(Arc::strong_count(&client), 1, "the embedding thread still holds its client after the drop");
}

#[test]
fn a_reindex_of_many_files_writes_with_the_bulk_writer_and_an_edit_with_the_small_one() {
    // A word of letters only per file (`word7` would be analysed as `word` and `7`).
    let word = |i: usize| format!("zz{}{}", (b'a' + (i / 26) as u8) as char, (b'a' + (i % 26) as u8) as char);
    let files: Vec<(String, String)> = (0..BULK_FILES)
        .map(|i| (format!("d{i:02}.md"), format!("# 文書{i}\n\n本文 {}\n", word(i))))
        .collect();
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    let (dir, ws, layout) = workspace(&refs);
    let mut ix = Indexer::open(Arc::clone(&ws), filter(), ChunkOptions::default(), &layout, None).unwrap();
    assert_eq!(ix.writer.size(), WriterSize::Edit, "an opened writer waits for edits");
    ix.reindex(ReindexOptions::default(), &mut |_| {}).unwrap();
    assert_eq!(ix.writer.size(), BULK_WRITER, "{BULK_FILES} new files are indexed by both threads");
    assert_eq!(search_paths(&layout, &word(7)), ["d07.md"]);
    // One edited file: back to the small writer, and the edit is committed through it.
    std::fs::write(dir.path().join("d07.md"), "# 文書7\n\n本文 changed\n").unwrap();
    ix.reconcile(&[RelPath::new("d07.md").unwrap()]).unwrap();
    assert_eq!(ix.writer.size(), WriterSize::Edit);
    assert_eq!(search_paths(&layout, "changed"), ["d07.md"]);
    assert!(search_paths(&layout, &word(7)).is_empty());
    // An incremental reindex with one changed file stays small; every file is still found.
    std::fs::write(dir.path().join("d08.md"), "# 文書8\n\n本文 again\n").unwrap();
    ix.reindex(ReindexOptions::default(), &mut |_| {}).unwrap();
    assert_eq!(ix.writer.size(), WriterSize::Edit);
    assert_eq!(search_paths(&layout, "again"), ["d08.md"]);
    for i in (0..BULK_FILES).filter(|i| ![7, 8].contains(i)) {
        assert_eq!(search_paths(&layout, &word(i)), [format!("d{i:02}.md")]);
    }
}

#[test]
fn a_reindex_that_finds_nothing_changed_commits_nothing_and_counts_every_file_skipped() {
    let (dir, ws, layout) = workspace(&[("a.md", "# A\n\nalpha\n"), ("b.md", "# B\n\nbravo\n")]);
    let mut ix = Indexer::open(Arc::clone(&ws), filter(), ChunkOptions::default(), &layout, None).unwrap();
    ix.reindex(ReindexOptions::default(), &mut |_| {}).unwrap();
    let generation = ix.store().generation().unwrap();
    let mut seen = Vec::new();
    let r = ix.reindex(ReindexOptions::default(), &mut |p| seen.push((p.processed, p.total))).unwrap();
    assert_eq!((r.scanned_files, r.skipped_files, r.indexed_files), (2, 2, 0));
    assert_eq!(ix.store().generation().unwrap(), generation, "nothing changed: no new generation");
    assert_eq!(seen.last(), Some(&(2, Some(2))), "progress ends with every file processed");
    // One changed file among unchanged ones: only it is indexed, in one new generation.
    std::fs::write(dir.path().join("b.md"), "# B\n\ncharlie\n").unwrap();
    let r = ix.reindex(ReindexOptions::default(), &mut |_| {}).unwrap();
    assert_eq!((r.skipped_files, r.indexed_files), (1, 1));
    assert_eq!(ix.store().generation().unwrap(), generation + 1);
    assert_eq!(search_paths(&layout, "charlie"), ["b.md"]);
    assert_eq!(search_paths(&layout, "alpha"), ["a.md"]);
    // A file removed while nothing else changed is still dropped.
    std::fs::remove_file(dir.path().join("a.md")).unwrap();
    let r = ix.reindex(ReindexOptions::default(), &mut |_| {}).unwrap();
    assert_eq!((r.deleted_files, r.skipped_files), (1, 1));
    assert!(search_paths(&layout, "alpha").is_empty());
}

#[test]
fn a_reindex_whose_last_file_fills_a_commit_ends_with_nothing_left_to_commit_and_succeeds() {
    // COMMIT_EVERY files: the in-run commit takes the last one, the final batch is empty, and
    // the store is compacted after it (COMPACT_AFTER), which needs no transaction open.
    assert!(COMMIT_EVERY as u64 >= COMPACT_AFTER);
    let files: Vec<(String, String)> =
        (0..COMMIT_EVERY).map(|i| (format!("d{i:04}.md"), format!("# 文書 {i}\n\n京都の記録。\n"))).collect();
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    let (_dir, ws, layout) = workspace(&refs);
    let mut ix = Indexer::open(Arc::clone(&ws), filter(), ChunkOptions::default(), &layout, None).unwrap();
    let r = ix.reindex(ReindexOptions::default(), &mut |_| {}).unwrap();
    assert_eq!(r.indexed_files, COMMIT_EVERY as u64);
    assert_eq!(ix.store().counts().unwrap().0, COMMIT_EVERY as u64);
    assert_eq!(search_paths(&layout, "京都").len(), 10);
}
