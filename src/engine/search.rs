//! `kb_search`: lexical, semantic and hybrid (RRF) ranking over the derived index.
//!
//! The lexical side is always there; the vector side is optional and may lag. Hybrid degrades
//! to lexical with a warning whenever vectors are unavailable; explicit `semantic` fails with
//! `INDEX_NOT_READY` and a message that says why and what to do.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use super::{Engine, MAX_TOP_K};
use crate::config::{EmbeddingProvider, SearchMode};
use crate::error::{Error, Result};
use crate::indexer::{Snapshot, compatibility, incompatible_message};
use crate::lexical::{LexicalHit, LexicalIndex, ScopeFilter};
use crate::vectors::{
    Embedder, Fusion, VectorIndex, check_dimensions, fuse_hybrid, similarity_floor, vector_manifest,
};
use crate::wire::{ReadHint, SearchExplain, SearchHit, SearchRequest, SearchResponse};
use crate::workspace::{GlobFilter, RelPath};

/// The longest a query waits for its embedding (indexing uses `embedding.timeoutSeconds`).
const QUERY_EMBED_TIMEOUT: Duration = Duration::from_secs(30);

/// The longest a search waits for the start-up repair (`IndexService::request_repair`); then
/// it answers from the index as it is.
const REPAIR_WAIT: Duration = Duration::from_secs(60);

/// The search-side copy of `vectors.usearch`, re-mapped when the writer replaces the file.
pub(super) struct VectorReader {
    index: Arc<VectorIndex>,
    stamp: (u64, Option<SystemTime>),
}

/// One ranked candidate list entry from the vector side.
type VectorCandidate = (u64, f32);

