//! The index queue under edits with the file watcher on (issue #30, `docs/reliability.md`
//! "Soak, round 2"): a mutation that answered `indexSynchronized: true` is found by the very
//! next search even while the watcher reports the mutation's own write, and a reindex requested
//! while edits keep arriving runs between them instead of waiting for a quiet moment.
//!
//! Both use the real binary as a stdio server with `--watch-files`, and the failpoint
//! `indexer.after-read` to hold the index worker after it read a file, so that the interleaving
//! the soak hit by chance happens on every edit. No wall-clock assertion: the reindex test
//! bounds the number of edit rounds, not the time.

use std::path::Path;
use std::process::Stdio;

use serde_json::{Value, json};

use crate::rpc::Rpc;
use crate::support::{Project, bin};

const CONFIG: &str = "knowledgeBase:\n  allowWrites: true\n";

/// A stdio server with the watcher on over `project` (stderr to `log`), with `env` set.
fn server(project: &Project, log: &Path, env: &[(&str, &str)]) -> Rpc {
    let mut cmd = bin();
    cmd.arg("--project-root").arg(project.root()).args([
        "--embedding-provider",
        "none",
        "--config",
        "lvsm.yaml",
        "--watch-files",
    ]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.env("RUST_LOG", "info,lvs::queue=debug").stderr(Stdio::from(std::fs::File::create(log).unwrap()));
    Rpc::spawn(cmd)
}

/// The server log's last 40 lines, without the failpoint lines.
fn tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with("failpoint")).collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}

/// `n` spelled in letters (0-9 → a-j): one word for the tokenizer, so a search for the token
/// ranks only its own paragraph.
fn letters(n: usize) -> String {
    n.to_string().chars().map(|c| char::from(b'a' + c.to_digit(10).unwrap() as u8)).collect()
}

/// Whether a lexical search for `token` has a hit in `path`.
fn found(rpc: &mut Rpc, token: &str, path: &str) -> bool {
    let res = rpc.call("kb_search", json!({"request": {"query": token, "mode": "lexical", "topK": 10}}));
    res["results"].as_array().unwrap().iter().any(|r| r["path"] == path)
}

fn first_paragraph_pointer(rpc: &mut Rpc, path: &str) -> String {
    let read = rpc.call("kb_read", json!({"request": {"path": path}}));
    let para = read["elements"].as_array().unwrap().iter().find(|e| e["kind"] == "paragraph").cloned();
    para.unwrap_or_else(|| panic!("no paragraph in {read}"))["pointer"].as_str().unwrap().to_owned()
}

/// The soak's `search_missed`: the watcher's echo of a patch's own write was scheduled while the
/// patch still waited for its batch, and the queue counted the patch's change as synced because
/// a newer change of the file was pending, so `kb_patch` answered `indexSynchronized: true`
/// before the index had its text. The failpoint holds the worker 900 ms after it read the file,
/// so the echo (400 ms after the write) always lands inside the wait.
#[test]
fn every_patch_answered_synchronized_is_found_by_the_next_search_with_the_watcher_on() {
    const ROUNDS: usize = 6;
    let project = Project::empty();
    project.write("lvsm.yaml", CONFIG);
    project.write("race.md", "# 競合\n\n最初の段落です。\n\n二番目の段落です。\n");
    project.ok(&["--config", "lvsm.yaml", "reindex"]);
    let log = project.root().join("server.log");
    let mut rpc = server(
        &project,
        &log,
        // The patch waits as long as the index needs (the failpoint makes it slower than the
        // normal 500 ms wait), so every answer should be `true`.
        &[("LVS_FAILPOINTS", "indexer.after-read=sleep(900)"), ("LVS_SYNC_WAIT_MS", "60000")],
    );
    let pointer = first_paragraph_pointer(&mut rpc, "race.md");
    let (mut missed, mut unsynced) = (Vec::new(), Vec::new());
    for i in 0..ROUNDS {
        let token = format!("racetok{}q", letters(i + 1));
        let op = json!({"kind": "insert_after", "pointer": pointer, "markdown": format!("{token} 追記した段落。")});
        let res = rpc.call("kb_patch", json!({"request": {"path": "race.md", "operations": [op]}}));
        if res["indexSynchronized"] != true {
            unsynced.push(res);
            continue;
        }
        if !found(&mut rpc, &token, "race.md") {
            missed.push(token);
        }
    }
    let text = std::fs::read_to_string(project.root().join("race.md")).unwrap();
    assert!(text.contains(&format!("racetok{}q", letters(ROUNDS))), "{text}");
    assert!(unsynced.is_empty(), "patches not synchronized within 60 s: {unsynced:?}");
    assert!(
        missed.is_empty(),
        "{} of {ROUNDS} tokens not found right after kb_patch answered indexSynchronized: true: {missed:?}; \
         log tail:\n{}",
        missed.len(),
        tail(&log)
    );
}

