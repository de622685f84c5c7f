//! The writer: adding and deleting chunks, commits with their generation, the writer's size
//! (threads and memory), its merge policy, and merging into one segment.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tantivy::{Index, IndexWriter, TantivyDocument, Term};

use super::LexicalDoc;
use super::directory::SyncSwitch;
use super::errors::map_err;
use super::schema::Fields;
use crate::error::{Error, Result};

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

/// Chunk text reaches the analyzer in pieces of at most this many bytes (values of one field), so
/// one huge paragraph costs bounded analyzer memory (measured: `docs/reliability.md`, the 31 MB line).
const TEXT_PIECE_BYTES: usize = 64 * 1024;

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

/// Writes to a [`LexicalIndex`](super::LexicalIndex). Changes become visible (and durable) at
/// [`LexicalWriter::commit`]; dropping the writer without committing discards them.
pub struct LexicalWriter {
    /// `None` only after [`LexicalWriter::resize`] failed to open the new writer: every later
    /// add or commit then fails (and a delete does nothing), so nothing half-done is committed.
    writer: Option<IndexWriter>,
    index: Index,
    size: WriterSize,
    /// Something was added or deleted since the last commit or rollback.
    queued: AtomicBool,
    /// Tells the index's reader to reload at its next search.
    committed: Arc<AtomicBool>,
    switch: Option<Arc<SyncSwitch>>,
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
    /// A writer of `index` at `size` (fails with `INDEX_NOT_READY` while another writer holds
    /// it); each commit sets `committed`, the reader's flag (`freshness.rs`).
    pub(super) fn open(
        index: &Index,
        size: WriterSize,
        fields: Fields,
        committed: Arc<AtomicBool>,
        switch: Option<Arc<SyncSwitch>>,
    ) -> Result<LexicalWriter> {
        Ok(LexicalWriter {
            writer: Some(open_index_writer(index, size)?),
            index: index.clone(),
            size,
            queued: Default::default(),
            committed,
            switch,
            fields,
        })
    }

    fn inner(&self) -> Result<&IndexWriter> {
        self.writer.as_ref().ok_or_else(writer_lost)
    }

    /// The writer to queue a change on, noting that something is queued.
    fn queue(&self) -> Result<&IndexWriter> {
        self.queued.store(true, Ordering::Relaxed);
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
        if self.queued.load(Ordering::Relaxed) {
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
        d.add_text(self.fields.heading, Fields::own_heading(&doc.heading_path));
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
    /// [`LexicalIndex::generation`](super::LexicalIndex::generation)). The next search of any reader sees it (the reader
    /// reloads then; [`LexicalIndex::refresh`](super::LexicalIndex::refresh) does it ahead of time).
    pub fn commit(&mut self, generation: u64) -> Result<()> {
        let t0 = std::time::Instant::now();
        let writer = self.writer.as_mut().ok_or_else(writer_lost)?;
        let mut prepared = writer.prepare_commit().map_err(|e| map_err("Committing the lexical index", e))?;
        let t1 = std::time::Instant::now();
        prepared.set_payload(&generation.to_string());
        prepared.commit().map_err(|e| map_err("Committing the lexical index", e))?;
        self.queued.store(false, Ordering::Relaxed);
        self.committed.store(true, Ordering::Release);
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
        self.queued.store(false, Ordering::Relaxed);
        Ok(())
    }
}
