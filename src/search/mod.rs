//! The ranking pipeline of `kb_search`: request checks, the vector side's outcome (similarity
//! floor, fallback warnings), the lexical tiers, fusion, the refetch of missing hits, snippets
//! and staleness. See `docs/design/retrieval.md`.
//!
//! Everything here is pure: the engine does the I/O between the steps (the lexical reader, the
//! vector reader, the embedding client, the current file hashes) and hands in what it read, so
//! each step is unit-tested over in-memory candidate lists. The order of a search:
//!
//! 1. [`plan`] checks the request (query, `topK`, globs, mode).
//! 2. [`vector_step`] says whether to ask the vector side; [`vector_answer`] applies the
//!    similarity floor to what it answered or turns its failure into an error or a warning.
//! 3. [`effective_mode`] and [`lexical_step`] say which lexical candidates to read: the tiered
//!    hits (all query words first) in lexical mode, the candidate ranks in hybrid mode. The
//!    lexical filter (today the scope globs, [`Plan::scope`]) is passed to the lexical index
//!    there, so a new filter on the lexical side plugs in at that one place.
//! 4. [`Candidates::rank`] fuses (hybrid) or ranks one list; [`Candidates::missing`] names the
//!    ranked chunks whose hit (snippet, anchor) must still be fetched; [`Candidates::assemble`]
//!    builds the hits with `stale` from the current file hashes.
//!
//! Invariants:
//!
//! - Lexical search never depends on vectors: in hybrid mode any vector failure degrades to a
//!   lexical answer with a warning; only an explicit `semantic` request fails.
//! - A ranked id without a lexical hit (a vector key of a chunk an edit just replaced) is
//!   skipped, never answered with a made-up hit.

mod filters;
mod fusion;
mod run;
mod sources;

use std::collections::{BTreeMap, HashMap, HashSet};

pub use fusion::{Fusion, by_rank, fuse, fuse_hybrid, fuse_weighted, similarity_floor};
pub use run::{run, snippet_windows};
pub use sources::Sources;

use crate::config::{HitDetail, SearchConfig, SearchMode};
use crate::error::{Error, Result};
use crate::lexical::{LexicalHit, MetaFilter, RankWeights};
use crate::wire::{ReadHint, SearchExplain, SearchHit, SearchRequest, SearchResponse};
use crate::workspace::GlobFilter;

/// Most results one search returns.
pub const MAX_TOP_K: i64 = 50;

/// One vector candidate: chunk id and cosine distance, nearest first in a list.
pub type VectorCandidate = (u64, f32);

/// A checked request.
#[derive(Debug)]
pub struct Plan {
    /// The query, trimmed, never empty.
    pub query: String,
    /// How many hits to answer.
    pub top_k: usize,
    /// The requested mode (or the configured default).
    pub mode: SearchMode,
    /// The scope globs, when the request has any.
    pub scope: Option<GlobFilter>,
    /// Whether each hit carries its ranking details.
    pub explain: bool,
    /// At most this many hits per file (`None`: no limit).
    pub max_per_file: Option<usize>,
    /// What each hit carries (`detail`, else `search.hitDetail`).
    pub detail: HitDetail,
    /// The front-matter conditions (`filters`), when the request has any.
    pub filters: Option<MetaFilter>,
    /// The search settings the search runs with.
    pub config: SearchConfig,
}

/// Checks a request against the configuration: a one-sentence error for each bad field.
pub fn plan(req: &SearchRequest, config: &SearchConfig) -> Result<Plan> {
    let query = req.query.trim();
    if query.is_empty() {
        return Err(Error::invalid_argument("query must not be empty."));
    }
    let top_k = match req.top_k {
        Some(k) if k <= 0 => return Err(Error::invalid_argument("topK must be greater than zero.")),
        Some(k) => k.min(MAX_TOP_K) as usize,
        None => config.max_results.clamp(1, MAX_TOP_K as usize),
    };
    let scope = if req.include_globs.is_some() || req.exclude_globs.is_some() {
        let include = req.include_globs.clone().unwrap_or_default();
        let exclude = req.exclude_globs.clone().unwrap_or_default();
        Some(GlobFilter::new(&include, &exclude)?)
    } else {
        None
    };
    let mode = req.mode.unwrap_or(config.default_mode);
    let max_per_file = match req.max_per_file {
        Some(n) if n < 0 => {
            return Err(Error::invalid_argument(
                "maxPerFile must be 0 (no limit) or more; use 1 for one hit per file.",
            ));
        }
        Some(0) => None,
        Some(n) => Some(n as usize),
        None => config.max_per_file,
    };
    let detail = req.detail.unwrap_or(config.hit_detail);
    let filters = filters::meta_filter(req.filters.as_deref())?;
    Ok(Plan {
        query: query.to_owned(),
        top_k,
        mode,
        scope,
        explain: req.explain.unwrap_or(false),
        max_per_file,
        detail,
        filters,
        config: config.clone(),
    })
}

