//! Huge chunks: text pieces, and a chunk of megabytes indexed and searched in bounded memory.

use proptest::prelude::*;

use super::*;

proptest! {
    /// Pieces concatenate to the text, cut on character boundaries, and stay within the limit
    /// unless a single character is longer.
    #[test]
    fn text_pieces_cover_the_text_within_the_limit(text in "[a-z 。\n東京都庁設計]{0,400}", max in 1usize..64) {
        let pieces: Vec<&str> = writer::text_pieces(&text, max).collect();
        prop_assert_eq!(pieces.concat(), text.clone());
        for p in &pieces {
            prop_assert!(!p.is_empty());
            prop_assert!(p.len() <= max || p.chars().count() == 1, "{:?} over {}", p, max);
        }
    }
}

#[test]
fn text_pieces_prefer_line_breaks_then_spaces() {
    let text = format!("{}\n{} {}", "a".repeat(40), "b".repeat(10), "c".repeat(40));
    let pieces: Vec<&str> = writer::text_pieces(&text, 64).collect();
    assert_eq!(
        pieces[0],
        format!("{}\n{} ", "a".repeat(40), "b".repeat(10)).split_inclusive('\n').next().unwrap()
    );
    assert_eq!(pieces.concat(), text);
}

/// A paragraph far larger than one analyzer piece is found by a word at its very end, by a
/// phrase inside one piece, and its snippet shows the match.
#[test]
fn a_huge_single_line_chunk_is_searchable_to_its_end() {
    let filler = "検索インデックスのテストデータ。".repeat(5_000); // ≈ 240 KB: four pieces, one line
    let text = format!("{filler}最後に京都の寺院について書く。");
    let index = index_of(&[&text, "東京都庁の設計。"]);
    assert_eq!(ids(&index, "京都"), vec![1]);
    assert_eq!(ids(&index, "寺院"), vec![1]);
    assert!(snippet_of(&index, "寺院").contains("[寺院]"), "{}", snippet_of(&index, "寺院"));
}

proptest! {
    /// Front-matter values are arbitrary text: turning them into terms never panics, and every
    /// date term found is a valid `YYYY-MM-DD`.
    #[test]
    fn meta_terms_never_panic_on_any_value(
        key in "\\PC{0,12}",
        value in "[0-9/年月日T: a草-]{0,14}|\\PC{0,24}",
    ) {
        let terms = meta_terms(&[(key, Some(value.clone()))]);
        if let Some(d) = date_of(&value) {
            prop_assert_eq!(d.len(), 10);
            prop_assert!(d.as_bytes()[4] == b'-' && d.as_bytes()[7] == b'-');
        }
        prop_assert!(terms.len() <= 3);
    }
}
