//! The ranking of one query in one snapshot: the plan (analyzed, infixes grown), the first tier
//! (every clause), the second tier by coordination and BM25, then the character-gram re-rank
//! of the best few (`rerank.rs`).

use std::collections::{HashMap, HashSet};

use tantivy::query::EnableScoring;
use tantivy::schema::Value;
use tantivy::{DocAddress, TantivyDocument};

use super::ScopeFilter;
use super::analyzer::with_analyzer;
use super::clauses::{clause_query, tier_queries};
use super::collector::{Candidate, top_k_in_scope};
use super::errors::map_err;
use super::infix::{KatakanaWords, grow_infixes};
use super::query::{Plan, RankWeights, plan};
use super::rerank::{GramScores, QueryGrams, order};
use super::schema::Fields;
use super::segments::{PathCache, SegmentCache};
use crate::error::{Error, Result};

/// Second-tier candidates re-ranked by the number of clauses they match.
const SECOND_TIER_POOL: usize = 50;

/// Stored documents ranking already read (the re-rank's pool), so the hits among them are not
/// read twice.
pub(super) type ReadDocs = HashMap<DocAddress, TantivyDocument>;

/// What ranking reads: one snapshot of the index, its fields and the index's segment caches.
pub(super) struct Ranker<'a> {
    pub(super) searcher: &'a tantivy::Searcher,
    pub(super) fields: Fields,
    pub(super) paths: &'a PathCache,
    pub(super) katakana: &'a SegmentCache<KatakanaWords>,
}

