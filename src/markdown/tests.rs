//! Contract vectors for the Markdown model (`tests/vectors/`), loaded, not re-typed.

use serde_json::Value;

use super::*;
use crate::text::{segments_bytes, segments_hash_hex, xxh64_hex};

use crate::testdata::vectors;

fn s(v: &Value) -> &str {
    v.as_str().expect("string")
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array().map(|a| a.iter().map(|x| s(x).to_owned()).collect()).unwrap_or_default()
}

#[test]
fn xxh64_reference_table() {
    let v = vectors("hashes.json");
    for case in v["xxh64"].as_array().unwrap() {
        assert_eq!(xxh64_hex(s(&case["input"]).as_bytes()), s(&case["xxh64"]), "{case}");
    }
}

#[test]
fn list_item_segment_hashes() {
    let v = vectors("hashes.json");
    for case in v["segments"].as_array().unwrap() {
        let segs = strs(&case["segments"]);
        let refs: Vec<&str> = segs.iter().map(String::as_str).collect();
        assert_eq!(segments_hash_hex(&refs), s(&case["xxh64"]), "{case}");
        if let Some(hex) = case["bytesHex"].as_str() {
            let got: String = segments_bytes(&refs).iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(got, hex);
        }
    }
}

#[test]
fn sha256_source_hash() {
    let v = vectors("hashes.json");
    for case in v["sha256"].as_array().unwrap() {
        assert_eq!(crate::text::sha256_hex(s(&case["input"]).as_bytes()), s(&case["sha256"]));
    }
}

#[test]
fn worked_examples_elements_and_anchors() {
    let v = vectors("hashes.json");
    for ex in v["workedExamples"].as_array().unwrap() {
        let source = s(&ex["source"]);
        let doc = Document::parse(source);
        for want in ex["elements"].as_array().unwrap() {
            let p = LogicalPointer::parse(s(&want["pointer"])).unwrap();
            let got = doc.get(&p).unwrap_or_else(|| panic!("{} missing in {source:?}", p));
            assert_eq!(got.kind.as_wire(), s(&want["kind"]), "{p}");
            assert_eq!(got.text, s(&want["text"]), "{p}");
            assert_eq!(got.self_hash, s(&want["selfHash"]), "{p} self");
            assert_eq!(got.subtree_hash, s(&want["subtreeHash"]), "{p} subtree");
            if let Some(r) = want["subtreeRange"].as_str() {
                assert_eq!(&source[got.subtree_range.clone()], r, "{p} subtree range");
            }
            if let Some(r) = want["range"].as_str() {
                assert_eq!(&source[got.range.clone()], r, "{p} range");
            }
            if let Some(hp) = want["headingPath"].as_str() {
                assert_eq!(got.heading_path.as_deref(), Some(hp));
            }
            if let Some(segs) = want["ownSegments"].as_array() {
                let info = got.list.as_ref().unwrap();
                let own: Vec<&str> = info.own_segments.iter().map(|r| &source[r.clone()]).collect();
                assert_eq!(own, segs.iter().map(s).collect::<Vec<_>>());
            }
        }
        if let Some(anchors) = ex["anchors"].as_array() {
            let got: Vec<String> = doc.elements.iter().map(Element::anchor).collect();
            assert_eq!(got, anchors.iter().map(|a| s(a).to_owned()).collect::<Vec<_>>());
        }
    }
}

#[test]
fn pointer_grammar_valid_invalid_and_classification() {
    let v = vectors("pointers.json");
    for p in strs(&v["valid"]) {
        assert!(LogicalPointer::parse(&p).is_ok(), "{p} should be valid");
    }
    for p in strs(&v["invalid"]) {
        assert!(LogicalPointer::parse(&p).is_err(), "{p:?} should be invalid");
    }
    for c in v["classification"].as_array().unwrap() {
        let p = LogicalPointer::parse(s(&c["pointer"])).unwrap();
        assert_eq!(p.kind().as_wire(), s(&c["kind"]), "{p}");
        if p.kind() != ElementKind::Heading {
            assert_eq!(p.section().as_deref(), c["section"].as_str(), "{p} section");
        }
        if let Some(parent) = c["parentListItem"].as_str() {
            assert_eq!(p.parent_list_item().unwrap().as_str(), parent);
        }
    }
}

