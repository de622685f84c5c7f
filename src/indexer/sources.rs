//! A search's way into the index. [`IndexService::searchable`] hands out a [`Searchable`] once
//! the index can answer (waiting on the service's own condition while a first build or a
//! rebuild runs); [`Searchable::sources`] answers every read of one search
//! ([`crate::search::Sources`]) from one snapshot of the lexical index, so the front-matter
//! filter, the ranking and the hits read after it see the same commit.
//!
//! Invariants:
//!
//! - A search waits at most [`FIRST_INDEX_WAIT`] for a build, and at most [`REPAIR_WAIT`] for a
//!   start-up repair; then it answers `INDEX_NOT_READY` with the progress.
//! - A lexical index found damaged is not opened again while its rebuild runs.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{IndexService, ReadSide, ReindexOptions, Snapshot};
use crate::error::{Error, ErrorDetail, Result};
use crate::lexical::{LexicalHit, LexicalIndex, LexicalView, MetaFilter, RankWeights, ScopeFilter};
use crate::search::{Pending, Sources, VectorCandidate};
use crate::text::thousands;
use crate::wire::ReindexProgress;
use crate::workspace::{GuardWalk, RelPath, Workspace};

/// How long a search waits for an index being built (or rebuilt after damage) before it answers
/// `INDEX_NOT_READY` with the progress (`docs/tools.md`, "The index builds itself").
pub const FIRST_INDEX_WAIT: Duration = Duration::from_secs(2);

/// The longest a search waits for the start-up repair ([`IndexService::request_repair`]); then
/// it answers from the index as it is.
pub const REPAIR_WAIT: Duration = Duration::from_secs(60);

/// An index a search can read: the lexical reader and the status it was found with.
pub struct Searchable {
    index: Arc<LexicalIndex>,
    snapshot: Snapshot,
    /// `(indexed, total)` files while a reindex still adds files.
    coverage: Option<(u64, u64)>,
    readers: Arc<ReadSide>,
    workspace: Arc<Workspace>,
}

impl IndexService {
    /// Waits until a search can read the index and returns it. While a first index is built (or
    /// a damaged one rebuilt) this waits up to [`FIRST_INDEX_WAIT`] on the service's condition and
    /// then answers `INDEX_NOT_READY` with the progress; a lexical index found damaged is rebuilt
    /// in the background (`index.autoIndex`), and so is an index that is there but not
    /// searchable with nothing running. An index without chunks is "Index is empty".
    pub fn searchable(&self) -> Result<Searchable> {
        self.wait_repair(REPAIR_WAIT);
        let deadline = Instant::now() + FIRST_INDEX_WAIT;
        // Once the reader found the index damaged, it is not opened again while the rebuild
        // runs (the writer is replacing the folder).
        let mut damaged = false;
        // Asked for once per search: the catch-up's writer repairs an unsearchable index.
        let mut asked = false;
        loop {
            let (epoch, running, gate) = self.search_gate();
            let snapshot = Snapshot::read(&self.layout);
            let documents = snapshot.as_ref().map_or(0, |s| s.documents);
            if gate.is_ok()
                && let Some(snapshot) = snapshot.filter(|s| s.chunks > 0)
                && !(damaged && running.is_some())
            {
                match self.readers.lexical() {
                    Ok(index) => return Ok(self.found(index, snapshot, running.as_ref())),
                    Err(e) if e.is(ErrorDetail::IndexDamaged) && self.auto_index => {
                        damaged = true;
                        if running.is_none() {
                            let cause =
                                std::error::Error::source(&e).map(|s| s.to_string()).unwrap_or_default();
                            tracing::warn!(
                                "the lexical index is damaged ({cause}); rebuilding it from the Markdown in the background"
                            );
                            self.request_reindex(ReindexOptions::default());
                            continue;
                        }
                    }
                    Err(e) => return Err(e),
                }
            }
            if running.is_none() && !asked && self.auto_index && self.layout.store_path().is_file() {
                asked = true;
                self.request_reindex(ReindexOptions::default());
                continue;
            }
            // A build runs (the first one, a repair, or a `kb_reindex` of a new project): wait
            // for its next commit or its end, then say how far it is.
            let Some(progress) = running else {
                gate?;
                return Err(Error::index_not_ready(no_chunks_message(documents)));
            };
            if Instant::now() >= deadline {
                // A forced rebuild keeps the contract's own sentence for its gate.
                gate?;
                return Err(Error::index_not_ready(building_message(&progress)));
            }
            self.wait_searchable_change(epoch, deadline);
        }
    }

    fn found(
        &self,
        index: Arc<LexicalIndex>,
        snapshot: Snapshot,
        running: Option<&ReindexProgress>,
    ) -> Searchable {
        // A reindex still running over a new project: the answer covers only what it committed.
        let coverage = running
            .and_then(|p| p.total_files)
            .filter(|total| snapshot.documents < *total)
            .map(|total| (snapshot.documents, total));
        Searchable {
            index,
            snapshot,
            coverage,
            readers: Arc::clone(&self.readers),
            workspace: Arc::clone(&self.workspace),
        }
    }
}

