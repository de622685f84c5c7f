//! A search's snapshot ([`LexicalView`]): ranking through it, then reading the ranked hits
//! (stored fields and snippets) from the same commit.

use std::collections::{HashMap, HashSet};

use tantivy::query::{EnableScoring, TermQuery};
use tantivy::schema::{Field, IndexRecordOption, Value};
use tantivy::{DocAddress, Score, TantivyDocument, Term};

use super::analyzer::with_analyzer;
use super::errors::map_err;
use super::infix::KatakanaWords;
use super::meta::MetaFilter;
use super::query::{Plan, RankWeights};
use super::rank::{Ranker, ReadDocs};
use super::schema::{F_CHUNK_ID, Fields, stored_text};
use super::segments::{PathCache, SegmentCache};
use super::snippet::{ORIGINAL_WINDOW, SHORT_WINDOW, snippet};
use super::{LexicalHit, ScopeFilter};
use crate::error::Result;

/// A search's snapshot of a [`LexicalIndex`](super::LexicalIndex)
/// ([`LexicalIndex::view`](super::LexicalIndex::view)): ranking and reading hits through one
/// view see one commit.
pub struct LexicalView<'a> {
    searcher: tantivy::Searcher,
    fields: Fields,
    paths: &'a PathCache,
    katakana: &'a SegmentCache<KatakanaWords>,
    /// What ranking through this view learnt, for [`LexicalView::fetch`]: the last query's
    /// analysis, and where each ranked chunk lies in this snapshot (so a fetch reads the hit
    /// directly instead of looking its id up in every segment; `docs/performance.md`, "Query
    /// stages").
    ranked: std::cell::RefCell<Ranked>,
    /// Tokens in a hit's snippet window (`search.snippetTokens`), for the first
    /// [`LexicalView::long_snippets`] hits this view makes; later ones get the original's window.
    snippet_tokens: usize,
    /// How many hits get the long window. A search makes its hits in rank order (the tiered
    /// hits, then fetches of ranked ids), so these are its first hits.
    long_snippets: usize,
    /// Hits made so far.
    made: std::cell::Cell<usize>,
}

/// See [`LexicalView::ranked`].
#[derive(Default)]
struct Ranked {
    query: String,
    plan: Option<Plan>,
    addrs: HashMap<u64, DocAddress>,
    /// The stored documents ranking read (the re-rank's pool), by address.
    read: ReadDocs,
}

