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

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::chunk::{CHUNKER_VERSION, ChunkOptions, EMBEDDING_TEXT_VERSION};
use crate::config::{Config, EmbeddingProvider, Loaded, SearchMode};
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
    OutlineNode, OutlineRequest, OutlineResponse, ProjectStatus, ReadHint, ReadRequest, ReindexResult,
    SearchHit, SearchRequest, SearchResponse, SliceElement, StatusResponse, SynchronizationStatus,
    TableColumn, TableProjection, TableRow,
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
}

/// What both the engine and the background synchronizer use.
struct Core {
    workspace: Arc<Workspace>,
    filter: GlobFilter,
    chunk_options: ChunkOptions,
    layout: IndexLayout,
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
                ) {
                    Err(e)
                        if e.code == ErrorCode::IndexNotReady
                            && e.message.starts_with("Another")
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
            reader: Mutex::new(None),
            writer: Mutex::new(None),
        });
        let worker_core = Arc::clone(&core);
        let idle_core = Arc::clone(&core);
        let sync = Arc::new(Synchronizer::start(
            Box::new(move |paths: &[RelPath]| worker_core.reconcile(paths)),
            Box::new(move || idle_core.release_indexer()),
        ));
        Ok(Engine { config, warnings, core, sync, watcher: Mutex::new(None) })
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

    /// `kb_search`.
    pub fn search(&self, req: &SearchRequest) -> Result<SearchResponse> {
        let query = req.query.trim();
        if query.is_empty() {
            return Err(Error::invalid_argument("query must not be empty."));
        }
        let top_k = match req.top_k {
            Some(k) if k <= 0 => return Err(Error::invalid_argument("topK must be greater than zero.")),
            Some(k) => k.min(MAX_TOP_K) as usize,
            None => self.config.search.max_results.clamp(1, MAX_TOP_K as usize),
        };
        let scope = if req.include_globs.is_some() || req.exclude_globs.is_some() {
            let include = req.include_globs.clone().unwrap_or_default();
            let exclude = req.exclude_globs.clone().unwrap_or_default();
            Some(GlobFilter::new(&include, &exclude)?)
        } else {
            None
        };
        let mode = match req.mode.as_deref() {
            None => self.config.search.default_mode,
            Some(m) => SearchMode::parse(m).ok_or_else(|| {
                Error::invalid_argument(format!("mode '{m}' is not valid; use lexical, semantic or hybrid."))
            })?,
        };
        let mut warning = None;
        match (mode, self.config.embedding.provider) {
            (SearchMode::Lexical, _) => {}
            (SearchMode::Semantic, EmbeddingProvider::None) => {
                return Err(Error::index_not_ready(
                    "Semantic search is disabled (embedding.provider: none); use mode lexical or hybrid, or configure an embedding endpoint.",
                ));
            }
            (SearchMode::Semantic, _) => {
                return Err(Error::index_not_ready(
                    "Semantic search is unavailable: this build has no vector index yet; use lexical mode.",
                ));
            }
            (SearchMode::Hybrid, EmbeddingProvider::None) => {
                warning = Some(
                    "Semantic search is disabled (embedding.provider: none). Executed lexical search only."
                        .to_owned(),
                );
            }
            (SearchMode::Hybrid, _) => {
                warning = Some(
                    "Semantic search is unavailable: this build has no vector index yet. Falling back to lexical search."
                        .to_owned(),
                );
            }
        }
        if Snapshot::read(&self.core.layout).is_none_or(|s| s.chunks == 0) {
            return Err(Error::index_not_ready(
                "Index is empty. Run kb_reindex first (CLI: `local-vector-search-mcp reindex`).",
            ));
        }
        let filter = scope.as_ref().map(|g| move |p: &str| g.matches(p));
        let hits = self.with_reader(|index| {
            index.search(query, top_k, filter.as_ref().map(|f| f as &(dyn Fn(&str) -> bool + Sync)))
        })?;
        let mut current: BTreeMap<String, Option<String>> = BTreeMap::new();
        let results = hits
            .into_iter()
            .enumerate()
            .map(|(rank, h)| {
                let now = current.entry(h.path.clone()).or_insert_with(|| self.current_hash(&h.path)).clone();
                SearchHit {
                    full_pointer: format!("{}::{}", h.path, h.anchor),
                    read_hint: ReadHint {
                        path: h.path.clone(),
                        pointer: h.anchor.clone(),
                        max_elements: 20,
                        max_bytes: 12_000,
                    },
                    score: 1.0 / (rank as f64 + 1.0),
                    search_mode: "lexical".to_owned(),
                    heading_path: Some(h.heading_path).filter(|s| !s.is_empty()),
                    snippet: h.snippet,
                    stale: now.as_deref() != Some(h.source_hash.as_str()),
                    indexed_source_hash: h.source_hash,
                    pointer: h.anchor,
                    path: h.path,
                }
            })
            .collect();
        Ok(SearchResponse { results, warning })
    }

    fn current_hash(&self, path: &str) -> Option<String> {
        let rel = self.core.workspace.rel_path(path, PathContext::Markdown).ok()?;
        self.core.workspace.read_markdown(&rel).ok().map(|s| s.source_hash)
    }

    /// `kb_status`; `indexing` and `synchronization` come from the caller (the server's
    /// coordinator), so the CLI passes defaults.
    pub fn status(&self, indexing: IndexingStatus, synchronization: SynchronizationStatus) -> StatusResponse {
        let snapshot = Snapshot::read(&self.core.layout);
        let current = lexical_manifest(&self.core.chunk_options);
        let compat = match &snapshot {
            Some(s) => compatibility(&s.manifest, &current),
            None => Compatibility { is_compatible: true, problems: Vec::new() },
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
