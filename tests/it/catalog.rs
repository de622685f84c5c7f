//! The document catalog through the binary: `check` (exit codes CI can use, `--json`, `--base`
//! in a temporary git repository) and `init` (`docs/reference/catalog-spec.md` §8.1, §8.4,
//! scenarios 69 and 70).

use std::path::Path;
use std::process::Command;

use crate::support::Project;

/// The index of `docs/reference/catalog-spec.md` §4.2 (fixture F1), trimmed to what these tests
/// need.
const INDEX: &str = "# 文書の索引。\nversion: 1\ndocs:\n  - id: arch\n    path: 設計/arch.md\n    title: アーキテクチャ\n    aliases: [全体構成]\n    tags: [{name: 設計, main: true}, MCP]\n    related:\n      - to: api\n        type: requires\n        when: API を変えるとき\n  - id: api\n    path: guide/api.md\n    title: API リファレンス\n    tags: [topic:mcp, 設計]\n    related:\n      - to: api-en\n        type: change_together\n        when: 英訳を同じ変更で直す\n        paths: [../src/tools/**]\n  - id: api-en\n    path: guide/api.en.md\n    title: API reference (English)\n    tags: [{name: topic:mcp, main: true}]\n    related:\n      - to: api\n        type: change_together\n        when: 和文を同じ変更で直す\n  - id: notes\n    path: notes.md\n    title: 開発メモ\n    tags: [旧タグ]\ntags:\n  - name: 設計\n  - name: topic:mcp\n    aliases: [MCP]\n  - name: 旧タグ\n    deprecated: 設計\n";

const CONFIG: &str = "knowledgeBase:\n  root: .\n  allowWrites: true\ncatalog:\n  index: docs/index.yaml\n  scan: [\"docs/**/*.md\"]\n";