/// The soak's reindex that ran for 600 s: the worker served queued edits before a requested
/// reindex, so under a steady stream of edits the reindex never started. Here the watcher feeds
/// the queue faster than the held worker drains it (24 files rewritten in turn, each read held
/// 150 ms); the reindex must still finish within a bounded number of edit rounds, and the edits
/// made meanwhile must all land afterwards.
#[test]
fn a_reindex_requested_while_edits_keep_arriving_finishes_between_edit_batches() {
    const FILES: usize = 24;
    /// Rounds of `FILES` writes; each round is followed by one `kb_status`.
    const MAX_ROUNDS: usize = 120;
    let project = Project::empty();
    project.write("lvsm.yaml", CONFIG);
    let name = |k: usize| format!("edit{k:02}.md");
    let body = |k: usize, token: &str| format!("# 文書 {k}\n\n編集の段落 {token} です。\n");
    // One token per file and round, so a search for it has one hit (a token shared by all 24
    // files would rank only 10 of them within `topK`).
    let token = |k: usize, round: usize| format!("editz{}x{}q", letters(round), letters(k));
    for k in 0..FILES {
        project.write(&name(k), &body(k, "startq"));
    }
    project.ok(&["--config", "lvsm.yaml", "reindex"]);
    let log = project.root().join("server.log");
    let mut rpc = server(&project, &log, &[("LVS_FAILPOINTS", "indexer.after-read=sleep(150)")]);

    let mut written = 0usize;
    let mut write_round = |round: usize| {
        for k in 0..FILES {
            project.write(&name(k), &body(k, &token(k, round)));
            written += 1;
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
    };
    // Edits flow first: the queue is busy when the reindex is asked for.
    let mut round = 1;
    loop {
        write_round(round);
        round += 1;
        let status = rpc.call("kb_status", json!({}));
        if status["synchronization"]["pendingFiles"].as_u64().unwrap() > 0 || round > 10 {
            break;
        }
    }
    let started = rpc.call("kb_reindex", json!({"request": {}}));
    assert_eq!(started["started"], true, "{started}");
    let mut finished: Option<(usize, Value)> = None;
    for rounds in 1..=MAX_ROUNDS {
        write_round(round);
        round += 1;
        let status = rpc.call("kb_status", json!({}));
        if status["indexing"]["isRunning"] == false {
            finished = Some((rounds, status));
            break;
        }
    }
    let Some((rounds, status)) = finished else {
        panic!(
            "the reindex was still running after {MAX_ROUNDS} rounds of {FILES} edits ({written} writes): \
             starved by the edits; log tail:\n{}",
            tail(&log)
        );
    };
    assert_eq!(status["indexing"]["last"]["outcome"], "succeeded", "{status}");
    eprintln!("the reindex finished after {rounds} rounds of {FILES} edits ({written} writes in all)");

    // The edits made meanwhile all land: every file's last token is found.
    let last = round - 1;
    let mut pending = (0..FILES).collect::<Vec<_>>();
    for _ in 0..600 {
        pending.retain(|&k| !found(&mut rpc, &token(k, last), &name(k)));
        if pending.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(
        pending.is_empty(),
        "round {last}'s tokens never became searchable in files {pending:?}; status {}; log tail:\n{}",
        rpc.call("kb_status", json!({})),
        tail(&log)
    );
}

/// The link snapshot of an edit is written after a quiet moment, not before the next edit is
/// taken (`docs/design/indexing-service.md`, "Edits searchable fast", step 6). Whatever the
/// timing, every link a burst of patches added must be in `kb_links` once `kb_status` shows
/// nothing pending, and a server that exits right after its last patch must leave the snapshot
/// of its last commit behind (`links.gen` = the generation of `status.json`).
#[test]
fn links_added_by_a_burst_of_patches_are_listed_once_nothing_is_pending_and_written_at_exit() {
    const PATCHES: usize = 5;
    let project = Project::empty();
    project.write("lvsm.yaml", CONFIG);
    project.write("a.md", "# 起点\n\n最初の段落です。\n");
    for k in 0..PATCHES {
        project.write(&format!("t{k}.md"), &format!("# 行き先 {k}\n\n本文。\n"));
    }
    project.ok(&["--config", "lvsm.yaml", "reindex"]);
    let log = project.root().join("server.log");
    let mut rpc = server(&project, &log, &[]);
    let pointer = first_paragraph_pointer(&mut rpc, "a.md");
    for k in 0..PATCHES {
        let op = json!({"kind": "insert_after", "pointer": pointer, "markdown": format!("[行き先 {k}](t{k}.md) への参照。")});
        let res = rpc.call("kb_patch", json!({"request": {"path": "a.md", "operations": [op]}}));
        assert_eq!(res["indexSynchronized"], true, "{res}");
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(12);
    if let Err(status) = rpc.synchronized_by(deadline) {
        panic!("still pending after 12 s: {status}\n{}", tail(&log));
    }
    let links = rpc.call("kb_links", json!({"request": {"path": "a.md", "direction": "outgoing"}}));
    let mut targets: Vec<&str> =
        links["edges"].as_array().unwrap().iter().filter_map(|e| e["to"].as_str()).collect();
    targets.sort_unstable();
    let expected: Vec<String> = (0..PATCHES).map(|k| format!("t{k}.md")).collect();
    assert_eq!(targets, expected, "{links}");

    // One more patch, and the server is told to exit at once: the deferred snapshot is written.
    let op = json!({"kind": "insert_after", "pointer": pointer, "markdown": "[起点](a.md) 自己参照。"});
    let res = rpc.call("kb_patch", json!({"request": {"path": "a.md", "operations": [op]}}));
    assert_eq!(res["indexSynchronized"], true, "{res}");
    let exit = rpc.close();
    assert!(
        exit.is_some_and(|s| s.success()),
        "the server did not exit cleanly when its client hung up: {exit:?}"
    );
    let dir = project.root().join(".local-vector-search-mcp");
    let status: Value = serde_json::from_slice(&std::fs::read(dir.join("status.json")).unwrap()).unwrap();
    let links_gen = std::fs::read_to_string(dir.join("links.gen")).unwrap();
    assert_eq!(links_gen.trim(), status["generation"].to_string(), "{status}\n{}", tail(&log));
}