#[test]
fn pointer_documents_numbering_and_reserved() {
    let v = vectors("pointers.json");
    for d in v["documents"].as_array().unwrap() {
        let source = s(&d["source"]);
        let doc = Document::parse(source);
        let name = s(&d["name"]);
        if d["pointers"].is_array() {
            let got: Vec<&str> = doc.elements.iter().map(|e| e.pointer.as_str()).collect();
            assert_eq!(got, strs(&d["pointers"]), "{name}");
        }
        if d["headingPointers"].is_array() {
            let got: Vec<&str> = doc
                .elements
                .iter()
                .filter(|e| e.kind == ElementKind::Heading)
                .map(|e| e.pointer.as_str())
                .collect();
            assert_eq!(got, strs(&d["headingPointers"]), "{name}");
        }
        let reserved: Vec<&str> = doc.reserved.iter().map(String::as_str).collect();
        let has_items = doc.elements.iter().any(|e| e.kind == ElementKind::ListItem);
        if has_items && strs(&d["reserved"]).is_empty() {
            // Two list documents in pointers.json say `reserved: []`, which contradicts §5.3
            // rule 7 (a list item's paragraph consumes and reserves a `p` ordinal, exactly as in
            // the `First.\n\n- Inside\n\nSecond.\n` example of the same file). The rule wins;
            // see docs/design/markdown-model.md.
            let paragraphs = reserved.iter().all(|p| p.rsplit('.').next().unwrap().starts_with('p'));
            assert!(paragraphs && reserved.len() == doc.elements.len(), "{name}: {reserved:?}");
        } else {
            assert_eq!(reserved, strs(&d["reserved"]), "{name} reserved");
        }
        for want in d["elements"].as_array().into_iter().flatten() {
            let got = doc.get(&LogicalPointer::parse(s(&want["pointer"])).unwrap()).unwrap();
            assert_eq!(got.kind.as_wire(), s(&want["kind"]));
            assert_eq!(got.text, s(&want["text"]));
            if let Some(r) = want["range"].as_str() {
                assert_eq!(&source[got.range.clone()], r);
            }
        }
    }
    for t in v["headingTitles"].as_array().unwrap() {
        assert_eq!(parse::heading_title(s(&t["text"])), s(&t["title"]));
    }
}

#[test]
fn anchors_parse_and_normalise() {
    let v = vectors("anchors.json");
    for c in v["valid"].as_array().unwrap() {
        let a = Anchor::parse(s(&c["anchor"])).unwrap_or_else(|e| panic!("{c}: {e}"));
        assert_eq!(a.pointer.as_str(), s(&c["logical"]));
        assert_eq!(a.self_hash.as_deref(), c["selfHash"].as_str());
        assert_eq!(a.subtree_hash.as_deref(), c["subtreeHash"].as_str());
        if let Some(n) = c["normalized"].as_str() {
            assert_eq!(a.to_string(), n);
        }
    }
    for c in v["invalid"].as_array().unwrap() {
        let err = Anchor::parse(s(&c["anchor"])).expect_err(s(&c["anchor"]));
        assert_eq!(err.code.as_str(), s(&c["code"]));
        if let Some(msg) = c["error"].as_str() {
            assert_eq!(err.message, msg);
        }
        if let Some(prefix) = c["errorPrefix"].as_str() {
            assert!(err.message.starts_with(prefix), "{}", err.message);
        }
    }
}

#[test]
fn relocation_cases_resolve_like_the_original() {
    let v = vectors("relocation.json");
    let reasons = &v["reasonMessages"];
    for c in v["cases"].as_array().unwrap() {
        let name = s(&c["name"]);
        let original = Document::parse(s(&c["originalSource"]));
        let anchor_text = s(&c["anchor"]);
        // The anchor in the vector is what a read of the original source returned.
        if c["anchorForm"].as_str() != Some("v1")
            && let Some(e) = original.get(&LogicalPointer::parse(s(&c["anchorPointer"])).unwrap())
        {
            assert_eq!(e.anchor(), anchor_text, "{name}: anchor of original");
        }
        let changed = Document::parse(s(&c["changedSource"]));
        let anchor = Anchor::parse(anchor_text).unwrap();
        let op = s(&c["operation"]["kind"]);
        let reserved_msg = if op == "read" {
            s(&reasons["reservedPointerRead"])
        } else {
            s(&reasons["reservedPointerPatch"])
        };
        let got = changed.resolve(&anchor, reserved_msg);
        let expect = &c["expect"];
        match (expect["resolvedPointer"].as_str(), expect["conflict"].as_str()) {
            (Some(p), _) => {
                let idx = got.unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(changed.elements[idx].pointer.as_str(), p, "{name}");
            }
            // Subtree checks belong to the patch scopes, after resolution succeeded.
            (None, Some("SubtreeHashMismatch" | "MissingSubtreeHash")) => {
                assert!(got.is_ok(), "{name}: resolution itself succeeds");
            }
            (None, Some(reason)) => {
                let err = got.expect_err(name);
                assert_eq!(err.code.as_str(), "CONFLICT");
                assert_eq!(err.conflict.map(|r| r.as_str()), Some(reason), "{name}");
                let msg = expect["message"].as_str().unwrap_or_else(|| s(&reasons[reason]));
                assert_eq!(err.message, msg, "{name}");
            }
            _ => panic!("{name}: unknown expectation"),
        }
    }
}

