//! The catalog settings (`docs/reference/catalog-spec.md` §3): where they come from, the base
//! folder of their relative paths, the keys with their defaults, and validation.
//!
//! Three entry points, one reading:
//!
//! - [`load_settings`]: for tools that need a catalog (`kb_find_docs`, `kb_build_site`, …). No
//!   configuration is `NOT_FOUND` (E1); an unusable setting is the error of its first problem.
//! - [`find_settings`]: the same, but `Ok(None)` when the project has no catalog configuration
//!   (`kb_export_html` then uses [`CatalogSettings::defaults`]).
//! - [`inspect_settings`]: for `kb_check`: every problem as a [`SettingsProblem`] (`config_error`,
//!   `missing_index`) instead of failing on the first one.
//!
//! Invariants:
//!
//! - Every path in a [`CatalogSettings`] is root-relative (`/`-separated, no `.`/`..`), resolved
//!   against the base folder of §3.2; a path outside the root makes the setting unusable.
//! - Globs are resolved the same way (wildcard segments carried over) and compile with
//!   `workspace::GlobFilter`.
//! - Reading a configuration never writes anything.

use std::path::{Component, Path, PathBuf};

use yaml_serde::{Mapping, Value};

use super::Language;
use crate::error::{Error, ErrorCode, Result};
use crate::messages::{Msg, msg};
use crate::wire::{IssueKind, ValueSet};
use crate::workspace::{GlobFilter, PathContext, Workspace, outside};

/// The file name of a standalone catalog configuration (mdmark's).
pub const STANDALONE_FILE: &str = "mdmark.config.yaml";
/// The largest configuration file read.
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;
/// Default `build.out`.
pub const DEFAULT_BUILD_OUT: &str = "dist/docs.html";

/// What the loader needs from the running server. Build it from the engine's configuration and
/// workspace (`Engine::catalog_settings` does).
#[derive(Clone, Copy, Debug)]
pub struct SettingsEnv<'a> {
    /// The workspace (the knowledge-base root and the path guard).
    pub workspace: &'a Workspace,
    /// The project root (absolute): the base of the server configuration's relative paths and
    /// the start of the upward search for `mdmark.config.yaml`.
    pub project_root: &'a Path,
    /// The `catalog:` section of the server configuration, if any.
    pub server_section: Option<&'a Value>,
    /// The server configuration file (absolute), when `--config` named one.
    pub server_file: Option<&'a Path>,
}

/// Which source of §3.1 the settings came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SettingsOrigin {
    /// The tool's `config` argument (CLI `--catalog-config`), root-relative.
    Argument,
    /// The `catalog:` section of the server configuration.
    ServerConfig,
    /// A standalone `mdmark.config.yaml` found from the project root upwards.
    Standalone,
}

/// `html.lang`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HtmlLang {
    /// `auto`: `ja` when the Markdown holds Hiragana, Katakana or CJK ideographs, else `en`.
    Auto,
    /// A BCP 47 tag, as written.
    Tag(String),
}

/// `html.*` (`docs/reference/catalog-spec.md` §3.3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HtmlSettings {
    /// `html.lang` (default `auto`).
    pub lang: HtmlLang,
    /// `html.toc` (default `true`).
    pub toc: bool,
    /// `html.tocDepth`, 2..=6 (default 3).
    pub toc_depth: u8,
    /// `html.highlight` (default `false`).
    pub highlight: bool,
}

impl Default for HtmlSettings {
    fn default() -> Self {
        HtmlSettings { lang: HtmlLang::Auto, toc: true, toc_depth: 3, highlight: false }
    }
}

/// `build.*` (`docs/reference/catalog-spec.md` §3.3), paths and globs root-relative.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildSettings {
    /// `build.include`: non-empty, in the order written.
    pub include: Vec<String>,
    /// `build.exclude` (default `[]`).
    pub exclude: Vec<String>,
    /// `build.out`, ending in `.html`/`.htm` (default `dist/docs.html` in the base folder).
    pub out: String,
    /// `build.title` (default: the name of the root folder).
    pub title: String,
}

