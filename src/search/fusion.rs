//! Reciprocal Rank Fusion and the vector similarity floor: how ranked candidate lists become
//! one ranking (`docs/design/retrieval.md`).
//!
//! Pure functions over ids and distances; no index, no I/O.

use std::collections::HashMap;

/// Reciprocal Rank Fusion: `score(id) = Σ 1/(k + rank)` over the ranked lists (rank 1-based),
/// sorted by score descending then id ascending, first `top_k`.
pub fn fuse(lists: &[&[u64]], k: usize, top_k: usize) -> Vec<(u64, f64)> {
    let weighted: Vec<(&[u64], f64)> = lists.iter().map(|l| (*l, 1.0)).collect();
    fuse_weighted(&weighted, k, top_k)
}

/// Weighted Reciprocal Rank Fusion: `score(id) = Σ wᵢ/(k + rankᵢ)` over `(list, wᵢ)`, sorted
/// by score descending then id ascending, first `top_k`.
pub fn fuse_weighted(lists: &[(&[u64], f64)], k: usize, top_k: usize) -> Vec<(u64, f64)> {
    let mut scores: HashMap<u64, f64> = HashMap::new();
    for (list, weight) in lists {
        for (rank, id) in list.iter().enumerate() {
            *scores.entry(*id).or_default() += weight / (k as f64 + rank as f64 + 1.0);
        }
    }
    let mut fused: Vec<(u64, f64)> = scores.into_iter().collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    fused.truncate(top_k);
    fused
}

/// How many of the vector candidates `(id, cosine distance)`, nearest first, pass the
/// similarity floor: a similarity (`1 - distance`) at least `best - relative` (when
/// `relative > 0`) and at least `absolute` (when set). They are a prefix of the list.
pub fn similarity_floor(candidates: &[(u64, f32)], relative: f64, absolute: Option<f64>) -> usize {
    let Some(best) = candidates.first().map(|c| 1.0 - f64::from(c.1)) else { return 0 };
    let mut floor = absolute.unwrap_or(f64::NEG_INFINITY);
    if relative > 0.0 {
        floor = floor.max(best - relative);
    }
    // A small tolerance: bf16 storage rounds distances in the third decimal.
    candidates.iter().take_while(|c| 1.0 - f64::from(c.1) >= floor - 1e-6).count()
}

/// How hybrid mode combines the lexical and the vector candidates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fusion {
    /// The RRF constant k.
    pub rrf_k: usize,
    /// The lexical list's weight (the vector list's is 1).
    pub lexical_weight: f64,
}

/// Hybrid ranking. When some lexical hits match every query word (the first `all_terms` of
/// `lexical`, which lists them first), the lexical ranking stands: the vectors neither add
/// chunks nor reorder, and each hit scores its lexical share of the fusion,
/// `lexical_weight / (k + rank)`. Without such hits (a whole-sentence question), weighted RRF
/// of the lexical ids (best first) and the vector ids (nearest first, already cut by
/// [`similarity_floor`]): vector-only chunks join and add recall.
///
/// Why the lexical order stands when every word was found (`docs/design/retrieval.md`,
/// "Fusion, round 2"): letting the vectors re-rank those hits lost held-out technical nDCG
/// (identifiers and keywords, where e5-small is weakest), while the questions that gain from
/// vectors are the ones whose words are not all found.
pub fn fuse_hybrid(
    lexical: &[u64],
    all_terms: usize,
    vector: &[u64],
    f: Fusion,
    top_k: usize,
) -> Vec<(u64, f64)> {
    if all_terms > 0 {
        return lexical
            .iter()
            .take(top_k)
            .enumerate()
            .map(|(rank, id)| (*id, f.lexical_weight / (f.rrf_k as f64 + rank as f64 + 1.0)))
            .collect();
    }
    fuse_weighted(&[(lexical, f.lexical_weight), (vector, 1.0)], f.rrf_k, top_k)
}

/// A single list's first `top_k` ids with score `1/rank`.
pub fn by_rank(ids: impl Iterator<Item = u64>, top_k: usize) -> Vec<(u64, f64)> {
    ids.take(top_k).enumerate().map(|(i, id)| (id, 1.0 / (i as f64 + 1.0))).collect()
}
