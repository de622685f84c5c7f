//! Unit tests of the GFM table model against the contract's `tables.json` vectors, and of
//! table edits.

use super::*;

fn tables_json() -> serde_json::Value {
    crate::testdata::vectors("tables.json")
}

#[test]
fn projection_vector() {
    let v = tables_json();
    let p = &v["projection"];
    let src = p["source"].as_str().unwrap();
    let got = Table::parse(src).unwrap().projection(src);
    let want = &p["table"];
    assert_eq!(got.column_count as u64, want["columnCount"].as_u64().unwrap());
    assert_eq!(got.row_count as u64, want["rowCount"].as_u64().unwrap());
    for (i, c) in want["columns"].as_array().unwrap().iter().enumerate() {
        assert_eq!(got.columns[i].0, c["name"].as_str().unwrap());
        assert_eq!(got.columns[i].1.as_str(), c["alignment"].as_str().unwrap());
    }
    for (i, r) in want["rows"].as_array().unwrap().iter().enumerate() {
        let cells: Vec<&str> = r["cells"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
        assert_eq!(got.rows[i], cells);
    }
}

#[test]
fn display_text_vectors() {
    let v = tables_json();
    for c in v["displayText"].as_array().unwrap() {
        assert_eq!(display_text(c["cell"].as_str().unwrap()), c["display"].as_str().unwrap());
    }
    assert_eq!(display_text("# 見出し"), "# 見出し");
    assert_eq!(display_text("1. 項目"), "1. 項目");
    assert_eq!(display_text("`a|b` &amp; x"), "a|b & x");
}

#[test]
fn missing_and_extra_cells() {
    let src = "| A | B |\r\n|---|:-:|\r\n| 1 |\r\n| 1 | 2 | 3 |";
    let t = Table::parse(src).unwrap();
    assert_eq!(t.lines[0].eol, "\r\n");
    let p = t.projection(src);
    assert_eq!(p.rows, vec![vec!["1".to_owned(), String::new()], vec!["1".to_owned(), "2".to_owned()]]);
    assert!(p.has_extra_cells);
    assert_eq!(p.columns[1].1, Alignment::Center);
    let bare = "A | B\n--|--\nx | y";
    assert_eq!(Table::parse(bare).unwrap().projection(bare).rows, vec![vec!["x".to_owned(), "y".to_owned()]]);
}

// ---------------------------------------------------------------------------------------------
// kb_edit_table planning (§10.2–§10.4): every case of tables.json, then targeted and property tests.

use crate::error::ErrorCode;
use crate::markdown::{Document, ElementKind};
use crate::wire::{TableAction, TableEditRequest, ValueFormat};
use proptest::prelude::*;

const INITIAL: &str = "| Product | Price | Count |\n|:--------|------:|:-----:|\n| Pork    | 25    | 2     |\n| Chicken | 18    | 3     |\n| Veg     | 5     | 4     |";

/// The current v2 anchor of the table at logical pointer `tN`.
fn anchor_of(text: &str, pointer: &str) -> String {
    let doc = Document::parse(text);
    doc.elements.iter().find(|e| e.pointer.as_str() == pointer).map(|e| e.anchor()).unwrap()
}

/// A `kb_edit_table` request from the action's fields (`path` and `pointer` filled in if absent;
/// [`plan`] sets the pointer).
fn request(mut json: serde_json::Value) -> TableEditRequest {
    if let Some(o) = json.as_object_mut() {
        o.entry("path").or_insert_with(|| "t.md".into());
        o.entry("pointer").or_insert_with(|| "t1".into());
    }
    serde_json::from_value(json).unwrap()
}

/// Plans `request` against the table at `pointer`.
fn plan(text: &str, pointer: &str, request: &TableEditRequest) -> Result<(String, String), crate::Error> {
    plan_table_edit(text, &TableEditRequest { pointer: pointer.to_owned(), ..request.clone() })
}

fn table_projection(text: &str) -> Projection {
    let doc = Document::parse(text);
    let t = doc.elements.iter().find(|e| e.kind == ElementKind::Table).unwrap();
    Table::parse(&t.text).unwrap().projection(&t.text)
}

/// Applies `requests` in order, chaining pointers. Returns every intermediate (text, pointer).
fn run(source: &str, requests: &[serde_json::Value]) -> Result<Vec<(String, String)>, crate::Error> {
    let mut text = source.to_owned();
    let mut pointer = anchor_of(source, "t1");
    let mut steps = Vec::new();
    for r in requests {
        let (t, p) = plan(&text, &pointer, &request(r.clone()))?;
        assert_eq!(p, anchor_of(&t, p.split('~').next().unwrap()), "returned anchor is current");
        text = t;
        pointer = p;
        steps.push((text.clone(), pointer.clone()));
    }
    Ok(steps)
}

/// The anchor of the first table of `text`.
fn first_table(text: &str) -> String {
    Document::parse(text).elements.iter().find(|e| e.kind == ElementKind::Table).map(|e| e.anchor()).unwrap()
}

fn edit(text: &str, json: serde_json::Value) -> Result<(String, String), crate::Error> {
    plan(text, &first_table(text), &request(json))
}

fn err(text: &str, json: serde_json::Value) -> crate::Error {
    edit(text, json).unwrap_err()
}

#[test]
fn edit_vector_cases() {
    let v = tables_json();
    let cases = v["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 16);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let source = case["source"].as_str().unwrap();
        assert_eq!(case["pointer"], "t1");
        let requests = case["requests"].as_array().unwrap();
        let expect = &case["expect"];
        if expect["rejected"] == true {
            let mut text = source.to_owned();
            let pointer = anchor_of(source, "t1");
            let mut failure = None;
            for r in requests {
                match plan(&text, &pointer, &request(r.clone())) {
                    Ok((t, _)) => text = t,
                    Err(e) => {
                        failure = Some(e);
                        break;
                    }
                }
            }
            let e = failure.unwrap_or_else(|| panic!("{name}: not rejected"));
            assert_eq!(e.message, expect["message"].as_str().unwrap(), "{name}");
            assert_eq!(e.code, ErrorCode::InvalidArgument, "{name}");
            assert_eq!(text, source, "{name}: file unchanged");
            continue;
        }
        let steps = run(source, requests).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (text, pointer) = steps.last().unwrap();
        if let Some(result) = expect["result"].as_str() {
            assert_eq!(text, result, "{name}");
        }
        if let Some(lines) = expect["lines"].as_array() {
            for l in lines {
                assert!(text.lines().any(|t| t == l.as_str().unwrap()), "{name}: line {l}");
            }
        }
        if let Some(after) = expect["afterFirstRequest"].as_str() {
            assert_eq!(steps[0].0, after, "{name}");
        }
        if let Some(contains) = expect["resultContains"].as_str() {
            assert!(text.contains(contains), "{name}: {text:?}");
        }
        if expect["fileWritten"] == false {
            assert_eq!(text, source, "{name}");
        }
        if expect["samePointer"] == true {
            assert_eq!(pointer, &anchor_of(source, "t1"), "{name}");
        }
        if let Some(p) = expect.get("projection") {
            let got = table_projection(text);
            let names: Vec<&str> = got.columns.iter().map(|(n, _)| n.as_str()).collect();
            let want: Vec<&str> =
                p["columnNames"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
            assert_eq!(names, want, "{name}");
            for (col, al) in p["alignments"].as_object().unwrap() {
                let i = names.iter().position(|n| n == col).unwrap();
                assert_eq!(got.columns[i].1.as_str(), al.as_str().unwrap(), "{name}: {col}");
            }
            for (col, values) in p["columnValues"].as_object().unwrap() {
                let i = names.iter().position(|n| n == col).unwrap();
                let got_values: Vec<&str> = got.rows.iter().map(|r| r[i].as_str()).collect();
                let want: Vec<&str> =
                    values.as_array().unwrap().iter().map(|x| x.as_str().unwrap()).collect();
                assert_eq!(got_values, want, "{name}: {col}");
            }
        }
    }
}

#[test]
fn text_escapes_and_value_examples() {
    let v = tables_json();
    for e in v["textEscapes"].as_array().unwrap() {
        let ch = e["char"].as_str().unwrap();
        assert_eq!(encode_text(ch), e["encoded"].as_str().unwrap());
        assert_eq!(display_text(&encode_text(ch)), ch);
    }
    for ex in v["valueExamples"].as_array().unwrap() {
        let value = ex["value"].as_str().unwrap();
        let format: ValueFormat = serde_json::from_value(ex["valueFormat"].clone()).unwrap();
        let encoded = encode_value(value, format).unwrap();
        assert_eq!(encoded, ex["encoded"].as_str().unwrap());
        assert_eq!(display_text(&encoded), ex["readsBack"].as_str().unwrap());
        // Through a real edit as well.
        let (text, _) = edit(
            INITIAL,
            serde_json::json!({"action": "update_cells", "updates": [
                {"rowIndex": 1, "columnIndex": 0, "value": value, "valueFormat": ex["valueFormat"]}]}),
        )
        .unwrap();
        assert!(text.contains(&format!("| {encoded} |")), "{text}");
        assert_eq!(table_projection(&text).rows[1][0], ex["readsBack"].as_str().unwrap());
    }
}

#[test]
fn padding_example() {
    let v = tables_json();
    let p = &v["paddingExample"];
    let source = format!("| Product | Price |\n|---------|-------|\n{}", p["before"].as_str().unwrap());
    let (text, _) = edit(
        &source,
        serde_json::json!({"action": "update_cells", "updates": [{"rowIndex": 0, "column": "Price", "value": "29"}]}),
    )
    .unwrap();
    assert_eq!(text.lines().last().unwrap(), p["after"].as_str().unwrap());
}

#[test]
fn delimiter_alignments() {
    let v = tables_json();
    for d in v["delimiterAlignments"].as_array().unwrap() {
        let delimiter = d["delimiter"].as_str().unwrap();
        let alignment = d["alignment"].as_str().unwrap();
        let src = format!("| A | B |\n|{delimiter}|---|\n| 1 | 2 |");
        assert_eq!(Table::parse(&src).unwrap().alignments[0].as_str(), alignment);
        let start = if alignment == "right" { "---" } else { "---:" };
        let src = format!("| A | B |\n|{start}|---|\n| 1 | 2 |");
        let (text, _) =
            edit(&src, serde_json::json!({"action": "set_alignment", "column": "A", "alignment": alignment}))
                .unwrap();
        assert_eq!(text, format!("| A | B |\n|{delimiter}|---|\n| 1 | 2 |"));
    }
}

/// Matches `message` against a template whose `<…>` parts are wildcards.
fn matches_template(template: &str, message: &str) -> bool {
    let mut parts = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('<') {
        let close = rest[open..].find('>').map(|c| open + c).unwrap();
        parts.push(&rest[..open]);
        rest = &rest[close + 1..];
    }
    parts.push(rest);
    let mut msg = message;
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            let Some(m) = msg.strip_prefix(part) else { return false };
            msg = m;
        } else if i == parts.len() - 1 {
            return msg.ends_with(part) && msg.len() > part.len();
        } else {
            let Some(at) = msg.find(part).filter(|&a| a > 0) else { return false };
            msg = &msg[at + part.len()..];
        }
    }
    msg.is_empty()
}