impl<'a> LexicalView<'a> {
    /// The view of `searcher`'s snapshot, with the index's fields and segment caches.
    pub(super) fn new(
        searcher: tantivy::Searcher,
        fields: Fields,
        paths: &'a PathCache,
        katakana: &'a SegmentCache<KatakanaWords>,
    ) -> LexicalView<'a> {
        LexicalView {
            searcher,
            fields,
            paths,
            katakana,
            ranked: Default::default(),
            snippet_tokens: ORIGINAL_WINDOW,
            long_snippets: usize::MAX,
            made: std::cell::Cell::new(0),
        }
    }

    /// This view with snippets of `tokens` tokens (`search.snippetTokens`) on the first `long`
    /// hits it makes, and of at most [`SHORT_WINDOW`] on the others (they point at more places to
    /// read; a long window on each would cost its analysis for nothing). Without it, every hit
    /// gets the original's window ([`ORIGINAL_WINDOW`]).
    #[must_use]
    pub fn with_snippet_tokens(mut self, tokens: usize, long: usize) -> Self {
        self.snippet_tokens = tokens.max(1);
        self.long_snippets = long;
        self
    }

    /// The window of the next hit made.
    fn next_window(&self) -> usize {
        let n = self.made.get();
        self.made.set(n + 1);
        if n < self.long_snippets { self.snippet_tokens } else { self.snippet_tokens.min(SHORT_WINDOW) }
    }

    /// The ranking of this snapshot.
    fn ranker(&self) -> Ranker<'_> {
        Ranker { searcher: &self.searcher, fields: self.fields, paths: self.paths, katakana: self.katakana }
    }

    /// [`LexicalIndex::search_tiered`](super::LexicalIndex::search_tiered) in this snapshot, with the given ranking weights.
    pub fn search_tiered_with(
        &self,
        query: &str,
        top_k: usize,
        filter: Option<&ScopeFilter<'_>>,
        weights: &RankWeights,
    ) -> Result<(Vec<LexicalHit>, usize)> {
        let (plan, found, all_terms, mut read) = self.ranker().ranked(query, top_k, filter, weights)?;
        let mut hits = Vec::with_capacity(found.len());
        for c in found {
            let doc: TantivyDocument = match read.remove(&c.addr) {
                Some(doc) => doc,
                None => self.searcher.doc(c.addr).map_err(|e| map_err("Reading a lexical hit", e))?,
            };
            hits.push(hit(self.fields, &doc, c.chunk_id, c.score, &plan, self.next_window()));
        }
        Ok((hits, all_terms))
    }

    /// [`LexicalIndex::rank`](super::LexicalIndex::rank) in this snapshot, with the given ranking weights.
    pub fn rank_with(
        &self,
        query: &str,
        top_k: usize,
        filter: Option<&ScopeFilter<'_>>,
        weights: &RankWeights,
    ) -> Result<(Vec<u64>, usize)> {
        let (plan, found, all_terms, read) = self.ranker().ranked(query, top_k, filter, weights)?;
        let mut ranked = self.ranked.borrow_mut();
        if ranked.query != query {
            ranked.addrs.clear();
            ranked.read.clear();
            query.clone_into(&mut ranked.query);
        }
        ranked.plan = Some(plan);
        ranked.addrs.extend(found.iter().map(|c| (c.chunk_id, c.addr)));
        ranked.read.extend(read);
        Ok((found.into_iter().map(|c| c.chunk_id).collect(), all_terms))
    }

    /// The file of each of `ids` that ranking through this view found (`None` for the others),
    /// read from the path column without reading the hits: a per-file limit skips a file's
    /// extra chunks before their hits and snippets are read.
    pub fn paths_of(&self, ids: &[u64]) -> Result<Vec<Option<String>>> {
        let ranked = self.ranked.borrow();
        self.paths.retain(&self.searcher);
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let Some(addr) = ranked.addrs.get(id) else {
                out.push(None);
                continue;
            };
            let paths = self.paths.get(self.searcher.segment_reader(addr.segment_ord))?;
            out.push(paths.and_then(|p| {
                let ord = p.ords.values_for_doc(addr.doc_id).next()?;
                p.names.get(usize::try_from(ord).ok()?).map(|n| n.to_string())
            }));
        }
        Ok(out)
    }

    /// Chunk ids whose path `filter` accepts (the vector side's search scope), ascending.
    pub fn chunk_ids_in_scope(&self, filter: &ScopeFilter<'_>) -> Result<Vec<u64>> {
        let searcher = &self.searcher;
        self.paths.retain(searcher);
        let mut out = Vec::new();
        for reader in searcher.segment_readers() {
            let Some(paths) = self.paths.get(reader)? else { continue };
            let ids = reader.fast_fields().u64(F_CHUNK_ID).map_err(|e| map_err("Listing chunk ids", e))?;
            let accepted: Vec<bool> = paths.names.iter().map(|n| filter(n)).collect();
            let alive = reader.alive_bitset();
            for doc in 0..reader.max_doc() {
                if alive.is_some_and(|a| a.is_deleted(doc)) {
                    continue;
                }
                let in_scope = paths
                    .ords
                    .values_for_doc(doc)
                    .any(|o| usize::try_from(o).ok().and_then(|o| accepted.get(o)).copied().unwrap_or(false));
                if in_scope && let Some(id) = ids.first(doc) {
                    out.push(id);
                }
            }
        }
        out.sort_unstable();
        Ok(out)
    }

    /// The paths of the files whose front matter meets every condition of `filter` (the
    /// search's scope, applied inside the collector like the path globs). Answered from the
    /// `meta` terms of the index, never by reading the files.
    pub fn files_matching(&self, filter: &MetaFilter) -> Result<HashSet<String>> {
        let searcher = &self.searcher;
        self.paths.retain(searcher);
        let query = filter.query(self.fields.meta);
        let weight = query
            .weight(EnableScoring::disabled_from_searcher(searcher))
            .map_err(|e| map_err("Filtering by front matter", e))?;
        let mut out = HashSet::new();
        for reader in searcher.segment_readers() {
            let Some(paths) = self.paths.get(reader)? else { continue };
            let mut seen = vec![false; paths.names.len()];
            let alive = reader.alive_bitset();
            weight
                .for_each_no_score(reader, &mut |docs| {
                    for &doc in docs {
                        if alive.is_some_and(|a| a.is_deleted(doc)) {
                            continue;
                        }
                        for ord in paths.ords.values_for_doc(doc) {
                            if let Some(slot) = usize::try_from(ord).ok().and_then(|o| seen.get_mut(o)) {
                                *slot = true;
                            }
                        }
                    }
                })
                .map_err(|e| map_err("Filtering by front matter", e))?;
            out.extend(paths.names.iter().zip(seen).filter(|(_, s)| *s).map(|(n, _)| n.to_string()));
        }
        Ok(out)
    }

    /// [`LexicalIndex::fetch`](super::LexicalIndex::fetch) in this snapshot: every id ranked through this view is found.
    pub fn fetch(&self, ids: &[u64], query: &str) -> Result<Vec<Option<LexicalHit>>> {
        // What ranking this query through the view learnt; nothing for another query.
        let ranked = self.ranked.borrow();
        let known = (ranked.query == query).then_some(&*ranked);
        let analyzed;
        let plan = match known.and_then(|r| r.plan.as_ref()) {
            Some(plan) => plan,
            None => {
                analyzed = self.ranker().plan(query)?;
                &analyzed
            }
        };
        let mut out = Vec::with_capacity(ids.len());
        for &id in ids {
            let addr = known.and_then(|r| r.addrs.get(&id));
            if let Some(doc) = addr.and_then(|a| known.and_then(|r| r.read.get(a))) {
                out.push(Some(hit(self.fields, doc, id, 0.0, plan, self.next_window())));
                continue;
            }
            let doc = match addr {
                Some(&addr) => {
                    Some(self.searcher.doc(addr).map_err(|e| map_err("Reading a lexical hit", e))?)
                }
                None => stored(&self.searcher, self.fields, id)?,
            };
            out.push(doc.map(|doc| hit(self.fields, &doc, id, 0.0, plan, self.next_window())));
        }
        Ok(out)
    }
}

