//! Tests of the configuration: the contract vectors of `cli.json`, precedence, path resolution,
//! validation messages, unknown keys, globs and the command line.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::*;
use crate::error::ErrorCode;

/// A contract vector file (`tests/vectors/`), loaded, not re-typed.
fn vectors(name: &str) -> Value {
    crate::testdata::vectors(name)
}

/// The program name followed by `list`.
fn argv(list: &[&str]) -> Vec<String> {
    std::iter::once("local-vector-search-mcp").chain(list.iter().copied()).map(String::from).collect()
}

/// An environment without variables.
fn no_env(_: &str) -> Option<String> {
    None
}

/// Parses `list` and loads with no environment and `cwd`; any failure as its message.
fn run(list: &[&str], cwd: &Path) -> Result<(ParsedArgs, Loaded), String> {
    let parsed = parse_args(argv(list)).map_err(|e| e.message)?;
    let loaded = load(&parsed.overrides, &no_env, cwd).map_err(|e| e.message)?;
    Ok((parsed, loaded))
}

/// Loads a YAML text written to `<dir>/cfg.yml` with extra overrides.
fn load_yaml(dir: &Path, yaml: &str, overrides: CliOverrides) -> crate::error::Result<Loaded> {
    std::fs::write(dir.join("cfg.yml"), yaml).unwrap();
    let overrides = CliOverrides { config: Some(PathBuf::from("cfg.yml")), ..overrides };
    load(&overrides, &no_env, dir)
}

/// The message of a failed YAML load.
fn yaml_error(dir: &Path, yaml: &str) -> String {
    match load_yaml(dir, yaml, CliOverrides::default()) {
        Ok(loaded) => panic!("expected an error for {yaml:?}, got {loaded:?}"),
        Err(e) => e.message,
    }
}

#[test]
fn cli_json_cases() {
    let v = vectors("cli.json");
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path();
    let absent = cwd.join("absent").to_string_lossy().into_owned();
    let cases = v["cases"].as_array().unwrap();
    assert!(cases.len() >= 27);
    for case in cases {
        let args: Vec<String> = case["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().replace("{absentAbsoluteDir}", &absent))
            .collect();
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let outcome = run(&refs, cwd);
        if refs == ["--project-root", "relative/dir"] {
            // Deliberate change (issue #26, docs/tools.md "Project root"): a relative
            // --project-root resolves against the working directory, where this one is missing.
            let message = outcome.err().unwrap_or_else(|| panic!("{args:?} accepted"));
            assert!(message.starts_with("--project-root directory does not exist"), "{message}");
            continue;
        }
        if case["accepted"] == Value::Bool(true) {
            let (parsed, _) = outcome.unwrap_or_else(|e| panic!("{args:?} rejected: {e}"));
            if case["runs"] == "reindex" {
                assert_eq!(
                    parsed.command,
                    Command::Reindex { force: false, all: false, json: true },
                    "{args:?}"
                );
            }
        } else if let Some(expected) = case["error"].as_str() {
            assert_eq!(outcome.err().as_deref(), Some(expected), "{args:?}");
        } else if let Some(prefix) = case["errorPrefix"].as_str() {
            let message = outcome.err().unwrap_or_else(|| panic!("{args:?} accepted"));
            assert!(message.starts_with(prefix), "{args:?}: {message}");
        } else {
            assert!(case.get("error").is_some(), "unknown case shape {case}");
            assert!(outcome.is_err(), "{args:?} accepted");
        }
    }
}

#[test]
fn cli_json_missing_config_names_absolute_path() {
    let dir = tempfile::tempdir().unwrap();
    let message = run(&["--config", "missing.yml"], dir.path()).unwrap_err();
    let expected = format!("Configuration file was not found: {}", dir.path().join("missing.yml").display());
    assert_eq!(message, expected);
}

#[test]
fn cli_json_templates_are_produced() {
    // Every §3.x template of cli.json without a placeholder is one of our exact messages.
    let v = vectors("cli.json");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("a-file"), "x").unwrap();
    let relative_cwd = load(&CliOverrides::default(), &no_env, Path::new("relative/cwd"));
    let produced: Vec<String> = vec![
        relative_cwd.unwrap_err().message,
        yaml_error(d, "knowledgeBases:\n  - root: .\n"),
        yaml_error(d, "storage:\n  path: ''\n"),
        yaml_error(d, "knowledgeBase:\n  root: '  '\n"),
        yaml_error(d, "knowledgeBase:\n  root: missing-dir\n"),
        yaml_error(d, "knowledgeBase:\n  include: []\n"),
        yaml_error(d, "knowledgeBase:\n  exclude: ['']\n"),
        yaml_error(d, "embedding:\n  apiKey: ''\n"),
        yaml_error(d, "embedding:\n  model: ~\n"),
        yaml_error(d, "embedding:\n  dimensions: 0\n"),
        yaml_error(d, "embedding:\n  batchSize: 0\n"),
        yaml_error(d, "embedding:\n  timeoutSeconds: -5\n"),
        yaml_error(d, "embedding:\n  endpoint: localhost/v1\n"),
        yaml_error(d, "embedding:\n  endpoint: http://example.com/v1\n"),
        yaml_error(d, "chunking:\n  maxChunkBytes: 0\n"),
        yaml_error(d, "chunking:\n  maxElements: 0\n"),
        yaml_error(d, "search:\n  rrfK: 0\n"),
    ];
    for template in v["messages"].as_array().unwrap() {
        let t = template["template"].as_str().unwrap();
        if t.contains('<') {
            continue;
        }
        assert!(produced.iter().any(|p| p == t), "not produced exactly: {t}\nproduced: {produced:#?}");
    }
    assert_eq!(produced.len(), 17);
}

