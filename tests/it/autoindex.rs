//! A server that indexes (and repairs) by itself (issue #26 item 3, issue #30 item 1): started
//! on a project without an index, or with a damaged one, it builds or rebuilds it in the
//! background at once; `kb_search` answers results, or `INDEX_NOT_READY` with the progress
//! while the first build runs, and never needs a `kb_reindex`. The CLI `search` repairs a
//! damaged index before it searches. `docs/tools.md`, "The index builds itself".

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};

use crate::rpc::Rpc;
use crate::support::{Project, bin, copy_tree, shared_or_skip};

/// A stdio server over `root` (lexical only) with stderr written to `log`, `extra` arguments
/// and `env` set.
fn server(root: &Path, log: &Path, extra: &[&str], env: &[(&str, &str)]) -> Rpc {
    let mut cmd = bin();
    cmd.arg("--project-root").arg(root).args(["--embedding-provider", "none"]).args(extra);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.env("RUST_LOG", "info").stderr(Stdio::from(std::fs::File::create(log).unwrap()));
    Rpc::spawn(cmd)
}

/// What one `kb_search` answered: the result paths, or the error's whole frame as text.
fn search_once(rpc: &mut Rpc, query: &str) -> Result<Vec<String>, String> {
    let frame =
        rpc.call_raw("kb_search", json!({"request": {"query": query, "mode": "lexical", "topK": 50}}));
    let result = &frame["result"];
    if result["isError"] == true {
        return Err(frame.to_string());
    }
    let mut paths: Vec<String> = Vec::new();
    for r in result["structuredContent"]["results"].as_array().unwrap() {
        let p = r["path"].as_str().unwrap().to_owned();
        if !paths.contains(&p) {
            paths.push(p);
        }
    }
    Ok(paths)
}

