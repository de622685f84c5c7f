//! `maxPerFile` through the real binary: a top-k that one long document would fill alone
//! makes room for the other documents that match, from the request (`kb_search`), the CLI
//! (`search --max-per-file`) and the configuration (`search.maxPerFile`).

use std::ffi::OsStr;

use serde_json::{Value, json};

use crate::rpc::Rpc;
use crate::support::Project;

/// One long document whose every section is about 設計 (dense, so BM25 ranks all its sections
/// first) and two short ones that mention it once.
fn project() -> Project {
    let p = Project::empty();
    let mut long = String::from("# 設計書\n\n");
    for i in 1..=6 {
        long.push_str(&format!("## 設計の章 {i}\n\n設計、設計、設計。第{i}章の設計の要点。\n\n"));
    }
    p.write("long.md", &long);
    p.write("other/a.md", "# 議事録\n\n今日の会議では予算と設計と日程を話した。残りは来週に回す。\n");
    p.write("other/b.md", "# 手順書\n\nサーバーの起動手順。設計の背景は別の文書を読むこと。\n");
    p.ok(&["reindex"]);
    p
}

fn paths(r: &Value) -> Vec<String> {
    r["results"].as_array().unwrap().iter().map(|h| h["path"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn max_per_file_makes_room_for_other_documents_in_kb_search_the_cli_and_the_config() {
    let p = project();
    // Without a limit (the default), the long document fills the top five; a limit of three
    // keeps three of them.
    let all = ["long.md"; 5];
    assert_eq!(paths(&p.search("設計", &["--top-k", "5", "--max-per-file", "0"])), all);
    assert_eq!(paths(&p.search("設計", &["--top-k", "5"])), all, "no limit by default");
    let three = paths(&p.search("設計", &["--top-k", "5", "--max-per-file", "3"]));
    assert_eq!(three.iter().filter(|p| *p == "long.md").count(), 3, "{three:?}");
    assert_eq!(three.len(), 5, "{three:?}");
    // The CLI option: one hit per file, the other two documents come in.
    let one = paths(&p.search("設計", &["--top-k", "3", "--max-per-file", "1"]));
    assert_eq!(one[0], "long.md", "the best hit stays first: {one:?}");
    let mut sorted = one.clone();
    sorted.sort();
    assert_eq!(sorted, ["long.md", "other/a.md", "other/b.md"], "{one:?}");
    // Two per file, topK 10: two of the long document plus the two others, and no more.
    let two = paths(&p.search("設計", &["--top-k", "10", "--max-per-file", "2"]));
    assert_eq!(two.iter().filter(|p| *p == "long.md").count(), 2, "{two:?}");
    assert_eq!(two.len(), 4, "{two:?}");

    // kb_search over MCP, with the limit in the configuration and a request that lifts it.
    p.write("lvsm.yaml", "search:\n  maxPerFile: 1\n");
    let mut rpc = Rpc::start(&[
        OsStr::new("--project-root"),
        p.root().as_os_str(),
        OsStr::new("--config"),
        p.root().join("lvsm.yaml").as_os_str(),
        OsStr::new("--embedding-provider"),
        OsStr::new("none"),
    ]);
    let r = rpc.call("kb_search", json!({"request": {"query": "設計", "mode": "lexical", "topK": 3}}));
    let mut got = paths(&r);
    got.sort();
    assert_eq!(got, ["long.md", "other/a.md", "other/b.md"], "{r}");
    let r = rpc.call(
        "kb_search",
        json!({"request": {"query": "設計", "mode": "lexical", "topK": 5, "maxPerFile": 0}}),
    );
    assert_eq!(paths(&r), all, "maxPerFile 0 lifts the limit: {r}");
    // A negative limit is one sentence, and the server keeps serving.
    let frame = rpc.call_raw("kb_search", json!({"request": {"query": "設計", "maxPerFile": -1}}));
    let text = frame["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned();
    assert_eq!(frame["result"]["isError"], true, "{frame}");
    assert!(text.contains("maxPerFile must be 0 (no limit) or more"), "{text}");
    let r = rpc.call("kb_search", json!({"request": {"query": "会議", "mode": "lexical"}}));
    assert_eq!(paths(&r), ["other/a.md"]);
}
