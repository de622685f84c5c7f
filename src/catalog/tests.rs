//! Unit tests of the catalog: settings, index model, editor, queries, checks.

use std::fs;
use std::path::Path;

use super::config::*;
use super::{Language, norm};
use crate::error::ErrorCode;
use crate::workspace::{DEFAULT_INTERNAL_DIR, Workspace};

/// A project folder with a `.git` marker (so the upward search stops there) and its workspace.
fn project() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().expect("temp dir");
    fs::create_dir(dir.path().join(".git")).unwrap();
    let ws = Workspace::new(dir.path().to_path_buf(), DEFAULT_INTERNAL_DIR).unwrap();
    (dir, ws)
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

fn section(yaml: &str) -> yaml_serde::Value {
    yaml_serde::from_str(yaml).unwrap()
}

fn env<'a>(ws: &'a Workspace, root: &'a Path, section: Option<&'a yaml_serde::Value>) -> SettingsEnv<'a> {
    SettingsEnv { workspace: ws, project_root: root, server_section: section, server_file: None }
}

#[test]
fn norm_follows_the_examples() {
    assert_eq!(norm("ＭＣＰ"), "mcp");
    assert_eq!(norm("ｻｰﾊﾞｰ"), norm("サーバー"));
    assert_eq!(norm(" ＡＰＩ設計\u{3000}"), "api設計");
    assert_eq!(norm("①"), "1");
}

#[test]
fn server_section_defaults_and_paths_from_the_project_root() {
    let (dir, ws) = project();
    let s = section("index: docs/index.yaml\nbuild:\n  include: [\"docs/guide/*.md\"]\n");
    let settings = load_settings(&env(&ws, dir.path(), Some(&s)), None).unwrap();
    assert_eq!(settings.origin, SettingsOrigin::ServerConfig);
    assert_eq!(settings.index.as_deref(), Some("docs/index.yaml"));
    assert_eq!(settings.language, Language::En);
    assert_eq!(settings.html, HtmlSettings::default());
    assert_eq!(settings.html.toc_depth, 3);
    let build = settings.build.clone().unwrap();
    assert_eq!(build.include, vec!["docs/guide/*.md"]);
    assert_eq!(build.out, "dist/docs.html");
    assert_eq!(build.title, dir.path().canonicalize().unwrap().file_name().unwrap().to_string_lossy());
    // scan defaults to build.include.
    assert_eq!(settings.scan, vec!["docs/guide/*.md"]);
    assert_eq!(settings.key("index"), "catalog.index");
}

#[test]
fn every_key_is_read() {
    let (dir, ws) = project();
    let s = section(
        "index: index.yaml\nlanguage: ja\nscan: [\"**/*.md\"]\ncheck: {ignore: [unindexed_doc]}\n\
         html: {lang: ja-JP, toc: false, tocDepth: 5, highlight: true}\n\
         build: {include: [a.md, \"b/*.md\"], exclude: [\"b/x.md\"], out: site/all.htm, title: 製品ガイド}\n",
    );
    let st = load_settings(&env(&ws, dir.path(), Some(&s)), None).unwrap();
    assert_eq!(st.language, Language::Ja);
    assert_eq!(st.scan, vec!["**/*.md"]);
    assert_eq!(st.check_ignore, vec!["unindexed_doc"]);
    assert_eq!(
        st.html,
        HtmlSettings { lang: HtmlLang::Tag("ja-JP".into()), toc: false, toc_depth: 5, highlight: true }
    );
    let b = st.build.unwrap();
    assert_eq!(
        (b.include, b.exclude),
        (vec!["a.md".to_owned(), "b/*.md".to_owned()], vec!["b/x.md".to_owned()])
    );
    assert_eq!((b.out.as_str(), b.title.as_str()), ("site/all.htm", "製品ガイド"));
}

