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
