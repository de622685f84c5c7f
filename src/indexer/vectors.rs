//! Keeps `vectors.usearch` in step with the store's chunks, after the lexical commit.
//!
//! The lexical index never waits for vectors: a batch commits lexically first, then this
//! catches the vectors up. Missing vectors ("pending") are found by comparing the store's chunk
//! ids with the ids that have a vector; a chunk whose embedding-text hash already has a vector
//! (an unchanged paragraph of an edited file, a forced lexical rebuild) gets a copy of it
//! instead of a new request. When the endpoint fails, what was embedded is kept, the rest stays
//! pending with the error in the status, and the next reindex or edit tries again.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use serde::{Deserialize, Serialize};

use crate::chunk::embedding_text;
use crate::config::EmbeddingConfig;
use crate::error::Result;
use crate::store::Store;
use crate::text::rfc3339_utc;
use crate::vectors::{Embedder, VECTOR_FILE, VectorIndex, check_dimensions, vector_manifest};

use super::{IndexLayout, compatibility, incompatible_message};

/// After a failed embedding call, edits do not retry the endpoint for this long (a reindex
/// always does), so a dead or stalled server does not slow every edit down.
const RETRY_AFTER_FAILURE: Duration = Duration::from_secs(30);

/// Vectors embedded between two saves of a long catch-up (bounds the work a crash loses).
const SAVE_EVERY: usize = 2_048;

/// Chunk records read from the store at a time.
const READ_CHUNKS: usize = 512;

/// What the status shows about vectors (kept in `status.json`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VectorState {
    /// Chunks with a vector.
    pub vectors: u64,
    /// Chunks still waiting for one.
    pub pending: u64,
    /// The last embedding failure, until a catch-up succeeds.
    pub last_error: Option<String>,
    /// When it happened (UTC).
    pub last_error_at_utc: Option<String>,
    /// The stored vectors' manifest.
    pub manifest: BTreeMap<String, String>,
}

/// The vector side of the writer.
pub struct VectorSync {
    embedder: Embedder,
    manifest: BTreeMap<String, String>,
    dims: usize,
    include_heading_context: bool,
    path: PathBuf,
    index: Option<VectorIndex>,
    present: HashMap<u64, String>,
    state: VectorState,
    retry_after: Option<Instant>,
}

impl VectorSync {
    /// The vector side for `config` (only called when embeddings are on).
    pub fn new(
        config: &EmbeddingConfig,
        include_heading_context: bool,
        layout: &IndexLayout,
    ) -> Result<Self> {
        Ok(VectorSync {
            embedder: Embedder::new(config, None)?,
            manifest: vector_manifest(config, include_heading_context),
            dims: config.effective_dimensions() as usize,
            include_heading_context,
            path: layout.dir().join(VECTOR_FILE),
            index: None,
            present: HashMap::new(),
            state: VectorState::default(),
            retry_after: None,
        })
    }

    /// Starts from what the store records (and the last error the previous writer saw), so the
    /// first snapshot this writer writes does not forget the vectors.
    pub fn init_state(&mut self, store: &Store, previous: Option<&VectorState>) -> Result<()> {
        let (_, chunks) = store.counts()?;
        let vectors = store.vector_count()?;
        self.state = VectorState {
            vectors,
            pending: chunks.saturating_sub(vectors),
            last_error: previous.and_then(|p| p.last_error.clone()),
            last_error_at_utc: previous.and_then(|p| p.last_error_at_utc.clone()),
            manifest: store.vector_manifest()?,
        };
        Ok(())
    }

    /// Counts chunks just written lexically as waiting for vectors (until the next sync
    /// computes the exact number).
    pub fn add_pending(&mut self, chunks: u64) {
        self.state.pending += chunks;
    }

    /// The state for the status snapshot.
    pub fn state(&self) -> &VectorState {
        &self.state
    }