#[test]
fn no_configuration_is_not_found_naming_the_folders_and_init() {
    let (dir, ws) = project();
    let e = load_settings(&env(&ws, dir.path(), None), None).unwrap_err();
    assert_eq!(e.code, ErrorCode::NotFound);
    assert!(e.message.contains("`mdmark.config.yaml` in `.`"), "{}", e.message);
    assert!(e.message.contains("local-vector-search-mcp init"), "{}", e.message);
    assert!(find_settings(&env(&ws, dir.path(), None), None).unwrap().is_none());
}

#[test]
fn standalone_file_is_found_upwards_until_the_git_folder() {
    let (dir, _) = project();
    write(dir.path(), "mdmark.config.yaml", "index: catalog/index.yaml\nunknownKey: 1\n");
    fs::create_dir_all(dir.path().join("sub/deeper")).unwrap();
    let ws = Workspace::new(dir.path().to_path_buf(), DEFAULT_INTERNAL_DIR).unwrap();
    let sub = dir.path().join("sub/deeper");
    let st = load_settings(&env(&ws, &sub, None), None).unwrap();
    assert_eq!(st.origin, SettingsOrigin::Standalone);
    assert_eq!(st.file, "mdmark.config.yaml");
    // Relative to the file's folder, not to the project root; unknown keys are ignored.
    assert_eq!(st.index.as_deref(), Some("catalog/index.yaml"));
    assert_eq!(st.key("index"), "index");
    let inspected = inspect_settings(&env(&ws, &sub, None), None).unwrap().unwrap();
    assert!(inspected.problems.is_empty(), "{:?}", inspected.problems);
}

#[test]
fn the_search_stops_at_the_repository_top() {
    let outer = tempfile::tempdir().unwrap();
    write(outer.path(), "mdmark.config.yaml", "index: index.yaml\n");
    fs::create_dir_all(outer.path().join("repo/.git")).unwrap();
    let root = outer.path().join("repo");
    let ws = Workspace::new(root.clone(), DEFAULT_INTERNAL_DIR).unwrap();
    let e = load_settings(&env(&ws, &root, None), None).unwrap_err();
    assert_eq!(e.code, ErrorCode::NotFound);
}

#[test]
fn config_argument_file_paths_are_relative_to_its_folder() {
    let (dir, ws) = project();
    write(dir.path(), "other/mdmark.config.yaml", "index: idx.yaml\nscan: [\"docs/*.md\"]\n");
    let st = load_settings(&env(&ws, dir.path(), None), Some("other/mdmark.config.yaml")).unwrap();
    assert_eq!(st.origin, SettingsOrigin::Argument);
    assert_eq!(st.index.as_deref(), Some("other/idx.yaml"));
    assert_eq!(st.scan, vec!["other/docs/*.md"]);
    // A file with a catalog: section uses only that section.
    write(dir.path(), "lvsm.yaml", "knowledgeBase: {root: .}\ncatalog:\n  index: ../x/i.yaml\n");
    write(dir.path(), "conf/lvsm.yaml", "catalog:\n  index: ../x/i.yaml\n");
    let st = load_settings(&env(&ws, dir.path(), None), Some("conf/lvsm.yaml")).unwrap();
    assert_eq!(st.index.as_deref(), Some("x/i.yaml"));
    assert_eq!(st.key("index"), "catalog.index");
}

#[test]
fn config_argument_errors() {
    let (dir, ws) = project();
    let e = load_settings(&env(&ws, dir.path(), None), Some("nope.yaml")).unwrap_err();
    assert_eq!(e.code, ErrorCode::NotFound);
    assert_eq!(
        e.message,
        "Configuration file `nope.yaml` was not found; pass an existing root-relative path or omit config."
    );
    let e = load_settings(&env(&ws, dir.path(), None), Some("../x.yaml")).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidPath);
    write(dir.path(), "bad.yaml", "index: [a\n");
    let e = load_settings(&env(&ws, dir.path(), None), Some("bad.yaml")).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    assert!(
        e.message.starts_with("Configuration file `bad.yaml` is not valid YAML at line "),
        "{}",
        e.message
    );
}

