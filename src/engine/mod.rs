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
mod chunks;
mod edit;
mod export;
mod guides;
mod html;
mod links;
mod paging;
mod search;

use std::sync::{Arc, Mutex};

pub use crate::indexer::ReindexOptions;
pub use guides::{GUIDE_LIMIT, GUIDE_PAGE_LIMIT, GUIDES, Guide, close_names, guide_list, read_guides};

use crate::chunk::{CHUNKER_VERSION, ChunkOptions, EMBEDDING_TEXT_VERSION};
use crate::config::{Config, EmbeddingProvider, Loaded};
use crate::error::{Error, Result};
use crate::indexer::{
    ANALYZER_VERSION, FileWatcher, IndexLayout, IndexService, ReadSide, SCHEMA_VERSION, ServiceParts,
    Snapshot, WATCHER_PATH, WriterParts, compatibility, diagnose, embedding_client, lexical_manifest,
    vector_status, watch,
};
use crate::markdown::{
    Anchor, Document, ElementKind, ReadLimits, build_tree, find_subtree, flatten, outline, read_slice_from,
    split_continuation,
};
use crate::table::Table;
use crate::text::rfc3339_utc;
use crate::wire::{
    Compatibility, IgnoredPath, IgnoredStatus, ListFilesRequest, ListFilesResponse, ListedFile,
    MarkdownSlice, OutlineNode, OutlineRequest, OutlineResponse, ProjectStatus, ReadRequest, ReindexProgress,
    ReindexRequest, ReindexResult, ReindexStartResponse, SliceElement, StatusResponse,
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
    catalog_docs: crate::catalog::DocCache,
    /// Serialises `kb_update_index` calls (read, edit, write of the catalog index).
    catalog_updates: Mutex<()>,
    /// The last large document parsed for `kb_read`/`kb_outline`, by its source hash: paging
    /// through a 20 MB file parses it once, not once per page.
    parsed: Mutex<Option<(String, Arc<Document>)>>,
}