#[test]
fn list_item_source_maps() {
    let src = "- Parent\n\n  - Child\n\n  Own paragraph after the child.";
    let doc = Document::parse(src);
    let parent = &doc.elements[0];
    let own: Vec<&str> = parent.list.as_ref().unwrap().own_segments.iter().map(|r| &src[r.clone()]).collect();
    assert_eq!(own, ["- Parent\n", "\n  Own paragraph after the child."]);
    assert_eq!(parent.self_hash, "e6a9e61851bac521");
    assert_eq!(parent.range, 0..src.len());
    let info = parent.list.as_ref().unwrap();
    assert_eq!((info.depth, info.indent, info.marker_style.as_str()), (0, 0, "-"));
    let child = &doc.elements[1];
    assert_eq!(child.pointer.as_str(), "li1.li1");
    assert_eq!(child.list.as_ref().unwrap().parent.as_ref().unwrap().as_str(), "li1");
    assert_eq!(child.list.as_ref().unwrap().depth, 1);
    assert_eq!(child.list.as_ref().unwrap().indent, 2);

    let ordered = Document::parse("1. one\n2) two\n");
    assert_eq!(ordered.elements[0].list.as_ref().unwrap().marker_style, "ordered:.");
    let crlf = "- a\r\n- b\r\n";
    let d = Document::parse(crlf);
    assert_eq!(d.elements[0].text, "- a");
    assert_eq!(d.elements[0].list.as_ref().unwrap().delete_range, 0..5);
}

#[test]
fn list_parent_self_hash_ignores_children() {
    let a = Document::parse("- Parent\n  - Child\n");
    let b = Document::parse("- Parent\n  - Changed child\n  - Another\n");
    let c = Document::parse("- Parent\n");
    assert_eq!(a.elements[0].self_hash, b.elements[0].self_hash);
    assert_eq!(a.elements[0].self_hash, c.elements[0].self_hash);
    assert_ne!(a.elements[0].subtree_hash, b.elements[0].subtree_hash);
    assert_eq!(c.elements[0].self_hash, c.elements[0].subtree_hash);
}

#[test]
fn heading_subtree_changes_with_descendants_and_comments_only() {
    let a = Document::parse("# A\n\nText.\n\n<!-- c1 -->\n\n## B\n\nMore.\n");
    let b = Document::parse("# A\n\nText.\n\n<!-- c2 -->\n\n## B\n\nMore!\n");
    assert_eq!(a.elements[0].self_hash, b.elements[0].self_hash);
    assert_ne!(a.elements[0].subtree_hash, b.elements[0].subtree_hash);
    // `## B` changed only in its body.
    assert_eq!(a.elements[2].self_hash, b.elements[2].self_hash);
    assert_ne!(a.elements[2].subtree_hash, b.elements[2].subtree_hash);
}

#[test]
fn quotes_are_opaque_and_consume_inner_paragraph_ordinals() {
    let src = "Intro.\n\n> # Not a heading\n> quoted\n>\n> - not an item\n\nAfter.\n";
    let doc = Document::parse(src);
    let got: Vec<&str> = doc.elements.iter().map(|e| e.pointer.as_str()).collect();
    // `quoted` and the tight item's `not an item` are Markdig paragraphs inside the quote.
    assert_eq!(got, ["p1", "q1", "p4"]);
    assert_eq!(doc.elements[1].text, "> # Not a heading\n> quoted\n>\n> - not an item");
    assert_eq!(doc.reserved.iter().collect::<Vec<_>>(), ["p2", "p3"]);
}

#[test]
fn japanese_headings_lists_tables_with_crlf_and_front_matter() {
    let src = "---\r\ntitle: 設計メモ\r\n---\r\n# 概要\r\n\r\n本文の段落。\r\n\r\n## 手順\r\n\r\n1. インストール\r\n   - 依存関係\r\n2. 設定\r\n\r\n| 項目 | 値 |\r\n|---|---|\r\n| 言語 | 日本語 |\r\n";
    let doc = Document::parse(src);
    let got: Vec<(&str, &str)> = doc.elements.iter().map(|e| (e.pointer.as_str(), e.text.as_str())).collect();
    assert_eq!(
        got,
        [
            ("frontmatter", "---\r\ntitle: 設計メモ\r\n---"),
            ("1", "# 概要"),
            ("1.p1", "本文の段落。"),
            ("1.1", "## 手順"),
            ("1.1.li1", "1. インストール"),
            ("1.1.li1.li1", "   - 依存関係"),
            ("1.1.li2", "2. 設定"),
            ("1.1.t1", "| 項目 | 値 |\r\n|---|---|\r\n| 言語 | 日本語 |"),
        ]
    );
    assert_eq!(doc.elements[3].heading_path.as_deref(), Some("概要 > 手順"));
    assert_eq!(doc.elements[4].heading_path.as_deref(), Some("概要 > 手順"));
    assert_eq!(doc.elements[0].section, "frontmatter");
    assert_eq!(doc.elements[0].heading_path, None);
    assert_eq!(doc.elements[7].start_line, 14);
    assert_eq!(doc.elements[7].end_line, 16);
}

#[test]
fn outline_tree_uses_levels() {
    let src = "# A\n\n### X ###\n\n## Y\n\n#### Z\n\nSetext\n------\n";
    let doc = Document::parse(src);
    let tree = outline(&doc, src);
    assert_eq!(tree.len(), 1);
    let a = &tree[0];
    assert_eq!(a.title, "A");
    let titles: Vec<&str> = a.children.iter().map(|c| c.title.as_str()).collect();
    assert_eq!(titles, ["X", "Y", "Setext"]);
    assert_eq!(a.children[1].children[0].title, "Z");
    assert!(a.pointer.starts_with("1~"));
}

