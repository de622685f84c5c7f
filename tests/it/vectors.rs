//! Vectors and hybrid ranking through the real binary, against a real HTTP embedding server
//! started by the test on 127.0.0.1 (`tests/fake_embed`).

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use serde_json::Value;

use crate::fake_embed::{Behaviour, FakeEmbed};
use crate::support::{Project, bin, expect_success};

const DIMS: usize = 64;

/// A project plus an embedding server and a config file that points at it.
struct Vectored {
    project: Project,
    server: FakeEmbed,
    config: tempfile::TempDir,
}

impl Vectored {
    fn new(project: Project) -> Vectored {
        let server = FakeEmbed::start(DIMS);
        let config = tempfile::tempdir().unwrap();
        std::fs::write(
            config.path().join("lvs.yaml"),
            format!(
                "embedding:\n  provider: openai-compatible\n  endpoint: {}\n  apiKey: test-key\n  dimensions: {DIMS}\n  batchSize: 4\n  timeoutSeconds: 1\nsearch:\n  defaultMode: hybrid\n",
                server.endpoint
            ),
        )
        .unwrap();
        Vectored { project, server, config }
    }

    fn config_path(&self) -> PathBuf {
        self.config.path().join("lvs.yaml")
    }

    fn run(&self, args: &[&str]) -> Output {
        bin()
            .arg("--project-root")
            .arg(self.project.root())
            .arg("--config")
            .arg(self.config_path())
            .args(args)
            .output()
            .unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        expect_success(self.run(args), args)
    }

    fn json(&self, args: &[&str]) -> Value {
        let mut a = args.to_vec();
        a.push("--json");
        serde_json::from_str(&self.ok(&a)).unwrap()
    }

    fn status(&self) -> Value {
        self.json(&["status"])
    }

    fn search(&self, query: &str, mode: &str, extra: &[&str]) -> Value {
        let mut a = vec!["search", query, "--mode", mode];
        a.extend_from_slice(extra);
        self.json(&a)
    }
}

fn index_dir(root: &Path) -> PathBuf {
    root.join(".local-vector-search-mcp")
}

/// The lexical index's segment files with their sizes and modification times (`meta.json`
/// is rewritten by every commit, even an empty one, so it is left out).
fn lexical_files(root: &Path) -> Vec<(String, u64, std::time::SystemTime)> {
    let mut out: Vec<_> = std::fs::read_dir(index_dir(root).join("lexical"))
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            let name = name.to_string_lossy();
            !name.starts_with('.') && name != "meta.json"
        })
        .map(|e| {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            (e.file_name().to_string_lossy().into_owned(), m.len(), m.modified().unwrap())
        })
        .collect();
    out.sort();
    out
}

