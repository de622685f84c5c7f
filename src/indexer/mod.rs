//! Keeps the derived index in step with the Markdown: scan → diff → parse → chunk → write.
//!
//! The indexer owns the index directory's write side: the writer lock (`LOCK`), the bookkeeping
//! store (`meta.redb`) and the lexical index's writer (`lexical/`). Readers (search) open the
//! lexical index on their own and never take the lock, so a second process can search while
//! this one writes.
//!
//! Invariants:
//!
//! - One writer per index directory: [`WriterLock`] is an OS file lock, released when the
//!   process dies, so a killed reindex never leaves a stale lock behind.
//! - Idempotent: an unchanged workspace is a no-op (size + mtime fast path, then SHA-256).
//! - Commit order is fixed: the store commits generation `g` (durably), then the lexical index
//!   commits `g` (an edit's without `fsync`, see `SessionMarker`), then `status.json`, then the
//!   link graph snapshot (`links.json`, rewritten only when links changed, and `links.gen`) is
//!   written for `g` — a waiting edit is answered before the snapshot. On open a lexical
//!   index one generation behind is repaired by replaying the paths of the store's last batch;
//!   any other mismatch rebuilds the lexical index from the store; a link snapshot of another
//!   generation is rewritten from the store's link records.
//! - A file that cannot be indexed (not UTF-8, too large) is reported, never fatal.

mod layout;
mod service;
mod vectors;
mod watch;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

pub use layout::{IndexLayout, SessionMarker, Snapshot, WriterLock};
pub use service::{EmbedFn, IDLE_AFTER, IndexService, ServiceParts, WATCHER_PATH};
use vectors::VectorSync;
pub use vectors::{EmbedJob, VectorState};
pub use watch::{FileWatcher, QUIET_PERIOD, watch};

use crate::chunk::{CHUNKER_VERSION, ChunkOptions, chunk, embedding_text_hash};
use crate::config::EmbeddingConfig;
use crate::error::{Error, ErrorCode, ErrorDetail, Result};
use crate::lexical::{ANALYZER_VERSION, LexicalDoc, LexicalIndex, LexicalWriter};
use crate::links::{DocLinks, LINKS_VERSION, LinkGraph};
use crate::markdown::Document;
use crate::store::{Batch, ChunkRecord, DocumentRecord, ElementRecord, RECORD_VERSION, Store};
use crate::text::rfc3339_utc;
use crate::wire::{Compatibility, ReindexResult};
use crate::workspace::{FileEntry, GlobFilter, RelPath, SourceDocument, Workspace};

/// Our index schema version: the record layout plus the lexical schema.
pub const SCHEMA_VERSION: &str = "lvs-1";

/// Files per commit during a full reindex: bounds memory and the work a crash can lose.
const COMMIT_EVERY: usize = 1_000;

/// tantivy writer memory budget.
const WRITER_HEAP_BYTES: usize = 200_000_000;

/// Progress of a reindex, reported before and after each file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Files processed so far.
    pub processed: u64,
    /// Files to process, once known.
    pub total: Option<u64>,
    /// The file being processed.
    pub current_path: Option<String>,
    /// The index is being rebuilt from scratch.
    pub destructive: bool,
}

/// What to reindex.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReindexOptions {
    /// Re-read every file, not only changed ones.
    pub all: bool,
    /// Rebuild from scratch when the manifest is incompatible.
    pub force: bool,
}

/// The manifest the lexical index is built for. Embedding settings are not part of it, so
/// turning embeddings on or off never rebuilds the lexical index.
pub fn lexical_manifest(opts: &ChunkOptions) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("schema_version".to_owned(), SCHEMA_VERSION.to_owned()),
        ("record_version".to_owned(), RECORD_VERSION.to_string()),
        ("chunker_version".to_owned(), CHUNKER_VERSION.to_owned()),
        ("analyzer_version".to_owned(), ANALYZER_VERSION.to_owned()),
        ("chunking_max_chunk_bytes".to_owned(), opts.max_chunk_bytes.to_string()),
        ("chunking_max_elements".to_owned(), opts.max_elements.to_string()),
        ("chunking_include_front_matter".to_owned(), opts.include_front_matter.to_string()),
        ("links_version".to_owned(), LINKS_VERSION.to_owned()),
    ])
}

