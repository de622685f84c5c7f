//! Every list pages by the answer budget (issue #26 item 4, `docs/tools.md` "Bounded answers"):
//! `kb_list_tags`, `kb_find_docs` and `kb_list_images` over thousands of entries, through the
//! real server. Each page stays within its budget (the text block and, for JSON, the structured
//! content), every cut page says so, and the pages together give back exactly the whole list.

use std::ffi::OsStr;

use serde_json::{Value, json};

use crate::rpc::Rpc;
use crate::support::Project;

/// The default budget of one answer (`tools.maxAnswerBytes`).
const BUDGET: usize = 32_768;

const CONFIG: &str = "knowledgeBase:\n  root: .\nindex:\n  autoIndex: false\ncatalog:\n  index: docs/index.yaml\n  language: ja\n";

fn server(project: &Project) -> Rpc {
    Rpc::start(&[
        OsStr::new("--project-root"),
        project.root().as_os_str(),
        OsStr::new("--config"),
        project.root().join("lvsm.yaml").as_os_str(),
        OsStr::new("--embedding-provider"),
        OsStr::new("none"),
    ])
}

/// Calls `tool`; returns (its text block, its structured content or null).
fn call(rpc: &mut Rpc, tool: &str, args: Value) -> (String, Value) {
    let frame = rpc.call_raw(tool, args);
    let result = &frame["result"];
    let shown = frame.to_string();
    assert_eq!(result["isError"], false, "{tool} failed: {}", &shown[..shown.len().min(600)]);
    let text = result["content"][0]["text"].as_str().unwrap().to_owned();
    (text, result["structuredContent"].clone())
}

/// A catalog of `n` documents and `n` tags; document `i` carries tags `i` and `i + 1`, and a long
/// Japanese description, so the tag counts and a page of 100 rows are both over a small budget.
fn big_catalog(n: usize) -> (Project, Vec<String>, Vec<String>) {
    let p = Project::empty();
    p.write("lvsm.yaml", CONFIG);
    let tag = |i: usize| format!("分類タグ-{:05}-とても長いタグの名前", i % n);
    let mut index = String::from("version: 1\ndocs:\n");
    let mut ids = Vec::new();
    for i in 0..n {
        let id = format!("doc-{i:05}");
        index.push_str(&format!(
            "  - id: {id}\n    path: d/{id}.md\n    title: 文書 {i} の題名\n    description: {}\n    tags: [\"{}\", \"{}\"]\n",
            "この文書は大量の目録を試すための説明文です。".repeat(8),
            tag(i),
            tag(i + 1)
        ));
        p.write(&format!("docs/d/{id}.md"), &format!("# 文書 {i}\n\n本文。\n"));
        ids.push(id);
    }
    index.push_str("tags:\n");
    let mut tags = Vec::new();
    for i in 0..n {
        index.push_str(&format!("  - name: \"{}\"\n    description: タグ {i} の説明。\n", tag(i)));
        tags.push(tag(i));
    }
    p.write("docs/index.yaml", &index);
    (p, ids, tags)
}

/// The `next_cursor: …` line of a Markdown answer.
fn markdown_cursor(text: &str) -> Option<String> {
    text.lines().find_map(|l| l.strip_prefix("next_cursor: ")).filter(|c| *c != "null").map(str::to_owned)
}