/// The resolved catalog settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogSettings {
    /// Where they came from.
    pub origin: SettingsOrigin,
    /// The configuration file as shown in messages and issues: root-relative, or its file name
    /// when it lies outside the root. Empty for [`CatalogSettings::defaults`].
    pub file: String,
    /// The prefix of key paths in messages: `catalog.` for a `catalog:` section, `` for a
    /// standalone file.
    pub key_prefix: &'static str,
    /// `index`: the index file, root-relative. `None` when the setting is absent.
    pub index: Option<String>,
    /// `language` (default `en`).
    pub language: Language,
    /// `scan`: root-relative globs (default `build.include`, else empty).
    pub scan: Vec<String>,
    /// `check.ignore`: known issue kinds only (unknown ones are problems).
    pub check_ignore: Vec<String>,
    /// `html.*`.
    pub html: HtmlSettings,
    /// `build`, when present.
    pub build: Option<BuildSettings>,
}

impl CatalogSettings {
    /// The settings of a project without catalog configuration (what `kb_export_html` uses).
    pub fn defaults() -> CatalogSettings {
        CatalogSettings {
            origin: SettingsOrigin::ServerConfig,
            file: String::new(),
            key_prefix: "catalog.",
            index: None,
            language: Language::En,
            scan: Vec::new(),
            check_ignore: Vec::new(),
            html: HtmlSettings::default(),
            build: None,
        }
    }

    /// The key path of `key` as messages show it (`catalog.index` or `index`).
    pub fn key(&self, key: &str) -> String {
        format!("{}{key}", self.key_prefix)
    }

    /// The index file, or `NOT_FOUND` (E5) when the `index` setting is absent.
    pub fn index_path(&self) -> Result<&str> {
        self.index.as_deref().ok_or_else(|| Error::not_found(no_index_message(self.language, &self.file)))
    }

    /// `build`, or `NOT_FOUND` (E28) when the section is absent.
    pub fn build_settings(&self) -> Result<&BuildSettings> {
        self.build.as_ref().ok_or_else(|| Error::not_found(Msg::NoBuildSection.text(self.language)))
    }
}

/// E5: the configuration has no `index` setting.
pub fn no_index_message(language: Language, file: &str) -> String {
    msg!(language, NoIndexSetting, path = file)
}

/// One problem of a catalog configuration (`kb_check`: `config_error` or `missing_index`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingsProblem {
    /// `config_error` or `missing_index`.
    pub kind: IssueKind,
    /// The key path (`catalog.build.include`).
    pub key: String,
    /// One sentence (§9.5).
    pub message: String,
    /// The error code a tool fails with when the problem is fatal.
    pub code: ErrorCode,
    /// Whether the setting is unusable (tools fail; `kb_check` stops after phase 1).
    pub fatal: bool,
}

impl SettingsProblem {
    /// A `config_error`.
    fn config_error(key: String, message: String, code: ErrorCode, fatal: bool) -> SettingsProblem {
        SettingsProblem { kind: IssueKind::ConfigError, key, message, code, fatal }
    }
}

/// What [`inspect_settings`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inspected {
    /// The settings; `None` when a problem made them unusable.
    pub settings: Option<CatalogSettings>,
    /// The configuration file as shown in issues.
    pub file: String,
    /// Every problem, in the order of the keys in the file.
    pub problems: Vec<SettingsProblem>,
}

/// The settings for a call, or `NOT_FOUND` (E1) when the project has none. `config` is the
/// tool's `config` argument (root-relative).
pub fn load_settings(env: &SettingsEnv<'_>, config: Option<&str>) -> Result<CatalogSettings> {
    find_settings(env, config)?.ok_or_else(|| no_configuration(env))
}

/// The settings for a call, or `None` when the project has no catalog configuration.
pub fn find_settings(env: &SettingsEnv<'_>, config: Option<&str>) -> Result<Option<CatalogSettings>> {
    let Some(inspected) = inspect_settings(env, config)? else { return Ok(None) };
    if let Some(p) = inspected.problems.iter().find(|p| p.fatal) {
        return Err(Error::new(p.code, p.message.clone()));
    }
    Ok(inspected.settings)
}

/// Every problem of the configuration for `kb_check`, or `None` when the project has none.
/// Fails only when the configuration cannot be read at all (`config` missing: E2; not YAML: E3;
/// `config` refused by the path guard: `INVALID_PATH`).
pub fn inspect_settings(env: &SettingsEnv<'_>, config: Option<&str>) -> Result<Option<Inspected>> {
    let Some(source) = locate(env, config)? else { return Ok(None) };
    Ok(Some(interpret(env, source)))
}

