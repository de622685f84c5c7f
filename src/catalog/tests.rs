//! Unit tests of the catalog: settings, index model, editor, queries, checks.

use std::fs;
use std::path::Path;

use super::config::*;
use super::{Language, norm};
use crate::error::ErrorCode;
use crate::wire::{IssueKind, ValueSet};
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
    assert!(i.problems.iter().all(|p| !p.fatal && p.kind == IssueKind::ConfigError));
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
    assert_eq!((i.problems[0].kind.as_str(), i.problems[0].key.as_str()), ("missing_index", "catalog.index"));
    assert_eq!(st.build_settings().unwrap_err().code, ErrorCode::NotFound);
}

#[test]
fn defaults_for_export() {
    let d = CatalogSettings::defaults();
    assert_eq!(d.html, HtmlSettings { lang: HtmlLang::Auto, toc: true, toc_depth: 3, highlight: false });
    assert!(d.build.is_none());
}

// --- The index editor (`kb_update_index`) -------------------------------------------------------

mod editing {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use proptest::prelude::*;
    use serde_json::json;

    use super::*;
    use crate::catalog::update::{Update, update_index};

    /// A workspace holding `index.yaml` (and settings pointing at it).
    fn setup(index: &str) -> (tempfile::TempDir, Workspace, CatalogSettings) {
        let (dir, ws) = project();
        fs::write(dir.path().join("index.yaml"), index).unwrap();
        let s = section("index: index.yaml\n");
        let settings = load_settings(&env(&ws, dir.path(), Some(&s)), None).unwrap();
        (dir, ws, settings)
    }

