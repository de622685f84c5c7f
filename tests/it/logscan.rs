//! What the binary writes to stderr at `RUST_LOG=trace` (issue #30 item 4): a CLI reindex and
//! a stdio server doing a reindex with an embedding key, hybrid searches, a patch and an image
//! download refused for SSRF. The log must hold no API key, no signed-URL query string, no
//! sentence of a document or of a patch, and no vector. `docs/reliability.md`, "Logs".

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::fake_embed::FakeEmbed;
use crate::rpc::Rpc;
use crate::support::{Project, bin};

const DIMS: usize = 16;
/// The API key: distinctive, so any trace of it in the log is found.
const KEY: &str = "sk-logscan-K3yN0tF0rL0gs-9f2c";
/// The signature and credential of the signed download URL.
const SIG: &str = "SECRETSIG123";
const CRED: &str = "AKIALOGSCANCRED";
/// A sentence only the patch writes.
const PATCHED: &str = "ログ走査のために追記した秘密の一文は標準エラーに出てはならない";

/// The config: embeddings through `server` with [`KEY`], writes allowed.
fn config(dir: &Path, server: &FakeEmbed) -> std::path::PathBuf {
    let path = dir.join("lvs.yaml");
    std::fs::write(
        &path,
        format!(
            "knowledgeBase:\n  allowWrites: true\nembedding:\n  provider: openai-compatible\n  endpoint: {}\n  apiKey: {KEY}\n  dimensions: {DIMS}\n  batchSize: 4\nsearch:\n  defaultMode: hybrid\n",
            server.endpoint
        ),
    )
    .unwrap();
    path
}

/// Sentences of the fixture's Markdown (paragraph and list text, split at 。), at least 12
/// characters long: what a log line quoting a document would contain.
fn document_sentences(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for file in crate::support::markdown_files(root) {
        let text = std::fs::read_to_string(&file).unwrap();
        let mut fenced = false;
        for line in text.lines() {
            let line = line.trim();
            if line.starts_with("```") {
                fenced = !fenced;
                continue;
            }
            if fenced
                || line.starts_with('#')
                || line.starts_with('|')
                || line.contains(": ") && !line.contains('。')
            {
                continue;
            }
            let line = line.trim_start_matches(['-', '*', '>', ' ']);
            for s in line.split('。') {
                let s = s.trim();
                if s.chars().count() >= 12 {
                    out.push(s.to_owned());
                }
            }
        }
    }
    out
}

/// A run of eight or more comma-separated decimal numbers: a vector (or a part of one).
fn has_float_run(log: &str) -> Option<String> {
    let bytes: Vec<char> = log.chars().collect();
    let mut run = 0;
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        // one number: -?digits.digits
        let s = i;
        let mut j = i;
        if j < bytes.len() && bytes[j] == '-' {
            j += 1;
        }
        let d0 = j;
        while j < bytes.len() && bytes[j].is_ascii_digit() {
            j += 1;
        }
        let mut number = j > d0 && j < bytes.len() && bytes[j] == '.';
        if number {
            j += 1;
            let d1 = j;
            while j < bytes.len() && bytes[j].is_ascii_digit() {
                j += 1;
            }
            number = j > d1;
        }
        if number {
            if run == 0 {
                start = s;
            }
            run += 1;
            if run >= 8 {
                return Some(bytes[start..j.min(start + 200)].iter().collect());
            }
            // separator: ", " or ","
            while j < bytes.len() && (bytes[j] == ',' || bytes[j] == ' ') {
                j += 1;
            }
            i = j;
        } else {
            run = 0;
            i = s + 1;
        }
    }
    None
}

/// Fails with the offending log lines when `log` holds a secret, a sentence or a vector.
fn assert_clean(log: &str, sentences: &[String], what: &str) {
    let lines = |needle: &str| -> String {
        log.lines().filter(|l| l.contains(needle)).take(3).collect::<Vec<_>>().join("\n")
    };
    for secret in [KEY, SIG, CRED, "X-Amz-Signature", "X-Amz-Credential"] {
        assert!(!log.contains(secret), "{what}: the log holds `{secret}`:\n{}", lines(secret));
    }
    for s in sentences {
        assert!(!log.contains(s.as_str()), "{what}: the log quotes a document sentence `{s}`:\n{}", lines(s));
    }
    if let Some(v) = has_float_run(log) {
        panic!("{what}: the log holds a vector: {v}");
    }
}