/// Compares a stored manifest with the current one (`contract.md` §4.2).
pub fn compatibility(stored: &BTreeMap<String, String>, current: &BTreeMap<String, String>) -> Compatibility {
    let problems: Vec<String> = current
        .iter()
        .filter_map(|(k, v)| match stored.get(k) {
            Some(old) if old == v => None,
            Some(old) => Some(format!("{k}: indexed '{old}', current '{v}'")),
            // A key added to the manifest later is empty when unset: older indexes match it.
            None if v.is_empty() => None,
            None => Some(format!("{k}: indexed <missing>, current '{v}'")),
        })
        .collect();
    Compatibility { is_compatible: problems.is_empty(), problems }
}

/// `<subject> is incompatible with current configuration:` + the problems + how to rebuild
/// (`contract.md` §4.2); `subject` is `Index` for the lexical index, or names the vector index.
pub(crate) fn incompatible_message(subject: &str, c: &Compatibility) -> String {
    let mut msg = format!("{subject} is incompatible with current configuration:");
    for p in &c.problems {
        msg.push_str("\n- ");
        msg.push_str(p);
    }
    msg.push_str("\nRun kb_reindex with force=true or CLI `reindex --force` to rebuild the index.");
    msg
}

fn mtime_ns(t: SystemTime) -> u128 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos())
}

/// The writer side of one project's index.
pub struct Indexer {
    workspace: Arc<Workspace>,
    filter: GlobFilter,
    options: ChunkOptions,
    store: Store,
    lexical: LexicalIndex,
    writer: LexicalWriter,
    generation: u64,
    layout: IndexLayout,
    vectors: Option<VectorSync>,
    /// The link graph as last written to `links.json` (loaded from the store on first need).
    links: Option<LinkGraph>,
    /// Paths of commits whose link snapshot is not written yet ([`Indexer::finish_commit`]).
    links_pending: Option<Vec<String>>,
    /// `SESSION`: kept on disk if a commit does not complete (dropped before the lock).
    session: SessionMarker,
    _lock: WriterLock,
}

/// Opens the store; a damaged one is moved aside as `meta.redb.damaged` (one copy, replaced each
/// time, for a bug report) and recreated empty, so the next run re-indexes the Markdown and the
/// lexical index is emptied by [`Indexer::repair`] (its generation no longer matches).
fn open_store(path: &std::path::Path) -> Result<Store> {
    match Store::open(path) {
        Err(e) if e.is(ErrorDetail::IndexDamaged) => {
            let cause = std::error::Error::source(&e).map(|s| s.to_string()).unwrap_or_default();
            tracing::warn!(
                "the index store is damaged ({cause}); starting a new one, the Markdown is indexed again"
            );
            let aside = path.with_extension("redb.damaged");
            std::fs::rename(path, &aside).map_err(|e| Error::io("the damaged index store", &e))?;
            Store::open(path)
        }
        other => other,
    }
}

/// Opens the lexical index and its writer; a damaged one (truncated or missing segment files,
/// garbage metadata) is recreated empty, and [`Indexer::repair`] then refills it from the store:
/// it is derived data, and we hold the writer lock, so nobody else is writing it.
fn open_lexical(dir: &std::path::Path) -> Result<(LexicalIndex, LexicalWriter)> {
    let opened = LexicalIndex::open_or_create(dir).and_then(|l| l.writer(WRITER_HEAP_BYTES).map(|w| (l, w)));
    match opened {
        Err(e) if e.is(ErrorDetail::IndexDamaged) => {
            let cause = std::error::Error::source(&e).map(|s| s.to_string()).unwrap_or_default();
            tracing::warn!("the lexical index is damaged ({cause}); rebuilding it from the store");
            let lexical = LexicalIndex::recreate(dir)?;
            let writer = lexical.writer(WRITER_HEAP_BYTES)?;
            Ok((lexical, writer))
        }
        other => other,
    }
}

