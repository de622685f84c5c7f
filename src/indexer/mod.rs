//! Keeps the derived index in step with the Markdown: scan → diff → parse → chunk → write.
//!
//! The indexer owns the index directory's write side: the writer lock (`LOCK`), the bookkeeping
//! store (`meta.redb`) and the lexical index's writer (`lexical/`). The read side
//! ([`ReadSide`]) opens the lexical index, the vector file and the link graph on its own and
//! never takes the lock, so a second process can search while this one writes; the indexing
//! service reloads it after each commit.
//!
//! Invariants:
//!
//! - One writer per index directory: [`WriterLock`] is an OS file lock, released when the
//!   process dies, so a killed reindex never leaves a stale lock behind.
//! - Idempotent: an unchanged workspace is a no-op (size + mtime fast path, then SHA-256).
//! - Commit order is fixed: the store commits generation `g` (durably), then the lexical index
//!   commits `g` (an edit's without `fsync`, see `SessionMarker`), then `status.json`, then the
//!   link graph snapshot (`links.bin`, rewritten only when links changed, and `links.gen`) is
//!   written for `g` — a waiting edit is answered before the snapshot. On open a lexical
//!   index one generation behind is repaired by replaying the paths of the store's last batch;
//!   any other mismatch refills the lexical index for every stored path. Chunks are stored only
//!   in the lexical index, so a replayed path is re-chunked from its file when the file still
//!   has the stored SHA-256 (same chunk ids), and indexed anew like a changed file otherwise
//!   (file edited or gone since: new chunk ids, committed as the next generation). The link
//!   graph is stored only in `links.bin` (`links.rs`): a snapshot one generation behind gets
//!   the links of the store's last batch extracted again from the Markdown, any other mismatch
//!   all of them.
//! - An index of another format version (`SCHEMA_VERSION`, the store's `record_version`, the
//!   analyzer's `ANALYZER_VERSION`) is never read: an older one is rebuilt from the Markdown by
//!   the next reindex or edit, with one sentence in the log; a newer one is refused until
//!   `reindex --force`.
//! - A file that cannot be indexed (not UTF-8, too large) is reported, never fatal.

mod export;
mod layout;
mod links;
mod readers;
mod service;
mod sources;
mod vectors;
mod watch;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError, mpsc};
use std::time::{SystemTime, UNIX_EPOCH};

/// The lexical analyzer's version, reported by `kb_status`.
pub use crate::lexical::ANALYZER_VERSION;
pub use export::{ChunkExport, export_chunks};
pub use layout::{IndexLayout, SessionMarker, Snapshot, WriterLock};
pub use readers::ReadSide;
pub use service::{EmbedFn, IDLE_AFTER, IndexService, ServiceParts, WATCHER_PATH};
pub use sources::{IndexSources, Searchable};
use vectors::VectorSync;
pub use vectors::{EmbedJob, VectorState, vector_status};
pub use watch::{FileWatcher, QUIET_PERIOD, watch};

use crate::chunk::{CHUNKER_VERSION, Chunk, ChunkOptions, chunk};
use crate::config::EmbeddingConfig;
use crate::error::{Error, ErrorCode, ErrorDetail, Result};
use crate::lexical::{LexicalDoc, LexicalIndex, LexicalWriter, WriterSize};
use crate::links::{DocLinks, LINKS_VERSION, LinkGraph};
use crate::markdown::Document;
use crate::store::{Batch, DocumentRecord, RECORD_VERSION, Store};
use crate::text::rfc3339_utc;
use crate::wire::{Compatibility, ReindexResult};
use crate::workspace::{FileEntry, GlobFilter, RelPath, SourceDocument, Workspace};

/// Our index format version: the record layout plus the lexical schema (`lvs-<n>`; a higher
/// `n` is newer). `lvs-1` stored every chunk and element in redb as JSON; `lvs-2` stores one
/// binary record per document and keeps the chunks in the lexical index only.
/// `lvs-3` adds the front-matter terms of metadata filters to the lexical index. `lvs-4` keeps
/// the link graph once, in the binary `links.bin` (no `links` table, no `links.json`).
pub const SCHEMA_VERSION: &str = "lvs-4";

/// An index of another format version, as found in its manifest. The analyzer's version counts
/// as part of the format: an index whose tokens an older analyzer made is rebuilt like one of
/// an older format, with no `--force`, since the user changed nothing but the binary.
#[derive(Clone, Debug)]
struct Foreign {
    /// Its format: its `schema_version` (`unknown` when unreadable), or `lvs-<n> with analyzer
    /// <v>` when only the analyzer differs.
    found: String,
    /// Ours, said the same way.
    ours: String,
    /// Written by a newer version (or one we cannot place): refused until `reindex --force`.
    newer: bool,
}

