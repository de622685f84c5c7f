//! The analyzer's tokens (width folding, stems, offsets, positions, identifiers, base forms)
//! and how a query becomes clauses.

use proptest::prelude::*;

use super::*;

#[test]
fn full_and_half_width_forms_give_the_same_tokens() {
    assert_eq!(analyze("ＡＰＩ"), vec!["api"]);
    assert_eq!(analyze("API"), vec!["api"]);
    assert_eq!(analyze("ｻｰﾊﾞｰ"), analyze("サーバー"));
    assert_eq!(analyze("サーバー"), analyze("サーバ"));
    assert_eq!(analyze("ｻｰﾊﾞ"), vec!["サーバ"]);
    assert_eq!(analyze("１２３"), vec!["123"]);
}

#[test]
fn katakana_stem_only_strips_long_katakana_words() {
    assert_eq!(analyze("ユーザー"), analyze("ユーザ"));
    assert_eq!(analyze("コンピューター"), analyze("コンピュータ"));
    assert_eq!(analyze("キー"), vec!["キー"]); // too short to stem
}

#[test]
fn offsets_point_into_the_original_text() {
    let text = "まず ＡＰＩ を ｻｰﾊﾞｰ で呼ぶ。Use kb_search, ｶﾞｲﾄﾞ and ﾃﾞｰﾀﾍﾞｰｽ.";
    let mut a = Analyzer::new();
    a.run(text);
    let spans: Vec<(&str, &str)> =
        a.tokens().iter().map(|t| (a.text(t), &text[t.offset_from..t.offset_to])).collect();
    assert!(spans.contains(&("api", "ＡＰＩ")), "{spans:?}");
    assert!(spans.contains(&("サーバ", "ｻｰﾊﾞｰ")), "{spans:?}");
    assert!(spans.contains(&("kb_search", "kb_search")), "{spans:?}");
    assert!(spans.contains(&("search", "search")), "{spans:?}");
    assert!(spans.contains(&("ガイド", "ｶﾞｲﾄﾞ")), "{spans:?}");
}

#[test]
fn positions_are_consecutive_and_alternates_share_them() {
    let mut a = Analyzer::new();
    a.run("東京都に住んでいる。kb_search!");
    let primaries: Vec<usize> =
        a.tokens().iter().filter(|t| matches!(t.kind, Kind::Primary(_))).map(|t| t.position).collect();
    assert_eq!(primaries, (0..primaries.len()).collect::<Vec<_>>());
    let find = |text: &str| *a.tokens().iter().find(|t| a.text(t) == text).unwrap();
    let (base, surface) = (find("住む"), find("住ん"));
    assert_eq!(base.position, surface.position);
    let (whole, kb) = (find("kb_search"), find("kb"));
    assert_eq!((whole.position, whole.position_length), (kb.position, 2));
}

#[test]
fn identifiers_are_split_into_parts_and_kept_whole() {
    let has = |text: &str, want: &[&str]| {
        let got = analyze(text);
        for w in want {
            assert!(got.iter().any(|g| g == w), "{text}: missing {w} in {got:?}");
        }
    };
    has("kb_search", &["kb", "search", "kb_search"]);
    has("Array.prototype.map", &["array", "prototype", "map", "array.prototype.map"]);
    has("Vec<T>", &["vec", "t"]);
    has("HTTPServer", &["http", "server", "httpserver"]);
    has("fooBar", &["foo", "bar", "foobar"]);
    has("std::fs::read_to_string", &["std", "fs", "read", "to", "string", "std::fs::read_to_string"]);
    has("utf8", &["utf", "8", "utf8"]);
    has("C# と C++ と F#", &["c#", "c++", "f#"]);
    assert_eq!(analyze("end."), vec!["end"]); // a trailing connector is not part of the word
    assert_eq!(analyze("C#."), vec!["c", "c#"]);
}

#[test]
fn tokens_without_letters_or_digits_are_dropped() {
    assert!(analyze("。、！？ --- *** （）「」").is_empty());
    assert!(analyze("").is_empty());
    assert_eq!(analyze("「会議」。"), vec!["会議"]);
}

