//! The project's ignore files decide what is indexed (issue #44 item 1, `docs/tools.md`, "What is
//! indexed"): `.gitignore` (nested ones too), `.ignore`, git's global excludes, as ripgrep reads
//! them; `knowledgeBase.respectIgnoreFiles: false` / `--no-ignore` indexes everything again; the
//! watcher follows the same rules and notices an edited `.gitignore`.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::rpc::Rpc;
use crate::support::{Project, bin, expect_success};

/// The word every file of [`repository`] holds, so one search lists what is indexed.
const WORD: &str = "共通語彙";

/// An ordinary repository: dependencies and build output ignored by the top `.gitignore`, a
/// nested `.gitignore` with a re-included file, an `.ignore`, and a global excludes file under
/// the private `home` the binary is run with.
fn repository() -> Project {
    let p = Project::empty();
    let body = |what: &str| format!("# {what}\n\n{WORD}を含む{what}の本文です。\n");
    p.write(".gitignore", "node_modules/\n/target/\n*.log.md\n");
    p.write("README.md", &body("説明"));
    p.write("docs/guide.md", &body("手引き"));
    p.write("node_modules/pkg/README.md", &body("依存パッケージ"));
    p.write("node_modules/pkg/CHANGELOG.md", &body("変更履歴"));
    p.write("target/doc/x.md", &body("ビルド成果物"));
    p.write("build.log.md", &body("ログ"));
    // Nested: drafts/ ignored below docs/, one file of it re-included is still out (git does
    // not enter an ignored folder); a pattern of this folder only.
    p.write("docs/.gitignore", "drafts/\n*.tmp.md\n!keep.tmp.md\n");
    p.write("docs/drafts/a.md", &body("下書き"));
    p.write("docs/note.tmp.md", &body("一時メモ"));
    p.write("docs/keep.tmp.md", &body("残すメモ"));
    // ripgrep's own ignore file, and git's global excludes (core.excludesFile's default place).
    p.write(".ignore", "scratch.md\n");
    p.write("scratch.md", &body("走り書き"));
    p.write("plan.secret.md", &body("秘密の計画"));
    p
}

/// A private HOME outside the project, whose git global excludes file ignores `*.secret.md`.
fn home() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".config/git")).unwrap();
    std::fs::write(home.path().join(".config/git/ignore"), "*.secret.md\n").unwrap();
    std::fs::write(home.path().join(".gitconfig"), "").unwrap();
    home
}

thread_local! {
    static HOME: tempfile::TempDir = home();
}

/// The files a repository [`repository`] indexes by default.
const KEPT: &[&str] = &["README.md", "docs/guide.md", "docs/keep.tmp.md"];

/// The binary with a private HOME (git's global excludes are read from it, never the user's).
fn cli(p: &Project) -> Command {
    let mut c = bin();
    let home = HOME.with(|h| h.path().to_path_buf());
    c.env("HOME", &home).env("XDG_CONFIG_HOME", home.join(".config"));
    c.arg("--project-root").arg(p.root()).args(["--embedding-provider", "none"]);
    c
}

fn run(p: &Project, args: &[&str]) -> String {
    expect_success(cli(p).args(args).output().unwrap(), args)
}

