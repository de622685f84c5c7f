//! Bounded answers (issue #26 item 4, `docs/tools.md` "Bounded answers"): no answer exceeds its
//! budget, every cut is explicit, and following the pages gives back exactly what one unbounded
//! answer would have held. Generated in the test: a 50,000-heading outline and a 200,000-row
//! table.

use std::ffi::OsStr;

use serde_json::{Value, json};

use crate::rpc::Rpc;
use crate::support::Project;

/// The default budget of one answer (`tools.maxAnswerBytes`).
const BUDGET: usize = 65_536;

fn server(project: &Project) -> Rpc {
    Rpc::start(&[
        OsStr::new("--project-root"),
        project.root().as_os_str(),
        OsStr::new("--embedding-provider"),
        OsStr::new("none"),
    ])
}

/// Calls `tool` and returns (structured result, bytes of its text block).
fn call_sized(rpc: &mut Rpc, tool: &str, args: Value) -> (Value, usize) {
    let frame = rpc.call_raw(tool, args);
    let result = &frame["result"];
    assert_eq!(
        result["isError"],
        false,
        "{tool} failed: {}",
        &frame.to_string()[..500.min(frame.to_string().len())]
    );
    let text = result["content"][0]["text"].as_str().unwrap_or("");
    (result["structuredContent"].clone(), text.len())
}

/// `(level, title)` of every heading in `nodes`, in document order.
fn preorder(nodes: &Value, out: &mut Vec<(u64, String)>) {
    for n in nodes.as_array().unwrap() {
        out.push((n["level"].as_u64().unwrap(), n["title"].as_str().unwrap().to_owned()));
        preorder(&n["children"], out);
    }
}

#[test]
fn a_50000_heading_outline_pages_within_the_budget_and_reassembles_exactly() {
    let project = Project::empty();
    let mut text = String::new();
    let mut expected = Vec::new();
    for i in 0..50_000u64 {
        let level = 1 + (i % 4);
        let title = format!("見出し {i} の説明");
        text.push_str(&format!("{} {title}\n\n", "#".repeat(level as usize)));
        expected.push((level, title));
    }
    project.write("big.md", &text);
    let mut rpc = server(&project);
    let mut got = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut request = json!({"path": "big.md"});
        if let Some(c) = &cursor {
            request["cursor"] = json!(c);
        }
        let (page, bytes) = call_sized(&mut rpc, "kb_outline", json!({"request": request}));
        pages += 1;
        assert!(bytes <= BUDGET, "page {pages} is {bytes} bytes");
        preorder(&page["headings"], &mut got);
        match page["nextCursor"].as_str() {
            Some(c) => {
                assert_eq!(page["truncated"], true, "{}", page["notice"]);
                assert!(page["notice"].as_str().unwrap().contains("pass nextCursor as cursor"));
                cursor = Some(c.to_owned());
            }
            None => break,
        }
        assert!(pages < 1000, "paging does not advance");
    }
    assert!(pages > 10, "{pages} pages for 50,000 headings");
    assert_eq!(got.len(), expected.len());
    assert_eq!(got, expected);

    // Filters: two levels deep only, and one heading's subtree.
    let (shallow, _) = call_sized(
        &mut rpc,
        "kb_outline",
        json!({"request": {"path": "big.md", "maxDepth": 1, "maxBytes": 2048}}),
    );
    let mut top = Vec::new();
    preorder(&shallow["headings"], &mut top);
    assert!(top.iter().all(|(level, _)| *level == 1), "{top:?}");
    let (under, _) = call_sized(&mut rpc, "kb_outline", json!({"request": {"path": "big.md", "under": "2"}}));
    let mut sub = Vec::new();
    preorder(&under["headings"], &mut sub);
    assert_eq!(sub, expected[4..8].to_vec());
    assert!(under["nextCursor"].is_null());

    // A cursor with other filters is refused in one sentence.
    let first = call_sized(&mut rpc, "kb_outline", json!({"request": {"path": "big.md"}})).0;
    let cursor = first["nextCursor"].as_str().unwrap();
    let frame =
        rpc.call_raw("kb_outline", json!({"request": {"path": "big.md", "cursor": cursor, "maxDepth": 2}}));
    assert_eq!(frame["result"]["isError"], true, "{frame}");
    assert!(frame.to_string().contains("other filters"), "{frame}");
}

