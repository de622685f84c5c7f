//! The façade front-ends use: one method per use case, plain data in and out, synchronous.
//!
//! The CLI calls these methods directly; the MCP server calls them through `spawn_blocking`.
//! Reads (`read`, `outline`, `list_files`) work on the current source and never need an index;
//! `search` reads the lexical index only, so it works while another process reindexes.
//!
//! Invariants:
//!
//! - Every failure carries an `ErrorCode` and one sentence saying what to do.
//! - No absolute path appears in an error message (status fields report the index location).

mod mutate;
mod search;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::chunk::{CHUNKER_VERSION, ChunkOptions, EMBEDDING_TEXT_VERSION};
use crate::config::{Config, EmbeddingConfig, EmbeddingProvider, Loaded};
use crate::error::{Error, ErrorCode, Result};
use crate::indexer::{
    FileWatcher, IndexLayout, Indexer, Progress, ReindexOptions, SCHEMA_VERSION, Snapshot, Synchronizer,
    WATCHER_PATH, compatibility, lexical_manifest, watch,
};
use crate::lexical::{ANALYZER_VERSION, LexicalIndex};
use crate::markdown::{Anchor, Document, ElementKind, ReadLimits, outline, read_slice};
use crate::table::Table;
use crate::text::rfc3339_utc;
use crate::wire::{
    Compatibility, IndexingStatus, ListFilesRequest, ListFilesResponse, ListedFile, MarkdownSlice,
    OutlineNode, OutlineRequest, OutlineResponse, ProjectStatus, ReadRequest, ReindexResult, SliceElement,
    StatusResponse, SynchronizationStatus, TableColumn, TableProjection, TableRow, VectorStatus,
};
use crate::workspace::{GlobFilter, PathContext, RelPath, Workspace};

/// Most results one search returns.
pub const MAX_TOP_K: i64 = 50;

/// One project, opened.
pub struct Engine {
    config: Config,
    warnings: Vec<String>,
    core: Arc<Core>,
    sync: Arc<Synchronizer>,
    watcher: Mutex<Option<FileWatcher>>,
    /// The query-time embedding client (embeddings on; created on first semantic search).
    embedder: Mutex<Option<Arc<crate::vectors::Embedder>>>,
    /// The search-side view of `vectors.usearch`.
    vectors: Mutex<Option<search::VectorReader>>,
}

/// What both the engine and the background synchronizer use.
struct Core {
    workspace: Arc<Workspace>,
    filter: GlobFilter,
    chunk_options: ChunkOptions,
    layout: IndexLayout,
    /// The embedding settings when embeddings are on (the writer keeps vectors up to date).
    embedding: Option<EmbeddingConfig>,
    reader: Mutex<Option<LexicalIndex>>,
    /// The writer, kept open while edits keep coming (released when the synchronizer idles),
    /// so a burst of edits does not pay for opening the stores and joining tantivy's threads.
    writer: Mutex<Option<Indexer>>,
}

/// How long a writer waits for another writer of this project before giving up.
const WRITER_WAIT: Duration = Duration::from_secs(60);

impl Core {
    /// Runs `f` with the writer, opening it (and waiting while another process holds the writer
    /// lock) when it is not open yet. A failed `f` closes the writer.
    fn with_indexer<T>(&self, f: impl FnOnce(&mut Indexer) -> Result<T>) -> Result<T> {
        let mut guard =
            self.writer.lock().map_err(|_| Error::internal("the index writer lock was poisoned"))?;
        if guard.is_none() {
            let deadline = Instant::now() + WRITER_WAIT;
            let opened = loop {
                match Indexer::open(
                    Arc::clone(&self.workspace),
                    self.filter.clone(),
                    self.chunk_options,
                    &self.layout,
                    self.embedding.as_ref(),
                ) {
                    Err(e)
                        if e.code == ErrorCode::IndexNotReady
                            && e.is(crate::error::ErrorDetail::WriterBusy)
                            && Instant::now() < deadline =>
                    {
                        std::thread::sleep(Duration::from_millis(50));
                    }
                    other => break other?,
                }
            };
            *guard = Some(opened);
        }
        let outcome = match guard.as_mut() {
            Some(indexer) => f(indexer),
            None => Err(Error::internal("the index writer could not be opened")),
        };
        if outcome.is_err() {
            *guard = None;
        }
        outcome
    }

