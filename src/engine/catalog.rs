//! The document catalog tools (`docs/reference/catalog-spec.md` §6.1–§6.4): `kb_find_docs`,
//! `kb_list_tags`, `kb_update_index`, `kb_check`, and the settings loader the HTML export shares.
//!
//! Invariants:
//!
//! - Nothing here touches the search index or waits for the indexing service: catalog calls
//!   work during a reindex and never return `INDEX_NOT_READY`.
//! - Argument problems are reported in the catalog's `language` once the settings are read;
//!   the write gate of `kb_update_index` comes before anything is read (§2.4).

use super::{Engine, paging};
use crate::catalog::{
    self, Budget, CatalogSettings, InitRequest, Language, SettingsEnv, TagsPage, Update, find_docs,
    load_valid_index, query_input, run_check, tag_rows, tags_answer, update_index,
};
use crate::config::MIN_ANSWER_BYTES;
use crate::error::{Error, ErrorCode, Result};
use crate::messages::{Msg, msg};
use crate::wire::{
    CatalogText, CheckIssue, CheckRequest, CheckResponse, FindDocsRequest, ListTagsRequest,
    UpdateIndexRequest, UpdateIndexResponse,
};

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

    /// The catalog settings for a call (`docs/reference/catalog-spec.md` §3.1); `config` is the
    /// tool's `config` argument (root-relative). No configuration: `NOT_FOUND` (E1).
    pub(super) fn catalog_settings(&self, config: Option<&str>) -> Result<CatalogSettings> {
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
        let mut query = catalog::find_query(req, lang)?;
        query.budget =
            Some(Budget { bytes: self.catalog_budget(req.max_bytes, lang)?, fit: paging::fitting_room });
        let (file, infos) = query_input(&self.core.workspace, &self.catalog_docs, &settings)?;
        let answer = find_docs(&file.validated.index, file.model(), &infos, &query, lang)?;
        Ok(CatalogText { text: answer.text, structured: answer.structured })
    }

    /// `kb_list_tags`.
    pub fn list_tags(&self, req: &ListTagsRequest) -> Result<CatalogText> {
        let settings = self.catalog_settings(req.config.as_deref())?;
        let lang = settings.language;
        let json = catalog::format_is_json(req.format.as_deref(), lang)?;
        let budget = self.catalog_budget(req.max_bytes, lang)?;
        let file = load_valid_index(&self.core.workspace, &settings, &self.catalog_docs)?;
        let rows = tag_rows(&file.validated.index, file.model(), req.query.as_deref());
        let fp = paging::fingerprint(&[req.query.as_deref().unwrap_or(""), if json { "json" } else { "md" }]);
        let page = paging::page(rows, req.cursor.as_deref(), budget, "kb_list_tags", &fp)
            .map_err(|_| Error::invalid_argument(Msg::TagsCursorBad.text(lang)))?;
        let page = TagsPage {
            first: page.first + 1,
            total: page.total,
            tags: page.items,
            next_cursor: page.next_cursor,
        };
        let answer = tags_answer(page, json, lang);
        Ok(CatalogText { text: answer.text, structured: answer.structured })
    }

    /// E10: `name` is not an argument of a catalog or HTML tool (`accepted` are), in the
    /// language of the catalog settings the call would read (`config`), else in English.
    pub fn unknown_catalog_argument(&self, name: &str, accepted: &[&str], config: Option<&str>) -> Error {
        let lang = self.find_catalog_settings(config).ok().flatten().map(|s| s.language).unwrap_or_default();
        Error::invalid_argument(msg!(lang, UnknownArgument, name, list = accepted.join(", ")))
    }

    /// E11: argument `name` of a catalog or HTML tool has another JSON type than `expected`
    /// (`string`, `integer`, `number`, `boolean`, `array`, `object`), in the language of the catalog
    /// settings the call would read (`config`), else in English.
    pub fn catalog_argument_type(&self, name: &str, expected: &str, config: Option<&str>) -> Error {
        let lang = self.find_catalog_settings(config).ok().flatten().map(|s| s.language).unwrap_or_default();
        let (kind, example) = match expected {
            "integer" | "number" => (Msg::ExpectInteger, "20"),
            "boolean" => (Msg::ExpectBool, "true"),
            "array" => (Msg::ExpectList, "[\"api\"]"),
            "object" => (Msg::ExpectMapping, "{}"),
            _ => (Msg::ExpectString, "\"docs/a.md\""),
        };
        Error::invalid_argument(msg!(lang, ArgumentType, name, expected = kind.text(lang), example))
    }

    /// The answer budget of a catalog call: its `max_bytes`, else `tools.maxAnswerBytes`; a
    /// budget below the floor is refused in the catalog's language.
    fn catalog_budget(&self, max_bytes: Option<i64>, lang: Language) -> Result<usize> {
        let default = self.config.tools.max_answer_bytes;
        paging::budget(max_bytes, default).map_err(|_| {
            Error::invalid_argument(msg!(lang, MaxBytesTooSmall, min = MIN_ANSWER_BYTES, default))
        })
    }

    /// `kb_update_index`.
    pub fn update_index(&self, req: &UpdateIndexRequest) -> Result<UpdateIndexResponse> {
        self.update_index_with_hook(req, &|| {})
    }

    /// `kb_update_index` with a hook that runs between the read and the write of every attempt
    /// (a seam for simulating a concurrent editor).
    fn update_index_with_hook(
        &self,
        req: &UpdateIndexRequest,
        hook: &dyn Fn(),
    ) -> Result<UpdateIndexResponse> {
        if !self.config.knowledge_base.allow_writes {
            return Err(Error::new(ErrorCode::PermissionDenied, catalog::writes_disabled("kb_update_index")));
        }
        let settings = self.catalog_settings(req.config.as_deref())?;
        let item = catalog::update_item(&req.item, settings.language)?;
        let _serial = self.catalog_updates.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let done = update_index(
            &self.core.workspace,
            &settings,
            &Update { kind: &req.kind, id: &req.id, item },
            hook,
            &|| self.mutation_lock().map(Some),
        )?;
        Ok(UpdateIndexResponse { action: done.action.to_owned(), index: done.index })
    }

    /// `init` (`docs/reference/catalog-spec.md` §8.4): the starter configuration (`server_config`,
    /// or `mdmark.config.yaml` in the project root) and the index; one line per file.
    pub fn init_catalog(
        &self,
        server_config: Option<&std::path::Path>,
        index: Option<&std::path::Path>,
        scan: &[String],
    ) -> Result<Vec<String>> {
        catalog::init(
            &self.core.workspace,
            &InitRequest { project_root: &self.config.project_root, server_config, index, scan },
        )
    }

    /// `kb_check`.
    /// One page of issues under the answer budget (`maxBytes`, else `tools.maxAnswerBytes`).
    pub fn check(&self, req: &CheckRequest) -> Result<CheckResponse> {
        let lang = self.find_catalog_settings(req.config.as_deref()).ok().flatten().map(|s| s.language);
        let lang = lang.unwrap_or_default();
        let budget = self.catalog_budget(req.max_bytes, lang)?;
        let all = self.check_ignoring(req, &[])?;
        let fp =
            paging::fingerprint(&[req.config.as_deref().unwrap_or(""), req.base.as_deref().unwrap_or("")]);
        let page = paging::page(all.issues, req.cursor.as_deref(), budget, "kb_check", &fp)?;
        let cut = page.next_cursor.is_some() || page.first > 0;
        let (first, last) = (page.first + 1, page.first + page.items.len());
        Ok(CheckResponse {
            notice: page
                .next_cursor
                .as_ref()
                .map(|_| msg!(lang, CheckPageCut, first, last, total = page.total)),
            truncated: page.truncated(),
            total: cut.then_some(page.total as u64),
            next_cursor: page.next_cursor,
            issues: page.items,
        })
    }

    /// `check --ignore KIND…`: `kb_check` with more kinds left out.
    pub fn check_ignoring(&self, req: &CheckRequest, ignore: &[String]) -> Result<CheckResponse> {
        let issues = run_check(
            &self.catalog_env(),
            &self.catalog_docs,
            req.config.as_deref(),
            req.base.as_deref(),
            ignore,
        )?;
        Ok(CheckResponse {
            issues: issues
                .into_iter()
                .map(|i| CheckIssue { file: i.file, at: i.at, kind: i.kind, message: i.message })
                .collect(),
            ..CheckResponse::default()
        })
    }
}