#[test]
fn configuration_invalid_template() {
    let dir = tempfile::tempdir().unwrap();
    let message = yaml_error(dir.path(), "embedding:\n  batchSize: [\n");
    assert!(message.starts_with("Configuration file is invalid: cfg.yml. "), "{message}");
    assert!(message.contains("line 3"), "{message}");
    let message = yaml_error(dir.path(), "a: b: c\n");
    assert_eq!(
        message,
        "Configuration file is invalid: cfg.yml. YAML syntax error at line 1, column 5: mapping values are not allowed in this context."
    );
    let message = yaml_error(dir.path(), "embedding:\n  batchSize: abc\n");
    assert!(message.starts_with("Configuration file is invalid: cfg.yml. Wrong value at line 2, column 14: embedding.batchSize: invalid type: string \"abc\", expected an integer"), "{message}");
    let message = yaml_error(dir.path(), "- a\n- b\n");
    assert!(
        message.starts_with("Configuration file is invalid: cfg.yml. The top level must be a mapping"),
        "{message}"
    );
    let message = yaml_error(dir.path(), "embedding:\n  model: a\n  model: b\n");
    assert!(message.contains("duplicate"), "{message}");
}

#[test]
fn defaults_without_config() {
    let dir = tempfile::tempdir().unwrap();
    let (parsed, loaded) = run(&[], dir.path()).unwrap();
    assert_eq!(parsed.command, Command::Serve { http: None });
    assert!(loaded.warnings.is_empty());
    let c = loaded.config;
    let root = dir.path().to_path_buf();
    assert_eq!(c, Config::defaults(&root));
    assert_eq!(c.project_root, root);
    assert_eq!(c.knowledge_base.root, root);
    assert_eq!(c.storage.path, root.join(".local-vector-search-mcp"));
    assert!(!c.storage.from_db_path());
    assert_eq!(c.knowledge_base.include, vec!["**/*.md".to_owned()]);
    assert!(c.knowledge_base.exclude.is_empty());
    assert!(!c.knowledge_base.allow_writes && !c.knowledge_base.watch_files);
    assert_eq!(c.embedding.provider, EmbeddingProvider::OpenAiCompatible);
    assert_eq!(c.embedding.endpoint, "http://localhost:11434/v1");
    assert_eq!(c.embedding.api_key, "ollama");
    assert_eq!(c.embedding.model, "bge-m3:latest");
    assert_eq!(c.embedding.dimensions, None);
    assert_eq!(c.embedding.effective_dimensions(), 1024);
    assert_eq!((c.embedding.batch_size, c.embedding.timeout_seconds), (16, 120));
    assert!(!c.embedding.allow_remote_endpoint);
    assert_eq!(
        c.chunking,
        ChunkingConfig {
            max_chunk_bytes: 4096,
            max_elements: 20,
            include_heading_context: true,
            include_front_matter: true
        }
    );
    assert_eq!(c.search.default_mode, SearchMode::Hybrid);
    assert_eq!(
        (
            c.search.semantic_candidate_pool_size,
            c.search.lexical_candidate_pool_size,
            c.search.max_results,
            c.search.rrf_k
        ),
        (50, 50, 10, 60)
    );
    assert_eq!(c.server.name, "local-vector-search-mcp");
    assert_eq!(c.project_root_source, ProjectRootSource::WorkingDirectory);
    assert_eq!(c.config_file, None);
    assert!(c.tools.is_enabled("kb_patch", ToolGroup::Edit));
    assert!(!format!("{c:?}").contains("ollama"), "api key must not appear in Debug output");
}

#[test]
fn precedence_defaults_then_yaml_then_cli() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("docs")).unwrap();
    std::fs::create_dir_all(d.join("notes")).unwrap();
    let yaml = "\
knowledgeBase:
  root: docs
  watchFiles: true
  allowWrites: true
  include: ['guide/**/*.md', 'api/*.md']
  exclude: drafts
search:
  defaultMode: SEMANTIC
  maxResults: 7
embedding:
  model: from-yaml
  provider: none
chunking:
  maxElements: 5
";
    std::fs::write(d.join("cfg.yml"), yaml).unwrap();

    // YAML over defaults.
    let (_, loaded) = run(&["--config", "cfg.yml"], d).unwrap();
    let c = &loaded.config;
    assert_eq!(c.config_file.as_deref(), Some(d.join("cfg.yml").as_path()));
    assert_eq!(c.knowledge_base.root, d.join("docs"));
    assert!(c.knowledge_base.watch_files && c.knowledge_base.allow_writes);
    assert_eq!(c.knowledge_base.include, vec!["guide/**/*.md", "api/*.md"]);
    assert_eq!(c.knowledge_base.exclude, vec!["drafts"]);
    assert_eq!(c.search.default_mode, SearchMode::Semantic);
    assert_eq!(c.search.max_results, 7);
    assert_eq!(c.search.rrf_k, 60, "unset key keeps its default");
    assert_eq!(c.embedding.model, "from-yaml");
    assert_eq!(c.embedding.provider, EmbeddingProvider::None);
    assert_eq!(c.chunking.max_elements, 5);
    assert_eq!(c.chunking.max_chunk_bytes, 4096);

    // CLI over YAML.
    let (_, loaded) = run(
        &[
            "--config",
            "cfg.yml",
            "--root",
            "notes",
            "--no-watch-files",
            "--search-mode",
            "lexical",
            "--embedding-model",
            "from-cli",
            "--embedding-provider",
            "openai-compatible",
            "--include",
            "**/*.md",
            "--exclude",
            "a/**",
            "--exclude",
            "b/**",
            "--embedding-endpoint",
            "http://127.0.0.1:9999/v1",
        ],
        d,
    )
    .unwrap();
    let c = &loaded.config;
    assert_eq!(c.knowledge_base.root, d.join("notes"));
    assert!(!c.knowledge_base.watch_files);
    assert!(c.knowledge_base.allow_writes, "no flag for allowWrites");
    assert_eq!(c.search.default_mode, SearchMode::Lexical);
    assert_eq!(c.embedding.model, "from-cli");
    assert_eq!(c.embedding.provider, EmbeddingProvider::OpenAiCompatible);
    assert_eq!(c.embedding.endpoint, "http://127.0.0.1:9999/v1");
    assert_eq!(c.knowledge_base.include, vec!["**/*.md"]);
    assert_eq!(c.knowledge_base.exclude, vec!["a/**", "b/**"]);
}

#[test]
fn watch_files_flags_last_one_wins() {
    let dir = tempfile::tempdir().unwrap();
    let (_, l) = run(&["--watch-files"], dir.path()).unwrap();
    assert!(l.config.knowledge_base.watch_files);
    let (_, l) = run(&["--watch-files", "--no-watch-files"], dir.path()).unwrap();
    assert!(!l.config.knowledge_base.watch_files);
    let (_, l) = run(&["--no-watch-files", "--watch-files"], dir.path()).unwrap();
    assert!(l.config.knowledge_base.watch_files);
}

