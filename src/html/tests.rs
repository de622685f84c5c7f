//! Unit tests of the HTML renderer over a map of files: F1's export, Japanese soft breaks, heading
//! ids, warnings, the raw-HTML allow-list, GFM, highlighting, titles, tables of contents, sites.

use std::collections::BTreeMap;

use super::*;

/// Files from a map; `.png` entries are images.
#[derive(Default)]
struct MapFiles(BTreeMap<String, Vec<u8>>);

const PNG: &[u8] = &[0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0];

impl MapFiles {
    fn with(mut self, path: &str, bytes: &[u8]) -> Self {
        self.0.insert(path.to_owned(), bytes.to_vec());
        self
    }
}

impl Files for MapFiles {
    fn kind(&self, path: &str) -> FileKind {
        if self.0.contains_key(path) {
            FileKind::File
        } else if self.0.keys().any(|k| k.starts_with(&format!("{path}/"))) {
            FileKind::Dir
        } else {
            FileKind::Missing
        }
    }
    fn markdown(&self, path: &str) -> Option<String> {
        self.0.get(path).map(|b| String::from_utf8_lossy(b).into_owned())
    }
    fn image(&self, path: &str) -> Result<(&'static str, Vec<u8>), ImageProblem> {
        match self.0.get(path) {
            Some(b) if b.starts_with(PNG) => Ok(("image/png", b.clone())),
            Some(_) => Err(ImageProblem::Unsupported),
            None => Err(ImageProblem::Missing),
        }
    }
}

fn doc<'a>(path: &'a str, text: &'a str) -> SiteDoc<'a> {
    SiteDoc { path, text, index_title: None, id: None }
}

fn export(path: &str, text: &str, files: &MapFiles) -> Page {
    let out = format!("{}.html", &path[..path.len() - 3]);
    export_page(&doc(path, text), &out, &Settings::default(), files)
}

const ARCH: &str = "# アーキテクチャ\n\n全体は [API](../guide/api.md#ツールの一覧) を見る。\n\n## 依存の向き\n\n![構成図](../../images/arch.png)\n";

fn f1_files() -> MapFiles {
    MapFiles::default()
        .with("docs/guide/api.md", "# API リファレンス\n\n## ツールの一覧\n\n本文。\n".as_bytes())
        .with("images/arch.png", PNG)
}

#[test]
fn the_f1_export_is_self_contained_and_rewrites_links() {
    let page = export("docs/設計/arch.md", ARCH, &f1_files());
    assert_eq!(page.warnings, Vec::<String>::new());
    let html = &page.html;
    assert!(html.starts_with("<!doctype html>\n<html lang=\"ja\">"), "{html}");
    assert!(html.contains(
        "Content-Security-Policy\" content=\"default-src 'none'; img-src data:; style-src 'unsafe-inline'\""
    ));
    assert!(html.contains("<title>アーキテクチャ</title>"));
    assert!(html.contains("src=\"data:image/png;base64,"));
    assert!(html.contains("<h2 id=\"依存の向き\">"));
    assert!(html.contains("href=\"../guide/api.html#ツールの一覧\""), "{html}");
    assert!(!html.contains("http://") && !html.contains("https://"));
}

#[test]
fn soft_breaks_between_japanese_characters_disappear() {
    // After full-width punctuation the break is joined too: 。 carries its own space.
    let page = export("a.md", "これは\n日本語。\nThis is\nEnglish.\n", &MapFiles::default());
    assert!(page.html.contains("<p>これは日本語。This is\nEnglish.</p>"), "{}", page.html);
    // Inline markup does not end the run; inline code is text too.
    let page = export("a.md", "かかるほど\n*深い*\n`所有`\nand\n**more**\n", &MapFiles::default());
    assert!(
        page.html.contains("<p>かかるほど<em>深い</em><code>所有</code>\nand\n<strong>more</strong></p>"),
        "{}",
        page.html
    );
}