/// What to do about the vector side.
#[derive(Debug, PartialEq)]
pub enum VectorStep {
    /// Lexical mode: no vectors.
    Skip,
    /// Hybrid mode without embeddings: lexical only, with this warning.
    Warn(String),
    /// Ask the vector side for this many candidates.
    Ask {
        /// The candidate pool size.
        pool: usize,
    },
}

/// Whether `plan`'s mode asks the vector side; `Err` for semantic mode without embeddings
/// (`vectors_enabled`: an embedding provider is configured).
pub fn vector_step(plan: &Plan, vectors_enabled: bool) -> Result<VectorStep> {
    match (plan.mode, vectors_enabled) {
        (SearchMode::Lexical, _) => Ok(VectorStep::Skip),
        (SearchMode::Semantic, false) => Err(Error::index_not_ready(
            "Semantic search is disabled (embedding.provider: none); use mode lexical or hybrid, or configure an embedding endpoint.",
        )),
        (SearchMode::Hybrid, false) => Ok(VectorStep::Warn(
            "Semantic search is disabled (embedding.provider: none). Executed lexical search only."
                .to_owned(),
        )),
        (_, true) => Ok(VectorStep::Ask { pool: plan.config.semantic_candidate_pool_size.max(plan.top_k) }),
    }
}

/// Whether a hybrid answer is the same whatever the vectors say, given the lexical candidates
/// (`lexical` of them, the first `all_terms` with every query word), so the query need not be
/// embedded (`docs/tools.md`, `kb_search`):
/// - some chunk has every query word: the lexical order stands and the vectors add nothing
///   ([`fuse_hybrid`]), whatever the weights;
/// - or, without a per-file limit, the lexical side has `top_k` candidates and its weight is so
///   high that no vector rank can lift a chunk into the first `top_k` or reorder them:
///   `w/(k + r) − w/(k + r + 1) > 1/(k + 1)` for every `r ≤ top_k`, i.e.
///   `w (k + 1) > (k + top_k)(k + top_k + 1)` (the default weight, 1000, for every `topK` up
///   to [`MAX_TOP_K`]: 110 · 111 / 61 = 200).
///
/// Never with `explain`, which shows each hit's vector rank and distance.
pub fn vectors_cannot_change(plan: &Plan, lexical: usize, all_terms: usize) -> bool {
    if plan.explain || plan.mode != SearchMode::Hybrid {
        return false;
    }
    if all_terms > 0 {
        return true;
    }
    let (w, k, top) = (plan.config.lexical_weight, f64::from(plan.config.rrf_k), plan.top_k as f64);
    plan.max_per_file.is_none() && lexical >= plan.top_k && w * (k + 1.0) > (k + top) * (k + top + 1.0)
}

/// Chunks still waiting for their vector, as the last index snapshot counted them.
#[derive(Clone, Debug, Default)]
pub struct Pending {
    /// How many chunks have no vector yet.
    pub chunks: u64,
    /// The last embedding error, if any.
    pub last_error: Option<String>,
}

/// The vector side's answer, cut by the similarity floor; its failure becomes the error of a
/// semantic search or a fallback warning in hybrid mode. Pending chunks add a warning.
pub fn vector_answer(
    mode: SearchMode,
    answer: Result<Vec<VectorCandidate>>,
    config: &SearchConfig,
    pending: &Pending,
    warnings: &mut Vec<String>,
) -> Result<Option<Vec<VectorCandidate>>> {
    match answer {
        Ok(mut found) => {
            found.truncate(similarity_floor(&found, config.semantic_floor, config.semantic_min_similarity));
            warnings.extend(pending_warning(pending, mode));
            Ok(Some(found))
        }
        Err(e) if mode == SearchMode::Semantic => Err(Error::index_not_ready(format!(
            "Semantic search is unavailable: {} Use mode lexical or hybrid meanwhile.",
            e.message
        ))),
        Err(e) => {
            warnings.push(format!(
                "Semantic search is unavailable: {} Falling back to lexical search.",
                e.message
            ));
            Ok(None)
        }
    }
}