/// E1 with the folders searched.
pub fn no_configuration(env: &SettingsEnv<'_>) -> Error {
    let folders: Vec<String> = outside::folders_up_to_repository(env.project_root)
        .iter()
        .enumerate()
        .map(|(i, _)| if i == 0 { "`.`".to_owned() } else { format!("`{}`", vec![".."; i].join("/")) })
        .collect();
    Error::not_found(msg!(fallback_language(env), NoConfiguration, folders = folders.join(", ")))
}

/// The language of a message given before any configuration could be read (E1–E3): the
/// `language` of the server configuration's `catalog` section when it has one, else the user's
/// locale (`LC_ALL`, `LC_MESSAGES`, `LANG`, the first one set: `ja…` is Japanese), else English.
fn fallback_language(env: &SettingsEnv<'_>) -> Language {
    if let Some(section) =
        env.server_section.filter(|v| v.as_mapping().is_some_and(|m| m.contains_key("language")))
    {
        return declared_language(section);
    }
    let locale = ["LC_ALL", "LC_MESSAGES", "LANG"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()));
    locale_language(locale.as_deref())
}

/// The language of a locale name (`ja_JP.UTF-8` is Japanese; anything else, or none, English).
pub(super) fn locale_language(locale: Option<&str>) -> Language {
    if locale.is_some_and(|l| l.to_ascii_lowercase().starts_with("ja")) { Language::Ja } else { Language::En }
}

/// A configuration that was found and parsed, before interpretation.
struct Source {
    origin: SettingsOrigin,
    /// Shown in messages and issues.
    file: String,
    /// Absolute folder that relative paths resolve against.
    base: PathBuf,
    /// The catalog keys (a mapping, or `Null` for an empty file/section).
    section: Value,
    /// `catalog.` or ``.
    key_prefix: &'static str,
    /// Whether unknown keys are reported (a `catalog:` section) or ignored (standalone).
    report_unknown: bool,
}

/// §3.1: the first source that exists.
fn locate(env: &SettingsEnv<'_>, config: Option<&str>) -> Result<Option<Source>> {
    if let Some(arg) = config {
        let rel = env.workspace.rel_path(arg, PathContext::Any)?;
        let bytes = match env.workspace.read_bytes(&rel, MAX_CONFIG_BYTES) {
            Ok(b) => b,
            Err(e) if e.code == ErrorCode::NotFound => {
                return Err(Error::not_found(msg!(fallback_language(env), ConfigFileMissing, path = rel)));
            }
            Err(e) => return Err(e),
        };
        let value = parse_yaml(&bytes, rel.as_str(), fallback_language(env))?;
        let base = env.workspace.root().join(rel.parent().map(|p| p.as_str().to_owned()).unwrap_or_default());
        let (section, key_prefix, report_unknown) = match &value {
            Value::Mapping(m) if m.get("catalog").is_some() => {
                (m.get("catalog").cloned().unwrap_or(Value::Null), "catalog.", true)
            }
            _ => (value, "", false),
        };
        return Ok(Some(Source {
            origin: SettingsOrigin::Argument,
            file: rel.as_str().to_owned(),
            base,
            section,
            key_prefix,
            report_unknown,
        }));
    }
    if let Some(section) = env.server_section.filter(|v| !v.is_null()) {
        let file = env.server_file.map(|f| display_file(env.workspace, f)).unwrap_or_default();
        let base = outside::canonical_or_given(env.project_root);
        return Ok(Some(Source {
            origin: SettingsOrigin::ServerConfig,
            file,
            base,
            section: section.clone(),
            key_prefix: "catalog.",
            report_unknown: true,
        }));
    }
    // The project root and its parents up to and including the first folder holding `.git`.
    for folder in outside::folders_up_to_repository(env.project_root) {
        let path = folder.join(STANDALONE_FILE);
        let bytes = match outside::read_regular_file(&path) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => continue,
            Err(e) => return Err(Error::io(&format!("`{}`", display_file(env.workspace, &path)), &e)),
        };
        let file = display_file(env.workspace, &path);
        let lang = fallback_language(env);
        check_size(&bytes, &file, lang)?;
        let value = parse_yaml(&bytes, &file, lang)?;
        let base = outside::canonical_or_given(&folder);
        return Ok(Some(Source {
            origin: SettingsOrigin::Standalone,
            file,
            base,
            section: value,
            key_prefix: "",
            report_unknown: false,
        }));
    }
    Ok(None)
}