#[test]
fn error_templates() {
    let v = tables_json();
    let dup_rows = "| Product | Price |\n|---|---|\n| x | 1 |\n| x | 2 |";
    let dup_cols = "| A | A |\n|---|---|\n| 1 | 2 |";
    let paragraph = "Intro.\n\n| A |\n|---|\n| 1 |";
    let p1 = anchor_of(paragraph, "p1");
    use serde_json::json;
    let produced: Vec<(crate::Error, &str)> = vec![
        (err(INITIAL, json!({"action": "delete_row", "rowIndex": 0, "values": ["x"]})), "Field '<Name>'"),
        (
            err(INITIAL, json!({"action": "delete_row", "where": {"column": "Product", "equals": "Beef"}})),
            "No row",
        ),
        (
            err(dup_rows, json!({"action": "delete_row", "where": {"column": "Product", "equals": "x"}})),
            "Found",
        ),
        (err(INITIAL, json!({"action": "delete_column", "column": "Weight"})), "Column '<n>' was"),
        (err(dup_cols, json!({"action": "delete_column", "column": "A"})), "Column '<n>' has"),
        (err(INITIAL, json!({"action": "delete_row"})), "Select a row"),
        (err(INITIAL, json!({"action": "rename_column", "newName": "X"})), "Select a column"),
        (
            err(
                INITIAL,
                json!({"action": "update_cells", "updates": [
                    {"rowIndex": 2, "columnIndex": 0, "value": "a"}, {"rowIndex": 2, "column": "Product", "value": "b"}]}),
            ),
            "Cell at rowIndex=<r>, columnIndex=<c> is",
        ),
        (
            err(INITIAL, json!({"action": "insert_row", "values": ["a\u{0}", "1", "2"]})),
            "A table cell cannot",
        ),
        (
            err(
                INITIAL,
                json!({"action": "update_cells", "updates": [{"rowIndex": 0, "columnIndex": 0, "value": "a|b", "valueFormat": "markdown"}]}),
            ),
            "Inline Markdown",
        ),
        (
            err(
                "| A |\n|---|\n| 1 | 2 |",
                json!({"action": "rename_column", "columnIndex": 0, "newName": "B"}),
            ),
            "The table contains",
        ),
        (
            plan(paragraph, &p1, &request(json!({"action": "delete_row", "rowIndex": 0}))).unwrap_err(),
            "The target",
        ),
        (
            err(
                INITIAL,
                json!({"action": "update_cells", "updates": [{"rowIndex": 0, "columnIndex": 1, "value": " 7"}]}),
            ),
            "Cell at rowIndex=<r>, columnIndex=<c> did",
        ),
    ];
    for t in v["errorTemplates"].as_array().unwrap() {
        let template = t["template"].as_str().unwrap();
        let (e, _) = produced
            .iter()
            .find(|(_, start)| template.starts_with(start))
            .unwrap_or_else(|| panic!("no producer for {template}"));
        assert!(matches_template(template, &e.message), "{template} vs {}", e.message);
        let code = t["code"].as_str().unwrap_or("INVALID_ARGUMENT");
        assert_eq!(e.code.as_str(), code, "{template}");
    }
    assert_eq!(produced[0].0.message, "Field 'values' is not valid for action 'delete_row'.");
    assert_eq!(produced[1].0.message, "No row has value 'Beef' in column Product.");
    assert_eq!(produced[2].0.message, "Found 2 rows with value 'x' in column Product; use rowIndex.");
    assert_eq!(produced[4].0.message, "Column 'A' has multiple matches; use columnIndex.");
    assert_eq!(
        produced[12].0.message,
        "Cell at rowIndex=0, columnIndex=1 did not preserve its expected visible value."
    );
}