#[test]
fn japanese_emphasis_is_upright_in_any_page_language() {
    // A Japanese page: page.css sets every `em` upright.
    let page = export("a.md", "本文の*強調*です。\n", &MapFiles::default());
    assert!(
        page.html.contains("<em>強調</em>") && page.html.contains("html:lang(ja) em, em.ja"),
        "{}",
        page.html
    );
    // An English page: only the Japanese run gets the upright class.
    let settings = Settings { lang: Some("en".into()), ..Settings::default() };
    let page =
        export_page(&doc("a.md", "Some *強調* and *emphasis*.\n"), "a.html", &settings, &MapFiles::default());
    assert!(page.html.contains("<em class=\"ja\">強調</em> and <em>emphasis</em>"), "{}", page.html);
}

#[test]
fn heading_ids_follow_the_links_slug_rule_and_number_repeats() {
    let page = export(
        "a.md",
        "# T\n\n## ツールの一覧（MCP）\n\n## 概要\n\n## 概要\n\n## Custom {#my-id}\n",
        &MapFiles::default(),
    );
    for id in ["ツールの一覧mcp", "概要", "概要-1", "my-id"] {
        assert!(page.html.contains(&format!(" id=\"{id}\"")), "{id}: {}", page.html);
    }
    assert!(page.html.contains("<a class=\"anchor\" href=\"#概要-1\" aria-hidden=\"true\">#</a>"));
}

#[test]
fn broken_links_and_images_are_warned_in_source_order() {
    let text = "# T\n\n[gone](gone.md) and [bad](b.md#nope) and [ok](b.md#yes)\n\n![](https://example.com/a.png)\n\n![](nope.png)\n\n[self](#t) [selfbad](#zz)\n";
    let files = MapFiles::default().with("b.md", b"# B\n\n## Yes\n");
    let page = export("a.md", text, &files);
    assert_eq!(
        page.warnings,
        vec![
            "a.md:3: link target `gone.md` does not exist; fix the link or restore the file",
            "a.md:3: link `b.md#nope` points to a heading that does not exist; fix the anchor or the heading",
            "a.md:5: remote image `https://example.com/a.png` was not fetched and is shown as a link; save it into the project to embed it",
            "a.md:7: image `nope.png` was not embedded (the file does not exist); fix the path or the file",
            "a.md:9: link `#zz` points to a heading that does not exist; fix the anchor or the heading",
        ]
    );
    assert!(page.html.contains("<a class=\"remote-image\" href=\"https://example.com/a.png\">"));
    assert!(page.html.contains("<span class=\"missing-image\""));
    assert!(page.html.contains("href=\"b.html#yes\""));
}

#[test]
fn japanese_warnings_follow_the_language() {
    let settings = Settings { language: Language::Ja, ..Settings::default() };
    let page = export_page(
        &doc("a.md", "[x](gone.md)\n\n<script>x()</script>\n"),
        "a.html",
        &settings,
        &MapFiles::default(),
    );
    assert_eq!(
        page.warnings,
        vec![
            "a.md:1: リンク先 `gone.md` がありません。リンクを直すか、ファイルを戻してください",
            "a.md:3: HTML の `<script>` を外しました。書き出す HTML はスクリプトも外の資源も使いません",
        ]
    );
}

#[test]
fn raw_html_goes_through_the_allow_list() {
    let text = "<div class=\"x\" onclick=\"evil()\" style=\"color:red\">ok <kbd>Ctrl</kbd></div>\n\n<script>alert(1)</script>\n\n<iframe src=\"https://example.com\"></iframe>\n\nA <span>b</span> <a href=\"javascript:alert(1)\">c</a> <script>x</script>d\n\n<img src=\"https://example.com/x.png\" alt=\"r\">\n\n<link rel=stylesheet href=\"https://example.com/a.css\">\n";
    let page = export("a.md", text, &MapFiles::default());
    let html = &page.html;
    assert!(html.contains("<div class=\"x\">ok <kbd>Ctrl</kbd></div>"), "{html}");
    assert!(!html.contains("alert(1)") && !html.contains("<iframe") && !html.contains("onclick"));
    assert!(html.contains("A <span>b</span> <a>c</a> d"), "{html}");
    assert!(!html.contains("<link"));
    let removed: Vec<&str> = page.warnings.iter().map(|w| w.split('`').nth(1).unwrap_or("")).collect();
    assert_eq!(
        removed,
        ["onclick", "style", "<script>", "<iframe>", "javascript:", "https://example.com/x.png", "<link>"]
    );
}

