//! The read side of the derived index: the readers every search and `kb_links` share, each
//! reloaded when the writer changed what it reads.
//!
//! - The lexical reader is opened on first use and shared (`Arc`, no lock while tantivy ranks);
//!   the indexing service calls [`ReadSide::reload`] after every commit, so the next search does
//!   not pay for the reload (a search also reloads by itself when it finds a newer commit).
//! - The vector index (`vectors.usearch`) and the link graph (`links.bin`) are replaced whole
//!   by the writer; each is re-read when its file's change stamp (size, modification time)
//!   differs from the one it was read under.
//! - [`ReadSide::vector_candidates`] answers the vector side of a search: it checks that the
//!   stored vectors fit the current embedding settings, embeds the query (one client, made on
//!   first use) and searches within the lexical scope.
//!
//! Invariants:
//!
//! - One owner: the engine holds one `ReadSide` and hands the same `Arc` to the indexing
//!   service, so there is one lexical reader per open project.
//! - No reader takes the writer lock: another process may write meanwhile.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::SystemTime;

use super::{IndexLayout, Snapshot, compatibility, incompatible_message};
use crate::config::EmbeddingConfig;
use crate::error::{Error, Result};
use crate::lexical::LexicalIndex;
use crate::links::{LinkGraph, LinkIndex};
use crate::vectors::{Embedder, VectorIndex, check_dimensions, vector_manifest};

/// The longest a query waits for its embedding (indexing uses `embedding.timeoutSeconds`).
const QUERY_EMBED_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// A file's change stamp: size and modification time.
type Stamp = (u64, Option<SystemTime>);

/// A value read from a file, with the stamp the file had.
type Stamped<T> = Option<(Stamp, Arc<T>)>;

/// The shared readers of one index directory.
pub struct ReadSide {
    layout: IndexLayout,
    /// The embedding settings (embeddings on) and whether chunks embed their heading path:
    /// what the stored vectors must have been built with.
    embedding: Option<(EmbeddingConfig, bool)>,
    lexical: Mutex<Option<Arc<LexicalIndex>>>,
    vectors: Mutex<Stamped<VectorIndex>>,
    links: Mutex<Stamped<LinkIndex>>,
    /// The query-time embedding client (created on the first semantic search).
    embedder: Mutex<Option<Arc<Embedder>>>,
}

fn lock<'a, T>(m: &'a Mutex<T>, what: &str) -> Result<MutexGuard<'a, T>> {
    m.lock().map_err(|_| Error::internal(format!("the {what} lock was poisoned")))
}

impl ReadSide {
    /// Readers over `layout`; nothing is opened yet. `embedding`: the settings and
    /// `chunking.includeHeadingContext` when embeddings are on.
    pub fn new(layout: IndexLayout, embedding: Option<(EmbeddingConfig, bool)>) -> Self {
        ReadSide {
            layout,
            embedding,
            lexical: Mutex::new(None),
            vectors: Mutex::new(None),
            links: Mutex::new(None),
            embedder: Mutex::new(None),
        }
    }

    /// The index directory's layout.
    pub fn layout(&self) -> &IndexLayout {
        &self.layout
    }

    /// The lexical reader, opened on first use.
    pub fn lexical(&self) -> Result<Arc<LexicalIndex>> {
        if let Some(index) = lock(&self.lexical, "index reader")?.as_ref() {
            return Ok(Arc::clone(index));
        }
        // Opened without the lock held: a slow open does not block other readers' clones.
        let opened = Arc::new(LexicalIndex::open_or_create(&self.layout.lexical_dir())?);
        Ok(Arc::clone(lock(&self.lexical, "index reader")?.get_or_insert(opened)))
    }

    /// Makes the lexical reader see the last commit now (no-op before the first search opened
    /// it). Called by the indexing service after each commit.
    pub fn reload(&self) {
        let open = lock(&self.lexical, "index reader").ok().and_then(|slot| slot.clone());
        if let Some(index) = open
            && let Err(e) = index.refresh()
        {
            tracing::warn!("could not reload the lexical index: {}", e.message);
        }
    }

    /// The vector index as a reader sees it now (re-mapped after the writer saved a new file).
    pub fn vectors(&self) -> Result<Arc<VectorIndex>> {
        let path = self.layout.vector_path();
        let missing = || {
            Error::index_not_ready(
                "the vector file is missing; run kb_reindex (CLI: `reindex`) with the embedding endpoint running.",
            )
        };
        restamped(&self.vectors, "vector reader", &path, missing, VectorIndex::open_for_search)
    }