#[test]
fn reindex_embeds_in_batches_and_semantic_and_hybrid_answer() {
    let v = Vectored::new(Project::from_fixture("ja"));
    let r = v.json(&["reindex"]);
    assert!(r["warning"].is_null(), "{r}");
    let chunks = r["chunksIndexed"].as_u64().unwrap();
    let seen = v.server.seen();
    assert!(seen.iter().all(|s| s.inputs >= 1 && s.inputs <= 4), "batch size 4: {seen:?}");
    assert_eq!(seen.iter().map(|s| s.inputs as u64).sum::<u64>(), chunks);
    assert!(
        seen.iter()
            .all(|s| s.authorization.as_deref() == Some("Bearer test-key") && s.model == "bge-m3:latest")
    );
    // The embedding text of §5.8, with `\n` separators.
    let texts = v.server.texts();
    assert!(
        texts.iter().any(|t| t.starts_with("Path: kyoto.md\nHeading: 京都出張の記録 > 行程\n\n")),
        "{texts:?}"
    );
    assert!(index_dir(v.project.root()).join("vectors.usearch").is_file());

    let status = v.status();
    assert_eq!(status["indexMode"], "vector-enabled");
    assert_eq!(status["vectors"]["vectors"].as_u64(), Some(chunks), "{status}");
    assert_eq!(status["vectors"]["pending"], 0);
    assert!(status["vectors"]["lastError"].is_null());

    // Semantic: the chunk whose text is closest in the fake model's space comes first.
    let s = v.search("東京都庁の窓口で事業所の所在地変更を届け出た", "semantic", &["--top-k", "3"]);
    let results = s["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    assert_eq!(results[0]["path"], "tocho.md", "{s}");
    assert!(results.iter().all(|h| h["searchMode"] == "semantic"));
    assert_eq!(results[0]["score"], 1.0);
    assert!(s["warning"].is_null(), "{s}");

    // Hybrid with explain: both ranks, fused score = Σ 1/(60 + rank).
    let h = v.search("京都 利用者", "hybrid", &["--top-k", "5", "--explain"]);
    let results = h["results"].as_array().unwrap();
    assert!(!results.is_empty());
    assert_eq!(results[0]["path"], "kyoto.md", "{h}");
    for hit in results {
        assert_eq!(hit["searchMode"], "hybrid");
        let e = &hit["explain"];
        assert_eq!(e["rrfK"], 60);
        let part = |r: &Value| r.as_f64().map_or(0.0, |r| 1.0 / (60.0 + r));
        let want = part(&e["lexicalRank"]) + part(&e["vectorRank"]);
        assert!((e["fusedScore"].as_f64().unwrap() - want).abs() < 1e-12, "{hit}");
        assert_eq!(hit["score"], e["fusedScore"]);
    }
    assert!(
        results
            .iter()
            .any(|h| !h["explain"]["lexicalRank"].is_null() && !h["explain"]["vectorRank"].is_null())
    );
    // Without --explain there is no explain field; the text output shows the ranks.
    let plain = v.search("京都 利用者", "hybrid", &[]);
    assert!(plain["results"][0].get("explain").is_none());
    let text = v.ok(&["search", "京都 利用者", "--explain"]);
    assert!(text.contains("explain: hybrid score"), "{text}");
    assert!(text.contains("rrfK 60"), "{text}");

    // Nothing changed: nothing is embedded again.
    v.server.clear();
    let again = v.json(&["reindex"]);
    assert!(again["warning"].is_null(), "{again}");
    assert!(v.server.seen().is_empty(), "{:?}", v.server.seen());
}

#[test]
fn an_edit_reembeds_only_the_chunks_whose_text_changed() {
    let project = Project::empty();
    let mut doc = String::from("# 手順書\n");
    for i in 0..6 {
        doc.push_str(&format!("\n## 節 {i}\n\n節 {i} の本文です。設定ファイルを編集して再起動します。\n"));
    }
    project.write("guide.md", &doc);
    project.write("other.md", "# 別文書\n\nまったく関係のない本文。\n");
    let v = Vectored::new(project);
    v.json(&["reindex"]);
    let before = v.status()["vectors"]["vectors"].as_u64().unwrap();
    assert_eq!(before, 7);
    v.server.clear();
    v.project.write("guide.md", &doc.replace("節 3 の本文です。", "節 3 の本文を書き換えました。"));
    let r = v.json(&["reindex"]);
    assert_eq!(r["indexedFiles"], 1, "{r}");
    let texts = v.server.texts();
    assert_eq!(texts.len(), 1, "only the changed chunk is embedded: {texts:?}");
    assert!(texts[0].contains("書き換えました"));
    let status = v.status();
    assert_eq!(status["vectors"]["vectors"].as_u64(), Some(7), "{status}");
    assert_eq!(status["vectors"]["pending"], 0);
    let s = v.search("節 3 の本文を書き換えました", "semantic", &["--top-k", "1"]);
    assert_eq!(s["results"][0]["path"], "guide.md");
    assert!(s["results"][0]["snippet"].as_str().unwrap().contains("書き換え"), "{s}");
}

#[test]
fn endpoint_failures_leave_lexical_complete_and_vectors_catch_up() {
    let v = Vectored::new(Project::from_fixture("ja"));
    let cases: Vec<(Behaviour, &str)> = vec![
        (Behaviour::Status(500), "Embedding endpoint returned 500"),
        (Behaviour::Stall(Duration::from_secs(3)), "timed out after 1 s"),
        (Behaviour::Dims(32), "Embedding dimension mismatch. Expected 64, got 32."),
        (Behaviour::Garbage, "invalid JSON"),
    ];
    for (i, (behaviour, expect)) in cases.into_iter().enumerate() {
        v.server.set(behaviour.clone());
        let r = v.json(&["reindex"]);
        let warning = r["warning"].as_str().unwrap_or_default();
        assert!(warning.starts_with("Vector embeddings are unavailable: "), "{behaviour:?}: {r}");
        assert!(warning.contains(expect), "{behaviour:?}: {warning}");
        if i == 0 {
            assert_eq!(r["indexedFiles"], 6, "lexical indexing completed: {r}");
        }
        // Lexical search is complete.
        let l = v.search("京都", "lexical", &[]);
        assert_eq!(l["results"][0]["path"], "kyoto.md");
        let status = v.status();
        let chunks = status["project"]["chunks"].as_u64().unwrap();
        assert_eq!(status["vectors"]["pending"].as_u64(), Some(chunks), "{status}");
        assert!(status["vectors"]["lastError"].as_str().unwrap().contains(expect), "{status}");
        // Hybrid falls back to lexical with a warning; semantic refuses with a reason.
        let h = v.search("京都", "hybrid", &[]);
        assert_eq!(h["results"][0]["searchMode"], "lexical");
        let hw = h["warning"].as_str().unwrap();
        assert!(
            hw.starts_with("Semantic search is unavailable: ")
                && hw.ends_with("Falling back to lexical search."),
            "{hw}"
        );
        let out = v.run(&["search", "京都", "--mode", "semantic"]);
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("Semantic search is unavailable"), "{err}");
    }
    // The endpoint is back: the next reindex catches up without re-reading the files.
    v.server.set(Behaviour::Ok);
    let r = v.json(&["reindex"]);
    assert!(r["warning"].is_null(), "{r}");
    assert_eq!(r["indexedFiles"], 0, "{r}");
    let status = v.status();
    assert_eq!(status["vectors"]["pending"], 0, "{status}");
    assert!(status["vectors"]["lastError"].is_null());
    let s = v.search("京都", "hybrid", &[]);
    assert!(s["warning"].is_null(), "{s}");
    assert_eq!(s["results"][0]["searchMode"], "hybrid");

    // Down while serving a query: hybrid falls back, semantic says why.
    v.server.set(Behaviour::Status(503));
    let h = v.search("京都", "hybrid", &[]);
    assert!(h["warning"].as_str().unwrap().contains("returned 503"), "{h}");
    assert_eq!(h["results"][0]["searchMode"], "lexical");
}