/// Searches until results come (at most `tries` answers); every refusal on the way must be
/// `INDEX_NOT_READY` saying the index is being built. Returns the results and the refusals.
fn search_until_results(rpc: &mut Rpc, query: &str, tries: usize) -> (Vec<String>, Vec<String>) {
    let mut refusals = Vec::new();
    for _ in 0..tries {
        match search_once(rpc, query) {
            Ok(paths) if !paths.is_empty() => return (paths, refusals),
            Ok(_) => refusals.push("no results".to_owned()),
            Err(frame) => {
                assert!(frame.contains("INDEX_NOT_READY"), "not a readiness refusal: {frame}");
                assert!(
                    frame.contains("The index is being built")
                        && frame.contains("try again in a few seconds"),
                    "a refusal without progress: {frame}"
                );
                refusals.push(frame);
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!("no results after {tries} searches; refusals: {refusals:?}");
}

#[test]
fn a_server_on_an_unindexed_fixture_finds_results_in_its_first_search_without_kb_reindex() {
    let project = Project::from_fixture("ja");
    let log = tempfile::NamedTempFile::new().unwrap();
    let log = log.path().to_path_buf();
    let mut rpc = server(project.root(), &log, &[], &[]);
    // The search waits for the small first build (at most 2 s) and answers with results.
    let first = search_once(&mut rpc, "京都").unwrap_or_else(|e| panic!("first search refused: {e}"));
    assert!(first.contains(&"kyoto.md".to_owned()), "{first:?}");
    let status = rpc.call("kb_status", json!({}));
    assert!(status["project"]["documents"].as_u64().unwrap() > 0, "{status}");
    drop(rpc);
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(log.contains("no index yet; building it in the background"), "{log}");
}

/// While a slow first build runs (each file held 700 ms by a failpoint), a search waits its
/// bounded time, then says how far the build is; a bad argument is refused at once; `kb_read`
/// and `kb_outline` answer meanwhile;
/// the results come without any `kb_reindex`.
#[test]
fn during_a_slow_first_build_search_reports_progress_and_reads_work() {
    let project = Project::from_fixture("ja");
    let log = tempfile::NamedTempFile::new().unwrap();
    let log = log.path().to_path_buf();
    let mut rpc =
        server(project.root(), &log, &[], &[("LVS_FAILPOINTS", "indexer.reindex.file-done=sleep(700)")]);
    let frame =
        search_once(&mut rpc, "京都").expect_err("the first search of a slow build should be refused");
    assert!(frame.contains("INDEX_NOT_READY"), "{frame}");
    let files = crate::support::markdown_files(project.root()).len();
    let progress = regex_like_progress(&frame);
    let (done, total) = progress.unwrap_or_else(|| panic!("no 'indexing N of M files' in {frame}"));
    assert_eq!(total, files, "{frame}");
    assert!(done < total, "{frame}");
    // A bad argument is refused as such while the build still runs, not after a wait for the
    // index as INDEX_NOT_READY: the request is checked before the index is opened (issue #43).
    let bad = rpc.call_raw("kb_search", json!({"request": {"query": "   "}})).to_string();
    assert!(bad.contains("INVALID_ARGUMENT") && bad.contains("query must not be empty"), "{bad}");
    assert!(!bad.contains("INDEX_NOT_READY"), "{bad}");
    let read = rpc.call("kb_read", json!({"request": {"path": "kyoto.md"}}));
    assert!(read["markdown"].as_str().unwrap().contains("京都"), "{read}");
    let outline = rpc.call("kb_outline", json!({"request": {"path": "kyoto.md"}}));
    assert!(!outline["headings"].as_array().unwrap().is_empty(), "{outline}");
    let (paths, _) = search_until_results(&mut rpc, "京都", 150);
    assert!(paths.contains(&"kyoto.md".to_owned()), "{paths:?}");
}

/// `(N, M)` of "indexing N of M files" (thousands separators allowed).
fn regex_like_progress(text: &str) -> Option<(usize, usize)> {
    let at = text.find("indexing ")? + "indexing ".len();
    let rest = &text[at..];
    let (done, rest) = rest.split_once(" of ")?;
    let (total, _) = rest.split_once(" files")?;
    let n = |s: &str| s.replace(',', "").parse::<usize>().ok();
    Some((n(done)?, n(total)?))
}

#[test]
fn a_server_on_an_unindexed_corpus_copy_finds_results_without_kb_reindex() {
    let Some(corpora) = shared_or_skip("corpora") else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("js-primer");
    copy_tree(&corpora.join("js-primer"), &root);
    let log = dir.path().join("server.log");
    let mut rpc = server(&root, &log, &[], &[]);
    let (paths, refusals) = search_until_results(&mut rpc, "非同期処理", 300);
    assert!(!paths.is_empty());
    for r in &refusals {
        assert!(regex_like_progress(r).is_some() || r.contains("listing the files"), "{r}");
    }
    let status = rpc.call("kb_status", json!({}));
    assert!(status["indexing"]["last"].is_object() || status["indexing"]["isRunning"] == true, "{status}");
}

/// `index.autoIndex: false` keeps the original's explicit `kb_reindex`.
#[test]
fn auto_index_false_leaves_a_new_project_unindexed_until_kb_reindex() {
    let project = Project::from_fixture("ja");
    let config_dir = tempfile::tempdir().unwrap();
    let config = config_dir.path().join("no-auto.yaml");
    std::fs::write(&config, "index:\n  autoIndex: false\n").unwrap();
    let log = tempfile::NamedTempFile::new().unwrap();
    let log = log.path().to_path_buf();
    let mut rpc = server(project.root(), &log, &["--config", config.to_str().unwrap()], &[]);
    std::thread::sleep(Duration::from_millis(1500));
    let frame = search_once(&mut rpc, "京都").expect_err("searched an index nobody built");
    assert!(frame.contains("Index is empty. Run kb_reindex first"), "{frame}");
    rpc.call("kb_reindex", json!({"request": {}}));
    let (paths, _) = search_until_results(&mut rpc, "京都", 150);
    assert!(paths.contains(&"kyoto.md".to_owned()));
}

type Damage = fn(&Project);

fn each_file(dir: &Path, f: impl Fn(&Path)) {
    for entry in std::fs::read_dir(dir).unwrap() {
        f(&entry.unwrap().path());
    }
}

fn lexical_dir(p: &Project) -> std::path::PathBuf {
    p.root().join(".local-vector-search-mcp/lexical")
}

fn store(p: &Project) -> std::path::PathBuf {
    p.root().join(".local-vector-search-mcp/meta.redb")
}

/// Every kind of damage the reliability tests produce (`docs/reliability.md`, "Damaged or
/// foreign index state"), with a word its repair log line contains.
fn damages() -> Vec<(&'static str, Damage, &'static str)> {
    vec![
        (
            "truncated term and index files",
            |p| {
                each_file(&lexical_dir(p), |f| {
                    if f.extension().is_some_and(|e| e == "term" || e == "idx") {
                        std::fs::OpenOptions::new().write(true).open(f).unwrap().set_len(10).unwrap();
                    }
                })
            },
            "lexical index is damaged",
        ),
        (
            "garbage meta.json",
            |p| std::fs::write(lexical_dir(p).join("meta.json"), "{ not json").unwrap(),
            "lexical index is damaged",
        ),
        (
            "deleted store files",
            |p| {
                each_file(&lexical_dir(p), |f| {
                    if f.extension().is_some_and(|e| e == "store") {
                        std::fs::remove_file(f).unwrap();
                    }
                })
            },
            "lexical index is damaged",
        ),
        (
            "garbage meta.redb",
            |p| {
                let bytes: Vec<u8> =
                    (0..100_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
                std::fs::write(store(p), bytes).unwrap();
            },
            "index store is damaged",
        ),
        (
            "truncated meta.redb",
            |p| {
                let good = std::fs::read(store(p)).unwrap();
                std::fs::write(store(p), &good[..good.len().min(5000)]).unwrap();
            },
            "index store is damaged",
        ),
        ("an index of the previous format", crate::format::write_format_1_store, "format lvs-1"),
        (
            "garbage status.json",
            |p| std::fs::write(p.root().join(".local-vector-search-mcp/status.json"), "{ not json").unwrap(),
            "status.json",
        ),
    ]
}

#[test]
fn every_kind_of_damage_is_repaired_by_a_server_without_being_asked() {
    for (what, damage, said) in damages() {
        let project = Project::from_fixture("ja");
        project.ok(&["reindex"]);
        let before = project.search_paths("京都");
        assert!(!before.is_empty());
        damage(&project);
        let log = tempfile::NamedTempFile::new().unwrap();
        let log = log.path().to_path_buf();
        let mut rpc = server(project.root(), &log, &[], &[]);
        let (paths, _) = search_until_results(&mut rpc, "京都", 150);
        assert_eq!(paths, before, "{what}");
        // The catch-up at start (a second in) repairs what the first search did not need.
        let mut status = Value::Null;
        for _ in 0..300 {
            status = rpc.call("kb_status", json!({}));
            if status["indexing"]["last"].is_object() && status["indexing"]["isRunning"] == false {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        assert_eq!(status["indexing"]["last"]["outcome"], "succeeded", "{what}: {status}");
        assert!(status["project"]["documents"].as_u64().unwrap() > 0, "{what}: {status}");
        drop(rpc);
        let log = std::fs::read_to_string(&log).unwrap();
        assert!(log.contains(said), "{what}: the log does not say what was found: {log}");
        assert_eq!(project.search_paths("京都"), before, "{what}: the repair did not last");
    }
}

#[test]
fn every_kind_of_damage_is_repaired_by_the_cli_search_without_being_asked() {
    for (what, damage, said) in damages() {
        let project = Project::from_fixture("ja");
        project.ok(&["reindex"]);
        let before = project.search_paths("京都");
        damage(&project);
        let out = project.run(&["search", "京都", "--json", "--mode", "lexical", "--top-k", "50"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{what}: search failed: {stderr}");
        assert!(stderr.contains(said), "{what}: the log does not say what was found: {stderr}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let mut paths: Vec<String> = Vec::new();
        for r in v["results"].as_array().unwrap() {
            let p = r["path"].as_str().unwrap().to_owned();
            if !paths.contains(&p) {
                paths.push(p);
            }
        }
        assert_eq!(paths, before, "{what}");
        // Nothing left to repair: the next search is quiet.
        let out = project.run(&["search", "京都", "--mode", "lexical"]);
        assert!(out.status.success());
        let again = String::from_utf8_lossy(&out.stderr);
        assert!(!again.contains(said), "{what}: repaired again: {again}");
    }
}

/// The resolved project root is logged once when a server starts (with a relative
/// `--project-root`, the only place that shows where it resolved to).
#[test]
fn a_server_logs_its_resolved_project_root_once() {
    let project = Project::from_fixture("ja");
    let log = tempfile::NamedTempFile::new().unwrap();
    let log = log.path().to_path_buf();
    let parent = project.root().parent().unwrap();
    let name = project.root().file_name().unwrap();
    let mut cmd = bin();
    cmd.current_dir(parent)
        .arg("--project-root")
        .arg(name)
        .args(["--embedding-provider", "none"])
        .env("RUST_LOG", "info")
        .stderr(Stdio::from(std::fs::File::create(&log).unwrap()));
    let mut rpc = Rpc::spawn(cmd);
    let listed = rpc.call("kb_list_files", json!({"request": {}}));
    assert!(!listed["files"].as_array().unwrap().is_empty());
    drop(rpc);
    let log = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = log.lines().filter(|l| l.contains("project root:")).collect();
    assert_eq!(lines.len(), 1, "{log}");
    assert!(lines[0].contains(&project.root().display().to_string()), "{log}");
}

/// A first index of a large project (2,500 files, each held 2 ms by a failpoint, so it runs for
/// seconds after its first commit of 1,000): a search answered meanwhile says in `warning` how
/// many files it covers of how many (issue #44 item 3); once the build is done, no warning.
#[test]
fn a_search_during_a_first_index_says_how_much_of_the_project_it_covers() {
    let project = Project::empty();
    for i in 0..2500 {
        project.write(&format!("d{}/f{i}.md", i % 25), &format!("# 文書{i}\n\n共通の本文と番号{i}です。\n"));
    }
    let log = tempfile::NamedTempFile::new().unwrap();
    let log = log.path().to_path_buf();
    let mut rpc =
        server(project.root(), &log, &[], &[("LVS_FAILPOINTS", "indexer.reindex.file-done=sleep(2)")]);
    let mut partial = None;
    for _ in 0..200 {
        let frame = rpc.call_raw("kb_search", json!({"request": {"query": "共通", "mode": "lexical"}}));
        let result = &frame["result"];
        if result["isError"] == true {
            let text = frame.to_string();
            assert!(text.contains("INDEX_NOT_READY"), "{text}");
            std::thread::sleep(Duration::from_millis(100));
            continue;
        }
        let warning = result["structuredContent"]["warning"].as_str().unwrap_or_default().to_owned();
        // The text block (what Claude Code shows its model) carries the same warning.
        assert!(result["content"][0]["text"].as_str().unwrap().contains(&warning), "{frame}");
        partial = Some(warning);
        break;
    }
    let warning = partial.expect("no search answered during the build");
    let covered = warning
        .strip_prefix("The index is still being built: this answer covers ")
        .and_then(|rest| rest.split_once(" of 2,500 files"))
        .and_then(|(n, _)| n.replace(',', "").parse::<u64>().ok())
        .unwrap_or_else(|| panic!("no 'covers N of 2,500 files' warning: {warning:?}"));
    assert!((1..2500).contains(&covered), "{warning}");
    // kb_status shows the progress of the same build.
    let status = rpc.call("kb_status", json!({}));
    if status["indexing"]["isRunning"] == true {
        assert_eq!(status["indexing"]["current"]["totalFiles"], 2500, "{status}");
    }
    // Done: the same search has no warning.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while rpc.call("kb_status", json!({}))["indexing"]["isRunning"] == true {
        assert!(std::time::Instant::now() < deadline, "the build did not finish");
        std::thread::sleep(Duration::from_millis(200));
    }
    let done = rpc.call("kb_search", json!({"request": {"query": "共通", "mode": "lexical"}}));
    assert!(done.get("warning").is_none_or(Value::is_null), "{done}");
}