/// A warning when some chunks have no vector yet.
pub fn pending_warning(pending: &Pending, mode: SearchMode) -> Option<String> {
    if pending.chunks == 0 {
        return None;
    }
    let why =
        pending.last_error.as_deref().map(|e| format!(" (last embedding error: {e})")).unwrap_or_default();
    let effect = if mode == SearchMode::Semantic {
        "semantic search cannot find them until the vectors catch up (next reindex or edit)"
    } else {
        "they rank by lexical match only until the vectors catch up (next reindex or edit)"
    };
    Some(format!("{} chunk(s) have no vector yet{why}; {effect}.", pending.chunks))
}

/// The mode the answer is ranked in: hybrid without a vector answer is lexical.
pub fn effective_mode(requested: SearchMode, have_vectors: bool) -> SearchMode {
    match (requested, have_vectors) {
        (SearchMode::Semantic, _) => SearchMode::Semantic,
        (SearchMode::Hybrid, true) => SearchMode::Hybrid,
        _ => SearchMode::Lexical,
    }
}

/// Which lexical candidates a search needs.
#[derive(Debug, PartialEq)]
pub enum LexicalStep {
    /// Semantic mode: none.
    Skip,
    /// Hybrid mode: the ranks of this many candidates (snippets are made for the fused top-k
    /// alone, by the refetch).
    Rank {
        /// The candidate pool size.
        pool: usize,
    },
    /// Lexical mode: whole hits (with snippets), the all-words tier first.
    Tiered {
        /// How many hits.
        top_k: usize,
    },
}

/// The lexical candidates `effective` needs.
pub fn lexical_step(effective: SearchMode, plan: &Plan) -> LexicalStep {
    let config = &plan.config;
    match effective {
        SearchMode::Semantic => LexicalStep::Skip,
        SearchMode::Hybrid => LexicalStep::Rank { pool: config.lexical_candidate_pool_size.max(plan.top_k) },
        // With a per-file limit the answer may reach past the first `top_k`: rank the pool and
        // read hits as the limit needs them (`Candidates::select`).
        SearchMode::Lexical if plan.max_per_file.is_some() => {
            LexicalStep::Rank { pool: config.lexical_candidate_pool_size.max(plan.top_k) }
        }
        SearchMode::Lexical => LexicalStep::Tiered { top_k: plan.top_k },
    }
}

/// The candidate lists of one search and the lexical hits read so far.
#[derive(Debug, Default)]
pub struct Candidates {
    /// Lexical candidate ids, best first.
    lexical: Vec<u64>,
    /// How many of `lexical` (they come first) match every query word.
    all_terms: usize,
    /// Vector candidates, nearest first, already cut by the floor.
    vector: Vec<VectorCandidate>,
    /// Lexical hits by chunk id (from the tiered search or the refetch).
    hits: HashMap<u64, LexicalHit>,
    /// Ids a refetch found no hit for (skipped by [`Candidates::select`]).
    absent: HashSet<u64>,
    /// The files of candidates not read yet, where the ranking knew them.
    paths: HashMap<u64, String>,
}

impl Candidates {
    /// Candidates with the vector side's answer (none outside semantic and hybrid mode).
    pub fn new(vector: Option<Vec<VectorCandidate>>) -> Self {
        Candidates { vector: vector.unwrap_or_default(), ..Candidates::default() }
    }

    /// The hybrid pool: lexical ids, best first, the first `all_terms` matching every word.
    pub fn set_lexical_ranks(&mut self, ids: Vec<u64>, all_terms: usize) {
        self.lexical = ids;
        self.all_terms = all_terms;
    }

    /// The files of ranked candidates (`paths[i]` of `ids[i]`), known before their hits are
    /// read: [`Candidates::select`] then reads only the hits the per-file limit keeps.
    pub fn set_paths(&mut self, ids: &[u64], paths: Vec<Option<String>>) {
        self.paths.extend(ids.iter().zip(paths).filter_map(|(id, p)| Some((*id, p?))));
    }

    /// Lexical mode's tiered hits, best first, the first `all_terms` matching every word.
    pub fn set_lexical_hits(&mut self, hits: Vec<LexicalHit>, all_terms: usize) {
        self.lexical = hits.iter().map(|h| h.chunk_id).collect();
        self.all_terms = all_terms;
        self.add_hits(hits);
    }

    /// Hits read later (the refetch).
    pub fn add_hits(&mut self, hits: impl IntoIterator<Item = LexicalHit>) {
        self.hits.extend(hits.into_iter().map(|h| (h.chunk_id, h)));
    }