#[test]
fn an_endpoint_that_is_not_running_is_reported_not_fatal() {
    let project = Project::from_fixture("ja");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let out = bin()
        .arg("--project-root")
        .arg(project.root())
        .args(["--embedding-provider", "openai-compatible", "--embedding-endpoint"])
        .arg(format!("http://127.0.0.1:{port}/v1"))
        .args(["reindex", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["indexedFiles"], 6);
    assert!(r["warning"].as_str().unwrap().contains("is not reachable"), "{r}");
}

#[test]
fn a_remote_endpoint_is_refused_unless_allowed() {
    let project = Project::from_fixture("ja");
    let out = bin()
        .arg("--project-root")
        .arg(project.root())
        .args(["--embedding-provider", "openai-compatible", "--embedding-endpoint", "http://203.0.113.7/v1"])
        .args(["reindex"])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("embedding.endpoint must be loopback unless allowRemoteEndpoint is true."), "{err}");
    assert!(!index_dir(project.root()).exists(), "nothing was indexed");
}

#[test]
fn embeddings_off_and_on_never_rebuild_the_lexical_index() {
    let v = Vectored::new(Project::from_fixture("ja"));
    let none = ["--embedding-provider", "none"];
    let r = v.json(&[&none[..], &["reindex"]].concat());
    assert_eq!(r["indexedFiles"], 6);
    assert!(
        !index_dir(v.project.root()).join("vectors.usearch").exists(),
        "lexical mode creates no vector file"
    );
    assert!(v.server.seen().is_empty());
    let lexical = lexical_files(v.project.root());

    // On: only vectors are built.
    let r = v.json(&["reindex"]);
    assert_eq!(r["indexedFiles"], 0, "{r}");
    assert!(r["warning"].is_null(), "{r}");
    assert_eq!(lexical_files(v.project.root()), lexical, "the lexical index was not touched");
    let chunks = v.status()["project"]["chunks"].as_u64().unwrap();
    assert_eq!(v.status()["vectors"]["vectors"].as_u64(), Some(chunks));

    // Off again: lexical search and reindex work without the server and without vectors.
    v.server.set(Behaviour::Status(500));
    let r = v.json(&[&none[..], &["reindex"]].concat());
    assert_eq!(r["indexedFiles"], 0, "{r}");
    assert!(r["warning"].is_null(), "{r}");
    assert_eq!(lexical_files(v.project.root()), lexical);
    let s = v.json(&[&none[..], &["search", "京都"]].concat());
    assert_eq!(s["results"][0]["searchMode"], "lexical");
    assert_eq!(
        s["warning"],
        "Semantic search is disabled (embedding.provider: none). Executed lexical search only."
    );
    let st = v.json(&[&none[..], &["status"]].concat());
    assert_eq!(st["indexMode"], "lexical");
    assert!(st.get("vectors").is_none(), "{st}");
    let out = v.run(&[&none[..], &["search", "京都", "--mode", "semantic"]].concat());
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("Semantic search is disabled (embedding.provider: none)")
    );
}