impl Indexer {
    /// Takes the writer lock, opens both stores and repairs an interrupted commit. With
    /// `embedding` (embeddings on), vectors are kept up to date after every commit.
    pub fn open(
        workspace: Arc<Workspace>,
        filter: GlobFilter,
        options: ChunkOptions,
        layout: &IndexLayout,
        embedding: Option<&EmbeddingConfig>,
    ) -> Result<Self> {
        let lock = WriterLock::acquire(layout)?;
        let (session, left) = SessionMarker::begin(layout)?;
        if left.interrupted {
            tracing::info!("the last index writer did not close cleanly; checking the index");
        }
        let vectors = embedding.map(|e| VectorSync::new(e, options.include_heading_context, layout));
        let store = open_store(&layout.store_path())?;
        let (lexical, writer) = if left.other_boot {
            // Its unsynced lexical commits may be torn: rebuilt from the store by `repair`.
            tracing::warn!(
                "the machine restarted while the index was being written; rebuilding the lexical index from the store"
            );
            let lexical = LexicalIndex::recreate(&layout.lexical_dir())?;
            let writer = lexical.writer(WRITER_HEAP_BYTES)?;
            (lexical, writer)
        } else {
            open_lexical(&layout.lexical_dir())?
        };
        let generation = store.generation()?;
        let mut vectors = vectors;
        if let Some(v) = vectors.as_mut() {
            let previous = Snapshot::read(layout).and_then(|s| s.vectors);
            v.init_state(&store, previous.as_ref())?;
        }
        let mut indexer = Indexer {
            workspace,
            filter,
            options,
            store,
            lexical,
            writer,
            generation,
            layout: layout.clone(),
            vectors,
            links: None,
            links_pending: None,
            session,
            _lock: lock,
        };
        // A failed repair keeps the marker, so the next start tries again.
        indexer.session.clean = false;
        indexer.repair()?;
        indexer.session.clean = true;
        Ok(indexer)
    }

    /// The bookkeeping store (read access for status).
    pub fn store(&self) -> &Store {
        &self.store
    }

    fn repair(&mut self) -> Result<()> {
        // `None`: the lexical index never committed (new, or recreated after damage).
        let lexical_generation = self.lexical.generation();
        if lexical_generation.unwrap_or(0) == self.generation {
            if self.layout.links_generation() != Some(self.generation) || !self.layout.links_path().is_file()
            {
                tracing::warn!("the link graph snapshot is missing or behind; rewriting it from the store");
                self.links = None;
                self.write_links(&[])?;
            }
            if Snapshot::read(&self.layout).map(|s| s.generation) != Some(self.generation) {
                tracing::warn!("status.json is missing, unreadable or behind; rewriting it from the store");
                self.write_snapshot()?;
            }
            return Ok(());
        }
        let paths: Vec<String> = if lexical_generation.is_some_and(|g| g + 1 == self.generation) {
            tracing::warn!(
                "the last index commit was interrupted; replaying {} paths",
                self.store.last_batch()?.len()
            );
            self.store.last_batch()?
        } else {
            tracing::warn!(
                "lexical index generation {} does not match store generation {}; rebuilding it from the store",
                lexical_generation.unwrap_or(0),
                self.generation
            );
            self.writer.delete_all()?;
            self.store.documents()?.into_keys().collect()
        };
        for path in &paths {
            self.writer.delete_path(path);
            if let Some(doc) = self.store.document(path)? {
                for (id, c) in self.store.chunks(&doc.chunk_ids)? {
                    self.writer.add(&lexical_doc(id, &c, &doc.source_hash))?;
                }
            }
        }
        self.writer.commit(self.generation)?;
        self.links = None;
        self.write_links(&[])?;
        self.write_snapshot()
    }

    fn commit(&mut self, batch: Batch) -> Result<()> {
        self.commit_searchable(batch)?;
        self.finish_commit()
    }

