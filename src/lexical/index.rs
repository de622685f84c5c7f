//! The tantivy index: schema, opening, the writer and searching.

use std::cell::RefCell;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::path::Path;

use tantivy::collector::Count;
use tantivy::directory::error::{LockError, OpenReadError};
use tantivy::query::{AllQuery, BooleanQuery, EnableScoring, Occur, PhraseQuery, Query, TermQuery};
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions, Value,
};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{
    DocAddress, Index, IndexReader, IndexWriter, ReloadPolicy, Score, TantivyDocument, TantivyError, Term,
};

use super::analyzer::{Analyzer, LvsTokenizer, ensure_ready};
use super::directory::{SwitchedDirectory, SyncSwitch};
use super::infix::{KatakanaWords, grow_infixes};
use super::meta::MetaFilter;
use super::query::{Clause, Plan, RankWeights, plan};
use super::rerank::{GramScores, QueryGrams, order};
use super::snippet::snippet;
use super::{ANALYZER_NAME, LexicalDoc, LexicalHit, ScopeFilter};
use crate::error::{Error, Result};

const F_CHUNK_ID: &str = "chunk_id";
const F_PATH: &str = "path";
const F_TEXT: &str = "text";
const F_HEADING_PATH: &str = "heading_path";
const F_ANCHOR: &str = "anchor";
const F_SOURCE_HASH: &str = "source_hash";
/// The file's front-matter terms (`lexical/meta.rs`), indexed only.
const F_META: &str = "meta";

/// Indexing threads of a bulk writer (the product targets two cores).
const WRITER_THREADS: usize = 2;
/// tantivy's minimum indexing memory per thread.
const MIN_HEAP_PER_THREAD: usize = 15_000_000;
/// tantivy's maximum indexing memory per thread, with a margin.
const MAX_HEAP_PER_THREAD: usize = (u32::MAX as usize) - 2_000_000;

/// Segments of up to this many chunks count as one size class when merging (tantivy's default
/// is 10,000, which put an edit's one-chunk segment in the class of the full index's segments of
/// a few thousand chunks: every eighth segment an edit left started a merge of whole index
/// segments, a second of one core's time beside the next edits; see docs/performance.md,
/// "Edit latency, issue #28").
const MERGE_MIN_LAYER_DOCS: u32 = 64;

/// The writer's merge policy: tantivy's log-size policy with small segments in their own size
/// classes, so the segments edits leave are merged among themselves.
fn merge_policy() -> tantivy::indexer::LogMergePolicy {
    let mut policy = tantivy::indexer::LogMergePolicy::default();
    policy.set_min_layer_size(MERGE_MIN_LAYER_DOCS);
    policy
}

/// How much indexing memory and how many threads a writer gets. An edit commits one file's
/// chunks: with one thread they make one segment, and tantivy sizes a new segment's term table
/// to the memory budget (2^19 slots at 100 MB, cleared for every segment), so the smallest
/// writer commits an edit fastest. A reindex of thousands of files needs both cores and the
/// memory to make large segments (docs/performance.md, "Edits: a writer sized for the work").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriterSize {
    /// One indexing thread with tantivy's minimum memory (15 MB).
    Edit,
    /// Up to two indexing threads sharing this many bytes (raised to 15 MB per thread).
    Bulk(usize),
}

/// Opens tantivy's writer of `index` at `size` (its directory lock is held until it is dropped).
fn open_index_writer(index: &Index, size: WriterSize) -> Result<IndexWriter> {
    let (threads, per_thread) = match size {
        WriterSize::Edit => (1, MIN_HEAP_PER_THREAD),
        WriterSize::Bulk(heap_bytes) => {
            let threads =
                std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, WRITER_THREADS);
            (threads, (heap_bytes / threads).clamp(MIN_HEAP_PER_THREAD, MAX_HEAP_PER_THREAD))
        }
    };
    // Documents are tokenized by tantivy's indexing threads, so one thread calling
    // `LexicalWriter::add` in a loop keeps both cores busy. One merge thread: merges run beside
    // indexing on the same two cores (tantivy's default of four only adds contention).
    let options = tantivy::indexer::IndexWriterOptions::builder()
        .num_worker_threads(threads)
        .memory_budget_per_thread(per_thread)
        .num_merge_threads(1)
        .build();
    let writer: IndexWriter =
        index.writer_with_options(options).map_err(|e| map_err("Opening the lexical index writer", e))?;
    writer.set_merge_policy(Box::new(merge_policy()));
    Ok(writer)
}

/// Second-tier candidates re-ranked by the number of clauses they match.
const SECOND_TIER_POOL: usize = 50;

