//! Ranking and queries: the all-clauses tier first, phrases, headings, odd and empty queries,
//! the character-gram re-rank.

use super::*;

#[test]
fn chunks_with_every_term_rank_first() {
    let index = index_of(&[
        "alpha alpha alpha alpha alpha alpha alpha alpha",
        "a long text that mentions alpha once and beta once among many other words here",
        "beta beta beta beta beta",
    ]);
    let got = ids(&index, "alpha beta");
    assert_eq!(got.first(), Some(&2), "{got:?}");
    assert_eq!(got.len(), 3);
}

#[test]
fn quoted_phrases_match_only_in_order() {
    let index =
        index_of(&["red apple and green pear", "the apple is red", "赤いりんごを食べた", "りんごは赤い"]);
    assert_eq!(ids(&index, "\"red apple\""), vec![1]);
    assert_eq!(ids(&index, "“赤いりんご”"), vec![3]);
    assert_eq!(sorted(ids(&index, "red apple")), vec![1, 2]);
}

#[test]
fn headings_are_searched_too() {
    let index = index_with(&[
        doc(1, "a.md", "Intro > インストール手順", "まずは準備です。"),
        doc(2, "b.md", "Other", "無関係"),
    ]);
    assert_eq!(ids(&index, "インストール"), vec![1]);
    // a match in the heading alone: the snippet shows the start of the text, unmarked
    assert_eq!(snippet_of(&index, "インストール"), "まずは準備です。");
}

#[test]
fn the_own_heading_can_weigh_more_than_a_title_every_section_shares() {
    // Both chunks hold `インストール` in their heading path only: chunk 1 under a title every
    // section of its file shares, chunk 2 as its own heading.
    let index = index_with(&[
        doc(1, "guide.md", "インストール > 概要", "この章の説明です。"),
        doc(2, "setup.md", "準備 > インストール", "この節の説明です。"),
    ]);
    let with_own = |own: f32| {
        let weights = RankWeights { own_heading: own, ..RankWeights::default() };
        index.view().rank_with("インストール", 10, None, &weights).unwrap().0
    };
    assert_eq!(with_own(0.0), vec![1, 2], "premise: one heading path weighs the same wherever the word sits");
    assert_eq!(with_own(1.0), vec![2, 1]);
}

#[test]
fn weird_queries_never_fail_to_parse() {
    let index = index_of(&["Vec<T> と a:b と title:foo の説明 (AND OR NOT)"]);
    for q in [
        "Vec<T>",
        "a:b",
        "\"unbalanced",
        "unbalanced\"",
        "foo\"bar",
        "title:foo",
        "AND OR NOT",
        "((( ]]] {",
        "+foo -bar",
        "*",
        "\\",
        "\u{0}",
        "🙂 foo",
        "\"\"",
        "\" \"",
        "ＡＮＤ",
        "a\"b\"c\"d",
        "NEAR(a b)",
        "-",
        "?x",
    ] {
        match index.search(q, 5, None) {
            Ok(_) => {}
            Err(e) => assert_eq!(e.code, ErrorCode::InvalidArgument, "query {q:?}: {e}"),
        }
    }
    assert_eq!(ids(&index, "Vec<T>"), vec![1]);
    assert_eq!(ids(&index, "a:b"), vec![1]);
    assert_eq!(ids(&index, "\"unbalanced title"), vec![1]);
    let long = "検索 ".repeat(5000);
    assert!(index.search(&long, 5, None).is_ok());
    let one_long_word = "形態素解析".repeat(50_000);
    let start = std::time::Instant::now();
    assert!(index.search(&one_long_word, 5, None).is_ok());
    assert!(index.search(&format!("\"{one_long_word}\""), 5, None).is_ok());
    assert!(start.elapsed() < std::time::Duration::from_secs(10));
}