#[test]
fn cr_only_line_endings_give_lines_titles_and_spans_like_lf() {
    // A file saved with classic Mac line endings: pulldown-cmark (CommonMark) sees the lines, and
    // so must our line numbers, heading titles and spans.
    let lf = "intro\n# Title\ntext one\n\n- a\n  - b\n- c\n";
    let cr = lf.replace('\n', "\r");
    let (dl, dc) = (Document::parse(lf), Document::parse(&cr));
    let view = |d: &Document| -> Vec<(String, usize, usize, std::ops::Range<usize>)> {
        d.elements
            .iter()
            .map(|e| (e.pointer.to_string(), e.start_line, e.end_line, e.range.clone()))
            .collect()
    };
    assert_eq!(view(&dc), view(&dl));
    assert_eq!(outline(&dc, &cr)[0].title, "Title");
    let texts: Vec<&str> = dc.elements.iter().map(|e| e.text.as_str()).collect();
    assert!(texts.contains(&"# Title") && texts.contains(&"text one"), "{texts:?}");
}

#[test]
fn list_items_nested_past_the_depth_limit_belong_to_their_ancestor() {
    let depth = super::parse::MAX_ITEM_DEPTH as usize;
    let src = format!("{}deep\n", "- ".repeat(10_000));
    let doc = Document::parse(&src);
    let items: Vec<&Element> = doc.elements.iter().filter(|e| e.kind == ElementKind::ListItem).collect();
    assert_eq!(items.len(), depth + 1);
    let deepest = items.iter().max_by_key(|e| e.pointer.to_string().len()).unwrap();
    assert_eq!(deepest.pointer.to_string().matches("li").count(), depth + 1);
    assert!(deepest.text.ends_with("deep"), "{}", &deepest.text[deepest.text.len() - 20..]);
    // Shallow nesting is untouched.
    let doc = Document::parse("- a\n  - b\n    - c\n");
    assert_eq!(doc.elements.iter().filter(|e| e.kind == ElementKind::ListItem).count(), 3);
}

#[test]
fn read_pages_follow_the_contract() {
    let src = "# Heading\n\nBody.";
    let doc = Document::parse(src);
    let page = read_slice(src, &doc, "a.md", None, ReadLimits::default()).unwrap();
    assert_eq!(page.pointer, "document");
    assert_eq!(page.markdown, src);
    assert_eq!(page.next_pointer, None);
    let anchors: Vec<String> = page.elements.iter().map(|e| e.anchor()).collect();
    assert_eq!(anchors, ["1~6324d5e74e748a4b~c189071ca2ec1884", "1.p1~4c7e3e779ff6b614~4c7e3e779ff6b614"]);

    let one = read_slice(src, &doc, "a.md", None, ReadLimits { max_elements: 1, max_bytes: 12_000 }).unwrap();
    assert_eq!(one.markdown, "# Heading\n\n");
    assert_eq!(one.next_pointer.as_deref(), Some("1.p1~4c7e3e779ff6b614~4c7e3e779ff6b614"));
    let next = Anchor::parse(one.next_pointer.as_deref().unwrap()).unwrap();
    let two = read_slice(src, &doc, "a.md", Some(&next), ReadLimits::default()).unwrap();
    assert_eq!(two.markdown, "Body.");
    assert_eq!(two.pointer, "1.p1~4c7e3e779ff6b614~4c7e3e779ff6b614");

    // The first element is always returned, even when it alone exceeds maxBytes.
    let tiny = read_slice(src, &doc, "a.md", None, ReadLimits { max_elements: 20, max_bytes: 1 }).unwrap();
    assert_eq!(tiny.elements.len(), 1);

    let missing = Anchor::parse("7").unwrap();
    let err = read_slice(src, &doc, "a.md", Some(&missing), ReadLimits::default()).unwrap_err();
    assert_eq!(err.code, crate::ErrorCode::InvalidArgument);
    assert!(err.message.starts_with("Pointer '7' was not found in 'a.md'"));

    let empty = Document::parse("\n\n");
    let page = read_slice("\n\n", &empty, "e.md", None, ReadLimits::default()).unwrap();
    assert_eq!((page.elements.len(), page.markdown.as_str()), (0, "\n\n"));
    assert_eq!(
        ReadLimits::clamped(Some(0), Some(1_000_000)),
        ReadLimits { max_elements: 1, max_bytes: 100_000 }
    );
}

#[test]
fn indented_code_starts_at_the_line_start() {
    let src = "Intro.\n\n    let x = 1;\n    let y = 2;\n\nAfter.\n";
    let doc = Document::parse(src);
    let code = doc.elements.iter().find(|e| e.kind == ElementKind::CodeBlock).unwrap();
    assert_eq!(code.text, "    let x = 1;\n    let y = 2;");
}

// ---------------------------------------------------------------------------------------------
// Property tests (issue #19, fuzzing): a grammar of Markdown-ish documents plus raw strings.
// `PROPTEST_CASES=N` raises every budget below (see `docs/reliability.md`, "Fuzzing").

use proptest::prelude::*;