#[test]
fn project_root_sources() {
    let cwd = tempfile::tempdir().unwrap();
    let env_dir = tempfile::tempdir().unwrap();
    let flag_dir = tempfile::tempdir().unwrap();
    let env_path = env_dir.path().to_string_lossy().into_owned();
    let env = move |name: &str| (name == "CLAUDE_PROJECT_DIR").then(|| env_path.clone());

    let loaded = load(&CliOverrides::default(), &env, cwd.path()).unwrap();
    assert_eq!(loaded.config.project_root, env_dir.path());
    assert_eq!(loaded.config.project_root_source, ProjectRootSource::Env);
    assert_eq!(loaded.config.knowledge_base.root, env_dir.path());
    assert_eq!(loaded.config.storage.path, env_dir.path().join(".local-vector-search-mcp"));

    let flag = CliOverrides { project_root: Some(flag_dir.path().to_path_buf()), ..Default::default() };
    let loaded = load(&flag, &env, cwd.path()).unwrap();
    assert_eq!(loaded.config.project_root, flag_dir.path());
    assert_eq!(loaded.config.project_root_source, ProjectRootSource::Flag);

    let blank = |_: &str| Some("  ".to_owned());
    let loaded = load(&CliOverrides::default(), &blank, cwd.path()).unwrap();
    assert_eq!(loaded.config.project_root, cwd.path());
    assert_eq!(loaded.config.project_root_source, ProjectRootSource::WorkingDirectory);

    let missing = cwd.path().join("gone").to_string_lossy().into_owned();
    let stale = move |_: &str| Some(missing.clone());
    let err = load(&CliOverrides::default(), &stale, cwd.path()).unwrap_err();
    assert!(err.message.starts_with("CLAUDE_PROJECT_DIR names "), "{}", err.message);
}

#[test]
fn relative_config_resolves_against_explicit_project_root() {
    let cwd = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("cfg.yml"), "search:\n  maxResults: 3\n").unwrap();
    let p = project.path().to_string_lossy().into_owned();
    let (_, loaded) = run(&["--project-root", &p, "--config", "cfg.yml"], cwd.path()).unwrap();
    assert_eq!(loaded.config.search.max_results, 3);
    // Without --project-root it is relative to the working directory, even with the env var.
    let overrides = CliOverrides { config: Some("cfg.yml".into()), ..Default::default() };
    let env = move |_: &str| Some(p.clone());
    let err = load(&overrides, &env, cwd.path()).unwrap_err();
    assert_eq!(err.code, ErrorCode::NotFound);
    assert_eq!(
        err.message,
        format!("Configuration file was not found: {}", cwd.path().join("cfg.yml").display())
    );
}

#[test]
fn relative_paths_resolve_against_project_root() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("a/docs")).unwrap();
    let loaded = load_yaml(
        d,
        "knowledgeBase:\n  root: ./a/../a/docs/\nstorage:\n  path: var/index-dir\n",
        CliOverrides::default(),
    )
    .unwrap();
    assert_eq!(loaded.config.knowledge_base.root, d.join("a/docs"));
    assert_eq!(loaded.config.storage.path, d.join("var/index-dir"));
    assert!(loaded.config.storage.db_file_note().is_none());
    // An absolute --storage-path is kept.
    let abs = d.join("elsewhere");
    let overrides = CliOverrides { storage_path: Some(abs.clone()), ..Default::default() };
    assert_eq!(load(&overrides, &no_env, d).unwrap().config.storage.path, abs);
}

#[test]
fn db_storage_path_uses_parent_directory() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (_, loaded) = run(&["--storage-path", ".local-vector-search-mcp/index.db"], d).unwrap();
    let s = &loaded.config.storage;
    assert_eq!(s.path, d.join(".local-vector-search-mcp"));
    assert_eq!(s.db_file.as_deref(), Some(d.join(".local-vector-search-mcp/index.db").as_path()));
    assert!(s.from_db_path());
    assert!(s.db_file_note().unwrap().contains("index.db"));
    // Case-insensitive extension, from YAML.
    let loaded = load_yaml(d, "storage:\n  path: store/Index.DB\n", CliOverrides::default()).unwrap();
    assert_eq!(loaded.config.storage.path, d.join("store"));
    assert!(loaded.config.storage.from_db_path());
    // An existing directory named *.db is a directory.
    std::fs::create_dir_all(d.join("real.db")).unwrap();
    let (_, loaded) = run(&["--storage-path", "real.db"], d).unwrap();
    assert_eq!(loaded.config.storage.path, d.join("real.db"));
    assert!(!loaded.config.storage.from_db_path());
}

#[test]
fn unknown_keys_are_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let yaml = "\
knowledgeBase:
  foo: 1
  root: .
knowledgebase:
  root: x
extra: true
catalog:
  index: docs/index.yaml
  html:
    toc: false
    colour: red
tools:
  enabled: [read, kb_patch, nonsense]
";
    let loaded = load_yaml(dir.path(), yaml, CliOverrides::default()).unwrap();
    assert_eq!(
        loaded.warnings,
        vec![
            "Unknown configuration key 'knowledgeBase.foo' was ignored.".to_owned(),
            "Unknown configuration key 'knowledgebase' was ignored. Did you mean 'knowledgeBase'? Keys are case-sensitive.".to_owned(),
            "Unknown configuration key 'extra' was ignored.".to_owned(),
            "Unknown configuration key 'catalog.html.colour' was ignored.".to_owned(),
            "tools.enabled entry 'nonsense' is neither a tool name (kb_…) nor a group (read, edit, assets, export, catalog); it was ignored.".to_owned(),
        ]
    );
    let catalog = loaded.config.catalog.unwrap();
    assert_eq!(catalog["index"].as_str(), Some("docs/index.yaml"));
}

