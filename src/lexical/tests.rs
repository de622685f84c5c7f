//! Behaviour a user would notice: Japanese matching, identifiers, ranking, scope, snippets,
//! persistence. Real tantivy indexes (in RAM or in temporary folders), no mocks.

use proptest::prelude::*;

use super::analyzer::{Analyzer, Kind};
use super::*;
use crate::error::ErrorCode;

fn doc(chunk_id: u64, path: &str, heading_path: &str, text: &str) -> LexicalDoc {
    LexicalDoc {
        chunk_id,
        path: path.to_string(),
        heading_path: heading_path.to_string(),
        text: text.to_string(),
        anchor: format!("p{chunk_id}~a~b"),
        source_hash: format!("hash-of-{path}"),
        meta: Default::default(),
    }
}

/// An in-memory index holding `texts` as chunks 1, 2, … of `doc{N}.md`.
fn index_of(texts: &[&str]) -> LexicalIndex {
    let docs: Vec<LexicalDoc> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| doc(i as u64 + 1, &format!("doc{}.md", i + 1), "", t))
        .collect();
    index_with(&docs)
}

fn index_with(docs: &[LexicalDoc]) -> LexicalIndex {
    let index = LexicalIndex::create_in_ram().unwrap();
    let mut w = index.writer(WriterSize::Bulk(0)).unwrap();
    for d in docs {
        w.add(d).unwrap();
    }
    w.commit(1).unwrap();
    index
}

fn ids(index: &LexicalIndex, query: &str) -> Vec<u64> {
    index.search(query, 10, None).unwrap().into_iter().map(|h| h.chunk_id).collect()
}

fn sorted(mut ids: Vec<u64>) -> Vec<u64> {
    ids.sort_unstable();
    ids
}

fn snippet_of(index: &LexicalIndex, query: &str) -> String {
    index.search(query, 1, None).unwrap().into_iter().next().map(|h| h.snippet).unwrap_or_default()
}

// ---------------------------------------------------------------- analyzer

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

// ---------------------------------------------------------------- Japanese search

#[test]
fn kyoto_does_not_match_tokyo_metropolitan_office() {
    let index = index_of(&["東京都庁に行きました。", "京都に行きました。"]);
    assert_eq!(ids(&index, "京都"), vec![2]);
    assert_eq!(ids(&index, "東京"), vec![1]);
    assert_eq!(ids(&index, "都庁"), vec![1]);
}

#[test]
fn width_variants_find_each_other() {
    let index =
        index_of(&["ＡＰＩ の説明", "API reference", "ｻｰﾊﾞｰ の設定", "サーバーの起動", "サーバを止める"]);
    assert_eq!(sorted(ids(&index, "API")), vec![1, 2]);
    assert_eq!(sorted(ids(&index, "ＡＰＩ")), vec![1, 2]);
    for q in ["サーバー", "サーバ", "ｻｰﾊﾞｰ"] {
        assert_eq!(sorted(ids(&index, q)), vec![3, 4, 5], "query {q}");
    }
}

#[test]
fn katakana_words_written_apart_also_give_the_compound() {
    // Microsoft's Japanese style spaces the words of a loanword compound (`コード スニペット`);
    // a query writes it as one word, which lindera keeps whole.
    let mut a = Analyzer::new();
    a.run("コード スニペットとサーバー\u{3000}ログ");
    let texts: Vec<&str> = a.tokens().iter().map(|t| a.text(t)).collect();
    assert_eq!(texts, ["コード", "コードスニペット", "スニペット", "と", "サーバ", "サーバーログ", "ログ"]);
    let find = |text: &str| *a.tokens().iter().find(|t| a.text(t) == text).unwrap();
    let (whole, first) = (find("コードスニペット"), find("コード"));
    assert_eq!((whole.position, whole.position_length, whole.kind), (first.position, 2, Kind::Whole));
    assert_eq!((whole.offset_from, whole.offset_to), (0, "コード スニペット".len()));
    // Only katakana words with one space between: not a particle between, not other scripts.
    a.run("コードのスニペット 東京 タワー");
    assert!(!a.tokens().iter().any(|t| a.text(t) == "コードスニペット" || a.text(t) == "東京タワー"));

    let index = index_of(&[
        "コード スニペットを挿入する",
        "コードスニペットを挿入する",
        "サーバー\u{3000}ログを読む",
        "コードの中のスニペット",
    ]);
    assert_eq!(sorted(ids(&index, "コードスニペット")), vec![1, 2]);
    assert_eq!(ids(&index, "サーバーログ"), vec![3]);
    assert_eq!(sorted(ids(&index, "スニペット")), vec![1, 2, 4], "each word is still a word");
}