impl Foreign {
    /// The format of `store`, when it is not ours.
    fn of(store: &Store) -> Result<Option<Foreign>> {
        let (schema, record) = match store.foreign_format() {
            Some(f) => (f.schema_version.clone(), f.record_version.clone()),
            None => {
                let m = store.manifest()?;
                match (m.get("schema_version"), m.get("analyzer_version")) {
                    (Some(s), _) if s != SCHEMA_VERSION => {
                        (Some(s.clone()), m.get("record_version").cloned())
                    }
                    (Some(_), Some(a)) if a != ANALYZER_VERSION => {
                        return Ok(Some(Foreign {
                            found: format!("{SCHEMA_VERSION} with analyzer {a}"),
                            ours: format!("{SCHEMA_VERSION} with analyzer {ANALYZER_VERSION}"),
                            newer: a
                                .parse::<u64>()
                                .ok()
                                .is_none_or(|n| Some(n) > ANALYZER_VERSION.parse().ok()),
                        }));
                    }
                    _ => return Ok(None),
                }
            }
        };
        let number = |v: &str| v.strip_prefix("lvs-").and_then(|n| n.parse::<u64>().ok());
        let ours = number(SCHEMA_VERSION).unwrap_or(0);
        let newer = match schema.as_deref().and_then(number) {
            Some(n) if n != ours => n > ours,
            Some(_) => record.and_then(|r| r.parse::<u32>().ok()).is_none_or(|r| r > RECORD_VERSION),
            None => true,
        };
        Ok(Some(Foreign {
            found: schema.unwrap_or_else(|| "unknown".to_owned()),
            ours: SCHEMA_VERSION.to_owned(),
            newer,
        }))
    }

    /// The refusal for a newer format (one sentence).
    fn refusal(&self) -> Error {
        Error::index_not_ready(format!(
            "The index was written in format {} by a newer version of local-vector-search-mcp (this one uses {}); use that version, or run `reindex --force` to rebuild the index for this one.",
            self.found, self.ours
        ))
    }
}

/// Files in the first commit of a reindex; each later commit may hold twice as many as the one
/// before, up to [`COMMIT_EVERY_MAX`] files or [`COMMIT_EVERY_BYTES`]. The first results are
/// searchable early and a crash loses a bounded amount of work, while a large corpus needs few
/// commits: each costs a store fsync, a lexical segment per indexing thread (merged later) and
/// a rewrite of the whole link graph, so a fixed 1,000 files grew quadratically at 60,000 files.
const COMMIT_EVERY: usize = 1_000;

/// Documents written or deleted by one reindex after which the store file is compacted and the
/// lexical index's segments are merged into one.
const COMPACT_AFTER: u64 = 1_000;

/// At most this many files per commit during a reindex.
const COMMIT_EVERY_MAX: usize = 16_000;

/// Markdown bytes (of re-indexed files) per commit during a reindex.
const COMMIT_EVERY_BYTES: u64 = 64 << 20;

/// Threads that read, parse and chunk files during a reindex (besides tantivy's two indexing
/// threads, which analyse the text; on two cores the OS interleaves them).
const MAX_PREPARE_THREADS: usize = 2;

/// How many files the preparing threads may run ahead of the one applying them (bounds the
/// memory held by prepared but not yet indexed files).
const PREPARE_WINDOW: usize = 64;

/// The writer of a reindex (or of a batch of at least [`BULK_FILES`] files): both cores'
/// indexing threads and 200 MB between them. Edits get [`WriterSize::Edit`]: one thread and
/// tantivy's minimum memory, which commits one file's chunks fastest (`lexical/writer.rs`).
const BULK_WRITER: WriterSize = WriterSize::Bulk(200_000_000);

/// Files to index from which a reindex, a repair or a batch of edits uses [`BULK_WRITER`].
const BULK_FILES: usize = 32;

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
    /// Commits made so far (each makes what was indexed before it searchable).
    pub commits: u64,
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

/// Compares a stored manifest with the current one (`docs/reference/original-server.md` §4.2).
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
/// (`docs/reference/original-server.md` §4.2); `subject` is `Index` for the lexical index, or names
/// the vector index.
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
    /// The link graph of the store's documents (loaded from `links.bin`, or extracted again
    /// from the Markdown, when the writer opens; `links.rs`).
    links: Option<LinkGraph>,
    /// `links` changed since `links.bin` was written.
    links_dirty: bool,
    /// The links of the documents the open batch wrote, applied to `links` when it commits.
    links_staged: HashMap<String, DocLinks>,
    /// Set while the index is of another format version: nothing reads it until it is rebuilt.
    foreign: Option<Foreign>,
    /// A commit whose link snapshot is not written yet ([`Indexer::finish_commit`]).
    links_pending: bool,
    /// `SESSION`: kept on disk if a commit does not complete (dropped before the lock).
    session: SessionMarker,
    /// The lexical index or the store was recreated at open (damaged, or torn by a restart):
    /// the line that said so is the repair's one log line.
    lexical_recreated: bool,
    _lock: WriterLock,
}

/// Opens the store; a damaged one is moved aside as `meta.redb.damaged` (one copy, replaced each
/// time, for a bug report) and recreated empty, so the next run re-indexes the Markdown and the
/// lexical index is emptied by [`Indexer::repair`] (its generation no longer matches).
fn open_store(path: &std::path::Path) -> Result<(Store, bool)> {
    match Store::open(path).map(|s| (s, false)) {
        Err(e) if e.is(ErrorDetail::IndexDamaged) => {
            let cause = std::error::Error::source(&e).map(|s| s.to_string()).unwrap_or_default();
            tracing::warn!(
                "the index store is damaged ({cause}); starting a new one, the Markdown is indexed again"
            );
            let aside = path.with_extension("redb.damaged");
            std::fs::rename(path, &aside).map_err(|e| Error::io("the damaged index store", &e))?;
            Store::open(path).map(|s| (s, true))
        }
        other => other,
    }
}