    /// Brings the vectors up to date with the store. Returns a warning when vectors are left
    /// pending (endpoint failure, incompatible vectors without `force`). `edit` is true for the
    /// catch-up after an edit, which skips the endpoint for a while after a failure.
    pub fn sync(
        &mut self,
        store: &Store,
        force: bool,
        edit: bool,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<Option<String>> {
        let stored = store.vector_manifest()?;
        let mut reset = None;
        if stored.is_empty() {
            reset = Some(self.manifest.clone());
        } else {
            let c = compatibility(&stored, &self.manifest);
            if !c.is_compatible {
                if !force {
                    let message = incompatible_message("Vector index", &c);
                    self.state.manifest = stored;
                    self.state.last_error = Some(message.clone());
                    return Ok(Some(format!(
                        "{message}\nLexical search is up to date; only the vectors need the forced rebuild."
                    )));
                }
                reset = Some(self.manifest.clone());
            }
        }
        if let Some(manifest) = &reset {
            // A new or rebuilt vector store: drop the file and every record of it.
            self.index = None;
            self.present.clear();
            let _ = std::fs::remove_file(&self.path);
            store.update_vectors(Some(manifest), &[], &[])?;
        }
        self.state.manifest = self.manifest.clone();
        self.open(store)?;
        let Some(index) = self.index.as_mut() else { return Ok(None) };

        let desired: BTreeSet<u64> = store.documents()?.into_values().flat_map(|d| d.chunk_ids).collect();
        let orphans: Vec<u64> = self.present.keys().filter(|k| !desired.contains(k)).copied().collect();
        let missing: Vec<u64> = desired.iter().filter(|k| !self.present.contains_key(k)).copied().collect();
        self.state.pending = missing.len() as u64;
        if missing.is_empty() && orphans.is_empty() {
            self.state.vectors = self.present.len() as u64;
            self.clear_error();
            return Ok(None);
        }

        // Group by group (bounded memory): copies for texts that already have a vector, requests
        // for the rest. Orphans go last, as they may be the source of a copy.
        let by_hash: HashMap<String, u64> = self.present.iter().map(|(k, h)| (h.clone(), *k)).collect();
        // Within the back-off after a failure, an edit's catch-up only copies (no request).
        let backing_off = edit && self.retry_after.is_some_and(|t| Instant::now() < t);
        let mut failure = if backing_off { self.state.last_error.clone() } else { None };
        let (mut added, mut removed): (Vec<(u64, String)>, Vec<u64>) = (Vec::new(), Vec::new());
        let (total, mut done, mut copied, mut since_save) = (missing.len() as u64, 0u64, 0usize, 0usize);
        progress(0, total);
        for ids in missing.chunks(READ_CHUNKS) {
            let mut copies: Vec<(u64, Vec<f32>)> = Vec::new();
            let mut to_embed: Vec<(u64, String, String)> = Vec::new();
            for (id, c) in store.chunks(ids)? {
                match by_hash.get(&c.embedding_text_hash).and_then(|k| index.get(*k)) {
                    Some(v) => {
                        copies.push((id, v));
                        added.push((id, c.embedding_text_hash));
                    }
                    None => {
                        let text = embedding_text(
                            &c.path,
                            c.heading_path.as_deref(),
                            &c.text,
                            self.include_heading_context,
                        );
                        to_embed.push((id, c.embedding_text_hash, text));
                    }
                }
            }
            let items: Vec<(u64, &[f32])> = copies.iter().map(|(id, v)| (*id, v.as_slice())).collect();
            index.add_many(&items)?;
            copied += copies.len();
            done += copies.len() as u64;
            for batch in to_embed.chunks(self.embedder.batch_size()) {
                if failure.is_some() {
                    break;
                }
                let texts: Vec<&str> = batch.iter().map(|(_, _, t)| t.as_str()).collect();
                let vectors = match self.embedder.embed(&texts).and_then(|v| {
                    check_dimensions(&v, self.dims)?;
                    Ok(v)
                }) {
                    Ok(v) => v,
                    Err(e) => {
                        failure = Some(e.message);
                        break;
                    }
                };
                let items: Vec<(u64, &[f32])> =
                    batch.iter().zip(&vectors).map(|((id, _, _), v)| (*id, v.as_slice())).collect();
                index.add_many(&items)?;
                added.extend(batch.iter().map(|(id, hash, _)| (*id, hash.clone())));
                done += batch.len() as u64;
                since_save += batch.len();
                progress(done, total);
            }
            if since_save >= SAVE_EVERY {
                persist(index, &self.path, store, &mut added, &mut removed, &mut self.present)?;
                since_save = 0;
            }
        }
        for id in &orphans {
            index.remove(*id)?;
            self.present.remove(id);
        }
        removed.extend(orphans);
        persist(index, &self.path, store, &mut added, &mut removed, &mut self.present)?;
        self.state.vectors = self.present.len() as u64;
        self.state.pending = desired.len().saturating_sub(self.present.len()) as u64;
        tracing::info!(
            copied,
            embedded = self.state.vectors,
            pending = self.state.pending,
            "vectors synchronised"
        );
        match failure {
            None => {
                self.clear_error();
                Ok(None)
            }
            Some(message) => {
                if self.state.last_error.as_deref() != Some(message.as_str()) {
                    self.state.last_error_at_utc = Some(rfc3339_utc(SystemTime::now()));
                }
                self.state.last_error = Some(message.clone());
                if !backing_off {
                    self.retry_after = Some(Instant::now() + RETRY_AFTER_FAILURE);
                }
                Ok(Some(format!(
                    "Vector embeddings are unavailable: {message} {} chunk(s) wait for vectors; lexical search is complete and the vectors catch up on the next reindex or edit.",
                    self.state.pending
                )))
            }
        }
    }

    fn clear_error(&mut self) {
        self.state.last_error = None;
        self.state.last_error_at_utc = None;
        self.retry_after = None;
    }

    /// Loads the vector file and the store's record of it, once, and makes them agree: ids the
    /// file lacks become pending again; a file holding ids the store does not list (a crash
    /// between the two saves) is rebuilt from the listed ones without re-embedding.
    fn open(&mut self, store: &Store) -> Result<()> {
        if self.index.is_some() {
            return Ok(());
        }
        let mut present = store.vector_keys()?;
        let index = if self.path.is_file() {
            match VectorIndex::load(&self.path, self.dims) {
                Ok(ix) => ix,
                Err(e) => {
                    tracing::warn!("the vector index cannot be loaded ({}); rebuilding it", e.message);
                    VectorIndex::new(self.dims)?
                }
            }
        } else {
            VectorIndex::new(self.dims)?
        };
        let lost: Vec<u64> = present.keys().filter(|k| !index.contains(**k)).copied().collect();
        for id in &lost {
            present.remove(id);
        }
        let index = if index.len() == present.len() {
            index
        } else {
            tracing::warn!(
                "the vector index and its records disagree; rebuilding it from the recorded vectors"
            );
            let mut fresh = VectorIndex::new(self.dims)?;
            for id in present.keys() {
                if let Some(v) = index.get(*id) {
                    fresh.add(*id, &v)?;
                }
            }
            fresh.save(&self.path)?;
            fresh
        };
        if !lost.is_empty() {
            store.update_vectors(None, &[], &lost)?;
        }
        self.state.vectors = present.len() as u64;
        self.present = present;
        self.index = Some(index);
        Ok(())
    }
}

/// Saves the file, then records what it now holds.
fn persist(
    index: &VectorIndex,
    path: &std::path::Path,
    store: &Store,
    added: &mut Vec<(u64, String)>,
    removed: &mut Vec<u64>,
    present: &mut HashMap<u64, String>,
) -> Result<()> {
    if added.is_empty() && removed.is_empty() && path.is_file() {
        return Ok(());
    }
    index.save(path)?;
    store.update_vectors(None, added, removed)?;
    present.extend(added.drain(..));
    removed.clear();
    Ok(())
}