#[test]
fn an_unknown_katakana_word_finds_the_longer_words_that_hold_it() {
    // lindera keeps an unspaced run of unknown katakana as one word, so `スニペット` met
    // nothing in a text that writes `コードスニペット`.
    let index = index_of(&[
        "コードスニペットを挿入する",
        "スニペットを保存する。スニペットの一覧を見る",
        "ソリューションエクスプローラーを開く",
        "ペットを飼う",
        "リファクタリングの手順",
    ]);
    assert_eq!(ids(&index, "スニペット"), vec![2, 1], "the word itself first, then the compound");
    assert_eq!(ids(&index, "ｽﾆﾍﾟｯﾄ"), vec![2, 1], "half-width too");
    assert_eq!(ids(&index, "エクスプローラー"), vec![3]);
    assert_eq!(ids(&index, "ソリューション"), vec![3]);
    assert_eq!(ids(&index, "リファクタ 手順"), vec![5], "in a query of several words");
    assert_eq!(snippet_of(&index, "エクスプローラ"), "[ソリューションエクスプローラー]を開く");
    // A known word does not grow: `ペット` is not in `スニペット` (as `京都` is not in `東京都庁`).
    assert_eq!(ids(&index, "ペット"), vec![4]);
    // Shorter than three characters: no growing.
    assert!(ids(&index, "ニペ").is_empty());
}

#[test]
fn katakana_words_typed_apart_find_the_text_that_writes_them_together() {
    // The reverse of `katakana_words_written_apart_also_give_the_compound`: the query spaces
    // the words, the text writes one word.
    let index = index_of(&["コードスニペットを挿入する", "スニペットを保存する", "ペットのコード"]);
    let (hits, all_words) = index.search_tiered("コード スニペット", 10, None).unwrap();
    assert_eq!(sorted(hits.iter().map(|h| h.chunk_id).collect()), vec![1, 2, 3]);
    assert_eq!((hits[0].chunk_id, all_words), (1, 1), "the compound has both words, first");
    assert_eq!(hits[0].snippet, "[コードスニペット]を挿入する");
    let (_, all_words) = index.search_tiered("ソリューション　エクスプローラー", 10, None).unwrap();
    assert_eq!(all_words, 0, "nothing here has them");
}

#[test]
fn a_word_grows_into_the_longer_words_of_every_live_segment() {
    // Each segment's katakana words are read once and cached: a later commit's segment is read
    // too, and a deleted file's compound is found no more.
    let index = LexicalIndex::create_in_ram().unwrap();
    let mut w = index.writer(WriterSize::Edit).unwrap();
    w.add(&doc(1, "a.md", "", "コードスニペットを挿入する")).unwrap();
    w.commit(1).unwrap();
    assert_eq!(ids(&index, "スニペット"), vec![1]);
    w.add(&doc(2, "b.md", "スニペットマネージャー", "設定を開く")).unwrap();
    w.commit(2).unwrap();
    assert_eq!(sorted(ids(&index, "スニペット")), vec![1, 2], "a new segment, and a heading");
    w.delete_path("a.md");
    w.commit(3).unwrap();
    assert_eq!(ids(&index, "スニペット"), vec![2]);
    let view = index.view();
    let fetched = view.fetch(&[2], "スニペット").unwrap();
    assert_eq!(fetched[0].as_ref().map(|h| h.heading_path.as_str()), Some("スニペットマネージャー"));
}

#[test]
fn a_word_inside_a_compound_matches() {
    let index = index_of(&["会議室の予算を確認する", "関西国際空港に着いた"]);
    assert_eq!(ids(&index, "会議"), vec![1]);
    assert_eq!(ids(&index, "空港"), vec![2]);
    assert_eq!(ids(&index, "関西国際空港"), vec![2]);
}