#[test]
fn null_sections_and_keys() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let loaded = load_yaml(
        d,
        "embedding:\nsearch: ~\nknowledgeBase:\n  root: ~\n  exclude: ~\ncatalog: ~\n",
        CliOverrides::default(),
    )
    .unwrap();
    assert_eq!(loaded.config, Config { config_file: Some(d.join("cfg.yml")), ..Config::defaults(d) });
    assert!(load_yaml(d, "", CliOverrides::default()).is_ok());
    assert!(load_yaml(d, "# only a comment\n", CliOverrides::default()).is_ok());
    assert_eq!(
        yaml_error(d, "knowledgeBase:\n  include: ~\n"),
        "knowledgeBase.include must contain at least one pattern."
    );
    assert_eq!(
        yaml_error(d, "knowledgeBase:\n  include: ['*.md', ~]\n"),
        "knowledgeBase include and exclude patterns must not be blank."
    );
    assert_eq!(yaml_error(d, "embedding:\n  apiKey:\n"), "embedding.apiKey is required.");
    // A single string is a one-item list; a BOM is fine.
    let loaded =
        load_yaml(d, "\u{feff}knowledgeBase:\n  include: docs/*.md\n", CliOverrides::default()).unwrap();
    assert_eq!(loaded.config.knowledge_base.include, vec!["docs/*.md"]);
}

#[test]
fn validation_messages() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("a-file"), "x").unwrap();
    let cases = [
        (
            "search:\n  semanticCandidatePoolSize: 0\n",
            "search.semanticCandidatePoolSize must be greater than 0.",
        ),
        (
            "search:\n  lexicalCandidatePoolSize: -1\n",
            "search.lexicalCandidatePoolSize must be greater than 0.",
        ),
        ("search:\n  maxResults: 0\n", "search.maxResults must be greater than 0."),
        (
            "search:\n  defaultMode: fuzzy\n",
            "search.defaultMode must be lexical, semantic or hybrid, not 'fuzzy'.",
        ),
        (
            "embedding:\n  provider: ollama\n",
            "embedding.provider must be openai-compatible or none, not 'ollama'.",
        ),
        ("embedding:\n  dimensions: 99999999999\n", "embedding.dimensions is too large (99999999999)."),
        (
            "embedding:\n  endpoint: ftp://localhost/v1\n",
            "embedding.endpoint must use http or https, not 'ftp'.",
        ),
        ("knowledgeBase:\n  root: a-file\n", "knowledgeBase.root must be a directory, but it names a file."),
        (
            "knowledgeBase:\n  include: ['[a']\n",
            "knowledgeBase.include is invalid. Pattern '[a' is not a valid glob (unclosed character class; missing ']').",
        ),
        (
            "tools:\n  enabled: []\n",
            "tools.enabled must name at least one tool or group; remove the key to enable every tool.",
        ),
        ("tools:\n  disabled: ['']\n", "tools.disabled entries must not be blank."),
    ];
    for (yaml, expected) in cases {
        let err = load_yaml(d, yaml, CliOverrides::default()).unwrap_err();
        assert_eq!(err.message, expected, "{yaml}");
        assert_eq!(err.code, ErrorCode::InvalidArgument);
    }
    // Embedding requirements do not apply in lexical-only mode.
    let loaded = load_yaml(
        d,
        "embedding:\n  provider: NONE\n  model: ''\n  apiKey: ''\n  endpoint: https://api.example.com/v1\n",
        CliOverrides::default(),
    )
    .unwrap();
    assert!(!loaded.config.embedding.is_enabled());
    // A remote endpoint is fine once allowed.
    let loaded = load_yaml(
        d,
        "embedding:\n  endpoint: https://api.example.com/v1\n  allowRemoteEndpoint: true\n  dimensions: 768\n",
        CliOverrides::default(),
    )
    .unwrap();
    assert_eq!(loaded.config.embedding.effective_dimensions(), 768);
    // CLI blank values.
    assert_eq!(run(&["--root", ""], d).unwrap_err(), "knowledgeBase.root is required.");
    assert_eq!(run(&["--storage-path", " "], d).unwrap_err(), "storage.path is required.");
    assert_eq!(run(&["--config", ""], d).unwrap_err(), "--config requires a value.");
    assert_eq!(run(&["--root", "nope"], d).unwrap_err(), "knowledgeBase.root does not exist.");
    assert_eq!(
        run(&["--include", " "], d).unwrap_err(),
        "knowledgeBase include and exclude patterns must not be blank."
    );
}

#[test]
fn endpoint_hosts() {
    for (uri, host) in [
        ("http://localhost:11434/v1", Some("localhost")),
        ("http://user:pw@127.0.0.1:8080", Some("127.0.0.1")),
        ("http://[::1]:11434/v1", Some("[::1]")),
        ("https://example.com?x=1", Some("example.com")),
        ("localhost:11434/v1", None),
        ("http://", None),
        ("http://host:port/", None),
        ("http://[::1", None),
        ("1http://x", None),
        ("http://a b/", None),
    ] {
        assert_eq!(load::uri_host(uri).as_deref(), host, "{uri}");
    }
    for (host, loopback) in [
        ("localhost", true),
        ("LOCALHOST", true),
        ("127.0.0.1", true),
        ("127.8.9.10", true),
        ("::1", true),
        ("[::1]", true),
        ("[::ffff:127.0.0.1]", true),
        ("10.0.0.1", false),
        ("example.com", false),
        ("[::2]", false),
    ] {
        assert_eq!(load::is_loopback_host(host), loopback, "{host}");
    }
}

#[test]
fn tools_profile() {
    let dir = tempfile::tempdir().unwrap();
    let loaded = load_yaml(
        dir.path(),
        "tools:\n  enabled: [READ, edit, kb_save_image]\n  disabled: [kb_delete]\n",
        CliOverrides::default(),
    )
    .unwrap();
    let t = &loaded.config.tools;
    assert!(t.is_enabled("kb_search", ToolGroup::Read));
    assert!(t.is_enabled("kb_patch", ToolGroup::Edit));
    assert!(!t.is_enabled("kb_delete", ToolGroup::Edit));
    assert!(t.is_enabled("kb_save_image", ToolGroup::Assets));
    assert!(!t.is_enabled("kb_list_images", ToolGroup::Assets));
    assert!(!t.is_enabled("kb_check", ToolGroup::Catalog));
    let only_disabled = ToolsConfig {
        enabled: None,
        disabled: vec![ToolSelector::Group(ToolGroup::Export)],
        ..ToolsConfig::default()
    };
    assert!(only_disabled.is_enabled("kb_read", ToolGroup::Read));
    assert!(!only_disabled.is_enabled("kb_export_html", ToolGroup::Export));
}