    /// The first part of a commit: the store, the lexical index and `status.json` (searches
    /// see the commit after this). [`Indexer::finish_commit`] writes the link snapshot.
    fn commit_searchable(&mut self, batch: Batch) -> Result<()> {
        self.session.clean = false;
        let generation = self.generation + 1;
        let t0 = std::time::Instant::now();
        let touched = batch.commit(generation)?;
        let t1 = std::time::Instant::now();
        crate::failpoint("indexer.between-store-and-lexical-commit");
        self.writer.commit(generation)?;
        let t2 = std::time::Instant::now();
        self.generation = generation;
        self.links_pending.get_or_insert_default().extend(touched);
        self.write_snapshot()?;
        tracing::debug!(
            target: "lvs::timing",
            "commit g{generation}: store {:?} lexical {:?} status {:?}",
            t1 - t0,
            t2 - t1,
            t2.elapsed()
        );
        Ok(())
    }

    /// The rest of a commit: the link graph snapshot (`links.json` can be megabytes; it is
    /// written after a waiting edit is answered, before the edit counts as synchronized).
    pub fn finish_commit(&mut self) -> Result<()> {
        let t0 = std::time::Instant::now();
        let Some(touched) = self.links_pending.take() else { return Ok(()) };
        if let Err(e) = self.write_links(&touched) {
            self.links_pending = Some(touched);
            return Err(e);
        }
        self.session.clean = true;
        tracing::debug!(target: "lvs::timing", "links {:?}", t0.elapsed());
        Ok(())
    }

    /// Brings the link graph snapshot to the current generation: the `touched` documents are
    /// re-read from the store (the whole graph when it is not loaded yet). `links.json` is
    /// rewritten only when a document's links or anchors changed; `links.gen` always records the
    /// generation the snapshot is valid for, so an unchanged graph costs one tiny write and a
    /// crash before the snapshot was written is still detected on open.
    fn write_links(&mut self, touched: &[String]) -> Result<()> {
        let (graph, changed) = match self.links.as_mut() {
            Some(graph) => {
                let mut changed = false;
                for path in touched {
                    let new = self.store.links(path)?.map(|b| decode_links(&b)).transpose()?;
                    if graph.docs.get(path) != new.as_ref() {
                        changed = true;
                        match new {
                            Some(links) => graph.docs.insert(path.clone(), links),
                            None => graph.docs.remove(path),
                        };
                    }
                }
                (graph, changed)
            }
            None => {
                let mut graph = LinkGraph::new(self.generation);
                for (path, bytes) in self.store.all_links()? {
                    graph.docs.insert(path, decode_links(&bytes)?);
                }
                (self.links.insert(graph), true)
            }
        };
        if changed {
            graph.generation = self.generation;
            graph.write(&self.layout.links_path())?;
        }
        crate::workspace::write_file_atomic(
            &self.layout.links_generation_path(),
            self.generation.to_string().as_bytes(),
            "the link graph generation",
        )
    }

    /// Writes `status.json`: what status readers in any process show without opening the store.
    fn write_snapshot(&self) -> Result<()> {
        let (documents, chunks) = self.store.counts()?;
        let snapshot = Snapshot {
            generation: self.generation,
            documents,
            chunks,
            last_indexed_at_utc: rfc3339_utc(SystemTime::now()),
            manifest: self.store.manifest()?,
            vectors: self.vectors.as_ref().map(|v| v.state().clone()),
        };
        snapshot.write(&self.layout)
    }

    /// The stored manifest's compatibility with the current settings.
    pub fn compatibility(&self) -> Result<Compatibility> {
        Ok(compatibility(&self.store.manifest()?, &lexical_manifest(&self.options)))
    }