#[test]
fn a_compound_seen_again_splits_the_same_way() {
    // The second and later occurrences come from the analyzer's cache of decompositions: the
    // same parts, positions and offsets as the first, and as a fresh analyzer gives.
    let text = "関西国際空港に着いた。関西国際空港から出た。";
    let mut cached = Analyzer::new();
    let once = |a: &mut Analyzer, t: &str| -> Vec<(String, usize, usize, usize)> {
        a.run(t);
        a.tokens().iter().map(|k| (a.text(k).to_string(), k.position, k.offset_from, k.offset_to)).collect()
    };
    let first = once(&mut cached, text);
    let again = once(&mut cached, text);
    let fresh = once(&mut Analyzer::new(), text);
    assert_eq!(first, again);
    assert_eq!(first, fresh);
    let second: Vec<&str> =
        first.iter().filter(|t| t.2 >= "関西国際空港に着いた。".len()).map(|t| t.0.as_str()).collect();
    assert_eq!(&second[..4], &["関西", "関西国際空港", "国際", "空港"], "{first:?}");
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

#[test]
fn a_missing_word_never_empties_the_result() {
    let index = index_of(&["会議の議事録", "天気の話", "会議室の予算"]);
    assert_eq!(ids(&index, "会議 予算"), vec![3, 1]);
    assert_eq!(sorted(ids(&index, "会議 存在しない言葉")), vec![1, 3]);
}

#[test]
fn compound_nouns_are_found_as_phrases() {
    let index = index_of(&["形態素解析を行う", "構文の解析と形態素の話", "天気"]);
    let got = ids(&index, "形態素解析");
    assert_eq!(got.first(), Some(&1), "{got:?}");
    // a chunk that has only the parts still comes, below the exact compound
    assert!(got.contains(&2), "{got:?}");
    assert!(!got.contains(&3));
}

#[test]
fn base_forms_find_inflected_verbs() {
    let index = index_of(&["東京都に住んでいる。", "大阪で働いた。"]);
    assert_eq!(ids(&index, "住む"), vec![1]);
    assert_eq!(ids(&index, "働く"), vec![2]);
    assert_eq!(ids(&index, "住んだ"), vec![1]);
}

#[test]
fn natural_language_questions_work_without_spaces() {
    let index = index_of(&[
        "梅雨は北海道と小笠原諸島を除く日本で見られる。",
        "台風は夏から秋にかけて日本に来る。",
        "JavaScript の関数について。",
    ]);
    let got = ids(&index, "日本で梅雨がないのは北海道とどこか。");
    assert_eq!(got.first(), Some(&1), "{got:?}");
    assert!(!got.contains(&3));
}

// ---------------------------------------------------------------- identifiers

#[test]
fn code_identifiers_are_found_by_parts_and_whole() {
    let index = index_of(&[
        "Call kb_search, then Array.prototype.map over a Vec<T> in the HTTPServer (fooBar).",
        "Plain text about search engines and maps.",
    ]);
    for q in [
        "kb_search",
        "kb",
        "prototype",
        "Array.prototype.map",
        "vec",
        "Vec<T>",
        "HTTPServer",
        "server",
        "httpserver",
        "fooBar",
        "foobar",
        "bar",
    ] {
        let got = ids(&index, q);
        assert_eq!(got.first(), Some(&1), "query {q}: {got:?}");
    }
    // `kb_search` is typed in other forms too
    assert_eq!(ids(&index, "KbSearch").first(), Some(&1));
    assert_eq!(ids(&index, "\"kb search\"").first(), Some(&1));
}

#[test]
fn language_names_with_symbols_stay_distinct() {
    let index = index_of(&["C# のコード", "C++ のコード", "C 言語のコード"]);
    assert_eq!(ids(&index, "C#"), vec![1]);
    assert_eq!(ids(&index, "C++"), vec![2]);
    assert_eq!(ids(&index, "ｃ＃"), vec![1]);
}

// ---------------------------------------------------------------- ranking and queries

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

// ---------------------------------------------------------------- front-matter filters

/// A chunk of `path` whose file has the front matter `fields` (as `key: value` pairs).
fn meta_doc(chunk_id: u64, path: &str, text: &str, fields: &[(&str, &str)]) -> LexicalDoc {
    let pairs: Vec<(String, Option<String>)> = fields
        .iter()
        .map(|(k, v)| ((*k).to_owned(), Some((*v).to_owned()).filter(|v| !v.is_empty())))
        .collect();
    LexicalDoc { meta: meta_terms(&pairs).into(), ..doc(chunk_id, path, "", text) }
}

fn cond(field: &str, op: MetaOp, values: &[&str]) -> MetaCondition {
    MetaCondition { field: field.to_owned(), op, values: values.iter().map(|v| (*v).to_owned()).collect() }
}

/// The sorted paths whose front matter meets all `conds`.
fn passing(index: &LexicalIndex, conds: &[MetaCondition]) -> Vec<String> {
    let filter = MetaFilter::new(conds, "filters").unwrap();
    let mut paths: Vec<String> = index.paths_matching(&filter).unwrap().into_iter().collect();
    paths.sort();
    paths
}

fn meta_index() -> LexicalIndex {
    index_with(&[
        meta_doc(
            1,
            "a.md",
            "設計 メモ",
            &[("status", "Draft"), ("tags", "api"), ("tags", "設計"), ("updated", "2024-01-15")],
        ),
        meta_doc(
            2,
            "a.md",
            "続き",
            &[("status", "Draft"), ("tags", "api"), ("tags", "設計"), ("updated", "2024-01-15")],
        ),
        meta_doc(
            3,
            "b.md",
            "設計 仕様",
            &[("status", "published"), ("tags", "guide"), ("updated", "2023-12-31T23:00:00+09:00")],
        ),
        meta_doc(4, "c.md", "設計 なし", &[]),
        meta_doc(5, "d.md", "設計 日本語", &[("タグ", "設計"), ("状態", "ｄｒａｆｔ"), ("reviewed", "")]),
    ])
}

#[test]
fn equality_and_list_membership_compare_after_nfkc_and_case_folding() {
    let index = meta_index();
    assert_eq!(passing(&index, &[cond("status", MetaOp::Eq, &["draft"])]), ["a.md"]);
    assert_eq!(passing(&index, &[cond("STATUS", MetaOp::Eq, &["ＤＲＡＦＴ"])]), ["a.md"]);
    // a list field matches when one of its items does
    assert_eq!(passing(&index, &[cond("tags", MetaOp::Eq, &["API"])]), ["a.md"]);
    assert_eq!(passing(&index, &[cond("tags", MetaOp::Eq, &["設計"])]), ["a.md"]);
    // Japanese keys and full-width values
    assert_eq!(passing(&index, &[cond("タグ", MetaOp::Eq, &["設計"])]), ["d.md"]);
    assert_eq!(passing(&index, &[cond("状態", MetaOp::Eq, &["Draft"])]), ["d.md"]);
    assert_eq!(passing(&index, &[cond("tags", MetaOp::In, &["guide", "api"])]), ["a.md", "b.md"]);
    // ne passes files without the field
    assert_eq!(passing(&index, &[cond("status", MetaOp::Ne, &["draft"])]), ["b.md", "c.md", "d.md"]);
    // exists, also for a key with an empty value
    assert_eq!(passing(&index, &[cond("reviewed", MetaOp::Exists, &[])]), ["d.md"]);
    assert_eq!(passing(&index, &[cond("updated", MetaOp::Exists, &[])]), ["a.md", "b.md"]);
    // conditions combine with AND
    assert_eq!(
        passing(&index, &[cond("tags", MetaOp::Eq, &["api"]), cond("status", MetaOp::Eq, &["published"])]),
        Vec::<String>::new()
    );
    assert!(passing(&index, &[cond("nope", MetaOp::Eq, &["x"])]).is_empty());
}

#[test]
fn date_ranges_compare_calendar_days() {
    let index = meta_index();
    let by = |op, d| passing(&index, &[cond("updated", op, &[d])]);
    assert_eq!(by(MetaOp::Gte, "2024-01-01"), ["a.md"]);
    assert_eq!(by(MetaOp::Gte, "2024-01-15"), ["a.md"]);
    assert!(by(MetaOp::Gt, "2024-01-15").is_empty());
    assert_eq!(by(MetaOp::Lt, "2024-01-15"), ["b.md"]);
    // the time of day is ignored: 2023-12-31T23:00 is on 2023-12-31
    assert_eq!(by(MetaOp::Lte, "2023-12-31"), ["b.md"]);
    assert!(by(MetaOp::Lt, "2023-12-31").is_empty());
    assert_eq!(
        passing(
            &index,
            &[cond("updated", MetaOp::Gte, &["2023-12-01"]), cond("updated", MetaOp::Lte, &["2024-12-31"])]
        ),
        ["a.md", "b.md"]
    );
    // files without a date are never in a range
    assert!(!by(MetaOp::Lte, "2999-01-01").contains(&"c.md".to_owned()));
}

#[test]
fn a_front_matter_filter_counts_top_k_within_the_files_that_pass() {
    // 60 strong matches without the tag, 3 weak ones with it: top 2 of the filtered are found.
    let mut docs: Vec<LexicalDoc> = (0..60)
        .map(|i| meta_doc(i + 1, &format!("x/{i}.md"), "needle needle needle", &[("tags", "other")]))
        .collect();
    for i in 0..3 {
        docs.push(meta_doc(
            100 + i,
            &format!("y/{i}.md"),
            "a long text where the needle appears once among many other words",
            &[("tags", "wanted")],
        ));
    }
    let index = index_with(&docs);
    let filter = MetaFilter::new(&[cond("tags", MetaOp::Eq, &["wanted"])], "filters").unwrap();
    let allowed = index.paths_matching(&filter).unwrap();
    let scope = |p: &str| allowed.contains(p);
    let hits = index.search("needle", 2, Some(&scope)).unwrap();
    assert_eq!(hits.len(), 2);
    assert!(hits.iter().all(|h| h.path.starts_with("y/")), "{hits:?}");
    assert_eq!(sorted(index.chunk_ids_in_scope(&scope).unwrap()), [100, 101, 102]);
}

#[test]
fn a_malformed_filter_is_one_sentence_naming_the_condition() {
    let err = |conds: &[MetaCondition]| {
        let e = MetaFilter::new(conds, "filters").unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert!(!e.message.contains('\n'), "{}", e.message);
        assert!(e.message.ends_with('.'), "{}", e.message);
        e.message
    };
    let m = err(&[cond("status", MetaOp::Eq, &["x"]), cond("updated", MetaOp::Gte, &["last week"])]);
    assert!(
        m.starts_with("filters[1] (updated gte) compares dates, and 'last week' is not an ISO 8601 date"),
        "{m}"
    );
    assert!(err(&[cond("updated", MetaOp::Lt, &["2024-13-01"])]).contains("YYYY-MM-DD"));
    assert!(err(&[cond(" ", MetaOp::Eq, &["x"])]).starts_with("filters[0].field is empty"));
    assert!(err(&[cond("status", MetaOp::Eq, &[])]).contains("needs a value"));
    assert!(err(&[cond("status", MetaOp::Eq, &["a", "b"])]).contains("use op \"in\""));
    assert!(err(&[cond("tags", MetaOp::In, &[])]).contains("at least one value"));
}

#[test]
fn meta_terms_cover_values_dates_and_keys() {
    let pairs = |v: &[(&str, Option<&str>)]| -> Vec<(String, Option<String>)> {
        v.iter().map(|(k, v)| ((*k).to_owned(), v.map(str::to_owned))).collect()
    };
    let terms = meta_terms(&pairs(&[
        ("Updated", Some("2024-02-03 10:00")),
        ("draft", None),
        ("Tags", Some(" API ")),
    ]));
    assert_eq!(
        terms,
        [
            "draft\u{1e}",
            "tags\u{1e}",
            "tags\u{1f}api",
            "updated\u{1d}2024-02-03",
            "updated\u{1e}",
            "updated\u{1f}2024-02-03 10:00",
        ]
    );
    let ms = meta_terms(&pairs(&[("ms.date", Some("11/09/2020")), ("改訂日", Some("２０２４年１月５日"))]));
    assert!(ms.contains(&"ms.date\u{1d}2020-11-09".to_owned()), "{ms:?}");
    assert!(ms.contains(&"改訂日\u{1d}2024-01-05".to_owned()), "full-width digits after NFKC: {ms:?}");
    let date = |s: &str| date_of(s);
    assert_eq!(date("2024-02-30").as_deref(), Some("2024-02-30"), "day-of-month is checked loosely");
    assert_eq!(date("2024-02-03T10:00:00Z").as_deref(), Some("2024-02-03"));
    assert_eq!(date("2024/2/3").as_deref(), Some("2024-02-03"));
    assert_eq!(date("2024年2月3日").as_deref(), Some("2024-02-03"));
    // Microsoft Learn's ms.date: month first
    assert_eq!(date("11/09/2020").as_deref(), Some("2020-11-09"));
    for not_a_date in [
        "2024-2-3",
        "2024-02-03x",
        "13/01/2020",
        "2024/00/10",
        "v1.2",
        "2024",
        "",
        "１１/09/2020",
        "api 草案",
        "2024-01-0日",
        "2024/01/01/01",
        "年月日",
        "2024年13月1日",
    ] {
        assert_eq!(date(not_a_date), None, "{not_a_date}");
    }
    assert_eq!(normalize_meta("  ＡＰＩ "), "api");
}

// ---------------------------------------------------------------- scope

#[test]
fn top_k_is_counted_within_scope() {
    let mut docs: Vec<LexicalDoc> =
        (0..99).map(|i| doc(i + 1, &format!("out/{i}.md"), "needle", "needle needle needle")).collect();
    docs.push(doc(
        1000,
        "in/only.md",
        "",
        "a long text where the needle appears once among many other words",
    ));
    let index = index_with(&docs);
    let in_scope = |p: &str| p.starts_with("in/");
    let hits = index.search("needle", 1, Some(&in_scope)).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!((hits[0].chunk_id, hits[0].path.as_str()), (1000, "in/only.md"));
    // without the filter the in-scope chunk is last
    let all = index.search("needle", 100, None).unwrap();
    assert_eq!(all.len(), 100);
    assert_eq!(all.last().unwrap().chunk_id, 1000);
    // nothing in scope
    let none = |_: &str| false;
    assert!(index.search("needle", 5, Some(&none)).unwrap().is_empty());
}

#[test]
fn scope_filter_sees_each_chunks_own_path() {
    let docs: Vec<LexicalDoc> = ["d.md", "a.md", "c.md", "b.md", "e/f.md"]
        .iter()
        .enumerate()
        .map(|(i, p)| doc(i as u64, p, "", "same words"))
        .collect();
    let index = index_with(&docs);
    for (wanted, id) in [("a.md", 1), ("b.md", 3), ("c.md", 2), ("d.md", 0), ("e/f.md", 4)] {
        let only = |p: &str| p == wanted;
        let hits = index.search("words", 10, Some(&only)).unwrap();
        assert_eq!(
            hits.iter().map(|h| (h.chunk_id, h.path.as_str())).collect::<Vec<_>>(),
            vec![(id, wanted)]
        );
    }
    // after more commits (new segments, deletions) the paths still line up
    let mut w = index.writer(WriterSize::Bulk(0)).unwrap();
    w.delete_path("c.md");
    w.add(&doc(9, "c.md", "", "same words again")).unwrap();
    w.commit(2).unwrap();
    let only_c = |p: &str| p == "c.md";
    assert_eq!(
        index.search("words", 10, Some(&only_c)).unwrap().iter().map(|h| h.chunk_id).collect::<Vec<_>>(),
        vec![9]
    );
}

#[test]
fn ties_are_broken_by_chunk_id() {
    let docs: Vec<LexicalDoc> = (1..=20).rev().map(|i| doc(i, &format!("{i}.md"), "", "same text")).collect();
    let index = index_with(&docs);
    assert_eq!(ids(&index, "same"), (1..=10).collect::<Vec<u64>>());
}

// ---------------------------------------------------------------- writer

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

// ---------------------------------------------------------------- snippets

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

// ---------------------------------------------------------------- measurements (ignored)

// `../shared/<sub>` (or under `LVS_SHARED_DIR`); `None` after one "skipped" line when absent.
use crate::testdata::shared_or_skip;

fn markdown_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            markdown_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "md") {
            out.push(p);
        }
    }
}

