//! The document catalog tools (`catalog.md` §6.1–§6.4): `kb_find_docs`, `kb_list_tags`,
//! `kb_update_index`, `kb_check`, and the settings loader the HTML export shares.
//!
//! Invariants:
//!
//! - Nothing here touches the search index or waits for the indexing service: catalog calls
//!   work during a reindex and never return `INDEX_NOT_READY`.
//! - Argument problems are reported in the catalog's `language` once the settings are read;
//!   the write gate of `kb_update_index` comes before anything is read (§2.4).

use std::sync::LazyLock;

use super::Engine;
use crate::catalog::docs::{DocCache, load_valid_index};
use crate::catalog::find::{BRIEF_FIELDS, FindQuery, OPTIONAL_FIELDS, find_docs, list_tags};
use crate::catalog::load::{query_input, run_check};
use crate::catalog::update::{Update, update_index};
use crate::catalog::{self, CatalogSettings, Language, SettingsEnv, norm};
use crate::error::{Error, ErrorCode, Result};
use crate::wire::{
    CatalogText, CheckIssue, CheckRequest, CheckResponse, FindDocsRequest, ListTagsRequest,
    UpdateIndexRequest, UpdateIndexResponse,
};

/// Per-document derived data, shared by every call (keys are absolute, so several projects in
/// one test process do not mix).
static DOC_CACHE: LazyLock<DocCache> = LazyLock::new(DocCache::default);

impl Engine {
    /// What the catalog settings loader needs from this engine.
    pub(crate) fn catalog_env(&self) -> SettingsEnv<'_> {
        SettingsEnv {
            workspace: &self.core.workspace,
            project_root: &self.config.project_root,
            server_section: self.config.catalog.as_ref(),
            server_file: self.config.config_file.as_deref(),
        }
    }

    /// The catalog settings for a call (`catalog.md` §3.1); `config` is the tool's `config`
    /// argument (root-relative). No configuration: `NOT_FOUND` (E1).
    pub fn catalog_settings(&self, config: Option<&str>) -> Result<CatalogSettings> {
        catalog::load_settings(&self.catalog_env(), config)
    }

    /// Like [`Engine::catalog_settings`], but `None` when the project has no catalog
    /// configuration (`kb_export_html` then uses `CatalogSettings::defaults()`).
    pub fn find_catalog_settings(&self, config: Option<&str>) -> Result<Option<CatalogSettings>> {
        catalog::find_settings(&self.catalog_env(), config)
    }

    /// `kb_find_docs`.
    pub fn find_docs(&self, req: &FindDocsRequest) -> Result<CatalogText> {
        let settings = self.catalog_settings(req.config.as_deref())?;
        let lang = settings.language;
        let query = find_query(req, lang)?;
        let (index, infos) = query_input(&self.core.workspace, &DOC_CACHE, &settings)?;
        let answer = find_docs(&index, &infos, &query, lang)?;
        Ok(CatalogText { text: answer.text, structured: answer.structured })
    }

    /// `kb_list_tags`.
    pub fn list_tags(&self, req: &ListTagsRequest) -> Result<CatalogText> {
        let settings = self.catalog_settings(req.config.as_deref())?;
        let lang = settings.language;
        let json = format_is_json(req.format.as_deref(), lang)?;
        let (_, index) = load_valid_index(&self.core.workspace, &settings)?;
        let answer = list_tags(&index, req.query.as_deref(), json, lang);
        Ok(CatalogText { text: answer.text, structured: answer.structured })
    }

    /// `kb_update_index`.
    pub fn update_index(&self, req: &UpdateIndexRequest) -> Result<UpdateIndexResponse> {
        self.update_index_with_hook(req, &|| {})
    }

    /// `kb_update_index` with a hook that runs between the read and the write of every attempt
    /// (tests simulate a concurrent editor with it).
    pub fn update_index_with_hook(
        &self,
        req: &UpdateIndexRequest,
        hook: &dyn Fn(),
    ) -> Result<UpdateIndexResponse> {
        if !self.config.knowledge_base.allow_writes {
            return Err(Error::new(
                ErrorCode::PermissionDenied,
                "Workspace writes are disabled; set knowledgeBase.allowWrites: true in the server configuration to let kb_update_index write files.",
            ));
        }
        let settings = self.catalog_settings(req.config.as_deref())?;
        let item = match &req.item {
            serde_json::Value::Null => None,
            serde_json::Value::Object(m) => Some(m),
            _ => {
                return Err(Error::invalid_argument(settings.language.pick(
                    "Argument `item` must be an object or null; pass {\"path\": …, \"title\": …} or null to remove the entry.",
                    "引数 `item` はオブジェクトか null にしてください（例: {\"path\": …, \"title\": …}）。",
                )));
            }
        };
        let done = update_index(
            &self.core.workspace,
            &settings,
            &Update { kind: &req.kind, id: &req.id, item },
            hook,
            &|| self.mutation_lock().map(Some),
        )?;
        Ok(UpdateIndexResponse { action: done.action.to_owned(), index: done.index })
    }

    /// `init` (`catalog.md` §8.4): the starter configuration (`server_config`, or
    /// `mdmark.config.yaml` in the project root) and the index; one line per file.
    pub fn init_catalog(
        &self,
        server_config: Option<&std::path::Path>,
        index: Option<&std::path::Path>,
        scan: &[String],
    ) -> Result<Vec<String>> {
        crate::catalog::init::init(
            &self.core.workspace,
            &crate::catalog::init::InitRequest {
                project_root: &self.config.project_root,
                server_config,
                index,
                scan,
            },
        )
    }

    /// `kb_check`.
    pub fn check(&self, req: &CheckRequest) -> Result<CheckResponse> {
        self.check_ignoring(req, &[])
    }

    /// `check --ignore KIND…`: `kb_check` with more kinds left out.
    pub fn check_ignoring(&self, req: &CheckRequest, ignore: &[String]) -> Result<CheckResponse> {
        let issues =
            run_check(&self.catalog_env(), &DOC_CACHE, req.config.as_deref(), req.base.as_deref(), ignore)?;
        Ok(CheckResponse {
            issues: issues
                .into_iter()
                .map(|i| CheckIssue { file: i.file, at: i.at, kind: i.kind.to_owned(), message: i.message })
                .collect(),
        })
    }
}

