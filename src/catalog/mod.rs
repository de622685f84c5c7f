//! The document catalog (`docs/reference/catalog-spec.md` §2–§6.4): the catalog settings, the YAML
//! index of documents, terms and tags, the text-preserving index editor, and the queries and
//! checks the `kb_find_docs`, `kb_list_tags`, `kb_update_index` and `kb_check` tools answer.
//!
//! - [`config`]: where the settings come from (§3.1), path bases (§3.2), keys and defaults
//!   (§3.3, including `html.*` and `build.*`), validation (§3.4).
//! - [`index`]: the index model, the schema and its violations (§4), the tag vocabulary.
//! - [`docs`]: reading the index and the documents, with the per-document cache (§2.8, §5.4).
//! - [`find`]: `kb_find_docs` and `kb_list_tags` (§5, §6.1, §6.2); [`model`]: what they derive
//!   from a parsed index, kept with it.
//! - [`editor`] and [`update`]: `kb_update_index`, the text-preserving edit (§6.3).
//! - [`check`] and [`git`]: `kb_check` and its `base` comparison (§6.4).
//! - [`load`]: the edge: what a call reads from files and `git`, loaded once; [`find`] and
//!   [`check`] are pure over it.
//! - [`args`]: argument checks; [`messages`]: every message in English and Japanese.
//!
//! Invariants:
//!
//! - The catalog never reads or writes the search index; every file it opens goes through
//!   `workspace` (a standalone configuration found above the root is the one exception: it is
//!   read as a regular file, never followed through a link).
//! - Every path it returns is root-relative with `/` separators.
//! - Messages follow the configured [`Language`]; English is the default.

pub mod args;
pub mod check;
pub mod config;
pub mod docs;
pub mod editor;
pub mod find;
pub mod git;
pub mod index;
pub mod init;
pub mod load;
pub mod model;
/// The message catalogue, shared with the HTML export (`src/messages.rs`).
pub use crate::messages;
pub mod update;

#[cfg(test)]
mod tests;

use unicode_normalization::UnicodeNormalization;

pub use crate::text::Language;
/// The issue kinds of `kb_check` (`docs/reference/catalog-spec.md` §6.4.3): the wire's type.
pub use crate::wire::IssueKind;

pub use config::{
    BuildSettings, CatalogSettings, HtmlLang, HtmlSettings, SettingsEnv, SettingsOrigin, SettingsProblem,
    find_settings, inspect_settings, load_settings,
};

/// `norm(s)` of `docs/reference/catalog-spec.md` §2.6: NFKC, Unicode lowercase, trimmed of
/// White_Space.
pub fn norm(s: &str) -> String {
    if s.is_ascii() {
        // NFKC leaves ASCII as it is, and its Unicode lowercase is the ASCII one.
        return s.trim().to_ascii_lowercase();
    }
    s.nfkc().collect::<String>().to_lowercase().trim().to_owned()
}
