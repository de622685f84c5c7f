//! `kb_links`: the link graph the indexer writes with every commit (`links.bin`), queried
//! without opening the store, so any process can answer while another one writes.

use std::collections::HashMap;
use std::sync::Arc;

use super::Engine;
use crate::error::{Error, ErrorCode, Result};
use crate::links::{Direction, Edge, LinkIndex};
use crate::wire::{LinkDirection, LinkEdge, LinksRequest, LinksResponse};
use crate::workspace::PathContext;

/// Edges per page unless `limit` says otherwise.
const DEFAULT_LIMIT: usize = 200;
/// Most edges per page.
const MAX_LIMIT: i64 = 1000;

impl Engine {
    /// `kb_links`.
    pub fn links(&self, req: &LinksRequest) -> Result<LinksResponse> {
        let depth = match req.depth {
            None => 1,
            Some(d @ 1..=5) => d as u8,
            Some(d) => return Err(Error::invalid_argument(format!("depth must be from 1 to 5, not {d}."))),
        };
        let limit = match req.limit {
            None => DEFAULT_LIMIT,
            Some(l @ 1..=MAX_LIMIT) => l as usize,
            Some(l) => {
                return Err(Error::invalid_argument(format!(
                    "limit must be from 1 to {MAX_LIMIT}, not {l}; page with cursor instead."
                )));
            }
        };
        let offset = match req.cursor.as_deref() {
            None | Some("") => 0,
            Some(c) => c.parse::<usize>().map_err(|_| {
                Error::invalid_argument(
                    "The cursor was not returned by kb_links; omit it to start from the first page.",
                )
            })?,
        };
        let budget = super::paging::budget(req.max_bytes, self.config.tools.max_answer_bytes)?;
        self.service.check_searchable()?;
        let index = self.link_index()?;
        let workspace = &self.core.workspace;
        let mut known: HashMap<String, bool> = HashMap::new();
        let mut exists = |p: &str| -> bool {
            *known.entry(p.to_owned()).or_insert_with(|| {
                match workspace.rel_path(p, PathContext::Any).and_then(|rel| workspace.stat(&rel)) {
                    Ok(_) => true,
                    // A folder exists too; only a missing or refused path is missing.
                    Err(e) => !matches!(e.code, ErrorCode::NotFound | ErrorCode::InvalidPath),
                }
            })
        };
        let (path, edges) = match req.path.as_deref().filter(|p| !p.trim().is_empty()) {
            Some(p) => {
                let path = workspace.rel_path(p, PathContext::Any)?;
                let path = path.as_str().to_owned();
                if !index.is_document(&path) && !index.has_incoming(&path) {
                    return Err(Error::not_found(format!(
                        "'{path}' is not an indexed Markdown file and no indexed file links to it; check the path with kb_list_files, or run kb_reindex if the file is new."
                    )));
                }
                let direction = match req.direction.unwrap_or_default() {
                    LinkDirection::Outgoing => Direction::Outgoing,
                    LinkDirection::Incoming => Direction::Incoming,
                    LinkDirection::Both => Direction::Both,
                };
                let edges = index.traverse(&path, direction, depth, &mut exists);
                (Some(path), edges)
            }
            None => (None, index.all(&mut exists)),
        };
        let include_external = req.include_external.unwrap_or(false);
        let broken_only = req.broken_only.unwrap_or(false);
        let matching: Vec<Edge> = edges
            .into_iter()
            .filter(|e| include_external || !e.external)
            .filter(|e| !broken_only || e.reason.is_some())
            .collect();
        let total = matching.len();
        let broken = matching.iter().filter(|e| e.reason.is_some()).count();
        let mut page: Vec<LinkEdge> = matching.into_iter().skip(offset).take(limit).map(to_wire).collect();
        // The answer budget cuts a page of long edges short (`docs/tools.md`, "Bounded answers").
        page.truncate(super::paging::fitting(&page, budget));
        let end = offset.saturating_add(page.len()).min(total);
        let notice = (end < total).then(|| {
            format!(
                "This page holds edges {} to {end} of {total}; pass nextCursor as cursor for the next page.",
                offset + 1
            )
        });
        Ok(LinksResponse {
            path,
            edges: page,
            total,
            broken,
            next_cursor: (end < total).then(|| end.to_string()),
            truncated: (end < total).then_some(true),
            generation: index.generation(),
            notice,
        })
    }

    /// The committed link graph, reloaded when the writer replaced `links.bin`.
    fn link_index(&self) -> Result<Arc<LinkIndex>> {
        self.core.readers.links()
    }
}

fn to_wire(e: Edge) -> LinkEdge {
    LinkEdge {
        from: e.from,
        from_anchor: e.from_anchor,
        to: e.to,
        to_fragment: e.to_fragment,
        kind: e.kind,
        broken: e.reason.is_some(),
        reason: e.reason.map(|r| r.as_str().to_owned()),
        raw: e.raw,
        line: e.line,
        depth: e.depth,
        external: e.external,
    }
}