#[test]
fn thousands_of_tags_page_within_the_budget_and_reassemble_exactly() {
    let (project, _, expected) = big_catalog(2000);
    let mut rpc = server(&project);
    for budget in [None, Some(8192usize)] {
        // JSON: the structured pages hold every tag once, in vocabulary order.
        let limit = budget.unwrap_or(BUDGET);
        let mut got = Vec::new();
        let mut cursor: Option<String> = None;
        let mut pages = 0;
        loop {
            let mut args = json!({"format": "json"});
            if let Some(c) = &cursor {
                args["cursor"] = json!(c);
            }
            if let Some(b) = budget {
                args["max_bytes"] = json!(b);
            }
            let (text, page) = call(&mut rpc, "kb_list_tags", args);
            pages += 1;
            assert!(text.len() <= limit, "page {pages} is {} bytes", text.len());
            assert!(page.to_string().len() <= limit);
            got.extend(
                page["tags"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()),
            );
            match page["next_cursor"].as_str() {
                Some(c) => {
                    assert_eq!(page["truncated"], true);
                    assert!(
                        page["notice"].as_str().unwrap().contains("next_cursor を cursor に渡して"),
                        "{page}"
                    );
                    cursor = Some(c.to_owned());
                }
                None => {
                    assert!(page.get("truncated").is_none() && page.get("notice").is_none(), "{page}");
                    break;
                }
            }
            assert!(pages < 2000, "paging does not advance");
        }
        assert!(pages > 1, "2,000 tags fit one page of {limit} bytes");
        assert_eq!(got, expected);

        // Markdown: the table rows over all pages are the tags, each page within the budget.
        let mut rows = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let mut args = json!({});
            if let Some(c) = &cursor {
                args["cursor"] = json!(c);
            }
            if let Some(b) = budget {
                args["max_bytes"] = json!(b);
            }
            let (text, _) = call(&mut rpc, "kb_list_tags", args);
            assert!(text.len() <= limit, "a Markdown page is {} bytes", text.len());
            rows.extend(
                text.lines()
                    .filter(|l| l.starts_with("| 分類タグ-"))
                    .map(|l| l.trim_start_matches("| ").split(" |").next().unwrap().to_owned()),
            );
            match markdown_cursor(&text) {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        assert_eq!(rows, expected);
    }
    // A cursor of another query is refused in the catalog's language.
    let (_, first) = call(&mut rpc, "kb_list_tags", json!({"format": "json"}));
    let frame = rpc
        .call_raw("kb_list_tags", json!({"format": "json", "query": "分類", "cursor": first["next_cursor"]}));
    assert_eq!(frame["result"]["isError"], true);
    assert!(frame.to_string().contains("cursor を省いて"), "{frame}");
}

#[test]
fn thousands_of_documents_page_within_the_budget_and_reassemble_exactly() {
    let (project, expected, _) = big_catalog(2000);
    let mut rpc = server(&project);
    for format in ["json", "markdown"] {
        for budget in [BUDGET, 16_384] {
            let mut got = Vec::new();
            let mut cursor: Option<String> = None;
            let mut cut_pages = 0;
            loop {
                let mut args = json!({"format": format, "limit": 100, "view": "full", "max_bytes": budget});
                if let Some(c) = &cursor {
                    args["cursor"] = json!(c);
                }
                let (text, page) = call(&mut rpc, "kb_find_docs", args);
                assert!(text.len() <= budget, "{format} page of {} bytes over {budget}", text.len());
                let next = if format == "json" {
                    assert!(page.to_string().len() <= budget);
                    assert_eq!(page["total"], 2000);
                    // The tag counts are cut to the most frequent and the cut is said.
                    assert_eq!(page["truncated"], true, "{}", page["notice"]);
                    assert!(page["notice"].as_str().unwrap().contains("タグごとの件数"));
                    got.extend(
                        page["docs"].as_array().unwrap().iter().map(|d| d["id"].as_str().unwrap().to_owned()),
                    );
                    if page["docs"].as_array().unwrap().len() < 100 && page["next_cursor"].is_string() {
                        cut_pages += 1;
                        assert!(
                            page["notice"].as_str().unwrap().contains("バイトのため"),
                            "{}",
                            page["notice"]
                        );
                    }
                    page["next_cursor"].as_str().map(str::to_owned)
                } else {
                    let before = got.len();
                    got.extend(
                        text.lines()
                            .filter(|l| l.starts_with("| doc-"))
                            .map(|l| l.trim_start_matches("| ").split(" |").next().unwrap().to_owned()),
                    );
                    if got.len() - before < 100 && text.contains("バイトのため") {
                        cut_pages += 1;
                    }
                    text.lines()
                        .next()
                        .and_then(|l| l.rsplit_once("next_cursor: "))
                        .map(|(_, c)| c.to_owned())
                        .filter(|c| c != "null")
                };
                match next {
                    Some(c) => cursor = Some(c),
                    None => break,
                }
                assert!(got.len() <= expected.len(), "paging repeats documents");
            }
            assert_eq!(got, expected, "{format} at {budget}");
            if budget < BUDGET {
                assert!(cut_pages > 0, "no {format} page was cut at {budget} bytes");
            }
        }
    }
    // count_only is bounded too: its tag counts are cut and say so.
    let (text, page) = call(&mut rpc, "kb_find_docs", json!({"count_only": true, "format": "json"}));
    assert!(text.len() <= BUDGET);
    assert_eq!(page["truncated"], true);
    assert!(page["tag_counts"].as_array().unwrap().len() < 2000);
}

#[test]
fn thousands_of_images_page_within_the_budget_and_reassemble_exactly() {
    let project = Project::empty();
    project.write("lvsm.yaml", CONFIG);
    let mut expected = Vec::new();
    for i in 0..3000 {
        let path = format!("images/とても長いフォルダの名前/画像ファイル-{i:05}-説明のための長い名前.png");
        project.write(&path, "not really a png: the listing reads names only");
        expected.push(path);
    }
    expected.sort_by_key(|p| p.to_lowercase());
    let mut rpc = server(&project);
    for budget in [None, Some(4096usize)] {
        let limit = budget.unwrap_or(BUDGET);
        let mut got = Vec::new();
        let mut cursor: Option<String> = None;
        let mut byte_cuts = 0;
        loop {
            let mut args = json!({"pageSize": 200});
            if let Some(c) = &cursor {
                args["cursor"] = json!(c);
            }
            if let Some(b) = budget {
                args["maxBytes"] = json!(b);
            }
            let (text, page) = call(&mut rpc, "kb_list_images", args);
            assert!(text.len() <= limit && page.to_string().len() <= limit, "{} bytes", text.len());
            let images = page["images"].as_array().unwrap();
            got.extend(images.iter().map(|i| i["path"].as_str().unwrap().to_owned()));
            match page["nextCursor"].as_str() {
                Some(c) => {
                    assert_eq!(page["truncated"], true);
                    assert!(page["notice"].as_str().unwrap().contains("pass nextCursor as cursor"));
                    byte_cuts += usize::from(images.len() < 200);
                    cursor = Some(c.to_owned());
                }
                None => {
                    assert!(page.get("truncated").is_none());
                    break;
                }
            }
            assert!(got.len() <= expected.len(), "paging repeats images");
        }
        assert_eq!(got, expected);
        if budget.is_some() {
            assert!(byte_cuts > 0, "no page was cut by bytes");
        }
    }
    let frame = rpc.call_raw("kb_list_images", json!({"maxBytes": 10}));
    assert_eq!(frame["result"]["isError"], true);
    assert!(frame.to_string().contains("maxBytes must be at least"), "{frame}");
}

/// E10 in the catalog's language: a catalog tool given an argument it does not take names it
/// and the accepted ones in Japanese when the catalog's `language` is `ja`; the server keeps
/// serving.
#[test]
fn an_unknown_catalog_argument_is_refused_in_the_catalog_language() {
    let (project, _, _) = big_catalog(3);
    let mut rpc = server(&project);
    let frame = rpc.call_raw("kb_list_tags", json!({"format": "json", "bogus": 1}));
    assert_eq!(frame["result"]["isError"], true);
    let text = frame["result"]["content"][0]["text"].as_str().unwrap().to_owned();
    assert!(text.contains("知らない引数 `bogus` です。外してください（受け付ける引数: "), "{text}");
    assert!(text.contains("max_bytes"), "{text}");
    // A spelling that differs only in case is still the argument (the schema's rule).
    let (_, page) = call(&mut rpc, "kb_list_tags", json!({"FORMAT": "json"}));
    assert_eq!(page["tags"].as_array().unwrap().len(), 3);
}
