//! The document catalog tools (`catalog.md` §6.1–§6.4): `kb_find_docs`, `kb_list_tags`,
//! `kb_update_index`, `kb_check`, and the settings loader the HTML export shares.
//!
//! Invariants:
//!
//! - Nothing here touches the search index or waits for the indexing service: catalog calls
//!   work during a reindex and never return `INDEX_NOT_READY`.

use super::Engine;
use crate::catalog::{self, CatalogSettings, SettingsEnv};
use crate::error::Result;

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
}