#[test]
fn gfm_tables_task_lists_and_footnotes_render() {
    let text = "| a | b |\n|:--|--:|\n| 1 | 2 |\n\n- [x] done\n- [ ] todo\n\nText[^n].\n\n[^n]: The note.\n";
    let html = export("a.md", text, &MapFiles::default()).html;
    assert!(html.contains("<div class=\"table-wrap\"><table>"));
    assert!(html.contains("<th class=\"left\">a</th><th class=\"right\">b</th>"));
    assert!(
        html.contains("<li class=\"task\"><input type=\"checkbox\" disabled checked> done</li>"),
        "{html}"
    );
    assert!(html.contains("<sup class=\"footnote-ref\"><a href=\"#fn-1\" id=\"fnref-1\">1</a></sup>"));
    assert!(
        html.contains("<li id=\"fn-1\"><p>The note. <a class=\"footnote-back\" href=\"#fnref-1\""),
        "{html}"
    );
}

#[test]
fn code_keeps_its_language_and_highlights_only_when_asked() {
    let text = "```rust\nfn main() { let s = \"<x>\"; } // c\n```\n";
    let plain = export("a.md", text, &MapFiles::default()).html;
    assert!(plain.contains(
        "<pre><code class=\"language-rust\">fn main() { let s = \"&lt;x&gt;\"; } // c\n</code></pre>"
    ));
    let settings = Settings { highlight: true, ..Settings::default() };
    let lit = export_page(&doc("a.md", text), "a.html", &settings, &MapFiles::default()).html;
    assert!(lit.contains("<span class=\"hl-keyword\">fn</span> main"), "{lit}");
    assert!(lit.contains("<span class=\"hl-string\">\"&lt;x&gt;\"</span>"));
    assert!(lit.contains("<span class=\"hl-comment\">// c</span>"));
}

#[test]
fn the_title_comes_from_index_front_matter_h1_or_name() {
    let page = export("x/my-doc.md", "text only\n", &MapFiles::default());
    assert!(page.html.contains("<title>my-doc</title>"));
    let page = export("a.md", "---\ntitle: 前付け\n---\nbody\n", &MapFiles::default());
    assert!(
        page.html.contains("<title>前付け</title>") && page.html.contains("<h1>前付け</h1>"),
        "{}",
        page.html
    );
    assert!(!page.html.contains("title: 前付け"));
    let d = SiteDoc { index_title: Some("索引の題"), ..doc("a.md", "# 本文の題\n") };
    let page = export_page(&d, "a.html", &Settings::default(), &MapFiles::default());
    assert!(page.html.contains("<title>索引の題</title>") && !page.html.contains("<h1>索引の題"));
}

#[test]
fn the_toc_needs_two_headings_and_respects_depth_and_lang() {
    let one = export("a.md", "# T\n\n## Only\n", &MapFiles::default()).html;
    assert!(!one.contains("class=\"toc\""));
    let text = "# T\n\n## A\n\n### A1\n\n#### deep\n\n## B\n";
    let en = export("a.md", text, &MapFiles::default()).html;
    assert!(en.contains("<nav class=\"toc\" aria-label=\"Contents\">"));
    assert!(en.contains("<ul>\n<li><a href=\"#a\">A</a>\n<ul>\n<li><a href=\"#a1\">A1</a></li>\n</ul>\n</li>\n<li><a href=\"#b\">B</a></li>\n</ul>\n"), "{en}");
    assert!(!en.contains("<a href=\"#deep\">deep</a>"));
    let off = Settings { toc: false, ..Settings::default() };
    assert!(
        !export_page(&doc("a.md", text), "a.html", &off, &MapFiles::default()).html.contains("class=\"toc\"")
    );
    let ja = export("a.md", "# 題\n\n## あ\n\n## い\n", &MapFiles::default()).html;
    assert!(ja.contains("<nav class=\"toc\" aria-label=\"目次\">"));
}