#[test]
fn blank_or_symbol_only_queries_are_invalid() {
    let index = index_of(&["text"]);
    for q in ["", "   ", "\t\n", "!!!", "「」。", "\"\"", "---"] {
        let err = index.search(q, 5, None).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgument, "query {q:?}");
        assert!(!err.message.is_empty());
    }
    assert!(index.search("text", 0, None).unwrap().is_empty());
}

/// The chunk ids of `query` ranked with the default weights but re-rank weight `rerank`.
fn ranked_with_rerank(index: &LexicalIndex, query: &str, top_k: usize, rerank: f32) -> (Vec<u64>, usize) {
    let weights = RankWeights { rerank, ..RankWeights::default() };
    index.view().rank_with(query, top_k, None, &weights).unwrap()
}

#[test]
fn the_gram_rerank_lifts_the_chunk_holding_more_of_the_question_s_characters_together() {
    // Both chunks have every word (`梅雨`, `期間`); BM25 prefers the shorter one. Only chunk 2
    // has the query's `雨の期` where the words meet, which the other candidate lacks.
    let index = index_of(&["梅雨と期間", "梅雨の期間についての長い説明がここに続きます"]);
    let q = "梅雨の期間は";
    assert_eq!(ranked_with_rerank(&index, q, 10, 0.0), (vec![1, 2], 2), "premise: BM25 order");
    assert_eq!(ranked_with_rerank(&index, q, 10, 0.2), (vec![2, 1], 2));
    // the first hits do not depend on topK: the re-rank's pool is ranked whatever is asked for
    assert_eq!(ranked_with_rerank(&index, q, 1, 0.2), (vec![2], 1));
    assert_eq!(index.search(q, 1, None).unwrap()[0].chunk_id, 2, "the default re-ranks");
}

#[test]
fn the_gram_rerank_never_lifts_a_chunk_lacking_a_query_word_above_one_with_all() {
    // Chunk 2 holds the query's `東京の天気` as typed but lacks `予報`; chunk 1 has every word.
    let index = index_of(&["天気予報と東京", "東京の天気は晴れ"]);
    let (ids, all_terms) = ranked_with_rerank(&index, "東京の天気 予報", 10, 100.0);
    assert_eq!((ids, all_terms), (vec![1, 2], 1));
}

#[test]
fn gram_scores_weigh_what_few_candidates_hold() {
    use super::rerank::{GramScores, QueryGrams, order};
    let q = QueryGrams::new("梅雨の期間");
    let mut held = GramScores::new(&q);
    for text in ["梅雨の期間は長い", "梅雨は期間が長い", "天気の話"] {
        held.add(&q, [text]);
    }
    let s = held.scores();
    assert_eq!(s[0], 1.0, "the candidate with every gram is the best: {s:?}");
    assert!(s[1] < s[0] && s[2] < s[1], "{s:?}");
    // within the first tier (0..2) and the second (2..3) only; ties keep the rank order
    assert_eq!(order(&[0.0, 1.0, 1.0], 2, 0.3), vec![1, 0, 2]);
    assert_eq!(order(&[0.5, 0.5, 0.5], 1, 0.3), vec![0, 1, 2]);
    assert_eq!(order(&[0.0, 0.0, 1.0], 0, 0.0), vec![0, 1, 2], "weight 0 keeps the order");
}

#[test]
fn gram_scores_read_at_most_16_kb_of_a_candidate_over_all_its_pieces() {
    use super::rerank::{GramScores, QueryGrams};
    // A huge chunk is stored as many pieces: the bound is on the candidate, not on each piece.
    let q = QueryGrams::new("梅雨");
    let mut held = GramScores::new(&q);
    let filler = "x".repeat(10 * 1024);
    held.add(&q, [filler.as_str(), &format!("{filler}梅雨")]);
    held.add(&q, ["梅雨"]);
    assert_eq!(held.scores(), vec![0.0, 1.0], "梅雨 lies past 16 KB of the first candidate");
}
