//! `kb_read_guide`: the usage guides compiled into the binary (`guides/*.md`,
//! `docs/reference/catalog-spec.md` §6.7), and the guide list that ends the server instructions.
//!
//! Invariants:
//!
//! - Guides never depend on the project being served: they are `include_str!`ed, never read
//!   from the workspace.
//! - A call returns every requested guide or none: unknown names are checked first, then the
//!   size limit.

use unicode_normalization::UnicodeNormalization;

use super::Engine;
use crate::error::{Error, Result};
use crate::messages::{Msg, msg};
use crate::text::{Language, thousands};
use crate::wire::{ReadGuideRequest, TextBlocks};

/// One guide page.
#[derive(Clone, Copy, Debug)]
pub struct Guide {
    /// The name `kb_read_guide` takes.
    pub name: &'static str,
    /// The one-line description listed in the server instructions (`docs/reference/catalog-spec.md`
    /// §6.7.4).
    pub description: &'static str,
    /// The Markdown body (no H1: the tool adds `# {name}`).
    pub body: &'static str,
}

macro_rules! guide {
    ($name:literal, $description:literal) => {
        Guide {
            name: $name,
            description: $description,
            body: include_str!(concat!("../../guides/", $name, ".md")),
        }
    };
}

/// Every guide, in the order of `docs/reference/catalog-spec.md` §6.7.4.
pub const GUIDES: &[Guide] = &[
    guide!(
        "pointers",
        "How semantic pointers and hash anchors work, where to get them, and what to do when one is stale."
    ),
    guide!(
        "patching",
        "Editing Markdown with kb_patch: element and section operations, list items, quotes, inserts, and recovering from CONFLICT."
    ),
    guide!(
        "tables",
        "Reading GFM tables and changing cells, rows, columns and alignment with kb_edit_table."
    ),
    guide!(
        "search",
        "Choosing lexical, semantic or hybrid search, scoping by path and glob, and keeping the index fresh with kb_reindex and kb_status."
    ),
    guide!(
        "links",
        "Following and repairing links with kb_links, and fixing references after moving files or images."
    ),
    guide!(
        "catalog",
        "Finding documents by text, tag and relation with kb_find_docs and kb_list_tags: views, paging, counts and relations."
    ),
    guide!(
        "catalog-index",
        "The catalog index file — docs, terms, the tag vocabulary and relation types — and editing it safely with kb_update_index."
    ),
    guide!(
        "check",
        "What each kb_check issue kind means, how to fix it, and how `base` finds missed change_together edits."
    ),
    guide!(
        "images",
        "Saving, listing, loading, moving and deleting image assets, and updating Markdown that refers to them."
    ),
    guide!(
        "export",
        "Producing HTML with kb_export_html and kb_build_site and PDF with kb_create_pdf_book: outputs, warnings and limits."
    ),
    guide!("errors", "The error codes every tool returns and the usual fix for each."),
];

/// Most characters (code points of the bodies) one call returns.
pub const GUIDE_LIMIT: usize = 50_000;

/// Most characters of one guide page.
pub const GUIDE_PAGE_LIMIT: usize = 12_000;

impl Engine {
    /// `kb_read_guide`.
    /// Its messages (E35–E37) are in the catalog's `language` when a catalog is configured.
    pub fn read_guide(&self, req: &ReadGuideRequest) -> Result<TextBlocks> {
        let lang = self.find_catalog_settings(None).ok().flatten().map(|s| s.language).unwrap_or_default();
        read_guides(GUIDES, &req.names, lang)
    }
}

/// The guide list that ends the server instructions (`docs/reference/catalog-spec.md` §6.7.5).
pub fn guide_list() -> String {
    let mut out =
        String::from("Guides (read with kb_read_guide, e.g. {\"names\": [\"pointers\", \"patching\"]}):\n");
    for g in GUIDES {
        out.push_str(&format!("- {}: {}\n", g.name, g.description));
    }
    out
}

/// Reads `names` from `registry`: one block `# {name}\n\n{body}` per distinct guide, in order.
/// Refusals are in `lang` (the guides themselves are in English).
pub fn read_guides(registry: &[Guide], names: &[String], lang: Language) -> Result<TextBlocks> {
    if names.is_empty() || names.iter().any(|n| n.trim().is_empty()) {
        return Err(Error::invalid_argument(Msg::GuideNamesEmpty.text(lang)));
    }
    let mut found: Vec<&Guide> = Vec::new();
    let mut unknown: Vec<String> = Vec::new();
    for name in names {
        let key = norm(name);
        match registry.iter().find(|g| norm(g.name) == key) {
            Some(g) if !found.iter().any(|f| f.name == g.name) => found.push(g),
            Some(_) => {}
            None => {
                let close = close_names(name, registry.iter().map(|g| g.name));
                let entry = if close.is_empty() {
                    msg!(lang, GuideNoClose, name)
                } else {
                    let close = close.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", ");
                    msg!(lang, GuideClose, name, close)
                };
                if !unknown.contains(&entry) {
                    unknown.push(entry);
                }
            }
        }
    }
    if !unknown.is_empty() {
        return Err(Error::not_found(match unknown.as_slice() {
            [entry] => msg!(lang, GuideUnknownOne, entry),
            _ => msg!(lang, GuideUnknownMany, entries = unknown.join(", ")),
        }));
    }
    let sizes: Vec<(&str, usize)> = found.iter().map(|g| (g.name, g.body.chars().count())).collect();
    let total: usize = sizes.iter().map(|(_, n)| n).sum();
    if total > GUIDE_LIMIT {
        let mut message = msg!(lang, GuidesTooLong, n = thousands(total as u64));
        for (name, n) in sizes {
            message.push_str(&format!("\n{name}: {}", thousands(n as u64)));
        }
        return Err(Error::invalid_argument(message));
    }
    Ok(TextBlocks { blocks: found.iter().map(|g| format!("# {}\n\n{}", g.name, g.body)).collect() })
}

/// `docs/reference/catalog-spec.md` §2.6: NFKC, lowercase, trimmed.
fn norm(s: &str) -> String {
    s.nfkc().collect::<String>().to_lowercase().trim().to_owned()
}

/// Up to three candidates close to `query` (`docs/reference/catalog-spec.md` §2.7): one contains
/// the other, or the Levenshtein distance is at most `max(1, len/3)`; nearest first, then in list
/// order.
pub fn close_names<'a>(query: &str, candidates: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let q = norm(query);
    let limit = (q.chars().count() / 3).max(1);
    let mut scored: Vec<(usize, usize, &str)> = candidates
        .enumerate()
        .filter_map(|(i, c)| {
            let n = norm(c);
            let d = strsim::levenshtein(&q, &n);
            (n.contains(&q) || q.contains(&n) || d <= limit).then_some((d, i, c))
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.2 == b.2);
    scored.into_iter().take(3).map(|(_, _, c)| c).collect()
}