fn f1() -> Project {
    let p = Project::empty();
    p.write("lvsm.yaml", CONFIG);
    p.write("docs/index.yaml", INDEX);
    p.write("docs/設計/arch.md", "# アーキテクチャ\n\n[API](../guide/api.md#ツールの一覧)\n");
    p.write("docs/guide/api.md", "# API リファレンス\n\n## ツールの一覧\n");
    p.write("docs/guide/api.en.md", "# API reference\n\nSee [notes](../notes.md).\n");
    p.write("docs/notes.md", "# 開発メモ\n\n全体構成の図は後で直す。\n");
    p.write("docs/draft.md", "# 下書き\n");
    p
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

#[test]
fn check_reports_issues_with_exit_code_one_and_none_with_zero() {
    let p = f1();
    let out = p.run(&["--config", "lvsm.yaml", "check"]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(lines[0].starts_with("docs/index.yaml:docs[3].tags[0]: deprecated_tag: "), "{stdout}");
    assert!(lines[1].starts_with("docs/draft.md: unindexed_doc: "), "{stdout}");
    assert!(text(&out.stderr).ends_with("check: 2 issues\n"), "{}", text(&out.stderr));
    // --json prints kb_check's result.
    let out = p.run(&["--config", "lvsm.yaml", "check", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["issues"][1]["kind"], "unindexed_doc");
    assert_eq!(json["issues"][1]["where"], "");
    // --ignore leaves a kind out.
    let out = p.run(&["--config", "lvsm.yaml", "check", "--ignore", "unindexed_doc"]);
    assert_eq!(text(&out.stdout).lines().count(), 1);
    // Fixed: nothing on stdout, exit 0.
    p.write("docs/index.yaml", &INDEX.replace("tags: [旧タグ]", "tags: [設計]"));
    std::fs::remove_file(p.root().join("docs/draft.md")).unwrap();
    let out = p.run(&["--config", "lvsm.yaml", "check"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "");
    assert!(text(&out.stderr).ends_with("check: no issues\n"));
    // A check that cannot run: exit 1, nothing on stdout, one error sentence.
    let out = p.run(&["--config", "lvsm.yaml", "check", "--base", "no-such-ref"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), "");
    assert!(text(&out.stderr).contains("error: "), "{}", text(&out.stderr));
    // A usage error: exit 2.
    assert_eq!(p.run(&["check", "--no-such-flag"]).status.code(), Some(2));
}

#[test]
fn check_with_a_catalog_config_file_relative_to_the_working_directory() {
    let p = f1();
    p.write("other/mdmark.config.yaml", "index: idx.yaml\n");
    p.write("other/idx.yaml", "docs:\n  - id: x\n    path: gone.md\n    title: X\n");
    let out = Command::new(env!("CARGO_BIN_EXE_local-vector-search-mcp"))
        .current_dir(p.root().join("other"))
        .env_remove("CLAUDE_PROJECT_DIR")
        .args(["--project-root"])
        .arg(p.root())
        .args(["check", "--catalog-config", "mdmark.config.yaml", "--json"])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["issues"][0]["kind"], "missing_doc", "{json}");
    assert_eq!(json["issues"][0]["file"], "other/idx.yaml");
    assert!(json["issues"][0]["message"].as_str().unwrap().starts_with("`other/gone.md` was not found"));
}

fn git(root: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
}

#[test]
fn check_base_reports_a_change_together_partner_left_out_of_a_commit() {
    if Command::new("git").arg("--version").output().is_err() {
        eprintln!("git is not installed; skipped");
        return;
    }
    let p = f1();
    git(p.root(), &["init", "-q", "-b", "main"]);
    git(p.root(), &["add", "-A"]);
    git(p.root(), &["commit", "-q", "-m", "F1"]);
    git(p.root(), &["checkout", "-q", "-b", "change"]);
    p.write("docs/guide/api.md", "# API リファレンス\n\n## ツールの一覧\n\n新しいツール。\n");
    git(p.root(), &["commit", "-q", "-am", "only the Japanese page"]);
    // Other findings of F1 are left out: only the change-together check is under test.
    let check_against_main = || {
        p.run(&[
            "--config",
            "lvsm.yaml",
            "check",
            "--base",
            "main",
            "--ignore",
            "unindexed_doc",
            "--ignore",
            "deprecated_tag",
        ])
    };
    let out = check_against_main();
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(stdout.starts_with("docs/index.yaml:docs[1].related[0]: missed_change_together: `docs/guide/api.md` changed since `main` but `docs/guide/api.en.md`"), "{stdout}");
    // Both sides: nothing to report.
    p.write("docs/guide/api.en.md", "# API reference\n\nSee [notes](../notes.md). New tool.\n");
    let out = check_against_main();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    // `--base` must not look like an option.
    let out = p.run(&["--config", "lvsm.yaml", "check", "--base", "-x"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("base must be a git ref"), "{}", text(&out.stderr));
}

#[test]
fn init_creates_the_starter_files_once() {
    let p = Project::empty();
    std::fs::create_dir(p.root().join(".git")).unwrap();
    let out = p.run(&["init"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "created mdmark.config.yaml\ncreated index.yaml\n");
    assert_eq!(
        std::fs::read_to_string(p.root().join("mdmark.config.yaml")).unwrap(),
        "# Catalog settings for local-vector-search-mcp (also readable by mdmark).\nindex: index.yaml\nlanguage: en\n# scan: [\"docs/**/*.md\"]\n# build:\n#   include: [\"docs/**/*.md\"]\n#   out: dist/docs.html\n#   title: Documentation\n"
    );
    assert_eq!(
        std::fs::read_to_string(p.root().join("index.yaml")).unwrap(),
        "# Catalog index: docs, terms and the tag vocabulary.\n# Format: kb_read_guide {\"names\": [\"catalog-index\"]}\nversion: 1\ndocs: []\n"
    );
    // Again: exit 1, nothing changed.
    let out = p.run(&["init"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("`mdmark.config.yaml` already exists; edit it instead."));
    // The created catalog checks clean.
    let out = p.run(&["check"]);
    assert_eq!(out.status.code(), Some(0), "{}{}", text(&out.stdout), text(&out.stderr));
}

#[test]
fn init_scan_prefills_the_index_and_a_server_config_gets_a_section() {
    let p = Project::empty();
    std::fs::create_dir(p.root().join(".git")).unwrap();
    p.write("a.md", "# エー\n");
    p.write("docs/my page.md", "---\ntitle: 前付けの題\n---\n# H1\n");
    p.write("lvsm.yaml", "# my settings\nknowledgeBase:\n  allowWrites: true\n");
    let out = p.run(&["--config", "lvsm.yaml", "init", "--scan", "**/*.md"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "added a catalog section to lvsm.yaml\ncreated index.yaml\n");
    let config = std::fs::read_to_string(p.root().join("lvsm.yaml")).unwrap();
    assert!(
        config.starts_with("# my settings\nknowledgeBase:\n  allowWrites: true\ncatalog:\n  # "),
        "{config}"
    );
    assert!(config.contains("\n  index: index.yaml\n  language: en\n  scan: [\"**/*.md\"]\n"), "{config}");
    let index = std::fs::read_to_string(p.root().join("index.yaml")).unwrap();
    assert!(
        index.ends_with("docs:\n  - id: a\n    path: a.md\n    title: エー\n  - id: docs/my-page\n    path: docs/my page.md\n    title: 前付けの題\n"),
        "{index}"
    );
    let out = p.run(&["--config", "lvsm.yaml", "init"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("`lvsm.yaml` already has a catalog section; edit it instead."));
    // The pre-filled index is clean for the check.
    let out = p.run(&["--config", "lvsm.yaml", "check"]);
    assert_eq!(out.status.code(), Some(0), "{}{}", text(&out.stdout), text(&out.stderr));
}

/// `schema/catalog.schema.json` is generated from the code (`UPDATE_SCHEMA=1` rewrites it).
#[test]
fn the_index_schema_file_matches_the_code() {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("schema/catalog.schema.json");
    let fresh = serde_json::to_string_pretty(&lvs::catalog::index_json_schema()).unwrap() + "\n";
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &fresh).unwrap();
    }
    let stored = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        stored == fresh,
        "schema/catalog.schema.json is out of date; run `UPDATE_SCHEMA=1 cargo test --test it catalog`"
    );
    // The F1 index of these tests is valid against it, as far as the server's own check goes.
    let value: yaml_serde::Value = yaml_serde::from_str(INDEX).unwrap();
    let checked = lvs::catalog::validate_index(
        &value,
        lvs::catalog::PathBase { dir: "docs", internal: ".local-vector-search-mcp" },
        lvs::catalog::Language::En,
    );
    assert!(checked.violations.is_empty(), "{:?}", checked.violations);
}

/// `kb_find_docs` and `kb_list_tags` keep what they derived from the index and the documents
/// between calls (issue #28), keyed by each file's stamp: every way a file changes must show in
/// the very next call.
#[test]
fn the_catalog_tools_see_each_edit_at_the_next_call() {
    use serde_json::{Value, json};
    use std::ffi::OsStr;

    let p = f1();
    let config = p.root().join("lvsm.yaml");
    let mut rpc = crate::rpc::Rpc::start(&[
        OsStr::new("--project-root"),
        p.root().as_os_str(),
        OsStr::new("--config"),
        config.as_os_str(),
        OsStr::new("--embedding-provider"),
        OsStr::new("none"),
    ]);
    let chars = |rpc: &mut crate::rpc::Rpc, id: &str| -> Value {
        let r = rpc.call("kb_find_docs", json!({"format": "json"}));
        let row = r["docs"].as_array().unwrap().iter().find(|d| d["id"] == id).cloned();
        row.map_or(Value::Null, |d| d["chars"].clone())
    };
    let notes = "# 開発メモ\n\n全体構成の図は後で直す。\n";
    assert_eq!(chars(&mut rpc, "notes"), json!(notes.chars().count()));
    // kb_patch (this server).
    let read: Value = serde_json::from_str(&p.ok(&["read", "docs/notes.md", "--json"])).unwrap();
    let element = read["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["text"].as_str().unwrap().contains("全体構成"));
    let pointer = element.unwrap()["pointer"].as_str().unwrap().to_owned();
    let r = rpc.call(
        "kb_patch",
        json!({"request": {"path": "docs/notes.md", "operations": [
            {"kind": "insert_after", "pointer": pointer, "markdown": "追記した段落。"}]}}),
    );
    assert!(r.is_object(), "{r}");
    let patched = std::fs::read_to_string(p.root().join("docs/notes.md")).unwrap();
    assert!(patched.contains("追記した段落。"), "{patched}");
    assert_eq!(chars(&mut rpc, "notes"), json!(patched.chars().count()));
    // Another process rewrites it with the same size (3 ASCII bytes become one 3-byte character).
    let before = "# API reference\n\nSee [notes](../notes.md).\n";
    assert_eq!(chars(&mut rpc, "api-en"), json!(before.chars().count()));
    let same_size = before.replace("See", "見");
    assert_eq!(same_size.len(), before.len());
    p.write("docs/guide/api.en.md", &same_size);
    assert_eq!(chars(&mut rpc, "api-en"), json!(same_size.chars().count()));
    // A document that goes away, and comes back.
    std::fs::remove_file(p.root().join("docs/guide/api.md")).unwrap();
    assert_eq!(chars(&mut rpc, "api"), Value::Null);
    p.write("docs/guide/api.md", "# API\n");
    assert_eq!(chars(&mut rpc, "api"), json!(6));
    // The index itself: a new title and a new tag show in both tools.
    let tags = |rpc: &mut crate::rpc::Rpc| -> Vec<String> {
        let r = rpc.call("kb_list_tags", json!({"format": "json"}));
        r["tags"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(tags(&mut rpc), ["設計", "topic:mcp", "旧タグ"]);
    let index = INDEX
        .replace("title: 開発メモ", "title: 開発の覚え書き")
        .replace("  - name: 旧タグ\n", "  - name: 新タグ\n  - name: 旧タグ\n");
    p.write("docs/index.yaml", &index);
    assert_eq!(tags(&mut rpc), ["設計", "topic:mcp", "新タグ", "旧タグ"]);
    let r = rpc.call("kb_find_docs", json!({"format": "json", "text": "覚え書き"}));
    let ids: Vec<&str> = r["docs"].as_array().unwrap().iter().map(|d| d["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["notes"]);
}

/// Under `language: ja` the messages given before a configuration is read are Japanese too
/// (issue #44 item 5): E2 (a `config` file that is missing), E3 (one that is not YAML) and the
/// guide refusals E35–E37.
#[test]
fn messages_before_the_configuration_is_read_follow_the_catalog_language() {
    let project = Project::empty();
    project.write(
        "lvs.yaml",
        "index:\n  autoIndex: false\ncatalog:\n  index: docs/index.yaml\n  language: ja\n",
    );
    project.write("docs/index.yaml", "version: 1\ndocs: []\n");
    project.write("bad.yaml", "catalog: [unclosed\n");
    let mut rpc = crate::rpc::Rpc::start(&[
        "--project-root".as_ref(),
        project.root().as_os_str(),
        "--config".as_ref(),
        project.root().join("lvs.yaml").as_os_str(),
        "--embedding-provider".as_ref(),
        "none".as_ref(),
    ]);
    let message = |rpc: &mut crate::rpc::Rpc, tool: &str, args: serde_json::Value| {
        let frame = rpc.call_raw(tool, args);
        assert_eq!(frame["result"]["isError"], true, "{frame}");
        frame["result"]["content"][0]["text"].as_str().unwrap().to_owned()
    };
    let missing = message(&mut rpc, "kb_check", serde_json::json!({"config": "none.yaml"}));
    assert!(missing.contains("設定ファイル `none.yaml` がありません"), "{missing}");
    let not_yaml = message(&mut rpc, "kb_check", serde_json::json!({"config": "bad.yaml"}));
    assert!(
        not_yaml.contains("設定ファイル `bad.yaml` の") && not_yaml.contains("YAML として読めません"),
        "{not_yaml}"
    );
    let guide = message(&mut rpc, "kb_read_guide", serde_json::json!({"names": []}));
    assert!(guide.contains("names に使い方集の名前を 1 つ以上渡してください"), "{guide}");
    // A wrong JSON type (serde's English sentence before) is E11 in the catalog's language.
    let tags = message(&mut rpc, "kb_find_docs", serde_json::json!({"tags": 5}));
    assert!(tags.contains("引数 `tags` は並びにしてください"), "{tags}");
    let base = message(&mut rpc, "kb_check", serde_json::json!({"base": 5}));
    assert!(base.contains("引数 `base` は文字列にしてください"), "{base}");
}
