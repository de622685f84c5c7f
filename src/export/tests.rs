//! Unit tests of the export: Markdown to blocks, kinsoku line breaking, the layout's promises.

use super::blocks::{Block, Span, parse, plain};
use super::layout::{Draw, Face, Metrics, lay_out};
use super::linebreak::{Mode, Piece, break_lines, no_end, no_start};
use super::style::{PageFormat, Profile, Style, StyleName};

/// Every CJK character 1 em, everything else half.
struct Fixed;

impl Metrics for Fixed {
    fn advance(&self, face: Face, ch: char) -> Option<f32> {
        if ch == '😀' {
            return None;
        }
        Some(match face {
            Face::Mono => 0.6,
            _ if super::linebreak::is_cjk(ch) => 1.0,
            _ => 0.5,
        })
    }
}

fn pieces(text: &str) -> Vec<Piece> {
    text.chars()
        .map(|ch| Piece { ch, width: if super::linebreak::is_cjk(ch) { 10.0 } else { 5.0 } })
        .collect()
}

fn lines(text: &str, max: f32, mode: Mode) -> Vec<String> {
    let p = pieces(text);
    break_lines(&p, max, mode).into_iter().map(|r| p[r].iter().map(|p| p.ch).collect()).collect()
}

#[test]
fn japanese_breaks_between_characters_without_spaces() {
    assert_eq!(lines("東京都に住んでいる人", 50.0, Mode::Prose), ["東京都に住", "んでいる人"]);
}

#[test]
fn no_line_starts_with_closing_punctuation_or_ends_with_an_opening_one() {
    // 。 would start line 2: it hangs in the margin instead (ぶら下げ).
    assert_eq!(lines("あいうえお。かきくけこ", 50.0, Mode::Prose), ["あいうえお。", "かきくけこ"]);
    // 」 may not start a line and does not hang: the character before it moves down with it.
    assert_eq!(lines("あいうえ「お」かきくけこ", 50.0, Mode::Prose), ["あいうえ", "「お」かき", "くけこ"]);
    // 「 may not end a line.
    assert_eq!(lines("あいうえ「おか", 50.0, Mode::Prose), ["あいうえ", "「おか"]);
    // Small kana and the long vowel mark stay with what precedes them.
    assert_eq!(lines("あいうえおっと", 50.0, Mode::Prose), ["あいうえ", "おっと"]);
    assert_eq!(lines("あいうえサーバ", 50.0, Mode::Prose), ["あいうえ", "サーバ"]);
    for text in [
        "これは、テストです。とても長い文章、句読点、括弧（かっこ）「かぎ」『二重』を含みます。",
        "「はい。」と、彼は言った。",
    ] {
        for max in [30.0, 40.0, 50.0, 70.0, 90.0] {
            let got = lines(text, max, Mode::Prose);
            for (i, line) in got.iter().enumerate() {
                let first = line.chars().next().unwrap_or(' ');
                let last = line.chars().last().unwrap_or(' ');
                assert!(i == 0 || !no_start(first), "{max}: {got:?}");
                assert!(!no_end(last), "{max}: {got:?}");
            }
            assert_eq!(got.concat(), text, "{max}: nothing lost");
        }
    }
}

#[test]
fn latin_words_stay_whole_and_long_urls_wrap() {
    assert_eq!(lines("hello world 日本語", 40.0, Mode::Prose), ["hello", "world 日", "本語"]);
    let url = "https://example.com/a/very/long/path/name";
    let got = lines(url, 60.0, Mode::Prose);
    assert!(got.len() > 1, "{got:?}");
    assert_eq!(got.concat(), url);
    assert!(got.iter().all(|l| l.chars().count() <= 12), "{got:?}");
}

#[test]
fn code_wraps_at_the_edge_and_keeps_spaces() {
    assert_eq!(lines("    let x = 1;", 30.0, Mode::Code), ["    le", "t x = ", "1;"]);
    assert_eq!(lines("a\nb", 30.0, Mode::Code), ["a", "b"]);
    assert_eq!(lines("", 30.0, Mode::Code), [""]);
}