/// The case budget: `default` in a plain `cargo test`, `PROPTEST_CASES` when set.
pub(crate) fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Inline text: ASCII, Japanese, full-width, emoji, inline syntax, stray pipes, NUL, tabs.
fn inline_text() -> impl Strategy<Value = String> {
    const WORDS: &[&str] = &[
        "word",
        "Rust",
        "所有権",
        "日本語の文章",
        "ｆｕｌｌ－ｗｉｄｔｈ",
        "全角　空白",
        "｜",
        "|",
        "a | b",
        "\\|",
        "*em*",
        "**strong**",
        "`code`",
        "[link](x.md)",
        "[ref]",
        "![img](a.png)",
        "<span>",
        "&amp;",
        "\\",
        "\0",
        "\t",
        "🦀",
        "é",
        "e\u{301}",
        "\u{feff}",
        "#",
        "> not quote",
        "- not item",
        "1.",
        "~~~",
        "```",
        "---",
        "===",
        "<!-- c -->",
        "[ref]: /url",
        "http://example.com",
        "  ",
        "\u{3000}",
    ];
    prop::collection::vec(prop::sample::select(WORDS), 1..5).prop_map(|w| w.join(" "))
}

/// One block of Markdown, rendered with `\n` line endings (converted later).
fn block() -> impl Strategy<Value = String> {
    let heading = (1..8usize, inline_text(), any::<bool>()).prop_map(|(level, title, closed)| {
        let hashes = "#".repeat(level);
        if closed { format!("{hashes} {title} {hashes}") } else { format!("{hashes} {title}") }
    });
    let setext = (inline_text(), any::<bool>(), 1..5usize)
        .prop_map(|(title, eq, n)| format!("{title}\n{}", if eq { "=" } else { "-" }.repeat(n)));
    let paragraph = prop::collection::vec(inline_text(), 1..4).prop_map(|lines| lines.join("\n"));
    // Lists: items at random depths (each at most one deeper than the one before), random
    // markers and indentation widths, optional blank lines (loose lists) and continuation text.
    let item = (0..4usize, 0..6usize, inline_text(), 0..4u8);
    let list = (prop::collection::vec(item, 1..8), prop::sample::select(&[2usize, 3, 4][..])).prop_map(
        |(items, width)| {
            let mut out = String::new();
            let mut depth = 0usize;
            for (i, (d, marker, text, extra)) in items.into_iter().enumerate() {
                depth = if i == 0 { 0 } else { d.min(depth + 1) };
                let indent = " ".repeat(depth * width);
                let marker = ["-", "*", "+", "1.", "2)", "10."][marker];
                if i > 0 {
                    out.push('\n');
                    if extra == 1 {
                        out.push('\n');
                    }
                }
                out.push_str(&format!("{indent}{marker} {text}"));
                match extra {
                    2 => out.push_str(&format!("\n{indent}   continued {text}")),
                    3 => out.push_str(&format!("\n\n{indent}{}  Own paragraph.", " ".repeat(marker.len()))),
                    _ => {}
                }
            }
            out
        },
    );
    let quote =
        (prop::collection::vec((1..4usize, inline_text()), 1..4), any::<bool>()).prop_map(|(lines, list)| {
            lines
                .into_iter()
                .map(|(depth, t)| format!("{} {}{t}", ">".repeat(depth), if list { "- " } else { "" }))
                .collect::<Vec<_>>()
                .join("\n")
        });
    let fence = (
        prop::sample::select(&["```", "~~~", "````", "``"][..]),
        prop::collection::vec(inline_text(), 0..3),
        any::<bool>(),
    )
        .prop_map(|(f, body, closed)| {
            let mut out = format!("{f}rust\n{}", body.join("\n"));
            if closed {
                out.push('\n');
                out.push_str(f);
            }
            out
        });
    let indented = prop::collection::vec(inline_text(), 1..3)
        .prop_map(|lines| lines.into_iter().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n"));
    let cell = prop::sample::select(&["a", "表", "x\\|y", "`|`", "", " ", "**b**", "ｆｗ", "｜"][..]);
    let table =
        (1..4usize, prop::collection::vec(prop::collection::vec(cell, 0..5), 0..4), any::<bool>(), 0..3u8)
            .prop_map(|(cols, rows, outer, align)| {
                let wrap = |cells: Vec<String>| {
                    let inner = cells.join(" | ");
                    if outer { format!("| {inner} |") } else { inner }
                };
                let head: Vec<String> = (0..cols).map(|c| format!("H{c}")).collect();
                let sep: Vec<String> =
                    (0..cols).map(|_| [":--", "--:", "---"][usize::from(align)].to_owned()).collect();
                let mut out = vec![wrap(head), wrap(sep)];
                out.extend(rows.into_iter().map(|r| wrap(r.into_iter().map(str::to_owned).collect())));
                out.join("\n")
            });
    let misc = prop::sample::select(
        &[
            "---",
            "***",
            "<div>\nhtml\n</div>",
            "[ref]: http://example.com",
            "<!-- comment -->",
            "",
            "|",
            "||",
            "| a |",
            "\0",
            "\r",
            "  ",
            "\t- tab item",
            "> ",
            ">",
            "-",
            "1.",
            "*",
            "#",
            "#\t#",
            "+++\ntoml: 1\n+++",
            "$$\nmath\n$$",
        ][..],
    )
    .prop_map(str::to_owned);
    prop_oneof![
        3 => heading, 1 => setext, 4 => paragraph, 3 => list, 2 => quote, 2 => fence, 1 => indented,
        2 => table, 2 => misc,
    ]
}

/// How the `\n`s of a rendered document become line endings.
#[derive(Clone, Copy, Debug)]
enum Eol {
    Lf,
    CrLf,
    Cr,
    Mixed,
}

fn with_eol(text: &str, eol: Eol, picks: &[u8]) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    let mut i = 0;
    for ch in text.chars() {
        if ch != '\n' {
            out.push(ch);
            continue;
        }
        let which = match eol {
            Eol::Lf => 0,
            Eol::CrLf => 1,
            Eol::Cr => 2,
            Eol::Mixed => picks.get(i % picks.len().max(1)).copied().unwrap_or(0) % 3,
        };
        i += 1;
        out.push_str(["\n", "\r\n", "\r"][usize::from(which)]);
    }
    out
}