/// User + system CPU seconds of this process so far (Linux `/proc/self/stat`).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat.rsplit(')').next().unwrap_or("").split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

/// Tokenizing throughput on visualstudio-docs-ja (`LVS_MEASURE_BYTES`, default 1 MiB):
/// lindera alone vs our analyzer vs a full index. Wall and CPU time, best of `LVS_MEASURE_RUNS`
/// (default 3), so other processes on the machine disturb the numbers less.
/// `cargo test --release --lib lexical::tests::measure_tokenize -- --ignored --nocapture`
#[test]
#[ignore = "measurement; needs ../shared/corpora"]
fn measure_tokenize() {
    use std::borrow::Cow;
    use std::time::Instant;

    let Some(corpus) = shared_or_skip("corpora/visualstudio-docs-ja/docs") else { return };
    let mut files = Vec::new();
    markdown_files(&corpus, &mut files);
    let limit: usize =
        std::env::var("LVS_MEASURE_BYTES").ok().and_then(|v| v.parse().ok()).unwrap_or(1 << 20);
    let runs: usize = std::env::var("LVS_MEASURE_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(3);
    let mut texts = Vec::new();
    let mut bytes = 0;
    for f in files {
        if bytes >= limit {
            break;
        }
        if let Ok(t) = std::fs::read_to_string(&f) {
            bytes += t.len();
            texts.push(t);
        }
    }
    assert!(bytes > 0, "corpus not found");
    let mb = bytes as f64 / (1 << 20) as f64;
    eprintln!("{} files, {bytes} bytes", texts.len());
    let measure = |what: &str, f: &mut dyn FnMut()| {
        let (mut wall, mut cpu) = (f64::MAX, f64::MAX);
        for _ in 0..runs {
            let (w0, c0) = (Instant::now(), cpu_seconds());
            f();
            wall = wall.min(w0.elapsed().as_secs_f64());
            cpu = cpu.min(cpu_seconds() - c0);
        }
        eprintln!(
            "{what:<40} wall {:>7.0} ms ({:>5.2} MB/s)  cpu {:>7.0} ms",
            wall * 1e3,
            mb / wall,
            cpu * 1e3
        );
    };
    let dict = super::dictionary::load().unwrap();
    for (name, mode) in [
        ("lindera alone, normal mode", lindera::mode::Mode::Normal),
        ("lindera alone, decompose mode", lindera::mode::Mode::Decompose(lindera::mode::Penalty::default())),
    ] {
        let seg = lindera::segmenter::Segmenter::new(mode, dict.clone(), None);
        measure(name, &mut || {
            for t in &texts {
                std::hint::black_box(seg.segment(Cow::Borrowed(t.as_str())).unwrap().len());
            }
        });
    }
    let mut a = Analyzer::new();
    measure("our analyzer, one thread", &mut || {
        for t in &texts {
            a.run(t);
            std::hint::black_box(a.tokens().len());
        }
    });
    measure("full index on disk, 2 indexing threads", &mut || {
        let dir = tempfile::tempdir().unwrap();
        let index = LexicalIndex::open_or_create(dir.path()).unwrap();
        let mut w = index.writer(WriterSize::Bulk(128 << 20)).unwrap();
        for (i, t) in texts.iter().enumerate() {
            w.add(&doc(i as u64, &format!("{i}.md"), "", t)).unwrap();
        }
        w.commit(1).unwrap();
    });
}

/// Passage-level MRR@10 on jsquad-valid (passages only, no distractors) and query latency.
/// `cargo test --release lexical::tests::eval_jsquad -- --ignored --nocapture`
#[test]
#[ignore = "evaluation; needs ../shared/eval"]
fn eval_jsquad() {
    use std::collections::HashMap;
    use std::time::Instant;

    let Some(base) = shared_or_skip("eval/jsquad-valid") else { return };
    let field = |line: &str, key: &str| -> String {
        // the files are simple one-object-per-line JSON
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        v[key].as_str().unwrap_or_default().to_string()
    };
    let corpus = std::fs::read_to_string(base.join("corpus.jsonl")).expect("eval set");
    let mut docs = Vec::new();
    let mut id_of: HashMap<u64, String> = HashMap::new();
    for (i, line) in corpus.lines().enumerate() {
        let id = field(line, "_id");
        docs.push(doc(i as u64, &format!("{id}.md"), &field(line, "title"), &field(line, "text")));
        id_of.insert(i as u64, id);
    }
    if std::env::var_os("LVS_EVAL_DISTRACTORS").is_some() {
        // the three documentation corpora, cut into paragraph chunks of up to ~2 KB
        let Some(corpora) = shared_or_skip("corpora") else { return };
        let mut files = Vec::new();
        markdown_files(&corpora, &mut files);
        for f in files {
            let Ok(text) = std::fs::read_to_string(&f) else { continue };
            let mut chunk = String::new();
            for para in text.split("\n\n") {
                if !chunk.is_empty() && chunk.len() + para.len() > 2000 {
                    docs.push(doc(docs.len() as u64 + 1_000_000, "distractor.md", "", &chunk));
                    chunk.clear();
                }
                chunk.push_str(para);
                chunk.push_str("\n\n");
            }
            if !chunk.trim().is_empty() {
                docs.push(doc(docs.len() as u64 + 1_000_000, "distractor.md", "", &chunk));
            }
        }
        for d in &docs {
            id_of.entry(d.chunk_id).or_insert_with(|| "distractor".to_string());
        }
    }
    let started = Instant::now();
    let index = index_with(&docs);
    eprintln!("indexed {} chunks in {:?}", docs.len(), started.elapsed());
    let qrels_text = std::fs::read_to_string(base.join("qrels/passage.tsv")).unwrap();
    let mut qrels: HashMap<&str, Vec<&str>> = HashMap::new();
    for line in qrels_text.lines().skip(1) {
        let mut cols = line.split('\t');
        if let (Some(q), Some(c)) = (cols.next(), cols.next()) {
            qrels.entry(q).or_default().push(c);
        }
    }
    let queries = std::fs::read_to_string(base.join("queries.jsonl")).unwrap();
    let (mut rr, mut n, mut found) = (0.0, 0, 0);
    let mut times = Vec::new();
    let limit: usize =
        std::env::var("LVS_EVAL_LIMIT").ok().and_then(|v| v.parse().ok()).unwrap_or(usize::MAX);
    for line in queries.lines().step_by(if limit < 4442 { 4442 / limit } else { 1 }) {
        let (qid, text) = (field(line, "_id"), field(line, "text"));
        let Some(rel) = qrels.get(qid.as_str()) else { continue };
        let start = Instant::now();
        let hits = index.search(&text, 10, None).unwrap_or_default();
        times.push(start.elapsed());
        n += 1;
        let rank = hits.iter().position(|h| rel.contains(&id_of[&h.chunk_id].as_str()));
        if let Some(rank) = rank {
            rr += 1.0 / (rank + 1) as f64;
            found += 1;
        }
        if rank != Some(0) && std::env::var_os("LVS_EVAL_SHOW").is_some() {
            let p = super::query::plan(&text, &mut Analyzer::new());
            let clauses: Vec<String> = p
                .strict
                .iter()
                .map(|c| {
                    format!(
                        "{:?}|{:?}",
                        c.phrases
                            .iter()
                            .map(|ph| ph.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>().join(" "))
                            .collect::<Vec<_>>(),
                        c.terms
                    )
                })
                .collect();
            eprintln!(
                "Q {text} rank={rank:?} rel={rel:?} top={:?}\n   clauses={clauses:?} loose={:?}",
                hits.iter().take(3).map(|h| id_of[&h.chunk_id].as_str()).collect::<Vec<_>>(),
                p.loose
            );
        }
    }
    times.sort();
    eprintln!(
        "jsquad passages: {} docs, {n} queries, MRR@10 {:.4}, recall@10 {:.4}, p50 {:?}, p99 {:?}",
        docs.len(),
        rr / n as f64,
        found as f64 / n as f64,
        times[times.len() / 2],
        times[times.len() * 99 / 100]
    );
}

/// Only our analyzer over `LVS_MEASURE_BYTES` of the corpus (for `perf record`).
#[test]
#[ignore = "measurement; needs ../shared/corpora"]
fn measure_analyzer_only() {
    let Some(corpus) = shared_or_skip("corpora/visualstudio-docs-ja/docs") else { return };
    let mut files = Vec::new();
    markdown_files(&corpus, &mut files);
    let limit: usize =
        std::env::var("LVS_MEASURE_BYTES").ok().and_then(|v| v.parse().ok()).unwrap_or(4 << 20);
    let mut texts = Vec::new();
    let mut bytes = 0;
    for f in files {
        if bytes >= limit {
            break;
        }
        if let Ok(t) = std::fs::read_to_string(&f) {
            bytes += t.len();
            texts.push(t);
        }
    }
    let mut a = Analyzer::new();
    let start = std::time::Instant::now();
    for t in &texts {
        a.run(t);
    }
    eprintln!("analyzer: {bytes} bytes in {:?}", start.elapsed());
}

/// Full index of visualstudio-docs-ja (chunks of ≤ 2 KB paragraphs) vs lindera alone, then
/// query latency for heading-like queries (top 10 with snippets).
/// `cargo test --release --lib lexical::tests::measure_corpus -- --ignored --nocapture`
#[test]
#[ignore = "measurement; needs ../shared/corpora"]
fn measure_corpus() {
    use std::borrow::Cow;
    use std::time::Instant;

    let Some(corpus) = shared_or_skip("corpora/visualstudio-docs-ja") else { return };
    let mut files = Vec::new();
    markdown_files(&corpus, &mut files);
    let mut docs = Vec::new();
    let mut queries = Vec::new();
    let mut bytes = 0;
    for (i, f) in files.iter().enumerate() {
        let Ok(text) = std::fs::read_to_string(f) else { continue };
        bytes += text.len();
        if i % 20 == 0
            && let Some(h) = text.lines().find(|l| l.starts_with("# ") || l.starts_with("## "))
        {
            queries.push(h.trim_start_matches('#').trim().to_string());
        }
        let path = f.to_string_lossy().to_string();
        let mut chunk = String::new();
        for para in text.split("\n\n") {
            if !chunk.is_empty() && chunk.len() + para.len() > 2000 {
                docs.push(doc(docs.len() as u64, &path, "", &chunk));
                chunk.clear();
            }
            chunk.push_str(para);
            chunk.push_str("\n\n");
        }
        if !chunk.trim().is_empty() {
            docs.push(doc(docs.len() as u64, &path, "", &chunk));
        }
    }
    eprintln!("{} files, {bytes} bytes, {} chunks, {} queries", files.len(), docs.len(), queries.len());

    let dict = super::dictionary::load().unwrap();
    let seg = lindera::segmenter::Segmenter::new(lindera::mode::Mode::Normal, dict, None);
    let (w0, c0) = (Instant::now(), cpu_seconds());
    for d in &docs {
        std::hint::black_box(seg.segment(Cow::Borrowed(d.text.as_str())).unwrap().len());
    }
    eprintln!("lindera alone:  wall {:?}, cpu {:.2} s", w0.elapsed(), cpu_seconds() - c0);

    let dir = tempfile::tempdir().unwrap();
    let index = LexicalIndex::open_or_create(dir.path()).unwrap();
    let (w0, c0) = (Instant::now(), cpu_seconds());
    let mut w = index.writer(WriterSize::Bulk(128 << 20)).unwrap();
    for d in &docs {
        w.add(d).unwrap();
    }
    w.commit(1).unwrap();
    eprintln!("full index:     wall {:?}, cpu {:.2} s", w0.elapsed(), cpu_seconds() - c0);

    for (label, filter) in
        [("no scope", None), ("scope", Some(&(|p: &str| p.contains("/ide/")) as &ScopeFilter<'_>))]
    {
        let mut times = Vec::new();
        let repeat: usize =
            std::env::var("LVS_MEASURE_REPEAT").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
        for q in queries.iter().cycle().take(queries.len() * repeat) {
            let start = Instant::now();
            let _ = index.search(q, 10, filter);
            times.push(start.elapsed());
        }
        times.sort();
        eprintln!(
            "queries ({label}): p50 {:?}, p90 {:?}, p99 {:?}, max {:?}",
            times[times.len() / 2],
            times[times.len() * 9 / 10],
            times[times.len() * 99 / 100],
            times[times.len() - 1]
        );
    }
}

// ---------------------------------------------------------------- huge chunks

proptest! {
    /// Pieces concatenate to the text, cut on character boundaries, and stay within the limit
    /// unless a single character is longer.
    #[test]
    fn text_pieces_cover_the_text_within_the_limit(text in "[a-z 。\n東京都庁設計]{0,400}", max in 1usize..64) {
        let pieces: Vec<&str> = index::text_pieces(&text, max).collect();
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
    let pieces: Vec<&str> = index::text_pieces(&text, 64).collect();
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

// ---------------------------------------------------------------- view: rank, then read

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
