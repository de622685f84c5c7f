//! Collectors written against tantivy's `Weight`: the top `k` candidates within a borrowed
//! scope filter (with Block-WAND pruning), and every chunk id a query matches.

use std::collections::BinaryHeap;

use tantivy::query::{EnableScoring, Query};
use tantivy::{DocAddress, Score};

use super::ScopeFilter;
use super::errors::map_err;
use super::schema::F_CHUNK_ID;
use super::segments::PathCache;
use crate::error::Result;

/// A candidate hit.
#[derive(Clone, Copy, Debug)]
pub(super) struct Candidate {
    pub(super) score: Score,
    pub(super) chunk_id: u64,
    pub(super) addr: DocAddress,
}

/// Heap order: the *worst* candidate on top (lowest score, then highest chunk id).
struct Worst(Candidate);

impl PartialEq for Worst {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == std::cmp::Ordering::Equal
    }
}
impl Eq for Worst {}
impl PartialOrd for Worst {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Worst {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        // "greater" = worse, so the max-heap's top is the worst
        other.0.score.total_cmp(&self.0.score).then(self.0.chunk_id.cmp(&other.0.chunk_id))
    }
}

/// The best `k` live documents matching `query` whose path the filter accepts, best first
/// (score descending, then chunk id ascending).
///
/// This is a filtering top-k collector written against tantivy's `Weight` directly, because
/// tantivy's `Collector` children must be `'static` and the caller's filter is borrowed. Each
/// segment keeps an ordinal → in-scope cache over its `path` fast-field dictionary, so the
/// filter runs at most once per distinct path and segment. Block-WAND pruning still applies:
/// the threshold handed back to tantivy is the current k-th score.
pub(super) fn top_k_in_scope(
    searcher: &tantivy::Searcher,
    query: &dyn Query,
    k: usize,
    scope: Option<(&ScopeFilter<'_>, &PathCache)>,
) -> Result<Vec<Candidate>> {
    let weight = query
        .weight(EnableScoring::enabled_from_searcher(searcher))
        .map_err(|e| map_err("Searching the lexical index", e))?;
    if let Some((_, cache)) = scope {
        cache.retain(searcher);
    }
    let mut heap: BinaryHeap<Worst> = BinaryHeap::with_capacity(k.min(1024) + 1);
    for (seg_ord, reader) in searcher.segment_readers().iter().enumerate() {
        let ids =
            reader.fast_fields().u64(F_CHUNK_ID).map_err(|e| map_err("Searching the lexical index", e))?;
        let (filter, paths) = match scope {
            Some((filter, cache)) => match cache.get(reader)? {
                Some(paths) => (Some(filter), Some(paths)),
                None => continue, // no paths in this segment: nothing is in scope
            },
            None => (None, None),
        };
        // 0 = not yet known, 1 = in scope, 2 = out of scope
        let mut scope_cache: Vec<u8> = vec![0; paths.as_ref().map_or(0, |p| p.names.len())];
        let alive = reader.alive_bitset();
        let seg_ord = u32::try_from(seg_ord).unwrap_or(u32::MAX);
        let threshold_of = |heap: &BinaryHeap<Worst>| -> Score {
            if heap.len() >= k {
                heap.peek().map_or(Score::MIN, |w| w.0.score.next_down())
            } else {
                Score::MIN
            }
        };
        let start_threshold = threshold_of(&heap);
        weight
            .for_each_pruning(start_threshold, reader, &mut |doc, score| {
                let current = threshold_of(&heap);
                if alive.is_some_and(|a| a.is_deleted(doc)) {
                    return current;
                }
                if let (Some(filter), Some(paths)) = (filter, paths.as_ref()) {
                    let in_scope = paths.ords.values_for_doc(doc).any(|ord| {
                        let Some(o) = usize::try_from(ord).ok() else { return false };
                        let (Some(slot), Some(name)) = (scope_cache.get_mut(o), paths.names.get(o)) else {
                            return false;
                        };
                        if *slot == 0 {
                            *slot = if filter(name) { 1 } else { 2 };
                        }
                        *slot == 1
                    });
                    if !in_scope {
                        return current;
                    }
                }
                let chunk_id = ids.first(doc).unwrap_or(u64::MAX);
                let cand = Worst(Candidate { score, chunk_id, addr: DocAddress::new(seg_ord, doc) });
                if heap.len() < k {
                    heap.push(cand);
                } else if let Some(mut worst) = heap.peek_mut()
                    && cand < *worst
                {
                    *worst = cand;
                }
                threshold_of(&heap)
            })
            .map_err(|e| map_err("Searching the lexical index", e))?;
    }
    let mut out: Vec<Candidate> = heap.into_iter().map(|w| w.0).collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.chunk_id.cmp(&b.chunk_id)));
    Ok(out)
}

/// Appends the chunk id of every live document matching `query` to `out` (unordered).
pub(super) fn collect_chunk_ids(
    searcher: &tantivy::Searcher,
    query: &dyn Query,
    out: &mut Vec<u64>,
) -> Result<()> {
    let weight = query
        .weight(EnableScoring::disabled_from_searcher(searcher))
        .map_err(|e| map_err("Listing chunk ids", e))?;
    for reader in searcher.segment_readers() {
        let ids = reader.fast_fields().u64(F_CHUNK_ID).map_err(|e| map_err("Listing chunk ids", e))?;
        let alive = reader.alive_bitset();
        weight
            .for_each_no_score(reader, &mut |docs| {
                for &doc in docs {
                    if alive.is_none_or(|a| a.is_alive(doc))
                        && let Some(id) = ids.first(doc)
                    {
                        out.push(id);
                    }
                }
            })
            .map_err(|e| map_err("Listing chunk ids", e))?;
    }
    Ok(())
}
