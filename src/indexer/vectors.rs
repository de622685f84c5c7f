//! Keeps `vectors.usearch` in step with the store's chunks, after the lexical commit.
//!
//! The store lists each document's chunk ids; the chunks' texts and heading paths are read from
//! the lexical index (stored there for hits, and committed before any catch-up step runs), and
//! the embedding-text hash is computed from them.
//!
//! The lexical index never waits for vectors: a batch commits lexically first, then this
//! catches the vectors up. Missing vectors ("pending") are found by comparing the store's chunk
//! ids with the ids that have a vector; a chunk whose embedding-text hash already has a vector
//! (an unchanged paragraph of an edited file, a forced lexical rebuild) gets a copy of it
//! instead of a new request. When the endpoint fails, what was embedded is kept, the rest stays
//! pending with the error in the status, and the next reindex or edit tries again.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use serde::{Deserialize, Serialize};

use crate::chunk::{embedding_text, embedding_text_hash};
use crate::config::EmbeddingConfig;
use crate::error::Result;
use crate::lexical::LexicalIndex;
use crate::store::Store;
use crate::text::rfc3339_utc;
use crate::vectors::{VECTOR_FILE, VectorIndex, check_dimensions, vector_manifest};

use super::{IndexLayout, Snapshot, compatibility, incompatible_message};
use crate::wire::{Compatibility, VectorStatus};

/// After a failed embedding call, edits do not retry the endpoint for this long (a reindex
/// always does), so a dead or stalled server does not slow every edit down.
const RETRY_AFTER_FAILURE: Duration = Duration::from_secs(30);

/// Vectors embedded between two saves of a long catch-up (bounds the work a crash loses).
const SAVE_EVERY: usize = 2_048;

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

/// One embedding request's worth of chunks: sent to the embedding thread by the indexing
/// service, handed back to [`VectorSync::accept`] with the vectors (or the failure).
#[derive(Debug)]
pub struct EmbedJob {
    /// Chunk ids, in input order.
    pub ids: Vec<u64>,
    /// Their embedding-text hashes.
    pub hashes: Vec<String>,
    /// The texts to embed (`docs/reference/original-server.md` §5.8).
    pub texts: Vec<String>,
}

/// What is left to do for the vectors to match the store.
#[derive(Default)]
struct Plan {
    /// Chunk ids without a vector, in id order.
    missing: VecDeque<u64>,
    /// Ids put aside while embedding requests are off (back-off, failure in this run).
    deferred: Vec<u64>,
    /// Ids with a vector but no chunk any more, removed when the plan is done.
    orphans: Vec<u64>,
    /// Ids of the request in flight.
    in_flight: usize,
}

/// The vector side of the writer: a resumable catch-up the indexing service drives one
/// embedding request at a time, so edits are indexed between two requests and no network call
/// runs while the writer is needed.
pub struct VectorSync {
    manifest: BTreeMap<String, String>,
    dims: usize,
    batch_size: usize,
    include_heading_context: bool,
    path: PathBuf,
    index: Option<VectorIndex>,
    /// Ids in the in-memory index → embedding-text hash.
    present: HashMap<u64, String>,
    /// Embedding-text hash → an id holding its vector (copies instead of requests).
    by_hash: HashMap<String, u64>,
    /// Changes to the in-memory index not yet saved with the store's record of them.
    unsaved_added: Vec<(u64, String)>,
    unsaved_removed: Vec<u64>,
    /// `None` after a commit: recomputed from the store before the next step.
    plan: Option<Plan>,
    /// Chunks given a vector since the last `prepare` (progress).
    done: u64,
    /// The stored manifest has been checked (by a reindex, or by the first background step).
    prepared: bool,
    /// Set while the stored vectors are incompatible and no forced rebuild was asked for.
    blocked: bool,
    state: VectorState,
    /// Requests are off until this instant after a failure (edits only copy meanwhile).
    retry_after: Option<Instant>,
    /// A failure stops requests until a reindex or an edit after the back-off asks again.
    paused: bool,
}