#[test]
fn a_200000_row_table_is_read_in_parts_that_reassemble_to_the_exact_file() {
    let project = Project::empty();
    let mut text = String::from("# 表\n\n前置きの段落。\n\n| 番号 | 値 |\n|---:|:--|\n");
    for i in 0..200_000u32 {
        text.push_str(&format!("| {i} | 値{} |\n", i % 97));
    }
    text.push_str("\n後書きの段落。\n");
    project.write("table.md", &text);
    let mut rpc = server(&project);
    let max_bytes = 30_000;
    let mut out = String::new();
    let mut pointer: Option<String> = None;
    let mut pages = 0;
    let mut parts = 0;
    loop {
        let mut request = json!({"path": "table.md", "maxBytes": max_bytes});
        if let Some(p) = &pointer {
            request["pointer"] = json!(p);
        }
        let (page, bytes) = call_sized(&mut rpc, "kb_read", json!({"request": request}));
        pages += 1;
        assert!(bytes <= BUDGET, "page {pages} is {bytes} bytes");
        let markdown = page["markdown"].as_str().unwrap();
        assert!(markdown.len() <= max_bytes, "page {pages}: {} bytes of markdown", markdown.len());
        if page["truncated"] == true {
            parts += 1;
            assert_eq!(page["elements"][0]["kind"], "table");
            // Cut after a whole row.
            assert!(markdown.ends_with('\n'), "page {pages} ends inside a row");
            assert!(
                page["notice"].as_str().unwrap().contains("pass nextPointer as pointer"),
                "{}",
                page["notice"]
            );
            assert!(page["table"].is_null());
        }
        out.push_str(markdown);
        match page["nextPointer"].as_str() {
            Some(p) => pointer = Some(p.to_owned()),
            None => break,
        }
        assert!(pages < 2000, "paging does not advance");
    }
    assert!(parts > 50, "{parts} parts");
    assert_eq!(out.len(), text.len());
    assert!(out == text, "the pages do not reassemble the file");

    // A continuation of an element that changed since is refused, not misread.
    let first = call_sized(
        &mut rpc,
        "kb_read",
        json!({"request": {"path": "table.md", "pointer": "1.t1", "maxBytes": max_bytes}}),
    )
    .0;
    let next = first["nextPointer"].as_str().unwrap().to_owned();
    assert!(next.contains('@'), "{next}");
    project.write("table.md", &text.replace("| 7 | 値7 |", "| 7 | 変更 |"));
    let frame = rpc.call_raw(
        "kb_read",
        json!({"request": {"path": "table.md", "pointer": next, "maxBytes": max_bytes}}),
    );
    assert_eq!(frame["result"]["isError"], true, "{frame}");
    assert!(frame.to_string().contains("CONFLICT"), "{frame}");
}

/// A single line longer than the page (a 300 KB paragraph) is cut at character boundaries and
/// still reassembles.
#[test]
fn one_long_line_is_cut_at_character_boundaries() {
    let project = Project::empty();
    let text = format!("# 長い行\n\n{}\n", "日本語の文。".repeat(20_000));
    project.write("line.md", &text);
    let mut rpc = server(&project);
    let mut out = String::new();
    let mut pointer: Option<String> = None;
    for _ in 0..1000 {
        let mut request = json!({"path": "line.md", "maxBytes": 10_000});
        if let Some(p) = &pointer {
            request["pointer"] = json!(p);
        }
        let (page, _) = call_sized(&mut rpc, "kb_read", json!({"request": request}));
        out.push_str(page["markdown"].as_str().unwrap());
        match page["nextPointer"].as_str() {
            Some(p) => pointer = Some(p.to_owned()),
            None => break,
        }
    }
    assert!(out == text);
}