    /// Full or incremental reindex (`contract.md` §6.1).
    pub fn reindex(
        &mut self,
        opts: ReindexOptions,
        progress: &mut dyn FnMut(&Progress),
    ) -> Result<ReindexResult> {
        let mut state = Progress::default();
        progress(&state);
        // Durable commits from here: first sync what relaxed edit commits left unsynced.
        self.writer.checkpoint()?;
        let manifest = lexical_manifest(&self.options);
        let stored_manifest = self.store.manifest()?;
        let mut batch = self.store.batch()?;
        let mut documents = self.store.documents()?;
        if stored_manifest.is_empty() {
            batch.set_manifest(&manifest)?;
        } else {
            let c = compatibility(&stored_manifest, &manifest);
            if !c.is_compatible {
                if !opts.force {
                    return Err(Error::index_not_ready(incompatible_message("Index", &c)));
                }
                state.destructive = true;
                progress(&state);
                batch.reset()?;
                batch.set_manifest(&manifest)?;
                self.writer.delete_all()?;
                documents.clear();
            }
        }
        let files = self.workspace.scan_markdown(&self.filter)?;
        let mut result = ReindexResult { scanned_files: files.len() as u64, ..ReindexResult::default() };
        state.total = Some(files.len() as u64);
        progress(&state);

        let present: BTreeSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
        for path in documents.keys().filter(|p| !present.contains(p.as_str())) {
            batch.delete_document(path)?;
            self.writer.delete_path(path);
            result.deleted_files += 1;
        }
        let mut since_commit = 0;
        for entry in &files {
            state.current_path = Some(entry.path.as_str().to_owned());
            progress(&state);
            let stored = documents.get(entry.path.as_str());
            match self.index_file(&mut batch, entry, stored, opts.all)? {
                FileOutcome::Skipped | FileOutcome::Touched => result.skipped_files += 1,
                FileOutcome::Indexed(chunks) => {
                    result.indexed_files += 1;
                    result.chunks_indexed += chunks;
                }
                FileOutcome::Failed(reason) => {
                    if stored.is_some() {
                        result.deleted_files += 1;
                    }
                    result.failed_files.push(reason);
                }
            }
            state.processed += 1;
            progress(&state);
            since_commit += 1;
            if since_commit >= COMMIT_EVERY {
                self.commit(batch)?;
                batch = self.store.batch()?;
                since_commit = 0;
            }
        }
        self.commit(batch)?;
        state.current_path = None;
        progress(&state);
        if !result.failed_files.is_empty() {
            result.warning = Some(format!(
                "{} file(s) could not be indexed; see failedFiles, fix or exclude them.",
                result.failed_files.len()
            ));
        }
        if let Some(v) = self.vectors.as_mut() {
            v.after_commit(0, false);
        }
        Ok(result)
    }

    /// Brings the given paths up to date (after a mutation or a watched change). Missing files
    /// are removed from the index. Returns the number of files whose index entry changed.
    pub fn reconcile(&mut self, paths: &[RelPath]) -> Result<u64> {
        let changed = self.reconcile_searchable(paths)?;
        self.finish_commit()?;
        Ok(changed)
    }

    /// [`Indexer::reconcile`] up to the point where searches see the change; the caller then
    /// calls [`Indexer::finish_commit`] (the service answers the waiting edit in between).
    pub fn reconcile_searchable(&mut self, paths: &[RelPath]) -> Result<u64> {
        let t0 = std::time::Instant::now();
        let stored_manifest = self.store.manifest()?;
        let manifest = lexical_manifest(&self.options);
        if !stored_manifest.is_empty() && !compatibility(&stored_manifest, &manifest).is_compatible {
            return Err(Error::index_not_ready(
                "Index is incompatible with current configuration. Run kb_reindex with force=true.",
            ));
        }
        let mut batch = self.store.batch()?;
        // Whether the batch holds anything to commit besides changed documents.
        let mut touched = stored_manifest.is_empty();
        if touched {
            batch.set_manifest(&manifest)?;
        }
        let (mut changed, mut written) = (0, 0);
        for path in paths {
            let stored = self.store.document(path.as_str())?;
            let included = self.filter.matches(path.as_str());
            let entry = match self.workspace.stat(path) {
                Ok((len, modified)) if included => Some(FileEntry { path: path.clone(), len, modified }),
                Ok(_) => None,
                Err(e) if e.code == ErrorCode::NotFound => None,
                Err(e) => return Err(e),
            };
            match entry {
                None => {
                    if stored.is_some() {
                        batch.delete_document(path.as_str())?;
                        self.writer.delete_path(path.as_str());
                        changed += 1;
                    }
                }
                Some(entry) => match self.index_file(&mut batch, &entry, stored.as_ref(), false)? {
                    FileOutcome::Skipped => {}
                    FileOutcome::Touched => touched = true,
                    FileOutcome::Indexed(chunks) => {
                        changed += 1;
                        written += chunks;
                    }
                    FileOutcome::Failed(_) => changed += 1,
                },
            }
        }
        if changed == 0 && !touched {
            // Nothing changed (e.g. the watcher's echo of a write this process already
            // indexed): no commit, no new generation. Dropping the batch aborts it.
            return Ok(0);
        }
        if let Some(v) = self.vectors.as_mut() {
            v.after_commit(written, true);
        }
        let t1 = std::time::Instant::now();
        // An edit's lexical commit skips fsync where a crash of the machine can be detected
        // (`SessionMarker`); the store commit stays durable.
        self.writer.set_relaxed(self.session.boot_id.is_some());
        let committed = self.commit_searchable(batch);
        self.writer.set_relaxed(false);
        committed?;
        tracing::debug!(target: "lvs::timing", "reconcile {} paths: prepare {:?} total {:?}", paths.len(), t1 - t0, t0.elapsed());
        Ok(changed)
    }