    /// The ranking: `1/rank` in a single mode, weighted RRF over both lists in hybrid
    /// ([`fuse_hybrid`]), first `top_k`.
    pub fn rank(&self, effective: SearchMode, fusion: Fusion, top_k: usize) -> Vec<(u64, f64)> {
        match effective {
            SearchMode::Hybrid => {
                let vec_ids: Vec<u64> = self.vector.iter().map(|c| c.0).collect();
                fuse_hybrid(&self.lexical, self.all_terms, &vec_ids, fusion, top_k)
            }
            SearchMode::Semantic => by_rank(self.vector.iter().map(|c| c.0), top_k),
            SearchMode::Lexical => by_rank(self.lexical.iter().copied(), top_k),
        }
    }

    /// The hits a refetch of `ids` read (`found[i]` for `ids[i]`; `None`: gone).
    pub fn add_fetched(&mut self, ids: &[u64], found: Vec<Option<LexicalHit>>) {
        for (id, hit) in ids.iter().zip(found) {
            match hit {
                Some(h) => {
                    self.hits.insert(h.chunk_id, h);
                }
                None => {
                    self.absent.insert(*id);
                }
            }
        }
    }

    /// The first `top_k` of `ranked` with at most `max_per_file` hits per file, or, when that
    /// needs hits not read yet, `Err` with the ids to read next, in rank order: those the limit
    /// keeps among the candidates whose file is known ([`Candidates::set_paths`]), and those
    /// whose file is not (at most `top_k` ids). Ids without a hit are skipped.
    pub fn select(
        &self,
        ranked: &[(u64, f64)],
        max_per_file: usize,
        top_k: usize,
    ) -> std::result::Result<Vec<(u64, f64)>, Vec<u64>> {
        let mut per_file: HashMap<&str, usize> = HashMap::new();
        let mut out = Vec::new();
        let mut need = Vec::new();
        // of `need`, the ids whose file is known (each takes a place in the answer)
        let mut kept = 0;
        for &(id, score) in ranked {
            if out.len() + kept >= top_k || need.len() >= top_k {
                break;
            }
            if self.absent.contains(&id) {
                continue;
            }
            let hit = self.hits.get(&id);
            let Some(path) = hit.map(|h| h.path.as_str()).or_else(|| self.paths.get(&id).map(String::as_str))
            else {
                need.push(id); // its file is known once it is read
                continue;
            };
            let n = per_file.entry(path).or_default();
            if *n < max_per_file {
                *n += 1;
                if hit.is_some() {
                    out.push((id, score));
                } else {
                    need.push(id);
                    kept += 1;
                }
            }
        }
        if need.is_empty() { Ok(out) } else { Err(need) }
    }

    /// The ranked ids whose hit has not been read yet (to fetch, with snippets).
    pub fn missing(&self, ranked: &[(u64, f64)]) -> Vec<u64> {
        ranked.iter().map(|r| r.0).filter(|id| !self.hits.contains_key(id)).collect()
    }

    /// The answer's hits in ranked order. `current_hash(path)` is the file's hash now (`None`
    /// when it is gone or unreadable); a hit whose indexed hash differs is `stale`. Each path
    /// is asked once. Ranked ids without a hit are skipped.
    pub fn assemble(
        mut self,
        ranked: &[(u64, f64)],
        effective: SearchMode,
        explain: bool,
        detail: HitDetail,
        rrf_k: u32,
        mut current_hash: impl FnMut(&str) -> Option<String>,
    ) -> Vec<SearchHit> {
        let full = detail == HitDetail::Full;
        let mut rank = 0;
        let lex_rank: HashMap<u64, usize> = self.lexical.iter().enumerate().map(|(i, id)| (*id, i)).collect();
        let vec_rank: HashMap<u64, (usize, f32)> =
            self.vector.iter().enumerate().map(|(i, c)| (c.0, (i, c.1))).collect();
        let mode_name = effective.as_str().to_owned();
        let mut current: BTreeMap<String, Option<String>> = BTreeMap::new();
        let mut results = Vec::with_capacity(ranked.len());
        for &(id, score) in ranked {
            let Some(h) = self.hits.remove(&id) else { continue };
            let now = current.entry(h.path.clone()).or_insert_with(|| current_hash(&h.path)).clone();
            let explain = explain.then(|| SearchExplain {
                lexical_rank: lex_rank.get(&id).map(|r| *r as u32 + 1),
                lexical_all_terms: lex_rank.get(&id).map(|r| *r < self.all_terms),
                vector_rank: vec_rank.get(&id).map(|r| r.0 as u32 + 1),
                vector_distance: vec_rank.get(&id).map(|r| r.1),
                rrf_k: (effective == SearchMode::Hybrid).then_some(rrf_k),
                fused_score: score,
            });
            let stale = now.as_deref() != Some(h.source_hash.as_str());
            rank += 1;
            let snippet =
                if rank > LONG_SNIPPETS { shorten(&h.snippet, SHORT_SNIPPET_BYTES) } else { h.snippet };
            // Compact: what the agent needs to read or edit the hit, and `stale` when it says
            // something; the original's fields on request (`docs/tools.md`, "The hit shape").
            results.push(SearchHit {
                full_pointer: full.then(|| format!("{}::{}", h.path, h.anchor)),
                read_hint: full.then(|| ReadHint {
                    path: h.path.clone(),
                    pointer: h.anchor.clone(),
                    max_elements: 20,
                    max_bytes: 12_000,
                }),
                score: full.then_some(score),
                search_mode: full.then(|| mode_name.clone()),
                heading_path: Some(h.heading_path).filter(|s| !s.is_empty()),
                snippet,
                stale: (full || stale).then_some(stale),
                indexed_source_hash: full.then_some(h.source_hash),
                pointer: h.anchor,
                path: h.path,
                explain,
            });
        }
        results
    }
}

