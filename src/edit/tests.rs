//! Contract vectors (`patch.json`, the patch cases of `relocation.json`), targeted cases and
//! property tests for the patch planner.

use proptest::prelude::*;
use serde_json::Value;

use super::*;
use crate::error::ErrorCode;
use crate::markdown::{Document, LogicalPointer};

const BOM: char = '\u{feff}';

use crate::testdata::vectors;

fn s(v: &Value) -> &str {
    v.as_str().expect("string")
}

/// The anchor a client would send for `pointer`, read from `source` (README "Conventions for
/// edits"): v2 by default, `v1` = `logical~self`, `logical` = unhashed; `document` unhashed.
fn anchor_for(source: &str, pointer: &str, form: Option<&str>) -> std::result::Result<String, String> {
    if pointer == "document" || form == Some("logical") {
        return Ok(pointer.to_owned());
    }
    let doc = Document::parse(source);
    let p = LogicalPointer::parse(pointer).map_err(|e| e.message)?;
    let e = doc.get(&p).ok_or_else(|| format!("pointer {pointer} not in anchor source {source:?}"))?;
    Ok(match form {
        Some("v1") => format!("{}~{}", e.pointer, e.self_hash),
        _ => e.anchor(),
    })
}

fn strip_bom(s: &str) -> (&str, bool) {
    match s.strip_prefix(BOM) {
        Some(rest) => (rest, true),
        None => (s, false),
    }
}

fn kind(v: &Value) -> PatchKind {
    PatchKind::parse(s(v)).unwrap_or_else(|e| panic!("{v}: {e}"))
}

/// Checks one expectation object against a plan outcome; returns a failure description.
fn check_expect(
    name: &str,
    expect: &Value,
    bom: bool,
    got: &Result<PatchPlan>,
    reasons: Option<&Value>,
) -> std::result::Result<(), String> {
    if let Some(result) = expect["result"].as_str() {
        let plan =
            got.as_ref().map_err(|e| format!("{name}: expected success, got {:?}: {}", e.code, e.message))?;
        let text = if bom { format!("{BOM}{}", plan.text) } else { plan.text.clone() };
        if text != result {
            return Err(format!("{name}: result {text:?} != expected {result:?}"));
        }
        if let Some(p) = expect["resolvedPointer"].as_str() {
            let first = plan.resolved_pointers.first().map(LogicalPointer::as_str);
            if first != Some(p) {
                return Err(format!("{name}: resolved {first:?} != {p}"));
            }
        }
        return Ok(());
    }
    let rejected = expect["rejected"].as_bool() == Some(true) || expect["conflict"].is_string();
    if !rejected {
        return Err(format!("{name}: unknown expectation {expect}"));
    }
    let err = match got {
        Ok(plan) => return Err(format!("{name}: expected rejection, got {:?}", plan.text)),
        Err(e) => e,
    };
    if let Some(code) = expect["code"].as_str()
        && err.code.as_str() != code
    {
        return Err(format!("{name}: code {} != {code} ({})", err.code, err.message));
    }
    let reason = expect["reason"].as_str().or(expect["conflict"].as_str());
    if let Some(reason) = reason {
        let got_reason = err.conflict.map(|r| r.as_str());
        if got_reason != Some(reason) {
            return Err(format!("{name}: reason {got_reason:?} != {reason} ({})", err.message));
        }
        // Without an explicit message, a conflict carries its reason's internal text.
        if expect["message"].is_null()
            && let Some(msg) = reasons.and_then(|r| r[reason].as_str())
            && err.message != msg
        {
            return Err(format!("{name}: message {:?} != {msg:?}", err.message));
        }
    }
    if let Some(msg) = expect["message"].as_str()
        && err.message != msg
    {
        return Err(format!("{name}: message {:?} != {msg:?}", err.message));
    }
    if let Some(part) = expect["messageContains"].as_str()
        && !err.message.contains(part)
    {
        return Err(format!("{name}: message {:?} lacks {part:?}", err.message));
    }
    if expect["fileUnchanged"].as_bool() == Some(true) && got.is_ok() {
        return Err(format!("{name}: file changed"));
    }
    Ok(())
}

fn run_patch_case(c: &Value, reasons: &Value) -> std::result::Result<(), String> {
    let name = s(&c["name"]);
    let (source, bom) = strip_bom(s(&c["source"]));
    let anchor_source = c["anchorFromSource"].as_str().map_or(source, |a| strip_bom(a).0);
    let form = c["anchorForm"].as_str();
    let mut ops = Vec::new();
    for op in c["operations"].as_array().expect("operations") {
        let pointer = s(&op["pointer"]);
        let anchor = anchor_for(anchor_source, pointer, form).map_err(|e| format!("{name}: {e}"))?;
        if let Some(want) = c["anchors"].get(pointer).and_then(Value::as_str)
            && anchor != want
        {
            return Err(format!("{name}: anchor {anchor} != vector anchor {want}"));
        }
        ops.push(PatchOp {
            kind: kind(&op["kind"]),
            pointer: anchor,
            markdown: op["markdown"].as_str().map(str::to_owned),
        });
    }
    let got = plan_patch(source, &ops);
    check_expect(name, &c["expect"], bom, &got, Some(reasons))?;
    // `plan` and `resolved_pointers` agree with `plan_patch`.
    assert_eq!(plan(source, &ops).ok(), got.as_ref().ok().map(|p| p.text.clone()), "{name}");
    if let Ok(p) = &got {
        assert_eq!(resolved_pointers(source, &ops).ok().as_ref(), Some(&p.resolved_pointers), "{name}");
    }
    Ok(())
}