/// A file shown to users: root-relative when inside the root, else its file name.
fn display_file(workspace: &Workspace, path: &Path) -> String {
    let abs = outside::canonical_or_given(path);
    match abs.strip_prefix(workspace.root()) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/"),
        _ => path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
    }
}

/// A configuration file larger than [`MAX_CONFIG_BYTES`] is refused.
fn check_size(bytes: &[u8], shown: &str, lang: Language) -> Result<()> {
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(Error::new(ErrorCode::UnsupportedFormat, msg!(lang, ConfigTooLarge, path = shown)));
    }
    Ok(())
}

/// Parses YAML; a syntax error is E3, in `lang` (the file's own `language` cannot be read:
/// [`fallback_language`]).
fn parse_yaml(bytes: &[u8], shown: &str, lang: Language) -> Result<Value> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    yaml_serde::from_slice::<Value>(bytes).map_err(|e| {
        let line = e.location().map_or(1, |l| l.line());
        Error::invalid_argument(msg!(lang, ConfigNotYaml, path = shown, line, detail = yaml_detail(&e)))
    })
}

/// The parser's reason without its position suffix.
pub(crate) fn yaml_detail(e: &yaml_serde::Error) -> String {
    let text = e.to_string();
    match text.find(" at line ") {
        Some(i) => text[..i].to_owned(),
        None => text,
    }
}

/// Collects problems while reading the keys.
struct Reader<'a> {
    env: &'a SettingsEnv<'a>,
    source: &'a Source,
    language: Language,
    problems: Vec<SettingsProblem>,
}

/// The keys read so far, in file order.
#[derive(Default)]
struct Keys {
    index: Option<String>,
    /// Whether `index` is present and not null (else `missing_index`).
    index_present: bool,
    scan: Option<Vec<String>>,
    check_ignore: Vec<String>,
    html: HtmlSettings,
    build: Option<BuildSettings>,
}