#[test]
fn kb_list_files_pages_within_the_budget_and_lists_each_file_once() {
    let project = Project::empty();
    for i in 0..3000 {
        project
            .write(&format!("docs/section-{:02}/ページ-{i:05}-with-a-rather-long-name.md", i % 40), "# x\n");
    }
    let mut rpc = server(&project);
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut request = json!({"maxBytes": 16_384});
        if let Some(c) = &cursor {
            request["cursor"] = json!(c);
        }
        let (page, bytes) = call_sized(&mut rpc, "kb_list_files", json!({"request": request}));
        pages += 1;
        assert!(bytes <= 16_384, "page {pages} is {bytes} bytes");
        for f in page["files"].as_array().unwrap() {
            seen.push(f["relativePath"].as_str().unwrap().to_owned());
        }
        match page["nextCursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    assert!(pages > 5, "{pages}");
    let mut unique = seen.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 3000);
    assert_eq!(seen.len(), 3000);
    // The default page stays within the default budget.
    let (_, bytes) = call_sized(&mut rpc, "kb_list_files", json!({"request": {}}));
    assert!(bytes <= BUDGET, "{bytes}");
    // A budget below the floor is refused in one sentence.
    let frame = rpc.call_raw("kb_list_files", json!({"request": {"maxBytes": 10}}));
    assert!(frame.to_string().contains("maxBytes must be at least 1024"), "{frame}");
}

/// A table of many tiny cells fits `maxBytes` as Markdown but not as a projection: the answer
/// stays within the budget, leaves the projection out and says so.
#[test]
fn a_table_projection_over_the_budget_is_left_out_with_a_notice() {
    let project = Project::empty();
    let mut text = String::from("|h|\n|-|\n");
    for i in 0..2900 {
        text.push_str(&format!("|{}|\n", i % 10));
    }
    project.write("tiny.md", &text);
    let mut rpc = server(&project);
    let (page, bytes) =
        call_sized(&mut rpc, "kb_read", json!({"request": {"path": "tiny.md", "pointer": "t1"}}));
    assert!(bytes <= BUDGET, "{bytes}");
    assert!(page["table"].is_null());
    assert!(page["notice"].as_str().unwrap().contains("projection was left out"), "{}", page["notice"]);
    assert_eq!(page["markdown"], text);
    // A small table keeps its projection and no notice.
    project.write("small.md", "|h|\n|-|\n|1|\n");
    let (page, _) =
        call_sized(&mut rpc, "kb_read", json!({"request": {"path": "small.md", "pointer": "t1"}}));
    assert_eq!(page["table"]["rowCount"], 1);
    assert!(page.get("notice").is_none() || page["notice"].is_null(), "{page}");
}

/// `kb_links` keeps its numeric cursor and `limit`, and the answer budget cuts a page of long
/// edges short: 1,000 links with 300-byte targets come in several pages, each within the budget.
#[test]
fn kb_links_pages_of_long_edges_stay_within_the_budget() {
    let project = Project::empty();
    let mut text = String::from("# リンク集\n\n");
    for i in 0..1000 {
        text.push_str(&format!("- [リンク {i}](missing/{}-{i:04}.md)\n", "d".repeat(300)));
    }
    project.write("links.md", &text);
    project.ok(&["reindex"]);
    let mut rpc = server(&project);
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut request = json!({"path": "links.md", "direction": "outgoing", "limit": 1000});
        if let Some(c) = &cursor {
            request["cursor"] = json!(c);
        }
        let (page, bytes) = call_sized(&mut rpc, "kb_links", json!({"request": request}));
        pages += 1;
        assert!(bytes <= BUDGET, "page {pages} is {bytes} bytes");
        assert_eq!(page["total"], 1000);
        for e in page["edges"].as_array().unwrap() {
            seen.push(e["to"].as_str().unwrap().to_owned());
        }
        match page["nextCursor"].as_str() {
            Some(c) => {
                assert!(page["notice"].as_str().unwrap().contains("pass nextCursor"), "{}", page["notice"]);
                cursor = Some(c.to_owned());
            }
            None => break,
        }
        assert!(pages < 100);
    }
    assert!(pages > 2, "{pages}");
    let mut unique = seen.clone();
    unique.sort();
    unique.dedup();
    assert_eq!((seen.len(), unique.len()), (1000, 1000));
}
