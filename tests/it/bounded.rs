//! Bounded answers (issue #26 item 4, `docs/tools.md` "Bounded answers"): no answer exceeds its
//! budget, every cut is explicit, and following the pages gives back exactly what one unbounded
//! answer would have held. Generated in the test: a 50,000-heading outline and a 200,000-row
//! table.

use std::ffi::OsStr;

use serde_json::{Value, json};

use crate::rpc::Rpc;
use crate::support::Project;

/// The default budget of one answer (`tools.maxAnswerBytes`).
const BUDGET: usize = 32_768;

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
        // The caller asked for pages of 30,000 bytes of Markdown, more than the default: its
        // answers may take up to three times that (`docs/tools.md`, "Bounded answers").
        assert!(bytes <= BUDGET.max(3 * max_bytes), "page {pages} is {bytes} bytes");
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

/// A server over `project` with the given YAML configuration (`lvs.yaml`).
fn server_with(project: &Project, yaml: &str) -> Rpc {
    project.write("lvs.yaml", yaml);
    Rpc::start(&[
        OsStr::new("--project-root"),
        project.root().as_os_str(),
        OsStr::new("--config"),
        project.root().join("lvs.yaml").as_os_str(),
        OsStr::new("--embedding-provider"),
        OsStr::new("none"),
    ])
}

/// `kb_check` with 3,000 issues (index entries whose files are missing) pages under the
/// default budget (issue #44 item 2): every page within it, a cut page says so in the catalog's
/// language, and the pages together hold every issue once.
#[test]
fn thousands_of_check_issues_page_within_the_budget() {
    let project = Project::empty();
    let mut index = String::from("version: 1\ndocs:\n");
    for i in 0..3000 {
        index.push_str(&format!("  - id: doc-{i:05}\n    path: gone/doc-{i:05}.md\n    title: 文書 {i}\n"));
    }
    project.write("docs/index.yaml", &index);
    let mut rpc = server_with(
        &project,
        "index:\n  autoIndex: false\ncatalog:\n  index: docs/index.yaml\n  language: ja\n",
    );
    let mut issues = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut args = json!({});
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let (page, bytes) = call_sized(&mut rpc, "kb_check", args);
        pages += 1;
        assert!(bytes <= BUDGET, "page {pages} is {bytes} bytes");
        issues.extend(page["issues"].as_array().unwrap().iter().cloned());
        match page["next_cursor"].as_str() {
            Some(c) => {
                assert_eq!(page["truncated"], true, "{page}");
                assert!(
                    page["notice"].as_str().unwrap().contains("next_cursor を cursor に渡して"),
                    "{page}"
                );
                assert!(page["total"].as_u64().unwrap() >= 3000, "{}", page["total"]);
                cursor = Some(c.to_owned());
            }
            None => break,
        }
        assert!(pages < 100, "paging does not advance");
    }
    assert!(pages > 1, "3,000 issues fit in one page?");
    let files: std::collections::BTreeSet<String> =
        issues.iter().filter_map(|i| i["file"].as_str().map(str::to_owned)).collect();
    let missing = issues.iter().filter(|i| i["message"].as_str().unwrap_or("").contains("gone/doc-")).count();
    assert!(missing >= 3000, "{missing} issues name a missing file ({} files)", files.len());
    // The CLI prints them all at once (and exits 1: there are issues).
    let out =
        project.run(&["--config", project.root().join("lvs.yaml").to_str().unwrap(), "check", "--json"]);
    let all: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(all["issues"].as_array().unwrap().len(), issues.len());
}

/// `kb_status` after a reindex that failed on 2,000 files (not UTF-8): the list is cut to the
/// budget over MCP with a notice that gives the total; the CLI prints it whole.
#[test]
fn a_status_with_thousands_of_failed_files_stays_within_the_budget() {
    let project = Project::empty();
    project.write("ok.md", "# 見出し\n\n本文。\n");
    for i in 0..2000 {
        let path = project.root().join(format!("bad/壊れたファイル-{i:05}.md"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, b"# \xff\xfe not UTF-8\n").unwrap();
    }
    let mut rpc = server(&project);
    rpc.call("kb_reindex", json!({"request": {}}));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let (status, bytes) = loop {
        let (status, bytes) = call_sized(&mut rpc, "kb_status", json!({}));
        if status["indexing"]["last"].is_object() && status["indexing"]["isRunning"] == false {
            break (status, bytes);
        }
        assert!(std::time::Instant::now() < deadline, "the reindex did not finish: {status}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let failed = status["indexing"]["last"]["result"]["failedFiles"].as_array().unwrap();
    assert!(bytes <= BUDGET, "kb_status is {bytes} bytes");
    assert!(!failed.is_empty() && failed.len() < 2000, "{} failed files listed", failed.len());
    let notice = status["notice"].as_str().unwrap_or_else(|| panic!("no notice: {status}"));
    assert!(
        notice.contains(&format!("indexing.last.result.failedFiles shows {} of 2000 files", failed.len())),
        "{notice}"
    );
}

/// `kb_export_html` of a document with 3,000 broken links: the warnings are cut to the budget and
/// the last one says how many more there are and where to see them all.
#[test]
fn an_export_with_thousands_of_warnings_stays_within_the_budget() {
    let project = Project::empty();
    let mut text = String::from("# 壊れたリンク集\n\n");
    for i in 0..3000 {
        text.push_str(&format!("- [リンク {i}](missing/ない文書-{i:05}.md)\n"));
    }
    project.write("links.md", &text);
    let mut rpc = server_with(&project, "knowledgeBase:\n  allowWrites: true\nindex:\n  autoIndex: false\n");
    let (answer, bytes) = call_sized(&mut rpc, "kb_export_html", json!({"file": "links.md"}));
    assert!(bytes <= BUDGET, "kb_export_html answered {bytes} bytes");
    let warnings = answer["warnings"].as_array().unwrap();
    let last = warnings.last().unwrap().as_str().unwrap();
    let shown = warnings.len() - 1;
    assert!(shown > 10 && shown < 3000, "{shown} warnings shown");
    assert!(
        last.starts_with(&format!("… and {} more warning(s)", 3000 - shown))
            && last.ends_with("the CLI `local-vector-search-mcp export-html` lists them all."),
        "{last}"
    );
}
