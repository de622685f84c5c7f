//! The guides compiled into the binary, `kb_read_guide`'s rules and the server instructions.

use std::collections::BTreeSet;

use super::*;
use crate::config::ToolsConfig;
use crate::engine::{GUIDE_PAGE_LIMIT, GUIDES, Guide, read_guides};

/// `kb_xxx` tool names mentioned in `text`.
fn tool_mentions(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(i) = rest.find("kb_") {
        let before = rest[..i].chars().next_back();
        let name: String = rest[i..].chars().take_while(|c| c.is_ascii_lowercase() || *c == '_').collect();
        if !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') && name.len() > 3 {
            out.insert(name.trim_end_matches('_').to_owned());
        }
        rest = &rest[i + 3..];
    }
    out
}

/// Lines outside fenced code blocks.
fn prose_lines(text: &str) -> Vec<&str> {
    let mut fenced = false;
    text.lines()
        .filter(|l| {
            if l.trim_start().starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .collect()
}

#[test]
fn every_guide_page_keeps_the_rules() {
    let existing: BTreeSet<&str> = tool_names(&ToolsConfig::default()).into_iter().collect();
    assert_eq!(GUIDES.len(), 11);
    for g in GUIDES {
        let chars = g.body.chars().count();
        assert!(chars > 500 && chars <= GUIDE_PAGE_LIMIT, "{}: {chars} characters", g.name);
        assert!(g.body.starts_with("Read this "), "{}: must open with when to read it", g.name);
        let first = g.body.split("\n\n").next().unwrap_or("");
        assert!(!first.contains("\n#"), "{}: the opening is one paragraph", g.name);
        for line in prose_lines(g.body) {
            assert!(!line.starts_with("# "), "{}: no H1 (the tool adds `# name`): {line}", g.name);
        }
        for name in tool_mentions(g.body) {
            let planned = g.body.contains(&format!("`{name}` (planned)"));
            if existing.contains(name.as_str()) {
                assert!(!planned, "{}: `{name}` exists; drop its (planned) mark", g.name);
            } else {
                assert!(
                    planned,
                    "{}: `{name}` is not a tool; mark it `{name}` (planned) or remove it",
                    g.name
                );
            }
        }
    }
    // The check can fail: an unknown tool name is found.
    assert!(tool_mentions("use `kb_frobnicate` or kb_read.").contains("kb_frobnicate"));
}

#[test]
fn guide_descriptions_are_the_specification_table() {
    let Some(spec) = crate::testdata::shared_or_skip("spec/catalog.md") else { return };
    let text = std::fs::read_to_string(spec).unwrap();
    let section = &text[text.find("#### 6.7.4").unwrap()..text.find("#### 6.7.5").unwrap()];
    let table: Vec<(String, String)> = section
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split(" | ").collect();
            let name = cells.first()?.strip_prefix("| `")?.strip_suffix('`')?;
            Some((name.to_owned(), cells.get(1)?.trim_end_matches(" |").to_owned()))
        })
        .collect();
    let ours: Vec<(String, String)> =
        GUIDES.iter().map(|g| (g.name.to_owned(), g.description.to_owned())).collect();
    assert_eq!(ours, table);
}

#[test]
fn instructions_end_with_the_guide_list() {
    let text = instructions();
    assert!(text.contains("kb_search") && text.contains("kb_read") && text.contains("kb_patch"));
    let tail: Vec<&str> =
        text.trim_end().lines().rev().take(12).collect::<Vec<_>>().into_iter().rev().collect();
    assert_eq!(tail[0], "Guides (read with kb_read_guide, e.g. {\"names\": [\"pointers\", \"patching\"]}):");
    for (line, g) in tail[1..].iter().zip(GUIDES) {
        assert_eq!(*line, format!("- {}: {}", g.name, g.description));
    }
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn guides_are_read_in_order_once_each() {
    let blocks =
        read_guides(GUIDES, &names(&["tables", "pointers", "ＴＡＢＬＥＳ ", "Pointers"])).unwrap().blocks;
    assert_eq!(blocks.len(), 2);
    assert!(blocks[0].starts_with("# tables\n\nRead this "));
    assert!(blocks[1].starts_with("# pointers\n\n"));
    let e = read_guides(GUIDES, &[]).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    assert_eq!(
        e.message,
        "names must list at least one guide name; see the server instructions for the names."
    );
    assert_eq!(read_guides(GUIDES, &names(&[" "])).unwrap_err().code, ErrorCode::InvalidArgument);
}

#[test]
fn unknown_names_list_close_names_and_return_nothing() {
    let e = read_guides(GUIDES, &names(&["pointers", "pointer"])).unwrap_err();
    assert_eq!(e.code, ErrorCode::NotFound);
    assert_eq!(
        e.message,
        "Unknown guide name `pointer` (close: `pointers`) — use the names in the server instructions; no guide was returned."
    );
    let e = read_guides(GUIDES, &names(&["catalog-indx", "zzzzzz"])).unwrap_err();
    assert_eq!(
        e.message,
        "Unknown guide names `catalog-indx` (close: `catalog-index`, `catalog`), `zzzzzz` (no close names) — use the names in the server instructions; no guide was returned."
    );
}

#[test]
fn the_size_limit_counts_characters_of_the_bodies() {
    let big = "あ".repeat(30_000);
    let mid = "x".repeat(25_000);
    let registry = [
        Guide { name: "big", description: "", body: big.leak() },
        Guide { name: "mid", description: "", body: mid.leak() },
    ];
    assert!(read_guides(&registry, &names(&["big"])).is_ok());
    assert!(read_guides(&registry, &names(&["mid"])).is_ok());
    let e = read_guides(&registry, &names(&["big", "mid"])).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    assert_eq!(
        e.message,
        "The requested guides total 55,000 characters, over the 50,000-character limit; call kb_read_guide several times with fewer names:\nbig: 30,000\nmid: 25,000"
    );
    // Unknown names are checked before the size.
    assert_eq!(
        read_guides(&registry, &names(&["big", "mid", "nope"])).unwrap_err().code,
        ErrorCode::NotFound
    );
}
