//! Front-matter filters of `search` / `kb_search` through the real binary: equality, list
//! membership, Japanese keys and values, date ranges, combined with path globs, and the one
//! sentence a malformed filter gets.

use std::ffi::OsStr;

use serde_json::{Value, json};

use crate::rpc::Rpc;
use crate::support::Project;

/// Six small documents that all mention 設計 and differ only in their front matter.
fn project() -> Project {
    let p = Project::empty();
    p.write("docs/api-draft.md", "---\ntitle: API 草案\nstatus: draft\ntags: [api, 設計]\nupdated: 2024-03-01\n---\n\n# API\n\n設計の草案です。\n");
    p.write(
        "docs/api-final.md",
        "---\nstatus: Published\ntags:\n  - API\nupdated: 2023-11-20\n---\n\n# API\n\n設計の確定版です。\n",
    );
    p.write("docs/guide.md", "---\nstatus: published\ntags: [guide]\nupdated: 2024-06-30T09:00:00+09:00\n---\n\n# ガイド\n\n設計の手引きです。\n");
    p.write("notes/memo.md", "---\nタグ: [設計, メモ]\n状態: 下書き\n---\n\n# メモ\n\n設計のメモです。\n");
    p.write("notes/plain.md", "# 前書きなし\n\n設計の話だけです。\n");
    p.write("notes/draft.md", "---\nstatus: ＤＲＡＦＴ\n---\n\n# 下書き\n\n設計をもう一度。\n");
    p.ok(&["reindex"]);
    p
}

/// The sorted distinct paths of a CLI search for 設計 with `extra` arguments.
fn cli_paths(p: &Project, extra: &[&str]) -> Vec<String> {
    search_paths(p, "設計", extra)
}

/// The sorted distinct paths of a CLI search (top 50) for `query` with `extra` arguments.
fn search_paths(p: &Project, query: &str, extra: &[&str]) -> Vec<String> {
    let r = p.search(query, extra);
    let mut paths: Vec<String> =
        r["results"].as_array().unwrap().iter().map(|h| h["path"].as_str().unwrap().to_owned()).collect();
    paths.sort();
    paths.dedup();
    paths
}

fn mcp_paths(rpc: &mut Rpc, request: Value) -> Vec<String> {
    let r = rpc.call("kb_search", json!({ "request": request }));
    let mut paths: Vec<String> =
        r["results"].as_array().unwrap().iter().map(|h| h["path"].as_str().unwrap().to_owned()).collect();
    paths.sort();
    paths.dedup();
    paths
}