/// A Markdown-ish document: optional front matter, blocks joined by one or two line breaks,
/// then line endings chosen as LF, CRLF, CR or a mix; or, now and then, a raw arbitrary string.
pub(crate) fn markdownish() -> impl Strategy<Value = String> {
    let eol =
        prop_oneof![4 => Just(Eol::Lf), 2 => Just(Eol::CrLf), 1 => Just(Eol::Cr), 2 => Just(Eol::Mixed)];
    let doc =
        (
            prop::option::weighted(
                0.15,
                prop::sample::select(
                    &[
                        "---\ntitle: T\n---",
                        "---\nkey: 値\ntags: [a, b]\n---",
                        "---\n---",
                        "---\nbroken: [\n",
                    ][..],
                ),
            ),
            prop::collection::vec((block(), any::<bool>()), 0..10),
            eol,
            prop::collection::vec(any::<u8>(), 1..8),
            any::<bool>(),
        )
            .prop_map(|(front, blocks, eol, picks, trailing)| {
                let mut text = front.map(str::to_owned).unwrap_or_default();
                for (b, tight) in blocks {
                    if !text.is_empty() {
                        text.push_str(if tight { "\n" } else { "\n\n" });
                    }
                    text.push_str(&b);
                }
                if trailing {
                    text.push('\n');
                }
                with_eol(&text, eol, &picks)
            });
    prop_oneof![8 => doc, 1 => "(?s).{0,120}", 1 => "[-#>*|`~\\[\\]():=+ \t\n\r0-9a表\u{0}\u{3000}]{0,120}"]
}

/// Every invariant of one parse that the model promises (module docs of `markdown`).
pub(crate) fn check_invariants(src: &str, doc: &Document) -> std::result::Result<(), TestCaseError> {
    let mut seen = BTreeSet::new();
    let mut last_start = 0;
    let lines = 1 + src.bytes().filter(|&b| b == b'\n').count() + src.matches('\r').count();
    for e in &doc.elements {
        let p = e.pointer.as_str();
        for r in [&e.range, &e.subtree_range] {
            prop_assert!(r.start <= r.end && r.end <= src.len(), "{p}: range {r:?} outside {}", src.len());
            prop_assert!(
                src.is_char_boundary(r.start) && src.is_char_boundary(r.end),
                "{p}: {r:?} splits a char"
            );
        }
        prop_assert!(e.range.start < e.range.end, "{p}: empty range");
        prop_assert!(
            e.subtree_range.start <= e.range.start && e.range.end <= e.subtree_range.end,
            "{p}: subtree"
        );
        prop_assert!(e.range.start >= last_start, "{p}: not in source order");
        last_start = e.range.start;
        prop_assert!(seen.insert(p.to_owned()), "duplicate pointer {p}");
        prop_assert!(!doc.reserved.contains(p), "{p} is both an element and reserved");
        prop_assert_eq!(e.pointer.kind(), e.kind, "{} names another kind", p);
        prop_assert!(1 <= e.start_line && e.start_line <= e.end_line && e.end_line <= lines, "{p}: lines");
        match &e.list {
            Some(list) => {
                let mut own = String::new();
                for s in &list.own_segments {
                    prop_assert!(
                        e.range.start <= s.start && s.start <= s.end && s.end <= e.range.end,
                        "{p}: segment {s:?}"
                    );
                    prop_assert!(src.is_char_boundary(s.start) && src.is_char_boundary(s.end));
                    own.push_str(&src[s.clone()]);
                }
                prop_assert_eq!(&e.text, &own, "{}: text is the own segments", p);
                prop_assert!(
                    list.delete_range.start <= e.range.start && e.range.end <= list.delete_range.end
                );
                prop_assert!(
                    list.delete_range.end <= src.len() && src.is_char_boundary(list.delete_range.end)
                );
            }
            None => {
                prop_assert_eq!(e.text.as_str(), &src[e.range.clone()], "{}: text is the source span", p);
                prop_assert_eq!(&e.self_hash, &xxh64_hex(e.text.as_bytes()), "{}: self hash", p);
            }
        }
        prop_assert_eq!(&e.subtree_hash, &xxh64_hex(src[e.subtree_range.clone()].as_bytes()), "{}", p);
        // Pointers and anchors parse back to themselves.
        let reparsed = LogicalPointer::parse(p).map(|x| x.to_string()).ok();
        prop_assert_eq!(reparsed.as_deref(), Some(p));
        let anchor = e.anchor();
        let parsed =
            Anchor::parse(&anchor).map_err(|err| TestCaseError::fail(format!("{anchor}: {err:?}")))?;
        prop_assert_eq!(parsed.to_string(), anchor.clone());
        // Every element's own anchor finds it (an element at its pointer with its hash wins).
        let i = doc
            .resolve(&parsed, RESERVED_READ_MESSAGE)
            .map_err(|err| TestCaseError::fail(format!("{anchor}: {err:?}")))?;
        prop_assert_eq!(&doc.elements[i].pointer, &e.pointer);
    }
    Ok(())
}

