//! The index ([`LexicalIndex`]): opening or creating it in a folder or in RAM, the reader and
//! its reloads, handing out writers and views, and the reads that are not a ranking (chunk ids,
//! stored chunks, metadata filters). Each step lives with its role: `schema.rs`, `writer.rs`,
//! `view.rs` and `rank.rs` (a search), `clauses.rs` (its queries), `collector.rs`,
//! `segments.rs` (per-segment caches), `freshness.rs`, `errors.rs`.

use std::collections::HashSet;
use std::path::Path;

use tantivy::collector::Count;
use tantivy::query::{AllQuery, TermQuery};
use tantivy::schema::{Field, IndexRecordOption, Value};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{Index, IndexReader, ReloadPolicy, Term};

use super::analyzer::ensure_ready;
use super::collector::collect_chunk_ids;
use super::directory::{SwitchedDirectory, SyncSwitch};
use super::errors::map_err;
use super::freshness::Freshness;
use super::infix::KatakanaWords;
use super::meta::MetaFilter;
use super::query::RankWeights;
use super::schema::{Fields, schema, stored_text};
use super::segments::{PathCache, SegmentCache};
use super::tokenizer::LvsTokenizer;
use super::view::{LexicalView, stored};
use super::writer::{LexicalWriter, WriterSize};
use super::{ANALYZER_NAME, LexicalDoc, LexicalHit, ScopeFilter};
use crate::error::{Error, Result};

/// A BM25 index of chunks (`chunk_id`, `path`, `text`, `heading_path`) in one directory.
///
/// Cheap to share between threads (`Send + Sync`); searches read a snapshot and never block
/// on a writer. One [`LexicalWriter`] at a time may write, across processes.
pub struct LexicalIndex {
    index: Index,
    reader: IndexReader,
    fields: Fields,
    paths: PathCache,
    /// The katakana words of each segment, for query words found inside longer words.
    katakana: SegmentCache<KatakanaWords>,
    fresh: Freshness,
    /// The directory's fsync switch (an index on disk).
    switch: Option<std::sync::Arc<SyncSwitch>>,
}

impl std::fmt::Debug for LexicalIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LexicalIndex").field("num_docs", &self.num_docs()).finish()
    }
}

impl LexicalIndex {
    /// Opens the index in `dir`, creating the directory and an empty index if needed.
    ///
    /// An index whose schema differs (written by another version) gives `INDEX_NOT_READY`
    /// asking for a rebuild; [`LexicalIndex::recreate`] does that.
    pub fn open_or_create(dir: &Path) -> Result<LexicalIndex> {
        ensure_ready()?;
        std::fs::create_dir_all(dir).map_err(|e| Error::io("the lexical index folder", &e))?;
        let directory = SwitchedDirectory::open(dir)
            .map_err(|e| Error::internal(format!("Opening the lexical index failed: {e}.")))?;
        let switch = directory.switch();
        let (schema, fields) = schema();
        let index =
            Index::open_or_create(directory, schema).map_err(|e| map_err("Opening the lexical index", e))?;
        let mut opened = Self::wrap(index, fields, Some(dir))?;
        opened.switch = Some(switch);
        Ok(opened)
    }

    /// Deletes whatever is in `dir` and creates an empty index there (for a forced rebuild or
    /// an index written by another version). Fails while another process holds the writer.
    pub fn recreate(dir: &Path) -> Result<LexicalIndex> {
        ensure_ready()?;
        if dir.exists() {
            // refuse while someone else is writing: take the writer lock of the old index first
            if let Ok(old) = Self::open_or_create(dir) {
                drop(old.writer(WriterSize::Edit)?);
            }
            std::fs::remove_dir_all(dir).map_err(|e| Error::io("the lexical index folder", &e))?;
        }
        Self::open_or_create(dir)
    }

    /// Entries of tantivy's mmap cache after the directory last pruned it (`None`: in memory,
    /// or never pruned yet).
    #[cfg(test)]
    pub(crate) fn mmap_cache_after_pruning(&self) -> Option<usize> {
        self.switch.as_ref()?.mmap_cache_after_pruning()
    }