#[test]
fn allowed_fields_per_action() {
    use serde_json::json;
    let all = [
        ("updates", json!([{"rowIndex": 0, "columnIndex": 0, "value": "v"}])),
        ("values", json!(["a", "b", "c"])),
        ("valuesByColumn", json!({"Product": "a"})),
        ("beforeRowIndex", json!(0)),
        ("rowIndex", json!(0)),
        ("where", json!({"column": "Product", "equals": "Pork"})),
        ("name", json!("N")),
        ("defaultValue", json!("d")),
        ("alignment", json!("left")),
        ("beforeColumn", json!("Price")),
        ("beforeColumnIndex", json!(0)),
        ("column", json!("Price")),
        ("columnIndex", json!(1)),
        ("newName", json!("X")),
    ];
    for action in TableAction::ALL {
        for (field, value) in &all {
            let mut r = serde_json::Map::new();
            r.insert("action".into(), json!(action.as_str()));
            r.insert((*field).into(), value.clone());
            let result = edit(INITIAL, serde_json::Value::Object(r));
            let refused = format!("Field '{field}' is not valid for action '{}'.", action.as_str());
            if action.allowed_fields().contains(field) {
                assert!(result.as_ref().err().is_none_or(|e| e.message != refused), "{action:?} {field}");
            } else {
                assert_eq!(result.unwrap_err().message, refused);
            }
        }
        // null counts as absent.
        let r = json!({"action": action.as_str(), "updates": null, "newName": null, "where": null});
        assert!(edit(INITIAL, r).err().is_none_or(|e| !e.message.starts_with("Field")));
    }
}

