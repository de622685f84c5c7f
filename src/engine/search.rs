//! `kb_search`, wired: the ranking pipeline lives in [`crate::search`]; this file does its I/O
//! through the indexer's read side (lexical candidates and hits, vector candidates) and the
//! workspace (the current file hashes).
//!
//! The lexical side is always there; the vector side is optional and may lag. Hybrid degrades
//! to lexical with a warning whenever vectors are unavailable; explicit `semantic` fails with
//! `INDEX_NOT_READY` and a message that says why and what to do.

use std::time::Duration;

use super::Engine;
use crate::error::{Error, Result};
use crate::lexical::ScopeFilter;
use crate::search::{self, Candidates, LexicalStep, Pending, VectorStep};
use crate::wire::{SearchRequest, SearchResponse};
use crate::workspace::RelPath;

/// The longest a search waits for the start-up repair (`IndexService::request_repair`); then
/// it answers from the index as it is.
const REPAIR_WAIT: Duration = Duration::from_secs(60);

impl Engine {
    /// Why a search finds no text to search: nothing indexed yet ("Index is empty", the
    /// contract's sentence), or files indexed that hold no text at all.
    fn no_chunks_message(&self) -> String {
        match crate::indexer::Snapshot::read(&self.core.layout).map_or(0, |s| s.documents) {
            0 => "Index is empty. Run kb_reindex first (CLI: `local-vector-search-mcp reindex`).".to_owned(),
            n => format!(
                "The index holds {n} file(s) but no searchable text: every one is empty. Add text to a file, or check knowledgeBase.include."
            ),
        }
    }

    /// `kb_search`.
    pub fn search(&self, req: &SearchRequest) -> Result<SearchResponse> {
        self.service.wait_repair(REPAIR_WAIT);
        let snapshot = self.wait_until_searchable()?;
        let config = &self.config.search;
        let plan = search::plan(req, config)?;
        let meta_filter = super::filters::meta_filter(req.filters.as_deref())?;
        let Some(snapshot) = snapshot else {
            return Err(Error::index_not_ready(self.no_chunks_message()));
        };
        let query = plan.query.as_str();
        // The lexical filter every candidate list is read through: the scope globs and the
        // front-matter filters (the set of files that pass them).
        let meta_paths = self.metadata_scope(meta_filter.as_ref())?;
        let scope = plan.scope.as_ref();
        let filter = (scope.is_some() || meta_paths.is_some()).then_some(|p: &str| {
            scope.is_none_or(|g| g.matches(p)) && meta_paths.as_ref().is_none_or(|m| m.contains(p))
        });
        let filter = filter.as_ref().map(|f| f as &ScopeFilter<'_>);
        let mut warnings: Vec<String> = Vec::new();
        // A reindex still running over a new project: the answer covers only what it committed.
        if let Some(p) = self.service.indexing().current
            && let Some(total) = p.total_files.filter(|t| snapshot.documents < *t)
        {
            warnings.push(super::partial_index_warning(snapshot.documents, total));
        }

        let vector = match search::vector_step(&plan, self.config.embedding.provider, config)? {
            VectorStep::Skip => None,
            VectorStep::Warn(w) => {
                warnings.push(w);
                None
            }
            VectorStep::Ask { pool } => {
                let answer = self.core.readers.vector_candidates(query, pool, &snapshot, filter);
                let pending = snapshot
                    .vectors
                    .as_ref()
                    .map(|v| Pending { chunks: v.pending, last_error: v.last_error.clone() })
                    .unwrap_or_default();
                search::vector_answer(plan.mode, answer, config, &pending, &mut warnings)?
            }
        };
        let effective = search::effective_mode(plan.mode, vector.is_some());
        let mut candidates = Candidates::new(vector);
        let weights = search::rank_weights(config);
        // One snapshot for ranking and every hit read after it: a commit in between (an edit of
        // a ranked file gives its chunks new ids) must not drop a hit.
        let index = self.core.readers.lexical()?;
        let view = index.view().with_snippet_tokens(config.snippet_tokens, search::LONG_SNIPPETS);
        match search::lexical_step(effective, &plan, config) {
            LexicalStep::Skip => {}
            LexicalStep::Rank { pool } => {
                let (ids, all_terms) = view.rank_with(query, pool, filter, &weights)?;
                if plan.max_per_file.is_some() {
                    candidates.set_paths(&ids, view.paths_of(&ids)?);
                }
                candidates.set_lexical_ranks(ids, all_terms);
            }
            LexicalStep::Tiered { top_k } => {
                let (hits, all_terms) = view.search_tiered_with(query, top_k, filter, &weights)?;
                candidates.set_lexical_hits(hits, all_terms);
            }
        }
        let ranked = match plan.max_per_file {
            None => {
                let ranked = candidates.rank(effective, search::fusion(config), plan.top_k);
                let missing = candidates.missing(&ranked);
                if !missing.is_empty() {
                    let found = view.fetch(&missing, query)?;
                    candidates.add_hits(found.into_iter().flatten());
                }
                ranked
            }
            Some(max_per_file) => {
                // Every candidate in rank order; hits are read in batches until the limit
                // has picked `top_k` (each round reads at least one new id, so it ends).
                let all = candidates.rank(effective, search::fusion(config), usize::MAX);
                loop {
                    match candidates.select(&all, max_per_file, plan.top_k) {
                        Ok(ranked) => break ranked,
                        Err(need) => {
                            let found = view.fetch(&need, query)?;
                            candidates.add_fetched(&need, found);
                        }
                    }
                }
            }
        };
        // The hash each hit's file has now, for `stale`: remembered under the file's stamp, so
        // usually no read, and the folders the hits share are checked once
        // (`GuardWalk::current_hash`).
        let walk = self.core.workspace.guard_walk();
        let results = candidates.assemble(&ranked, effective, plan.explain, plan.detail, config.rrf_k, |p| {
            walk.current_hash(&RelPath::new(p).ok()?)
        });
        Ok(search::response(results, &warnings, effective, plan.detail))
    }
}
