//! The document catalog (`docs/reference/catalog-spec.md` §2–§6.4): the catalog settings, the YAML
//! index of documents, terms and tags, the text-preserving index editor, and the queries and
//! checks the `kb_find_docs`, `kb_list_tags`, `kb_update_index` and `kb_check` tools answer.
//!
//! One public face: the submodules are private and this file re-exports what the engine (and the
//! integration test of the index schema) use; nothing else is reachable from outside.
//!
//! - `config.rs`: where the settings come from (§3.1), path bases (§3.2), keys and defaults
//!   (§3.3, including `html.*` and `build.*`), validation (§3.4).
//! - `index.rs`: the index model, the schema and its violations (§4), the tag vocabulary.
//! - `docs.rs`: reading the index and the documents, with the per-document cache (§2.8, §5.4).
//! - `find.rs`: `kb_find_docs` and `kb_list_tags` (§5, §6.1, §6.2); `model.rs`: what they derive
//!   from a parsed index, kept with it.
//! - `editor.rs` and `update.rs`: `kb_update_index`, the text-preserving edit (§6.3).
//! - `check.rs` and `git.rs`: `kb_check` and its `base` comparison (§6.4).
//! - `load.rs`: the edge: what a call reads from files and `git`, loaded once; `find.rs` and
//!   `check.rs` are pure over it.
//! - `init.rs`: the CLI `init` (§8.4).
//! - `args.rs`: argument checks. Every message is an entry of `crate::messages`, in English and
//!   Japanese.
//!
//! Invariants:
//!
//! - The catalog never reads or writes the search index; every file it opens goes through
//!   `workspace`: documents and the index through the guard, the configuration files (which may
//!   lie outside the root) through `workspace::outside` and `workspace::append_file_atomic`.
//!   The one thing it runs itself is the `git` executable (`git.rs`, `docs/design/catalog.md`).
//! - Every path it returns is root-relative with `/` separators.
//! - Messages follow the configured [`Language`]; English is the default.

mod args;
mod check;
mod config;
mod docs;
mod editor;
mod find;
mod git;
mod index;
mod init;
mod load;
mod model;
mod update;

#[cfg(test)]
mod tests;

use unicode_normalization::UnicodeNormalization;

pub use crate::text::Language;
/// The issue kinds of `kb_check` (`docs/reference/catalog-spec.md` §6.4.3): the wire's type.
pub use crate::wire::IssueKind;

// The settings (shared with the HTML export).
pub use config::{
    BuildSettings, CatalogSettings, HtmlLang, HtmlSettings, SettingsEnv, SettingsOrigin, find_settings,
    load_settings,
};
// Argument checks, then the edge that loads a call's input, then the queries over it.
pub use args::{find_query, format_is_json, update_item, writes_disabled};
pub use docs::{DocCache, IndexRead, load_valid_index, read_index};
pub use find::{Budget, TagsPage, find_docs, tag_rows, tags_answer};
pub use load::{query_input, run_check};
// `kb_update_index` and the CLI `init`.
pub use init::{InitRequest, init};
pub use update::{Update, update_index};
// The index schema: `schema/catalog.schema.json` is generated from it (`tests/it/catalog.rs`).
pub use index::{PathBase, json_schema as index_json_schema, validate as validate_index};

/// `norm(s)` of `docs/reference/catalog-spec.md` §2.6: NFKC, Unicode lowercase, trimmed of
/// White_Space.
pub fn norm(s: &str) -> String {
    if s.is_ascii() {
        // NFKC leaves ASCII as it is, and its Unicode lowercase is the ASCII one.
        return s.trim().to_ascii_lowercase();
    }
    s.nfkc().collect::<String>().to_lowercase().trim().to_owned()
}