fn wait_for_reindex(rpc: &mut Rpc) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let st = rpc.call("kb_status", json!({}));
        if st["indexing"]["isRunning"] == false && st["indexing"]["last"].is_object() {
            assert_eq!(st["indexing"]["last"]["outcome"], "succeeded", "{st}");
            return;
        }
        assert!(Instant::now() < deadline, "the reindex did not finish: {st}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn paths(result: &Value) -> Vec<String> {
    result["results"].as_array().unwrap().iter().map(|r| r["path"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn trace_logs_hold_no_secret_no_text_and_no_vector() {
    let project = Project::from_fixture("ja");
    let server = FakeEmbed::start(DIMS);
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), &server);
    let mut sentences = document_sentences(project.root());
    assert!(sentences.len() >= 10, "too few fixture sentences to scan for: {sentences:?}");
    sentences.push(PATCHED.to_owned());
    let common = |cmd: &mut std::process::Command| {
        cmd.arg("--project-root").arg(project.root()).arg("--config").arg(&config).env("RUST_LOG", "trace");
    };

    // 1. A CLI reindex (the first full index: every chunk embedded, with the key).
    let mut cmd = bin();
    common(&mut cmd);
    let out = cmd.arg("reindex").output().unwrap();
    assert!(out.status.success(), "reindex failed: {}", String::from_utf8_lossy(&out.stderr));
    let cli_log = String::from_utf8_lossy(&out.stderr).into_owned();
    let seen = server.seen();
    assert!(!seen.is_empty(), "the reindex never called the embedding server");
    assert!(seen.iter().all(|s| s.authorization.as_deref() == Some(&format!("Bearer {KEY}"))), "{seen:?}");
    // Trace is really on: the product's own debug lines are there (so a clean log means something).
    assert!(
        cli_log.lines().any(|l| l.contains("TRACE") || l.contains("DEBUG")),
        "no debug lines:\n{cli_log}"
    );
    assert_clean(&cli_log, &sentences, "CLI reindex");

    // 2. A stdio server: a reindex, hybrid searches, a read and a patch, a refused download.
    let log_path = dir.path().join("server.log");
    let mut cmd = bin();
    common(&mut cmd);
    cmd.stderr(Stdio::from(std::fs::File::create(&log_path).unwrap()));
    let mut rpc = Rpc::spawn(cmd);
    std::fs::write(project.root().join("kyoto.md"), {
        let t = std::fs::read_to_string(project.root().join("kyoto.md")).unwrap();
        t + "\n外部で書き足した段落は変更のある再索引で拾われる必要がある。\n"
    })
    .unwrap();
    sentences.push("外部で書き足した段落は変更のある再索引で拾われる必要がある".to_owned());
    rpc.call("kb_reindex", json!({"request": {}}));
    wait_for_reindex(&mut rpc);

    let hits =
        rpc.call("kb_search", json!({"request": {"query": "京都の利用者", "mode": "hybrid", "topK": 5}}));
    assert!(paths(&hits).contains(&"kyoto.md".to_owned()), "{hits}");
    let read = rpc.call("kb_read", json!({"request": {"path": "kyoto.md"}}));
    let para =
        read["elements"].as_array().unwrap().iter().find(|e| e["kind"] == "paragraph").expect("a paragraph");
    let patched = rpc.call(
        "kb_patch",
        json!({"request": {"path": "kyoto.md", "operations": [
            {"kind": "insert_after", "pointer": para["pointer"], "markdown": format!("{PATCHED}。")}
        ]}}),
    );
    assert_eq!(patched["indexSynchronized"], true, "{patched}");
    let hits = rpc.call("kb_search", json!({"request": {"query": PATCHED, "mode": "hybrid", "topK": 5}}));
    assert!(paths(&hits).contains(&"kyoto.md".to_owned()), "{hits}");

    let signed = format!(
        "https://127.0.0.1:9/bucket/photo.png?X-Amz-Credential={CRED}&X-Amz-Signature={SIG}&X-Amz-Expires=300"
    );
    let refused = rpc.call_raw("kb_save_image", json!({"file": {"download_url": signed, "file_id": "f1"}}));
    let text = refused["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert!(text.contains("local or private destination") && !text.contains(SIG), "{text}");
    let refused = rpc.call_raw(
        "kb_save_image",
        json!({"file": {"download_url": format!("https://localhost/p.png?X-Amz-Signature={SIG}"), "file_id": "f2"}}),
    );
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    drop(rpc);

    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(log.lines().any(|l| l.contains("TRACE") || l.contains("DEBUG")), "no debug lines:\n{log}");
    assert_clean(&log, &sentences, "server");
}

#[test]
fn the_float_run_detector_finds_vectors_and_nothing_else() {
    assert!(has_float_run("embedding [0.12, -0.5, 0.33, 0.1, 0.9, 0.0, 0.25, -0.75, 0.5]").is_some());
    assert!(has_float_run("x=0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8").is_some());
    assert!(has_float_run("took 1.5 ms, 2.5 ms and 0.25 s; v0.9.1 2026-12-01T22:00:00.123Z").is_none());
    assert!(has_float_run("[0.1, 0.2, 0.3] and [0.4, 0.5]").is_none());
}
