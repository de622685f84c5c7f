//! One Japanese document through both exports (`docs/design/markdown-model.md`, "Text rules"):
//! the PDF (`pdf`, read back with poppler's `pdftotext`) and the HTML (`export-html`) hold the
//! same text runs — a soft line break between Japanese characters joined with nothing, between
//! Latin words one space — and set `*強調*` the same way: upright, never slanted kanji. And the
//! PDF's body text is justified: every line of a paragraph but the last ends at the right edge
//! (`docs/design/pdf.md`, "Typesetting").

use std::path::Path;
use std::process::Command;

use crate::support::Project;

/// Soft breaks between kana/kanji, after 、, between Latin words; emphasis and strong.
const DOC: &str = "# 所有権とは\n\n\
所有権はRustの最もユニークな機能であり、言語全体に深い意味をもたらします。コストはかかるほど\n\
深い理由があり、プログラムが大きくなるにつれて、\n\
定期的にメモリを解放する必要が出てきます。*強調*した語と**所有権**の規則を\n\
覚えましょう。The borrow\n\
checker keeps every reference valid.\n";

fn poppler(tool: &str, args: &[&str], file: &Path) -> String {
    let out = Command::new(tool)
        .args(args)
        .arg(file)
        .arg("-")
        .output()
        .unwrap_or_else(|e| panic!("{tool} is missing ({e}); .ci/setup installs poppler-utils"));
    assert!(out.status.success(), "{tool} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn japanese(c: char) -> bool {
    matches!(c as u32, 0x3001..=0x303F | 0x3040..=0x30FF | 0x4E00..=0x9FFF | 0xFF01..=0xFF65)
}

/// Lines of extracted text joined as a reader reads them: nothing between Japanese characters,
/// one space elsewhere.
fn join(lines: &[&str]) -> String {
    let mut out = String::new();
    for line in lines.iter().map(|l| l.trim()).filter(|l| !l.is_empty()) {
        let joins = out.chars().last().is_some_and(japanese) || line.chars().next().is_some_and(japanese);
        if !out.is_empty() && !joins {
            out.push(' ');
        }
        out.push_str(line);
    }
    out
}

/// The text of the first `<p>` of an HTML page as a browser shows it (white space collapsed).
fn html_paragraph(html: &str) -> String {
    let start = html.find("<p>").expect("a paragraph") + 3;
    let end = start + html[start..].find("</p>").expect("end of paragraph");
    visible_text(&html[start..end], "").split_whitespace().collect::<Vec<_>>().join(" ")
}

/// An HTML fragment's text: every tag replaced by `tag_gap`, the three entities decoded.
fn visible_text(html: &str, tag_gap: &str) -> String {
    let mut text = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => {
                in_tag = true;
                text.push_str(tag_gap);
            }
            '>' => in_tag = false,
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    text.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
}

/// Whether any text in the PDF is drawn with a slanted text matrix.
fn slanted_text(file: &Path) -> Vec<String> {
    let doc = lopdf::Document::load(file).expect("the PDF loads");
    let mut found = Vec::new();
    for (n, id) in doc.get_pages() {
        let content = doc.get_and_decode_page_content(id).expect("page content");
        for op in content.operations.iter().filter(|op| op.operator == "Tm") {
            let shear = op.operands.get(2).and_then(|o| o.as_float().ok()).unwrap_or(0.0);
            if shear.abs() > 1e-3 {
                found.push(format!("page {n}: {:?}", op.operands));
            }
        }
    }
    found
}

#[test]
fn pdf_and_html_of_one_japanese_document_hold_the_same_text_runs_and_emphasis() {
    let project = Project::empty();
    project.write("doc.md", DOC);
    project.ok(&["pdf", "doc.md", "--style", "classic"]);
    project.ok(&["export-html", "doc.md"]);
    let html = std::fs::read_to_string(project.root().join("doc.html")).unwrap();
    let pdf = project.root().join("doc.pdf");

    let html_text = html_paragraph(&html);
    for joined in ["かかるほど深い", "につれて、定期的", "覚えましょう。The borrow checker keeps"]
    {
        assert!(html_text.contains(joined), "HTML: `{joined}` missing in {html_text}");
    }

    let text = poppler("pdftotext", &["-enc", "UTF-8"], &pdf);
    for line in text.lines() {
        let chars: Vec<char> = line.chars().collect();
        for w in chars.windows(3) {
            assert!(
                !(japanese(w[0]) && w[1] == ' ' && japanese(w[2])),
                "PDF: a space between Japanese characters in `{line}`"
            );
        }
    }
    let lines: Vec<&str> = text.lines().collect();
    let first =
        lines.iter().position(|l| l.trim().starts_with("所有権はRust")).expect("the paragraph in the PDF");
    let last = lines.iter().position(|l| l.contains("valid.")).expect("the paragraph's end in the PDF");
    let pdf_text = join(&lines[first..=last]);
    assert_eq!(pdf_text, html_text, "the PDF and the HTML differ in their text runs");

    // Emphasis: the HTML page is Japanese, so page.css sets `em` upright; the PDF draws no text
    // slanted.
    assert!(html.contains("<html lang=\"ja\">") && html.contains("<em>強調</em>"), "{html}");
    assert!(
        html.contains("html:lang(ja) em, em.ja { font-style: normal;"),
        "page.css sets Japanese emphasis upright"
    );
    assert_eq!(slanted_text(&pdf), Vec::<String>::new(), "slanted text in the PDF");
}

/// The number in attribute `name="…"` of a `pdftotext -bbox-layout` tag.
fn attr(tag: &str, name: &str) -> f64 {
    let at = tag.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
    tag[at..].split('"').next().unwrap().parse().unwrap()
}

/// `<line xMin=".." yMin=".." xMax=".." yMax="..">` elements and their words.
fn bbox_lines(xml: &str) -> Vec<(f64, f64, String)> {
    let mut out = Vec::new();
    for chunk in xml.split("<line ").skip(1) {
        let tag = chunk.split('>').next().unwrap();
        let body = chunk.split("</line>").next().unwrap();
        let words: Vec<&str> =
            body.split("<word ").skip(1).filter_map(|w| w.split('>').nth(1)?.split('<').next()).collect();
        out.push((attr(tag, "yMin"), attr(tag, "xMax"), words.concat()));
    }
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}

#[test]
fn non_final_lines_of_a_justified_paragraph_end_at_the_same_right_edge() {
    let project = Project::empty();
    let sentence = "日本語の本文は文字の格子に沿って両端揃えで組みます。英単語（configuration や \
                    synchronization）と数字 2026 が混じる行も、右端をそろえます。「括弧」（注記）のような\
                    約物が続くところは半角に詰めます。";
    project.write("doc.md", &format!("{}\n", sentence.repeat(4)));
    for style in ["classic", "modern"] {
        project.ok(&["pdf", "doc.md", "--style", style, "--out", "doc.pdf"]);
        let xml = poppler("pdftotext", &["-bbox-layout", "-enc", "UTF-8"], &project.root().join("doc.pdf"));
        let lines: Vec<(f64, f64, String)> = bbox_lines(&xml)
            .into_iter()
            .filter(|(_, _, t)| !t.chars().all(|c| c.is_ascii_digit() || "—/ ".contains(c)))
            .collect();
        assert!(lines.len() >= 6, "{style}: the paragraph should take several lines: {lines:?}");
        let body = &lines[..lines.len() - 1];
        let edge =
            body.iter().filter(|(_, _, t)| !t.ends_with(['、', '。'])).map(|l| l.1).fold(f64::MIN, f64::max);
        for (_, x_max, text) in body {
            if text.ends_with(['、', '。']) {
                // A comma or full stop may hang into the margin (ぶら下げ).
                assert!(*x_max >= edge - 1.0, "{style}: `{text}` ends at {x_max}, the edge is {edge}");
            } else {
                assert!((x_max - edge).abs() <= 1.0, "{style}: `{text}` ends at {x_max}, the edge is {edge}");
            }
        }
    }
}

/// A footnote, an alert, a `{#id}` heading, a task list and a Japanese soft break.
const STRUCTURE: &str = "# 公開モデル\n\n\
## 設計 {#design}\n\n\
所有権はかかるほど\n\
深い理由があります[^1]。詳しくは[設計](#design)を見ます。\n\n\
> [!NOTE]\n\
> 注意して読むこと。\n\n\
- [x] 済んだ仕事\n\
- [ ] 残りの仕事\n\n\
最後の段落です。\n\n\
[^1]: 脚注の本文です。\n";

/// The text of an HTML page's `<article>` as a browser shows it: tags dropped, white space
/// collapsed to one space, then every space between Japanese characters dropped (as `join`
/// reads the PDF's lines).
fn html_article_text(html: &str) -> String {
    let start = html.find("<article").expect("an article");
    let end = html.rfind("</article>").expect("the article's end");
    let text = visible_text(&html[start..end], " ");
    join(&text.split_whitespace().collect::<Vec<_>>())
}

#[test]
fn pdf_and_html_show_footnotes_alerts_heading_ids_and_tasks_as_the_same_structure() {
    let project = Project::empty();
    project.write("doc.md", STRUCTURE);
    project.ok(&["pdf", "doc.md", "--style", "classic"]);
    project.ok(&["export-html", "doc.md"]);
    let html = std::fs::read_to_string(project.root().join("doc.html")).unwrap();
    let pdf = project.root().join("doc.pdf");
    let pdf_lines = poppler("pdftotext", &["-enc", "UTF-8"], &pdf);
    let pdf_text = join(&pdf_lines.lines().collect::<Vec<_>>());
    let html_text = html_article_text(&html);

    // The same landmarks in the same order: the heading without its `{#id}`, the paragraph with
    // its soft break joined, the alert's title (Japanese: the document is) over its body, the
    // task items, and the footnote's body after the last paragraph.
    let landmarks = [
        "設計",
        "所有権はかかるほど深い理由があります",
        "注記",
        "注意して読むこと。",
        "済んだ仕事",
        "残りの仕事",
        "最後の段落です。",
        "脚注の本文です。",
    ];
    for (name, text) in [("HTML", &html_text), ("PDF", &pdf_text)] {
        let mut at = 0;
        for landmark in landmarks {
            let found = text[at..].find(landmark).map(|i| at + i);
            let Some(found) = found else {
                panic!("{name}: `{landmark}` missing or out of order in {text}");
            };
            at = found + landmark.len();
        }
        for literal in ["[^1]", "{#design}", "{#", "[!NOTE]", "[ ]", "[x]"] {
            assert!(!text.contains(literal), "{name}: literal `{literal}` in {text}");
        }
    }

    // The HTML's structure: the heading's id, the alert box, two checkboxes, the footnote list.
    for needle in [
        "<h2 id=\"design\">",
        "<blockquote class=\"alert alert-note\">\n<p class=\"alert-title\">注記</p>",
        "<input type=\"checkbox\" disabled checked> 済んだ仕事",
        "<input type=\"checkbox\" disabled> 残りの仕事",
        "<section class=\"footnotes\"",
        "<a href=\"#design\">設計</a>",
    ] {
        assert!(html.contains(needle), "HTML: `{needle}` missing in {html}");
    }

    // The PDF's: the footnote number raised above the line (its own, smaller text run), the
    // notes after the body, and the `#design` link leading to the heading.
    let doc = lopdf::Document::load(&pdf).expect("the PDF loads");
    let mut internal_links = 0;
    for (_, page) in doc.get_pages() {
        let Ok(dict) = doc.get_dictionary(page) else { continue };
        let Ok(annots) = dict.get(b"Annots").and_then(|a| a.as_array()) else { continue };
        for annot in annots {
            let annot = match annot {
                lopdf::Object::Reference(id) => doc.get_dictionary(*id).ok(),
                lopdf::Object::Dictionary(d) => Some(d),
                _ => None,
            };
            if annot.is_some_and(|a| a.get(b"Dest").is_ok()) {
                internal_links += 1;
            }
        }
    }
    assert_eq!(internal_links, 1, "the `#design` link is a link to the heading");
    let xml = poppler("pdftotext", &["-bbox-layout", "-enc", "UTF-8"], &pdf);
    let marker =
        bbox_words(&xml).into_iter().find(|(_, _, w)| w == "1").expect("the footnote number in the PDF");
    let body = bbox_words(&xml)
        .into_iter()
        .find(|(_, _, w)| w.starts_with("所有権は"))
        .expect("the paragraph in the PDF");
    assert!(marker.1 < body.1, "the footnote number is smaller than the text: {marker:?} vs {body:?}");
}

/// Every `<word>` of `pdftotext -bbox-layout`: its top, its height and its text.
fn bbox_words(xml: &str) -> Vec<(f64, f64, String)> {
    xml.split("<word ")
        .skip(1)
        .map(|chunk| {
            let tag = chunk.split('>').next().unwrap();
            let text = chunk.split('>').nth(1).unwrap_or("").split('<').next().unwrap_or("").to_owned();
            let (y_min, y_max) = (attr(tag, "yMin"), attr(tag, "yMax"));
            (y_min, y_max - y_min, text)
        })
        .collect()
}