/// Hits whose snippet is the whole `search.snippetTokens` window: the answer is nearly always in
/// the first ones (`docs/performance.md`, "Agent benchmark"); later hits point at more places to
/// read, with the original's 16-token window (`LexicalView::with_snippet_tokens`) cut to
/// [`SHORT_SNIPPET_BYTES`].
pub const LONG_SNIPPETS: usize = 3;
/// The longest snippet after the first [`LONG_SNIPPETS`]: about the original's 16 tokens of
/// Japanese (a median 100 bytes); 16 tokens of English or code run longer.
pub const SHORT_SNIPPET_BYTES: usize = 120;

/// `snippet` cut to about `max` bytes from a little before its first match: at character
/// boundaries, never inside a `[`…`]` mark, with `...` where it is cut.
pub fn shorten(snippet: &str, max: usize) -> String {
    if snippet.len() <= max {
        return snippet.to_owned();
    }
    let (lead, body) = match snippet.strip_prefix("...") {
        Some(rest) => (true, rest),
        None => (false, snippet),
    };
    let (trail, body) = match body.strip_suffix("...") {
        Some(rest) => (true, rest),
        None => (false, body),
    };
    let floor = |mut i: usize| {
        while !body.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let mark = body.find('[').unwrap_or(0);
    let mut start = floor(mark.saturating_sub(max / 4));
    // Not inside a mark: start at its `[`.
    if let Some(open) = body[..start].rfind('[')
        && !body[open..start].contains(']')
    {
        start = open;
    }
    let mut end = floor((start + max).min(body.len()));
    if let Some(open) = body[start..end].rfind('[').map(|i| start + i)
        && !body[open..end].contains(']')
    {
        end = body[open..].find(']').map_or(body.len(), |i| open + i + 1);
    }
    format!(
        "{}{}{}",
        if lead || start > 0 { "..." } else { "" },
        &body[start..end],
        if trail || end < body.len() { "..." } else { "" }
    )
}

/// The lexical ranking weights of the configuration.
pub fn rank_weights(config: &SearchConfig) -> RankWeights {
    let r = &config.ranking;
    RankWeights {
        heading: r.heading_weight as f32,
        own_heading: r.own_heading_weight as f32,
        proximity: r.proximity_weight as f32,
        proximity_slop: r.proximity_slop,
        proximity_reach: r.proximity_reach,
        content_word: r.content_word_weight as f32,
        loose: r.loose_weight as f32,
        coordination: r.coordination_weight as f32,
        rerank: r.rerank_weight as f32,
        rerank_depth: r.rerank_depth,
    }
}

/// The fusion settings of the configuration.
pub fn fusion(config: &SearchConfig) -> Fusion {
    Fusion { rrf_k: config.rrf_k as usize, lexical_weight: config.lexical_weight }
}

/// The response: the hits and the warnings joined into one.
/// The answer: compact hits name the mode once (`mode`), full ones on every hit.
pub fn response(
    results: Vec<SearchHit>,
    warnings: &[String],
    effective: SearchMode,
    detail: HitDetail,
) -> SearchResponse {
    SearchResponse {
        mode: (detail == HitDetail::Compact).then(|| effective.as_str().to_owned()),
        results,
        warning: (!warnings.is_empty()).then(|| warnings.join(" ")),
    }
}

#[cfg(test)]
mod tests;
