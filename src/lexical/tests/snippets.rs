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