impl Reader<'_> {
    fn key(&self, key: &str) -> String {
        format!("{}{key}", self.source.key_prefix)
    }

    /// A `config_error` (E4): `Setting `{key}` {problem}; {fix}.`.
    fn problem(&mut self, key: &str, code: ErrorCode, fatal: bool, problem: String, fix: String) {
        let key = self.key(key);
        let message = msg!(self.language, SettingProblem, key, problem, fix);
        self.problems.push(SettingsProblem::config_error(key, message, code, fatal));
    }

    /// A fatal `INVALID_ARGUMENT` problem.
    fn refuse(&mut self, key: &str, problem: String, fix: Msg) {
        let fix = fix.text(self.language);
        self.problem(key, ErrorCode::InvalidArgument, true, problem, fix);
    }

    /// An `INVALID_ARGUMENT` problem whose texts have no arguments.
    fn invalid(&mut self, key: &str, fatal: bool, problem: Msg, fix: Msg) {
        let lang = self.language;
        self.problem(key, ErrorCode::InvalidArgument, fatal, problem.text(lang), fix.text(lang));
    }

    fn wrong_type(&mut self, key: &str, expected: Msg, value: &Value, example: &str) {
        let lang = self.language;
        let problem = msg!(lang, MustBe, expected = expected.text(lang), found = kind_of(value).text(lang));
        self.problem(key, ErrorCode::InvalidArgument, true, problem, msg!(lang, WriteExample, example));
    }

    /// A string setting, or `None` (absent/null, or wrong type: a problem).
    fn string(&mut self, map: &Mapping, key: &str, full: &str, example: &str) -> Option<String> {
        match map.get(key) {
            None | Some(Value::Null) => None,
            Some(v) => match scalar_string(v) {
                Some(s) => Some(s),
                None => {
                    self.wrong_type(full, Msg::KindString, v, example);
                    None
                }
            },
        }
    }

    fn boolean(&mut self, map: &Mapping, key: &str, full: &str) -> Option<bool> {
        match map.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(v) => {
                self.wrong_type(full, Msg::ExpectBool, v, "true");
                None
            }
        }
    }

    /// A list of strings (a single string counts as a list of one).
    fn strings(&mut self, map: &Mapping, key: &str, full: &str, example: &str) -> Option<Vec<String>> {
        let items = match map.get(key) {
            None | Some(Value::Null) => return None,
            Some(Value::Sequence(items)) => items.iter().collect(),
            Some(v) => vec![v],
        };
        let mut out = Vec::new();
        for item in items {
            match scalar_string(item) {
                Some(s) => out.push(s),
                None => {
                    self.wrong_type(full, Msg::KindStrings, item, example);
                    return None;
                }
            }
        }
        Some(out)
    }

    /// A mapping section, or `None` (absent/null, or wrong type: a problem).
    fn section<'m>(&mut self, map: &'m Mapping, key: &str) -> Option<&'m Mapping> {
        match map.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::Mapping(m)) => Some(m),
            Some(v) => {
                self.wrong_type(key, Msg::KindMapping, v, &format!("{key}: {{…}}"));
                None
            }
        }
    }

    /// Resolves a path setting; outside the root, or refused by the guard: a fatal problem.
    fn path(&mut self, key: &str, text: &str) -> Option<String> {
        let lang = self.language;
        let Some(rel) = resolve_in_root(self.env.workspace, &self.source.base, text) else {
            let problem = msg!(lang, ResolvesOutside, path = text);
            self.problem(key, ErrorCode::InvalidPath, true, problem, Msg::UsePathInside.text(lang));
            return None;
        };
        if rel.is_empty() || self.env.workspace.rel_path(&rel, PathContext::Any).is_err() {
            let problem = msg!(lang, RefusedByGuard, path = rel);
            self.problem(key, ErrorCode::InvalidPath, true, problem, Msg::UsePlainPath.text(lang));
            return None;
        }
        Some(rel)
    }

    /// Resolves and compiles globs; a bad one is a fatal problem.
    fn globs(&mut self, key: &str, patterns: &[String]) -> Option<Vec<String>> {
        let lang = self.language;
        let mut out = Vec::new();
        for p in patterns {
            let resolved =
                resolve_in_root(self.env.workspace, &self.source.base, p).filter(|r| !r.is_empty());
            let Some(resolved) = resolved else {
                let problem = msg!(lang, ResolvesOutside, path = p);
                self.problem(key, ErrorCode::InvalidPath, true, problem, Msg::UsePatternInside.text(lang));
                return None;
            };
            if GlobFilter::new(std::slice::from_ref(&resolved), &[]).is_err() {
                let problem = msg!(lang, NotAGlobSetting, pattern = p);
                self.problem(key, ErrorCode::InvalidArgument, true, problem, Msg::FixThePattern.text(lang));
                return None;
            }
            out.push(resolved);
        }
        Some(out)
    }

    /// Unknown keys of a section (reported only for a `catalog:` section).
    fn unknown(&mut self, map: &Mapping, known: &[&str], prefix: &str) {
        if !self.source.report_unknown {
            return;
        }
        for k in map.keys() {
            let name = scalar_string(k).unwrap_or_else(|| "?".to_owned());
            if !known.contains(&name.as_str()) {
                self.invalid(&format!("{prefix}{name}"), false, Msg::IsUnknown, Msg::RemoveOrRespell);
            }
        }
    }

    /// The section is not a mapping: one fatal problem.
    fn not_a_mapping(&mut self, found: &Value) {
        let key = self.source.key_prefix.trim_end_matches('.');
        let shown = if key.is_empty() { "(top level)" } else { key };
        let lang = self.language;
        let message = msg!(lang, SectionNotMapping, key = shown, found = kind_of(found).text(lang));
        self.problems.push(SettingsProblem::config_error(
            shown.to_owned(),
            message,
            ErrorCode::InvalidArgument,
            true,
        ));
    }

    /// One top-level key, in file order.
    fn read_key(&mut self, map: &Mapping, key: &str, root_name: &str, keys: &mut Keys) {
        match key {
            "index" => {
                keys.index_present = !matches!(map.get("index"), None | Some(Value::Null));
                if let Some(text) = self.string(map, "index", "index", "index: index.yaml") {
                    keys.index = self.path("index", &text);
                }
            }
            "language" => self.check_language(map),
            "scan" => {
                if let Some(list) = self.strings(map, "scan", "scan", "scan: [\"docs/**/*.md\"]") {
                    keys.scan = self.globs("scan", &list);
                }
            }
            "check" => {
                if let Some(check) = self.section(map, "check") {
                    self.unknown(check, &["ignore"], "check.");
                    self.read_check(check, &mut keys.check_ignore);
                }
            }
            "html" => {
                if let Some(h) = self.section(map, "html") {
                    self.unknown(h, &["lang", "toc", "tocDepth", "highlight"], "html.");
                    self.read_html(h, &mut keys.html);
                }
            }
            "build" => {
                if let Some(b) = self.section(map, "build") {
                    self.unknown(b, &["include", "exclude", "out", "title"], "build.");
                    keys.build = read_build(self, b, root_name);
                }
            }
            other => {
                if self.source.report_unknown {
                    self.invalid(other, false, Msg::IsUnknown, Msg::RemoveOrRespell);
                }
            }
        }
    }

    fn check_language(&mut self, map: &Mapping) {
        let Some(v) = map.get("language").filter(|v| !v.is_null()) else { return };
        if !matches!(scalar_string(v).as_deref(), Some("en" | "ja")) {
            self.refuse("language", msg!(self.language, NotALanguage, value = plain(v)), Msg::UseEnOrJa);
        }
    }

    /// `check.ignore`: known kinds are kept, unknown ones are non-fatal problems.
    fn read_check(&mut self, check: &Mapping, ignore: &mut Vec<String>) {
        let Some(kinds) = self.strings(check, "ignore", "check.ignore", "ignore: [unindexed_doc]") else {
            return;
        };
        for kind in kinds {
            if IssueKind::find(&kind).is_some() {
                ignore.push(kind);
            } else {
                let problem = msg!(self.language, NotAnIssueKind, kind);
                let fix = Msg::UseIssueKinds.text(self.language);
                self.problem("check.ignore", ErrorCode::InvalidArgument, false, problem, fix);
            }
        }
    }

    /// `html.*`.
    fn read_html(&mut self, h: &Mapping, html: &mut HtmlSettings) {
        let lang = self.language;
        if let Some(value) = self.string(h, "lang", "html.lang", "lang: ja") {
            if value == "auto" {
                html.lang = HtmlLang::Auto;
            } else if is_language_tag(&value) {
                html.lang = HtmlLang::Tag(value);
            } else {
                self.refuse("html.lang", msg!(lang, NotALanguageTag, value), Msg::UseLanguageTag);
            }
        }
        if let Some(b) = self.boolean(h, "toc", "html.toc") {
            html.toc = b;
        }
        if let Some(v) = h.get("tocDepth").filter(|v| !v.is_null()) {
            match v.as_u64() {
                Some(d @ 2..=6) => html.toc_depth = d as u8,
                _ => {
                    self.refuse("html.tocDepth", msg!(lang, NotTocDepth, value = plain(v)), Msg::UseTocDepth);
                }
            }
        }
        if let Some(b) = self.boolean(h, "highlight", "html.highlight") {
            html.highlight = b;
        }
    }

    /// The settings from the keys read, or `None` when a problem is fatal.
    fn finish(mut self, keys: Keys) -> Inspected {
        let source = self.source;
        if !keys.index_present {
            let message = no_index_message(self.language, &source.file);
            self.problems.push(SettingsProblem {
                kind: IssueKind::MissingIndex,
                key: self.key("index"),
                message,
                code: ErrorCode::NotFound,
                fatal: false,
            });
        }
        let fatal = self.problems.iter().any(|p| p.fatal);
        let scan =
            keys.scan.unwrap_or_else(|| keys.build.as_ref().map(|b| b.include.clone()).unwrap_or_default());
        let settings = (!fatal).then(|| CatalogSettings {
            origin: source.origin.clone(),
            file: source.file.clone(),
            key_prefix: source.key_prefix,
            index: keys.index,
            language: self.language,
            scan,
            check_ignore: keys.check_ignore,
            html: keys.html,
            build: keys.build,
        });
        Inspected { settings, file: source.file.clone(), problems: self.problems }
    }
}