/// Most proximity pairs one query adds (a long question pairs its first clauses only).
const MAX_PROXIMITY_PAIRS: usize = 64;

/// Chunk text reaches the analyzer in pieces of at most this many bytes (values of one field), so
/// one huge paragraph costs bounded analyzer memory (measured: `docs/reliability.md`, the 31 MB line).
const TEXT_PIECE_BYTES: usize = 64 * 1024;

const LOCKED: &str = "Another process is indexing this project; wait for it or stop it.";
const DAMAGED: &str =
    "The lexical index is damaged or was written by another version; run `reindex` to rebuild it.";

thread_local! {
    /// Per-thread analyzer for queries and snippets (the dictionary itself is shared).
    static ANALYZER: RefCell<Analyzer> = RefCell::new(Analyzer::new());
}

/// Runs `f` with this thread's analyzer (a fresh one if it is already in use).
fn with_analyzer<T>(f: impl FnOnce(&mut Analyzer) -> T) -> T {
    ANALYZER.with(|cell| match cell.try_borrow_mut() {
        Ok(mut a) => f(&mut a),
        Err(_) => f(&mut Analyzer::new()),
    })
}

/// The snippets hits on `texts` get for `query` ([`LexicalHit::snippet`]), made as a search
/// makes them: the query analyzed once, then each text with this thread's analyzer (for
/// benchmarks, which time snippets apart from the search).
pub fn snippets_of(texts: &[String], query: &str) -> Vec<String> {
    with_analyzer(|a| {
        let plan = plan(query, a);
        texts.iter().map(|t| snippet(t, &plan.terms, a)).collect()
    })
}

/// Maps a tantivy error to the crate error; `doing` says what was being done.
/// Whether `err` says the index files are damaged (truncated, missing, garbage, another format)
/// rather than busy or unreachable.
fn is_damage(err: &TantivyError) -> bool {
    match err {
        TantivyError::DataCorruption(_)
        | TantivyError::IncompatibleIndex(_)
        | TantivyError::SchemaError(_) => true,
        TantivyError::OpenReadError(e) => match e {
            OpenReadError::FileDoesNotExist(_) | OpenReadError::IncompatibleIndex(_) => true,
            OpenReadError::IoError { io_error, .. } => {
                matches!(io_error.kind(), std::io::ErrorKind::InvalidData | std::io::ErrorKind::UnexpectedEof)
            }
        },
        _ => false,
    }
}

pub(super) fn map_err(doing: &str, err: TantivyError) -> Error {
    if is_damage(&err) {
        return Error::index_not_ready(DAMAGED)
            .with_detail(crate::error::ErrorDetail::IndexDamaged)
            .with_source(err);
    }
    match err {
        TantivyError::LockFailure(LockError::LockBusy, _) => {
            Error::index_not_ready(LOCKED).with_detail(crate::error::ErrorDetail::WriterBusy)
        }
        TantivyError::IoError(e) => Error::io("the lexical index", &e),
        TantivyError::OpenDirectoryError(e) => Error::internal(format!("{doing} failed: {e}.")),
        other => Error::internal(format!("{doing} failed: {other}.")),
    }
}

#[derive(Clone, Copy, Debug)]
struct Fields {
    chunk_id: Field,
    path: Field,
    text: Field,
    heading_path: Field,
    anchor: Field,
    source_hash: Field,
    meta: Field,
}

impl Fields {
    /// The fields a query's words are looked for in: the text, then the heading path.
    fn searched(&self) -> [Field; 2] {
        [self.text, self.heading_path]
    }
}

/// `text` in consecutive pieces of at most `max` bytes (a piece is longer only when one character
/// is), cut after the last line break, else the last space or `。`, of the second half of a
/// piece, else at a character boundary. The pieces concatenate to `text`.
pub(crate) fn text_pieces(text: &str, max: usize) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        if rest.len() <= max {
            return Some(std::mem::take(&mut rest));
        }
        let floor = |mut i: usize| {
            while !rest.is_char_boundary(i) {
                i -= 1;
            }
            i
        };
        let mut cut = floor(max);
        if cut == 0 {
            cut = rest.chars().next().map_or(rest.len(), char::len_utf8);
        }
        let lo = floor(max / 2).min(cut);
        let window = &rest[lo..cut];
        let after = |i: usize| lo + i + window[i..].chars().next().map_or(0, char::len_utf8);
        let cut = window.rfind('\n').or_else(|| window.rfind([' ', '\t', '。'])).map_or(cut, after);
        let (piece, tail) = rest.split_at(cut);
        rest = tail;
        Some(piece)
    })
}