    /// Embeds the vectors edits left pending, if the writer is open (after edits).
    fn catch_up_vectors(&self) {
        if self.embedding.is_none() {
            return;
        }
        let Ok(mut guard) = self.writer.lock() else { return };
        if let Some(ix) = guard.as_mut()
            && let Err(e) = ix.catch_up_vectors()
        {
            tracing::warn!("could not update the vectors after an edit: {}", e.message);
        }
    }

    /// Closes the writer so other processes can write (and tantivy finishes its merges).
    fn release_indexer(&self) {
        let taken = self.writer.lock().ok().and_then(|mut g| g.take());
        drop(taken);
    }

    /// Reconciles `paths` and makes the reader see the result.
    fn reconcile(&self, paths: &[RelPath]) -> Result<()> {
        self.with_indexer(|ix| ix.reconcile(paths))?;
        self.reload_reader()
    }

    fn reload_reader(&self) -> Result<()> {
        let guard = self.reader.lock().map_err(|_| Error::internal("the index reader lock was poisoned"))?;
        match guard.as_ref() {
            Some(index) => index.reload(),
            None => Ok(()),
        }
    }
}

impl Engine {
    /// Opens a project from a loaded configuration. Cheap: no index is opened yet.
    pub fn open(loaded: Loaded) -> Result<Engine> {
        let Loaded { config, mut warnings } = loaded;
        let workspace = Workspace::new(config.knowledge_base.root.clone(), internal_dir_name(&config))?;
        let filter = GlobFilter::with_names(
            &config.knowledge_base.include,
            &config.knowledge_base.exclude,
            "knowledgeBase.include",
            "knowledgeBase.exclude",
        )?;
        let chunk_options = ChunkOptions {
            max_chunk_bytes: config.chunking.max_chunk_bytes,
            max_elements: config.chunking.max_elements,
            include_heading_context: config.chunking.include_heading_context,
            include_front_matter: config.chunking.include_front_matter,
        };
        if let Some(note) = config.storage.db_file_note() {
            warnings.push(note);
        }
        let layout = IndexLayout::new(config.storage.path.clone());
        let core = Arc::new(Core {
            workspace: Arc::new(workspace),
            filter,
            chunk_options,
            layout,
            embedding: config.embedding.is_enabled().then(|| config.embedding.clone()),
            reader: Mutex::new(None),
            writer: Mutex::new(None),
        });
        let worker_core = Arc::clone(&core);
        let idle_core = Arc::clone(&core);
        let sync = Arc::new(Synchronizer::start(
            Box::new(move |paths: &[RelPath]| worker_core.reconcile(paths)),
            Box::new(move |shutdown: bool| {
                if !shutdown {
                    idle_core.catch_up_vectors();
                }
                idle_core.release_indexer();
            }),
        ));
        Ok(Engine {
            config,
            warnings,
            core,
            sync,
            watcher: Mutex::new(None),
            embedder: Mutex::new(None),
            vectors: Mutex::new(None),
        })
    }

    /// The resolved configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The workspace (the only door to user files).
    pub fn workspace(&self) -> &Workspace {
        &self.core.workspace
    }

    /// Whether an index has been built for this project.
    pub fn index_exists(&self) -> bool {
        self.core.layout.exists()
    }