#[test]
fn pointer_rules() {
    use serde_json::json;
    let r = request(json!({"action": "delete_row", "rowIndex": 0}));
    // Unhashed pointer.
    let e = plan(INITIAL, "t1", &r).unwrap_err();
    assert_eq!((e.code, e.message.as_str()), (ErrorCode::InvalidArgument, UNHASHED_POINTER_MESSAGE));
    // Stale pointer: after an edit the old anchor is a conflict.
    let a0 = anchor_of(INITIAL, "t1");
    let (t1, a1) = plan(INITIAL, &a0, &r).unwrap();
    assert_ne!(a0, a1);
    assert_eq!(plan(&t1, &a0, &r).unwrap_err().code, ErrorCode::Conflict);
    // v1 anchors are accepted; relocation follows the table when a table is added above it.
    let v1 = a0.rsplit_once('~').unwrap().0.to_owned();
    assert!(plan(INITIAL, &v1, &r).is_ok());
    let moved = format!("| X |\n|---|\n| y |\n\n{INITIAL}");
    let (t, a) = plan(&moved, &a0, &r).unwrap();
    assert!(a.starts_with("t2~"));
    assert!(t.starts_with("| X |\n|---|\n| y |\n\n| Product"));
    // Garbage pointers.
    assert_eq!(plan(INITIAL, "t1~zz", &r).unwrap_err().code, ErrorCode::InvalidArgument);
    assert_eq!(plan(INITIAL, "", &r).unwrap_err().code, ErrorCode::InvalidArgument);
}

#[test]
fn selection_and_validation_messages() {
    use serde_json::json;
    let cases = [
        (
            json!({"action": "delete_row", "rowIndex": 3}),
            "rowIndex 3 is out of range; the table has 3 data rows (0 to 2).",
        ),
        (
            json!({"action": "delete_row", "rowIndex": -1}),
            "rowIndex -1 is out of range; the table has 3 data rows (0 to 2).",
        ),
        (
            json!({"action": "delete_column", "columnIndex": 5}),
            "columnIndex 5 is out of range; the table has 3 columns (0 to 2).",
        ),
        (
            json!({"action": "update_cells", "updates": []}),
            "update_cells needs a non-empty updates array: {value, rowIndex | where, column | columnIndex}.",
        ),
        (
            json!({"action": "update_cells", "updates": [{"rowIndex": 0, "columnIndex": 0}]}),
            "Every item of updates needs a value.",
        ),
        (
            json!({"action": "update_cells", "updates": [{"rowIndex": 0, "value": "v"}]}),
            COLUMN_SELECTOR_MESSAGE,
        ),
        (
            json!({"action": "update_cells", "updates": [{"columnIndex": 0, "value": "v"}]}),
            ROW_SELECTOR_MESSAGE,
        ),
        (json!({"action": "delete_row", "where": {"equals": "Pork"}}), COLUMN_SELECTOR_MESSAGE),
        (
            json!({"action": "delete_row", "where": {"column": "Product"}}),
            "The where selector needs 'equals': the exact cell value to match.",
        ),
        (json!({"action": "insert_row"}), "Provide exactly one of values or valuesByColumn."),
        (
            json!({"action": "insert_row", "values": ["a"], "valuesByColumn": {"Product": "a"}}),
            "Provide exactly one of values or valuesByColumn.",
        ),
        (
            json!({"action": "insert_row", "values": ["a"]}),
            "values has 1 item(s) but the table has 3 column(s); give one value per column or use valuesByColumn.",
        ),
        (
            json!({"action": "insert_row", "valuesByColumn": {"Weight": "1"}}),
            "Column 'Weight' was not found.",
        ),
        (
            json!({"action": "insert_row", "values": ["a", "b", "c"], "beforeRowIndex": 3}),
            "beforeRowIndex 3 is out of range; the table has 3 data rows (0 to 2). Omit beforeRowIndex to append the row.",
        ),
        (json!({"action": "insert_column"}), "insert_column needs a non-blank name."),
        (json!({"action": "insert_column", "name": " \u{3000}"}), "insert_column needs a non-blank name."),
        (
            json!({"action": "insert_column", "name": "N", "beforeColumn": "Price", "beforeColumnIndex": 1}),
            "Use at most one of beforeColumn or beforeColumnIndex.",
        ),
        (
            json!({"action": "insert_column", "name": "N", "beforeColumnIndex": 3}),
            "beforeColumnIndex 3 is out of range; the table has 3 columns (0 to 2). Omit it to append the column.",
        ),
        (json!({"action": "rename_column", "column": "Price"}), "rename_column needs a non-blank newName."),
        (
            json!({"action": "rename_column", "column": "", "newName": "x"}),
            "An empty column name cannot select a column; use columnIndex.",
        ),
        (
            json!({"action": "set_alignment", "column": "Price"}),
            "set_alignment needs alignment: none, left, center or right.",
        ),
        (json!({"action": "insert_column", "name": "a\tb"}), CONTROL_CHARACTER_MESSAGE),
        (
            json!({"action": "insert_column", "name": "N", "defaultValue": "\u{7f}"}),
            CONTROL_CHARACTER_MESSAGE,
        ),
        (
            json!({"action": "update_cells", "updates": [{"rowIndex": 0, "columnIndex": 0, "value": "a\r", "valueFormat": "markdown"}]}),
            CONTROL_CHARACTER_MESSAGE,
        ),
    ];
    for (json, message) in cases {
        let e = err(INITIAL, json.clone());
        assert_eq!(e.message, message, "{json}");
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{json}");
    }
    let one = "| Name |\n|---|\n| x |";
    assert_eq!(
        err(one, json!({"action": "delete_column", "columnIndex": 0})).message,
        "The table's only column cannot be deleted; delete the whole table with kb_patch instead."
    );
    let dup = "| A | A |\n|---|---|\n| 1 | 2 |";
    let e = err(dup, json!({"action": "insert_row", "valuesByColumn": {"A": "1"}}));
    assert_eq!(
        (e.code, e.message.as_str()),
        (ErrorCode::Conflict, "Column 'A' has multiple matches; use values instead of valuesByColumn.")
    );
    assert!(e.conflict.is_none());
    // Markdown values may contain escaped pipes.
    let (t, _) = edit(
        INITIAL,
        json!({"action": "update_cells", "updates": [{"rowIndex": 0, "columnIndex": 0, "value": "a\\|b", "valueFormat": "markdown"}]}),
    )
    .unwrap();
    assert_eq!(table_projection(&t).rows[0][0], "a|b");
}