/// The distinct result paths of a lexical search for `query`, sorted.
fn found(p: &Project, query: &str) -> Vec<String> {
    let out = run(p, &["search", query, "--json", "--mode", "lexical", "--top-k", "50"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    let mut paths: Vec<String> =
        v["results"].as_array().unwrap().iter().map(|r| r["path"].as_str().unwrap().to_owned()).collect();
    paths.sort();
    paths.dedup();
    paths
}

#[test]
fn ignore_files_keep_dependencies_and_build_output_out_and_no_ignore_brings_them_back() {
    let p = repository();
    run(&p, &["reindex"]);
    assert_eq!(found(&p, WORD), KEPT, "only what no ignore file names is indexed");
    // kb_status says what was left out and by which rule.
    let status: Value = serde_json::from_str(&run(&p, &["status", "--json"])).unwrap();
    let ignored = &status["project"]["ignored"];
    let paths: Vec<(&str, &str)> = ignored["paths"]
        .as_array()
        .unwrap_or_else(|| panic!("no project.ignored: {status}"))
        .iter()
        .map(|e| (e["path"].as_str().unwrap(), e["rule"].as_str().unwrap()))
        .collect();
    for (path, rule) in [
        ("node_modules/", "node_modules/ (.gitignore)"),
        ("target/", "/target/ (.gitignore)"),
        ("build.log.md", "*.log.md (.gitignore)"),
        ("docs/drafts/", "drafts/ (docs/.gitignore)"),
        ("docs/note.tmp.md", "*.tmp.md (docs/.gitignore)"),
        ("scratch.md", "scratch.md (.ignore)"),
        ("plan.secret.md", "*.secret.md (git's global excludes file)"),
    ] {
        assert!(paths.contains(&(path, rule)), "{path} by {rule} missing from {paths:?}");
    }
    assert_eq!(ignored["count"], 7, "{ignored}");
    // The terminal's status says it in one line.
    let human = run(&p, &["status"]);
    assert!(human.contains("ignored:     7 by ignore files: "), "{human}");
    assert!(ignored["hint"].as_str().unwrap().contains("respectIgnoreFiles: false"), "{ignored}");

    // --no-ignore: everything is indexed again, the global excludes' file too.
    run(&p, &["--no-ignore", "reindex"]);
    let all = found_with(&p, &["--no-ignore"], WORD);
    assert_eq!(all.len(), 11, "{all:?}");
    assert!(
        all.contains(&"node_modules/pkg/README.md".to_owned()) && all.contains(&"target/doc/x.md".to_owned())
    );
    let status: Value = serde_json::from_str(&run(&p, &["--no-ignore", "status", "--json"])).unwrap();
    assert!(status["project"].get("ignored").is_none(), "{status}");
    // The setting in the configuration file does the same; back on, the ignored files go again.
    p.write("lvs.yaml", "knowledgeBase:\n  respectIgnoreFiles: false\n");
    let config = p.root().join("lvs.yaml");
    let config = config.to_str().unwrap();
    assert_eq!(found_with(&p, &["--config", config], WORD).len(), 11);
    run(&p, &["reindex"]);
    assert_eq!(found(&p, WORD), KEPT, "a reindex with ignore files on removes what they name");
}

fn found_with(p: &Project, global: &[&str], query: &str) -> Vec<String> {
    let mut args = global.to_vec();
    args.extend(["search", query, "--json", "--mode", "lexical", "--top-k", "50"]);
    let v: Value = serde_json::from_str(&run(p, &args)).unwrap();
    let mut paths: Vec<String> =
        v["results"].as_array().unwrap().iter().map(|r| r["path"].as_str().unwrap().to_owned()).collect();
    paths.sort();
    paths.dedup();
    paths
}

/// Searches over MCP until `done` accepts the paths found for `query`, or `limit` passes.
fn wait_for(rpc: &mut Rpc, query: &str, limit: Duration, done: impl Fn(&[String]) -> bool) -> Vec<String> {
    let deadline = Instant::now() + limit;
    loop {
        let hits = rpc.call("kb_search", json!({"request": {"query": query, "mode": "lexical", "topK": 50}}));
        let mut paths: Vec<String> = hits["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["path"].as_str().unwrap().to_owned())
            .collect();
        paths.sort();
        paths.dedup();
        if done(&paths) || Instant::now() > deadline {
            return paths;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_watcher_leaves_a_new_ignored_file_out_and_follows_an_edited_gitignore() {
    let p = repository();
    run(&p, &["reindex"]);
    let mut cmd = cli(&p);
    cmd.arg("--watch-files").stderr(Stdio::null());
    let mut rpc = Rpc::spawn(cmd);
    // Give the watcher its moment to start, then add one kept and one ignored file.
    std::thread::sleep(Duration::from_millis(300));
    let body = format!("# 新規\n\n{WORD}とペンギンを含む本文です。\n");
    write(p.root(), "node_modules/other/README.md", &body);
    write(p.root(), "docs/new.md", &body);
    let seen = wait_for(&mut rpc, "ペンギン", Duration::from_secs(15), |paths| !paths.is_empty());
    assert_eq!(seen, ["docs/new.md"], "the new kept file is indexed, the ignored one is not");
    // Still not after another quiet period.
    std::thread::sleep(Duration::from_millis(900));
    assert_eq!(wait_for(&mut rpc, "ペンギン", Duration::ZERO, |_| true), ["docs/new.md"]);
    // node_modules/ no longer ignored: the watcher reconciles the tree and indexes it.
    write(p.root(), ".gitignore", "/target/\n*.log.md\n");
    let seen = wait_for(&mut rpc, "ペンギン", Duration::from_secs(15), |paths| paths.len() == 2);
    assert_eq!(seen, ["docs/new.md", "node_modules/other/README.md"]);
    drop(rpc);
}

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn a_heading_only_document_is_found_by_its_heading() {
    let p = Project::empty();
    p.write("stub.md", "# 見出しだけの文書\n");
    p.write("outline.md", "# 設計メモ\n\n## 未記入の章\n\n## もう一つの章\n");
    let out = p.ok(&["reindex"]);
    assert!(!out.contains("(0 chunks)"), "{out}");
    assert_eq!(p.search_paths("見出しだけ"), ["stub.md"]);
    assert_eq!(p.search_paths("未記入"), ["outline.md"]);
    let hit = &p.search("見出しだけ", &[])["results"][0];
    assert!(hit["pointer"].as_str().unwrap().starts_with("1~"), "the first heading: {hit}");
    assert!(hit["snippet"].as_str().unwrap().contains("[見出し]"), "{hit}");
    // Only empty files: the index is not "empty" (they are indexed), it holds no text.
    let empty = Project::empty();
    empty.write("a.md", "");
    empty.write("b.md", "\n\n");
    empty.ok(&["reindex"]);
    let out = empty.run(&["search", "何か", "--json"]);
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(!text.contains("Index is empty"), "{text}");
    assert!(text.contains("2 file(s) but no searchable text"), "{text}");
}
