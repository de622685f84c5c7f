//! Catalog benchmark (`docs/performance.md`, "Document catalog"): `kb_find_docs`, `kb_list_tags`
//! and `kb_check` over a generated index of 5,000 documents and 1,000 tags, against the targets of
//! `docs/reference/catalog-spec.md` §6.1.8 and §6.2.4 (warm cache: under 50 ms for a query, under
//! 300 ms with `related_to` or `referenced_by`, under 20 ms for the tag list).
//!
//! Run: `cargo bench --bench catalog` (release) or `cargo bench --profile dev --bench catalog`.
//! `LVS_BENCH_DOCS` changes the number of documents. No assertions: numbers are printed (human
//! lines, then one line of JSON). Warm calls reuse the index's model and re-check each document by
//! its stamp (`docs/design/catalog.md`, "Per-call cost"); one case rewrites a document before
//! each call. The last two cases time the path-guard part of a call alone, on one thread: a
//! guard walk per document (before issue #28) and one shared walk (now).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::time::{Duration, Instant};

use lvs::config::{CliOverrides, EmbeddingProvider, load};
use lvs::engine::Engine;
use lvs::wire::{CheckRequest, FindDocsRequest, ListTagsRequest};
use lvs::workspace::PathContext;
use serde_json::json;

mod common;
use common::{Latency, machine, ms};