    /// An empty index in memory (tests, benchmarks).
    pub fn create_in_ram() -> Result<LexicalIndex> {
        ensure_ready()?;
        let (schema, fields) = schema();
        Self::wrap(Index::create_in_ram(schema), fields, None)
    }

    fn wrap(index: Index, fields: Fields, dir: Option<&Path>) -> Result<LexicalIndex> {
        index.tokenizers().register(ANALYZER_NAME, TextAnalyzer::from(LvsTokenizer::new()));
        let fresh = Freshness::new(dir);
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(|e| map_err("Opening the lexical index reader", e))?;
        Ok(LexicalIndex {
            index,
            reader,
            fields,
            paths: PathCache::default(),
            katakana: SegmentCache::default(),
            fresh,
            switch: None,
        })
    }

    /// The searcher of the last commit (reloaded first when a commit happened since).
    fn searcher(&self) -> tantivy::Searcher {
        if let Err(e) = self.refresh() {
            tracing::warn!("could not reload the lexical index: {}", e.message);
        }
        self.reader.searcher()
    }

    /// Reloads the reader when a commit happened since it last loaded (by a writer of this
    /// index, or by any process for an index on disk); returns whether it reloaded.
    pub fn refresh(&self) -> Result<bool> {
        self.fresh.refresh(&self.reader)
    }

    /// A writer of the given size (see [`WriterSize`]). Fails with `INDEX_NOT_READY` while
    /// another writer (this process or another) holds the index.
    pub fn writer(&self, size: WriterSize) -> Result<LexicalWriter> {
        LexicalWriter::open(&self.index, size, self.fields, self.fresh.commit_flag(), self.switch.clone())
    }

    /// The generation stored with the last commit, if any commit carried one.
    pub fn generation(&self) -> Option<u64> {
        let metas = self.index.load_metas().ok()?;
        metas.payload?.trim().parse().ok()
    }

    /// Number of live chunks in the current snapshot.
    pub fn num_docs(&self) -> u64 {
        self.searcher().num_docs()
    }

    /// Reloads the reader now, whether or not a commit happened.
    pub fn reload(&self) -> Result<()> {
        self.reader.reload().map_err(|e| map_err("Reloading the lexical index", e))
    }

    /// Searches `query` and returns up to `top_k` hits in rank order.
    ///
    /// - The query goes through the same analyzer as the text; it is never parsed as a query
    ///   language, so any text is accepted. `"quoted text"` is a phrase.
    /// - Ranking is BM25 over `text` and `heading_path` (weights 1:1). Every query clause is
    ///   optional, but chunks that match all of them come first (by BM25); the others follow
    ///   by the number of clauses they match, then BM25 (the best 50 of them by BM25 are
    ///   re-ranked so). A missing word never empties the result. Ties go to the lower chunk id.
    ///   Then the best [`RankWeights::rerank_depth`] are ordered again within their tier by the
    ///   query's characters and character pairs they hold (`rerank.rs`).
    /// - `filter` receives the chunk's path; only chunks it accepts are considered, *before*
    ///   `top_k` is applied (top-k within scope).
    /// - `score` is the BM25 score within the hit's group; use the rank, not the score, to
    ///   compare hits.
    ///
    /// A blank query, or one with no letters or digits, is `INVALID_ARGUMENT`.
    pub fn search(
        &self,
        query: &str,
        top_k: usize,
        filter: Option<&ScopeFilter<'_>>,
    ) -> Result<Vec<LexicalHit>> {
        Ok(self.search_tiered(query, top_k, filter)?.0)
    }