#[test]
fn independent_verbs_get_their_base_form() {
    let tokens = analyze("住んでいる");
    assert!(tokens.contains(&"住ん".to_string()) && tokens.contains(&"住む".to_string()), "{tokens:?}");
    // particles and auxiliaries keep only their surface
    assert!(!analyze("東京で").contains(&"だ".to_string()));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn analyzer_never_panics_and_offsets_are_valid(text in "\\PC{0,60}") {
        let mut a = Analyzer::new();
        a.run(&text);
        let mut last_primary = None;
        for tok in a.tokens() {
            let t = a.text(tok);
            prop_assert!(tok.offset_from <= tok.offset_to && tok.offset_to <= text.len());
            prop_assert!(text.is_char_boundary(tok.offset_from) && text.is_char_boundary(tok.offset_to));
            prop_assert!(!t.is_empty() && t.chars().any(char::is_alphanumeric));
            if matches!(tok.kind, Kind::Primary(_)) {
                prop_assert_eq!(tok.position, last_primary.map_or(0, |p: usize| p + 1));
                last_primary = Some(tok.position);
            }
        }
    }

    #[test]
    fn normalizer_equals_nfkc_and_maps_offsets(
        text in prop_oneof![
            "\\PC{0,40}",
            "[a-zA-Zｱ-ﾝﾞﾟＡ-Ｚ０-９\u{0300}-\u{0345}\u{3099}\u{309A}\u{1100}-\u{1175}\u{11A8}-\u{11C2}가-갛あ-んア-ヶー漢字。、㍿ｰ ]{0,40}",
        ]
    ) {
        use unicode_normalization::UnicodeNormalization;
        let mut n = super::normalize::Normalized::default();
        n.normalize(&text);
        prop_assert_eq!(&n.text, &text.nfkc().collect::<String>());
        let mut last = 0;
        for (i, _) in n.text.char_indices().chain(std::iter::once((n.text.len(), ' '))) {
            let (a, b) = (n.orig_start(i), n.orig_end(i));
            prop_assert!(text.is_char_boundary(a) && text.is_char_boundary(b), "{} -> {} {}", i, a, b);
            prop_assert!(a >= last && a <= text.len() && b <= text.len());
            last = a;
        }
    }

    #[test]
    fn search_never_fails_on_any_query(query in "\\PC{0,40}") {
        static INDEX: std::sync::OnceLock<LexicalIndex> = std::sync::OnceLock::new();
        let index = INDEX.get_or_init(|| index_of(&["東京都庁 と kb_search の Vec<T>", "サーバー を 起動 する"]));
        match index.search(&query, 5, None) {
            Ok(_) => {}
            Err(e) => prop_assert_eq!(e.code, ErrorCode::InvalidArgument),
        }
    }
}

/// The clauses of a query, each as `terms|phrase` text.
fn clauses(query: &str) -> Vec<String> {
    let plan = super::query::plan(query, &mut Analyzer::new());
    plan.strict
        .iter()
        .map(|c| {
            let phrases: Vec<String> = c
                .phrases
                .iter()
                .map(|p| p.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>().join(" "))
                .collect();
            [c.terms.join("|"), phrases.join("|")]
                .iter()
                .filter(|s| !s.is_empty())
                .cloned()
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect()
}

#[test]
fn query_words_become_clauses() {
    assert_eq!(clauses("形態素解析"), vec!["形態素 解析"]);
    assert_eq!(clauses("kb_search"), vec!["kb_search|kb search"]);
    assert_eq!(clauses("C#"), vec!["c#"]);
    assert_eq!(clauses("住んだ"), vec!["住ん|住む"]);
    assert_eq!(clauses("会議 予算"), vec!["会議", "予算"]);
    assert_eq!(clauses("\"赤いりんご\" 東京"), vec!["赤い りんご", "東京"]);
    assert_eq!(clauses("日本で梅雨がないのは北海道とどこか。"), vec!["日本", "梅雨", "北海道"]);
    assert_eq!(clauses("です"), vec!["です"]);
    assert!(clauses("「」。!!").is_empty());
}