#[test]
fn minimal_edits_keep_everything_else() {
    use serde_json::json;
    let doc = format!("# 在庫\r\n\r\nBefore.\r\n\r\n{}\r\n\r\nAfter.\r\n", INITIAL.replace('\n', "\r\n"));
    // insert_column appends with the line's own padding style and keeps CRLF.
    let (t, _) = edit(
        &doc,
        json!({"action": "insert_column", "name": "Note", "defaultValue": "ok", "alignment": "left"}),
    )
    .unwrap();
    assert_eq!(
        t,
        "# 在庫\r\n\r\nBefore.\r\n\r\n| Product | Price | Count | Note |\r\n|:--------|------:|:-----:|:---|\r\n| Pork    | 25    | 2     | ok |\r\n| Chicken | 18    | 3     | ok |\r\n| Veg     | 5     | 4     | ok |\r\n\r\nAfter.\r\n"
    );
    // insert before a column.
    let (t, _) =
        edit(INITIAL, json!({"action": "insert_column", "name": "ID", "beforeColumn": "Product"})).unwrap();
    assert_eq!(
        t,
        "| ID | Product | Price | Count |\n|---|:--------|------:|:-----:|\n|  | Pork    | 25    | 2     |\n|  | Chicken | 18    | 3     |\n|  | Veg     | 5     | 4     |"
    );
    assert_eq!(table_projection(&t).rows[0], vec!["", "Pork", "25", "2"]);
    // delete_column in the middle and at the end.
    let (t, _) = edit(INITIAL, json!({"action": "delete_column", "column": "Price"})).unwrap();
    assert_eq!(
        t,
        "| Product | Count |\n|:--------|:-----:|\n| Pork    | 2     |\n| Chicken | 3     |\n| Veg     | 4     |"
    );
    let (t, _) = edit(INITIAL, json!({"action": "delete_column", "columnIndex": 2})).unwrap();
    assert_eq!(
        t,
        "| Product | Price |\n|:--------|------:|\n| Pork    | 25    |\n| Chicken | 18    |\n| Veg     | 5     |"
    );
    // Pipe-less tables.
    let bare = "Name | Price | Qty\n---|---:|---\nChicken | 25 | 1";
    let (t, _) = edit(bare, json!({"action": "delete_column", "column": "Qty"})).unwrap();
    assert_eq!(t, "Name | Price\n---|---:\nChicken | 25");
    let (t, _) = edit(bare, json!({"action": "delete_column", "column": "Name"})).unwrap();
    assert_eq!(t, "Price | Qty\n---:|---\n25 | 1");
    let (t, _) = edit(bare, json!({"action": "insert_column", "name": "Note", "defaultValue": "x"})).unwrap();
    assert_eq!(t, "Name | Price | Qty | Note\n---|---:|---|---\nChicken | 25 | 1 | x");
    let (t, _) = edit(bare, json!({"action": "insert_row", "values": ["Beef", "30", "2"]})).unwrap();
    assert_eq!(t, "Name | Price | Qty\n---|---:|---\nChicken | 25 | 1\nBeef | 30 | 2");
    // Emptying an edge cell of a pipe-less line re-renders that line with the needed pipe.
    let (t, _) = edit(
        bare,
        json!({"action": "update_cells", "updates": [{"rowIndex": 0, "columnIndex": 0, "value": ""}]}),
    )
    .unwrap();
    assert_eq!(t, "Name | Price | Qty\n---|---:|---\n|  | 25 | 1");
    let (t, _) = edit(
        bare,
        json!({"action": "update_cells", "updates": [{"rowIndex": 0, "columnIndex": 2, "value": ""}]}),
    )
    .unwrap();
    assert_eq!(table_projection(&t).rows[0], vec!["Chicken", "25", ""]);
    // Missing physical cells: the line is re-rendered.
    let short = "| A | B | C |\n|---|---|---|\n| 1 |\n| 4 | 5 | 6 |";
    let (t, _) = edit(
        short,
        json!({"action": "update_cells", "updates": [{"rowIndex": 0, "column": "C", "value": "3"}]}),
    )
    .unwrap();
    assert_eq!(t, "| A | B | C |\n|---|---|---|\n| 1 |  | 3 |\n| 4 | 5 | 6 |");
    let (t, _) = edit(short, json!({"action": "delete_column", "column": "C"})).unwrap();
    assert_eq!(t, "| A | B |\n|---|---|\n| 1 |\n| 4 | 5 |");
    // Delete the only row; then append to a body-less table.
    let single = "| A | B |\n|---|---|\n| 1 | 2 |\n\nNext.";
    let (t, a) = edit(single, json!({"action": "delete_row", "rowIndex": 0})).unwrap();
    assert_eq!(t, "| A | B |\n|---|---|\n\nNext.");
    let (t, _) = plan(&t, &a, &request(json!({"action": "insert_row", "values": ["x", "y"]}))).unwrap();
    assert_eq!(t, "| A | B |\n|---|---|\n| x | y |\n\nNext.");
    // Compact delimiter and rows stay compact.
    let compact = "|a|b|\n|-|-|\n|1|2|";
    let (t, _) =
        edit(compact, json!({"action": "insert_column", "name": "c", "beforeColumnIndex": 1})).unwrap();
    assert_eq!(t, "|a|c|b|\n|-|---|-|\n|1||2|");
    let (t, _) =
        edit(compact, json!({"action": "set_alignment", "columnIndex": 1, "alignment": "right"})).unwrap();
    assert_eq!(t, "|a|b|\n|-|---:|\n|1|2|");
    // Indented tables keep their indentation on new lines.
    let indented = "  | A | B |\n  |---|---|\n  | 1 | 2 |";
    let (t, _) =
        edit(indented, json!({"action": "insert_row", "values": ["3", "4"], "beforeRowIndex": 0})).unwrap();
    assert_eq!(t, "  | A | B |\n  |---|---|\n  | 3 | 4 |\n  | 1 | 2 |");
}