    /// One snapshot of the index for every step of one search: the ranking and the hits read
    /// after it see the same commit. (Each call on the index itself may reload first, so ids
    /// ranked by one call could be gone from the next: a file re-indexed in between gets new
    /// chunk ids, and its hit was dropped; `docs/reliability.md`, "Soak, round 2".)
    pub fn view(&self) -> LexicalView<'_> {
        LexicalView::new(self.searcher(), self.fields, &self.paths, &self.katakana)
    }

    /// [`LexicalIndex::search`], plus how many of the hits (they come first) match every
    /// clause of the query.
    pub fn search_tiered(
        &self,
        query: &str,
        top_k: usize,
        filter: Option<&ScopeFilter<'_>>,
    ) -> Result<(Vec<LexicalHit>, usize)> {
        self.view().search_tiered_with(query, top_k, filter, &RankWeights::default())
    }

    /// The chunk ids [`LexicalIndex::search`] would return, in rank order, without reading the
    /// hits or making snippets (hybrid ranking needs only the ranks of its candidate pool),
    /// plus how many of them (they come first) match every clause of the query.
    pub fn rank(
        &self,
        query: &str,
        top_k: usize,
        filter: Option<&ScopeFilter<'_>>,
    ) -> Result<(Vec<u64>, usize)> {
        self.view().rank_with(query, top_k, filter, &RankWeights::default())
    }

    /// Chunk ids stored for `path` (for checks and repairs), in ascending order.
    pub fn chunk_ids_for_path(&self, path: &str) -> Result<Vec<u64>> {
        let searcher = self.searcher();
        let query = TermQuery::new(Term::from_field_text(self.fields.path, path), IndexRecordOption::Basic);
        let count = searcher.search(&query, &Count).map_err(|e| map_err("Listing chunks of a file", e))?;
        let mut ids = Vec::with_capacity(count);
        collect_chunk_ids(&searcher, &query, &mut ids)?;
        ids.sort_unstable();
        Ok(ids)
    }

    /// Every chunk id in the index, ascending (to compare with the metadata store).
    pub fn all_chunk_ids(&self) -> Result<Vec<u64>> {
        let searcher = self.searcher();
        let mut ids = Vec::with_capacity(usize::try_from(searcher.num_docs()).unwrap_or(0));
        collect_chunk_ids(&searcher, &AllQuery, &mut ids)?;
        ids.sort_unstable();
        Ok(ids)
    }

    /// Chunk ids whose path `filter` accepts (the vector side's search scope), ascending.
    pub fn chunk_ids_in_scope(&self, filter: &ScopeFilter<'_>) -> Result<Vec<u64>> {
        self.view().chunk_ids_in_scope(filter)
    }

    /// The stored chunks of `ids` (path, heading path, whole text, anchor, source hash), in
    /// the given order; ids the index does not hold are left out. The vector side reads the
    /// text to embed here: the index is the only copy of the chunks.
    pub fn stored_docs(&self, ids: &[u64]) -> Result<Vec<LexicalDoc>> {
        // Reloaded first: the writer's own commits are what the vector catch-up reads.
        let searcher = self.searcher();
        let mut out = Vec::with_capacity(ids.len());
        for &id in ids {
            let Some(doc) = stored(&searcher, self.fields, id)? else { continue };
            let get =
                |field: Field| doc.get_first(field).and_then(|v| v.as_str()).unwrap_or_default().to_owned();
            out.push(LexicalDoc {
                chunk_id: id,
                path: get(self.fields.path),
                heading_path: get(self.fields.heading_path),
                text: stored_text(&doc, self.fields.text).into_owned(),
                anchor: get(self.fields.anchor),
                source_hash: get(self.fields.source_hash),
                meta: Default::default(),
            });
        }
        Ok(out)
    }

    /// The paths of the files whose front matter meets every condition of `filter`
    /// ([`LexicalView::files_matching`]).
    pub fn paths_matching(&self, filter: &MetaFilter) -> Result<HashSet<String>> {
        self.view().files_matching(filter)
    }

    /// The hits for chunk ids ranked elsewhere (vector or fused ranking), in the given order; ids the
    /// lexical index does not hold are `None`. Snippets highlight `query`'s words when the
    /// chunk has them, otherwise they show the chunk's beginning.
    pub fn fetch(&self, ids: &[u64], query: &str) -> Result<Vec<Option<LexicalHit>>> {
        self.view().fetch(ids, query)
    }
}