/// `language` first, so every message uses it (an unusable value is reported in English).
fn declared_language(section: &Value) -> Language {
    match section.as_mapping().and_then(|m| m.get("language")).and_then(scalar_string).as_deref() {
        Some("ja") => Language::Ja,
        _ => Language::En,
    }
}

/// Interprets a located configuration.
fn interpret(env: &SettingsEnv<'_>, source: Source) -> Inspected {
    let empty = Mapping::new();
    let mut r =
        Reader { env, source: &source, language: declared_language(&source.section), problems: Vec::new() };
    let map = match &source.section {
        Value::Mapping(m) => m,
        Value::Null => &empty,
        other => {
            r.not_a_mapping(other);
            return Inspected { settings: None, file: source.file.clone(), problems: r.problems };
        }
    };
    let root_name = env
        .workspace
        .root()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "Documentation".to_owned());
    // Keys in the order they are written in the file, so problems come in file order.
    let mut keys = Keys::default();
    for key in map.keys() {
        match key.as_str() {
            Some(key) => r.read_key(map, key, &root_name, &mut keys),
            None => r.unknown(map, &[], ""),
        }
    }
    r.finish(keys)
}

fn read_build(r: &mut Reader<'_>, b: &Mapping, root_name: &str) -> Option<BuildSettings> {
    let lang = r.language;
    let include = match r.strings(b, "include", "build.include", "include: [\"docs/**/*.md\"]") {
        Some(list) if !list.is_empty() => r.globs("build.include", &list)?,
        Some(_) | None => {
            let missing = matches!(b.get("include"), None | Some(Value::Null));
            if missing || matches!(b.get("include"), Some(Value::Sequence(s)) if s.is_empty()) {
                r.invalid("build.include", true, Msg::MissingOrEmpty, Msg::ListDocsToCombine);
            }
            return None;
        }
    };
    let exclude = match r.strings(b, "exclude", "build.exclude", "exclude: [\"docs/drafts/**\"]") {
        Some(list) => r.globs("build.exclude", &list)?,
        None => Vec::new(),
    };
    let out_text = r
        .string(b, "out", "build.out", "out: dist/docs.html")
        .unwrap_or_else(|| DEFAULT_BUILD_OUT.to_owned());
    let lower = out_text.to_lowercase();
    if !(lower.ends_with(".html") || lower.ends_with(".htm")) {
        let problem = msg!(lang, NotHtmlName, path = out_text);
        r.problem("build.out", ErrorCode::UnsupportedFormat, true, problem, Msg::UseHtmlName.text(lang));
        return None;
    }
    let out = r.path("build.out", &out_text)?;
    let title =
        r.string(b, "title", "build.title", "title: Documentation").unwrap_or_else(|| root_name.to_owned());
    Some(BuildSettings { include, exclude, out, title })
}