#[test]
fn a_site_links_documents_to_articles() {
    let api = "# API リファレンス\n\n## ツールの一覧\n\n[en](api.en.md) [arch](../設計/arch.md#依存の向き) [self](#ツールの一覧)\n";
    let en = "# API reference\n\nSee [notes](../notes.md).\n";
    let files = MapFiles::default()
        .with("docs/notes.md", b"# notes\n")
        .with("docs/guide/api.md", api.as_bytes())
        .with("docs/guide/api.en.md", en.as_bytes());
    let docs = [
        SiteDoc {
            path: "docs/guide/api.en.md",
            text: en,
            index_title: Some("API reference (English)"),
            id: Some("api-en"),
        },
        SiteDoc {
            path: "docs/guide/api.md",
            text: api,
            index_title: Some("API リファレンス"),
            id: Some("api"),
        },
        doc("docs/設計/arch.md", ARCH),
    ];
    let settings = Settings::default();
    let page =
        build_site(&docs, "製品ガイド", "dist/guide.html", &settings, &files.with("images/arch.png", PNG));
    assert_eq!(
        page.warnings,
        vec![
            "docs/guide/api.en.md:3: link target `../notes.md` is not part of the build; add it to build.include or link elsewhere"
        ]
    );
    let html = &page.html;
    assert!(html.contains("<article id=\"api-en\">") && html.contains("<article id=\"api\">"));
    assert!(html.contains("<article id=\"docs--設計--arch\">"));
    assert!(html.contains("<h2 id=\"api--ツールの一覧\">"));
    assert!(html.contains("href=\"#api-en\"") && html.contains("href=\"#docs--設計--arch--依存の向き\""));
    assert!(html.contains("href=\"#api--ツールの一覧\""));
    assert!(html.contains("href=\"../docs/notes.md\""), "{html}");
    assert!(html.contains("<title>製品ガイド</title>"));
    let en_at = html.find(">API reference (English)</a>").expect("nav en");
    let ja_at = html.find(">API リファレンス</a>").expect("nav ja");
    assert!(en_at < ja_at);
}

#[test]
fn rooted_links_and_images_are_written_relative_to_the_output() {
    let files =
        MapFiles::default().with("docs/b.md", b"# B\n").with("img/p.png", PNG).with("files/x.pdf", b"%PDF");
    let text = "[b](/docs/b.md) [pdf](/files/x.pdf) [dir](/img/) ![p](/img/p.png) <https://example.com/a>\n";
    let page = export_page(&doc("guide/deep/a.md", text), "out/a.html", &Settings::default(), &files);
    assert!(page.warnings.is_empty(), "{:?}", page.warnings);
    for href in ["../docs/b.html", "../files/x.pdf", "../img", "https://example.com/a"] {
        assert!(page.html.contains(&format!("href=\"{href}\"")), "{href}: {}", page.html);
    }
    assert!(page.html.contains("<img src=\"data:image/png;base64,"));
}

#[test]
fn mdbook_html_links_lead_to_the_markdown_sibling() {
    let files = MapFiles::default().with("b.md", b"# B\n\n## Part\n");
    let page = export("a.md", "# A\n\n[b](b.html#part) [gone](c.html) [self](a.html#a)\n", &files);
    assert_eq!(
        page.warnings,
        vec!["a.md:3: link target `c.html` does not exist; fix the link or restore the file"]
    );
    assert!(page.html.contains("href=\"b.html#part\"") && page.html.contains("href=\"#a\""), "{}", page.html);
    let docs = [doc("a.md", "# A\n\n[b](b.html#part)\n"), doc("b.md", "# B\n\n## Part\n")];
    let site = build_site(&docs, "S", "out.html", &Settings::default(), &MapFiles::default());
    assert!(site.warnings.is_empty(), "{:?}", site.warnings);
    assert!(site.html.contains("href=\"#b--part\""));
}