    /// `kb_read`.
    pub fn read(&self, req: &ReadRequest) -> Result<MarkdownSlice> {
        let path = self.core.workspace.rel_path(&req.path, PathContext::Markdown)?;
        let anchor = req.pointer.as_deref().map(Anchor::parse).transpose()?;
        let source = self.core.workspace.read_markdown(&path)?;
        let doc = Document::parse(&source.text);
        let limits = ReadLimits::clamped(req.max_elements, req.max_bytes);
        let page = read_slice(&source.text, &doc, path.as_str(), anchor.as_ref(), limits)?;
        let table = match page.elements.first() {
            Some(first) if page.addressed && first.kind == ElementKind::Table => {
                Table::parse(&first.text).map(|t| project_table(&t, &first.text))
            }
            _ => None,
        };
        Ok(MarkdownSlice {
            path: path.as_str().to_owned(),
            pointer: page.pointer,
            elements: page
                .elements
                .iter()
                .map(|e| SliceElement {
                    pointer: e.anchor(),
                    kind: e.kind.as_wire().to_owned(),
                    text: e.text.clone(),
                    heading_path: e.heading_path.clone(),
                })
                .collect(),
            markdown: page.markdown,
            next_pointer: page.next_pointer,
            source_hash: source.source_hash,
            table,
        })
    }

    /// `kb_outline`.
    pub fn outline(&self, req: &OutlineRequest) -> Result<OutlineResponse> {
        let path = self.core.workspace.rel_path(&req.path, PathContext::Markdown)?;
        let source = self.core.workspace.read_markdown(&path)?;
        let doc = Document::parse(&source.text);
        fn convert(n: crate::markdown::OutlineNode) -> OutlineNode {
            OutlineNode {
                pointer: n.pointer,
                level: n.level,
                title: n.title,
                children: n.children.into_iter().map(convert).collect(),
            }
        }
        Ok(OutlineResponse {
            path: path.as_str().to_owned(),
            source_hash: source.source_hash,
            headings: outline(&doc, &source.text).into_iter().map(convert).collect(),
        })
    }

    /// `kb_list_files`.
    pub fn list_files(&self, req: &ListFilesRequest) -> Result<ListFilesResponse> {
        let prefix = req
            .path_prefix
            .as_deref()
            .filter(|p| !p.trim().is_empty())
            .map(|p| self.core.workspace.rel_path(p.trim_end_matches(['/', '\\']), PathContext::Any))
            .transpose()?;
        let glob = req
            .include_glob
            .as_deref()
            .map(|g| GlobFilter::with_names(&[g.to_owned()], &[], "includeGlob", "excludeGlob"))
            .transpose()?;
        let files = self.core.workspace.list_files(prefix.as_ref(), glob.as_ref())?;
        Ok(ListFilesResponse {
            files: files
                .into_iter()
                .map(|f| ListedFile {
                    relative_path: f.path.as_str().to_owned(),
                    kind: f.kind.as_str().to_owned(),
                    size: f.size,
                    last_write_time_utc: rfc3339_utc(f.last_write_time),
                })
                .collect(),
        })
    }

    /// Runs a reindex in this thread (takes the writer lock; waits for another writer of this
    /// process or another one to finish first, up to a minute).
    pub fn reindex(
        &self,
        opts: ReindexOptions,
        progress: &mut dyn FnMut(&Progress),
    ) -> Result<ReindexResult> {
        let result = self.core.with_indexer(|ix| ix.reindex(opts, progress));
        self.core.release_indexer();
        let result = result?;
        self.sync.clear_all();
        self.core.reload_reader()?;
        Ok(result)
    }

    /// Starts watching the knowledge-base root for external edits (`watchFiles`).
    pub fn start_watching(&self) -> Result<()> {
        let on_change = {
            let sync = Arc::clone(&self.sync);
            Box::new(move |rel: RelPath| {
                sync.schedule(&rel);
            })
        };
        let on_error = {
            let sync = Arc::clone(&self.sync);
            Box::new(move |message: String| sync.report_error(WATCHER_PATH, message))
        };
        let watcher = watch(
            self.core.workspace.root().to_path_buf(),
            self.core.workspace.internal_dir_name().to_owned(),
            self.core.filter.clone(),
            on_change,
            on_error,
        )?;
        *self.watcher.lock().map_err(|_| Error::internal("the watcher lock was poisoned"))? = Some(watcher);
        Ok(())
    }

    /// The background synchronizer (pending edits, watcher errors).
    pub fn synchronizer(&self) -> &Synchronizer {
        &self.sync
    }