impl Ranker<'_> {
    /// The plan of `query` in this snapshot: analyzed, and its unknown katakana words
    /// grown into the longer words the snapshot holds (`infix.rs`).
    pub(super) fn plan(&self, query: &str) -> Result<Plan> {
        let mut plan = with_analyzer(|a| plan(query, a));
        grow_infixes(self.searcher, self.fields.searched(), self.katakana, &mut plan)?;
        Ok(plan)
    }

    /// The best `top_k` candidates of `query` within `filter`, in rank order, with the plan,
    /// how many of them (they come first) match every clause, and the stored documents the
    /// re-rank read (`LexicalIndex::search` says what the order is).
    pub(super) fn ranked(
        &self,
        query: &str,
        top_k: usize,
        filter: Option<&ScopeFilter<'_>>,
        weights: &RankWeights,
    ) -> Result<(Plan, Vec<Candidate>, usize, ReadDocs)> {
        if query.trim().is_empty() {
            return Err(Error::invalid_argument("query must not be empty."));
        }
        let searcher = self.searcher;
        let plan = self.plan(query)?;
        if plan.strict.is_empty() {
            return Err(Error::invalid_argument(
                "The query has no searchable words (only punctuation or symbols); type at least one word, name or number.",
            ));
        }
        if top_k == 0 {
            return Ok((plan, Vec::new(), 0, ReadDocs::default()));
        }
        // With the re-rank on, its whole pool is ranked whatever `top_k`, so the first hits do
        // not depend on how many were asked for.
        let reranked = weights.rerank > 0.0 && weights.rerank_depth > 1;
        let wanted = top_k;
        let top_k = if reranked { top_k.max(weights.rerank_depth) } else { top_k };
        let (first, rest) = tier_queries(&self.fields, &plan, weights);
        let scope = filter.map(|f| (f, self.paths));
        let mut found = top_k_in_scope(searcher, first.as_ref(), top_k, scope)?;
        let all_terms = found.len();
        if found.len() < top_k
            && let Some(rest) = rest
        {
            // The first tier came back short, so it holds *every* in-scope chunk with all
            // clauses: the best `top_k` of the second-tier query minus those are the rest.
            // (Excluding them with a MustNot clause trips a tantivy debug assertion with
            // phrase queries.)
            let first_tier: HashSet<DocAddress> = found.iter().map(|c| c.addr).collect();
            let pool = top_k.max(SECOND_TIER_POOL);
            let more = top_k_in_scope(searcher, rest.as_ref(), pool, scope)?;
            let counts = clause_counts(searcher, &self.fields, &plan, &more)?;
            let mut keyed: Vec<(usize, Candidate)> = counts.into_iter().zip(more).collect();
            // Second tier: the share of the query's clauses a chunk matches (weighted by
            // `RankWeights::coordination`) plus its BM25 score relative to the pool's best (both
            // in [0, 1]). Counting clauses alone let three common words beat two rare ones; BM25
            // alone lost the coordination signal (docs/performance.md, issue 17; the weight:
            // docs/design/retrieval.md, "Lexical ranking").
            let clauses = plan.strict.len().max(1) as f32;
            let best = keyed.iter().map(|k| k.1.score).fold(0.0f32, f32::max).max(f32::MIN_POSITIVE);
            let share = weights.coordination / clauses;
            let key = |k: &(usize, Candidate)| k.0 as f32 * share + k.1.score / best;
            keyed.sort_by(|a, b| key(b).total_cmp(&key(a)).then(a.1.chunk_id.cmp(&b.1.chunk_id)));
            let more: Vec<Candidate> = keyed.into_iter().map(|(_, c)| c).collect();
            let room = top_k - found.len();
            found.extend(more.into_iter().filter(|c| !first_tier.contains(&c.addr)).take(room));
        }
        let docs =
            if reranked { self.rerank(query, &mut found, all_terms, weights)? } else { ReadDocs::default() };
        found.truncate(wanted);
        Ok((plan, found, all_terms.min(wanted), docs))
    }

    /// Orders the first [`RankWeights::rerank_depth`] candidates again, each tier on its own,
    /// by the query's characters and character pairs their texts hold (`rerank.rs`).
    fn rerank(
        &self,
        query: &str,
        found: &mut [Candidate],
        first_tier: usize,
        weights: &RankWeights,
    ) -> Result<ReadDocs> {
        let n = found.len().min(weights.rerank_depth);
        let grams = QueryGrams::new(query);
        let mut docs = ReadDocs::default();
        if n < 2 || grams.is_empty() {
            return Ok(docs);
        }
        let mut held = GramScores::new(&grams);
        for c in &found[..n] {
            let doc: TantivyDocument =
                self.searcher.doc(c.addr).map_err(|e| map_err("Reading a lexical hit", e))?;
            let heading = doc.get_first(self.fields.heading_path).and_then(|v| v.as_str());
            let text = doc.get_all(self.fields.text).filter_map(|v| v.as_str());
            held.add(&grams, heading.into_iter().chain(text));
            docs.insert(c.addr, doc);
        }
        let head: Vec<Candidate> =
            order(&held.scores(), first_tier, weights.rerank).into_iter().map(|i| found[i]).collect();
        found[..n].copy_from_slice(&head);
        Ok(docs)
    }
}

/// For each candidate, how many strict clauses of `plan` it matches.
fn clause_counts(
    searcher: &tantivy::Searcher,
    f: &Fields,
    plan: &Plan,
    cands: &[Candidate],
) -> Result<Vec<usize>> {
    let mut counts = vec![0; cands.len()];
    let mut order: Vec<usize> = (0..cands.len()).collect();
    order.sort_by_key(|&i| cands[i].addr);
    for clause in &plan.strict {
        let weight = clause_query(f, clause, &RankWeights::default())
            .weight(EnableScoring::disabled_from_searcher(searcher))
            .map_err(|e| map_err("Searching the lexical index", e))?;
        let mut current: Option<(u32, Box<dyn tantivy::query::Scorer>)> = None;
        for &i in &order {
            let addr = cands[i].addr;
            if current.as_ref().is_none_or(|(seg, _)| *seg != addr.segment_ord) {
                let reader = searcher.segment_reader(addr.segment_ord);
                let scorer =
                    weight.scorer(reader, 1.0).map_err(|e| map_err("Searching the lexical index", e))?;
                current = Some((addr.segment_ord, scorer));
            }
            if let Some((_, scorer)) = current.as_mut() {
                use tantivy::DocSet;
                if scorer.doc() <= addr.doc_id && scorer.seek(addr.doc_id) == addr.doc_id {
                    counts[i] += 1;
                }
            }
        }
    }
    Ok(counts)
}