/// The text [`edit_paragraph`] writes.
const EDITED: &str = "Edited paragraph 編集した段落";

/// Replaces the `index`-th top-level paragraph with one line of plain words; `None` without one.
fn edit_paragraph(src: &str, doc: &Document, index: prop::sample::Index) -> Option<(String, usize)> {
    let paras: Vec<usize> = doc
        .elements
        .iter()
        .enumerate()
        .filter(|(_, e)| e.kind == ElementKind::Paragraph)
        .map(|(i, _)| i)
        .collect();
    if paras.is_empty() {
        return None;
    }
    let i = paras[index.index(paras.len())];
    let r = doc.elements[i].range.clone();
    Some((format!("{}{EDITED}{}", &src[..r.start], &src[r.end..]), i))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]

    /// Parsing never panics; spans lie inside the text on char boundaries; text and hashes are
    /// the source's; pointers are unique, valid and round-trip; every anchor resolves to itself.
    #[test]
    fn parse_keeps_every_invariant(src in markdownish()) {
        let doc = Document::parse(&src);
        check_invariants(&src, &doc)?;
        // Outline and reads never fail on a parse of the same text.
        let _ = outline(&doc, &src);
        let page = read_slice(&src, &doc, "a.md", None, ReadLimits { max_elements: 3, max_bytes: 200 }).unwrap();
        prop_assert!(src.starts_with(&page.markdown));
    }

    /// Rewriting one paragraph keeps every other element's pointer, kind and self hash, and the
    /// subtree hash of every element whose owned range does not hold that paragraph: anchors read
    /// before an unrelated edit still name the same elements (`docs/reference/original-server.md`
    /// §5.3, §5.5, §5.7).
    #[test]
    fn an_unrelated_paragraph_edit_keeps_other_anchors(src in markdownish(), pick in any::<prop::sample::Index>()) {
        let before = Document::parse(&src);
        let Some((edited, target)) = edit_paragraph(&src, &before, pick) else { return Ok(()) };
        let after = Document::parse(&edited);
        check_invariants(&edited, &after)?;
        // Only an edit that leaves a paragraph holding exactly the new text is unrelated to the
        // rest: a line right under a table, say, becomes a table row once it holds plain words
        // (GFM), which is an edit of the table, not of a paragraph.
        let pointer = &before.elements[target].pointer;
        prop_assume!(after.get(pointer).is_some_and(|e| e.kind == ElementKind::Paragraph && e.text == EDITED));
        let shape = |d: &Document| d.elements.iter().map(|e| (e.pointer.to_string(), e.kind)).collect::<Vec<_>>();
        prop_assert_eq!(shape(&before), shape(&after), "pointers changed: {:?} -> {:?}", src, edited);
        prop_assert_eq!(&before.reserved, &after.reserved);
        let changed = before.elements[target].range.clone();
        for (b, a) in before.elements.iter().zip(&after.elements) {
            if b.pointer == before.elements[target].pointer {
                continue;
            }
            prop_assert_eq!(&b.self_hash, &a.self_hash, "{} self hash", b.pointer);
            let holds = b.subtree_range.start <= changed.start && changed.end <= b.subtree_range.end;
            if !holds {
                prop_assert_eq!(b.anchor(), a.anchor(), "{} anchor", b.pointer);
            }
        }
    }

    /// The pointer and anchor parsers never panic; what they accept prints back unchanged
    /// (hashes lowercased), and what they refuse is one sentence.
    #[test]
    fn pointer_parsers_round_trip(s in prop_oneof![
        "(?s).{0,40}",
        "[0-9.plicodetq~A-Fa-f]{0,40}",
        "(document|frontmatter|[1-9][0-9]{0,2}(\\.[1-9][0-9]?){0,3}(\\.(p|code|q|t)[1-9][0-9]?|(\\.li[1-9]){1,3})?)(~[0-9a-fA-F]{16}){0,3}",
    ]) {
        match LogicalPointer::parse(&s) {
            Ok(p) => {
                prop_assert_eq!(p.to_string(), s.clone());
                prop_assert_eq!(LogicalPointer::parse(&p.to_string()).ok(), Some(p.clone()));
                let _ = (p.kind(), p.section(), p.parent_list_item());
            }
            Err(e) => prop_assert!(e.message.starts_with("Invalid semantic pointer")),
        }
        match Anchor::parse(&s) {
            Ok(a) => {
                prop_assert_eq!(a.to_string().to_ascii_lowercase(), s.to_ascii_lowercase());
                prop_assert_eq!(Anchor::parse(&a.to_string()).ok(), Some(a.clone()));
            }
            Err(e) => prop_assert!(e.message.starts_with("Invalid semantic pointer")),
        }
    }
}

