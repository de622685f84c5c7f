//! What a search reads: the I/O between the pure steps of [`super::run`].
//!
//! One implementation exists, next to the readers (`indexer::IndexSources`): it answers every
//! call from one snapshot of the lexical index, so the front-matter filter, the ranking and the
//! hits read after it see the same commit.

use std::collections::HashSet;

use super::{Pending, VectorCandidate};
use crate::error::Result;
use crate::lexical::{LexicalHit, MetaFilter, RankWeights, ScopeFilter};

/// The readers one search goes through, in the order [`super::run`] calls them.
pub trait Sources {
    /// Whether the project has a vector side (an embedding provider is configured).
    fn vectors_enabled(&self) -> bool;

    /// While a reindex is still adding files: the files indexed so far and the files it will
    /// have indexed (`None` when the index is whole).
    fn coverage(&self) -> Option<(u64, u64)>;

    /// The chunks still waiting for their vector, as the index's status counted them.
    fn pending_vectors(&self) -> Pending;

    /// The files whose front matter meets `filter`.
    fn files_matching(&mut self, filter: &MetaFilter) -> Result<HashSet<String>>;

    /// `Ok` when the vector side can answer a query (vectors built, of the current settings);
    /// else the error [`Sources::vector_candidates`] would give. Embeds nothing.
    fn vectors_usable(&mut self) -> Result<()>;

    /// The vector side's `k` nearest chunks to `query` within `filter`, nearest first; `Err`
    /// says why it cannot answer (one sentence, ending with what to do).
    fn vector_candidates(
        &mut self,
        query: &str,
        k: usize,
        filter: Option<&ScopeFilter<'_>>,
    ) -> Result<Vec<VectorCandidate>>;

    /// The lexical ranking of `pool` candidate ids, best first, and how many of them (they come
    /// first) match every query word.
    fn lexical_ranks(
        &mut self,
        query: &str,
        pool: usize,
        filter: Option<&ScopeFilter<'_>>,
        weights: &RankWeights,
    ) -> Result<(Vec<u64>, usize)>;

    /// The files of ranked ids (`paths[i]` of `ids[i]`; `None`: not in the index).
    fn paths_of(&mut self, ids: &[u64]) -> Result<Vec<Option<String>>>;

    /// The `top_k` best lexical hits with snippets, the all-words tier first, and how many of
    /// them match every query word.
    fn lexical_hits(
        &mut self,
        query: &str,
        top_k: usize,
        filter: Option<&ScopeFilter<'_>>,
        weights: &RankWeights,
    ) -> Result<(Vec<LexicalHit>, usize)>;

    /// The hits of ids ranked elsewhere, in the given order (`None`: gone from the index).
    fn fetch(&mut self, ids: &[u64], query: &str) -> Result<Vec<Option<LexicalHit>>>;

    /// The hash the file at `path` has now (`None`: gone or unreadable), for `stale`.
    fn current_hash(&mut self, path: &str) -> Option<String>;
}
