//! A view: ranking, then reading the ranked hits from the same commit.

use super::*;

#[test]
fn a_view_reads_the_hits_it_ranked_as_a_search_would_and_knows_their_files_before() {
    // Two commits, so the ranked chunks lie in two segments.
    let index = index_with(&[doc(1, "a.md", "", "東京都の天気"), doc(2, "b.md", "", "東京の天気予報")]);
    let mut w = index.writer(WriterSize::Bulk(0)).unwrap();
    w.add(&doc(3, "c.md", "", "天気と東京")).unwrap();
    w.commit(2).unwrap();
    let searched = index.search("東京 天気", 10, None).unwrap();
    let view = index.view();
    let (ranked, _) = view.rank_with("東京 天気", 10, None, &RankWeights::default()).unwrap();
    assert_eq!(ranked, searched.iter().map(|h| h.chunk_id).collect::<Vec<_>>());
    let files = view.paths_of(&[3, 1, 99]).unwrap();
    assert_eq!(files, vec![Some("c.md".to_owned()), Some("a.md".to_owned()), None], "99 was not ranked");
    let fetched = view.fetch(&ranked, "東京 天気").unwrap();
    for (f, s) in fetched.iter().zip(&searched) {
        let f = f.as_ref().expect("a ranked chunk is read");
        assert_eq!((f.chunk_id, &f.path, &f.snippet), (s.chunk_id, &s.path, &s.snippet));
    }
    // Another query through the same view: ids are looked up, snippets follow the new query.
    let other = view.fetch(&[2], "予報").unwrap();
    assert!(other[0].as_ref().expect("chunk 2").snippet.contains("[予報]"), "{other:?}");
}

#[test]
fn a_snippet_stays_in_a_long_matching_sentence_and_fills_a_short_one_from_its_neighbours() {
    // A long sentence with the match: the window is cut from it alone, both ends elided.
    let long = format!(
        "{}目印はここにあります{}。",
        "前置きの文章が続きます、".repeat(8),
        "、後ろの文章も続きます".repeat(8)
    );
    let text = format!("最初の段落です。\n{long}\n最後の段落です。\n{}", "埋め草の文です。\n".repeat(20));
    let index = index_of(&[&text]);
    let s = snippet_of(&index, "目印");
    assert!(s.contains("[目印]") && s.starts_with("...") && s.ends_with("..."), "{s}");
    assert!(!s.contains("最初") && !s.contains("最後"), "{s}");
    // A short sentence with the match: its neighbours fill the window.
    let text = format!(
        "{}前の文です。\n目印。\n次の文です。\n{}",
        "埋め草の文です。\n".repeat(20),
        "埋め草の文です。\n".repeat(20)
    );
    let index = index_of(&[&text]);
    let s = snippet_of(&index, "目印");
    assert!(s.contains("前の文") && s.contains("[目印]") && s.contains("次の文"), "{s}");
}

#[test]
fn resizing_the_writer_between_commits_keeps_every_change_and_refuses_with_changes_queued() {
    let index = LexicalIndex::create_in_ram().unwrap();
    let mut w = index.writer(WriterSize::Edit).unwrap();
    w.add(&doc(1, "a.md", "", "最初の文書")).unwrap();
    let err = w.resize(WriterSize::Bulk(0)).unwrap_err();
    assert!(err.message.contains("changes queued"), "{}", err.message);
    assert_eq!(w.size(), WriterSize::Edit);
    w.commit(1).unwrap();
    w.resize(WriterSize::Bulk(0)).unwrap();
    assert_eq!(w.size(), WriterSize::Bulk(0));
    w.add(&doc(2, "b.md", "", "二番目の文書")).unwrap();
    w.delete_path("a.md");
    w.commit(2).unwrap();
    w.resize(WriterSize::Edit).unwrap();
    w.add(&doc(3, "c.md", "", "三番目の文書")).unwrap();
    w.commit(3).unwrap();
    index.reload().unwrap();
    let paths: Vec<String> = index.search("文書", 10, None).unwrap().into_iter().map(|h| h.path).collect();
    assert_eq!(paths.len(), 2, "{paths:?}");
    assert!(paths.contains(&"b.md".to_owned()) && paths.contains(&"c.md".to_owned()), "{paths:?}");
    assert_eq!(index.generation(), Some(3));
}

#[test]
fn hits_ranked_in_a_view_are_read_from_the_same_commit() {
    // A search ranks, then reads its hits; an edit of a ranked file committed in between gives
    // the file's chunks new ids. Read through the index, the ranked id is gone and the hit was
    // dropped (the soak's "search_missed"); read through the search's view, it is found.
    let index = LexicalIndex::create_in_ram().unwrap();
    let mut w = index.writer(WriterSize::Bulk(0)).unwrap();
    w.add(&doc(1, "a.md", "", "soakzbdaaadidq の段落")).unwrap();
    w.commit(1).unwrap();
    let view = index.view();
    let (ranked, _) = view.rank_with("soakzbdaaadidq", 10, None, &RankWeights::default()).unwrap();
    assert_eq!(ranked, vec![1]);
    w.delete_path("a.md");
    w.add(&doc(2, "a.md", "", "soakzbdaaadidq の段落。追記した段落")).unwrap();
    w.commit(2).unwrap();
    let in_view = view.fetch(&ranked, "soakzbdaaadidq").unwrap();
    assert_eq!(in_view.len(), 1);
    let hit = in_view[0].as_ref().expect("the ranked hit is read from the view's commit");
    assert_eq!((hit.chunk_id, hit.path.as_str()), (1, "a.md"));
    assert!(index.fetch(&ranked, "soakzbdaaadidq").unwrap()[0].is_none(), "the index itself moved on");
    assert_eq!(ids(&index, "soakzbdaaadidq"), vec![2], "a new search sees the edit");
}