// Regressions found by the property tests above (issue #19), kept as named cases.

/// Found by `an_unrelated_paragraph_edit_keeps_other_anchors` (`"-\r`"`): with CR-only line
/// endings the model saw one line, so an empty list item's own text ran into the next paragraph
/// and editing that paragraph changed the item's anchor.
#[test]
fn cr_only_line_endings_end_elements_at_the_cr() {
    let doc = Document::parse("-\r`");
    let kinds: Vec<(&str, ElementKind, &str)> =
        doc.elements.iter().map(|e| (e.pointer.as_str(), e.kind, e.text.as_str())).collect();
    assert_eq!(kinds, [("li1", ElementKind::ListItem, "-"), ("p1", ElementKind::Paragraph, "`")]);
    let edited = Document::parse("-\rEdited");
    assert_eq!(doc.elements[0].anchor(), edited.elements[0].anchor());
}

/// Found by `parse_keeps_every_invariant`: with CR-only endings a heading's span ran to the end of
/// the file (the whole file was its "line"), past its own owned section.
#[test]
fn cr_only_headings_paragraphs_and_lines() {
    let src = "word\r- word\r\r- word\r\r- word\rH0\r:--\r\r\r\r## word\r# word";
    let doc = Document::parse(src);
    for e in &doc.elements {
        assert!(
            e.subtree_range.start <= e.range.start && e.range.end <= e.subtree_range.end,
            "{}",
            e.pointer
        );
    }
    let src = "# Title\rBody text.\r\r## Sub\rMore.\r";
    let doc = Document::parse(src);
    let got: Vec<(&str, &str, usize, usize)> = doc
        .elements
        .iter()
        .map(|e| (e.pointer.as_str(), e.text.as_str(), e.start_line, e.end_line))
        .collect();
    assert_eq!(
        got,
        [
            ("1", "# Title", 1, 1),
            ("1.p1", "Body text.", 2, 2),
            ("1.1", "## Sub", 4, 4),
            ("1.1.p1", "More.", 5, 5)
        ]
    );
    assert_eq!(outline(&doc, src)[0].title, "Title");
}

/// Found by the planner property test: pulldown-cmark reads a `---` block anywhere as metadata,
/// so a document with a second one had two elements named `frontmatter`.
#[test]
fn only_the_first_block_is_front_matter() {
    let src = "---\ntitle: T\n---\n\n---\na: b\n---\n\n# H\n\n---\nk: v\n---\n";
    let doc = Document::parse(src);
    let fm: Vec<&str> =
        doc.elements.iter().filter(|e| e.kind == ElementKind::FrontMatter).map(|e| e.text.as_str()).collect();
    assert_eq!(fm, ["---\ntitle: T\n---"]);
    let doc = Document::parse("# H\n\n---\nk: v\n---\n");
    assert!(doc.elements.iter().all(|e| e.kind != ElementKind::FrontMatter));
}

/// What `an_unrelated_paragraph_edit_keeps_other_anchors` does not promise (found with 3,000
/// cases): a `|` line right under a table is a paragraph, but plain words there are a table row
/// (GFM continues a table until a blank line), so that edit changes the table, not a paragraph.
#[test]
fn words_under_a_table_join_it() {
    let doc = Document::parse("| H0 |\n| :-- |\n|\n\n# word");
    let kinds: Vec<&str> = doc.elements.iter().map(|e| e.pointer.as_str()).collect();
    assert_eq!(kinds, ["t1", "p2", "1"]);
    let doc = Document::parse("| H0 |\n| :-- |\nEdited\n\n# word");
    let kinds: Vec<&str> = doc.elements.iter().map(|e| e.pointer.as_str()).collect();
    assert_eq!(kinds, ["t1", "1"]);
}

/// Found by `an_unrelated_paragraph_edit_keeps_other_anchors`: pulldown-cmark read a fence's info
/// string past a lone CR (so "```rust\rword" was not a fence until a backtick further on was
/// edited away); the model now parses lone CRs as the line endings they are.
#[test]
fn a_fence_after_a_cr_is_a_fence() {
    let src = "- not item word\r=\r```rust\rword\r\r`code`";
    let doc = Document::parse(src);
    let kinds: Vec<(&str, ElementKind)> = doc.elements.iter().map(|e| (e.pointer.as_str(), e.kind)).collect();
    assert_eq!(kinds, [("li1", ElementKind::ListItem), ("code1", ElementKind::CodeBlock)]);
    assert_eq!(doc.elements[1].text, "```rust\rword\r\r`code`");
}