#[test]
fn subcommands_with_global_flags_before_and_after() {
    let before = parse_args(argv(&[
        "--embedding-provider",
        "none",
        "--root",
        "docs",
        "search",
        "京都",
        "--top-k",
        "5",
    ]))
    .unwrap();
    let after = parse_args(argv(&[
        "search",
        "京都",
        "--root",
        "docs",
        "--top-k",
        "5",
        "--embedding-provider",
        "none",
    ]))
    .unwrap();
    assert_eq!(before, after);
    assert_eq!(before.overrides.root.as_deref(), Some(Path::new("docs")));
    assert_eq!(before.overrides.embedding_provider, Some(EmbeddingProvider::None));
    assert_eq!(
        before.command,
        Command::Search {
            query: "京都".into(),
            mode: None,
            top_k: Some(5),
            max_per_file: None,
            include_globs: vec![],
            exclude_globs: vec![],
            filters: vec![],
            explain: false,
            json: false
        }
    );

    let p = parse_args(argv(&[
        "search",
        "q",
        "--mode",
        "LEXICAL",
        "--include-glob",
        "a/**",
        "--include-glob",
        "b/**",
        "--exclude-glob",
        "c/**",
        "--filter",
        "tags=api",
        "--filter",
        "updated>=2024-01-01",
        "--filter",
        "reviewed?",
        "--max-per-file",
        "2",
        "--json",
    ]))
    .unwrap();
    assert_eq!(
        p.command,
        Command::Search {
            query: "q".into(),
            mode: Some(SearchMode::Lexical),
            top_k: None,
            max_per_file: Some(2),
            include_globs: vec!["a/**".into(), "b/**".into()],
            exclude_globs: vec!["c/**".into()],
            filters: vec![
                crate::wire::SearchFilter {
                    field: "tags".into(),
                    op: crate::wire::FilterOp::Eq,
                    value: Some("api".into()),
                    values: None
                },
                crate::wire::SearchFilter {
                    field: "updated".into(),
                    op: crate::wire::FilterOp::Gte,
                    value: Some("2024-01-01".into()),
                    values: None
                },
                crate::wire::SearchFilter {
                    field: "reviewed".into(),
                    op: crate::wire::FilterOp::Exists,
                    value: None,
                    values: None
                },
            ],
            explain: false,
            json: true
        }
    );

    let p = parse_args(argv(&["reindex", "--force", "--all", "--json", "--include", "x/*.md"])).unwrap();
    assert_eq!(p.command, Command::Reindex { force: true, all: true, json: true });
    assert_eq!(p.overrides.include, Some(vec!["x/*.md".to_owned()]));
    let p = parse_args(argv(&["--force", "reindex"])).unwrap();
    assert_eq!(p.command, Command::Reindex { force: true, all: false, json: false });

    let p = parse_args(argv(&["serve", "--http", "127.0.0.1:8782", "--watch-files"])).unwrap();
    let http = HttpServe { addr: Some("127.0.0.1:8782".into()), ..HttpServe::default() };
    assert_eq!(p.command, Command::Serve { http: Some(http) });
    assert_eq!(p.overrides.watch_files, Some(true));
    assert_eq!(parse_args(argv(&["serve"])).unwrap().command, Command::Serve { http: None });
    // `--http` alone means the default address; the token and allow-lists need `--http`.
    let p = parse_args(argv(&["serve", "--http", "--token", "s3cret", "--allow-host", "docs.lan"])).unwrap();
    let http = HttpServe {
        addr: None,
        token: Some("s3cret".into()),
        allow_hosts: vec!["docs.lan".into()],
        allow_origins: Vec::new(),
    };
    assert_eq!(p.command, Command::Serve { http: Some(http) });
    assert!(!format!("{p:?}").contains("s3cret"), "Debug never shows the token");
    let err = parse_args(argv(&["serve", "--token", "x"])).unwrap_err();
    assert!(err.message.contains("--http"), "{}", err.message);

    assert_eq!(parse_args(argv(&["status", "--json"])).unwrap().command, Command::Status { json: true });
    assert_eq!(parse_args(argv(&["status"])).unwrap().command, Command::Status { json: false });
    assert_eq!(
        parse_args(argv(&["read", "docs/a.md", "1.p1", "--json"])).unwrap().command,
        Command::Read { path: "docs/a.md".into(), pointer: Some("1.p1".into()), json: true }
    );
    assert_eq!(
        parse_args(argv(&["read", "docs/a.md"])).unwrap().command,
        Command::Read { path: "docs/a.md".into(), pointer: None, json: false }
    );
    assert_eq!(
        parse_args(argv(&["outline", "--project-root", "/p", "a.md"])).unwrap().command,
        Command::Outline { path: "a.md".into(), json: false }
    );
}

#[test]
fn legacy_maintenance_flags() {
    assert_eq!(parse_args(argv(&["--status"])).unwrap().command, Command::Status { json: true });
    assert_eq!(
        parse_args(argv(&["--reindex", "--force"])).unwrap().command,
        Command::Reindex { force: true, all: false, json: true }
    );
    assert_eq!(
        parse_args(argv(&["--status", "--reindex"])).unwrap().command,
        Command::Reindex { force: false, all: false, json: true }
    );
    assert_eq!(parse_args(argv(&["--force"])).unwrap().command, Command::Serve { http: None });
    let err = parse_args(argv(&["search", "q", "--status"])).unwrap_err();
    assert_eq!(err.exit_code, 2);
    assert!(err.message.starts_with("--status cannot be combined with a subcommand"), "{}", err.message);
}