    fn run(
        ws: &Workspace,
        st: &CatalogSettings,
        kind: &str,
        id: &str,
        item: serde_json::Value,
    ) -> crate::Result<&'static str> {
        let item = match &item {
            serde_json::Value::Object(m) => Some(m.clone()),
            _ => None,
        };
        update_index(ws, st, &Update { kind, id, item: item.as_ref() }, &|| {}, &|| Ok(None))
            .map(|u| u.action)
    }

    fn read(dir: &tempfile::TempDir) -> String {
        fs::read_to_string(dir.path().join("index.yaml")).unwrap()
    }

    const BASE: &str = "# head comment\nversion: 1   # trailing\ndocs:\n  - id: a\n    path: a.md\n    # about the title\n    title: \"A\"\n    tags: [x, {name: y, main: true}]\n\n  # between entries\n  - id: b\n    path: b.md\n    title: B\nx-notes: {keep: me}\n# tail\n";

    #[test]
    fn replace_keeps_comments_quotes_and_order_outside_the_changed_key() {
        let (dir, ws, st) = setup(BASE);
        let action = run(&ws, &st, "doc", "a", json!({"path": "a.md", "title": "A", "tags": ["z"]})).unwrap();
        assert_eq!(action, "replaced");
        assert_eq!(read(&dir), BASE.replace("    tags: [x, {name: y, main: true}]\n", "    tags: [z]\n"));
    }

    #[test]
    fn replace_with_the_same_entry_does_not_touch_the_file() {
        let (dir, ws, st) = setup(BASE);
        let before = fs::metadata(dir.path().join("index.yaml")).unwrap().modified().unwrap();
        let item = json!({"path": "b.md", "title": "B"});
        assert_eq!(run(&ws, &st, "doc", "b", item).unwrap(), "replaced");
        assert_eq!(read(&dir), BASE);
        assert_eq!(fs::metadata(dir.path().join("index.yaml")).unwrap().modified().unwrap(), before);
    }

    #[test]
    fn dropped_keys_disappear_and_new_keys_follow_in_canonical_order() {
        let (dir, ws, st) = setup(BASE);
        let item = json!({"description": "説明", "title": "A", "aliases": ["エー"], "path": "a.md"});
        run(&ws, &st, "doc", "a", item).unwrap();
        let text = read(&dir);
        assert!(
            text.contains("  - id: a\n    path: a.md\n    # about the title\n    title: \"A\"\n    aliases: [エー]\n    description: 説明\n\n  # between entries\n"),
            "{text}"
        );
    }

    #[test]
    fn scalars_that_need_quotes_and_multi_line_text_round_trip() {
        let (dir, ws, st) = setup(BASE);
        for title in [
            "a: b", "true", "123", "#x", " lead", "x #y", "null", "- item", "quote\"s", "[x]", "1.5", "~",
            "yes",
        ] {
            run(&ws, &st, "doc", "b", json!({"path": "b.md", "title": title, "aliases": [title, "a,b"]}))
                .unwrap();
            let v: yaml_serde::Value = yaml_serde::from_str(&read(&dir)).unwrap();
            assert_eq!(v["docs"][1]["title"], yaml_serde::Value::String(title.into()), "{title}");
            assert_eq!(v["docs"][1]["aliases"][0], yaml_serde::Value::String(title.into()), "{title}");
        }
        for text in ["line 1\nline 2", "ends\n", "two\n\n", "  indented\nx"] {
            run(&ws, &st, "doc", "b", json!({"path": "b.md", "title": "B", "description": text})).unwrap();
            let v: yaml_serde::Value = yaml_serde::from_str(&read(&dir)).unwrap();
            assert_eq!(v["docs"][1]["description"], yaml_serde::Value::String(text.into()), "{text:?}");
        }
        assert!(read(&dir).starts_with("# head comment\nversion: 1   # trailing\n"));
    }

    #[test]
    fn empty_lists_flow_lists_and_sequences_at_column_zero() {
        let (dir, ws, st) = setup("version: 1\ndocs: []  # none yet\n");
        run(&ws, &st, "doc", "a", json!({"path": "a.md", "title": "A"})).unwrap();
        assert_eq!(read(&dir), "version: 1\ndocs: # none yet\n  - id: a\n    path: a.md\n    title: A\n");
        run(&ws, &st, "doc", "a", serde_json::Value::Null).unwrap();
        assert_eq!(read(&dir), "version: 1\ndocs: [] # none yet\n");

        let (dir, ws, st) = setup("docs:\n- id: a\n  path: a.md\n  title: A\ntags: [{name: t}, {name: u}]\n");
        run(&ws, &st, "doc", "b", json!({"path": "b.md", "title": "B"})).unwrap();
        assert_eq!(
            read(&dir),
            "docs:\n- id: a\n  path: a.md\n  title: A\n- id: b\n  path: b.md\n  title: B\ntags: [{name: t}, {name: u}]\n"
        );
        // A flow list that is edited is written again in block style.
        run(&ws, &st, "tag", "v", json!({"group": "g"})).unwrap();
        assert!(
            read(&dir).ends_with("tags:\n  - name: t\n  - name: u\n  - name: v\n    group: g\n"),
            "{}",
            read(&dir)
        );
    }

    #[test]
    fn terms_key_is_appended_when_missing_and_the_last_tag_removes_the_key() {
        let (dir, ws, st) = setup("docs: []\ntags:\n  - name: x\n    aliases: [X]\n# after tags\nx-end: 1");
        run(&ws, &st, "term", "t", json!({"term": "用語", "definition": "説明。", "see": []})).unwrap();
        assert_eq!(
            read(&dir),
            "docs: []\ntags:\n  - name: x\n    aliases: [X]\n# after tags\nx-end: 1\nterms:\n  - id: t\n    term: 用語\n    definition: 説明。\n    see: []\n"
        );
        run(&ws, &st, "tag", "x", serde_json::Value::Null).unwrap();
        assert_eq!(
            read(&dir),
            "docs: []\n# after tags\nx-end: 1\nterms:\n  - id: t\n    term: 用語\n    definition: 説明。\n    see: []\n"
        );
    }

    #[test]
    fn argument_and_shape_errors_write_nothing() {
        let (dir, ws, st) = setup(BASE);
        let code = |r: crate::Result<&str>| r.unwrap_err().code;
        assert_eq!(
            code(run(&ws, &st, "doc", "a", json!({"id": "b", "path": "a.md", "title": "A"}))),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            code(run(&ws, &st, "doc", " a", json!({"path": "a.md", "title": "A"}))),
            ErrorCode::InvalidArgument
        );
        assert_eq!(code(run(&ws, &st, "page", "a", json!({}))), ErrorCode::InvalidArgument);
        assert_eq!(code(run(&ws, &st, "doc", "z", serde_json::Value::Null)), ErrorCode::NotFound);
        assert_eq!(
            code(run(&ws, &st, "doc", "z", json!({"path": "../z.md", "title": "Z"}))),
            ErrorCode::InvalidPath
        );
        assert_eq!(
            code(run(&ws, &st, "doc", "z", json!({"path": "z.txt", "title": "Z"}))),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            code(run(&ws, &st, "doc", "z", json!({"path": "z.md", "title": "Z", "related": ["a"]}))),
            ErrorCode::InvalidArgument
        );
        assert_eq!(read(&dir), BASE);
        let (dir, ws, st) = setup("docs: []\ntags:\n  - name: MCP\n");
        let e = run(&ws, &st, "tag", "mcp", json!({})).unwrap_err();
        assert_eq!(e.code, ErrorCode::Conflict);
        assert_eq!(
            e.message,
            "Tag `mcp` would duplicate the existing tag `MCP`; pass `MCP` as id to replace it."
        );
        let (_d1, ws, st) = setup("docs: []\n---\ndocs: []\n");
        assert_eq!(
            code(run(&ws, &st, "doc", "a", json!({"path": "a.md", "title": "A"}))),
            ErrorCode::UnsupportedFormat
        );
        let (_d2, ws, st) = setup("{docs: []}\n");
        assert_eq!(
            code(run(&ws, &st, "doc", "a", json!({"path": "a.md", "title": "A"}))),
            ErrorCode::UnsupportedFormat
        );
        drop(dir);
    }

    /// Scenario 75: an editor saves the file between the read and the rename of every attempt.
    #[test]
    fn a_concurrent_external_edit_is_conflict_after_three_attempts() {
        let (dir, ws, st) = setup(BASE);
        let path = dir.path().join("index.yaml");
        let attempts = AtomicUsize::new(0);
        let hook = || {
            let n = attempts.fetch_add(1, Ordering::SeqCst);
            fs::write(&path, format!("{BASE}# edited {n}\n")).unwrap();
        };
        let item = json!({"path": "c.md", "title": "C"});
        let item = item.as_object().unwrap();
        let e =
            update_index(&ws, &st, &Update { kind: "doc", id: "c", item: Some(item) }, &hook, &|| Ok(None))
                .unwrap_err();
        assert_eq!(e.code, ErrorCode::Conflict);
        assert_eq!(e.message, "The index changed while it was being updated; call kb_update_index again.");
        assert_eq!(attempts.load(Ordering::SeqCst), 3);
        assert_eq!(read(&dir), format!("{BASE}# edited 2\n"));
        // An edit that happens once is absorbed by the retry: both changes land.
        let once = AtomicUsize::new(0);
        let hook = || {
            if once.fetch_add(1, Ordering::SeqCst) == 0 {
                fs::write(&path, format!("{BASE}# edited by hand\n")).unwrap();
            }
        };
        update_index(&ws, &st, &Update { kind: "doc", id: "c", item: Some(item) }, &hook, &|| Ok(None))
            .unwrap();
        let text = read(&dir);
        assert!(text.contains("# edited by hand") && text.contains("- id: c\n"), "{text}");
    }

    #[test]
    fn threads_updating_at_once_all_land() {
        let (dir, ws, st) = setup(BASE);
        let ws = Arc::new(ws);
        let st = Arc::new(st);
        // Serialised as the engine does it (one lock per project).
        let serial = Arc::new(std::sync::Mutex::new(()));
        let handles: Vec<_> = (0..8)
            .map(|n| {
                let (ws, st, serial) = (Arc::clone(&ws), Arc::clone(&st), Arc::clone(&serial));
                std::thread::spawn(move || {
                    let item = json!({"path": format!("n{n}.md"), "title": format!("N{n}")});
                    let id = format!("n{n}");
                    let _serial = serial.lock().unwrap();
                    update_index(
                        &ws,
                        &st,
                        &Update { kind: "doc", id: &id, item: item.as_object() },
                        &|| {},
                        &|| Ok(None),
                    )
                    .map(|_| ())
                })
            })
            .collect();
        let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        let text = read(&dir);
        for (n, r) in results.iter().enumerate() {
            match r {
                Ok(()) => assert!(text.contains(&format!("- id: n{n}\n")), "n{n} was lost"),
                Err(e) => assert_eq!(e.code, ErrorCode::Conflict),
            }
        }
    }

    /// A generated index: header, `docs` entries with comments between and inside them, a tail.
    #[derive(Clone, Debug)]
    struct Gen {
        lines: Vec<String>,
        /// Per entry: the first and one-past-last line of its span.
        spans: Vec<(usize, usize)>,
    }

    fn title_strategy() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("タイトル".to_owned()),
            Just("\"quoted: yes\"".to_owned()),
            Just("'single'".to_owned()),
            Just("plain words".to_owned()),
            "[a-zA-Z0-9 あ-ん]{1,12}"
                .prop_map(|s| s.trim().to_owned())
                .prop_filter("non-empty", |s| !s.is_empty() && !s.chars().all(|c| c.is_ascii_digit())),
        ]
    }

    fn gen_strategy() -> impl Strategy<Value = Gen> {
        let entry = (title_strategy(), any::<bool>(), any::<bool>(), any::<bool>(), 0..3usize);
        (prop::collection::vec(entry, 1..6), any::<bool>(), prop_oneof![Just(2usize), Just(4usize)]).prop_map(
            |(entries, indented, step)| {
                let c = if indented { step } else { 0 };
                let k = c + 2;
                let mut lines = vec!["# index".to_owned(), "version: 1".to_owned(), "docs:".to_owned()];
                let mut spans = Vec::new();
                for (i, (title, comment_inside, description, related, gap)) in entries.into_iter().enumerate()
                {
                    for g in 0..gap {
                        lines.push(if g % 2 == 0 {
                            String::new()
                        } else {
                            format!("{}# gap {i}", " ".repeat(c))
                        });
                    }
                    let start = lines.len();
                    lines.push(format!("{}- id: e{i}", " ".repeat(c)));
                    lines.push(format!("{}path: e{i}.md", " ".repeat(k)));
                    if comment_inside {
                        lines.push(format!("{}# about e{i}", " ".repeat(k)));
                    }
                    lines.push(format!("{}title: {title}", " ".repeat(k)));
                    if description {
                        lines.push(format!("{}description: 説明 {i}  # note", " ".repeat(k)));
                    }
                    if related {
                        lines.push(format!("{}related:", " ".repeat(k)));
                        lines.push(format!("{}- to: e0", " ".repeat(k + step)));
                        lines.push(format!("{}  type: references", " ".repeat(k + step)));
                        lines.push(format!("{}  # inside related", " ".repeat(k + step)));
                        lines.push(format!("{}  when: いつも", " ".repeat(k + step)));
                    }
                    spans.push((start, lines.len()));
                }
                lines.push("# tail comment".to_owned());
                lines.push("x-extra: [1, 2]".to_owned());
                Gen { lines, spans }
            },
        )
    }

    fn text_of(lines: &[String]) -> String {
        lines.iter().map(|l| format!("{l}\n")).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Removing an entry deletes exactly its lines.
        #[test]
        fn remove_deletes_exactly_the_entry(g in gen_strategy(), pick in any::<prop::sample::Index>()) {
            let k = pick.index(g.spans.len());
            let (dir, ws, st) = setup(&text_of(&g.lines));
            run(&ws, &st, "doc", &format!("e{k}"), serde_json::Value::Null).unwrap();
            let (s, e) = g.spans[k];
            let mut expected = g.lines.clone();
            expected.drain(s..e);
            if g.spans.len() == 1 {
                let at = expected.iter().position(|l| l == "docs:").unwrap();
                expected[at] = "docs: []".to_owned();
            }
            prop_assert_eq!(read(&dir), text_of(&expected));
        }

        /// Adding an entry inserts its lines after the last entry and changes nothing else.
        #[test]
        fn add_inserts_after_the_last_entry(g in gen_strategy(), title in title_strategy()) {
            let (dir, ws, st) = setup(&text_of(&g.lines));
            run(&ws, &st, "doc", "new", json!({"path": "new.md", "title": title.clone()})).unwrap();
            let new = read(&dir);
            let new_lines: Vec<&str> = new.lines().collect();
            let at = g.spans.last().unwrap().1;
            prop_assert_eq!(&new_lines[..at], &g.lines[..at].iter().map(String::as_str).collect::<Vec<_>>()[..]);
            prop_assert_eq!(&new_lines[at + 3..], &g.lines[at..].iter().map(String::as_str).collect::<Vec<_>>()[..]);
            prop_assert!(new_lines[at].ends_with("- id: new"));
            let v: yaml_serde::Value = yaml_serde::from_str(&new).unwrap();
            prop_assert_eq!(&v["docs"][g.spans.len()]["title"], &yaml_serde::Value::String(title));
        }

        /// Replacing only the title changes only the title line; every comment stays.
        #[test]
        fn replace_changes_only_the_edited_key(g in gen_strategy(), pick in any::<prop::sample::Index>(), title in title_strategy()) {
            let k = pick.index(g.spans.len());
            let old = text_of(&g.lines);
            let (dir, ws, st) = setup(&old);
            let v: yaml_serde::Value = yaml_serde::from_str(&old).unwrap();
            let mut item: serde_json::Value = serde_json::to_value(&v["docs"][k]).unwrap();
            item["title"] = json!(format!("{title}!"));
            run(&ws, &st, "doc", &format!("e{k}"), item).unwrap();
            let new = read(&dir);
            let diff: Vec<(usize, &str)> = new.lines().zip(old.lines()).enumerate()
                .filter(|(_, (a, b))| a != b).map(|(i, (a, _))| (i, a)).collect();
            prop_assert_eq!(new.lines().count(), old.lines().count());
            prop_assert_eq!(diff.len(), 1, "{:?}", diff);
            prop_assert!(diff[0].1.trim_start().starts_with("title: "));
            let (s, e) = g.spans[k];
            prop_assert!(s <= diff[0].0 && diff[0].0 < e);
        }
    }

    fn text_strategy() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("a: b".to_owned()),
            Just("x #y".to_owned()),
            Just("true".to_owned()),
            Just("0123".to_owned()),
            Just("- dash".to_owned()),
            Just("comma, [brackets] {braces}".to_owned()),
            Just("two\nlines".to_owned()),
            Just("trailing\n".to_owned()),
            Just("\"quoted\"".to_owned()),
            Just("タブ\tあり".to_owned()),
            "[a-zA-Z0-9 :#,ぁ-ゖ]{1,16}".prop_filter("not blank", |s| !s.trim().is_empty()),
        ]
    }

    fn item_strategy() -> impl Strategy<Value = serde_json::Value> {
        (
            text_strategy(),
            prop::option::of(text_strategy()),
            prop::collection::vec(text_strategy(), 0..3),
            prop::collection::vec((text_strategy(), any::<bool>()), 0..3),
            prop::option::of((text_strategy(), prop::collection::vec("[a-z]{1,6}/\\*\\*", 0..2))),
        )
            .prop_map(|(title, description, aliases, tags, related)| {
                let mut item = json!({"path": "p.md", "title": title});
                if let Some(d) = description {
                    item["description"] = json!(d);
                }
                if !aliases.is_empty() {
                    item["aliases"] = json!(aliases);
                }
                if !tags.is_empty() {
                    item["tags"] = serde_json::Value::Array(
                        tags.into_iter()
                            .map(|(t, main)| if main { json!({"name": t, "main": true}) } else { json!(t) })
                            .collect(),
                    );
                }
                if let Some((when, paths)) = related {
                    let mut r = json!({"to": "e0", "type": "change_together", "when": when});
                    if !paths.is_empty() {
                        r["paths"] = json!(paths);
                    }
                    item["related"] = json!([r]);
                }
                item
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Any valid entry, written over any entry of a generated index, reads back as exactly
        /// that entry, and the lines outside the entry's span stay as they were.
        #[test]
        fn any_entry_round_trips(g in gen_strategy(), pick in any::<prop::sample::Index>(), item in item_strategy()) {
            let k = pick.index(g.spans.len());
            let old = text_of(&g.lines);
            let (dir, ws, st) = setup(&old);
            run(&ws, &st, "doc", &format!("e{k}"), item.clone()).unwrap();
            let new = read(&dir);
            let v: yaml_serde::Value = yaml_serde::from_str(&new).unwrap();
            let mut expected = item.clone();
            expected.as_object_mut().unwrap().shift_insert(0, "id".into(), json!(format!("e{k}")));
            let got: serde_json::Value = serde_json::to_value(&v["docs"][k]).unwrap();
            prop_assert_eq!(got, expected);
            let (s, e) = g.spans[k];
            let new_lines: Vec<&str> = new.lines().collect();
            prop_assert_eq!(&new_lines[..s], &g.lines[..s].iter().map(String::as_str).collect::<Vec<_>>()[..]);
            let tail = g.lines.len() - e;
            prop_assert_eq!(&new_lines[new_lines.len() - tail..], &g.lines[e..].iter().map(String::as_str).collect::<Vec<_>>()[..]);
        }
    }

    // Issue #19 (fuzzing): the splicer itself, on CRLF files and on index texts with hostile
    // lines spliced in (flow style, anchors, block scalars, tabs, CR, multi-document, BOM).

    fn crlf(text: &str) -> String {
        text.replace('\n', "\r\n")
    }

    /// The change asked of the splicer: replace, add or remove, from `pick` and `item`.
    fn change_of(
        text: &str,
        op: u8,
        k: usize,
        item: &serde_json::Value,
    ) -> Option<(Mapping, Option<Mapping>, Option<usize>)> {
        let new: Mapping = serde_json::from_value(item.clone()).ok()?;
        let parsed: yaml_serde::Value = yaml_serde::from_str(text).ok()?;
        let docs = parsed.get("docs").and_then(|d| d.as_sequence()).cloned().unwrap_or_default();
        match op % 3 {
            0 => Some((new, None, None)),
            1 if !docs.is_empty() => {
                Some((new, docs[k % docs.len()].as_mapping().cloned(), Some(k % docs.len())))
            }
            2 if !docs.is_empty() => Some((new, None, Some(k % docs.len()))),
            _ => Some((new, None, None)),
        }
    }

    fn splice_with(text: &str, change: &(Mapping, Option<Mapping>, Option<usize>)) -> crate::Result<String> {
        use crate::catalog::editor::{Splice, splice};
        let (new, old, k) = change;
        let s = match (old, k) {
            (Some(old), Some(k)) => Splice::Replace { k: *k, old, new },
            (None, Some(k)) => Splice::Remove { k: *k },
            _ => Splice::Add { new },
        };
        splice(text, "docs", &s, Language::En)
    }

    use yaml_serde::Mapping;

    const HOSTILE: &[&str] = &[
        "\t- id: tab",
        "docs: [{id: f, path: f.md}]",
        "  - &anchor",
        "  - *alias",
        "    title: |",
        "      block",
        "    title: >-",
        "---",
        "...",
        "? complex",
        ": value",
        "\u{feff}# bom",
        "  - id: e9\r  path: cr.md",
        "docs:",
        "  -",
        "- id: top",
        "    - nested: [1, 2",
        "x: 'unterminated",
        "    title: \"a # not comment\"",
        "%YAML 1.2",
        "!!map",
        "  - !tag {id: t}",
        "",
        "   ",
        "# only comment",
        "docs: []",
        "terms:",
        "tags: null",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::markdown::tests::cases(96)))]

        /// A CRLF index is edited exactly as its LF twin, and keeps CRLF on every line.
        #[test]
        fn crlf_files_are_edited_as_their_lf_twins(
            g in gen_strategy(), op in any::<u8>(), k in any::<usize>(), item in item_strategy(),
        ) {
            let text = text_of(&g.lines);
            let Some(change) = change_of(&text, op, k, &item) else { return Ok(()) };
            let lf = splice_with(&text, &change);
            let cr = splice_with(&crlf(&text), &change);
            match (lf, cr) {
                (Ok(lf), Ok(cr)) => {
                    prop_assert_eq!(crlf(&lf), cr.clone());
                    prop_assert!(!cr.replace("\r\n", "").contains('\n'), "a bare LF in {:?}", cr);
                }
                (Err(a), Err(b)) => prop_assert_eq!(a.code, b.code),
                (a, b) => prop_assert!(false, "LF {:?} but CRLF {:?}", a, b),
            }
        }

        /// Hostile lines anywhere in the index: the splicer never panics, and a refusal is one
        /// sentence.
        #[test]
        fn hostile_index_text_never_panics(
            g in gen_strategy(),
            junk in prop::collection::vec((any::<prop::sample::Index>(), prop::sample::select(HOSTILE)), 1..4),
            raw in "(?s).{0,60}",
            op in any::<u8>(), k in any::<usize>(), item in item_strategy(),
        ) {
            let mut lines = g.lines.clone();
            for (at, line) in &junk {
                let i = at.index(lines.len() + 1);
                lines.insert(i, (*line).to_owned());
            }
            for text in [text_of(&lines), raw.clone(), crlf(&text_of(&lines)), text_of(&lines).replace('\n', "\r")] {
                let change = change_of(&text, op, k, &item)
                    .or_else(|| change_of(&text_of(&g.lines), op, k, &item));
                let Some(change) = change else { continue };
                match splice_with(&text, &change) {
                    Ok(_) => {}
                    Err(e) => {
                        prop_assert!(!e.message.is_empty() && !e.message.contains('\n'), "{:?}", e.message);
                        prop_assert!(matches!(e.code, ErrorCode::UnsupportedFormat | ErrorCode::InvalidArgument | ErrorCode::InternalError), "{:?}", e);
                    }
                }
            }
        }
    }
}