#[test]
fn a_model_change_needs_force_and_rebuilds_only_the_vectors() {
    let v = Vectored::new(Project::from_fixture("ja"));
    v.json(&["reindex"]);
    let lexical = lexical_files(v.project.root());
    v.server.clear();
    let other = ["--embedding-model", "other-model"];
    let r = v.json(&[&other[..], &["reindex"]].concat());
    let w = r["warning"].as_str().unwrap();
    assert!(w.contains("Vector index is incompatible with current configuration:"), "{w}");
    assert!(w.contains("- embedding_model: indexed 'bge-m3:latest', current 'other-model'"), "{w}");
    assert!(w.contains("force=true"), "{w}");
    assert!(v.server.seen().is_empty(), "nothing embedded without force");
    let st = v.json(&[&other[..], &["status"]].concat());
    assert_eq!(st["vectors"]["compatibility"]["isCompatible"], false, "{st}");
    assert_eq!(st["compatibility"]["isCompatible"], true, "the lexical index stays compatible");
    let out = v.run(&[&other[..], &["search", "京都", "--mode", "semantic"]].concat());
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("the vector index is incompatible"));

    let r = v.json(&[&other[..], &["reindex", "--force"]].concat());
    assert!(r["warning"].is_null(), "{r}");
    assert_eq!(r["indexedFiles"], 0, "lexical not rebuilt: {r}");
    assert_eq!(lexical_files(v.project.root()), lexical);
    let seen = v.server.seen();
    assert!(!seen.is_empty() && seen.iter().all(|s| s.model == "other-model"));
    let s = v.json(&[&other[..], &["search", "京都", "--mode", "semantic"]].concat());
    assert_eq!(s["results"][0]["searchMode"], "semantic");
}

#[test]
fn semantic_scope_finds_the_one_in_scope_document_among_99_better_ones() {
    let project = Project::empty();
    for i in 0..99 {
        project.write(
            &format!("noise/n{i:02}.md"),
            &format!("# 雑記 {i}\n\n検索エンジンの索引を高速に構築する方法 {i}\n"),
        );
    }
    project.write("docs/target.md", "# 目的\n\n索引とは無関係な、会議室の予約についての覚え書き。\n");
    let v = Vectored::new(project);
    v.json(&["reindex"]);
    let query = "検索エンジンの索引を高速に構築する方法";
    let all = v.search(query, "semantic", &["--top-k", "5"]);
    assert!(
        all["results"].as_array().unwrap().iter().all(|h| h["path"].as_str().unwrap().starts_with("noise/"))
    );
    let scoped = v.search(query, "semantic", &["--top-k", "1", "--include-glob", "docs/**"]);
    let results = scoped["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{scoped}");
    assert_eq!(results[0]["path"], "docs/target.md");
    let excluded = v.search(query, "semantic", &["--top-k", "50", "--exclude-glob", "noise/**"]);
    assert_eq!(excluded["results"].as_array().unwrap().len(), 1);
    let hybrid = v.search(query, "hybrid", &["--top-k", "3", "--include-glob", "docs/**"]);
    assert_eq!(hybrid["results"][0]["path"], "docs/target.md");
}