#[test]
fn usage_errors() {
    let cases: &[(&[&str], &str)] = &[
        (&["--search-mode", "bogus"], "--search-mode must be lexical, semantic or hybrid, not 'bogus'."),
        (
            &["--embedding-provider", "ollama"],
            "--embedding-provider must be openai-compatible or none, not 'ollama'.",
        ),
        (&["search", "q", "--mode", "x"], "--mode must be lexical, semantic or hybrid, not 'x'."),
        (&["search", "q", "--top-k", "0"], "--top-k must be a whole number greater than 0, not '0'."),
        (&["search", "q", "--top-k", "-3"], "--top-k must be a whole number greater than 0, not '-3'."),
        (&["search", "q", "--top-k"], "--top-k requires a value."),
        (&["search", "q", "--include-glob", "--json"], "--include-glob requires a value."),
        // `--http` takes an optional address, so the next option is not its value.
        (
            &["serve", "--http", "--status"],
            "--status cannot be combined with a subcommand; run `local-vector-search-mcp status` instead.",
        ),
        (&["serve", "--http", "--token", "--status"], "--token requires a value."),
        (&["search", "q", "extra"], "Unexpected argument: extra"),
        (&["search", "q", "--bogus"], "Unknown option: --bogus"),
        (&["-x"], "Unknown option: -x"),
        (&["status", "--root"], "--root requires a value."),
        (&["--status=1"], "--status does not take a value."),
        (&["search"], "Missing argument <QUERY>; usage: local-vector-search-mcp search <QUERY>"),
    ];
    for (args, expected) in cases {
        let err = parse_args(argv(args)).unwrap_err();
        assert_eq!(err.message, *expected, "{args:?}");
        assert_eq!((err.exit_code, err.to_stdout), (2, false), "{args:?}");
    }
    // Repeating a single-value option: the last one wins, as in the original's loop.
    let p = parse_args(argv(&["--root", "a", "--root", "b"])).unwrap();
    assert_eq!(p.overrides.root.as_deref(), Some(Path::new("b")));
    // A value may start with a single hyphen.
    let p = parse_args(argv(&["--root", "-dir"])).unwrap();
    assert_eq!(p.overrides.root.as_deref(), Some(Path::new("-dir")));
}

#[test]
fn help_and_version_go_to_stdout() {
    for args in [&["--help"][..], &["-h"], &["search", "--help"], &["help", "reindex"]] {
        let out = parse_args(argv(args)).unwrap_err();
        assert!(out.is_info() && out.exit_code == 0, "{args:?}");
        assert!(out.message.contains("Usage:"), "{args:?}: {}", out.message);
    }
    let help = parse_args(argv(&["--help"])).unwrap_err().message;
    for flag in [
        "--project-root",
        "--config",
        "--root",
        "--storage-path",
        "--embedding-provider",
        "--search-mode",
        "--embedding-endpoint",
        "--embedding-model",
        "--include",
        "--exclude",
        "--watch-files",
        "--no-watch-files",
        "--reindex",
        "--force",
        "--status",
        "serve",
        "reindex",
        "search",
        "status",
        "read",
        "outline",
    ] {
        assert!(help.contains(flag), "help lacks {flag}");
    }
    let version = parse_args(argv(&["--version"])).unwrap_err();
    assert!(version.to_stdout && version.exit_code == 0);
    assert!(version.message.contains(env!("CARGO_PKG_VERSION")));
}

#[test]
fn clap_definition_is_consistent() {
    use clap::CommandFactory;
    Cli::command().debug_assert();
}

#[test]
fn schema_lists_every_known_key() {
    let schema = json_schema();
    let text = schema.to_string();
    for path in file::known_leaf_paths() {
        if path.starts_with("catalog.") {
            continue;
        }
        let leaf = path.rsplit('.').next().unwrap();
        assert!(text.contains(&format!("\"{leaf}\"")), "schema lacks {path}");
    }
    let props = schema["properties"].as_object().unwrap();
    let sections: Vec<&str> = props.keys().map(String::as_str).collect();
    assert_eq!(
        sections,
        [
            "server",
            "storage",
            "embedding",
            "chunking",
            "search",
            "knowledgeBase",
            "tools",
            "index",
            "catalog"
        ]
    );
    assert!(text.contains("\"default\""));
}

mod no_panics {
    use super::*;
    use proptest::prelude::*;

    fn token() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("--root".to_owned()),
            Just("--include".to_owned()),
            Just("--status".to_owned()),
            Just("--reindex".to_owned()),
            Just("--force".to_owned()),
            Just("--search-mode".to_owned()),
            Just("search".to_owned()),
            Just("read".to_owned()),
            Just("serve".to_owned()),
            Just("--".to_owned()),
            Just("-".to_owned()),
            Just("--top-k".to_owned()),
            ".{0,6}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn parse_args_never_panics(tokens in proptest::collection::vec(token(), 0..8)) {
            let _ = parse_args(argv(&tokens.iter().map(String::as_str).collect::<Vec<_>>()));
        }

        #[test]
        fn yaml_never_panics(text in "(?s).{0,80}", key in "(server|storage|embedding|search|knowledgeBase|tools|catalog|x)") {
            let _ = file::parse(&text, "cfg.yml");
            let _ = file::parse(&format!("{key}:\n  {text}"), "cfg.yml");
        }

        #[test]
        fn uri_host_never_panics(path in ".{0,12}") {
            let _ = load::uri_host(&path);
        }
    }
}

#[test]
fn debug_output_never_shows_the_api_key() {
    let read = file::parse("embedding:\n  apiKey: sk-very-secret-key\n", "cfg.yml").expect("valid YAML");
    let config = EmbeddingConfig { api_key: "sk-very-secret-key".to_owned(), ..EmbeddingConfig::default() };
    for shown in [format!("{:?}", read.config), format!("{:#?}", read.config), format!("{config:?}")] {
        assert!(!shown.contains("sk-very-secret-key"), "the API key leaked: {shown}");
        assert!(shown.contains("<redacted>"), "{shown}");
    }
}