#[test]
fn the_cli_filters_by_front_matter_fields_lists_dates_and_globs() {
    let p = project();
    assert_eq!(cli_paths(&p, &["--filter", "status=draft"]), ["docs/api-draft.md", "notes/draft.md"]);
    assert_eq!(cli_paths(&p, &["--filter", "tags=api"]), ["docs/api-draft.md", "docs/api-final.md"]);
    assert_eq!(cli_paths(&p, &["--filter", "タグ=設計"]), ["notes/memo.md"]);
    assert_eq!(cli_paths(&p, &["--filter", "状態=下書き"]), ["notes/memo.md"]);
    assert_eq!(cli_paths(&p, &["--filter", "updated>=2024-01-01"]), ["docs/api-draft.md", "docs/guide.md"]);
    assert_eq!(
        cli_paths(&p, &["--filter", "updated>=2024-01-01", "--filter", "updated<2024-06-30"]),
        ["docs/api-draft.md"]
    );
    assert_eq!(
        cli_paths(&p, &["--filter", "updated<=2024-06-30", "--filter", "status!=draft"]),
        ["docs/api-final.md", "docs/guide.md"]
    );
    assert_eq!(
        cli_paths(&p, &["--filter", "tags?", "--include-glob", "docs/api-*"]),
        ["docs/api-draft.md", "docs/api-final.md"]
    );
    assert_eq!(
        cli_paths(&p, &["--filter", "status=draft", "--exclude-glob", "notes/**"]),
        ["docs/api-draft.md"]
    );
    assert!(cli_paths(&p, &["--filter", "status=archived"]).is_empty());
    // without filters all six are found
    assert_eq!(cli_paths(&p, &[]).len(), 6);

    let out = p.run(&["search", "設計", "--filter", "status:draft"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--filter 'status:draft' has no operator; write FIELD=VALUE"), "{err}");
    let out = p.run(&["search", "設計", "--filter", "updated>=yesterday"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("'yesterday' is not an ISO 8601 date; write it as YYYY-MM-DD"), "{err}");
}

#[test]
fn kb_search_filters_by_front_matter_and_refuses_a_malformed_filter_in_one_sentence() {
    let p = project();
    let mut rpc = Rpc::start(&[
        OsStr::new("--project-root"),
        p.root().as_os_str(),
        OsStr::new("--embedding-provider"),
        OsStr::new("none"),
    ]);
    let q = |filters: Value| json!({"query": "設計", "mode": "lexical", "topK": 50, "filters": filters});
    assert_eq!(
        mcp_paths(&mut rpc, q(json!([{"field": "tags", "op": "eq", "value": "API"}]))),
        ["docs/api-draft.md", "docs/api-final.md"]
    );
    assert_eq!(
        mcp_paths(&mut rpc, q(json!([{"field": "status", "op": "in", "values": ["draft", "published"]}])))
            .len(),
        4
    );
    assert_eq!(
        mcp_paths(&mut rpc, q(json!([{"field": "タグ", "op": "eq", "value": "メモ"}]))),
        ["notes/memo.md"]
    );
    assert_eq!(
        mcp_paths(
            &mut rpc,
            q(json!([
                {"field": "updated", "op": "gte", "value": "2023-01-01"},
                {"field": "updated", "op": "lte", "value": "2024-03-01"}
            ]))
        ),
        ["docs/api-draft.md", "docs/api-final.md"]
    );
    assert_eq!(mcp_paths(&mut rpc, q(json!([{"field": "状態", "op": "exists"}]))), ["notes/memo.md"]);
    // topK counts among the files that pass: one hit asked, one hit of the filtered set
    let one = rpc.call(
        "kb_search",
        json!({"request": {"query": "設計", "topK": 1, "filters": [{"field": "tags", "op": "eq", "value": "guide"}]}}),
    );
    assert_eq!(one["results"].as_array().unwrap().len(), 1, "{one}");
    assert_eq!(one["results"][0]["path"], "docs/guide.md");

    let frame = rpc.call_raw(
        "kb_search",
        json!({"request": {"query": "設計", "filters": [{"field": "updated", "op": "gt", "value": "last week"}]}}),
    );
    let text = frame["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned();
    assert_eq!(frame["result"]["isError"], true, "{frame}");
    assert!(text.contains("INVALID_ARGUMENT"), "{text}");
    assert!(
        text.contains("filters[0] (updated gt) compares dates, and 'last week' is not an ISO 8601 date; write it as YYYY-MM-DD, e.g. 2024-01-31."),
        "{text}"
    );
    // an unknown operator is refused naming the ones there are; `contains` is `eq`
    let frame = rpc.call_raw(
        "kb_search",
        json!({"request": {"query": "設計", "filters": [{"field": "tags", "op": "has", "value": "api"}]}}),
    );
    let shown = frame.to_string();
    assert!(shown.contains("has") && shown.contains("exists"), "{shown}");
    assert_eq!(
        mcp_paths(&mut rpc, q(json!([{"field": "tags", "op": "contains", "value": "設計"}]))),
        ["docs/api-draft.md"]
    );
    // the server keeps serving
    assert_eq!(mcp_paths(&mut rpc, q(json!([{"field": "status", "op": "ne", "value": "draft"}]))).len(), 4);
}

/// Replaces the project's index with what format `lvs-2` left: the store's manifest says
/// `lvs-2` and the lexical index has that format's schema (no `meta` field).
fn make_format_2_index(p: &Project) {
    use redb::{Database, TableDefinition};
    use tantivy::schema::{FAST, INDEXED, STORED, STRING, Schema, TEXT};

    let dir = p.root().join(".local-vector-search-mcp");
    let lexical = dir.join("lexical");
    std::fs::remove_dir_all(&lexical).unwrap();
    std::fs::create_dir_all(&lexical).unwrap();
    let mut b = Schema::builder();
    b.add_u64_field("chunk_id", INDEXED | STORED | FAST);
    b.add_text_field("path", STRING | STORED | FAST);
    b.add_text_field("text", TEXT | STORED);
    b.add_text_field("heading_path", TEXT | STORED);
    b.add_text_field("anchor", STORED);
    b.add_text_field("source_hash", STORED);
    let index = tantivy::Index::create_in_dir(&lexical, b.build()).unwrap();
    let mut writer: tantivy::IndexWriter = index.writer(15_000_000).unwrap();
    let mut prepared = writer.prepare_commit().unwrap();
    prepared.set_payload("1");
    prepared.commit().unwrap();
    drop(writer);

    let manifest: TableDefinition<'_, &str, &str> = TableDefinition::new("manifest");
    let db = Database::create(dir.join("meta.redb")).unwrap();
    let txn = db.begin_write().unwrap();
    txn.open_table(manifest).unwrap().insert("schema_version", "lvs-2").unwrap();
    txn.commit().unwrap();
}

#[test]
fn an_index_of_format_lvs_2_is_rebuilt_by_the_next_reindex_with_one_sentence_and_then_filters() {
    let p = project();
    make_format_2_index(&p);
    let out = p.run(&["reindex"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "reindex failed: {stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| l.contains("WARN") || l.contains("format")).collect();
    assert_eq!(lines.len(), 1, "not one sentence: {stderr}");
    assert!(lines[0].contains("written in format lvs-2 by an older version"), "{stderr}");
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("indexed 6 file(s)"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(cli_paths(&p, &["--filter", "tags=api"]), ["docs/api-draft.md", "docs/api-final.md"]);
}

#[test]
fn semantic_and_hybrid_search_apply_the_filter_to_the_vector_candidates() {
    let p = Project::empty();
    for i in 0..40 {
        p.write(
            &format!("noise/n{i:02}.md"),
            &format!(
                "---\nstatus: published\n---\n\n# 雑記 {i}\n\n検索エンジンの索引を高速に構築する方法 {i}\n"
            ),
        );
    }
    p.write("docs/target.md", "---\nstatus: draft\n---\n\n# 目的\n\n会議室の予約についての覚え書き。\n");
    let server = crate::fake_embed::FakeEmbed::start(64);
    let config = p.root().join("lvs.yaml");
    std::fs::write(
        &config,
        format!(
            "embedding:\n  provider: openai-compatible\n  endpoint: {}\n  apiKey: test-key\n  dimensions: 64\n  batchSize: 8\n  timeoutSeconds: 5\n",
            server.endpoint
        ),
    )
    .unwrap();
    let run = |args: &[&str]| {
        let out = crate::support::bin()
            .arg("--project-root")
            .arg(p.root())
            .arg("--config")
            .arg(&config)
            .args(args)
            .output()
            .unwrap();
        crate::support::expect_success(out, args)
    };
    run(&["reindex"]);
    let query = "検索エンジンの索引を高速に構築する方法";
    for mode in ["semantic", "hybrid"] {
        let all: Value =
            serde_json::from_str(&run(&["search", query, "--json", "--mode", mode, "--top-k", "3"])).unwrap();
        assert!(
            all["results"]
                .as_array()
                .unwrap()
                .iter()
                .all(|h| h["path"].as_str().unwrap().starts_with("noise/")),
            "{all}"
        );
        let filtered: Value = serde_json::from_str(&run(&[
            "search",
            query,
            "--json",
            "--mode",
            mode,
            "--top-k",
            "3",
            "--filter",
            "status=draft",
        ]))
        .unwrap();
        let results = filtered["results"].as_array().unwrap();
        assert_eq!(filtered["results"][0]["path"], "docs/target.md", "{mode}: {filtered}");
        assert!(results.iter().all(|h| h["path"] == "docs/target.md"), "{mode}: {filtered}");
    }
}

/// The files below `dir` whose text contains every one of `needles` (the ground truth a filter
/// must reproduce), as root-relative paths.
fn files_containing(root: &std::path::Path, needles: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = crate::support::markdown_files(root)
        .into_iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            needles.iter().all(|n| text.contains(n))
        })
        .map(|f| f.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/"))
        .collect();
    out.sort();
    out
}

#[test]
fn filters_on_a_real_corpus_find_exactly_the_files_whose_front_matter_matches() {
    let Some(corpus) = crate::support::shared_or_skip("corpora/visualstudio-docs-ja/mac") else { return };
    let p = Project::empty();
    crate::support::copy_tree(&corpus, &p.root().join("mac"));
    p.ok(&["reindex"]);
    // The filtered sets have fewer than 50 matching chunks, so the top 50 holds every file that
    // passes: the set must equal the ground truth read from the files' bytes.
    let how_to_2017_2018: Vec<String> = files_containing(p.root(), &["デバッグ", "ms.topic: how-to"])
        .into_iter()
        .filter(|f| {
            let text = std::fs::read_to_string(p.root().join(f)).unwrap();
            text.lines().any(|l| l.starts_with("ms.date:") && (l.ends_with("/2017") || l.ends_with("/2018")))
        })
        .collect();
    assert!(!how_to_2017_2018.is_empty());
    assert_eq!(
        search_paths(&p, "デバッグ", &["--filter", "ms.topic=how-to", "--filter", "ms.date<2019-01-01"]),
        how_to_2017_2018,
        "ms.date is written month first (11/09/2020)"
    );
    let recent: Vec<String> = files_containing(p.root(), &["デバッグ"])
        .into_iter()
        .filter(|f| {
            let text = std::fs::read_to_string(p.root().join(f)).unwrap();
            text.lines().any(|l| l.starts_with("ms.date:") && (l.ends_with("/2020") || l.ends_with("/2021")))
        })
        .collect();
    assert_eq!(search_paths(&p, "デバッグ", &["--filter", "ms.date>=2020-01-01"]), recent);
    assert_eq!(
        search_paths(&p, "デバッグ", &["--filter", "ms.date>=01/01/2020"]),
        recent,
        "the filter value in the same form"
    );
}