#[test]
fn wrong_types_and_ranges_name_the_key() {
    let (dir, ws) = project();
    for (yaml, key) in [
        ("index: [a]", "catalog.index"),
        ("index: i.yaml\nlanguage: fr", "catalog.language"),
        ("index: i.yaml\nhtml: {tocDepth: 7}", "catalog.html.tocDepth"),
        ("index: i.yaml\nhtml: {toc: yes-please}", "catalog.html.toc"),
        ("index: i.yaml\nhtml: {lang: \"not a tag\"}", "catalog.html.lang"),
        ("index: i.yaml\nbuild: {out: x.pdf, include: [a.md]}", "catalog.build.out"),
        ("index: i.yaml\nbuild: {include: []}", "catalog.build.include"),
        ("index: i.yaml\nscan: [\"src/[\"]", "catalog.scan"),
        ("index: i.yaml\nbuild: 3", "catalog.build"),
    ] {
        let s = section(yaml);
        let e = load_settings(&env(&ws, dir.path(), Some(&s)), None).unwrap_err();
        assert!(e.message.starts_with(&format!("Setting `{key}` ")), "{yaml}: {}", e.message);
        assert!(matches!(e.code, ErrorCode::InvalidArgument | ErrorCode::UnsupportedFormat), "{yaml}");
    }
    let s = section("index: i.yaml\nlanguage: ja\nhtml: {tocDepth: 1}");
    let e = load_settings(&env(&ws, dir.path(), Some(&s)), None).unwrap_err();
    assert!(e.message.starts_with("設定の `catalog.html.tocDepth` が"), "{}", e.message);
}

#[test]
fn paths_outside_the_root_are_invalid_path() {
    let (dir, ws) = project();
    for yaml in
        ["index: ../i.yaml", "index: .git/i.yaml", "index: i.yaml\nbuild: {include: [a.md], out: ../x.html}"]
    {
        let s = section(yaml);
        let e = load_settings(&env(&ws, dir.path(), Some(&s)), None).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidPath, "{yaml}: {}", e.message);
    }
}

#[test]
fn inspect_lists_unknown_keys_and_kinds_without_failing() {
    let (dir, ws) = project();
    let s = section("biuld: 1\nindex: i.yaml\ncheck: {ignore: [nope, unindexed_doc]}\n");
    let i = inspect_settings(&env(&ws, dir.path(), Some(&s)), None).unwrap().unwrap();
    let keys: Vec<&str> = i.problems.iter().map(|p| p.key.as_str()).collect();
    assert_eq!(keys, ["catalog.biuld", "catalog.check.ignore"]);
    assert_eq!(i.problems[0].message, "Setting `catalog.biuld` is unknown; remove it or fix its spelling.");
    assert!(i.problems.iter().all(|p| !p.fatal && p.kind == "config_error"));
    let st = i.settings.unwrap();
    assert_eq!(st.check_ignore, vec!["unindexed_doc"]);
    // Tools work despite them.
    assert!(load_settings(&env(&ws, dir.path(), Some(&s)), None).is_ok());
}

#[test]
fn missing_index_setting() {
    let (dir, ws) = project();
    let s = section("language: en\n");
    let st = load_settings(&env(&ws, dir.path(), Some(&s)), None).unwrap();
    let e = st.index_path().unwrap_err();
    assert_eq!(e.code, ErrorCode::NotFound);
    let i = inspect_settings(&env(&ws, dir.path(), Some(&s)), None).unwrap().unwrap();
    assert_eq!(i.problems.len(), 1);
    assert_eq!((i.problems[0].kind, i.problems[0].key.as_str()), ("missing_index", "catalog.index"));
    assert_eq!(st.build_settings().unwrap_err().code, ErrorCode::NotFound);
}

#[test]
fn defaults_for_export() {
    let d = CatalogSettings::defaults();
    assert_eq!(d.html, HtmlSettings { lang: HtmlLang::Auto, toc: true, toc_depth: 3, highlight: false });
    assert!(d.build.is_none());
}