#[test]
fn retrieval_keys_of_issue_17_load_and_validate() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let yaml = "embedding:\n  queryPrefix: 'query: '\n  documentPrefix: 'passage: '\n  inputType:\n    query: query\n    document: passage\nsearch:\n  lexicalWeight: 3\n  semanticFloor: 0\n  semanticMinSimilarity: 0.7\n";
    let loaded = load_yaml(d, yaml, CliOverrides::default()).expect("loads");
    let c = &loaded.config;
    assert_eq!(c.embedding.query_prefix, "query: ");
    assert_eq!(c.embedding.document_prefix, "passage: ");
    let t = c.embedding.input_type.as_ref().expect("input type");
    assert_eq!((t.query.as_str(), t.document.as_str()), ("query", "passage"));
    assert_eq!(c.search.lexical_weight, 3.0);
    assert_eq!(c.search.semantic_floor, 0.0);
    assert_eq!(c.search.semantic_min_similarity, Some(0.7));
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    // Defaults.
    let plain = load_yaml(d, "search:\n  rrfK: 60\n", CliOverrides::default()).expect("loads").config;
    assert_eq!(plain.embedding.query_prefix, "");
    assert!(plain.embedding.input_type.is_none());
    assert_eq!(plain.search.lexical_weight, crate::config::DEFAULT_LEXICAL_WEIGHT);
    assert_eq!(plain.search.semantic_floor, crate::config::DEFAULT_SEMANTIC_FLOOR);
    assert_eq!(plain.search.semantic_min_similarity, None);
    // Errors.
    for (yaml, want) in [
        ("search:\n  lexicalWeight: -1\n", "search.lexicalWeight must be a number of 0 or more."),
        ("search:\n  semanticFloor: -0.1\n", "search.semanticFloor must be a number of 0 or more."),
        (
            "search:\n  semanticMinSimilarity: 2\n",
            "search.semanticMinSimilarity must be a cosine similarity between -1 and 1.",
        ),
        (
            "embedding:\n  inputType:\n    query: query\n",
            "embedding.inputType needs both query and document (e.g. query: query, document: passage).",
        ),
    ] {
        assert_eq!(yaml_error(d, yaml), want, "{yaml}");
    }
}

/// Issue #19 (fuzzing): whole configuration files built from the real key tree with values of
/// every YAML/JSON type, plus raw text, through the full loader (parse, build, validation).
mod fuzz {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn cases(default: u32) -> u32 {
        crate::markdown::tests::cases(default)
    }

    /// Any JSON value a user might put under a key: scalars of every type (including the edges
    /// of numbers and odd strings), lists and small maps.
    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            prop::sample::select(&[0i64, 1, -1, 60, 65536, 4096, i64::MAX, i64::MIN][..])
                .prop_map(Value::from),
            any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from),
            prop::sample::select(&[0.5f64, -0.0, 1e308, 2.0, -1.5][..]).prop_map(Value::from),
            prop::sample::select(
                &[
                    "",
                    " ",
                    "none",
                    "openai-compatible",
                    "lexical",
                    "hybrid",
                    "semantic",
                    "auto",
                    "read",
                    "edit",
                    "**/*.md",
                    "http://127.0.0.1:1/v1",
                    "http://example.com/v1",
                    "ftp://x",
                    "/abs/path",
                    "../up",
                    "rel/dir",
                    "~",
                    "null",
                    "true",
                    "60",
                    "日本語",
                    "\u{0}",
                    "a\nb",
                    "C:\\x",
                    "*",
                ][..],
            )
            .prop_map(Value::from),
            ".{0,12}".prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map("[a-zA-Z]{1,8}", inner, 0..3)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// Sets `dotted` (`a.b.c`) in `root` to `v`, making maps on the way (a non-map in the way
    /// is replaced: the last writer wins, as in a hand-edited file).
    fn set(root: &mut Value, dotted: &str, v: Value) {
        let mut cur = root;
        let parts: Vec<&str> = dotted.split('.').collect();
        for (i, part) in parts.iter().enumerate() {
            if !cur.is_object() {
                *cur = json!({});
            }
            let map = cur.as_object_mut().expect("object");
            if i + 1 == parts.len() {
                map.insert((*part).to_owned(), v);
                return;
            }
            cur = map.entry((*part).to_owned()).or_insert_with(|| json!({}));
        }
    }

    /// Block-style YAML of a JSON value (strings double-quoted JSON-style, which YAML accepts).
    fn yaml(v: &Value, indent: usize, out: &mut String) {
        let pad = " ".repeat(indent);
        match v {
            Value::Object(m) if !m.is_empty() => {
                for (k, x) in m {
                    out.push_str(&format!("{pad}{k}:"));
                    if matches!(x, Value::Object(o) if !o.is_empty())
                        || matches!(x, Value::Array(a) if !a.is_empty())
                    {
                        out.push('\n');
                        yaml(x, indent + 2, out);
                    } else {
                        out.push_str(&format!(" {x}\n"));
                    }
                }
            }
            Value::Array(a) if !a.is_empty() => {
                for x in a {
                    out.push_str(&format!("{pad}- {x}\n"));
                }
            }
            other => out.push_str(&format!("{pad}{other}\n")),
        }
    }

    fn config_text() -> impl Strategy<Value = String> {
        let paths = file::known_leaf_paths();
        let entry = (prop::sample::select(paths), value());
        let built = (prop::collection::vec(entry, 0..8), any::<bool>(), prop::option::of("[a-z]{1,6}"))
            .prop_map(|(entries, as_json, unknown)| {
                let mut root = json!({});
                for (path, v) in entries {
                    set(&mut root, &path, v);
                }
                if let Some(u) = unknown {
                    set(&mut root, &format!("knowledgeBase.{u}"), json!(1));
                }
                if as_json {
                    root.to_string()
                } else {
                    let mut out = String::new();
                    yaml(&root, 0, &mut out);
                    out
                }
            });
        prop_oneof![
            6 => built,
            1 => "(?s).{0,80}",
            1 => "([a-zA-Z]{1,6}:( |\n  )(&a |\\*a|!!str |!!binary |\\[|\\{|-|\\||>|'|\")?[a-z0-9]{0,4}\n){1,5}",
        ]
    }

    /// A loader error is one line, non-empty, ends with a full stop and names no Rust type.
    fn one_sentence(message: &str) -> std::result::Result<(), TestCaseError> {
        prop_assert!(!message.is_empty());
        prop_assert!(!message.contains('\n'), "several lines: {message:?}");
        prop_assert!(message.ends_with('.'), "no full stop: {message:?}");
        prop_assert!(!message.contains("FileConfig") && !message.contains("struct "), "{message:?}");
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(cases(160)))]

        /// Loading never panics; a failure is `INVALID_ARGUMENT` with one sentence.
        #[test]
        fn arbitrary_config_files_load_or_fail_in_one_sentence(text in config_text()) {
            let dir = tempfile::tempdir().unwrap();
            match load_yaml(dir.path(), &text, CliOverrides::default()) {
                Ok(loaded) => {
                    for w in &loaded.warnings {
                        prop_assert!(!w.is_empty() && !w.contains('\n'), "{w:?}");
                    }
                }
                Err(e) => {
                    prop_assert_eq!(e.code, ErrorCode::InvalidArgument, "{:?}", e);
                    one_sentence(&e.message)?;
                }
            }
        }
    }
}

