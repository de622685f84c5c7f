use super::*;

fn tables_json() -> serde_json::Value {
    let path = format!("{}/../shared/spec/vectors/tables.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
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