impl Engine {
    /// `kb_search`.
    pub fn search(&self, req: &SearchRequest) -> Result<SearchResponse> {
        self.service.wait_repair(REPAIR_WAIT);
        self.wait_until_searchable()?;
        let query = req.query.trim();
        if query.is_empty() {
            return Err(Error::invalid_argument("query must not be empty."));
        }
        let top_k = match req.top_k {
            Some(k) if k <= 0 => return Err(Error::invalid_argument("topK must be greater than zero.")),
            Some(k) => k.min(MAX_TOP_K) as usize,
            None => self.config.search.max_results.clamp(1, MAX_TOP_K as usize),
        };
        let scope = if req.include_globs.is_some() || req.exclude_globs.is_some() {
            let include = req.include_globs.clone().unwrap_or_default();
            let exclude = req.exclude_globs.clone().unwrap_or_default();
            Some(GlobFilter::new(&include, &exclude)?)
        } else {
            None
        };
        let mode = match req.mode.as_deref() {
            None => self.config.search.default_mode,
            Some(m) => SearchMode::parse(m).ok_or_else(|| {
                Error::invalid_argument(format!("mode '{m}' is not valid; use lexical, semantic or hybrid."))
            })?,
        };
        let Some(snapshot) = Snapshot::read(&self.core.layout).filter(|s| s.chunks > 0) else {
            return Err(Error::index_not_ready(
                "Index is empty. Run kb_reindex first (CLI: `local-vector-search-mcp reindex`).",
            ));
        };
        let filter = scope.as_ref().map(|g| move |p: &str| g.matches(p));
        let filter = filter.as_ref().map(|f| f as &ScopeFilter<'_>);
        let mut warnings: Vec<String> = Vec::new();

        // The vector side, when the mode asks for it and it can answer.
        let vector: Option<Vec<VectorCandidate>> = match (mode, self.config.embedding.provider) {
            (SearchMode::Lexical, _) => None,
            (SearchMode::Semantic, EmbeddingProvider::None) => {
                return Err(Error::index_not_ready(
                    "Semantic search is disabled (embedding.provider: none); use mode lexical or hybrid, or configure an embedding endpoint.",
                ));
            }
            (SearchMode::Hybrid, EmbeddingProvider::None) => {
                warnings.push(
                    "Semantic search is disabled (embedding.provider: none). Executed lexical search only."
                        .to_owned(),
                );
                None
            }
            (_, EmbeddingProvider::OpenAiCompatible) => {
                let pool = self.config.search.semantic_candidate_pool_size.max(top_k);
                match self.vector_candidates(query, pool, &snapshot, filter) {
                    Ok(mut found) => {
                        let search = &self.config.search;
                        found.truncate(similarity_floor(
                            &found,
                            search.semantic_floor,
                            search.semantic_min_similarity,
                        ));
                        if let Some(w) = pending_warning(&snapshot, mode) {
                            warnings.push(w);
                        }
                        Some(found)
                    }
                    Err(e) if mode == SearchMode::Semantic => {
                        return Err(Error::index_not_ready(format!(
                            "Semantic search is unavailable: {} Use mode lexical or hybrid meanwhile.",
                            e.message
                        )));
                    }
                    Err(e) => {
                        warnings.push(format!(
                            "Semantic search is unavailable: {} Falling back to lexical search.",
                            e.message
                        ));
                        None
                    }
                }
            }
        };
        let effective = match (mode, &vector) {
            (SearchMode::Semantic, _) => SearchMode::Semantic,
            (SearchMode::Hybrid, Some(_)) => SearchMode::Hybrid,
            _ => SearchMode::Lexical,
        };
        // Lexical candidates: whole hits in lexical mode; only the ranks of the pool in hybrid
        // mode (snippets are made for the fused top-k alone).
        // `all_terms`: how many lexical candidates (they come first) match every query word.
        let (lexical, lex_ids, all_terms): (Vec<LexicalHit>, Vec<u64>, usize) = match effective {
            SearchMode::Semantic => (Vec::new(), Vec::new(), 0),
            SearchMode::Hybrid => {
                let pool = self.config.search.lexical_candidate_pool_size.max(top_k);
                let (ids, all_terms) = self.with_reader(|index| index.rank(query, pool, filter))?;
                (Vec::new(), ids, all_terms)
            }
            SearchMode::Lexical => {
                let (hits, all_terms) =
                    self.with_reader(|index| index.search_tiered(query, top_k, filter))?;
                let ids = hits.iter().map(|h| h.chunk_id).collect();
                (hits, ids, all_terms)
            }
        };
        let vector = vector.unwrap_or_default();

        // Ranking: 1/rank in a single mode, weighted RRF over both lists in hybrid
        // (`docs/design/retrieval.md`).
        let rrf_k = self.config.search.rrf_k;
        let ranked: Vec<(u64, f64)> = match effective {
            SearchMode::Hybrid => {
                let vec_ids: Vec<u64> = vector.iter().map(|c| c.0).collect();
                let fusion =
                    Fusion { rrf_k: rrf_k as usize, lexical_weight: self.config.search.lexical_weight };
                fuse_hybrid(&lex_ids, all_terms, &vec_ids, fusion, top_k)
            }
            SearchMode::Semantic => by_rank(vector.iter().map(|c| c.0), top_k),
            SearchMode::Lexical => by_rank(lex_ids.iter().copied(), top_k),
        };
        let lex_rank: HashMap<u64, usize> = lex_ids.iter().enumerate().map(|(i, id)| (*id, i)).collect();
        let vec_rank: HashMap<u64, (usize, f32)> =
            vector.iter().enumerate().map(|(i, c)| (c.0, (i, c.1))).collect();
        let mut by_id: HashMap<u64, LexicalHit> = lexical.into_iter().map(|h| (h.chunk_id, h)).collect();
        let missing: Vec<u64> = ranked.iter().map(|r| r.0).filter(|id| !by_id.contains_key(id)).collect();
        if !missing.is_empty() {
            let found = self.with_reader(|index| index.fetch(&missing, query))?;
            by_id.extend(found.into_iter().flatten().map(|h| (h.chunk_id, h)));
        }

        let explain = req.explain.unwrap_or(false);
        let mode_name = effective.as_str().to_owned();
        let mut current: BTreeMap<String, Option<String>> = BTreeMap::new();
        let mut results = Vec::with_capacity(ranked.len());
        for (id, score) in ranked {
            // A vector key the lexical index no longer holds (an edit in flight) is skipped.
            let Some(h) = by_id.remove(&id) else { continue };
            let now = current.entry(h.path.clone()).or_insert_with(|| self.current_hash(&h.path)).clone();
            let explain = explain.then(|| SearchExplain {
                lexical_rank: lex_rank.get(&id).map(|r| *r as u32 + 1),
                lexical_all_terms: lex_rank.get(&id).map(|r| *r < all_terms),
                vector_rank: vec_rank.get(&id).map(|r| r.0 as u32 + 1),
                vector_distance: vec_rank.get(&id).map(|r| r.1),
                rrf_k: (effective == SearchMode::Hybrid).then_some(rrf_k),
                fused_score: score,
            });
            results.push(SearchHit {
                full_pointer: format!("{}::{}", h.path, h.anchor),
                read_hint: ReadHint {
                    path: h.path.clone(),
                    pointer: h.anchor.clone(),
                    max_elements: 20,
                    max_bytes: 12_000,
                },
                score,
                search_mode: mode_name.clone(),
                heading_path: Some(h.heading_path).filter(|s| !s.is_empty()),
                snippet: h.snippet,
                stale: now.as_deref() != Some(h.source_hash.as_str()),
                indexed_source_hash: h.source_hash,
                pointer: h.anchor,
                path: h.path,
                explain,
            });
        }
        let warning = (!warnings.is_empty()).then(|| warnings.join(" "));
        Ok(SearchResponse { results, warning })
    }

    /// The `k` nearest chunks to `query` within scope, nearest first. An `Err` says why the
    /// vector side cannot answer (its message is one sentence, ending with what to do).
    fn vector_candidates(
        &self,
        query: &str,
        k: usize,
        snapshot: &Snapshot,
        filter: Option<&ScopeFilter<'_>>,
    ) -> Result<Vec<VectorCandidate>> {
        let embedding = &self.config.embedding;
        let current = vector_manifest(embedding, self.config.chunking.include_heading_context);
        let state = snapshot.vectors.as_ref().filter(|v| v.vectors > 0 && !v.manifest.is_empty());
        let Some(state) = state else {
            let why = snapshot
                .vectors
                .as_ref()
                .and_then(|v| v.last_error.clone())
                .map(|e| format!(" (last embedding error: {e})"))
                .unwrap_or_default();
            return Err(Error::index_not_ready(format!(
                "no vectors have been built yet{why}; run kb_reindex (CLI: `reindex`) with the embedding endpoint running."
            )));
        };
        let c = compatibility(&state.manifest, &current);
        if !c.is_compatible {
            return Err(Error::index_not_ready(incompatible_message("the vector index", &c)));
        }
        let index = self.vector_reader()?;
        let embedder = self.query_embedder()?;
        let q = embedder.embed_query(query)?;
        check_dimensions(std::slice::from_ref(&q), index.dims())?;
        let scope_ids = match filter {
            Some(f) => {
                let ids = self.with_reader(|ix: &LexicalIndex| ix.chunk_ids_in_scope(f))?;
                if ids.is_empty() {
                    return Ok(Vec::new());
                }
                Some(ids)
            }
            None => None,
        };
        index.search(&q, k, scope_ids.as_deref())
    }

    /// The vector index as a reader sees it now (re-mapped after the writer saved a new file).
    fn vector_reader(&self) -> Result<Arc<VectorIndex>> {
        let path = self.core.layout.vector_path();
        let meta = std::fs::metadata(&path).map_err(|_| {
            Error::index_not_ready(
                "the vector file is missing; run kb_reindex (CLI: `reindex`) with the embedding endpoint running.",
            )
        })?;
        let stamp = (meta.len(), meta.modified().ok());
        let mut guard =
            self.vectors.lock().map_err(|_| Error::internal("the vector reader lock was poisoned"))?;
        if let Some(r) = guard.as_ref().filter(|r| r.stamp == stamp) {
            return Ok(Arc::clone(&r.index));
        }
        let index = Arc::new(VectorIndex::view(&path)?);
        *guard = Some(VectorReader { index: Arc::clone(&index), stamp });
        Ok(index)
    }

    /// The query-time embedding client (created on first use, on a blocking thread).
    fn query_embedder(&self) -> Result<Arc<Embedder>> {
        let mut guard =
            self.embedder.lock().map_err(|_| Error::internal("the embedding client lock was poisoned"))?;
        if let Some(e) = guard.as_ref() {
            return Ok(Arc::clone(e));
        }
        let e = Arc::new(Embedder::new(&self.config.embedding, Some(QUERY_EMBED_TIMEOUT))?);
        *guard = Some(Arc::clone(&e));
        Ok(e)
    }

    /// The hash `path` has now, for `stale` (remembered under the file's stamp, so usually no
    /// read: `Workspace::current_hash`).
    fn current_hash(&self, path: &str) -> Option<String> {
        let rel = RelPath::new(path).ok()?;
        self.core.workspace.current_hash(&rel)
    }
}

/// A single list's first `top_k` ids with score `1/rank` (`contract.md` §8.1).
fn by_rank(ids: impl Iterator<Item = u64>, top_k: usize) -> Vec<(u64, f64)> {
    ids.take(top_k).enumerate().map(|(i, id)| (id, 1.0 / (i as f64 + 1.0))).collect()
}

/// A warning when some chunks have no vector yet.
fn pending_warning(snapshot: &Snapshot, mode: SearchMode) -> Option<String> {
    let v = snapshot.vectors.as_ref().filter(|v| v.pending > 0)?;
    let why = v.last_error.as_deref().map(|e| format!(" (last embedding error: {e})")).unwrap_or_default();
    let effect = if mode == SearchMode::Semantic {
        "semantic search cannot find them until the vectors catch up (next reindex or edit)"
    } else {
        "they rank by lexical match only until the vectors catch up (next reindex or edit)"
    };
    Some(format!("{} chunk(s) have no vector yet{why}; {effect}.", v.pending))
}