#[test]
fn markdown_becomes_blocks() {
    let book = parse(
        "---\ntitle: \"本のタイトル\"\n---\n# 見出し\n\n本文は**太字**と`code`と[リンク](https://example.com)。\n\n- [ ] やること\n- [x] 済み\n  1. 入れ子\n\n> 引用\n\n```rust\nfn main() {}\n```\n\n| a | b |\n|:-|-:|\n| 1 | 2 |\n\n---\n\n![図](img/a.png)\n",
    );
    assert_eq!(book.title.as_deref(), Some("本のタイトル"));
    let kinds: Vec<&str> = book
        .blocks
        .iter()
        .map(|b| match b {
            Block::Heading { .. } => "h",
            Block::Paragraph(_) => "p",
            Block::List { .. } => "list",
            Block::Quote(_) => "quote",
            Block::Alert { .. } => "alert",
            Block::Footnotes(_) => "notes",
            Block::Code { .. } => "code",
            Block::Table { .. } => "table",
            Block::Rule => "rule",
            Block::Image { .. } => "img",
        })
        .collect();
    assert_eq!(kinds, ["h", "p", "list", "quote", "code", "table", "rule", "img"]);
    let Block::Paragraph(spans) = &book.blocks[1] else { unreachable!() };
    assert_eq!(plain(spans), "本文は太字とcodeとリンク。");
    assert!(spans.iter().any(|s| s.bold && s.text == "太字"));
    assert!(spans.iter().any(|s| s.code && s.text == "code"));
    assert!(spans.iter().any(|s| s.link.as_deref() == Some("https://example.com")));
    let Block::List { start: None, items } = &book.blocks[2] else { unreachable!() };
    assert_eq!(items[0].task, Some(false));
    assert_eq!(items[1].task, Some(true));
    assert!(matches!(items[1].blocks[1], Block::List { start: Some(1), .. }));
    assert_eq!(book.blocks[7], Block::Image { src: "img/a.png".into(), alt: "図".into() });
}

fn text_of(pages: &[Vec<Draw>]) -> String {
    let mut out = String::new();
    for page in pages {
        for d in page {
            if let Draw::Text { text, .. } = d {
                out.push_str(text);
            }
        }
    }
    out
}

#[test]
fn the_layout_draws_every_character_and_splits_long_code_and_tables_across_pages() {
    let mut md = String::from("# 題\n\n");
    md.push_str(&"長い段落の文章です。".repeat(80));
    md.push_str("\n\n```\n");
    for i in 0..120 {
        md.push_str(&format!("line {i}\n"));
    }
    md.push_str("```\n\n| 列A | 列B |\n|---|---|\n");
    for i in 0..80 {
        md.push_str(&format!("| セル{i} | 値{i} |\n"));
    }
    let book = parse(&md);
    let style = Style::new(StyleName::Compact, PageFormat::A6);
    let page = (105.0 * super::style::PT_PER_MM, 148.0 * super::style::PT_PER_MM);
    let laid = lay_out(&book, &style, page, &Fixed, &mut |_| Err("none".into()), false);
    assert!(laid.pages.len() > 5, "{}", laid.pages.len());
    let all = text_of(&laid.pages);
    let squeezed: String = all.chars().filter(|c| !c.is_whitespace()).collect();
    assert!(squeezed.contains(&"長い段落の文章です。".repeat(80)), "the paragraph is whole and in order");
    for i in 0..120 {
        assert!(all.contains(&format!("line {i}")), "code line {i}");
    }
    for i in 0..80 {
        assert!(all.contains(&format!("セル{i}")), "row {i}");
    }
    // Every page the table continues on repeats the header.
    let table_pages = laid.pages.iter().filter(|p| text_of(std::slice::from_ref(p)).contains("セル")).count();
    let header_pages = laid.pages.iter().filter(|p| text_of(std::slice::from_ref(p)).contains("列A")).count();
    assert!(table_pages > 1 && header_pages == table_pages, "{table_pages} {header_pages}");
    // Nothing is drawn outside the page.
    for page_ops in &laid.pages {
        for d in page_ops {
            if let Draw::Text { y, .. } = d {
                assert!(*y > 0.0 && *y < page.1, "{d:?}");
            }
        }
    }
    assert_eq!(laid.outline.len(), 1);
}

#[test]
fn missing_glyphs_become_geta_with_one_warning() {
    let book = parse("絵文字😀と😀");
    let style = Style::new(StyleName::Compact, PageFormat::A5);
    let laid = lay_out(&book, &style, (400.0, 600.0), &Fixed, &mut |_| Err("none".into()), false);
    assert!(text_of(&laid.pages).contains("絵文字〓と〓"));
    assert_eq!(laid.warnings.len(), 1, "{:?}", laid.warnings);
}

