//! Japanese search: word boundaries, width variants, katakana compounds and infixes,
//! compounds as phrases, base forms, questions typed without spaces.

use super::*;

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