/// Documents at least this large are kept parsed between pages ([`Engine::parse`]).
const PARSE_CACHE_MIN_BYTES: usize = 256 * 1024;

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
        let workspace = Workspace::new(config.knowledge_base.root.clone(), internal_dir_name(&config))?
            .with_ignore_files(config.knowledge_base.respect_ignore_files);
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
            auto_index: config.index.auto_index,
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
            parsed: Mutex::new(None),
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

    /// `text` parsed, from the one-entry cache when it holds the same bytes (`source_hash`).
    fn parse(&self, text: &str, source_hash: &str) -> Arc<Document> {
        if text.len() < PARSE_CACHE_MIN_BYTES {
            return Arc::new(Document::parse(text));
        }
        if let Ok(slot) = self.parsed.lock()
            && let Some((hash, doc)) = slot.as_ref()
            && hash == source_hash
        {
            return Arc::clone(doc);
        }
        let doc = Arc::new(Document::parse(text));
        if let Ok(mut slot) = self.parsed.lock() {
            *slot = Some((source_hash.to_owned(), Arc::clone(&doc)));
        }
        doc
    }

    /// `kb_read`.
    pub fn read(&self, req: &ReadRequest) -> Result<MarkdownSlice> {
        let path = self.core.workspace.rel_path(&req.path, PathContext::Markdown)?;
        // `anchor@offset`: the continuation of an element split across pages.
        let (pointer, offset) = match req.pointer.as_deref() {
            Some(p) => {
                let (anchor, offset) = split_continuation(p);
                (Some(anchor), offset)
            }
            None => (None, None),
        };
        let anchor = pointer.map(Anchor::parse).transpose()?;
        let source = self.core.workspace.read_markdown(&path)?;
        let doc = self.parse(&source.text, &source.source_hash);
        let limits = ReadLimits::clamped(req.max_elements, req.max_bytes);
        let page =
            read_slice_from(&source.text, &doc, path.as_str(), anchor.as_ref(), offset.unwrap_or(0), limits)?;
        let table = match page.elements.first() {
            Some(first) if page.addressed && page.part.is_none() && first.kind == ElementKind::Table => {
                Table::parse(&first.text).map(|t| t.projection(&first.text).into_wire())
            }
            _ => None,
        };
        let notice = page.part.zip(page.elements.first()).map(|(part, e)| {
            format!(
                "Element {} ({}) is {} bytes, more than maxBytes ({}); this page holds its bytes {} to {}, cut after a line end; pass nextPointer as pointer to read on (the pages' markdown concatenate to the exact file).",
                e.pointer,
                e.kind.as_wire(),
                part.len,
                limits.max_bytes,
                part.from,
                part.to
            )
        });
        let mut slice = MarkdownSlice {
            path: path.as_str().to_owned(),
            pointer: page.pointer,
            elements: page
                .elements
                .iter()
                .map(|e| SliceElement {
                    pointer: e.anchor(),
                    kind: e.kind.as_wire().to_owned(),
                    // A part carries its own bytes, not the whole element again.
                    text: if page.part.is_some() { page.markdown.clone() } else { e.text.clone() },
                    heading_path: e.heading_path.clone(),
                })
                .collect(),
            markdown: page.markdown,
            next_pointer: page.next_pointer,
            source_hash: source.source_hash,
            table,
            truncated: page.part.filter(|p| p.to < p.len || p.from > 0).map(|_| true),
            notice,
        };
        // The projection repeats the table cell by cell; over the answer budget (a table of many
        // tiny cells can be several times its Markdown) it is left out, and the answer says so.
        // A caller who asked for a larger page (`maxBytes`) gets up to three times it.
        let asked = if req.max_bytes.is_some() { 3 * limits.max_bytes } else { 0 };
        let budget = self.config.tools.max_answer_bytes.max(asked);
        if slice.table.is_some() && serde_json::to_vec(&slice).map_or(0, |v| v.len()) > budget {
            slice.table = None;
            slice.notice = Some(format!(
                "The table projection was left out: with it this answer would exceed {budget} bytes; the table's Markdown is in markdown, and kb_edit_table addresses its rows."
            ));
        }
        Ok(slice)
    }

    /// `kb_outline`: the heading tree, paged by the answer budget (`maxBytes`, else
    /// `tools.maxAnswerBytes`), optionally only `maxDepth` levels deep or `under` one heading.
    pub fn outline(&self, req: &OutlineRequest) -> Result<OutlineResponse> {
        let path = self.core.workspace.rel_path(&req.path, PathContext::Markdown)?;
        let budget = paging::budget(req.max_bytes, self.config.tools.max_answer_bytes)?;
        let max_depth = match req.max_depth {
            None => usize::MAX,
            Some(d) if d < 1 => {
                return Err(Error::invalid_argument("maxDepth must be at least 1; omit it for every level."));
            }
            Some(d) => d as usize,
        };
        let source = self.core.workspace.read_markdown(&path)?;
        let doc = self.parse(&source.text, &source.source_hash);
        let mut roots = outline(&doc, &source.text);
        if let Some(under) = req.under.as_deref().filter(|u| !u.is_empty()) {
            let anchor = Anchor::parse(under)?;
            let position = if anchor.self_hash.is_some() {
                doc.resolve(&anchor, crate::markdown::RESERVED_READ_MESSAGE)?
            } else {
                doc.position(&anchor.pointer).ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "Heading '{under}' was not found in '{}'; call kb_outline without under to see the current pointers.",
                        path.as_str()
                    ))
                })?
            };
            let wanted = doc.elements[position].anchor();
            roots = find_subtree(roots, &wanted).map(|n| vec![n]).ok_or_else(|| {
                Error::invalid_argument(format!(
                    "'{under}' is not a heading of '{}'; pass a heading's pointer from kb_outline.",
                    path.as_str()
                ))
            })?;
        }
        let flat: Vec<FlatHeading> = flatten(roots, max_depth)
            .into_iter()
            .map(|(n, depth)| FlatHeading {
                node: OutlineNode {
                    pointer: n.pointer,
                    level: n.level,
                    title: n.title,
                    children: Vec::new(),
                },
                depth,
            })
            .collect();
        let fp = paging::fingerprint(&[
            &source.source_hash,
            &max_depth.to_string(),
            req.under.as_deref().unwrap_or(""),
        ]);
        let page = paging::page(flat, req.cursor.as_deref(), budget, "kb_outline", &fp)?;
        let (truncated, notice) = (page.truncated(), page.notice("headings"));
        Ok(OutlineResponse {
            path: path.as_str().to_owned(),
            source_hash: source.source_hash,
            headings: build_tree(page.items.into_iter().map(|h| (h.node, h.depth)), |parent, child| {
                parent.children.push(child)
            }),
            next_cursor: page.next_cursor,
            truncated,
            notice,
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
        let budget = paging::budget(req.max_bytes, self.config.tools.max_answer_bytes)?;
        let files = self.core.workspace.list_files(prefix.as_ref(), glob.as_ref())?;
        let files: Vec<ListedFile> = files
            .into_iter()
            .map(|f| ListedFile {
                relative_path: f.path.as_str().to_owned(),
                kind: f.kind.as_str().to_owned(),
                size: f.size,
                last_write_time_utc: rfc3339_utc(f.last_write_time),
            })
            .collect();
        // Cursors index the sorted listing: a file added or removed between pages shifts it,
        // like any offset cursor over a live folder.
        let fp = paging::fingerprint(&[
            req.path_prefix.as_deref().unwrap_or(""),
            req.include_glob.as_deref().unwrap_or(""),
        ]);
        let page = paging::page(files, req.cursor.as_deref(), budget, "kb_list_files", &fp)?;
        let (truncated, notice) = (page.truncated(), page.notice("files"));
        Ok(ListFilesResponse { files: page.items, next_cursor: page.next_cursor, truncated, notice })
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
    /// write and its index update become searchable without a `kb_reindex`; opening the writer
    /// for it repairs a damaged store or lexical index and rebuilds one of an older format
    /// (`docs/design/indexing-service.md`, "Catch-up at start").
    pub fn catch_up_on_start(&self) {
        if self.index_exists() {
            self.service.request_reindex(ReindexOptions::default());
        }
    }

    /// At server start, at once (`index.autoIndex`, on by default): a project without an index
    /// starts building one in the background, so the agent's first `kb_search` finds results
    /// instead of "Index is empty" (`docs/tools.md`, "The index builds itself"). Cheap: it only
    /// asks the indexing service; the walk runs on its worker.
    pub fn auto_index_on_start(&self) {
        if self.config.index.auto_index && !self.index_exists() {
            tracing::info!("no index yet; building it in the background (index.autoIndex)");
            self.service.request_reindex(ReindexOptions::default());
        }
    }

    /// What the next writer would rebuild in this project's index (a damaged store or lexical
    /// index, an older format, a missing status file), or `None` (see `indexer::diagnose`).
    pub fn index_problem(&self) -> Option<String> {
        diagnose(&self.core.layout)
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
        let rescans = Arc::clone(&self.service);
        let watcher = watch(
            self.core.workspace.root().to_path_buf(),
            self.core.workspace.internal_dir_name().to_owned(),
            self.core.filter.clone(),
            Box::new(move |rel: RelPath| {
                changes.schedule(&rel);
            }),
            // The OS dropped events: a `changed` reindex compares every file with the index.
            Box::new(move || drop(rescans.request_reindex(ReindexOptions::default()))),
            Box::new(move |message: String| errors.report_error(WATCHER_PATH, message)),
        )?;
        *self.watcher.lock().map_err(|_| Error::internal("the watcher lock was poisoned"))? = Some(watcher);
        Ok(())
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
                ignored: self.ignored_status(),
            },
            synchronization: self.service.synchronization(),
            indexing: self.service.indexing(),
            index_mode: if enabled { "vector-enabled" } else { "lexical" }.to_owned(),
            embedding_provider: embedding.provider.as_str().to_owned(),
            compatibility: compat,
            warnings: self.warnings.clone(),
            vectors: enabled.then(|| {
                vector_status(snapshot.as_ref(), embedding, self.config.chunking.include_heading_context)
            }),
            notice: None,
        }
    }

    /// `kb_status` over MCP: [`Engine::status`] with each list cut to a share of the answer
    /// budget (`tools.maxAnswerBytes`); `notice` names what was cut and the totals. The CLI's
    /// `status` prints the lists whole.
    pub fn status_bounded(&self) -> StatusResponse {
        let mut status = self.status();
        // Four lists share what the fixed fields (about 2 KB) leave of the budget.
        let room = self.config.tools.max_answer_bytes.saturating_sub(2048) / 4;
        let mut cut = Vec::new();
        let pending = &mut status.synchronization.paths;
        if let Some(total) = paging::cap(pending, room) {
            cut.push(format!("synchronization.paths shows {} of {total} pending files", pending.len()));
        }
        if let Some(failed) =
            status.indexing.last.as_mut().and_then(|l| l.result.as_mut()).map(|r| &mut r.failed_files)
            && let Some(total) = paging::cap(failed, room)
        {
            cut.push(format!("indexing.last.result.failedFiles shows {} of {total} files", failed.len()));
        }
        if let Some(total) = paging::cap(&mut status.warnings, room) {
            cut.push(format!("warnings shows {} of {total}", status.warnings.len()));
        }
        if let Some(ignored) = status.project.ignored.as_mut()
            && let Some(total) = paging::cap(&mut ignored.paths, room)
        {
            cut.push(format!("project.ignored.paths shows {} of {total}", ignored.paths.len()));
        }
        if !cut.is_empty() {
            status.notice = Some(format!(
                "Lists cut to keep this answer within {} bytes: {}. The CLI `local-vector-search-mcp status` prints them whole.",
                self.config.tools.max_answer_bytes,
                cut.join("; ")
            ));
        }
        status
    }

    /// What ignore files keep out of the index: from this process's last scan, else from a scan
    /// now. `None` when ignore files are not respected.
    fn ignored_status(&self) -> Option<IgnoredStatus> {
        let workspace = &self.core.workspace;
        if !workspace.respects_ignore_files() {
            return None;
        }
        let skipped = match workspace.last_skipped() {
            Some(s) => s,
            None => {
                workspace.scan_markdown(&self.core.filter).ok()?;
                workspace.last_skipped()?
            }
        };
        Some(IgnoredStatus {
            count: skipped.count,
            paths: skipped
                .named
                .into_iter()
                .map(|(path, by)| IgnoredPath { path, rule: format!("{} ({})", by.pattern, by.file) })
                .collect(),
            hint: "Ignored by the project's .gitignore, .ignore or git's excludes; set knowledgeBase.respectIgnoreFiles: false (CLI --no-ignore) to index them, or add a `!pattern` to the ignore file.".to_owned(),
        })
    }
}

/// One heading of a flattened outline, as a page holds it: its node without children and its
/// depth in the tree.
#[derive(serde::Serialize)]
struct FlatHeading {
    #[serde(flatten)]
    node: OutlineNode,
    #[serde(skip)]
    depth: usize,
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