/// The stored text of a hit (all its pieces; borrowed when there is one).
fn stored_text(doc: &TantivyDocument, field: Field) -> std::borrow::Cow<'_, str> {
    let mut values = doc.get_all(field).filter_map(|v| v.as_str());
    match (values.next(), values.next()) {
        (None, _) => "".into(),
        (Some(one), None) => one.into(),
        (Some(first), Some(second)) => [first, second].into_iter().chain(values).collect::<String>().into(),
    }
}

fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let analyzed = TextOptions::default().set_stored().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(ANALYZER_NAME)
            .set_index_option(IndexRecordOption::WithFreqsAndPositions),
    );
    let chunk_id = b.add_u64_field(F_CHUNK_ID, INDEXED | STORED | FAST);
    let path = b.add_text_field(F_PATH, STRING | STORED | FAST);
    let text = b.add_text_field(F_TEXT, analyzed.clone());
    let heading_path = b.add_text_field(F_HEADING_PATH, analyzed);
    let anchor = b.add_text_field(F_ANCHOR, STORED);
    let source_hash = b.add_text_field(F_SOURCE_HASH, STORED);
    let meta = b.add_text_field(F_META, STRING);
    (b.build(), Fields { chunk_id, path, text, heading_path, anchor, source_hash, meta })
}

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

/// What the reader last loaded, so a search reloads it only after a commit.
///
/// The reader's policy is `Manual`: tantivy's `OnCommitWithDelay` polls `meta.json` every
/// 500 ms on a thread of its own and reloads up to that long after a commit. Instead every
/// search compares `meta.json`'s stamp (size, modification time, inode: every commit replaces
/// the file) with the one last loaded — one `stat` — and reloads first when it changed, so a
/// commit by any process is visible to the next search. Commits through a writer of this index
/// also set `committed` (an index in RAM has no `meta.json`).
struct Freshness {
    meta: Option<std::path::PathBuf>,
    committed: std::sync::Arc<std::sync::atomic::AtomicBool>,
    loaded: std::sync::Mutex<Option<FileStamp>>,
}

/// A file's size, modification time and (on Unix) inode and change time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FileStamp(u64, Option<std::time::SystemTime>, u64, i64);