#[test]
fn site_keys_are_unique() {
    let docs = [
        SiteDoc { id: Some("a"), ..doc("x.md", "x\n") },
        SiteDoc { id: Some("a"), ..doc("y.md", "y\n") },
        doc("dir/z.md", "z\n"),
    ];
    let html = build_site(&docs, "S", "out.html", &Settings::default(), &MapFiles::default()).html;
    assert!(html.contains("<article id=\"a\">") && html.contains("<article id=\"a-2\">"));
    assert!(html.contains("<article id=\"dir--z\">"));
}

#[test]
fn rendering_is_deterministic() {
    let files = f1_files();
    assert_eq!(export("docs/設計/arch.md", ARCH, &files), export("docs/設計/arch.md", ARCH, &files));
}

#[test]
fn urls_are_encoded_only_where_a_url_cannot_hold_the_character() {
    assert_eq!(text::encode_url("a b/ツール#見出し%zz%41"), "a%20b/ツール#見出し%25zz%41");
    assert_eq!(text::relative("docs/設計/arch.html", "docs/guide/api.html"), "../guide/api.html");
    assert_eq!(text::relative("out.html", "a/b.md"), "a/b.md");
    assert_eq!(text::relative("dist/x.html", "docs/notes.md"), "../docs/notes.md");
}

#[test]
fn entities_in_attributes_decode_and_never_split_a_character() {
    assert_eq!(sanitize::decode_entities("a&amp;b&#x3042;&#12354;&nope;&"), "a&bああ&nope;&");
    assert_eq!(sanitize::decode_entities("&日本語の長い文字列です"), "&日本語の長い文字列です");
}

#[test]
fn svg_and_avif_are_recognised_by_content() {
    assert_eq!(
        sniff_svg_or_avif("a.svg", b"<?xml version=\"1.0\"?><svg xmlns=\"\"/>"),
        Some("image/svg+xml")
    );
    assert_eq!(sniff_svg_or_avif("a.svg", b"not svg"), None);
    assert_eq!(sniff_svg_or_avif("a.avif", b"\0\0\0\x1cftypavif\0\0"), Some("image/avif"));
    assert_eq!(sniff_svg_or_avif("a.png", b"x"), None);
}

/// Every warning sentence comes from the message catalogue in both languages: each variant
/// names its subject in both, and the Japanese sentence is not the English one.
#[test]
fn warning_sentences_are_in_both_languages() {
    use super::text::Warning;
    let problems = [
        ImageProblem::Missing,
        ImageProblem::Outside,
        ImageProblem::Unsupported,
        ImageProblem::TooLarge,
        ImageProblem::Unreadable,
    ];
    let mut warnings = vec![
        Warning::MissingFile("a/目標.md"),
        Warning::MissingAnchor("b.md#見出し"),
        Warning::OutsideBuild("c.md"),
        Warning::RemoteImage("https://example.com/x.png"),
        Warning::RawHtml("<script>"),
    ];
    warnings.extend(problems.into_iter().map(|p| Warning::Image("img/図.png", p)));
    let mut seen = std::collections::HashSet::new();
    for w in &warnings {
        let (en, ja) = (w.sentence(Language::En), w.sentence(Language::Ja));
        assert_ne!(en, ja);
        assert!(!en.contains('{') && !ja.contains('{'), "{en} / {ja}");
        assert!(ja.chars().any(|c| ('\u{3040}'..='\u{30ff}').contains(&c)), "not Japanese: {ja}");
        let subject = en.split('`').nth(1).unwrap();
        assert!(ja.contains(subject), "{ja} does not name {subject}");
        assert!(seen.insert(ja), "two warnings share one Japanese sentence");
    }
}
