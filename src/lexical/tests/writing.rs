//! The writer: merging, deletes, rollback, generations, the mmap cache, a second writer,
//! sharing between threads.

use super::*;

#[test]
fn merging_every_segment_keeps_the_chunks_and_the_generation() {
    let index = LexicalIndex::create_in_ram().unwrap();
    let mut w = index.writer(WriterSize::Edit).unwrap();
    for (i, t) in ["京都の寺", "東京都庁の展望", "京都駅の地図"].iter().enumerate() {
        w.add(&doc(i as u64 + 1, &format!("doc{}.md", i + 1), "", t)).unwrap();
        w.commit(i as u64 + 1).unwrap();
    }
    assert_eq!(sorted(ids(&index, "京都")), vec![1, 3]);
    assert_eq!(w.merge_all().unwrap(), 3, "one segment per commit");
    assert_eq!(w.merge_all().unwrap(), 0, "the merge is published: one segment is left");
    assert_eq!(sorted(ids(&index, "京都")), vec![1, 3]);
    assert_eq!(index.generation(), Some(3));
}

#[test]
fn delete_path_removes_every_chunk_of_the_file() {
    let index = index_with(&[
        doc(1, "a.md", "", "apple one"),
        doc(2, "a.md", "", "apple two"),
        doc(3, "b.md", "", "apple three"),
    ]);
    assert_eq!(index.num_docs(), 3);
    let mut w = index.writer(WriterSize::Bulk(0)).unwrap();
    w.delete_path("a.md");
    w.commit(2).unwrap();
    assert_eq!(index.num_docs(), 1);
    assert_eq!(ids(&index, "apple"), vec![3]);
    assert_eq!(index.chunk_ids_for_path("b.md").unwrap(), vec![3]);
    assert!(index.chunk_ids_for_path("a.md").unwrap().is_empty());
}

#[test]
fn delete_chunk_and_delete_all() {
    let index =
        index_with(&[doc(1, "a.md", "", "apple"), doc(2, "a.md", "", "apple"), doc(3, "b.md", "", "apple")]);
    let mut w = index.writer(WriterSize::Bulk(0)).unwrap();
    w.delete_chunk(2);
    w.commit(2).unwrap();
    assert_eq!(index.all_chunk_ids().unwrap(), vec![1, 3]);
    w.delete_all().unwrap();
    w.add(&doc(9, "c.md", "", "banana")).unwrap();
    w.commit(3).unwrap();
    assert_eq!(index.all_chunk_ids().unwrap(), vec![9]);
    assert_eq!(index.generation(), Some(3));
}

#[test]
fn uncommitted_changes_are_invisible_and_can_be_rolled_back() {
    let index = index_of(&["apple"]);
    let mut w = index.writer(WriterSize::Bulk(0)).unwrap();
    w.add(&doc(2, "b.md", "", "apple")).unwrap();
    assert_eq!(index.num_docs(), 1);
    w.rollback().unwrap();
    w.commit(5).unwrap();
    assert_eq!(index.num_docs(), 1);
}

#[test]
fn generation_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lexical");
    {
        let index = LexicalIndex::open_or_create(&path).unwrap();
        assert_eq!(index.generation(), None);
        let mut w = index.writer(WriterSize::Bulk(64 << 20)).unwrap();
        w.add(&doc(7, "a.md", "見出し", "永続化のテスト")).unwrap();
        w.commit(42).unwrap();
    }
    let index = LexicalIndex::open_or_create(&path).unwrap();
    assert_eq!(index.generation(), Some(42));
    assert_eq!(index.num_docs(), 1);
    assert_eq!(ids(&index, "永続"), vec![7]);
    // a forced rebuild starts empty
    drop(index);
    let fresh = LexicalIndex::recreate(&path).unwrap();
    assert_eq!((fresh.num_docs(), fresh.generation()), (0, None));
}

#[test]
fn relaxed_commits_are_synced_at_the_checkpoint_after_merges_deleted_files() {
    // The checkpoint reopens what relaxed commits wrote, for writing (Windows flushes only
    // through a handle with write access, issue #47), and passes over files merged away since.
    let dir = tempfile::tempdir().unwrap();
    let index = LexicalIndex::open_or_create(dir.path()).unwrap();
    let mut w = index.writer(WriterSize::Edit).unwrap();
    w.set_relaxed(true);
    for i in 0..40u64 {
        w.delete_path("a.md");
        w.add(&doc(i + 1, "a.md", "", &format!("edit{i} 編集"))).unwrap();
        w.commit(i + 1).unwrap();
        assert_eq!(ids(&index, &format!("edit{i}")), vec![i + 1]);
    }
    let on_disk = std::fs::read_dir(dir.path()).unwrap().count();
    assert!(on_disk < 40, "merges deleted segment files: {on_disk} files left");
    w.checkpoint().unwrap();
    w.set_relaxed(false);
    drop(w);
    assert_eq!(ids(&LexicalIndex::open_or_create(dir.path()).unwrap(), "edit39"), vec![40]);
}

#[test]
fn many_small_commits_keep_the_mmap_cache_to_the_files_still_mapped() {
    // tantivy's MmapDirectory remembers every file it mapped until someone prunes it; an edit
    // session maps 7-8 new segment files per commit (docs/reliability.md, "Seventh run").
    let dir = tempfile::tempdir().unwrap();
    let index = LexicalIndex::open_or_create(dir.path()).unwrap();
    let mut w = index.writer(WriterSize::Bulk(0)).unwrap();
    for i in 0..150u64 {
        w.delete_path("a.md");
        w.add(&doc(i + 1, "a.md", "", &format!("edit{i} 編集"))).unwrap();
        w.commit(i + 1).unwrap();
        assert_eq!(ids(&index, &format!("edit{i}")), vec![i + 1]);
    }
    let on_disk = std::fs::read_dir(dir.path()).unwrap().count();
    let cached =
        index.mmap_cache_after_pruning().expect("150 commits and searches never pruned the mmap cache");
    assert!(cached <= on_disk, "the mmap cache kept {cached} entries, {on_disk} files exist");
}

#[test]
fn a_second_writer_gets_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let first = LexicalIndex::open_or_create(dir.path()).unwrap();
    let second = LexicalIndex::open_or_create(dir.path()).unwrap();
    let _w = first.writer(WriterSize::Bulk(0)).unwrap();
    let err = second.writer(WriterSize::Bulk(0)).unwrap_err();
    assert_eq!(err.code, ErrorCode::IndexNotReady);
    assert!(err.message.to_lowercase().contains("another process is indexing"), "{}", err.message);
    // reading still works while someone writes
    assert!(second.search("anything", 5, None).unwrap().is_empty());
}

#[test]
fn index_and_writer_can_be_shared_between_threads() {
    fn shared<T: Send + Sync>() {}
    shared::<LexicalIndex>();
    shared::<LexicalWriter>();
}

#[test]
fn writer_can_be_fed_from_several_threads() {
    let index = LexicalIndex::create_in_ram().unwrap();
    let mut w = index.writer(WriterSize::Bulk(0)).unwrap();
    std::thread::scope(|s| {
        for t in 0..2u64 {
            let w = &w;
            s.spawn(move || {
                for i in 0..50 {
                    w.add(&doc(t * 100 + i, "x.md", "", "並列に索引を作る")).unwrap();
                }
            });
        }
    });
    w.commit(1).unwrap();
    assert_eq!(index.num_docs(), 100);
}