fn file_stamp(path: &Path) -> Option<FileStamp> {
    let m = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    let (ino, ctime) = {
        use std::os::unix::fs::MetadataExt;
        (m.ino(), m.ctime().wrapping_mul(1_000_000_000).wrapping_add(m.ctime_nsec()))
    };
    #[cfg(not(unix))]
    let (ino, ctime) = (0, 0);
    Some(FileStamp(m.len(), m.modified().ok(), ino, ctime))
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
        let meta = dir.map(|d| d.join("meta.json"));
        let loaded = meta.as_deref().and_then(file_stamp);
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(|e| map_err("Opening the lexical index reader", e))?;
        let fresh = Freshness { meta, committed: Default::default(), loaded: std::sync::Mutex::new(loaded) };
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
        use std::sync::atomic::Ordering;
        let stamp = self.fresh.meta.as_deref().and_then(file_stamp);
        let mut loaded = self.fresh.loaded.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let committed = self.fresh.committed.swap(false, Ordering::AcqRel);
        if !committed && stamp == *loaded {
            return Ok(false);
        }
        if let Err(e) = self.reader.reload() {
            // try again at the next search
            self.fresh.committed.store(committed, Ordering::Release);
            return Err(map_err("Reloading the lexical index", e));
        }
        *loaded = stamp;
        Ok(true)
    }

    /// A writer of the given size (see [`WriterSize`]). Fails with `INDEX_NOT_READY` while
    /// another writer (this process or another) holds the index.
    pub fn writer(&self, size: WriterSize) -> Result<LexicalWriter> {
        Ok(LexicalWriter {
            writer: Some(open_index_writer(&self.index, size)?),
            index: self.index.clone(),
            size,
            queued: Default::default(),
            committed: self.fresh.committed.clone(),
            switch: self.switch.clone(),
            fields: self.fields,
        })
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
        LexicalView { index: self, searcher: self.searcher(), ranked: Default::default() }
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

    fn hit(&self, doc: &TantivyDocument, chunk_id: u64, score: Score, plan: &Plan) -> LexicalHit {
        let get = |field: Field| doc.get_first(field).and_then(|v| v.as_str()).unwrap_or_default();
        LexicalHit {
            chunk_id,
            path: get(self.fields.path).to_string(),
            heading_path: get(self.fields.heading_path).to_string(),
            anchor: get(self.fields.anchor).to_string(),
            source_hash: get(self.fields.source_hash).to_string(),
            score,
            snippet: with_analyzer(|a| snippet(&stored_text(doc, self.fields.text), &plan.terms, a)),
        }
    }

    /// The plan of `query` in `searcher`'s snapshot: analyzed, and its unknown katakana words
    /// grown into the longer words the snapshot holds (`infix.rs`).
    fn plan(&self, searcher: &tantivy::Searcher, query: &str) -> Result<Plan> {
        let mut plan = with_analyzer(|a| plan(query, a));
        grow_infixes(searcher, self.fields.searched(), &self.katakana, &mut plan)?;
        Ok(plan)
    }

    fn ranked(
        &self,
        searcher: &tantivy::Searcher,
        query: &str,
        top_k: usize,
        filter: Option<&ScopeFilter<'_>>,
        weights: &RankWeights,
    ) -> Result<(Plan, Vec<Candidate>, usize, ReadDocs)> {
        if query.trim().is_empty() {
            return Err(Error::invalid_argument("query must not be empty."));
        }
        let plan = self.plan(searcher, query)?;
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
        let scope = filter.map(|f| (f, &self.paths));
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
        let docs = if reranked {
            self.rerank(searcher, query, &mut found, all_terms, weights)?
        } else {
            ReadDocs::default()
        };
        found.truncate(wanted);
        Ok((plan, found, all_terms.min(wanted), docs))
    }

    /// Orders the first [`RankWeights::rerank_depth`] candidates again, each tier on its own,
    /// by the query's characters and character pairs their texts hold (`rerank.rs`).
    fn rerank(
        &self,
        searcher: &tantivy::Searcher,
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
                searcher.doc(c.addr).map_err(|e| map_err("Reading a lexical hit", e))?;
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
        let searcher = self.searcher();
        self.paths.retain(&searcher);
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

    /// The stored chunks of `ids` (path, heading path, whole text, anchor, source hash), in
    /// the given order; ids the index does not hold are left out. The vector side reads the
    /// text to embed here: the index is the only copy of the chunks.
    pub fn stored_docs(&self, ids: &[u64]) -> Result<Vec<LexicalDoc>> {
        // Reloaded first: the writer's own commits are what the vector catch-up reads.
        let searcher = self.searcher();
        let mut out = Vec::with_capacity(ids.len());
        for &id in ids {
            let Some(doc) = self.stored(&searcher, id)? else { continue };
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

    /// The paths of the files whose front matter meets every condition of `filter` (the
    /// search's scope, applied inside the collector like the path globs). Answered from the
    /// `meta` terms of the index, never by reading the files.
    pub fn paths_matching(&self, filter: &MetaFilter) -> Result<HashSet<String>> {
        let searcher = self.searcher();
        self.paths.retain(&searcher);
        let query = filter.query(self.fields.meta);
        let weight = query
            .weight(EnableScoring::disabled_from_searcher(&searcher))
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

    /// The hits for chunk ids ranked elsewhere (vector or fused ranking), in the given order; ids the
    /// lexical index does not hold are `None`. Snippets highlight `query`'s words when the
    /// chunk has them, otherwise they show the chunk's beginning.
    pub fn fetch(&self, ids: &[u64], query: &str) -> Result<Vec<Option<LexicalHit>>> {
        self.view().fetch(ids, query)
    }

    /// The stored document of chunk `id` in `searcher`'s snapshot, if it holds one.
    fn stored(&self, searcher: &tantivy::Searcher, id: u64) -> Result<Option<TantivyDocument>> {
        let term = TermQuery::new(Term::from_field_u64(self.fields.chunk_id, id), IndexRecordOption::Basic);
        let found = searcher
            .search(&term, &tantivy::collector::DocSetCollector)
            .map_err(|e| map_err("Reading a stored chunk", e))?;
        let Some(addr) = found.into_iter().next() else { return Ok(None) };
        searcher.doc(addr).map(Some).map_err(|e| map_err("Reading a stored chunk", e))
    }
}

/// A search's snapshot of a [`LexicalIndex`] ([`LexicalIndex::view`]): ranking and reading
/// hits through one view see one commit.
pub struct LexicalView<'a> {
    index: &'a LexicalIndex,
    searcher: tantivy::Searcher,
    /// What ranking through this view learnt, for [`LexicalView::fetch`]: the last query's
    /// analysis, and where each ranked chunk lies in this snapshot (so a fetch reads the hit
    /// directly instead of looking its id up in every segment; `docs/performance.md`, "Query
    /// stages").
    ranked: std::cell::RefCell<Ranked>,
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

impl LexicalView<'_> {
    /// [`LexicalIndex::search_tiered`] in this snapshot, with the given ranking weights.
    pub fn search_tiered_with(
        &self,
        query: &str,
        top_k: usize,
        filter: Option<&ScopeFilter<'_>>,
        weights: &RankWeights,
    ) -> Result<(Vec<LexicalHit>, usize)> {
        let (plan, found, all_terms, mut read) =
            self.index.ranked(&self.searcher, query, top_k, filter, weights)?;
        let mut hits = Vec::with_capacity(found.len());
        for c in found {
            let doc: TantivyDocument = match read.remove(&c.addr) {
                Some(doc) => doc,
                None => self.searcher.doc(c.addr).map_err(|e| map_err("Reading a lexical hit", e))?,
            };
            hits.push(self.index.hit(&doc, c.chunk_id, c.score, &plan));
        }
        Ok((hits, all_terms))
    }

    /// [`LexicalIndex::rank`] in this snapshot, with the given ranking weights.
    pub fn rank_with(
        &self,
        query: &str,
        top_k: usize,
        filter: Option<&ScopeFilter<'_>>,
        weights: &RankWeights,
    ) -> Result<(Vec<u64>, usize)> {
        let (plan, found, all_terms, read) =
            self.index.ranked(&self.searcher, query, top_k, filter, weights)?;
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
        self.index.paths.retain(&self.searcher);
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let Some(addr) = ranked.addrs.get(id) else {
                out.push(None);
                continue;
            };
            let paths = self.index.paths.get(self.searcher.segment_reader(addr.segment_ord))?;
            out.push(paths.and_then(|p| {
                let ord = p.ords.values_for_doc(addr.doc_id).next()?;
                p.names.get(usize::try_from(ord).ok()?).map(|n| n.to_string())
            }));
        }
        Ok(out)
    }

    /// [`LexicalIndex::fetch`] in this snapshot: every id ranked through this view is found.
    pub fn fetch(&self, ids: &[u64], query: &str) -> Result<Vec<Option<LexicalHit>>> {
        // What ranking this query through the view learnt; nothing for another query.
        let ranked = self.ranked.borrow();
        let known = (ranked.query == query).then_some(&*ranked);
        let analyzed;
        let plan = match known.and_then(|r| r.plan.as_ref()) {
            Some(plan) => plan,
            None => {
                analyzed = self.index.plan(&self.searcher, query)?;
                &analyzed
            }
        };
        let mut out = Vec::with_capacity(ids.len());
        for &id in ids {
            let addr = known.and_then(|r| r.addrs.get(&id));
            if let Some(doc) = addr.and_then(|a| known.and_then(|r| r.read.get(a))) {
                out.push(Some(self.index.hit(doc, id, 0.0, plan)));
                continue;
            }
            let doc = match addr {
                Some(&addr) => {
                    Some(self.searcher.doc(addr).map_err(|e| map_err("Reading a lexical hit", e))?)
                }
                None => self.index.stored(&self.searcher, id)?,
            };
            out.push(doc.map(|doc| self.index.hit(&doc, id, 0.0, plan)));
        }
        Ok(out)
    }
}

fn collect_chunk_ids(searcher: &tantivy::Searcher, query: &dyn Query, out: &mut Vec<u64>) -> Result<()> {
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

/// Writes to a [`LexicalIndex`]. Changes become visible (and durable) at
/// [`LexicalWriter::commit`]; dropping the writer without committing discards them.
pub struct LexicalWriter {
    /// `None` only after [`LexicalWriter::resize`] failed to open the new writer: every later
    /// add or commit then fails (and a delete does nothing), so nothing half-done is committed.
    writer: Option<IndexWriter>,
    index: Index,
    size: WriterSize,
    /// Something was added or deleted since the last commit or rollback.
    queued: std::sync::atomic::AtomicBool,
    /// Tells the index's reader to reload at its next search.
    committed: std::sync::Arc<std::sync::atomic::AtomicBool>,
    switch: Option<std::sync::Arc<SyncSwitch>>,
    fields: Fields,
}

impl std::fmt::Debug for LexicalWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LexicalWriter").field("size", &self.size).finish_non_exhaustive()
    }
}

fn writer_lost() -> Error {
    Error::internal("The lexical index writer could not be reopened; restart the server or run `reindex`.")
}

impl LexicalWriter {
    fn inner(&self) -> Result<&IndexWriter> {
        self.writer.as_ref().ok_or_else(writer_lost)
    }

    /// The writer to queue a change on, noting that something is queued.
    fn queue(&self) -> Result<&IndexWriter> {
        self.queued.store(true, std::sync::atomic::Ordering::Relaxed);
        self.inner()
    }

    /// The writer's current size.
    pub fn size(&self) -> WriterSize {
        self.size
    }

    /// Reopens the writer at `size` (nothing happens when it already has that size). Only
    /// between commits: with changes queued it fails and keeps them. tantivy's directory lock
    /// is held by the old writer, so it is dropped first; merges it was running are abandoned
    /// and considered again at the next commit.
    pub fn resize(&mut self, size: WriterSize) -> Result<()> {
        if self.size == size && self.writer.is_some() {
            return Ok(());
        }
        if self.queued.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(Error::internal("The lexical index writer cannot be resized with changes queued."));
        }
        let t0 = std::time::Instant::now();
        self.writer = None;
        self.writer = Some(open_index_writer(&self.index, size)?);
        tracing::debug!(target: "lvs::timing", "lexical writer {:?} -> {size:?} in {:?}", self.size, t0.elapsed());
        self.size = size;
        Ok(())
    }

    /// Queues a chunk for indexing (tokenized on tantivy's indexing threads). It does not
    /// replace an older chunk with the same id or path: delete those first.
    pub fn add(&self, doc: &LexicalDoc) -> Result<()> {
        let mut d = TantivyDocument::new();
        d.add_u64(self.fields.chunk_id, doc.chunk_id);
        d.add_text(self.fields.path, &doc.path);
        for piece in text_pieces(&doc.text, TEXT_PIECE_BYTES) {
            d.add_text(self.fields.text, piece);
        }
        d.add_text(self.fields.heading_path, &doc.heading_path);
        d.add_text(self.fields.anchor, &doc.anchor);
        d.add_text(self.fields.source_hash, &doc.source_hash);
        for term in doc.meta.iter() {
            d.add_text(self.fields.meta, term);
        }
        self.queue()?.add_document(d).map_err(|e| map_err("Indexing a chunk", e))?;
        Ok(())
    }

    fn delete_term(&self, term: Term) {
        if let Ok(w) = self.queue() {
            w.delete_term(term);
        }
    }

    /// Deletes every chunk of the file `path` (chunks added before this call).
    pub fn delete_path(&self, path: &str) {
        self.delete_term(Term::from_field_text(self.fields.path, path));
    }

    /// Deletes the chunk `chunk_id` (added before this call).
    pub fn delete_chunk(&self, chunk_id: u64) {
        self.delete_term(Term::from_field_u64(self.fields.chunk_id, chunk_id));
    }

    /// Deletes every chunk (added before this call).
    pub fn delete_all(&self) -> Result<()> {
        self.queue()?.delete_all_documents().map_err(|e| map_err("Clearing the lexical index", e))?;
        Ok(())
    }

    /// Commits everything queued so far, storing `generation` with the commit (read back by
    /// [`LexicalIndex::generation`]). The next search of any reader sees it (the reader
    /// reloads then; [`LexicalIndex::refresh`] does it ahead of time).
    pub fn commit(&mut self, generation: u64) -> Result<()> {
        let t0 = std::time::Instant::now();
        let writer = self.writer.as_mut().ok_or_else(writer_lost)?;
        let mut prepared = writer.prepare_commit().map_err(|e| map_err("Committing the lexical index", e))?;
        let t1 = std::time::Instant::now();
        prepared.set_payload(&generation.to_string());
        prepared.commit().map_err(|e| map_err("Committing the lexical index", e))?;
        self.queued.store(false, std::sync::atomic::Ordering::Relaxed);
        self.committed.store(true, std::sync::atomic::Ordering::Release);
        tracing::debug!(target: "lvs::timing", "lexical commit: prepare {:?} commit {:?}", t1 - t0, t1.elapsed());
        Ok(())
    }

    /// Relaxed commits write their files without `fsync` (`lexical/directory.rs`: a process
    /// crash loses nothing, an OS crash may); [`LexicalWriter::checkpoint`] syncs them later.
    /// Off by default.
    pub fn set_relaxed(&self, relaxed: bool) {
        if let Some(s) = &self.switch {
            s.set_relaxed(relaxed);
        }
    }

    /// Syncs what relaxed commits wrote (a no-op when nothing is unsynced).
    pub fn checkpoint(&self) -> Result<()> {
        match &self.switch {
            Some(s) => s.checkpoint().map_err(|e| Error::io("the lexical index", &e)),
            None => Ok(()),
        }
    }

    /// Merges every segment into one and waits until the merge is published. The chunks, their
    /// ids and the commit's generation stay as they are; readers see the merged segment at their
    /// next search. Returns how many segments were merged (0 when there was at most one).
    ///
    /// The end of a reindex that wrote many files calls it (`Indexer::reindex`);
    /// `benches/query_stages.rs --merge` measures what one segment instead of several does to
    /// a query (`docs/performance.md`, "One segment after a large reindex").
    pub fn merge_all(&mut self) -> Result<usize> {
        let ids = self.index.searchable_segment_ids().map_err(|e| map_err("Reading the lexical index", e))?;
        if ids.len() < 2 {
            return Ok(0);
        }
        let writer = self.writer.as_mut().ok_or_else(writer_lost)?;
        writer.merge(&ids).wait().map_err(|e| map_err("Merging the lexical index", e))?;
        Ok(ids.len())
    }

    /// Discards everything queued since the last commit.
    pub fn rollback(&mut self) -> Result<()> {
        if let Some(w) = self.writer.as_mut() {
            w.rollback().map_err(|e| map_err("Rolling back the lexical index", e))?;
        }
        self.queued.store(false, std::sync::atomic::Ordering::Relaxed);
        Ok(())
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

/// The tantivy query of one clause over both fields.
fn clause_query(f: &Fields, c: &Clause, w: &RankWeights) -> Box<dyn Query> {
    Box::new(BooleanQuery::new(clause_leaves(f, c, w, 1.0)))
}

/// The leaf queries (terms and phrases over both fields, the heading path's boosted by
/// [`RankWeights::heading`], a verb's or adjective's by [`RankWeights::content_word`], all
/// by `scale`) of one clause, all `Should`.
fn clause_leaves(f: &Fields, c: &Clause, w: &RankWeights, scale: f32) -> Vec<(Occur, Box<dyn Query>)> {
    let mut subs: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    for (k, field) in f.searched().into_iter().enumerate() {
        let start = subs.len();
        for phrase in &c.phrases {
            let terms: Vec<(usize, Term)> =
                phrase.iter().map(|(o, t)| (*o, Term::from_field_text(field, t))).collect();
            match terms.len() {
                0 => {}
                1 => subs.push((Occur::Should, term_query(field, &phrase[0].1))),
                _ => subs.push((Occur::Should, Box::new(PhraseQuery::new_with_offset(terms)))),
            }
        }
        if c.within.is_empty() {
            for t in &c.terms {
                subs.push((Occur::Should, term_query(field, t)));
            }
        } else {
            // A longer word counts as the word itself, scaled down, and only where it scores
            // more: a chunk with the word keeps its score, one with only a longer word still
            // matches the clause.
            let word = c.terms.iter().map(|t| (Occur::Should, term_query(field, t))).collect();
            let within = c
                .within
                .iter()
                .map(|(t, boost)| {
                    let q: Box<dyn Query> =
                        Box::new(tantivy::query::BoostQuery::new(term_query(field, t), boost[k]));
                    (Occur::Should, q)
                })
                .collect();
            let either: Vec<Box<dyn Query>> =
                vec![Box::new(BooleanQuery::new(word)), Box::new(BooleanQuery::new(within))];
            subs.push((Occur::Should, Box::new(tantivy::query::DisjunctionMaxQuery::new(either))));
        }
        let mut boost = if field == f.heading_path { w.heading * scale } else { scale };
        if c.content {
            boost *= w.content_word;
        }
        if boost != 1.0 {
            for sub in subs.iter_mut().skip(start) {
                let q = std::mem::replace(&mut sub.1, Box::new(tantivy::query::EmptyQuery));
                sub.1 = Box::new(tantivy::query::BoostQuery::new(q, boost));
            }
        }
    }
    subs
}

/// The proximity leaves: for each two strict clauses at most [`RankWeights::proximity_reach`]
/// apart in the query, the last token of the first and the first token of the second as a
/// sloppy phrase over the text (tantivy's slop is a distance, so either order counts), boosted
/// by [`RankWeights::proximity`] (none when it is 0). Rewards a section where the query's
/// words stand together over a sibling where they are scattered.
fn proximity_leaves(f: &Fields, plan: &Plan, w: &RankWeights) -> Vec<(Occur, Box<dyn Query>)> {
    if w.proximity <= 0.0 {
        return Vec::new();
    }
    let mut out: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    let reach = w.proximity_reach.max(1) as usize;
    let pairs = (0..plan.strict.len())
        .flat_map(|i| (i + 1..plan.strict.len().min(i + 1 + reach)).map(move |j| (i, j)))
        .take(MAX_PROXIMITY_PAIRS);
    for (i, j) in pairs {
        let (Some((_, a)), Some((b, _))) = (plan.strict[i].ends(), plan.strict[j].ends()) else { continue };
        if a == b {
            continue;
        }
        let terms = vec![(0, Term::from_field_text(f.text, a)), (1, Term::from_field_text(f.text, b))];
        let q = PhraseQuery::new_with_offset_and_slop(terms, w.proximity_slop);
        out.push((Occur::Should, Box::new(tantivy::query::BoostQuery::new(Box::new(q), w.proximity))));
    }
    out
}

fn term_query(field: Field, text: &str) -> Box<dyn Query> {
    Box::new(TermQuery::new(Term::from_field_text(field, text), IndexRecordOption::WithFreqs))
}

/// The first-tier query (all strict clauses required, loose terms scoring) and, when it can
/// match more, the second-tier query (any clause or loose term). The second tier is one flat
/// disjunction of leaves (the same score as nesting, a sum), which lets tantivy prune with
/// Block-WAND when the leaves are plain terms.
fn tier_queries(f: &Fields, plan: &Plan, w: &RankWeights) -> (Box<dyn Query>, Option<Box<dyn Query>>) {
    let loose: Vec<Clause> = plan.loose.iter().map(|t| Clause::term(t.clone())).collect();
    let loose_leaves = |c: &Clause| clause_leaves(f, c, w, w.loose);
    let mut first: Vec<(Occur, Box<dyn Query>)> =
        plan.strict.iter().map(|c| (Occur::Must, clause_query(f, c, w))).collect();
    first.extend(loose.iter().flat_map(loose_leaves));
    first.extend(proximity_leaves(f, plan, w));
    let first: Box<dyn Query> = Box::new(BooleanQuery::new(first));
    if plan.strict.len() < 2 && loose.is_empty() {
        return (first, None);
    }
    let mut rest: Vec<(Occur, Box<dyn Query>)> =
        plan.strict.iter().flat_map(|c| clause_leaves(f, c, w, 1.0)).collect();
    rest.extend(loose.iter().flat_map(loose_leaves));
    rest.extend(proximity_leaves(f, plan, w));
    (first, Some(Box::new(BooleanQuery::new(rest))))
}

/// The `path` values of a segment, in term-ordinal order, with its ordinal column.
struct SegmentPaths {
    names: Vec<Box<str>>,
    ords: tantivy::columnar::Column<u64>,
}

/// Per-segment data read once per segment and reused by every search (path lists, the
/// katakana words of `infix.rs`). Segments are immutable, so entries never go stale; entries
/// of segments no longer searched are dropped.
pub(super) struct SegmentCache<T> {
    segments: std::sync::Mutex<HashMap<tantivy::index::SegmentId, std::sync::Arc<T>>>,
}

impl<T> Default for SegmentCache<T> {
    fn default() -> Self {
        SegmentCache { segments: Default::default() }
    }
}

impl<T> SegmentCache<T> {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<tantivy::index::SegmentId, std::sync::Arc<T>>> {
        self.segments.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Drops entries of segments that `searcher` no longer has.
    pub(super) fn retain(&self, searcher: &tantivy::Searcher) {
        let live: HashSet<tantivy::index::SegmentId> =
            searcher.segment_readers().iter().map(|r| r.segment_id()).collect();
        self.lock().retain(|id, _| live.contains(id));
    }

    /// The entry of `reader`'s segment, made by `read` the first time (a `None` is not kept).
    pub(super) fn get_or_read(
        &self,
        reader: &tantivy::SegmentReader,
        read: impl FnOnce() -> Result<Option<T>>,
    ) -> Result<Option<std::sync::Arc<T>>> {
        let id = reader.segment_id();
        if let Some(p) = self.lock().get(&id) {
            return Ok(Some(p.clone()));
        }
        let Some(value) = read()? else { return Ok(None) };
        let value = std::sync::Arc::new(value);
        self.lock().insert(id, value.clone());
        Ok(Some(value))
    }
}

/// Per-segment path lists for scoped searches (looking ordinals up one by one decodes a
/// dictionary block each time; streaming the dictionary once is cheap).
type PathCache = SegmentCache<SegmentPaths>;

impl PathCache {
    /// The paths of `reader`'s segment (`None` if it has no path column).
    fn get(&self, reader: &tantivy::SegmentReader) -> Result<Option<std::sync::Arc<SegmentPaths>>> {
        self.get_or_read(reader, || {
            let err = |e: std::io::Error| map_err("Reading indexed paths", TantivyError::from(e));
            let Some(col) =
                reader.fast_fields().str(F_PATH).map_err(|e| map_err("Reading indexed paths", e))?
            else {
                return Ok(None);
            };
            let mut names = Vec::with_capacity(col.num_terms());
            let mut stream = col.dictionary().stream().map_err(err)?;
            while stream.advance() {
                names.push(String::from_utf8_lossy(stream.key()).into());
            }
            Ok(Some(SegmentPaths { names, ords: col.ords().clone() }))
        })
    }
}

/// Stored documents ranking already read (the re-rank's pool), so the hits among them are not
/// read twice.
type ReadDocs = HashMap<DocAddress, TantivyDocument>;

/// A candidate hit.
#[derive(Clone, Copy, Debug)]
struct Candidate {
    score: Score,
    chunk_id: u64,
    addr: DocAddress,
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
fn top_k_in_scope(
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