/// Found by `arbitrary_config_files_load_or_fail_in_one_sentence` at 20,000 cases (issue #19): an
/// unknown `tools.disabled` entry with a line break made a two-line warning.
#[test]
fn tool_selector_warnings_stay_on_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let loaded =
        load_yaml(dir.path(), "tools:\n  disabled: \"a\\nb\"\n", CliOverrides::default()).expect("loads");
    assert_eq!(
        loaded.warnings,
        [
            "tools.disabled entry 'a\\nb' is neither a tool name (kb_…) nor a group (read, edit, assets, export, catalog); it was ignored."
        ]
    );
}

#[test]
fn index_auto_index_and_tools_max_answer_bytes_load_with_defaults_and_limits() {
    let dir = tempfile::tempdir().unwrap();
    let c = load_yaml(dir.path(), "{}\n", CliOverrides::default()).unwrap().config;
    assert!(c.index.auto_index);
    assert_eq!(c.tools.max_answer_bytes, 32_768);
    let c = load_yaml(
        dir.path(),
        "index:\n  autoIndex: false\ntools:\n  maxAnswerBytes: 200000\n",
        CliOverrides::default(),
    )
    .unwrap()
    .config;
    assert!(!c.index.auto_index);
    assert_eq!(c.tools.max_answer_bytes, 200_000);
    assert_eq!(
        yaml_error(dir.path(), "tools:\n  maxAnswerBytes: 10\n"),
        "tools.maxAnswerBytes must be at least 1024; remove the key for the default of 32768."
    );
}

#[test]
fn a_relative_project_root_resolves_against_the_working_directory() {
    let cwd = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(cwd.path().join("docs/site")).unwrap();
    let (_, loaded) = run(&["--project-root", "docs/./site/.."], cwd.path()).unwrap();
    assert_eq!(loaded.config.project_root, cwd.path().join("docs"));
    assert_eq!(loaded.config.project_root_source, ProjectRootSource::Flag);
    let message = run(&["--project-root", "missing"], cwd.path()).unwrap_err();
    assert!(message.starts_with("--project-root directory does not exist"), "{message}");
}

#[test]
fn ranking_keys_and_max_per_file_of_issue_29_load_and_validate() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let yaml = "search:\n  maxPerFile: 2\n  headingWeight: 3\n  proximityWeight: 0.5\n  proximitySlop: 4\n  contentWordWeight: 0.5\n  looseWeight: 0.25\n  coordinationWeight: 2\n";
    let loaded = load_yaml(d, yaml, CliOverrides::default()).expect("loads");
    let s = &loaded.config.search;
    assert_eq!(s.max_per_file, Some(2));
    let r = s.ranking;
    assert_eq!(
        (r.heading_weight, r.proximity_weight, r.proximity_slop, r.content_word_weight),
        (3.0, 0.5, 4, 0.5)
    );
    assert_eq!((r.loose_weight, r.coordination_weight), (0.25, 2.0));
    assert_eq!((r.rerank_weight, r.rerank_depth), (0.2, 10), "the re-rank's defaults");
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let rerank = load_yaml(d, "search:\n  rerankWeight: 0\n  rerankDepth: 30\n", CliOverrides::default());
    let r = rerank.expect("loads").config.search.ranking;
    assert_eq!((r.rerank_weight, r.rerank_depth), (0.0, 30));
    let zero = load_yaml(d, "search:\n  maxPerFile: 0\n", CliOverrides::default()).expect("loads");
    assert_eq!(zero.config.search.max_per_file, None, "0 means no limit");
    let plain = load_yaml(d, "search:\n  rrfK: 60\n", CliOverrides::default()).expect("loads");
    assert_eq!(plain.config.search.max_per_file, None, "no limit by default");
    for (yaml, want) in [
        ("search:\n  maxPerFile: -1\n", "search.maxPerFile must be 0 (no limit) or more."),
        ("search:\n  headingWeight: -1\n", "search.headingWeight must be a number of 0 or more."),
        ("search:\n  proximitySlop: 100\n", "search.proximitySlop must be a whole number from 0 to 64."),
        ("search:\n  proximityReach: 0\n", "search.proximityReach must be a whole number from 1 to 16."),
        ("search:\n  rerankDepth: 1\n", "search.rerankDepth must be a whole number from 2 to 200."),
        ("search:\n  rerankWeight: -0.5\n", "search.rerankWeight must be a number of 0 or more."),
    ] {
        assert_eq!(yaml_error(d, yaml), want, "{yaml}");
    }
}

#[test]
fn without_a_provider_the_default_mode_is_lexical_and_the_search_shape_settings_load() {
    let dir = tempfile::tempdir().unwrap();
    let none = || CliOverrides { embedding_provider: Some(EmbeddingProvider::None), ..Default::default() };
    let c = load_yaml(dir.path(), "{}\n", none()).unwrap().config;
    assert_eq!(c.search.default_mode, SearchMode::Lexical, "nothing else can run");
    let c = load_yaml(dir.path(), "search:\n  defaultMode: hybrid\n", none()).unwrap().config;
    assert_eq!(c.search.default_mode, SearchMode::Hybrid, "set explicitly: the contract's fallback warning");
    assert_eq!((c.search.snippet_tokens, c.search.hit_detail), (64, HitDetail::Compact));
    let c =
        load_yaml(dir.path(), "search:\n  snippetTokens: 16\n  hitDetail: FULL\n", none()).unwrap().config;
    assert_eq!((c.search.snippet_tokens, c.search.hit_detail), (16, HitDetail::Full));
    assert_eq!(
        yaml_error(dir.path(), "search:\n  snippetTokens: 2\n"),
        "search.snippetTokens must be a whole number from 4 to 200."
    );
    assert_eq!(
        yaml_error(dir.path(), "search:\n  hitDetail: brief\n"),
        "search.hitDetail must be compact or full, not 'brief'."
    );
}