/// What the next writer would have to rebuild in the index at `layout`, as a phrase for the
/// log, or `None` when the index is sound, when there is none, or when another process holds
/// the writer (opening it repairs what it finds, so that process has done it). Takes the writer
/// lock for the check, so it never races a writer; a newer format is not reported: it is
/// refused, not rebuilt, until `reindex --force`.
pub fn diagnose(layout: &IndexLayout) -> Option<String> {
    if !layout.dir().is_dir() {
        return None;
    }
    let _lock = WriterLock::acquire(layout).ok()?;
    let cause = |e: &Error| std::error::Error::source(e).map_or_else(|| e.message.clone(), |s| s.to_string());
    let store_path = layout.store_path();
    let mut store_generation = None;
    if store_path.is_file() {
        match Store::open(&store_path) {
            Err(e) if e.is(ErrorDetail::IndexDamaged) => {
                return Some(format!("the index store is damaged ({})", cause(&e)));
            }
            Err(_) => return None,
            Ok(store) => match Foreign::of(&store) {
                Ok(Some(f)) if f.newer => return None,
                Ok(Some(f)) => {
                    return Some(format!("the index was written in format {} by an older version", f.found));
                }
                Ok(None) => store_generation = store.generation().ok(),
                Err(e) => return Some(format!("the index store cannot be read ({})", e.message)),
            },
        }
    }
    match LexicalIndex::open_or_create(&layout.lexical_dir()) {
        Err(e) if e.is(ErrorDetail::IndexDamaged) => {
            return Some(format!("the lexical index is damaged ({})", cause(&e)));
        }
        Err(_) => return None,
        Ok(lexical) => {
            if let Some(stored) = store_generation
                && lexical.generation().unwrap_or(0) != stored
            {
                return Some(format!(
                    "the lexical index is at generation {} and the store at {stored}",
                    lexical.generation().unwrap_or(0)
                ));
            }
        }
    }
    if Snapshot::read(layout).is_none() {
        return Some("status.json is missing or unreadable".to_owned());
    }
    None
}

/// Opens the lexical index and its writer; a damaged one (truncated or missing segment files,
/// garbage metadata) is recreated empty, and [`Indexer::repair`] then refills it from the
/// Markdown of the stored paths: it is derived data, and we hold the writer lock, so nobody else
/// is writing it.
///
/// `older_format`: the store is of an older format, so everything is rebuilt anyway and
/// [`Indexer::rebuild_foreign`] says so; a lexical index of that format's schema is expected to
/// be unreadable, which is not worth a second warning.
fn open_lexical(dir: &std::path::Path, older_format: bool) -> Result<(LexicalIndex, LexicalWriter, bool)> {
    let opened =
        LexicalIndex::open_or_create(dir).and_then(|l| l.writer(WriterSize::Edit).map(|w| (l, w, false)));
    match opened {
        Err(e) if e.is(ErrorDetail::IndexDamaged) => {
            let cause = std::error::Error::source(&e).map(|s| s.to_string()).unwrap_or_default();
            if older_format {
                tracing::debug!(
                    "the lexical index of the older format cannot be opened ({cause}); recreating it"
                );
            } else if crate::lexical::is_other_schema(&e) {
                tracing::warn!(
                    "the lexical index was written by another version of local-vector-search-mcp, which indexes other fields; it is rebuilt from the Markdown, and the vectors are kept"
                );
            } else {
                tracing::warn!("the lexical index is damaged ({cause}); rebuilding it from the Markdown");
            }
            let lexical = LexicalIndex::recreate(dir)?;
            let writer = lexical.writer(WriterSize::Edit)?;
            Ok((lexical, writer, true))
        }
        other => other,
    }
}

/// What opening the writer takes: the project's files and settings. The indexing service holds
/// one and opens the writer whenever it has work (and closes it when idle).
pub struct WriterParts {
    /// The knowledge base.
    pub workspace: Arc<Workspace>,
    /// `knowledgeBase.include` / `exclude`.
    pub filter: GlobFilter,
    /// The chunker's settings.
    pub chunk_options: ChunkOptions,
    /// The index directory.
    pub layout: IndexLayout,
    /// The embedding settings when embeddings are on.
    pub embedding: Option<EmbeddingConfig>,
}

impl WriterParts {
    /// [`Indexer::open`] over these parts (fails with `WriterBusy` while another writer holds
    /// the lock).
    pub fn open(&self) -> Result<Indexer> {
        Indexer::open(
            Arc::clone(&self.workspace),
            self.filter.clone(),
            self.chunk_options,
            &self.layout,
            self.embedding.as_ref(),
        )
    }
}