/// `DocCache::get_all` spreads a large index over threads: every document still gets its own
/// data, in index order, missing files included.
#[test]
fn doc_data_of_a_large_index_comes_back_in_order() {
    let (dir, ws) = project();
    let paths: Vec<String> = (0..1200).map(|i| format!("docs/{:02}/d{i}.md", i % 7)).collect();
    for (i, p) in paths.iter().enumerate() {
        if i % 97 != 0 {
            write(dir.path(), p, &"あ".repeat(i));
        }
    }
    let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
    let cache = super::docs::DocCache::default();
    let all = cache.get_all(&ws, &refs);
    assert_eq!(all.len(), paths.len());
    for (i, info) in all.iter().enumerate() {
        let want = if i % 97 == 0 { None } else { Some(i) };
        assert_eq!(info.chars, want, "{}", paths[i]);
    }
}

/// Both texts of every catalogue entry take the same arguments, and every argument is filled
/// when a message is rendered with them.
#[test]
fn every_message_has_the_same_arguments_in_both_languages() {
    use crate::messages::{CATALOGUE, fill, placeholders};
    for (m, _, en, ja) in CATALOGUE {
        assert_eq!(
            placeholders(en),
            placeholders(ja),
            "{m:?}: the English and Japanese texts differ in arguments"
        );
        let names = placeholders(en);
        let args: Vec<(&str, &dyn std::fmt::Display)> =
            names.iter().map(|n| (*n, n as &dyn std::fmt::Display)).collect();
        for text in [en, ja] {
            let out = fill(text, &args);
            assert!(!out.contains("{{") && !out.contains("}}"), "{m:?}: {out}");
        }
    }
}