#[test]
fn a_missing_image_is_a_placeholder_box_with_its_name() {
    let book = parse("![図1](img/none.png)");
    let style = Style::new(StyleName::Compact, PageFormat::A5);
    let laid = lay_out(&book, &style, (400.0, 600.0), &Fixed, &mut |_| Err("not found".into()), false);
    let text = text_of(&laid.pages);
    assert!(text.contains("img/none.png") && text.contains("not found"), "{text}");
    assert!(laid.pages[0].iter().any(|d| matches!(d, Draw::Rect { stroke: Some(_), .. })));
}

#[test]
fn options_parse_case_insensitively_with_defaults() {
    assert_eq!(PageFormat::parse(None).unwrap(), PageFormat::A5);
    assert_eq!(PageFormat::parse(Some("B5")).unwrap(), PageFormat::B5);
    assert_eq!(StyleName::parse(None).unwrap(), StyleName::Compact);
    assert_eq!(Profile::parse(Some("print")).unwrap(), Profile::Print);
    let e = StyleName::parse(Some("fancy")).unwrap_err();
    assert_eq!(e.code, crate::error::ErrorCode::InvalidArgument);
    assert!(e.message.contains("compact, classic, modern, technical, academic"), "{}", e.message);
}

#[test]
fn spans_merge_only_with_the_same_look() {
    let book = parse("a *b* c");
    let Block::Paragraph(spans) = &book.blocks[0] else { unreachable!() };
    assert_eq!(spans.len(), 3);
    assert_eq!(spans[1], Span { text: "b".into(), italic: true, ..Span::default() });
}

#[test]
fn html_is_shown_as_a_browser_would_comments_hidden_tags_dropped() {
    let book = parse(
        "<!--\n## English original\n-->\n\n## 日本語\n\n<span class=\"caption\">表B-1: 演算子</span>\n\n<img src=\"img/a.svg\" alt=\"図\" />\n\n本文<!-- note -->です。\n",
    );
    assert_eq!(book.blocks.len(), 4, "{:?}", book.blocks);
    assert!(matches!(&book.blocks[0], Block::Heading { level: 2, .. }));
    assert_eq!(
        book.blocks[1],
        Block::Paragraph(vec![Span { text: "表B-1: 演算子".into(), ..Span::default() }])
    );
    assert_eq!(book.blocks[2], Block::Image { src: "img/a.svg".into(), alt: "図".into() });
    let Block::Paragraph(spans) = &book.blocks[3] else { unreachable!() };
    assert_eq!(plain(spans), "本文です。");
}

#[test]
fn footnotes_alerts_heading_ids_and_tasks_become_blocks_not_text() {
    let book = parse(
        "## 設計 {#design}\n\n本文[^n]です。\n\n> [!WARNING]\n> 気をつける。\n\n- [x] 済み\n\n[^n]: 脚注。\n",
    );
    let Block::Heading { level: 2, id, spans } = &book.blocks[0] else { panic!("{:?}", book.blocks[0]) };
    assert_eq!((id.as_deref(), plain(spans).as_str()), (Some("design"), "設計"));
    let Block::Paragraph(spans) = &book.blocks[1] else { panic!("{:?}", book.blocks[1]) };
    assert_eq!(plain(spans), "本文1です。");
    assert!(spans.iter().any(|s| s.note && s.text == "1"), "{spans:?}");
    let Block::Alert { title, blocks, .. } = &book.blocks[2] else { panic!("{:?}", book.blocks[2]) };
    // A Japanese document: the HTML's Japanese title.
    assert_eq!(title, "警告");
    assert_eq!(blocks, &[Block::Paragraph(vec![Span { text: "気をつける。".into(), ..Span::default() }])]);
    let Block::List { items, .. } = &book.blocks[3] else { panic!("{:?}", book.blocks[3]) };
    assert_eq!(items[0].task, Some(true));
    let Block::Footnotes(notes) = &book.blocks[4] else { panic!("{:?}", book.blocks[4]) };
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0].number, 1);
    assert_eq!(notes[0].blocks, [Block::Paragraph(vec![Span { text: "脚注。".into(), ..Span::default() }])]);
    assert_eq!(book.blocks.len(), 5);
}