#[test]
fn japanese_cells() {
    use serde_json::json;
    let doc = "# 在庫表\n\n| 品名 | 価格 | 備考 |\n|:-----|-----:|------|\n| 豚肉   | 250 | 国産 |\n| 鶏肉   | 180 | ブラジル産 |\n\n以上。\n";
    let (t, a) = edit(
        doc,
        json!({"action": "update_cells", "updates": [
            {"where": {"column": "品名", "equals": "鶏肉"}, "column": "価格", "value": "２００"},
            {"rowIndex": 0, "column": "備考", "value": "　国産　*特選*"}]}),
    )
    .unwrap();
    assert_eq!(
        t,
        "# 在庫表\n\n| 品名 | 価格 | 備考 |\n|:-----|-----:|------|\n| 豚肉   | 250 | 　国産　\\*特選\\* |\n| 鶏肉   | ２００ | ブラジル産 |\n\n以上。\n"
    );
    let p = table_projection(&t);
    assert_eq!(p.rows[0][2], "　国産　*特選*");
    let (t, a) = plan(
        &t,
        &a,
        &request(json!({"action": "insert_row", "valuesByColumn": {"品名": "牛肉", "価格": "500"}})),
    )
    .unwrap();
    assert!(t.contains("| 鶏肉   | ２００ | ブラジル産 |\n| 牛肉 | 500 |  |\n\n以上。"), "{t}");
    let (t, a) =
        plan(&t, &a, &request(json!({"action": "rename_column", "column": "備考", "newName": "産地"})))
            .unwrap();
    let (t, _) = plan(
        &t,
        &a,
        &request(json!({"action": "delete_row", "where": {"columnIndex": 0, "equals": "豚肉"}})),
    )
    .unwrap();
    let p = table_projection(&t);
    assert_eq!(p.columns.iter().map(|c| c.0.as_str()).collect::<Vec<_>>(), ["品名", "価格", "産地"]);
    assert_eq!(p.rows, vec![vec!["鶏肉", "２００", "ブラジル産"], vec!["牛肉", "500", ""]]);
    assert_eq!(
        err(doc, json!({"action": "delete_row", "where": {"column": "品名", "equals": "羊肉"}})).message,
        "No row has value '羊肉' in column 品名."
    );
}

#[test]
fn insert_delete_round_trip_crlf_100_times() {
    use serde_json::json;
    let v = tables_json();
    let case =
        v["cases"].as_array().unwrap().iter().find(|c| c["name"] == "insert-delete-round-trip-crlf").unwrap();
    let source = case["source"].as_str().unwrap();
    let mut text = source.to_owned();
    let mut pointer = anchor_of(source, "t1");
    for _ in 0..100 {
        let (t, p) =
            plan(&text, &pointer, &request(json!({"action": "insert_row", "values": ["Lamb", "35", "2"]})))
                .unwrap();
        let (t, p) = plan(
            &t,
            &p,
            &request(json!({"action": "delete_row", "where": {"column": "Product", "equals": "Lamb"}})),
        )
        .unwrap();
        assert_eq!(t, source);
        (text, pointer) = (t, p);
    }
    assert_eq!(pointer, anchor_of(source, "t1"));
}

// Property tests --------------------------------------------------------------------------------

const WORDS: &[&str] = &[
    "Pork",
    "鶏肉",
    "２００",
    "",
    "a b",
    "x",
    "**b**",
    "a\\|b",
    "[l](u)",
    "&amp;",
    "　全角　",
    "#",
    "-",
    "1.",
];

fn cell() -> impl Strategy<Value = String> {
    prop::sample::select(WORDS).prop_map(str::to_owned)
}

prop_compose! {
    /// A document with one standalone table: random pipes, padding, alignments and line endings.
    fn table_doc()(
        cols in 1usize..4,
        rows in prop_oneof![1 => Just(0usize), 4 => 1usize..4],
        cells in prop::collection::vec(cell(), 16),
        names in prop::collection::vec(prop::sample::select(&["A", "B", "品名", "価格", "A"][..]), 4),
        aligns in prop::collection::vec(prop::sample::select(&["---", ":---", "---:", ":-:", "-"][..]), 4),
        leading in any::<bool>(), trailing in any::<bool>(), pad in 0usize..3,
        crlf in any::<bool>(),
        prefix in prop::sample::select(&["", "# 見出し\n\n", "Intro.\n\n", "- item\n\n"][..]),
        suffix in prop::sample::select(&["", "\n", "\n\nAfter.\n", "\n\n| Z |\n|---|\n| z |\n"][..]),
    ) -> String {
        let eol = if crlf { "\r\n" } else { "\n" };
        let leading = leading || cols == 1;
        let trailing = trailing || cols == 1;
        let render = |cells: Vec<String>| {
            let sp = " ".repeat(pad);
            let body = cells.iter().map(|c| format!("{sp}{c}{sp}")).collect::<Vec<_>>().join("|");
            format!("{}{body}{}", if leading { "|" } else { "" }, if trailing { "|" } else { "" })
        };
        let mut lines = vec![
            render(names[..cols].iter().map(|s| s.to_string()).collect()),
            render(aligns[..cols].iter().map(|s| s.to_string()).collect()),
        ];
        for r in 0..rows {
            lines.push(render((0..cols).map(|c| {
                let v = cells[(r * 4 + c) % cells.len()].clone();
                if v.is_empty() && !leading && c == 0 { "x".to_owned() } else { v }
            }).collect()));
        }
        format!("{prefix}{}{}", lines.join(eol), suffix.replace('\n', eol))
    }
}