/// The first code span of a Markdown table cell, as written (`` ``a `b` c`` `` → `` a `b` c ``).
fn code_span(cell: &str) -> Option<String> {
    let start = cell.find('`')?;
    let ticks = cell[start..].chars().take_while(|c| *c == '`').count();
    let fence = "`".repeat(ticks);
    let body = &cell[start + ticks..];
    let end = body.find(&fence)?;
    let text = &body[..end];
    // The space that keeps a backtick off the fence, on either side.
    let text = text.strip_prefix(' ').unwrap_or(text);
    Some(text.strip_suffix(' ').unwrap_or(text).to_owned())
}

/// The catalogue's numbered messages (E1…) and issue messages are the specification's sentences
/// (`docs/reference/catalog-spec.md` §9.2 and §9.5), in both languages.
#[test]
fn numbered_and_issue_messages_are_the_specification_texts() {
    use crate::messages::CATALOGUE;
    let Some(spec) = crate::testdata::shared_or_skip("spec/catalog.md") else { return };
    let spec = fs::read_to_string(spec).unwrap();
    let mut rows: std::collections::HashMap<String, (String, String)> = std::collections::HashMap::new();
    for line in spec.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        let key = cells[0].trim_matches('`').to_owned();
        let texts: Vec<String> = cells[1..].iter().filter_map(|c| code_span(c)).collect();
        if texts.len() >= 2 && (key.starts_with('E') || IssueKind::ALL.iter().any(|k| k.as_str() == key)) {
            let n = texts.len();
            rows.insert(key, (texts[n - 2].clone(), texts[n - 1].clone()));
        }
    }
    let mut compared = 0;
    for (m, code, en, ja) in CATALOGUE.iter().filter(|e| !e.1.is_empty()) {
        let (spec_en, spec_ja) =
            rows.get(*code).unwrap_or_else(|| panic!("{code} ({m:?}) is not in the specification"));
        assert_eq!(en.replace("{{", "{").replace("}}", "}"), *spec_en, "{code} ({m:?}) English");
        assert_eq!(ja.replace("{{", "{").replace("}}", "}"), *spec_ja, "{code} ({m:?}) Japanese");
        compared += 1;
    }
    assert!(compared >= 45, "only {compared} messages carry a number or an issue kind");
}