/// Why a search finds no text to search: nothing indexed yet ("Index is empty", the contract's
/// sentence), or `documents` files indexed that hold no text at all.
fn no_chunks_message(documents: u64) -> String {
    match documents {
        0 => "Index is empty. Run kb_reindex first (CLI: `local-vector-search-mcp reindex`).".to_owned(),
        n => format!(
            "The index holds {n} file(s) but no searchable text: every one is empty. Add text to a file, or check knowledgeBase.include."
        ),
    }
}

/// "The index is being built: indexing 1,234 of 6,339 files; try again in a few seconds …".
pub(super) fn building_message(p: &ReindexProgress) -> String {
    let done = match p.total_files {
        Some(total) => format!("indexing {} of {} files", thousands(p.processed_files), thousands(total)),
        None => "listing the files".to_owned(),
    };
    format!(
        "The index is being built: {done}; try again in a few seconds (kb_status shows the progress; kb_read and kb_outline work meanwhile)."
    )
}

impl Searchable {
    /// The reads of one search, from one snapshot: snippets of `snippet_tokens` tokens on the
    /// first `long_snippets` hits (`search.snippetTokens`), the short window on the rest.
    pub fn sources(&self, (snippet_tokens, long_snippets): (usize, usize)) -> IndexSources<'_> {
        IndexSources {
            view: self.index.view().with_snippet_tokens(snippet_tokens, long_snippets),
            searchable: self,
            walk: self.workspace.guard_walk(),
        }
    }
}

/// [`Sources`] over one snapshot of the index.
pub struct IndexSources<'a> {
    view: LexicalView<'a>,
    searchable: &'a Searchable,
    /// The hits' current file hashes, remembered under each file's stamp (usually no read), the
    /// folders the hits share checked once.
    walk: GuardWalk<'a>,
}

impl Sources for IndexSources<'_> {
    fn vectors_enabled(&self) -> bool {
        self.searchable.readers.vectors_enabled()
    }

    fn coverage(&self) -> Option<(u64, u64)> {
        self.searchable.coverage
    }

    fn pending_vectors(&self) -> Pending {
        self.searchable
            .snapshot
            .vectors
            .as_ref()
            .map(|v| Pending { chunks: v.pending, last_error: v.last_error.clone() })
            .unwrap_or_default()
    }

    fn files_matching(&mut self, filter: &MetaFilter) -> Result<HashSet<String>> {
        self.view.files_matching(filter)
    }

    fn vector_candidates(
        &mut self,
        query: &str,
        k: usize,
        filter: Option<&ScopeFilter<'_>>,
    ) -> Result<Vec<VectorCandidate>> {
        let view = &self.view;
        let scope = || filter.map(|f| view.chunk_ids_in_scope(f)).transpose();
        self.searchable.readers.vector_candidates(query, k, &self.searchable.snapshot, scope)
    }

    fn vectors_usable(&mut self) -> Result<()> {
        self.searchable.readers.usable_vectors(&self.searchable.snapshot).map(|_| ())
    }

    fn lexical_ranks(
        &mut self,
        query: &str,
        pool: usize,
        filter: Option<&ScopeFilter<'_>>,
        weights: &RankWeights,
    ) -> Result<(Vec<u64>, usize)> {
        self.view.rank_with(query, pool, filter, weights)
    }

    fn paths_of(&mut self, ids: &[u64]) -> Result<Vec<Option<String>>> {
        self.view.paths_of(ids)
    }

    fn lexical_hits(
        &mut self,
        query: &str,
        top_k: usize,
        filter: Option<&ScopeFilter<'_>>,
        weights: &RankWeights,
    ) -> Result<(Vec<LexicalHit>, usize)> {
        self.view.search_tiered_with(query, top_k, filter, weights)
    }

    fn fetch(&mut self, ids: &[u64], query: &str) -> Result<Vec<Option<LexicalHit>>> {
        self.view.fetch(ids, query)
    }

    fn current_hash(&mut self, path: &str) -> Option<String> {
        self.walk.current_hash(&RelPath::new(path).ok()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_building_message_counts_files_with_thousands_separators() {
        let p = ReindexProgress {
            scope: "changed".to_owned(),
            force: false,
            started_at_utc: String::new(),
            processed_files: 1234,
            total_files: Some(6339),
            current_path: None,
            is_destructive_rebuild: false,
            embedding: None,
        };
        let message = building_message(&p);
        assert!(
            message.starts_with("The index is being built: indexing 1,234 of 6,339 files; try again"),
            "{message}"
        );
        let listing = building_message(&ReindexProgress { total_files: None, ..p });
        assert!(listing.contains("listing the files"), "{listing}");
    }
}
