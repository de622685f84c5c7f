use std::borrow::Cow;
use lindera::mode::{Mode, Penalty};
use lindera::segmenter::Segmenter;

#[test]
fn scratch_segment() {
    let dict = super::dictionary::load().unwrap();
    let normal = Segmenter::new(Mode::Normal, dict.clone(), None);
    let decomp = Segmenter::new(Mode::Decompose(Penalty::default()), dict, None);
    let samples = [
        "東京都庁", "京都", "東京都に住んでいる。", "会議室の予算", "会議", "形態素解析", "形態素解析器を使う",
        "サーバー", "サーバ", "サーバーを起動する", "サーバを起動する", "Webサーバーの設定", "ユーザーインターフェイス",
        "日本で梅雨がないのは北海道とどこか。", "梅雨とは何季の一種か?", "プロジェクトを作成する方法", "関西国際空港",
        "ソリューションエクスプローラー", "デバッグ", "コンピューター", "株式会社", "住む", "住んでいる", "美しかった",
        "ＡＰＩ", "ｻｰﾊﾞｰ", "kb_search", "HTTPServer", "C#", "Visual Studio",
    ];
    for s in samples {
        for (name, seg) in [("N", &normal), ("D", &decomp)] {
            let toks = seg.segment(Cow::Borrowed(s)).unwrap();
            let v: Vec<String> = toks.into_iter().map(|mut t| {
                let surf = t.surface.to_string();
                let d = t.details();
                format!("{}[{}/{}/{}]", surf, d.first().unwrap_or(&""), d.get(1).unwrap_or(&""), d.get(6).unwrap_or(&""))
            }).collect();
            eprintln!("{name} {s}: {}", v.join(" "));
        }
    }
}
