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

mod assets;
mod catalog;
mod edit;
mod export;
mod filters;
mod guides;
mod html;
mod links;
mod search;

use std::sync::{Arc, Mutex};

pub use crate::indexer::ReindexOptions;
pub use guides::{GUIDE_LIMIT, GUIDE_PAGE_LIMIT, GUIDES, Guide, close_names, guide_list, read_guides};

use crate::chunk::{CHUNKER_VERSION, ChunkOptions, EMBEDDING_TEXT_VERSION};
use crate::config::{Config, EmbeddingProvider, Loaded};
use crate::error::{Error, Result};
use crate::indexer::{
    FileWatcher, IndexLayout, IndexService, ReadSide, SCHEMA_VERSION, ServiceParts, Snapshot, WATCHER_PATH,
    WriterParts, compatibility, embedding_client, lexical_manifest, watch,
};
use crate::lexical::{ANALYZER_VERSION, LexicalIndex};
use crate::markdown::{Anchor, Document, ElementKind, ReadLimits, outline, read_slice};
use crate::table::Table;
use crate::text::rfc3339_utc;
use crate::wire::{
    Compatibility, ListFilesRequest, ListFilesResponse, ListedFile, MarkdownSlice, OutlineNode,
    OutlineRequest, OutlineResponse, ProjectStatus, ReadRequest, ReindexProgress, ReindexRequest,
    ReindexResult, ReindexStartResponse, SliceElement, StatusResponse, TableColumn, TableProjection,
    TableRow, VectorStatus,
};
use crate::workspace::{GlobFilter, PathContext, RelPath, Workspace};

/// One project, opened.
pub struct Engine {
    config: Config,
    warnings: Vec<String>,
    core: Core,
    /// The one owner of background index work (edits, reindexes, vector catch-up).
    service: Arc<IndexService>,
    watcher: Mutex<Option<FileWatcher>>,
    /// Per-document catalog data (`kb_find_docs`, `kb_check`), kept under each file's stamp.
    catalog_docs: crate::catalog::docs::DocCache,
    /// Serialises `kb_update_index` calls (read, edit, write of the catalog index).
    catalog_updates: Mutex<()>,
}

/// The project the engine's use cases work on.
struct Core {
    workspace: Arc<Workspace>,
    filter: GlobFilter,
    chunk_options: ChunkOptions,
    layout: IndexLayout,
    /// The derived-state readers (lexical, vectors, link graph), shared with the indexing
    /// service, which reloads them after each commit.
    readers: Arc<ReadSide>,
}

impl Drop for Engine {
    /// The watcher feeds the indexing service, so it stops (and joins its thread) first; the
    /// service then stops and joins its worker and embedding threads when its last handle goes.
    fn drop(&mut self) {
        let watcher = self.watcher.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        drop(watcher);
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
        let workspace = Arc::new(workspace);
        let embedding = config.embedding.is_enabled().then(|| config.embedding.clone());
        let heading_context = config.chunking.include_heading_context;
        let readers =
            Arc::new(ReadSide::new(layout.clone(), embedding.clone().map(|e| (e, heading_context))));
        let embed = embedding.clone().map(embedding_client);
        let service = Arc::new(IndexService::start(ServiceParts {
            writer: WriterParts {
                workspace: Arc::clone(&workspace),
                filter: filter.clone(),
                chunk_options,
                layout: layout.clone(),
                embedding,
            },
            readers: Arc::clone(&readers),
            embed,
        }));
        let core = Core { workspace, filter, chunk_options, layout, readers };
        if core.layout.interrupted() {
            // The last writer died mid-work: repair before the first search answers.
            service.request_repair();
        }
        Ok(Engine {
            config,
            warnings,
            core,
            service,
            watcher: Mutex::new(None),
            catalog_docs: Default::default(),
            catalog_updates: Mutex::new(()),
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

    /// Runs a reindex and waits for it (joins a reindex already running in this process; the
    /// writer waits up to a minute for another process's writer), reporting progress.
    pub fn reindex(
        &self,
        opts: ReindexOptions,
        progress: &mut dyn FnMut(&ReindexProgress),
    ) -> Result<ReindexResult> {
        self.sweep_temp_files();
        self.service.run_reindex(opts, progress)
    }

    /// `kb_reindex`: starts a reindex in the background, or reports the running one.
    pub fn start_reindex(&self, req: &ReindexRequest) -> Result<ReindexStartResponse> {
        let all = match req.scope.as_deref().map(str::to_ascii_lowercase).as_deref() {
            None | Some("changed") => false,
            Some("all") => true,
            Some(other) => {
                return Err(Error::invalid_argument(format!(
                    "scope '{other}' is not valid; use changed or all."
                )));
            }
        };
        self.sweep_temp_files();
        Ok(self.service.request_reindex(ReindexOptions { all, force: req.force.unwrap_or(false) }))
    }

    /// At server start: with an existing index, an incremental reindex in the background, so edits
    /// made while no server ran (a `git pull`, an editor) or cut off by a kill between a file's
    /// write and its index update become searchable without a `kb_reindex`. A project without an
    /// index keeps the contract's "Index is empty" answer until someone reindexes
    /// (`docs/design/indexing-service.md`, "Catch-up at start").
    pub fn catch_up_on_start(&self) {
        if self.index_exists() {
            self.service.request_reindex(ReindexOptions::default());
        }
    }

    /// Starts watching the knowledge-base root for external edits (`watchFiles`). A failure is
    /// also shown in `kb_status.synchronization`.
    pub fn start_watching(&self) -> Result<()> {
        let outcome = self.watch();
        if let Err(e) = &outcome {
            self.service.report_error(WATCHER_PATH, e.message.clone());
        }
        outcome
    }

    fn watch(&self) -> Result<()> {
        let (changes, errors) = (Arc::clone(&self.service), Arc::clone(&self.service));
        let watcher = watch(
            self.core.workspace.root().to_path_buf(),
            self.core.workspace.internal_dir_name().to_owned(),
            self.core.filter.clone(),
            Box::new(move |rel: RelPath| {
                changes.schedule(&rel);
            }),
            Box::new(move |message: String| errors.report_error(WATCHER_PATH, message)),
        )?;
        *self.watcher.lock().map_err(|_| Error::internal("the watcher lock was poisoned"))? = Some(watcher);
        Ok(())
    }

    /// Runs `f` with the shared lexical reader; no lock is held while it runs.
    fn with_reader<T>(&self, f: impl FnOnce(&LexicalIndex) -> Result<T>) -> Result<T> {
        let index = self.core.readers.lexical()?;
        f(&index)
    }

    /// `kb_status`: the index on disk, pending edits, the running or last reindex, vectors.
    pub fn status(&self) -> StatusResponse {
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
            synchronization: self.service.synchronization(),
            indexing: self.service.indexing(),
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