    /// Whether embeddings are on for this writer.
    pub fn has_vectors(&self) -> bool {
        self.vectors.is_some()
    }

    /// Before a reindex's vector catch-up: checks the stored vectors (`force` rebuilds
    /// incompatible ones). Returns a warning when they need a forced rebuild.
    pub fn vectors_prepare(&mut self, force: bool) -> Result<Option<String>> {
        let Some(v) = self.vectors.as_mut() else { return Ok(None) };
        let warning = v.prepare(&self.store, force)?;
        self.write_snapshot()?;
        Ok(warning)
    }

    /// Whether the vector catch-up has a step to take (`reindex`: retry the endpoint whatever
    /// the back-off after a failure says).
    pub fn vectors_have_work(&self, reindex: bool) -> bool {
        self.vectors.as_ref().is_some_and(|v| v.has_work(reindex))
    }

    /// One catch-up step: copies what it can and returns the next embedding request, or `None`
    /// when nothing is left to request now (what was done is saved then).
    pub fn vectors_next_job(&mut self, reindex: bool) -> Result<Option<EmbedJob>> {
        let Some(v) = self.vectors.as_mut() else { return Ok(None) };
        let job = v.next_job(&self.store, reindex)?;
        if job.is_none() {
            self.write_snapshot()?;
        }
        Ok(job)
    }

    /// Takes an embedding request's answer; returns the failure warning when it failed.
    pub fn vectors_accept(&mut self, job: EmbedJob, answer: Result<Vec<Vec<f32>>>) -> Result<Option<String>> {
        let Some(v) = self.vectors.as_mut() else { return Ok(None) };
        let warning = v.accept(&self.store, job, answer)?;
        self.write_snapshot()?;
        Ok(warning)
    }

    /// `(done, total)` chunks of the running vector catch-up.
    pub fn vectors_progress(&self) -> Option<(u64, u64)> {
        self.vectors.as_ref().map(VectorSync::progress)
    }

    /// Saves the vectors embedded since the last save (before the writer closes).
    pub fn vectors_persist(&mut self) -> Result<()> {
        let Some(v) = self.vectors.as_mut() else { return Ok(()) };
        v.persist(&self.store)?;
        self.write_snapshot()
    }

    fn index_file(
        &mut self,
        batch: &mut Batch,
        entry: &FileEntry,
        stored: Option<&DocumentRecord>,
        all: bool,
    ) -> Result<FileOutcome> {
        let path = entry.path.as_str();
        let mtime = mtime_ns(entry.modified);
        if !all && stored.is_some_and(|d| d.len == entry.len && d.mtime_ns == mtime) {
            return Ok(FileOutcome::Skipped);
        }
        let source = match self.workspace.read_markdown(&entry.path) {
            Ok(s) => s,
            Err(e) if matches!(e.code, ErrorCode::UnsupportedFormat | ErrorCode::NotFound) => {
                if stored.is_some() {
                    batch.delete_document(path)?;
                    self.writer.delete_path(path);
                }
                return Ok(FileOutcome::Failed(format!("{path}: {}", e.message)));
            }
            Err(e) => return Err(e),
        };
        if !all && let Some(old) = stored.filter(|d| d.source_hash == source.source_hash) {
            // Same bytes, new metadata (e.g. `touch`): remember it for the fast path.
            let record =
                DocumentRecord { len: source.len, mtime_ns: mtime_ns(source.modified), ..old.clone() };
            batch.touch_document(path, &record)?;
            return Ok(FileOutcome::Touched);
        }
        let chunks = self.write_document(batch, &source)?;
        Ok(FileOutcome::Indexed(chunks))
    }