#[test]
fn patch_vectors_every_case() {
    let v = vectors("patch.json");
    let reasons = vectors("relocation.json")["reasonMessages"].clone();
    let cases = v["cases"].as_array().expect("cases");
    let failures: Vec<String> = cases.iter().filter_map(|c| run_patch_case(c, &reasons).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} patch vectors failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    assert_eq!(cases.len(), 69, "every case of patch.json was run");
}

#[test]
fn relocation_vectors_patch_operations() {
    let v = vectors("relocation.json");
    let reasons = &v["reasonMessages"];
    let mut run = 0;
    let mut failures = Vec::new();
    for c in v["cases"].as_array().expect("cases") {
        let op = &c["operation"];
        if op["kind"].as_str() == Some("read") {
            continue;
        }
        run += 1;
        let name = s(&c["name"]);
        let ops = [PatchOp {
            kind: kind(&op["kind"]),
            pointer: s(&c["anchor"]).to_owned(),
            markdown: op["markdown"].as_str().map(str::to_owned),
        }];
        let got = plan_patch(s(&c["changedSource"]), &ops);
        if let Err(e) = check_expect(name, &c["expect"], false, &got, Some(reasons)) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(run, 8, "every patch-kind relocation case was run");
}

// ---------------------------------------------------------------------------------------------
// Targeted cases.

/// The v2 anchor of `pointer` in `text`.
fn v2(text: &str, pointer: &str) -> String {
    anchor_for(text, pointer, None).unwrap()
}

fn op(kind: PatchKind, text: &str, pointer: &str, markdown: Option<&str>) -> PatchOp {
    let anchor = if pointer == "document" { pointer.to_owned() } else { v2(text, pointer) };
    PatchOp::new(kind, anchor, markdown)
}

fn ok1(text: &str, kind: PatchKind, pointer: &str, markdown: Option<&str>) -> String {
    plan(text, &[op(kind, text, pointer, markdown)])
        .unwrap_or_else(|e| panic!("{kind} {pointer}: {}", e.message))
}

fn err1(text: &str, kind: PatchKind, pointer: &str, markdown: Option<&str>) -> Error {
    match plan(text, &[op(kind, text, pointer, markdown)]) {
        Ok(t) => panic!("{kind} {pointer}: expected an error, got {t:?}"),
        Err(e) => e,
    }
}

#[test]
fn patch_kind_wire_names() {
    for &k in PatchKind::ALL {
        assert_eq!(PatchKind::parse(k.as_wire()).unwrap(), k);
        assert_eq!(PatchKind::parse(&k.as_wire().to_uppercase()).unwrap(), k);
        assert_eq!(k.as_wire().parse::<PatchKind>().unwrap(), k);
        assert_eq!(k.to_string(), k.as_wire());
    }
    let e = PatchKind::parse("replace_fragment").unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    assert_eq!(
        e.message,
        "Unknown patch operation kind 'replace_fragment'. Valid kinds: replace, replace_element, replace_subtree, replace_section, delete_section, insert_before, insert_after, delete."
    );
    assert!(PatchKind::parse("").is_err());
}

#[test]
fn scopes_follow_the_table() {
    use ElementKind::*;
    assert_eq!(PatchKind::ReplaceSection.scope(Heading), MutationScope::Subtree);
    assert_eq!(PatchKind::DeleteSection.scope(Heading), MutationScope::Subtree);
    assert_eq!(PatchKind::Delete.scope(ListItem), MutationScope::Subtree);
    assert_eq!(PatchKind::ReplaceSubtree.scope(ListItem), MutationScope::Subtree);
    assert_eq!(PatchKind::Delete.scope(Paragraph), MutationScope::Own);
    assert_eq!(PatchKind::ReplaceElement.scope(ListItem), MutationScope::Own);
    assert_eq!(PatchKind::InsertAfter.scope(ListItem), MutationScope::Own);
    assert_eq!(PatchKind::Delete.scope(BlockQuote), MutationScope::Own);
}

#[test]
fn japanese_content() {
    let text = "# 見出し\n\n日本語の段落。\n\n- 項目一\n  - 子項目\n- 項目二\n\n> 引用文。\n";
    assert_eq!(
        ok1(text, PatchKind::ReplaceElement, "1.p1", Some("新しい段落。")),
        "# 見出し\n\n新しい段落。\n\n- 項目一\n  - 子項目\n- 項目二\n\n> 引用文。\n"
    );
    assert_eq!(
        ok1(text, PatchKind::ReplaceElement, "1.li1", Some("- 最初の項目")),
        "# 見出し\n\n日本語の段落。\n\n- 最初の項目\n  - 子項目\n- 項目二\n\n> 引用文。\n"
    );
    assert_eq!(
        ok1(text, PatchKind::InsertAfter, "1.li1.li1", Some("  - 追加")),
        "# 見出し\n\n日本語の段落。\n\n- 項目一\n  - 子項目\n  - 追加\n- 項目二\n\n> 引用文。\n"
    );
    assert_eq!(
        ok1(text, PatchKind::Delete, "1.li2", None),
        "# 見出し\n\n日本語の段落。\n\n- 項目一\n  - 子項目\n\n> 引用文。\n"
    );
    assert_eq!(
        ok1(text, PatchKind::ReplaceElement, "1.q1", Some("> 新しい引用。")),
        "# 見出し\n\n日本語の段落。\n\n- 項目一\n  - 子項目\n- 項目二\n\n> 新しい引用。\n"
    );
    assert_eq!(
        ok1(text, PatchKind::ReplaceSection, "1", Some("# 見出し\n\n本文だけ。")),
        "# 見出し\n\n本文だけ。"
    );
    let e = err1(text, PatchKind::ReplaceElement, "1", Some("## 見出し"));
    assert_eq!(
        e.message,
        "replace_element cannot change a heading level or replace a heading with a non-heading element."
    );
}

#[test]
fn crlf_documents_get_crlf_inserts() {
    let text = "# T\r\n\r\nOne.\r\n\r\n- A\r\n- B\r\n";
    assert_eq!(
        ok1(text, PatchKind::InsertAfter, "1.p1", Some("\nTwo.\nLines.\n")),
        "# T\r\n\r\nOne.\r\n\r\nTwo.\r\nLines.\r\n\r\n\r\n- A\r\n- B\r\n"
    );
    assert_eq!(
        ok1(text, PatchKind::InsertBefore, "1.li2", Some("- X\n")),
        "# T\r\n\r\nOne.\r\n\r\n- A\r\n- X\r\n- B\r\n"
    );
    assert_eq!(
        ok1(text, PatchKind::ReplaceSubtree, "1.li1", Some("- Z\r\n")),
        "# T\r\n\r\nOne.\r\n\r\n- Z\r\n- B\r\n"
    );
    assert_eq!(
        ok1(text, PatchKind::InsertAfter, "document", Some("End.")),
        "# T\r\n\r\nOne.\r\n\r\n- A\r\n- B\r\n\r\nEnd."
    );
    // A lone `\r` in the replacement is a line ending too.
    assert_eq!(
        ok1(text, PatchKind::ReplaceElement, "1.p1", Some("a\rb")),
        "# T\r\n\r\na\r\nb\r\n\r\n- A\r\n- B\r\n"
    );
    // A document with only LF keeps LF.
    assert_eq!(ok1("One.\n", PatchKind::ReplaceElement, "p1", Some("a\r\nb")), "a\nb\n");
}

#[test]
fn quote_insert_separators() {
    let text = "Intro.\n\n> Quote\n\nAfter.\n";
    assert_eq!(
        ok1(text, PatchKind::InsertBefore, "q1", Some("> Before")),
        "Intro.\n\n> Before\n\n> Quote\n\nAfter.\n"
    );
    assert_eq!(
        ok1(text, PatchKind::InsertAfter, "q1", Some("> Next\n")),
        "Intro.\n\n> Quote\n\n> Next\n\nAfter.\n"
    );
    assert_eq!(ok1("> Only", PatchKind::InsertAfter, "q1", Some("> Next")), "> Only\n\n> Next");
    let e = err1(text, PatchKind::InsertAfter, "q1", Some("Plain."));
    assert_eq!(e.message, "Invalid quote fragment: exactly one root BlockQuote is required.");
    let e = err1(text, PatchKind::InsertBefore, "q1", Some("  \n"));
    assert_eq!(e.message, "Invalid quote fragment: a complete block quote is required.");
}

#[test]
fn list_fragment_rules() {
    let text = "- A\n  - Child\n- B\n";
    let e = err1(text, PatchKind::ReplaceElement, "li1.li1", Some("- Child"));
    assert_eq!(e.message, "Invalid list fragment at 'li1.li1': expected indent '  ' and marker style '-'.");
    let e = err1(text, PatchKind::InsertAfter, "li2", Some("1. X"));
    assert_eq!(e.message, "Invalid list fragment at 'li2': expected indent '' and marker style '-'.");
    let e = err1(text, PatchKind::InsertAfter, "li2", Some(" \n"));
    assert_eq!(
        e.message,
        "Invalid list fragment: exactly one item with the original indentation and marker style is required."
    );
    let e = err1(text, PatchKind::ReplaceElement, "li2", None);
    assert!(e.message.starts_with("Invalid list fragment: exactly one item"), "{}", e.message);
    let e = err1(text, PatchKind::ReplaceElement, "li2", Some("- B\n- C"));
    assert!(e.message.contains("Use replace_subtree"), "{}", e.message);
    // Ordered lists compare the delimiter, not the number.
    // After the last item of the file nothing follows, so no line ending is added (§9.3).
    assert_eq!(ok1("1. A\n2. B\n", PatchKind::InsertAfter, "li2", Some("7. C")), "1. A\n2. B\n7. C");
    assert_eq!(ok1("1. A\n2. B\n", PatchKind::InsertAfter, "li1", Some("7. C")), "1. A\n7. C\n2. B\n");
    let e = err1("1. A\n2. B\n", PatchKind::InsertAfter, "li2", Some("3) C"));
    assert!(e.message.contains("marker style 'ordered:.'"), "{}", e.message);
    // Own-text replacement keeps later parent-owned text and children.
    assert_eq!(
        ok1("- P\n  - C\n\n  Tail.\n- Q\n", PatchKind::ReplaceElement, "li1", Some("- New")),
        "- New\n  - C\n\n  Tail.\n- Q\n"
    );
}

#[test]
fn wrong_targets_and_missing_markdown() {
    let text = "# A\n\nText.\n\n| A | B |\n|---|---|\n| x | y |\n";
    let e = err1(text, PatchKind::ReplaceSubtree, "1.p1", Some("x"));
    assert!(e.message.starts_with("replace_subtree requires a list item pointer."), "{}", e.message);
    let e = err1(text, PatchKind::ReplaceElement, "1.p1", None);
    assert_eq!(e.message, "Patch operation 'ReplaceElement' requires markdown content.");
    let e = err1(text, PatchKind::InsertAfter, "1.p1", None);
    assert_eq!(e.message, "Patch operation 'InsertAfter' requires markdown content.");
    let e = err1(text, PatchKind::ReplaceSection, "1", None);
    assert_eq!(e.message, "Patch operation 'ReplaceSection' requires markdown content.");
    let e = err1(text, PatchKind::InsertAfter, "document", None);
    assert_eq!(e.message, "Patch operation 'InsertAfter' requires markdown content.");
    let e = err1(text, PatchKind::ReplaceSubtree, "document", Some("x"));
    assert_eq!(e.message, "Operation 'replace_subtree' is not supported for the document pointer.");
    let e = err1(text, PatchKind::ReplaceElement, "1.t1", Some("Not a table."));
    assert!(e.message.starts_with("replace_element cannot replace a table"), "{}", e.message);
    assert_eq!(
        ok1(text, PatchKind::ReplaceElement, "1.t1", Some("| C |\n|---|\n| z |")),
        "# A\n\nText.\n\n| C |\n|---|\n| z |\n"
    );
    let e = err1(text, PatchKind::ReplaceElement, "1.p1", Some("One.\n\nTwo."));
    assert!(e.message.contains("exactly one editable Markdown element"));
    let e = err1("- A\n", PatchKind::ReplaceSection, "li1", Some("# X"));
    assert_eq!(e.message, "replace_section requires a heading pointer.");
    let e = err1("- A\n", PatchKind::DeleteSection, "li1", None);
    assert_eq!(e.message, "delete_section requires a heading pointer.");
}

#[test]
fn anchors_errors() {
    let text = "One.\n\nTwo.\n";
    let bad = |pointer: &str| plan(text, &[PatchOp::new(PatchKind::Delete, pointer, None)]).unwrap_err();
    assert_eq!(bad("p1~zz").message, "Invalid semantic pointer fingerprint.");
    assert_eq!(bad("document~ef46db3751d8e999").message, "Invalid semantic pointer fingerprint.");
    assert_eq!(bad("li1.p1").message, "Invalid semantic pointer: li1.p1");
    let stale = bad("p1~0000000000000000~0000000000000000");
    assert_eq!(stale.code, ErrorCode::Conflict);
    assert_eq!(stale.conflict.map(|r| r.as_str()), Some("SelfHashMismatch"));
    let gone = bad("p9~0000000000000000");
    assert_eq!(gone.conflict.map(|r| r.as_str()), Some("SemanticTargetNotFound"));
    // Relocation: the anchor of p1 still names "One." after a paragraph was inserted before it.
    let a = v2(text, "p1");
    let moved = "Zero.\n\nOne.\n\nTwo.\n";
    let p = plan_patch(moved, &[PatchOp::new(PatchKind::ReplaceElement, a, Some("Uno."))]).unwrap();
    assert_eq!(p.text, "Zero.\n\nUno.\n\nTwo.\n");
    assert_eq!(p.resolved_pointers[0].as_str(), "p2");
    // v1 anchors work for Self scope; Subtree scope on a list item needs v2.
    let list = "- A\n- B\n";
    let e =
        plan(list, &[PatchOp::new(PatchKind::Delete, anchor_for(list, "li1", Some("v1")).unwrap(), None)])
            .unwrap_err();
    assert_eq!(e.conflict.map(|r| r.as_str()), Some("MissingSubtreeHash"));
    let t = plan(
        list,
        &[PatchOp::new(PatchKind::InsertAfter, anchor_for(list, "li1", Some("v1")).unwrap(), Some("- X"))],
    );
    assert_eq!(t.unwrap(), "- A\n- X\n- B\n");
}

#[test]
fn overlaps_and_multiple_edits() {
    let text = "# A\n\nOne.\n\nTwo.\n";
    // Two inserts at the same offset overlap.
    let ops = [
        op(PatchKind::InsertAfter, text, "1.p1", Some("X.")),
        op(PatchKind::InsertBefore, text, "1.p2", Some("Y.")),
    ];
    assert_eq!(plan(text, &ops).unwrap(), "# A\n\nOne.\n\nX.\n\nY.\n\nTwo.\n");
    let ops =
        [op(PatchKind::Delete, text, "1.p1", None), op(PatchKind::InsertBefore, text, "1.p1", Some("Y."))];
    assert_eq!(plan(text, &ops).unwrap_err().message, "Patch operations conflict at pointer '1.p1'.");
    let ops = [
        op(PatchKind::InsertBefore, text, "1.p1", Some("Y.")),
        op(PatchKind::InsertAfter, text, "1", Some("Z.")),
    ];
    // insert_after heading end (offset 3) and insert_before p1 (offset 5) do not overlap.
    assert_eq!(plan(text, &ops).unwrap(), "# A\n\nZ.\n\nY.\n\nOne.\n\nTwo.\n");
    let ops = [
        op(PatchKind::ReplaceElement, text, "1.p2", Some("2.")),
        op(PatchKind::InsertAfter, text, "document", Some("End.")),
    ];
    let p = plan_patch(text, &ops).unwrap();
    assert_eq!(p.text, "# A\n\nOne.\n\n2.\n\nEnd.");
    assert_eq!(p.edits.len(), 2);
    assert!(p.edits[0].range.start < p.edits[1].range.start);
    assert_eq!(
        p.resolved_pointers.iter().map(LogicalPointer::as_str).collect::<Vec<_>>(),
        ["1.p2", "document"]
    );
    let ops = [
        op(PatchKind::ReplaceSection, text, "1", Some("# A")),
        op(PatchKind::InsertBefore, text, "1.p2", Some("E")),
    ];
    assert_eq!(plan(text, &ops).unwrap_err().message, "Patch operations at '1' and '1.p2' overlap.");
    // An insertion right at the end of a replaced range does not overlap it; separators are
    // computed from the original source (which ended with one line ending).
    let ops = [
        op(PatchKind::ReplaceSection, text, "1", Some("# A")),
        op(PatchKind::InsertAfter, text, "document", Some("E")),
    ];
    assert_eq!(plan(text, &ops).unwrap(), "# A\nE");
}

#[test]
fn front_matter_and_code() {
    let text = "---\ntitle: Test\n---\n\n```rust\nlet x = 1;\n```\n";
    assert_eq!(
        ok1(text, PatchKind::ReplaceElement, "frontmatter", Some("---\ntitle: New\n---")),
        "---\ntitle: New\n---\n\n```rust\nlet x = 1;\n```\n"
    );
    assert_eq!(
        ok1(text, PatchKind::ReplaceElement, "code1", Some("```\nnew\n```")),
        "---\ntitle: Test\n---\n\n```\nnew\n```\n"
    );
    // Line A: insert_before on document goes before the front matter.
    assert_eq!(ok1(text, PatchKind::InsertBefore, "document", Some("X")), format!("X\n\n{text}"));
}

#[test]
fn structural_validator_rejections() {
    let cases: &[(&str, PatchKind, &str, &str, &str)] = &[
        // A paragraph after the new item ends the list: the next item moves to another list.
        (
            "- A\n- B\n",
            PatchKind::InsertAfter,
            "li1",
            "- X\n\nOutside.",
            "'list': a list container was split or merged",
        ),
        (
            "- A\n  - B\n- C\n",
            PatchKind::ReplaceSubtree,
            "li2",
            "- C\n\n---",
            "'li2': fragment introduces an unrelated ThematicBreakBlock outside the new subtree",
        ),
        (
            "- A\n- B\n",
            PatchKind::InsertAfter,
            "li2",
            "- C\n\n<!-- note -->",
            "'li2': fragment introduces an unrelated HtmlBlock outside the new subtree",
        ),
        (
            "- A\n- B\n",
            PatchKind::ReplaceSubtree,
            "li1",
            "- X\n- Y",
            "'li1': exactly one structured root is required",
        ),
        (
            "- A\n- B\n",
            PatchKind::ReplaceSubtree,
            "li2",
            "- B\n\n1. other",
            "'li2': exactly one structured root is required",
        ),
        (
            "- A\n  - B\n- C\n",
            PatchKind::InsertAfter,
            "li1.li1",
            "  - X\n- Y",
            "'li1.li1': fragment introduces an unrelated ListItemBlock outside the new subtree",
        ),
        (
            "Intro\n\n- A\n- B\n",
            PatchKind::InsertBefore,
            "li1",
            "- X\n\n# H",
            "'li1': new sibling is in a different list container",
        ),
    ];
    for (text, kind, pointer, markdown, reason) in cases {
        let e = err1(text, *kind, pointer, Some(markdown));
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert_eq!(
            e.message,
            format!("Unsupported Markdown structure at {reason}."),
            "{kind} {pointer} {markdown:?}"
        );
    }
    // What the fragment adds below its own root is fine.
    assert_eq!(
        ok1("- A\n- B\n", PatchKind::InsertAfter, "li1", Some("- X\n  - Y")),
        "- A\n- X\n  - Y\n- B\n"
    );
    // A lazy continuation line belongs to the new quote: accepted.
    let lazy = "Para.\n\n> Q\n\nTail.\n";
    assert_eq!(
        ok1(lazy, PatchKind::InsertAfter, "q1", Some("> R\nlazy")),
        "Para.\n\n> Q\n\n> R\nlazy\n\nTail.\n"
    );
}

#[test]
fn raw_blocks_around_structured_edits() {
    // Link definitions, HTML and thematic breaks outside the edit survive untouched.
    let text = "- A\n\n  [r]: /u\n- B\n\n<!-- c -->\n\n***\n\n[s]: /v\n";
    assert_eq!(
        ok1(text, PatchKind::ReplaceElement, "li2", Some("- C")),
        "- A\n\n  [r]: /u\n- C\n\n<!-- c -->\n\n***\n\n[s]: /v\n"
    );
    assert_eq!(
        ok1(text, PatchKind::Delete, "li2", None),
        "- A\n\n  [r]: /u\n\n<!-- c -->\n\n***\n\n[s]: /v\n"
    );
    // Deleting the first item of a "1." list leaves "2." unable to interrupt the paragraph
    // above: the paragraph would absorb it, so the patch is refused.
    let e = err1("Intro.\n1. A\n2. B\n", PatchKind::Delete, "li1", None);
    assert_eq!(e.message, "Unsupported Markdown structure at 'p1': surviving element text or kind changed.");
}

#[test]
fn structural_validator_accepts_identity_edits() {
    let text = "- Parent\n  - Child\n    - Grandchild\n  - Leaf\n- Sibling\n\n> Quote\n> more\n";
    let doc = Document::parse(text);
    for e in &doc.elements {
        let physical = &text[e.range.clone()];
        let ops = match e.kind {
            ElementKind::ListItem => {
                vec![PatchOp::new(PatchKind::ReplaceSubtree, e.anchor(), Some(physical))]
            }
            ElementKind::BlockQuote => {
                vec![PatchOp::new(PatchKind::ReplaceElement, e.anchor(), Some(physical))]
            }
            _ => continue,
        };
        assert_eq!(plan(text, &ops).unwrap(), text, "{}", e.pointer);
    }
}

// ---------------------------------------------------------------------------------------------
// Property tests.

/// Corpus-like blocks (the shapes found in the shared corpora), joined into documents.
const SNIPPETS: &[&str] = &[
    "# Title",
    "## 日本語の見出し",
    "### Deep heading ###",
    "Setext heading\n==============",
    "Paragraph text with *emphasis*, `code` and a [link][ref].",
    "日本語の段落。句読点も含みます。\n二行目です。",
    "- Parent\n  - Child\n    - Grandchild\n  - Leaf\n- Sibling",
    "1. First\n2. Second\n   - nested bullet",
    "12) Parent\n    - Child\n13) End",
    "- [ ] task\n- [x] done",
    "- Loose parent\n\n  Own paragraph.\n\n  - Child\n\n  After child.",
    "* star item\n+ plus item",
    "- item\n\n  > quote in item",
    "> Quote line\n> continued",
    "> 引用\n>\n> - list in quote",
    "| A | B |\n|---|---|\n| x | y |",
    "| 列 | 値 |\n|:--|--:|\n| あ | 1 |",
    "```rust\nfn main() {}\n```",
    "~~~\nraw ~~~ fence\n~~~",
    "    indented code",
    "<!-- comment -->",
    "<div>\nhtml block\n</div>",
    "[ref]: https://example.com",
    "***",
    "Text with trailing spaces  \nnext line",
    "- a\n\n- b",
    "  - indented start",
];

const MARKDOWNS: &[&str] = &[
    "- New item",
    "  - Nested new",
    "* Star",
    "1. one",
    "New paragraph.",
    "新しい段落。",
    "> New quote",
    "# New heading",
    "## Section\n\nBody.",
    "### Deep\n\n#### Deeper",
    "| A |\n|---|\n| 1 |",
    "",
    "\n\n",
    "- a\n- b",
    "- X\n  - child",
    "- X\n\nloose",
    "<!-- x -->",
    "```\ncode\n```",
    "text\r\nwith crlf",
    "\r",
];

fn document_strategy() -> impl Strategy<Value = String> {
    (prop::collection::vec((0..SNIPPETS.len(), 0..3usize), 0..8), any::<bool>(), any::<bool>()).prop_map(
        |(parts, crlf, trailing)| {
            let mut text = String::new();
            for (i, (snippet, sep)) in parts.iter().enumerate() {
                if i > 0 {
                    text.push_str(["\n\n", "\n", "\n\n\n"][*sep]);
                }
                text.push_str(SNIPPETS[*snippet]);
            }
            if trailing {
                text.push('\n');
            }
            if crlf { text.replace('\n', "\r\n") } else { text }
        },
    )
}

#[derive(Clone, Debug)]
struct OpSpec {
    target: usize,
    kind: usize,
    form: u8,
    markdown: Option<usize>,
    /// Build a well-formed operation for the target's kind (so that plans also succeed).
    tailored: bool,
}

fn op_strategy() -> impl Strategy<Value = OpSpec> {
    (any::<usize>(), 0..PatchKind::ALL.len(), 0..6u8, prop::option::of(0..MARKDOWNS.len()), any::<bool>())
        .prop_map(|(target, kind, form, markdown, tailored)| OpSpec {
            target,
            kind,
            form,
            markdown,
            tailored,
        })
}

/// A plausible operation for `e`: a kind that applies to it and a fragment of the right shape.
fn tailored_op(text: &str, e: Option<&crate::markdown::Element>, pick: usize) -> (PatchKind, Option<String>) {
    use PatchKind::*;
    let Some(e) = e else {
        let kind = [InsertBefore, InsertAfter][pick % 2];
        return (kind, Some("New paragraph 新しい。".to_owned()));
    };
    let pick_kind = |kinds: &[PatchKind]| kinds[pick % kinds.len()];
    match e.kind {
        ElementKind::Heading => {
            let hashes = "#".repeat(usize::from(e.heading_level.unwrap_or(1)));
            match pick_kind(&[ReplaceElement, ReplaceSection, DeleteSection, InsertAfter, Delete]) {
                ReplaceElement => (ReplaceElement, Some(format!("{hashes} New 見出し"))),
                ReplaceSection => (ReplaceSection, Some(format!("{hashes} New\n\nBody."))),
                InsertAfter => (InsertAfter, Some("Inserted.".to_owned())),
                k => (k, None),
            }
        }
        ElementKind::ListItem => {
            let line = validate::first_line(&text[e.range.start..]);
            let indent_len = line.len() - line.trim_start_matches([' ', '\t']).len();
            let marker = line[indent_len..].split([' ', '\t']).next().unwrap_or("-");
            let item = format!("{}{marker} New 項目", &line[..indent_len]);
            match pick_kind(&[ReplaceElement, ReplaceSubtree, InsertBefore, InsertAfter, Delete]) {
                Delete => (Delete, None),
                k => (k, Some(item)),
            }
        }
        ElementKind::BlockQuote => match pick_kind(&[ReplaceElement, InsertBefore, InsertAfter, Delete]) {
            Delete => (Delete, None),
            k => (k, Some("> New 引用".to_owned())),
        },
        kind => {
            let fragment = match kind {
                ElementKind::CodeBlock => "```\nnew\n```",
                ElementKind::Table => "| A |\n|---|\n| 1 |",
                ElementKind::FrontMatter => "---\na: b\n---",
                _ => "New text 新しい。",
            };
            match pick_kind(&[ReplaceElement, InsertBefore, InsertAfter, Delete]) {
                Delete => (Delete, None),
                k => (k, Some(fragment.to_owned())),
            }
        }
    }
}

/// Turns specs into operations over the document's real anchors.
fn build_ops(text: &str, specs: &[OpSpec]) -> Vec<PatchOp> {
    let doc = Document::parse(text);
    let n = doc.elements.len();
    specs
        .iter()
        .map(|spec| {
            if spec.tailored {
                let e = doc.elements.get(spec.target % (n + 1));
                let (kind, markdown) = tailored_op(text, e, spec.kind);
                let pointer = e.map_or_else(|| "document".to_owned(), |e| e.anchor());
                return PatchOp { kind, pointer, markdown };
            }
            let pointer = if spec.target % (n + 1) == n {
                "document".to_owned()
            } else {
                let e = &doc.elements[spec.target % (n + 1)];
                match spec.form {
                    0..=2 => e.anchor(),
                    3 => format!("{}~{}", e.pointer, e.self_hash),
                    4 => e.pointer.to_string(),
                    _ => {
                        let mut a = e.anchor();
                        let flipped = if a.ends_with('0') { '1' } else { '0' };
                        a.pop();
                        a.push(flipped);
                        a
                    }
                }
            };
            PatchOp {
                kind: PatchKind::ALL[spec.kind],
                pointer,
                markdown: spec.markdown.map(|m| MARKDOWNS[m].to_owned()),
            }
        })
        .collect()
}

/// The invariant of a successful plan: only bytes inside the planned ranges change.
fn assert_only_planned_ranges_changed(text: &str, p: &PatchPlan) {
    let mut cursor = 0;
    let mut rebuilt = String::new();
    for e in &p.edits {
        assert!(e.range.start >= cursor, "edits are sorted and disjoint: {:?}", p.edits);
        assert!(e.range.end <= text.len());
        rebuilt.push_str(&text[cursor..e.range.start]);
        rebuilt.push_str(&e.replacement);
        cursor = e.range.end;
    }
    rebuilt.push_str(&text[cursor..]);
    assert_eq!(rebuilt, p.text, "the result is the source with exactly the planned edits");
    if let (Some(first), Some(last)) = (p.edits.first(), p.edits.last()) {
        assert_eq!(&p.text.as_bytes()[..first.range.start], &text.as_bytes()[..first.range.start], "prefix");
        let suffix = text.len() - last.range.end;
        assert!(p.text.len() >= suffix);
        assert_eq!(&p.text.as_bytes()[p.text.len() - suffix..], &text.as_bytes()[last.range.end..], "suffix");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn plan_never_panics_and_only_touches_planned_ranges(
        text in document_strategy(),
        specs in prop::collection::vec(op_strategy(), 0..4),
    ) {
        let ops = build_ops(&text, &specs);
        match plan_patch(&text, &ops) {
            Ok(p) => {
                assert_only_planned_ranges_changed(&text, &p);
                prop_assert_eq!(p.resolved_pointers.len(), ops.len());
                prop_assert_eq!(plan(&text, &ops).ok(), Some(p.text.clone()));
            }
            Err(e) => {
                prop_assert!(matches!(e.code, ErrorCode::InvalidArgument | ErrorCode::Conflict), "{:?}", e);
                prop_assert!(!e.message.is_empty());
            }
        }
    }

    #[test]
    fn plan_never_panics_on_arbitrary_text(
        text in "(?s).{0,200}",
        specs in prop::collection::vec(op_strategy(), 1..3),
        pointer in "[a-z0-9.~]{0,24}",
    ) {
        let mut ops = build_ops(&text, &specs);
        ops.push(PatchOp::new(PatchKind::Delete, pointer, None));
        let _ = plan_patch(&text, &ops);
        let _ = plan_patch(&text, &ops[..ops.len() - 1]);
    }

    #[test]
    fn identity_replacements_of_list_items_and_quotes_succeed(text in document_strategy()) {
        let doc = Document::parse(&text);
        for e in &doc.elements {
            let physical = &text[e.range.clone()];
            let (kind, markdown) = match e.kind {
                ElementKind::ListItem => (PatchKind::ReplaceSubtree, physical),
                ElementKind::BlockQuote => (PatchKind::ReplaceElement, physical),
                _ => continue,
            };
            if e.list.as_ref().is_some_and(|l| l.marker_style.is_empty()) {
                continue;
            }
            let got = plan(&text, &[PatchOp::new(kind, e.anchor(), Some(markdown))]);
            prop_assert_eq!(got.as_deref(), Ok(text.as_str()), "{} {}", e.pointer, kind);
        }
    }
}

// Issue #19 (fuzzing): the planner over the Markdown grammar of `markdown::tests` (nested lists,
// quotes, fences, tables, front matter, CR/CRLF/LF mixes, NUL, full-width text, raw strings).
proptest! {
    #![proptest_config(ProptestConfig::with_cases(crate::markdown::tests::cases(160)))]

    /// A plan either fails as INVALID_ARGUMENT/CONFLICT or changes only its planned ranges, and
    /// its result is a document that keeps every model invariant.
    #[test]
    fn plans_on_markdownish_documents_touch_only_their_ranges(
        text in crate::markdown::tests::markdownish(),
        specs in prop::collection::vec(op_strategy(), 1..4),
    ) {
        let ops = build_ops(&text, &specs);
        match plan_patch(&text, &ops) {
            Ok(p) => {
                assert_only_planned_ranges_changed(&text, &p);
                crate::markdown::tests::check_invariants(&p.text, &Document::parse(&p.text))?;
            }
            Err(e) => {
                prop_assert!(matches!(e.code, ErrorCode::InvalidArgument | ErrorCode::Conflict), "{:?}", e);
                prop_assert!(!e.message.is_empty() && !e.message.contains('\n'), "{:?}", e.message);
            }
        }
    }

    /// All or nothing: adding one operation with a stale self hash to any request makes the
    /// whole plan fail, so nothing of the other operations is applied either.
    #[test]
    fn one_stale_operation_rejects_the_whole_plan(
        text in crate::markdown::tests::markdownish(),
        specs in prop::collection::vec(op_strategy(), 0..3),
        stale in any::<prop::sample::Index>(),
        kind in 0..PatchKind::ALL.len(),
    ) {
        let doc = Document::parse(&text);
        if doc.elements.is_empty() {
            return Ok(());
        }
        let e = &doc.elements[stale.index(doc.elements.len())];
        // Flip the last digit of the self hash.
        let mut hash = e.self_hash.clone();
        let last = hash.pop().unwrap();
        hash.push(if last == '0' { '1' } else { '0' });
        let mut ops = build_ops(&text, &specs);
        let markdown = (PatchKind::ALL[kind] != PatchKind::DeleteSection && PatchKind::ALL[kind] != PatchKind::Delete)
            .then_some("New paragraph.");
        ops.push(PatchOp::new(PatchKind::ALL[kind], format!("{}~{hash}~{}", e.pointer, e.subtree_hash), markdown));
        let got = plan_patch(&text, &ops);
        prop_assert!(got.is_err(), "a stale anchor was applied: {:?}", got);
    }
}

/// Found with the Markdown grammar (issue #19): inserting a `---` block after the front matter made
/// a second element named `frontmatter`; only the first block of a file is front matter now.
#[test]
fn a_second_metadata_block_is_not_front_matter() {
    let text = "---\ntitle: T\n---";
    let doc = Document::parse(text);
    let fm = &doc.elements[0];
    let got =
        plan(text, &[PatchOp::new(PatchKind::InsertAfter, fm.anchor(), Some("---\na: b\n---"))]).unwrap();
    assert_eq!(got, "---\ntitle: T\n---\n\n---\na: b\n---");
    let after = Document::parse(&got);
    let pointers: Vec<&str> = after.elements.iter().map(|e| e.pointer.as_str()).collect();
    assert_eq!(pointers, ["frontmatter"]);
}

/// CR-only files (issue #19): inserted text takes `\r`, so the file keeps one kind of ending.
#[test]
fn cr_only_files_get_cr_line_endings() {
    let text = "# T\rFirst.\r\rSecond.\r";
    let doc = Document::parse(text);
    let first = doc.elements.iter().find(|e| e.text == "First.").unwrap();
    let got =
        plan(text, &[PatchOp::new(PatchKind::InsertAfter, first.anchor(), Some("New\nlines."))]).unwrap();
    assert_eq!(got, "# T\rFirst.\r\rNew\rlines.\r\rSecond.\r");
}