/// Edits made by the "after one document changed" case.
static EDITS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn main() {
    let docs: usize = std::env::var("LVS_BENCH_DOCS").ok().and_then(|v| v.parse().ok()).unwrap_or(5000);
    let tags = 1000;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir(root.join(".git")).unwrap();
    let mut index = String::from("version: 1\ndocs:\n");
    for i in 0..docs {
        let t1 = i % tags;
        let t2 = (i * 7) % tags;
        let main = if i % 10 == 0 { "{name: t0, main: true}" } else { "t0" };
        index.push_str(&format!(
            "  - id: d{i}\n    path: d/{i}.md\n    title: 文書 {i} の題\n    aliases: [別名{i}, alias{i}]\n    description: 説明 {i}\n    tags: [{main}, t{t1}, t{t2}]\n    related:\n      - to: d{}\n        type: references\n        when: 常に\n",
            (i + 1) % docs
        ));
        let next = (i + 2) % docs;
        std::fs::create_dir_all(root.join("d")).unwrap();
        std::fs::write(
            root.join(format!("d/{i}.md")),
            format!(
                "# 文書 {i}\n\n本文。[次]({next}.md) と 別名{} に触れる。\n\n## 節\n\n段落 {i}。\n",
                (i + 3) % docs
            ),
        )
        .unwrap();
    }
    index.push_str("tags:\n");
    for t in 0..tags {
        index.push_str(&format!(
            "  - name: t{t}\n    group: g{}\n    description: 含める {t}\n    aliases: [T{t}x]\n",
            t % 10
        ));
    }
    std::fs::write(root.join("index.yaml"), &index).unwrap();
    std::fs::write(root.join("lvsm.yaml"), "catalog:\n  index: index.yaml\n  scan: [\"d/*.md\"]\n").unwrap();
    let overrides = CliOverrides {
        config: Some(root.join("lvsm.yaml")),
        project_root: Some(root.to_path_buf()),
        embedding_provider: Some(EmbeddingProvider::None),
        ..CliOverrides::default()
    };
    let engine = Engine::open(load(&overrides, &|_| None, root).unwrap()).unwrap();

    let time = |label: &str, runs: usize, f: &dyn Fn()| -> (String, Latency) {
        let mut samples: Vec<Duration> = Vec::new();
        for _ in 0..runs {
            let t = Instant::now();
            f();
            samples.push(t.elapsed());
        }
        let l = Latency::of(&mut samples);
        println!(
            "{label:<40} p50 {:>8.1} ms  p90 {:>8.1} ms  max {:>8.1} ms",
            ms(l.p50),
            ms(l.p90),
            ms(l.max)
        );
        (label.to_owned(), l)
    };
    let engine = &engine;
    let paths: Vec<String> = (0..docs).map(|i| format!("d/{i}.md")).collect();
    let find = |req: FindDocsRequest| {
        move || {
            let _ = engine.find_docs(&req).unwrap();
        }
    };
    let first = Instant::now();
    engine.find_docs(&FindDocsRequest::default()).unwrap();
    let cold = first.elapsed();
    println!("{docs} documents, {tags} tags; index {} KiB", index.len() / 1024);
    println!("{:<40} {:>8.1} ms (reads every document once)", "kb_find_docs {} cold", ms(cold));
    let json_format = || Some("json".to_owned());
    let results = vec![
        time(
            "kb_find_docs {} warm",
            10,
            &find(FindDocsRequest { format: json_format(), ..Default::default() }),
        ),
        time(
            "kb_find_docs tags [t0] (main first)",
            10,
            &find(FindDocsRequest {
                tags: Some(vec!["t0".into()]),
                format: json_format(),
                ..Default::default()
            }),
        ),
        time(
            "kb_find_docs text 文書 42",
            10,
            &find(FindDocsRequest {
                text: Some("文書 42".into()),
                format: json_format(),
                ..Default::default()
            }),
        ),
        time(
            "kb_find_docs count_only",
            10,
            &find(FindDocsRequest { count_only: Some(true), format: json_format(), ..Default::default() }),
        ),
        time(
            "kb_find_docs related_to d42",
            5,
            &find(FindDocsRequest {
                related_to: Some("d42".into()),
                format: json_format(),
                ..Default::default()
            }),
        ),
        time(
            "kb_find_docs view full (referenced_by)",
            5,
            &find(FindDocsRequest { view: Some("full".into()), format: json_format(), ..Default::default() }),
        ),
        time(
            "kb_find_docs markdown, limit 100",
            10,
            &find(FindDocsRequest { limit: Some(json!(100)), ..Default::default() }),
        ),
        time("kb_find_docs {} after one document changed", 10, &|| {
            // Another content each time (the length changes too): one document is read again.
            let n = EDITS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            std::fs::write(root.join("d/7.md"), format!("# 文書 7\n\n{}\n", "改".repeat(n % 5 + 1))).unwrap();
            let _ =
                engine.find_docs(&FindDocsRequest { format: json_format(), ..Default::default() }).unwrap();
        }),
        time("kb_list_tags {}", 10, &|| {
            let _ = engine.list_tags(&ListTagsRequest::default()).unwrap();
        }),
        time("kb_check {}", 3, &|| {
            let _ = engine.check(&CheckRequest::default()).unwrap();
        }),
        // The path-guard part of a call alone, and the same-run baseline it replaced: a full
        // guard walk and a stat per document (`rel_path` + `stat`) vs one shared `GuardWalk`.
        time("guard: rel_path + stat per document", 10, &|| {
            let ws = engine.workspace();
            for p in &paths {
                let rel = ws.rel_path(p, PathContext::Any).unwrap();
                ws.stat(&rel).unwrap();
            }
        }),
        time("guard: one GuardWalk per call", 10, &|| {
            let walk = engine.workspace().guard_walk();
            for p in &paths {
                walk.check(p, PathContext::Any).unwrap().1.unwrap();
            }
        }),
    ];
    let out: Vec<_> = results
        .iter()
        .map(|(label, l)| json!({"case": label, "p50_ms": ms(l.p50), "p90_ms": ms(l.p90), "max_ms": ms(l.max)}))
        .collect();
    println!(
        "{}",
        json!({"bench": "catalog", "docs": docs, "tags": tags, "cold_ms": ms(cold), "cases": out,
               "build": if cfg!(debug_assertions) { "debug" } else { "release" }, "machine": machine()})
    );
}