/// `base` joined with `text`, lexically normalised and made relative to the workspace root;
/// `None` when it leaves the root. An absolute `text` is accepted when it lies inside the root.
/// Returns `""` for the root itself.
pub(crate) fn resolve_in_root(workspace: &Workspace, base: &Path, text: &str) -> Option<String> {
    let text = text.replace('\\', "/");
    let joined = if Path::new(&text).is_absolute() { PathBuf::from(&text) } else { base.join(&text) };
    let mut parts: Vec<std::ffi::OsString> = Vec::new();
    let mut prefix = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::Prefix(_) | Component::RootDir => prefix.push(c.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::Normal(s) => parts.push(s.to_os_string()),
        }
    }
    let mut abs = prefix;
    abs.extend(&parts);
    let rel = abs.strip_prefix(workspace.root()).ok()?;
    let segs: Option<Vec<String>> =
        rel.components().map(|c| c.as_os_str().to_str().map(str::to_owned)).collect();
    Some(segs?.join("/"))
}

/// A scalar as a string: strings as they are, numbers as written by YAML, never booleans.
pub(crate) fn scalar_string(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A short text of a value for messages.
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".to_owned(),
        // The kind in English in both languages, as the value itself is shown.
        _ => kind_of(v).text(Language::En),
    }
}

/// The kind of a YAML value (`a list`, `並び`).
pub(crate) fn kind_of(v: &Value) -> Msg {
    match v {
        Value::Null => Msg::KindNull,
        Value::Bool(_) => Msg::KindBool,
        Value::Number(_) => Msg::KindNumber,
        Value::String(_) => Msg::KindString,
        Value::Sequence(_) => Msg::KindList,
        Value::Mapping(_) => Msg::KindMapping,
        Value::Tagged(_) => Msg::KindTagged,
    }
}

/// A BCP 47 tag, loosely: letters, then `-`-separated alphanumeric subtags of 1–8 characters.
fn is_language_tag(s: &str) -> bool {
    let mut parts = s.split('-');
    let first = parts.next().unwrap_or("");
    (2..=8).contains(&first.len())
        && first.chars().all(|c| c.is_ascii_alphabetic())
        && parts.all(|p| (1..=8).contains(&p.len()) && p.chars().all(|c| c.is_ascii_alphanumeric()))
}