/// `kb_check` runs over an input held in memory: no file is read, so the same input always gives
/// the same issues (missing document, broken link, missing anchor, unindexed file).
#[test]
fn check_runs_over_an_input_in_memory() {
    use std::sync::Arc;

    use super::check::{CheckInput, IndexState, run};
    use super::docs::{DocInfo, FileProblem, parse_index};
    use crate::markdown::Document;

    let info = |text: &str| {
        let links = crate::links::extract(text, &Document::parse(text));
        Arc::new(DocInfo { chars: Some(text.chars().count()), problem: None, links, prose: norm(text) })
    };
    let yaml = "docs:\n  - {id: a, path: a.md, title: A}\n  - {id: b, path: b.md, title: B}\n  - {id: c, path: c.md, title: C}\n";
    let read = parse_index(
        yaml.as_bytes().to_vec(),
        "index.yaml".into(),
        String::new(),
        DEFAULT_INTERNAL_DIR,
        Language::En,
    );
    let mut settings = CatalogSettings::defaults();
    settings.index = Some("index.yaml".into());
    settings.scan = vec!["**/*.md".into()];
    let missing = Arc::new(DocInfo { problem: Some(FileProblem::Missing), ..DocInfo::default() });
    let input = CheckInput {
        config_file: "mdmark.config.yaml".into(),
        settings: Some(settings),
        markdown: vec!["a.md".into(), "b.md".into(), "extra.md".into()],
        index: Some(IndexState::Read(read)),
        docs: [
            ("a.md".to_owned(), info("# A\n\nSee [b](b.md#nope) and [gone](gone.md).\n")),
            ("b.md".to_owned(), info("# Real heading\n")),
            ("c.md".to_owned(), missing),
        ]
        .into_iter()
        .collect(),
        exists: [("b.md".to_owned(), true), ("gone.md".to_owned(), false)].into_iter().collect(),
        ..CheckInput::default()
    };
    let issues = run(&input, &[]);
    let found: Vec<(&str, &str, &str)> =
        issues.iter().map(|i| (i.kind.as_str(), i.file.as_str(), i.at.as_str())).collect();
    assert_eq!(
        found,
        [
            ("missing_doc", "index.yaml", "docs[2].path"),
            ("unindexed_doc", "extra.md", ""),
            ("missing_anchor", "a.md", "3"),
            ("broken_link", "a.md", "3"),
        ]
    );
    assert_eq!(issues[3].message, "Link target `gone.md` does not exist; fix the link or restore the file.");
    assert_eq!(run(&input, &["broken_link".to_owned()]).len(), 3, "ignored kinds are left out");
}