/// The hit of the stored document `doc`, its snippet (`window` tokens) highlighting `plan`'s
/// terms.
fn hit(
    fields: Fields,
    doc: &TantivyDocument,
    chunk_id: u64,
    score: Score,
    plan: &Plan,
    window: usize,
) -> LexicalHit {
    let get = |field: Field| doc.get_first(field).and_then(|v| v.as_str()).unwrap_or_default();
    LexicalHit {
        chunk_id,
        path: get(fields.path).to_string(),
        heading_path: get(fields.heading_path).to_string(),
        anchor: get(fields.anchor).to_string(),
        source_hash: get(fields.source_hash).to_string(),
        score,
        snippet: with_analyzer(|a| snippet(&stored_text(doc, fields.text), &plan.terms, a, window)),
    }
}

/// The stored document of chunk `id` in `searcher`'s snapshot, if it holds one.
pub(super) fn stored(
    searcher: &tantivy::Searcher,
    fields: Fields,
    id: u64,
) -> Result<Option<TantivyDocument>> {
    let term = TermQuery::new(Term::from_field_u64(fields.chunk_id, id), IndexRecordOption::Basic);
    let found = searcher
        .search(&term, &tantivy::collector::DocSetCollector)
        .map_err(|e| map_err("Reading a stored chunk", e))?;
    let Some(addr) = found.into_iter().next() else { return Ok(None) };
    searcher.doc(addr).map(Some).map_err(|e| map_err("Reading a stored chunk", e))
}