#[test]
fn a_deleted_or_damaged_vector_file_is_rebuilt_by_the_next_reindex() {
    let v = Vectored::new(Project::from_fixture("ja"));
    v.json(&["reindex"]);
    let chunks = v.status()["project"]["chunks"].as_u64().unwrap();
    let file = index_dir(v.project.root()).join("vectors.usearch");
    for damage in ["delete", "truncate"] {
        match damage {
            "delete" => std::fs::remove_file(&file).unwrap(),
            _ => std::fs::write(&file, b"not an index").unwrap(),
        }
        // Meanwhile hybrid still answers (lexically, saying why).
        let h = v.search("京都", "hybrid", &[]);
        assert_eq!(h["results"][0]["path"], "kyoto.md", "{damage}: {h}");
        v.server.clear();
        let r = v.json(&["reindex"]);
        assert!(r["warning"].is_null(), "{damage}: {r}");
        assert_eq!(r["indexedFiles"], 0, "{damage}: lexical untouched: {r}");
        assert_eq!(v.server.texts().len() as u64, chunks, "{damage}: every chunk embedded again");
        let status = v.status();
        assert_eq!(status["vectors"]["vectors"].as_u64(), Some(chunks), "{damage}: {status}");
        assert_eq!(status["vectors"]["pending"], 0);
        let s = v.search("京都", "semantic", &[]);
        assert_eq!(s["results"][0]["searchMode"], "semantic", "{damage}: {s}");
    }
}

/// The catch-up embeds one request at a time on its own thread, so an edit made while thousands
/// of chunks wait for a slow endpoint is indexed lexically at once, not after the catch-up.
#[test]
fn an_edit_during_a_large_vector_catch_up_is_searchable_before_the_catch_up_ends() {
    const FILES: usize = 500;
    const SECTIONS: usize = 11;
    let project = Project::empty();
    for f in 0..FILES {
        let mut text = format!("# 資料 {f}\n\n");
        for s in 0..SECTIONS {
            text.push_str(&format!("## 節 {f}-{s}\n\n倉庫{f}の在庫{s}について記録する。\n\n"));
        }
        project.write(&format!("docs/{:03}/{f}.md", f % 40), &text);
    }
    let v = Vectored::new(project);
    let mut config = std::fs::read_to_string(v.config_path()).unwrap();
    config.push_str("knowledgeBase:\n  allowWrites: true\n");
    std::fs::write(v.config_path(), config).unwrap();
    // A lexical index first (embeddings off), so the server starts with every chunk pending.
    v.project.ok(&["reindex"]);
    let status: Value = serde_json::from_str(&v.project.ok(&["status", "--json"])).unwrap();
    let chunks = status["project"]["chunks"].as_u64().unwrap();
    assert!(chunks >= (FILES * SECTIONS) as u64, "{chunks} chunks");

    // A slow endpoint: 4 chunks per request (batchSize 4), 40 ms a request → minutes of work.
    v.server.set(Behaviour::Stall(Duration::from_millis(40)));
    let config = v.config_path();
    let mut rpc = crate::rpc::Rpc::start(&[
        "--project-root".as_ref(),
        v.project.root().as_os_str(),
        "--config".as_ref(),
        config.as_os_str(),
    ]);
    let started = rpc.call("kb_reindex", serde_json::json!({"request": {}}));
    assert_eq!(started["started"], true, "{started}");
    // Wait until the catch-up is under way (some vectors saved or in flight).
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    loop {
        let status = rpc.call("kb_status", serde_json::json!({}));
        let embedding = &status["indexing"]["current"]["embedding"];
        if embedding["embeddedChunks"].as_u64().is_some_and(|n| n >= 8) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the catch-up never started: {status}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let t0 = std::time::Instant::now();
    let created = rpc.call(
        "kb_create",
        serde_json::json!({"request": {"path": "new/合言葉.md", "markdown": "# 合言葉\n\n山路の合言葉は翡翠である。\n"}}),
    );
    let found = loop {
        let hits =
            rpc.call("kb_search", serde_json::json!({"request": {"query": "翡翠", "mode": "lexical"}}));
        if hits["results"].as_array().is_some_and(|r| r.iter().any(|h| h["path"] == "new/合言葉.md")) {
            break t0.elapsed();
        }
        assert!(std::time::Instant::now() < deadline, "the new file never became searchable");
        std::thread::sleep(Duration::from_millis(10));
    };
    let status = rpc.call("kb_status", serde_json::json!({}));
    let embedded = status["indexing"]["current"]["embedding"]["embeddedChunks"].as_u64();
    eprintln!(
        "edit searchable after {found:?} (indexSynchronized {}), {embedded:?} of {chunks} chunks embedded",
        created["indexSynchronized"]
    );
    // The catch-up is still running, far from done: the edit did not wait for it.
    assert_eq!(status["indexing"]["isRunning"], true, "{status}");
    assert!(embedded.is_some_and(|n| n + 4_000 < chunks), "{status}");
    assert_eq!(status["synchronization"]["pendingFiles"], 0, "{status}");
}