/// A column selector: mostly a valid index, sometimes a name, rarely both or neither.
fn column_selector() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::json;
    prop_oneof![
        7 => (0i64..3).prop_map(|i| json!({"columnIndex": i})),
        2 => prop::sample::select(&["A", "B", "品名", "価格", "", "Z"][..]).prop_map(|n| json!({"column": n})),
        1 => (-1i64..5).prop_map(|i| json!({"columnIndex": i, "column": "A"})),
        1 => Just(json!({})),
    ]
}

/// A row selector: mostly a valid index, sometimes `where`, rarely both or neither.
fn row_selector() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::json;
    prop_oneof![
        7 => (0i64..3).prop_map(|i| json!({"rowIndex": i})),
        3 => (column_selector(), value()).prop_map(|(c, v)| json!({"where": {
            "column": c.get("column"), "columnIndex": c.get("columnIndex"), "equals": v}})),
        1 => (-1i64..5).prop_map(|i| json!({"rowIndex": i, "where": {"columnIndex": 0, "equals": "x"}})),
        1 => Just(json!({})),
    ]
}

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => cell(),
        1 => prop::sample::select(&[" lead", "a|b", "x\ny", "trail\\", "&<>", "- li", "# h", "`c`"][..]).prop_map(str::to_owned),
    ]
}

fn merge(mut a: serde_json::Value, b: serde_json::Value) -> serde_json::Value {
    if let (Some(a), serde_json::Value::Object(b)) = (a.as_object_mut(), b) {
        a.extend(b);
    }
    a
}