    fn write_document(&mut self, batch: &mut Batch, source: &SourceDocument) -> Result<u64> {
        let path = source.path.as_str();
        let doc = Document::parse(&source.text);
        let chunks = chunk(&doc, &self.options);
        let ids = batch.allocate_chunk_ids(chunks.len())?;
        let mut records = Vec::with_capacity(chunks.len());
        for (id, c) in ids.clone().zip(&chunks) {
            let anchor = doc.get(&c.pointer).map(|e| e.anchor()).unwrap_or_else(|| c.pointer.to_string());
            let embedding = c.embedding_text(path, self.options.include_heading_context);
            records.push((
                id,
                ChunkRecord {
                    v: RECORD_VERSION,
                    path: path.to_owned(),
                    anchor,
                    text: c.text.clone(),
                    heading_path: c.heading_path.clone(),
                    embedding_text_hash: embedding_text_hash(&embedding),
                    start_line: c.start_line,
                    end_line: c.end_line,
                },
            ));
        }
        let elements: Vec<ElementRecord> = doc
            .elements
            .iter()
            .map(|e| ElementRecord {
                pointer: e.pointer.to_string(),
                kind: e.kind.as_name().to_owned(),
                start_line: e.start_line,
                end_line: e.end_line,
                source_start: e.range.start,
                source_length: e.range.len(),
                self_hash: e.self_hash.clone(),
                subtree_hash: e.subtree_hash.clone(),
                heading_path: e.heading_path.clone(),
            })
            .collect();
        let record = DocumentRecord {
            v: RECORD_VERSION,
            source_hash: source.source_hash.clone(),
            len: source.len,
            mtime_ns: mtime_ns(source.modified),
            indexed_at: rfc3339_utc(SystemTime::now()),
            chunk_ids: ids.collect(),
        };
        batch.put_document(path, &record, &elements, &records)?;
        let links = crate::links::extract(&source.text, &doc);
        let bytes = serde_json::to_vec(&links)
            .map_err(|e| Error::internal(format!("could not encode the links of '{path}': {e}")))?;
        batch.put_links(path, &bytes)?;
        self.writer.delete_path(path);
        for (id, c) in &records {
            self.writer.add(&lexical_doc(*id, c, &source.source_hash))?;
        }
        Ok(records.len() as u64)
    }
}

impl Drop for Indexer {
    fn drop(&mut self) {
        // The marker goes (after this) only when every lexical file is synced.
        if let Err(e) = self.writer.checkpoint() {
            tracing::warn!("could not sync the lexical index: {}", e.message);
            self.session.clean = false;
        }
    }
}

enum FileOutcome {
    /// Unchanged (same size and modification time as indexed).
    Skipped,
    /// Same bytes, new metadata: only the document record was rewritten.
    Touched,
    Indexed(u64),
    Failed(String),
}

fn decode_links(bytes: &[u8]) -> Result<DocLinks> {
    serde_json::from_slice(bytes).map_err(|e| {
        Error::internal(format!(
            "a stored link record cannot be read ({e}); run kb_reindex with force=true to rebuild the index."
        ))
    })
}

fn lexical_doc(id: u64, c: &ChunkRecord, source_hash: &str) -> LexicalDoc {
    LexicalDoc {
        chunk_id: id,
        path: c.path.clone(),
        heading_path: c.heading_path.clone().unwrap_or_default(),
        text: c.text.clone(),
        anchor: c.anchor.clone(),
        source_hash: source_hash.to_owned(),
    }
}

#[cfg(test)]
mod tests;