    /// Whether embeddings are on (the project has a vector side).
    pub fn vectors_enabled(&self) -> bool {
        self.embedding.is_some()
    }

    /// The `k` nearest chunks to `query` within the search's scope, nearest first (`(chunk id,
    /// cosine distance)`); `scope` lists the chunk ids in it (`None`: no scope), asked only once
    /// the vectors can answer. An `Err` says why the vector side cannot answer (one sentence,
    /// ending with what to do); `snapshot` is the index's last `status.json`.
    pub fn vector_candidates(
        &self,
        query: &str,
        k: usize,
        snapshot: &Snapshot,
        scope: impl FnOnce() -> Result<Option<Vec<u64>>>,
    ) -> Result<Vec<(u64, f32)>> {
        let embedding = self.usable_vectors(snapshot)?;
        let index = self.vectors()?;
        let embedder = self.query_embedder(embedding)?;
        let q = embedder.embed_query(query)?;
        check_dimensions(std::slice::from_ref(&q), index.dims())?;
        let scope_ids = scope()?;
        if scope_ids.as_ref().is_some_and(Vec::is_empty) {
            return Ok(Vec::new());
        }
        index.search(&q, k, scope_ids.as_deref())
    }

    /// The embedding settings when the vectors of `snapshot` can answer a query (embeddings on,
    /// vectors built, of the current settings); else why not, as [`ReadSide::vector_candidates`]
    /// says it. Embeds nothing.
    pub fn usable_vectors(&self, snapshot: &Snapshot) -> Result<&EmbeddingConfig> {
        let Some((embedding, heading_context)) = &self.embedding else {
            return Err(Error::index_not_ready(
                "semantic search is disabled (embedding.provider: none); configure an embedding endpoint.",
            ));
        };
        let current = vector_manifest(embedding, *heading_context);
        let state = snapshot.vectors.as_ref().filter(|v| v.vectors > 0 && !v.manifest.is_empty());
        let Some(state) = state else {
            let why = snapshot
                .vectors
                .as_ref()
                .and_then(|v| v.last_error.clone())
                .map(|e| format!(" (last embedding error: {e})"))
                .unwrap_or_default();
            return Err(Error::index_not_ready(format!(
                "no vectors have been built yet{why}; run kb_reindex (CLI: `reindex`) with the embedding endpoint running."
            )));
        };
        let c = compatibility(&state.manifest, &current);
        if !c.is_compatible {
            return Err(Error::index_not_ready(incompatible_message("the vector index", &c)));
        }
        Ok(embedding)
    }

    /// The query-time embedding client (created on first use, on a blocking thread).
    fn query_embedder(&self, embedding: &EmbeddingConfig) -> Result<Arc<Embedder>> {
        let mut guard = lock(&self.embedder, "embedding client")?;
        if let Some(e) = guard.as_ref() {
            return Ok(Arc::clone(e));
        }
        let e = Arc::new(Embedder::new(embedding, Some(QUERY_EMBED_TIMEOUT))?);
        *guard = Some(Arc::clone(&e));
        Ok(e)
    }

    /// The committed link graph, re-read when the writer replaced `links.bin`.
    pub fn links(&self) -> Result<Arc<LinkIndex>> {
        let path = self.layout.links_path();
        let missing = || {
            Error::index_not_ready(
                "The link graph is not built yet; run kb_reindex first (CLI: `local-vector-search-mcp reindex`), with force=true if kb_status reports the index incompatible.",
            )
        };
        restamped(&self.links, "link graph", &path, missing, |p| Ok(LinkIndex::new(LinkGraph::read(p)?)))
    }
}

/// The value in `slot` when `path` still has the stamp it was read under; else `read` anew.
fn restamped<T>(
    slot: &Mutex<Stamped<T>>,
    what: &str,
    path: &Path,
    missing: impl FnOnce() -> Error,
    read: impl FnOnce(&Path) -> Result<T>,
) -> Result<Arc<T>> {
    let meta = std::fs::metadata(path).map_err(|_| missing())?;
    let stamp = (meta.len(), meta.modified().ok());
    let mut guard = lock(slot, what)?;
    if let Some((_, value)) = guard.as_ref().filter(|(s, _)| *s == stamp) {
        return Ok(Arc::clone(value));
    }
    let value = Arc::new(read(path)?);
    *guard = Some((stamp, Arc::clone(&value)));
    Ok(value)
}