/// Mostly valid `kb_edit_table` requests of every action, with some invalid ones mixed in.
fn any_request() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::json;
    let alignment = prop::option::of(prop::sample::select(&["none", "left", "center", "right"][..]));
    let row = prop_oneof![3 => (0i64..2).prop_map(|i| json!({"rowIndex": i})), 1 => row_selector()];
    let column = prop_oneof![3 => (0i64..2).prop_map(|i| json!({"columnIndex": i})), 1 => column_selector()];
    let update =
        (row, column, prop::option::weighted(0.95, value()), any::<bool>()).prop_map(|(r, c, v, md)| {
            merge(merge(r, c), json!({"value": v, "valueFormat": if md { "markdown" } else { "text" }}))
        });
    prop_oneof![
        3 => prop::collection::vec(update, 1..3)
            .prop_map(|u| json!({"action": "update_cells", "updates": u})),
        1 => (prop::collection::vec(value(), 1..4), prop::option::weighted(0.3, -1i64..4))
            .prop_map(|(v, b)| json!({"action": "insert_row", "values": v, "beforeRowIndex": b})),
        1 => (column_selector(), value(), prop::option::weighted(0.3, 0i64..3)).prop_map(|(c, v, b)| {
            let name = c.get("column").cloned().unwrap_or(json!("A"));
            json!({"action": "insert_row", "valuesByColumn": {name.as_str().unwrap_or("A"): v}, "beforeRowIndex": b})
        }),
        1 => row_selector().prop_map(|r| merge(json!({"action": "delete_row"}), r)),
        1 => (value(), prop::option::of(value()), alignment.clone(), prop::option::weighted(0.3, column_selector()))
            .prop_map(|(n, d, a, before)| {
                let mut r = json!({"action": "insert_column", "name": n, "defaultValue": d, "alignment": a});
                if let Some(b) = before {
                    r["beforeColumn"] = b.get("column").cloned().unwrap_or(json!(null));
                    r["beforeColumnIndex"] = b.get("columnIndex").cloned().unwrap_or(json!(null));
                }
                r
            }),
        1 => column_selector().prop_map(|c| merge(json!({"action": "delete_column"}), c)),
        1 => (column_selector(), value()).prop_map(|(c, n)| merge(json!({"action": "rename_column", "newName": n}), c)),
        1 => (column_selector(), alignment).prop_map(|(c, a)| merge(json!({"action": "set_alignment", "alignment": a}), c)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    /// A successful edit changes only bytes inside the table; the new pointer is the table's.
    #[test]
    fn edits_stay_inside_the_table(doc in table_doc(), req in any_request()) {
        let parsed = Document::parse(&doc);
        let Some(table) = parsed.elements.iter().find(|e| e.kind == ElementKind::Table) else {
            return Ok(());
        };
        let request = request(req);
        match plan(&doc, &table.anchor(), &request) {
            Ok((new_text, pointer)) => {
                let start = table.range.start;
                bytes_outside_unchanged(&doc, &new_text, &table.range)?;
                let after = Document::parse(&new_text);
                let el = after.elements.iter().find(|e| e.anchor() == pointer).unwrap();
                prop_assert_eq!(el.kind, ElementKind::Table);
                prop_assert_eq!(el.range.start, start);
                if new_text == doc {
                    prop_assert_eq!(pointer, table.anchor());
                }
                // The shape changed as the action says.
                let before = Table::parse(&table.text).unwrap().projection(&table.text);
                let now = Table::parse(&el.text).unwrap().projection(&el.text);
                let (dc, dr) = shape_change(request.action);
                prop_assert_eq!(now.column_count as isize, before.column_count as isize + dc);
                prop_assert_eq!(now.row_count as isize, before.row_count as isize + dr);
                prop_assert!(!now.has_extra_cells);
                if request.action == TableAction::UpdateCells {
                    for u in request.updates.iter().flatten() {
                        if let (Some(r), Some(c), Some(v), None) = (u.row_index, u.column_index, &u.value, u.value_format.filter(|f| *f == ValueFormat::Markdown)) {
                            prop_assert_eq!(&now.rows[r as usize][c as usize], v);
                        }
                    }
                }
            }
            Err(e) => {
                prop_assert!(!e.message.is_empty());
            }
        }
    }

    /// Arbitrary text and requests never panic: random text, and real tables with junk spliced in.
    #[test]
    fn arbitrary_input_never_panics(
        text in "[|\\-: a\\\\*`#\n\r表]{0,80}",
        doc in table_doc(),
        junk in "[|\\-: a\\\\*`#>\n\r表]{1,6}",
        at in any::<prop::sample::Index>(),
        req in any_request(),
        pointer in prop::sample::select(&["t1", "t2", "t1~0000000000000000~0000000000000000"][..]),
    ) {
        let request = request(req);
        let mut mutated = doc;
        let mut i = at.index(mutated.len() + 1);
        while !mutated.is_char_boundary(i) {
            i -= 1;
        }
        mutated.insert_str(i, &junk);
        for text in [text, mutated] {
            let parsed = Document::parse(&text);
            let anchor = parsed.elements.iter().find(|e| e.kind == ElementKind::Table).map(|e| e.anchor());
            if let (Some(anchor), Some(table)) =
                (&anchor, parsed.elements.iter().find(|e| e.kind == ElementKind::Table))
                && let Ok((new_text, _)) = plan(&text, anchor, &request)
            {
                bytes_outside_unchanged(&text, &new_text, &table.range)?;
            }
            let _ = plan(&text, pointer, &request);
        }
    }
}

// Issue #19 (fuzzing): tables inside the Markdown grammar of `markdown::tests` (sections,
// lists, quotes, fences, front matter, CR/CRLF/LF mixes, stray pipes, full-width text).
proptest! {
    #![proptest_config(ProptestConfig::with_cases(crate::markdown::tests::cases(160)))]

    /// Whatever surrounds the table, a successful edit changes only bytes inside it, leaves a
    /// table of the asked shape at the same place, and the document keeps every model invariant.
    #[test]
    fn edits_of_tables_in_markdownish_documents_stay_inside(
        doc in crate::markdown::tests::markdownish(),
        pick in any::<prop::sample::Index>(),
        req in any_request(),
    ) {
        let parsed = Document::parse(&doc);
        let tables: Vec<_> = parsed.elements.iter().filter(|e| e.kind == ElementKind::Table).collect();
        if tables.is_empty() {
            return Ok(());
        }
        let table = tables[pick.index(tables.len())];
        let request = request(req);
        match plan(&doc, &table.anchor(), &request) {
            Ok((new_text, pointer)) => {
                let start = table.range.start;
                bytes_outside_unchanged(&doc, &new_text, &table.range)?;
                let after = Document::parse(&new_text);
                crate::markdown::tests::check_invariants(&new_text, &after)?;
                let el = after.elements.iter().find(|e| e.anchor() == pointer);
                prop_assert!(el.is_some(), "the new anchor {} is not in {:?}", pointer, new_text);
                let el = el.unwrap();
                prop_assert_eq!(el.kind, ElementKind::Table);
                prop_assert_eq!(el.range.start, start);
                let before = Table::parse(&table.text).unwrap().projection(&table.text);
                let now = Table::parse(&el.text).unwrap().projection(&el.text);
                let (dc, dr) = shape_change(request.action);
                prop_assert_eq!(now.column_count as isize, before.column_count as isize + dc);
                prop_assert_eq!(now.row_count as isize, before.row_count as isize + dr);
            }
            Err(e) => {
                prop_assert!(!e.message.is_empty() && !e.message.contains('\n'), "{:?}", e.message);
            }
        }
    }
}

/// Found with 20,000 cases (issue #19): a `where.equals` or column name with a line break was
/// echoed raw, so the error was two lines; control characters are escaped in messages now.
#[test]
fn messages_quote_values_on_one_line() {
    let doc = "H0 | H1\n:-- | :--\n\n\n# word";
    let anchor = anchor_of(doc, "t1");
    let req =
        request(serde_json::json!({"action": "delete_row", "where": {"columnIndex": 0, "equals": "x\ny"}}));
    let err = plan(doc, &anchor, &req).unwrap_err();
    assert_eq!(err.message, "No row has value 'x\\ny' in column H0.");
    let req = request(serde_json::json!({"action": "delete_column", "column": "a\tb"}));
    let err = plan(doc, &anchor, &req).unwrap_err();
    assert_eq!(err.message, "Column 'a\\tb' was not found.");
}

/// How an action changes a table's (columns, rows).
fn shape_change(action: TableAction) -> (isize, isize) {
    match action {
        TableAction::InsertRow => (0, 1),
        TableAction::DeleteRow => (0, -1),
        TableAction::InsertColumn => (1, 0),
        TableAction::DeleteColumn => (-1, 0),
        _ => (0, 0),
    }
}

/// `new` keeps `old`'s bytes before and after `range` (the edited element) unchanged.
fn bytes_outside_unchanged(
    old: &str,
    new: &str,
    range: &std::ops::Range<usize>,
) -> Result<(), proptest::test_runner::TestCaseError> {
    prop_assert_eq!(&new[..range.start], &old[..range.start]);
    prop_assert!(new.len() >= old.len() - range.end);
    prop_assert_eq!(&new[new.len() - (old.len() - range.end)..], &old[range.end..]);
    Ok(())
}