impl VectorSync {
    /// The vector side for `config` (only called when embeddings are on).
    pub fn new(config: &EmbeddingConfig, include_heading_context: bool, layout: &IndexLayout) -> Self {
        VectorSync {
            manifest: vector_manifest(config, include_heading_context),
            dims: config.effective_dimensions() as usize,
            batch_size: config.batch_size.max(1),
            include_heading_context,
            path: layout.dir().join(VECTOR_FILE),
            index: None,
            present: HashMap::new(),
            by_hash: HashMap::new(),
            unsaved_added: Vec::new(),
            unsaved_removed: Vec::new(),
            plan: None,
            done: 0,
            prepared: false,
            blocked: false,
            state: VectorState::default(),
            retry_after: None,
            paused: false,
        }
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

    /// The state for the status snapshot.
    pub fn state(&self) -> &VectorState {
        &self.state
    }

    /// A lexical commit changed the chunks: the plan is recomputed before the next step. An
    /// edit after the back-off lets requests resume (`edit`), as does a reindex.
    pub fn after_commit(&mut self, written: u64, edit: bool) {
        self.plan = None;
        self.state.pending += written;
        if edit && self.retry_after.is_none_or(|t| Instant::now() >= t) {
            self.paused = false;
        }
    }

    /// Checks the stored manifest before a reindex's catch-up; `force` rebuilds incompatible
    /// vectors. Returns a warning when the vectors cannot be used without a forced rebuild.
    pub fn prepare(&mut self, store: &Store, force: bool) -> Result<Option<String>> {
        self.prepared = true;
        let stored = store.vector_manifest()?;
        let mut reset = None;
        if stored.is_empty() {
            reset = Some(self.manifest.clone());
        } else {
            let c = compatibility(&stored, &self.manifest);
            if !c.is_compatible {
                if !force {
                    let message = incompatible_message("Vector index", &c);
                    self.blocked = true;
                    self.state.manifest = stored;
                    self.state.last_error = Some(message.clone());
                    return Ok(Some(format!(
                        "{message}\nLexical search is up to date; only the vectors need the forced rebuild."
                    )));
                }
                reset = Some(self.manifest.clone());
            }
        }
        self.blocked = false;
        if let Some(manifest) = &reset {
            // A new or rebuilt vector store: drop the file and every record of it.
            self.index = None;
            self.present.clear();
            self.by_hash.clear();
            self.unsaved_added.clear();
            self.unsaved_removed.clear();
            let _ = std::fs::remove_file(&self.path);
            store.update_vectors(Some(manifest), &[], &[])?;
        }
        self.state.manifest = self.manifest.clone();
        self.plan = None;
        self.done = 0;
        self.paused = false;
        self.open(store)?;
        Ok(None)
    }

    /// Whether a step would send a request now (`reindex`: a reindex's catch-up, which retries
    /// the endpoint whatever the back-off says).
    fn requests_allowed(&self, reindex: bool) -> bool {
        reindex || (!self.paused && self.retry_after.is_none_or(|t| Instant::now() >= t))
    }

    /// Whether [`VectorSync::next_job`] has anything to do: a plan to make or to work through.
    pub fn has_work(&self, reindex: bool) -> bool {
        if self.blocked {
            return false;
        }
        match &self.plan {
            None => true,
            Some(_) if !self.prepared => true,
            Some(p) => {
                !p.missing.is_empty()
                    || !p.orphans.is_empty()
                    || !p.deferred.is_empty() && self.requests_allowed(reindex)
                    || !self.unsaved_added.is_empty()
                    || !self.unsaved_removed.is_empty()
            }
        }
    }

    /// `(done, total)` chunks since the last [`VectorSync::prepare`], for progress: the total
    /// grows when edits add chunks, and never restarts when the plan is recomputed.
    pub fn progress(&self) -> (u64, u64) {
        let left = self
            .plan
            .as_ref()
            .map_or(self.state.pending, |p| (p.missing.len() + p.deferred.len() + p.in_flight) as u64);
        (self.done, self.done + left)
    }

    /// Makes the plan when there is none: missing ids and orphans listed.
    fn ensure_plan(&mut self, store: &Store) -> Result<()> {
        if self.plan.is_some() {
            return Ok(());
        }
        self.open(store)?;
        if self.index.is_none() {
            self.plan = Some(Plan::default());
            return Ok(());
        }
        let desired: BTreeSet<u64> = store.documents()?.into_values().flat_map(|d| d.chunk_ids).collect();
        // Orphans are removed when the plan is done: they may be the source of a copy.
        let orphans: Vec<u64> = self.present.keys().filter(|k| !desired.contains(k)).copied().collect();
        let missing: VecDeque<u64> =
            desired.iter().filter(|k| !self.present.contains_key(k)).copied().collect();
        self.state.pending = missing.len() as u64;
        self.state.vectors = self.present.len() as u64;
        self.plan = Some(Plan { missing, orphans, ..Plan::default() });
        Ok(())
    }

    /// Copies what it can and returns the next request to send, if any. `None` means nothing is
    /// left to request now; what was done is saved then. The chunks' texts are read from
    /// `lexical` (the only copy), their embedding-text hashes computed from them.
    pub fn next_job(
        &mut self,
        store: &Store,
        lexical: &LexicalIndex,
        reindex: bool,
    ) -> Result<Option<EmbedJob>> {
        if !self.prepared && self.prepare(store, false)?.is_some() || self.blocked {
            return Ok(None);
        }
        self.ensure_plan(store)?;
        let requests = self.requests_allowed(reindex);
        loop {
            let Some(plan) = self.plan.as_mut() else { return Ok(None) };
            if requests && !plan.deferred.is_empty() {
                let deferred = std::mem::take(&mut plan.deferred);
                plan.missing.extend(deferred);
            }
            let take = plan.missing.len().min(self.batch_size);
            if take == 0 {
                let orphans = std::mem::take(&mut plan.orphans);
                self.remove(&orphans)?;
                self.persist(store)?;
                return Ok(None);
            }
            // An id answered since the plan was made is done already.
            let ids: Vec<u64> =
                plan.missing.drain(..take).filter(|id| !self.present.contains_key(id)).collect();
            let Some(index) = self.index.as_mut() else { return Ok(None) };
            let mut job = EmbedJob { ids: Vec::new(), hashes: Vec::new(), texts: Vec::new() };
            let mut copies: Vec<(u64, Vec<f32>)> = Vec::new();
            // The chunks come from the lexical index, which committed them before this runs.
            for c in lexical.stored_docs(&ids)? {
                let (id, heading) = (c.chunk_id, Some(c.heading_path.as_str()));
                let text = embedding_text(&c.path, heading, &c.text, self.include_heading_context);
                let hash = embedding_text_hash(&text);
                match self.by_hash.get(&hash).and_then(|k| index.get(*k)) {
                    Some(v) => {
                        copies.push((id, v));
                        self.unsaved_added.push((id, hash.clone()));
                        self.by_hash.insert(hash.clone(), id);
                        self.present.insert(id, hash);
                    }
                    None => {
                        job.texts.push(text);
                        job.ids.push(id);
                        job.hashes.push(hash);
                    }
                }
            }
            let items: Vec<(u64, &[f32])> = copies.iter().map(|(id, v)| (*id, v.as_slice())).collect();
            index.add_many(&items)?;
            self.done += copies.len() as u64;
            self.state.pending = self.state.pending.saturating_sub(copies.len() as u64);
            if job.ids.is_empty() {
                continue;
            }
            if requests {
                plan.in_flight = job.ids.len();
                return Ok(Some(job));
            }
            plan.deferred.extend(job.ids);
        }
    }

    /// Takes a request's answer: inserts the vectors, or records the failure and puts the
    /// chunks back as pending. Saves every [`SAVE_EVERY`] vectors. Returns the failure warning.
    pub fn accept(
        &mut self,
        store: &Store,
        job: EmbedJob,
        answer: Result<Vec<Vec<f32>>>,
    ) -> Result<Option<String>> {
        let checked = answer.and_then(|v| {
            check_dimensions(&v, self.dims)?;
            if v.len() == job.ids.len() {
                Ok(v)
            } else {
                Err(crate::error::Error::internal("the embedding answer does not match the request"))
            }
        });
        if let Some(plan) = self.plan.as_mut() {
            plan.in_flight = 0;
        }
        let vectors = match checked {
            Ok(v) => v,
            Err(e) => {
                if let Some(plan) = self.plan.as_mut() {
                    plan.deferred.extend(&job.ids);
                }
                return Ok(Some(self.fail(e.message)));
            }
        };
        let Some(index) = self.index.as_mut() else { return Ok(None) };
        let items: Vec<(u64, &[f32])> =
            job.ids.iter().zip(&vectors).map(|(id, v)| (*id, v.as_slice())).collect();
        index.add_many(&items)?;
        for (id, hash) in job.ids.iter().zip(job.hashes) {
            self.by_hash.insert(hash.clone(), *id);
            self.present.insert(*id, hash.clone());
            self.unsaved_added.push((*id, hash));
        }
        self.done += job.ids.len() as u64;
        self.state.pending = self.state.pending.saturating_sub(job.ids.len() as u64);
        self.clear_error();
        if self.unsaved_added.len() >= SAVE_EVERY {
            self.persist(store)?;
        }
        Ok(None)
    }

    /// Removes vectors whose chunks are gone.
    fn remove(&mut self, ids: &[u64]) -> Result<()> {
        let Some(index) = self.index.as_mut() else { return Ok(()) };
        for id in ids {
            index.remove(*id)?;
            if let Some(hash) = self.present.remove(id)
                && self.by_hash.get(&hash) == Some(id)
            {
                self.by_hash.remove(&hash);
            }
        }
        self.unsaved_removed.extend_from_slice(ids);
        Ok(())
    }

    /// Records a failed request: requests stop until the back-off has passed and an edit or a
    /// reindex asks again. Returns the warning a reindex shows.
    fn fail(&mut self, message: String) -> String {
        if self.state.last_error.as_deref() != Some(message.as_str()) {
            self.state.last_error_at_utc = Some(rfc3339_utc(SystemTime::now()));
        }
        self.state.last_error = Some(message.clone());
        // An edit inside the back-off does not extend it.
        if self.retry_after.is_none_or(|t| Instant::now() >= t) {
            self.retry_after = Some(Instant::now() + RETRY_AFTER_FAILURE);
        }
        self.paused = true;
        self.failure_warning()
    }

    /// The warning a reindex shows while the endpoint fails.
    pub fn failure_warning(&self) -> String {
        format!(
            "Vector embeddings are unavailable: {} {} chunk(s) wait for vectors; lexical search is complete and the vectors catch up on the next reindex or edit.",
            self.state.last_error.as_deref().unwrap_or("the endpoint failed."),
            self.state.pending
        )
    }

    fn clear_error(&mut self) {
        self.state.last_error = None;
        self.state.last_error_at_utc = None;
        self.retry_after = None;
        self.paused = false;
    }

    /// Saves the file, then records what it now holds (no-op when nothing changed).
    pub fn persist(&mut self, store: &Store) -> Result<()> {
        let Some(index) = self.index.as_ref() else { return Ok(()) };
        if self.unsaved_added.is_empty() && self.unsaved_removed.is_empty() && self.path.is_file() {
            return Ok(());
        }
        index.save(&self.path)?;
        crate::failpoint("vectors.persist.file-saved");
        store.update_vectors(None, &self.unsaved_added, &self.unsaved_removed)?;
        self.unsaved_added.clear();
        self.unsaved_removed.clear();
        self.state.vectors = self.present.len() as u64;
        tracing::info!(vectors = self.state.vectors, pending = self.state.pending, "vectors saved");
        Ok(())
    }

    /// Loads the vector file and the store's record of it, once, and makes them agree: ids the
    /// file lacks become pending again; a file holding ids the store does not list (a crash
    /// between the two saves) is rebuilt from the listed ones without re-embedding.
    fn open(&mut self, store: &Store) -> Result<()> {
        if self.index.is_some() || store.vector_manifest()?.is_empty() {
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
        self.by_hash = present.iter().map(|(k, h)| (h.clone(), *k)).collect();
        self.present = present;
        self.index = Some(index);
        Ok(())
    }
}

/// `kb_status.vectors`: the vector state of the index's last status (`snapshot`) against the
/// current embedding settings (`heading_context`: `chunking.includeHeadingContext`).
pub fn vector_status(
    snapshot: Option<&Snapshot>,
    embedding: &EmbeddingConfig,
    heading_context: bool,
) -> VectorStatus {
    let current = vector_manifest(embedding, heading_context);
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