    fn with_reader<T>(&self, f: impl FnOnce(&LexicalIndex) -> Result<T>) -> Result<T> {
        let mut guard =
            self.core.reader.lock().map_err(|_| Error::internal("the index reader lock was poisoned"))?;
        if guard.is_none() {
            *guard = Some(LexicalIndex::open_or_create(&self.core.layout.lexical_dir())?);
        }
        match guard.as_ref() {
            Some(index) => f(index),
            None => Err(Error::internal("the index reader could not be opened")),
        }
    }

    /// `kb_status`; `indexing` and `synchronization` come from the caller (the server's
    /// coordinator), so the CLI passes defaults.
    pub fn status(&self, indexing: IndexingStatus, synchronization: SynchronizationStatus) -> StatusResponse {
        let snapshot = Snapshot::read(&self.core.layout);
        let current = lexical_manifest(&self.core.chunk_options);
        let compat = match &snapshot {
            Some(s) => compatibility(&s.manifest, &current),
            None => Compatibility::compatible(),
        };
        let embedding = &self.config.embedding;
        let enabled = embedding.provider != EmbeddingProvider::None;
        StatusResponse {
            database_path: self.core.layout.dir().display().to_string(),
            schema_version: SCHEMA_VERSION.to_owned(),
            chunker_version: CHUNKER_VERSION.to_owned(),
            embedding_text_builder_version: EMBEDDING_TEXT_VERSION.to_owned(),
            analyzer_version: ANALYZER_VERSION.to_owned(),
            embedding_model: if enabled { embedding.model.clone() } else { "none".to_owned() },
            embedding_dimensions: enabled.then(|| embedding.effective_dimensions()),
            project: ProjectStatus {
                root: self.core.workspace.root().display().to_string(),
                documents: snapshot.as_ref().map_or(0, |s| s.documents),
                chunks: snapshot.as_ref().map_or(0, |s| s.chunks),
                last_indexed_at_utc: snapshot.as_ref().map(|s| s.last_indexed_at_utc.clone()),
            },
            synchronization,
            indexing,
            index_mode: if enabled { "vector-enabled" } else { "lexical" }.to_owned(),
            embedding_provider: embedding.provider.as_str().to_owned(),
            compatibility: compat,
            warnings: self.warnings.clone(),
            vectors: enabled.then(|| self.vector_status(snapshot.as_ref())),
        }
    }

    fn vector_status(&self, snapshot: Option<&Snapshot>) -> VectorStatus {
        let current = crate::vectors::vector_manifest(
            &self.config.embedding,
            self.config.chunking.include_heading_context,
        );
        let chunks = snapshot.map_or(0, |s| s.chunks);
        match snapshot.and_then(|s| s.vectors.as_ref()) {
            Some(v) => VectorStatus {
                vectors: v.vectors,
                pending: v.pending,
                last_error: v.last_error.clone(),
                last_error_at_utc: v.last_error_at_utc.clone(),
                compatibility: if v.manifest.is_empty() {
                    Compatibility::compatible()
                } else {
                    compatibility(&v.manifest, &current)
                },
            },
            // Built in lexical mode so far: every chunk waits for its vector.
            None => VectorStatus {
                vectors: 0,
                pending: chunks,
                last_error: None,
                last_error_at_utc: None,
                compatibility: Compatibility::compatible(),
            },
        }
    }
}

fn internal_dir_name(config: &Config) -> &str {
    // The index directory is refused by the path guard when it sits inside the root.
    config
        .storage
        .path
        .strip_prefix(&config.knowledge_base.root)
        .ok()
        .and_then(|rel| rel.components().next())
        .and_then(|c| c.as_os_str().to_str())
        .unwrap_or(crate::workspace::DEFAULT_INTERNAL_DIR)
}

fn project_table(table: &Table, text: &str) -> TableProjection {
    let p = table.projection(text);
    TableProjection {
        column_count: p.column_count,
        row_count: p.row_count,
        columns: p
            .columns
            .into_iter()
            .enumerate()
            .map(|(index, (name, alignment))| TableColumn {
                index,
                name,
                alignment: alignment.as_str().to_owned(),
            })
            .collect(),
        rows: p.rows.into_iter().enumerate().map(|(index, cells)| TableRow { index, cells }).collect(),
    }
}
