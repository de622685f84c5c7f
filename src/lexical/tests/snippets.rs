//! Snippets: the window around the best match, highlights, cut-offs.

use super::*;

#[test]
fn snippet_marks_matches_and_elides() {
    let filler = "lorem ipsum dolor sit amet ".repeat(10);
    let index = index_of(&[&format!("{filler}the needle is here {filler}")]);
    let s = snippet_of(&index, "needle");
    assert!(s.starts_with("...") && s.ends_with("..."), "{s}");
    assert!(s.contains("[needle]"), "{s}");
    assert!(s.split_whitespace().count() <= 16, "{s}");
}

#[test]
fn short_texts_are_shown_whole() {
    let index = index_of(&["会議室の予算を確認する。"]);
    assert_eq!(snippet_of(&index, "予算"), "会議室の[予算]を確認する。");
    assert_eq!(snippet_of(&index, "会議室"), "[会議室]の予算を確認する。");
}

#[test]
fn snippet_highlights_the_original_characters() {
    let index = index_of(&["まず ＡＰＩ と ｻｰﾊﾞｰ を使う", "kb_search を呼ぶ"]);
    let s = snippet_of(&index, "api サーバー");
    assert!(s.contains("[ＡＰＩ]") && s.contains("[ｻｰﾊﾞｰ]"), "{s}");
    assert_eq!(snippet_of(&index, "kb_search"), "[kb_search] を呼ぶ");
    assert_eq!(snippet_of(&index, "search"), "kb_[search] を呼ぶ");
}

#[test]
fn snippet_of_a_huge_chunk_is_found_without_analyzing_all_of_it() {
    let mut text = "これは長い文書です。\n".repeat(20_000);
    text.push_str("最後に目印があります。\n");
    let index = index_of(&[&text]);
    let start = std::time::Instant::now();
    let s = snippet_of(&index, "目印");
    assert!(s.contains("[目印]"), "{s}");
    assert!(s.starts_with("..."));
    assert!(start.elapsed() < std::time::Duration::from_secs(5));
}

/// The snippet of the first hit for `query` with a window of `tokens` (`search.snippetTokens`).
fn snippet_with(index: &LexicalIndex, query: &str, tokens: usize) -> String {
    let view = index.view().with_snippet_tokens(tokens, usize::MAX);
    let (hits, _) = view.search_tiered_with(query, 1, None, &RankWeights::default()).expect("search");
    hits.first().map(|h| h.snippet.clone()).unwrap_or_default()
}

/// Issue #45: the sentence holding the query's words together wins over a longer one, earlier in
/// the chunk, that holds them far apart; the window is cut at that sentence's ends, so it shows
/// the whole sentence (the answer) and not the tails of its neighbours.
#[test]
fn the_sentence_holding_the_words_together_is_the_snippet() {
    let apart = format!(
        "京都の寺院について述べる。京都には{}多くの観光地があり、最後に予算の話も少しだけ出てくる。",
        "古い町並みや庭園、川沿いの散歩道、市場や商店街、美術館や博物館など、".repeat(3)
    );
    let together = "京都の予算は年間八千億円である。";
    let text = format!("{apart}\n{together}\nその他の話題として交通の話がある。");
    let index = index_of(&[&text]);
    let s = snippet_with(&index, "京都 予算", 48);
    assert!(s.contains("[京都]の[予算]は年間八千億円である。"), "{s}");
    assert!(!s.contains("交通"), "the window stops at the sentence's end: {s}");
    assert!(!s.contains("観光地"), "the window starts at the sentence's start: {s}");
    // The original's 16-token window keeps its shape (no sentence cut).
    let original = snippet_with(&index, "京都 予算", crate::lexical::ORIGINAL_WINDOW);
    assert!(original.contains("[京都]") && original.contains("[予算]"), "{original}");
}

/// A longer window shows more of a long sentence around the match than the original's 16 tokens.
#[test]
fn a_longer_window_shows_the_answer_beside_the_match() {
    let text = "はじめに前置きの文がある。設定ファイルの保存先は、利用者のホームフォルダの下にある隠しフォルダで、名前は設定の種類ごとに決まっており、既定では config.yaml という名前になる。最後に別の話がある。";
    let index = index_of(&[text]);
    let long = snippet_with(&index, "設定ファイル 保存先", 48);
    assert!(long.contains("config.yaml"), "{long}");
    assert!(long.starts_with("...[設定ファイル]") || long.starts_with("[設定ファイル]"), "{long}");
    let short = snippet_with(&index, "設定ファイル 保存先", crate::lexical::ORIGINAL_WINDOW);
    assert!(!short.contains("config.yaml"), "{short}");
}

/// A search's first hits get the long window, later ones the original's (`search::LONG_SNIPPETS`).
#[test]
fn only_the_first_hits_get_the_long_window() {
    let text = "はじめに前置きの文がある。設定ファイルの保存先は、利用者のホームフォルダの下にある隠しフォルダで、名前は設定の種類ごとに決まっており、既定では config.yaml という名前になる。最後に別の話がある。";
    let texts: Vec<String> = (0..4).map(|i| format!("{text}{}", "。".repeat(i + 1))).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let index = index_of(&refs);
    let view = index.view().with_snippet_tokens(64, 2);
    let (hits, _) =
        view.search_tiered_with("設定ファイル 保存先", 4, None, &RankWeights::default()).expect("search");
    let long: Vec<bool> = hits.iter().map(|h| h.snippet.contains("config.yaml")).collect();
    assert_eq!(long, [true, true, false, false], "{hits:?}");
    // The later ones are a short window cut at the sentence's start.
    assert!(hits[3].snippet.starts_with("...[設定ファイル]の[保存先]は"), "{hits:?}");
}