/// An index over 16 MiB is refused with the catalog's own sentence, in the configured language:
/// the workspace marks the refusal with a typed detail (`ErrorDetail::TooLarge`), not a text.
#[test]
fn an_index_over_16_mib_is_refused_in_the_configured_language() {
    let (dir, ws) = project();
    let mut big = String::from("docs: []\n");
    big.push_str(&"# padding\n".repeat(16 * 1024 * 1024 / 10 + 1));
    write(dir.path(), "index.yaml", &big);
    let s = section("index: index.yaml\nlanguage: ja\n");
    let settings = load_settings(&env(&ws, dir.path(), Some(&s)), None).unwrap();
    let err = super::docs::read_index(&ws, &settings, &super::docs::DocCache::default()).unwrap_err();
    assert_eq!(err.code, ErrorCode::UnsupportedFormat);
    assert_eq!(
        err.message,
        "索引のファイル `index.yaml` が 16 MiB を超えています。索引を分けるか、項目を減らしてください。"
    );
}

/// A user whose locale is Japanese gets E1–E3 in Japanese when no configuration names a
/// language; a C, English or missing locale gets English.
#[test]
fn a_japanese_locale_picks_japanese() {
    assert_eq!(locale_language(Some("ja_JP.UTF-8")), Language::Ja);
    assert_eq!(locale_language(Some("JA")), Language::Ja);
    for other in [Some("C.UTF-8"), Some("en_US.UTF-8"), None] {
        assert_eq!(locale_language(other), Language::En, "{other:?}");
    }
}