/// Reads `format`.
fn format_is_json(format: Option<&str>, lang: Language) -> Result<bool> {
    match format {
        None | Some("markdown") => Ok(false),
        Some("json") => Ok(true),
        Some(other) => Err(not_valid(other, "format", &["markdown", "json"], lang)),
    }
}

/// E17.
fn not_valid(value: &str, argument: &str, list: &[&str], lang: Language) -> Error {
    let list = list.join(lang.pick(", ", "・"));
    Error::invalid_argument(lang.pick(
        format!("`{value}` is not a valid {argument}; use one of {list}."),
        format!("`{value}` は {argument} に使えません。{list} のどれかにしてください。"),
    ))
}

/// Checks the arguments of `kb_find_docs` (§6.1.1).
fn find_query(req: &FindDocsRequest, lang: Language) -> Result<FindQuery> {
    let limit = match &req.limit {
        None | Some(serde_json::Value::Null) => 20,
        Some(serde_json::Value::Number(n)) => match n.as_i64() {
            Some(l @ 1..=100) if n.is_i64() || n.is_u64() => l as usize,
            _ => {
                return Err(Error::invalid_argument(lang.pick(
                    "limit must be an integer from 1 to 100; pass a smaller limit and page with cursor.",
                    "limit は 1 以上 100 以下の整数にしてください。続きは cursor で引いてください。",
                )));
            }
        },
        Some(_) => {
            return Err(Error::invalid_argument(lang.pick(
                "Argument `limit` must be an integer; pass 20.",
                "引数 `limit` は整数にしてください（例: 20）。",
            )));
        }
    };
    for (name, list) in [("tags", &req.tags), ("any_tags", &req.any_tags)] {
        if list.iter().flatten().any(|t| t.trim().is_empty()) {
            return Err(Error::invalid_argument(lang.pick(
                format!("{name} must not hold an empty string; remove it."),
                format!("{name} に空の文字列は渡せません。外してください。"),
            )));
        }
    }
    let view = req.view.clone().unwrap_or_else(|| "brief".to_owned());
    if !["brief", "standard", "full"].contains(&view.as_str()) {
        return Err(not_valid(&view, "view", &["brief", "standard", "full"], lang));
    }
    let json = format_is_json(req.format.as_deref(), lang)?;
    let include = req.include.clone().unwrap_or_default();
    let exclude = req.exclude.clone().unwrap_or_default();
    for (argument, list) in [("include", &include), ("exclude", &exclude)] {
        for f in list {
            if argument == "exclude" && BRIEF_FIELDS.contains(&f.as_str()) {
                return Err(Error::invalid_argument(lang.pick(
                    format!("`{f}` is always returned and cannot be excluded; remove it from exclude."),
                    format!("`{f}` は必ず返す項目で、除けません。exclude から外してください。"),
                )));
            }
            if !OPTIONAL_FIELDS.contains(&f.as_str()) {
                return Err(not_valid(f, argument, &OPTIONAL_FIELDS, lang));
            }
        }
    }
    let count_only = req.count_only.unwrap_or(false);
    if count_only && req.cursor.is_some() {
        return Err(Error::invalid_argument(lang.pick(
            "count_only returns totals for all matches; omit cursor.",
            "count_only は当たった全ての文書を数えます。cursor を省いてください。",
        )));
    }
    Ok(FindQuery {
        text: req.text.clone().filter(|t| !norm(t).is_empty()),
        tags: req.tags.clone().unwrap_or_default(),
        any_tags: req.any_tags.clone().unwrap_or_default(),
        related_to: req.related_to.clone(),
        limit,
        cursor: req.cursor.clone(),
        view,
        include,
        exclude,
        count_only,
        json,
    })
}