/// The indexing service's embedding client over `embedding`. The HTTP client is made on the
/// embedding thread at its first request, so opening a project (every CLI command, a server
/// start) builds none.
pub fn embedding_client(embedding: EmbeddingConfig) -> Box<EmbedFn> {
    let client = std::sync::OnceLock::new();
    Box::new(move |texts: &[&str]| {
        client
            .get_or_init(|| crate::vectors::Embedder::new(&embedding, None))
            .as_ref()
            .map_err(Clone::clone)?
            .embed(texts)
    })
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
        let (store, store_recreated) = open_store(&layout.store_path())?;
        let foreign = Foreign::of(&store)?;
        let (lexical, writer, recreated) = if left.other_boot && foreign.is_none() {
            // Its unsynced lexical commits may be torn: refilled from the Markdown by `repair`.
            tracing::warn!(
                "the machine restarted while the index was being written; rebuilding the lexical index from the Markdown"
            );
            let lexical = LexicalIndex::recreate(&layout.lexical_dir())?;
            let writer = lexical.writer(WriterSize::Edit)?;
            (lexical, writer, true)
        } else {
            open_lexical(&layout.lexical_dir(), foreign.as_ref().is_some_and(|f| !f.newer))?
        };
        let generation = if foreign.is_some() { 0 } else { store.generation()? };
        let mut vectors = vectors;
        if let Some(v) = vectors.as_mut().filter(|_| foreign.is_none()) {
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
            links_dirty: false,
            links_staged: HashMap::new(),
            foreign,
            links_pending: false,
            session,
            lexical_recreated: recreated || store_recreated,
            _lock: lock,
        };
        // A failed repair keeps the marker, so the next start tries again.
        indexer.session.clean = false;
        if indexer.foreign.is_none() {
            indexer.repair()?;
        }
        indexer.session.clean = true;
        Ok(indexer)
    }

    /// The bookkeeping store (read access for status).
    pub fn store(&self) -> &Store {
        &self.store
    }

    fn repair(&mut self) -> Result<()> {
        // The link graph first: it is stored nowhere else, and a repair below commits on top. A
        // snapshot of this generation is loaded when a commit first needs it.
        if self.layout.links_generation() != Some(self.generation) || !self.layout.links_path().is_file() {
            self.load_links()?;
            self.write_links()?;
        }
        // `None`: the lexical index never committed (new, or recreated after damage).
        let lexical_generation = self.lexical.generation();
        if lexical_generation.unwrap_or(0) == self.generation {
            // A new index has neither file yet: writing them is routine, not a repair.
            let new = lexical_generation.is_none();
            if Snapshot::read(&self.layout).map(|s| s.generation) != Some(self.generation) {
                if new {
                    tracing::debug!("writing the first status.json");
                } else {
                    tracing::warn!(
                        "status.json is missing, unreadable or behind; rewriting it from the store"
                    );
                }
                self.write_snapshot()?;
            }
            return Ok(());
        }
        let replay = lexical_generation.is_some_and(|g| g + 1 == self.generation);
        let paths: Vec<String> = if replay {
            tracing::warn!(
                "the last index commit was interrupted; replaying {} paths",
                self.store.last_batch()?.len()
            );
            self.store.last_batch()?
        } else {
            if self.lexical_recreated {
                tracing::debug!("refilling the lexical index from the Markdown after the repair at open");
            } else {
                tracing::warn!(
                    "lexical index generation {} does not match store generation {}; rebuilding it from the Markdown",
                    lexical_generation.unwrap_or(0),
                    self.generation
                );
            }
            self.store.documents()?.into_keys().collect()
        };
        self.size_writer_for(paths.len())?;
        if !replay {
            self.writer.delete_all()?;
        }
        // Chunks are re-derived with the settings the index was built with; after a settings
        // change they cannot be, and the files stay out until the forced rebuild.
        let stored = self.store.manifest()?;
        let same_settings =
            stored.is_empty() || compatibility(&stored, &lexical_manifest(&self.options)).is_compatible;
        let mut changed = Vec::new();
        for path in &paths {
            self.writer.delete_path(path);
            let Some(doc) = self.store.document(path)? else { continue };
            if !same_settings || !self.readd_unchanged(path, &doc)? {
                changed.push(path.clone());
            }
        }
        crate::failpoint("indexer.repair.before-commit");
        if same_settings && !changed.is_empty() {
            tracing::warn!("{} file(s) changed since they were indexed; indexing them again", changed.len());
            let mut batch = self.store.batch()?;
            for path in &changed {
                self.reindex_path(&mut batch, path)?;
            }
            // Store generation g + 1, then the lexical index with every re-added chunk.
            return self.commit(batch);
        }
        if !same_settings {
            tracing::warn!(
                "the index settings changed since it was built; {} file(s) stay out of the lexical index until `reindex --force`",
                changed.len()
            );
        }
        self.writer.commit(self.generation)?;
        self.write_snapshot()
    }

    /// Re-adds the stored chunks of `path` from its file when the file still has the indexed
    /// revision (same SHA-256, so the same chunks under the stored ids); `false` otherwise.
    fn readd_unchanged(&mut self, path: &str, stored: &DocumentRecord) -> Result<bool> {
        let Ok(rel) = RelPath::new(path) else { return Ok(false) };
        let Ok(source) = self.workspace.read_markdown(&rel) else { return Ok(false) };
        if source.source_hash != stored.source_hash {
            return Ok(false);
        }
        let doc = Document::parse(&source.text);
        let chunks = chunk(&doc, &self.options);
        if chunks.len() != stored.chunk_ids.len() {
            return Ok(false);
        }
        for d in lexical_docs(path, &source.source_hash, &doc, chunks, stored.chunk_ids.iter().copied()) {
            self.writer.add(&d)?;
        }
        Ok(true)
    }

    /// Indexes `path` anew into `batch` (a repair of a file that changed or went away since it
    /// was indexed): read whatever its size and mtime say, removed when gone or excluded.
    fn reindex_path(&mut self, batch: &mut Batch, path: &str) -> Result<()> {
        let entry = match RelPath::new(path) {
            Ok(rel) => match self.workspace.stat(&rel) {
                Ok((len, modified))
                    if self.filter.matches(path)
                        && self.workspace.path_rules().is_none_or(|r| r.ignored(&rel).is_none()) =>
                {
                    Some(FileEntry { path: rel, len, modified })
                }
                Ok(_) => None,
                Err(e) if e.code == ErrorCode::NotFound => None,
                Err(e) => return Err(e),
            },
            Err(_) => None,
        };
        match entry {
            Some(entry) => {
                let stored = self.store.document(path)?;
                self.index_file(batch, &entry, stored.as_ref(), true)?;
            }
            None => {
                batch.delete_document(path)?;
                self.writer.delete_path(path);
            }
        }
        Ok(())
    }

    /// Starts an index of another format version over (store wiped, lexical index emptied,
    /// vectors dropped), saying so; a newer one only with `force`.
    fn rebuild_foreign(&mut self, force: bool) -> Result<()> {
        let Some(foreign) = self.foreign.clone() else { return Ok(()) };
        if foreign.newer && !force {
            return Err(foreign.refusal());
        }
        if foreign.newer {
            tracing::warn!(
                "the index was written in format {} by a newer version; rebuilding it in format {} as asked (--force)",
                foreign.found,
                foreign.ours
            );
        } else {
            tracing::warn!(
                "the index was written in format {} by an older version of local-vector-search-mcp; this version uses {}, so it is rebuilt from the Markdown",
                foreign.found,
                foreign.ours
            );
        }
        self.store.wipe()?;
        self.generation = self.store.generation()?;
        self.writer.delete_all()?;
        self.writer.commit(self.generation)?;
        match std::fs::remove_file(self.layout.vector_path()) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(Error::io("the old vector index", &e));
            }
            _ => {}
        }
        self.foreign = None;
        self.restart_links()?;
        if let Some(v) = self.vectors.as_mut() {
            v.init_state(&self.store, None)?;
        }
        Ok(())
    }

    /// Sizes the lexical writer for `files` files to index: [`BULK_WRITER`] from [`BULK_FILES`]
    /// on, the edit size below. Only between commits (a resize drops nothing queued: it fails).
    fn size_writer_for(&mut self, files: usize) -> Result<()> {
        self.writer.resize(if files >= BULK_FILES { BULK_WRITER } else { WriterSize::Edit })
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
        self.apply_staged_links(&touched)?;
        let t1 = std::time::Instant::now();
        crate::failpoint("indexer.between-store-and-lexical-commit");
        self.writer.commit(generation)?;
        let t2 = std::time::Instant::now();
        self.generation = generation;
        self.links_pending = true;
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

    /// Full or incremental reindex (`docs/reference/original-server.md` §6.1), in phases: the
    /// manifest decides whether the run starts over ([`Indexer::open_run`]); the scan finds the
    /// files whose size or time changed; the records of files gone are dropped
    /// ([`Indexer::drop_vanished`]); the changed files are read, chunked and indexed
    /// ([`Indexer::apply_stale`]); the last batch is committed and the run tidied up
    /// ([`Indexer::finish_run`]).
    pub fn reindex(
        &mut self,
        opts: ReindexOptions,
        progress: &mut dyn FnMut(&Progress),
    ) -> Result<ReindexResult> {
        let mut state = Progress::default();
        if self.foreign.is_some() {
            self.rebuild_foreign(opts.force)?;
            state.destructive = true;
        }
        progress(&state);
        let t0 = std::time::Instant::now();
        let (mut run, mut batch) = self.open_run(&opts, state, progress)?;
        let t1 = std::time::Instant::now();
        let files = self.workspace.scan_markdown(&self.filter)?;
        let t2 = std::time::Instant::now();
        // Only files whose size or mtime differ from the stored record are read (and go through
        // the workers of `apply_stale`); the rest are counted as skipped at once.
        let stale: Vec<&FileEntry> =
            files.iter().filter(|f| run.all || !unchanged(f, run.documents.get(f.path.as_str()))).collect();
        self.size_writer_for(stale.len())?;
        if run.clear_lexical {
            self.writer.delete_all()?;
        }
        let unchanged_files = (files.len() - stale.len()) as u64;
        run.result.scanned_files = files.len() as u64;
        run.result.skipped_files = unchanged_files;
        run.state.total = Some(files.len() as u64);
        run.state.processed = unchanged_files;
        progress(&run.state);
        self.drop_vanished(&mut run, &mut batch, &files)?;
        let batch = self.apply_stale(&mut run, batch, &stale, progress)?;
        let t3 = std::time::Instant::now();
        if run.unsaved {
            self.commit(batch)?;
        } else {
            // Aborts the empty write transaction (the compaction below needs none open).
            drop(batch);
        }
        tracing::debug!(
            target: "lvs::timing",
            "reindex {} files ({} stale): store read {:?} scan {:?} apply {:?} commit {:?}",
            files.len(),
            stale.len(),
            t1 - t0,
            t2 - t1,
            t3 - t2,
            t3.elapsed()
        );
        self.finish_run(run, progress)
    }

    /// A run's start: durable commits from here (what relaxed edit commits left unsynced is
    /// synced first), and the stored manifest compared with the current settings. An empty
    /// store gets the manifest; an incompatible one fails without `force`, and with it the run
    /// starts over (the store reset, every record forgotten, the lexical index to be cleared).
    fn open_run(
        &mut self,
        opts: &ReindexOptions,
        mut state: Progress,
        progress: &mut dyn FnMut(&Progress),
    ) -> Result<(Run, Batch)> {
        self.writer.checkpoint()?;
        let manifest = lexical_manifest(&self.options);
        let stored_manifest = self.store.manifest()?;
        let mut batch = self.store.batch()?;
        let mut documents = self.store.documents()?;
        let mut clear_lexical = false;
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
                clear_lexical = true;
                documents.clear();
            }
        }
        let run = Run {
            documents,
            all: opts.all,
            clear_lexical,
            // A new manifest or a cleared index is something to commit.
            unsaved: stored_manifest.is_empty() || clear_lexical,
            state,
            result: ReindexResult::default(),
        };
        Ok((run, batch))
    }

    /// Drops the records and chunks of the files stored but no longer found by the scan.
    fn drop_vanished(&mut self, run: &mut Run, batch: &mut Batch, files: &[FileEntry]) -> Result<()> {
        let present: BTreeSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
        for path in run.documents.keys().filter(|p| !present.contains(p.as_str())) {
            batch.delete_document(path)?;
            self.writer.delete_path(path);
            run.result.deleted_files += 1;
            // Whether the open batch holds anything: a reindex that finds nothing to change
            // commits nothing (no new generation), like an edit's echo.
            run.unsaved = true;
        }
        Ok(())
    }

    /// Reads, chunks and indexes the files of `work` (in order), committing every so many
    /// files or bytes; returns the batch still open.
    fn apply_stale(
        &mut self,
        run: &mut Run,
        batch: Batch,
        work: &[&FileEntry],
        progress: &mut dyn FnMut(&Progress),
    ) -> Result<Batch> {
        // Files are read, parsed and chunked on `workers` threads (at most WINDOW files ahead);
        // this thread applies them in file order (store batch, chunk ids, lexical writer), while
        // tantivy's indexing threads analyse what was added.
        let workers =
            std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, MAX_PREPARE_THREADS);
        let (workspace, options) = (Arc::clone(&self.workspace), self.options);
        let Run { documents, all, unsaved, state, result, .. } = run;
        let (documents, all) = (&*documents, *all);
        let next = AtomicUsize::new(0);
        let stop = AtomicBool::new(false);
        let gate = (Mutex::new(0usize), Condvar::new());
        let release = |applied: usize| {
            *gate.0.lock().unwrap_or_else(PoisonError::into_inner) = applied;
            gate.1.notify_all();
        };
        std::thread::scope(|scope| -> Result<Batch> {
            let (tx, rx) = mpsc::channel::<(usize, Result<Prepared>)>();
            for _ in 0..workers {
                let tx = tx.clone();
                let (next, stop, gate, workspace, options) = (&next, &stop, &gate, &workspace, &options);
                scope.spawn(move || {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(entry) = work.get(i) else { break };
                        let mut applied = gate.0.lock().unwrap_or_else(PoisonError::into_inner);
                        while i >= *applied + PREPARE_WINDOW && !stop.load(Ordering::Relaxed) {
                            applied = gate.1.wait(applied).unwrap_or_else(PoisonError::into_inner);
                        }
                        drop(applied);
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        let stored = documents.get(entry.path.as_str());
                        if tx.send((i, prepare(workspace, options, entry, stored, all))).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(tx);
            let applied = (|mut batch: Batch| -> Result<Batch> {
                let mut pending: HashMap<usize, Result<Prepared>> = HashMap::new();
                let (mut since_commit, mut bytes_since_commit) = (0usize, 0u64);
                let mut commit_every = COMMIT_EVERY;
                for (i, entry) in work.iter().enumerate() {
                    state.current_path = Some(entry.path.as_str().to_owned());
                    progress(state);
                    let prepared = loop {
                        if let Some(p) = pending.remove(&i) {
                            break p;
                        }
                        let (j, p) = rx
                            .recv()
                            .map_err(|_| Error::internal("the indexing workers stopped unexpectedly."))?;
                        pending.insert(j, p);
                    };
                    release(i + 1);
                    let stored = documents.get(entry.path.as_str());
                    let prepared = prepared?;
                    // Only files that change something count towards a commit.
                    if !matches!(prepared, Prepared::Skipped(None)) {
                        since_commit += 1;
                        *unsaved = true;
                    }
                    match self.apply(&mut batch, entry.path.as_str(), stored, prepared)? {
                        FileOutcome::Skipped | FileOutcome::Touched => result.skipped_files += 1,
                        FileOutcome::Indexed(chunks) => {
                            result.indexed_files += 1;
                            result.chunks_indexed += chunks;
                            bytes_since_commit += entry.len;
                        }
                        FileOutcome::Failed(reason) => {
                            if stored.is_some() {
                                result.deleted_files += 1;
                            }
                            result.failed_files.push(reason);
                        }
                    }
                    state.processed += 1;
                    crate::failpoint("indexer.reindex.file-done");
                    progress(state);
                    if since_commit >= commit_every || bytes_since_commit >= COMMIT_EVERY_BYTES {
                        self.commit(batch)?;
                        state.commits += 1;
                        progress(state);
                        *unsaved = false;
                        batch = self.store.batch()?;
                        (since_commit, bytes_since_commit) = (0, 0);
                        commit_every = (commit_every * 2).min(COMMIT_EVERY_MAX);
                    }
                }
                Ok(batch)
            })(batch);
            // Wakes the workers waiting for the window (they see `stop` under the lock).
            stop.store(true, Ordering::Relaxed);
            release(work.len());
            applied
        })
    }

    /// A run's end, after its last commit: the store compacted and the lexical index merged
    /// after a large run, the warning of files that failed, the vector side told.
    fn finish_run(&mut self, mut run: Run, progress: &mut dyn FnMut(&Progress)) -> Result<ReindexResult> {
        // A run that rewrote or dropped many documents leaves the old pages free inside redb's
        // file (`docs/performance.md`, "Index size (issue #18)"): give them back.
        // The lexical index is left in one segment per commit and indexing thread: merged into
        // one, queries are faster and the index smaller, for a little CPU at the end of the run
        // (measured: docs/performance.md, "One segment after a large reindex"). Searches see
        // the commit already; a failed merge costs speed, not data.
        if run.result.indexed_files + run.result.deleted_files >= COMPACT_AFTER {
            self.store.compact()?;
            let t = std::time::Instant::now();
            match self.writer.merge_all() {
                Ok(n) => {
                    tracing::debug!(target: "lvs::timing", "merged {n} lexical segments in {:?}", t.elapsed())
                }
                Err(e) => tracing::warn!("could not merge the lexical index's segments: {}", e.message),
            }
        }
        run.state.current_path = None;
        progress(&run.state);
        if !run.result.failed_files.is_empty() {
            run.result.warning = Some(format!(
                "{} file(s) could not be indexed; see failedFiles, fix or exclude them.",
                run.result.failed_files.len()
            ));
        }
        if let Some(v) = self.vectors.as_mut() {
            v.after_commit(0, false);
        }
        Ok(run.result)
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
        if self.foreign.is_some() {
            // An index of an older format is rebuilt whole by the first edit (a newer one is
            // refused): indexing one file into it would leave the rest out.
            let r = self.reindex(ReindexOptions::default(), &mut |_| {})?;
            return Ok(r.indexed_files + r.deleted_files);
        }
        let t0 = std::time::Instant::now();
        self.size_writer_for(paths.len())?;
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
        // The ignore rules of the root, read once for the batch.
        let rules = self.workspace.path_rules();
        for path in paths {
            let stored = self.store.document(path.as_str())?;
            let included = self.filter.matches(path.as_str())
                && rules.as_ref().is_none_or(|r| r.ignored(path).is_none());
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
        let Some(v) = self.vectors.as_mut().filter(|_| self.foreign.is_none()) else { return Ok(None) };
        let warning = v.prepare(&self.store, force)?;
        self.write_snapshot()?;
        Ok(warning)
    }

    /// Whether the vector catch-up has a step to take (`reindex`: retry the endpoint whatever
    /// the back-off after a failure says).
    pub fn vectors_have_work(&self, reindex: bool) -> bool {
        self.foreign.is_none() && self.vectors.as_ref().is_some_and(|v| v.has_work(reindex))
    }

    /// One catch-up step: copies what it can and returns the next embedding request, or `None`
    /// when nothing is left to request now (what was done is saved then).
    pub fn vectors_next_job(&mut self, reindex: bool) -> Result<Option<EmbedJob>> {
        let Some(v) = self.vectors.as_mut().filter(|_| self.foreign.is_none()) else { return Ok(None) };
        let job = v.next_job(&self.store, &self.lexical, reindex)?;
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
        let Some(v) = self.vectors.as_mut().filter(|_| self.foreign.is_none()) else { return Ok(()) };
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
        let prepared = prepare(&self.workspace, &self.options, entry, stored, all)?;
        self.apply(batch, entry.path.as_str(), stored, prepared)
    }

    /// Writes what [`prepare`] worked out for `path` into the batch and the lexical writer
    /// (chunk ids are allocated here, in the order files are applied).
    fn apply(
        &mut self,
        batch: &mut Batch,
        path: &str,
        stored: Option<&DocumentRecord>,
        prepared: Prepared,
    ) -> Result<FileOutcome> {
        match prepared {
            Prepared::Skipped(None) => Ok(FileOutcome::Skipped),
            Prepared::Skipped(Some(record)) => {
                batch.touch_document(path, &record)?;
                Ok(FileOutcome::Touched)
            }
            Prepared::Failed(reason) => {
                if stored.is_some() {
                    batch.delete_document(path)?;
                    self.writer.delete_path(path);
                }
                Ok(FileOutcome::Failed(reason))
            }
            Prepared::Write(rev) => {
                let Revision { source_hash, len, mtime_ns, mut docs, links } = *rev;
                let ids = batch.allocate_chunk_ids(docs.len())?;
                let record = DocumentRecord {
                    source_hash,
                    len,
                    mtime_ns,
                    indexed_at_s: SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()),
                    chunk_ids: ids.clone().collect(),
                };
                batch.put_document(path, &record)?;
                self.links_staged.insert(path.to_owned(), links);
                // A path the store does not know has no chunks in the lexical index (it commits
                // after the store, and a rebuild empties it), so there is nothing to delete:
                // a full index queues no delete term per file.
                if stored.is_some() {
                    self.writer.delete_path(path);
                }
                for (d, id) in docs.iter_mut().zip(ids) {
                    d.chunk_id = id;
                    self.writer.add(d)?;
                }
                Ok(FileOutcome::Indexed(docs.len() as u64))
            }
        }
    }
}

/// What one file needs, worked out from the file alone (no store, no writer), so reindex can
/// prepare files on several threads while the main thread applies them in order.
enum Prepared {
    /// Nothing to index; `Some` when the same bytes got new metadata (`touch`), to remember for
    /// the size + mtime fast path.
    Skipped(Option<DocumentRecord>),
    /// Cannot be indexed (not UTF-8, too large, gone): the reason for `failedFiles`.
    Failed(String),
    /// A new revision to index.
    Write(Box<Revision>),
}

/// A new revision of a file: its chunks as lexical documents (ids still 0) and its links.
struct Revision {
    source_hash: String,
    len: u64,
    mtime_ns: u128,
    docs: Vec<LexicalDoc>,
    links: DocLinks,
}

/// The fast path of "unchanged": the file has the stored record's size and mtime.
///
/// A record without chunks is never taken as unchanged: the chunker may now find text in it (a
/// heading-only document, indexed without chunks before `chunk::headings_only`), and reading an
/// empty file again costs nothing.
fn unchanged(entry: &FileEntry, stored: Option<&DocumentRecord>) -> bool {
    stored.is_some_and(|d| {
        !d.chunk_ids.is_empty() && d.len == entry.len && d.mtime_ns == mtime_ns(entry.modified)
    })
}

/// Reads, parses and chunks `entry` unless its stored record says it is unchanged (size +
/// mtime, then SHA-256 unless `all`).
fn prepare(
    workspace: &Workspace,
    options: &ChunkOptions,
    entry: &FileEntry,
    stored: Option<&DocumentRecord>,
    all: bool,
) -> Result<Prepared> {
    let path = entry.path.as_str();
    if !all && unchanged(entry, stored) {
        return Ok(Prepared::Skipped(None));
    }
    let source = match workspace.read_markdown(&entry.path) {
        Ok(s) => s,
        Err(e)
            if matches!(
                e.code,
                ErrorCode::UnsupportedFormat | ErrorCode::NotFound | ErrorCode::InvalidPath
            ) =>
        {
            return Ok(Prepared::Failed(format!("{path}: {}", e.message)));
        }
        Err(e) => return Err(e),
    };
    // A file changed between this read and the commit must not be recorded with the new
    // hash and the old text (`docs/reliability.md`, "a file that changes while indexed").
    crate::failpoint("indexer.after-read");
    // Same bytes and a record without chunks: written anew only if the chunker now finds some.
    let nothing_new = |old: &DocumentRecord| {
        !old.chunk_ids.is_empty() || chunk(&Document::parse(&source.text), options).is_empty()
    };
    if !all && let Some(old) = stored.filter(|d| d.source_hash == source.source_hash && nothing_new(d)) {
        // Same bytes, new metadata (e.g. `touch`): remember it for the fast path.
        let record = DocumentRecord { len: source.len, mtime_ns: mtime_ns(source.modified), ..old.clone() };
        return Ok(Prepared::Skipped(Some(record)));
    }
    Ok(Prepared::Write(Box::new(revision(options, &source)?)))
}

/// Parses and chunks one revision of a file.
fn revision(options: &ChunkOptions, source: &SourceDocument) -> Result<Revision> {
    let path = source.path.as_str();
    let doc = Document::parse(&source.text);
    let chunks = chunk(&doc, options);
    let links = crate::links::extract(&source.text, &doc);
    let docs = lexical_docs(path, &source.source_hash, &doc, chunks, std::iter::repeat(0));
    Ok(Revision {
        source_hash: source.source_hash.clone(),
        len: source.len,
        mtime_ns: mtime_ns(source.modified),
        docs,
        links,
    })
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

/// One reindex run's state between its phases ([`Indexer::reindex`]).
struct Run {
    /// The stored records when the run started (none when it starts over).
    documents: BTreeMap<String, DocumentRecord>,
    /// Every file is read again, changed or not ([`ReindexOptions::all`]).
    all: bool,
    /// The run starts over: the lexical index is cleared before files are indexed.
    clear_lexical: bool,
    /// The open batch holds something to commit.
    unsaved: bool,
    /// What the progress callback is shown.
    state: Progress,
    result: ReindexResult,
}

enum FileOutcome {
    /// Unchanged (same size and modification time as indexed).
    Skipped,
    /// Same bytes, new metadata: only the document record was rewritten.
    Touched,
    Indexed(u64),
    Failed(String),
}

/// The v2 anchor of each chunk's first element, for chunks asked in document order: each element
/// is found by searching on from the previous one's (linear, where a lookup per chunk was
/// quadratic: 50,000 headings); a pointer not found is its own text.
fn anchor_finder(doc: &Document) -> impl FnMut(&crate::markdown::LogicalPointer) -> String + '_ {
    let mut from = 0;
    move |pointer| {
        let found = doc.elements[from..].iter().position(|e| &e.pointer == pointer).map(|i| from + i);
        match found.or_else(|| doc.position(pointer)) {
            Some(i) => {
                from = i;
                doc.elements[i].anchor()
            }
            None => pointer.to_string(),
        }
    }
}

/// The lexical index's documents for the chunks of one revision of `path` (the only place the
/// chunks are stored), with their ids in order.
fn lexical_docs(
    path: &str,
    source_hash: &str,
    doc: &Document,
    chunks: Vec<Chunk>,
    ids: impl Iterator<Item = u64>,
) -> Vec<LexicalDoc> {
    let mut anchor_of = anchor_finder(doc);
    // Every chunk carries the file's front-matter terms, so metadata filters act per chunk.
    let meta: std::sync::Arc<[String]> =
        crate::lexical::meta_terms(&crate::chunk::front_matter_fields(doc)).into();
    ids.zip(chunks)
        .map(|(id, c)| LexicalDoc {
            chunk_id: id,
            path: path.to_owned(),
            anchor: anchor_of(&c.pointer),
            heading_path: c.heading_path.unwrap_or_default(),
            text: c.text,
            source_hash: source_hash.to_owned(),
            meta: meta.clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests;
