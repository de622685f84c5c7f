//! The link graph: links extracted at index time, resolved to files and heading fragments, and
//! queried in both directions (`kb_links`, `links`).
//!
//! Extraction ([`extract`]) keeps, per document, its heading anchors and every link as written
//! (the v2 anchor of the element holding it, kind, raw destination, line). Resolution
//! ([`resolve`]) is pure string work done when a graph is loaded, so a rule change needs no
//! reindex. Whether a local target exists is decided at query time: indexed documents from the
//! graph, anything else through a caller-supplied check (the engine asks `workspace`).
//! `docs/design/links.md` explains the rules and where the graph is stored.
//!
//! Invariants:
//!
//! - Pure: no I/O except [`LinkGraph::read`] / [`LinkGraph::write`] on the index directory's
//!   snapshot file `links.bin` (written atomically, never a user file), the only stored copy of
//!   the graph.
//! - External URLs are kept as they are and never fetched.
//! - A traversal visits each file at most once and reports each link at most once.

mod graph;
mod resolve;
mod snapshot;

use serde::{Deserialize, Serialize};

pub use graph::{Direction, Edge, LinkGraph, LinkIndex, Reason, html_stem};
pub use resolve::{Target, resolve, slug};

use crate::markdown::{Document, ElementKind, scan_links};
use crate::text::LineIndex;

/// Version of what [`extract`] stores; part of the index manifest (`links_version`), so a change
/// asks for a rebuild.
pub const LINKS_VERSION: &str = "1";

/// The links and anchors of one indexed document.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocLinks {
    /// Fragments that lead into this document: heading slugs (GitHub's rule, duplicates
    /// numbered), explicit `{#id}` heading ids and HTML `id`/`name` attributes.
    pub anchors: Vec<String>,
    /// Links in source order.
    pub links: Vec<LinkRecord>,
}

/// One link as written in a document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkRecord {
    /// v2 anchor of the element that holds the link (a reference-style link: where it is used;
    /// an unused definition: its section heading, or `document`).
    pub anchor: String,
    /// `inline`, `reference`, `autolink`, `image` or `definition`.
    pub kind: String,
    /// The destination as written (CommonMark escapes resolved, not percent-decoded).
    pub raw: String,
    /// 1-based line where the destination is written (for reference-style links: the line of
    /// the definition, which is what a repair edits).
    pub line: usize,
}

/// Extracts the anchors and links of a parsed document.
pub fn extract(text: &str, doc: &Document) -> DocLinks {
    let scan = scan_links(text);
    let anchors = anchors(&scan);
    let lines = LineIndex::new(text);
    let links = scan
        .links
        .iter()
        .filter(|l| !l.dest.trim().is_empty())
        .map(|l| LinkRecord {
            anchor: holder(doc, l.offset),
            kind: l.kind.as_str().to_owned(),
            raw: l.dest.clone(),
            line: lines.line(l.dest_offset),
        })
        .collect();
    DocLinks { anchors, links }
}

/// Fragments that lead into a scanned document: heading slugs ([`heading_slugs`]), explicit
/// `{#id}` heading ids and HTML `id`/`name` attributes (also used by the HTML export, so both
/// agree on which links are broken).
pub fn anchors(scan: &crate::markdown::LinkScan) -> Vec<String> {
    let mut anchors = heading_slugs(scan.headings.iter().map(|h| h.text.as_str()));
    anchors.extend(scan.headings.iter().filter_map(|h| h.id.clone()));
    anchors.extend(scan.html_ids.iter().cloned());
    anchors
}

/// GitHub's heading ids in document order: [`slug`], then `-1`, `-2`, … for repeats (an empty
/// slug counts as `section`).
pub fn heading_slugs<'a>(titles: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut used = std::collections::HashSet::new();
    for title in titles {
        let base = match slug(title) {
            s if s.is_empty() => "section".to_owned(),
            s => s,
        };
        let mut candidate = base.clone();
        let mut n = 0;
        while !used.insert(candidate.clone()) {
            n += 1;
            candidate = format!("{base}-{n}");
        }
        out.push(candidate);
    }
    out
}

/// The v2 anchor of the innermost element holding `offset`; else its section's heading; else
/// `document`.
fn holder(doc: &Document, offset: usize) -> String {
    let inner = doc
        .elements
        .iter()
        .filter(|e| e.range.start <= offset && offset < e.range.end.max(e.range.start + 1))
        .min_by_key(|e| e.range.len());
    if let Some(e) = inner {
        return e.anchor();
    }
    doc.elements
        .iter()
        .filter(|e| {
            e.kind == ElementKind::Heading && e.subtree_range.start <= offset && offset < e.subtree_range.end
        })
        .max_by_key(|e| e.range.start)
        .map_or_else(|| "document".to_owned(), |e| e.anchor())
}

#[cfg(test)]
mod tests;
