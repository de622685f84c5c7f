//! The indexing service: the one owner of background index work.
//!
//! One worker thread owns the writer ([`Indexer`]) and does everything that writes the index:
//! reconciling edited paths (mutations, the file watcher), full reindexes with progress, and the
//! vector catch-up. Embedding requests go to a second thread, one at a time, so the worker keeps
//! indexing edits while the endpoint answers: an edit is searchable lexically within the normal
//! latency even while thousands of chunks wait for vectors. Front-ends see plain calls
//! ([`IndexService::schedule`], [`IndexService::request_reindex`], [`IndexService::run_reindex`])
//! and one status ([`IndexService::indexing`], [`IndexService::synchronization`]).
//!
//! Invariants:
//!
//! - Only the worker touches the writer; nothing holds it while sleeping or during a network
//!   call. The writer closes after [`IDLE_AFTER`] without work, so other processes can write.
//! - Each schedule bumps a generation: a completion only clears a path whose generation still
//!   matches, so an older completion never hides a newer change. A failed batch keeps its paths
//!   dirty and shows the error in `kb_status.synchronization`.
//! - One reindex at a time: a second request joins the running one. While a reindex rebuilds
//!   from scratch, searches are refused ([`IndexService::check_searchable`]).
//! - Work order: shutdown, an embedding answer, queued edits, a requested reindex, the next
//!   embedding request, closing an idle writer — except that after an edit batch, background
//!   work that waits (a start-up repair, a requested reindex, an embedding request, the end of
//!   a reindex) goes first once, so a steady stream of edits cannot starve it.
//! - The link snapshot of an edit's commit that changed a link or heading (`links.bin`,
//!   megabytes on a large project, 100+ ms to encode and write) waits until no edit has come for
//!   [`LINKS_QUIET`], at most [`LINKS_MAX_DELAY`] after the first commit it covers, so an agent
//!   editing file after file does not wait for it before each edit; the batches it covers stay
//!   pending in `kb_status` until it is written. Any other work writes it first.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use super::{EmbedJob, Indexer, Progress, ReadSide, ReindexOptions, WriterParts};
use crate::error::{Error, ErrorDetail, Result};
use crate::text::rfc3339_utc;
use crate::wire::{
    EmbeddingProgress, IndexingStatus, LastReindex, ReindexProgress, ReindexResult, ReindexStartResponse,
    SynchronizationStatus,
};
use crate::workspace::{RelPath, compare_paths};

/// The pseudo path that carries file-watcher errors.
pub const WATCHER_PATH: &str = "<watcher>";

/// Quiet time after the last piece of work before the writer is closed.
pub const IDLE_AFTER: Duration = Duration::from_secs(1);

/// Quiet time after an edit's commit before its link snapshot is written (module docs).
const LINKS_QUIET: Duration = Duration::from_millis(150);

/// The longest an edit's link snapshot waits while edits keep coming.
const LINKS_MAX_DELAY: Duration = Duration::from_secs(1);

/// How long the writer waits for another process's writer before giving up; the wait starts
/// again while that process's reindex shows progress (see [`OtherRun`]).
const WRITER_WAIT: Duration = Duration::from_secs(60);

/// [`WRITER_WAIT`], shortened by `LVS_WRITER_WAIT_MS` in test builds (the `failpoints`
/// feature), so tests of a wait that runs out need not take a minute.
fn writer_wait() -> Duration {
    #[cfg(feature = "failpoints")]
    if let Some(ms) = std::env::var("LVS_WRITER_WAIT_MS").ok().and_then(|v| v.parse().ok()) {
        return Duration::from_millis(ms);
    }
    WRITER_WAIT
}

/// The longest a mutation waits for its change to be searchable, when `LVS_SYNC_WAIT_MS` sets
/// it in test builds (the `failpoints` feature): a test that slows the indexer down on purpose
/// still gets `indexSynchronized: true` once the change is searchable, instead of the normal
/// short wait running out first.
fn sync_wait_override() -> Option<Duration> {
    #[cfg(feature = "failpoints")]
    if let Some(ms) = std::env::var("LVS_SYNC_WAIT_MS").ok().and_then(|v| v.parse().ok()) {
        return Some(Duration::from_millis(ms));
    }
    None
}

/// How often a running reindex rewrites its progress file for other processes.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);
/// A progress file not rewritten for this long is a dead process's (ignored).
const PROGRESS_STALE: Duration = Duration::from_secs(30);

/// Embeds a batch of texts (the embedding client; runs on the embedding thread).
pub type EmbedFn = dyn Fn(&[&str]) -> Result<Vec<Vec<f32>>> + Send + Sync;

/// How long dropping the service waits for an embedding request in flight before it leaves the
/// embedding thread to end on its own (the request's timeout bounds it).
const EMBED_JOIN_WAIT: Duration = Duration::from_secs(2);

/// What the service needs from its owner.
pub struct ServiceParts {
    /// What opening the writer takes.
    pub writer: WriterParts,
    /// The readers the worker reloads after each commit.
    pub readers: Arc<ReadSide>,
    /// The embedding client, when embeddings are on.
    pub embed: Option<Box<EmbedFn>>,
    /// `index.autoIndex`: a search that finds the index damaged or unbuilt asks for a rebuild.
    pub auto_index: bool,
}

/// Pending paths and their generations (pure bookkeeping; the worker drains it).
#[derive(Debug, Default)]
pub(crate) struct Queue {
    next_generation: u64,
    /// Path → generation of its newest pending change.
    dirty: BTreeMap<String, u64>,
    /// Paths waiting for the worker.
    queued: BTreeSet<String>,
    /// Path → generation of its newest change that searches already see (the rest of its
    /// commit, the link snapshot, may still be in progress), kept while a newer change of the
    /// path is pending.
    searchable: BTreeMap<String, u64>,
    /// Path → generation of its newest change whose batch completed, kept while a newer change
    /// of the path is pending (a path without a pending change is synced as a whole).
    completed: BTreeMap<String, u64>,
    last_error: Option<String>,
}

impl Queue {
    /// Marks `path` changed; returns the generation of this change.
    pub(crate) fn schedule(&mut self, path: &str) -> u64 {
        self.next_generation += 1;
        self.dirty.insert(path.to_owned(), self.next_generation);
        self.queued.insert(path.to_owned());
        self.next_generation
    }

    /// Records an error that is not about one file (the watcher failed).
    pub(crate) fn report_error(&mut self, pseudo_path: &str, message: String) {
        self.next_generation += 1;
        self.dirty.insert(pseudo_path.to_owned(), self.next_generation);
        self.last_error = Some(message);
    }

    /// Takes every queued path with the generation it has now.
    pub(crate) fn take_batch(&mut self) -> Vec<(String, u64)> {
        let queued = std::mem::take(&mut self.queued);
        queued.into_iter().map(|p| (p.clone(), self.dirty.get(&p).copied().unwrap_or(0))).collect()
    }

    /// Searches see what `batch` covered (its commit is not complete yet).
    pub(crate) fn searchable(&mut self, batch: &[(String, u64)]) {
        for (path, generation) in batch {
            let entry = self.searchable.entry(path.clone()).or_default();
            *entry = (*entry).max(*generation);
        }
    }

    /// Whether searches see change `generation` of `path` (what a mutation waits for).
    pub(crate) fn is_searchable(&self, path: &str, generation: u64) -> bool {
        self.is_synced(path, generation) || self.searchable.get(path).is_some_and(|&g| g >= generation)
    }

    /// Clears what `batch` covered, unless a newer change came meanwhile (then the batch's
    /// generation is remembered as completed, so its waiters are answered); a failure keeps the
    /// paths dirty with the error.
    pub(crate) fn complete(&mut self, batch: &[(String, u64)], outcome: std::result::Result<(), String>) {
        match outcome {
            Ok(()) => {
                for (path, generation) in batch {
                    if self.dirty.get(path) == Some(generation) {
                        self.dirty.remove(path);
                        self.searchable.remove(path);
                        self.completed.remove(path);
                    } else {
                        let entry = self.completed.entry(path.clone()).or_default();
                        *entry = (*entry).max(*generation);
                    }
                }
                if self.dirty.is_empty() {
                    self.last_error = None;
                }
            }
            Err(message) => self.last_error = Some(message),
        }
    }

    /// Whether change `generation` of `path` is in the index: no change of the path is pending,
    /// or a batch that covered this change has completed.
    ///
    /// A newer pending change says nothing about this one: the file watcher's echo of a
    /// mutation's own write is scheduled while the mutation still waits for its batch, and
    /// counting this change as synced because a newer one exists answered `indexSynchronized:
    /// true` before the index had the mutation's text (`docs/reliability.md`, "Soak, round 2").
    pub(crate) fn is_synced(&self, path: &str, generation: u64) -> bool {
        !self.dirty.contains_key(path) || self.completed.get(path).is_some_and(|&g| g >= generation)
    }

    /// Forgets every pending mark that is not queued (a full reindex covered every file).
    pub(crate) fn clear_all(&mut self) {
        let queued = &self.queued;
        self.dirty.retain(|p, _| queued.contains(p));
        let dirty = &self.dirty;
        self.searchable.retain(|p, _| dirty.contains_key(p));
        self.completed.retain(|p, _| dirty.contains_key(p));
        if self.dirty.is_empty() {
            self.last_error = None;
        }
    }

    /// Queues again the paths of `batch` that are still pending (a batch that could not get
    /// the writer is retried, not left until the next edit of those files).
    pub(crate) fn requeue(&mut self, batch: &[(String, u64)]) {
        for (path, _) in batch {
            if self.dirty.contains_key(path) {
                self.queued.insert(path.clone());
            }
        }
    }

    pub(crate) fn has_queued(&self) -> bool {
        !self.queued.is_empty()
    }

    /// `kb_status.synchronization`.
    pub(crate) fn status(&self) -> SynchronizationStatus {
        let mut paths: Vec<String> = self.dirty.keys().cloned().collect();
        paths.sort_by(|a, b| compare_paths(a, b));
        SynchronizationStatus {
            pending_files: paths.len() as u64,
            paths,
            last_error: self.last_error.clone(),
        }
    }
}

/// The reindex slot: at most one running, the last one's outcome (pure bookkeeping).
#[derive(Debug, Default)]
pub(crate) struct ReindexSlot {
    requested: Option<ReindexOptions>,
    current: Option<ReindexProgress>,
    last: Option<LastReindex>,
    /// The last run's full result, for callers waiting on it.
    last_result: Option<Result<ReindexResult>>,
    /// Completed runs.
    runs: u64,
}

fn scope_name(opts: ReindexOptions) -> &'static str {
    if opts.all { "all" } else { "changed" }
}

impl ReindexSlot {
    /// Starts a run unless one is requested or running (then that one is returned).
    pub(crate) fn request(&mut self, opts: ReindexOptions) -> ReindexStartResponse {
        if let Some(current) = &self.current {
            return ReindexStartResponse { started: false, current: Some(current.clone()) };
        }
        let current = ReindexProgress {
            scope: scope_name(opts).to_owned(),
            force: opts.force,
            started_at_utc: rfc3339_utc(SystemTime::now()),
            processed_files: 0,
            total_files: None,
            current_path: None,
            is_destructive_rebuild: false,
            embedding: None,
        };
        self.current = Some(current.clone());
        self.requested = Some(opts);
        ReindexStartResponse { started: true, current: Some(current) }
    }

    /// The gate: no search while a destructive rebuild runs.
    pub(crate) fn check_searchable(&self) -> Result<()> {
        if self.current.as_ref().is_some_and(|c| c.is_destructive_rebuild) {
            return Err(Error::index_not_ready(
                "Index rebuild is in progress; check kb_status before retrying.",
            ));
        }
        Ok(())
    }

    /// Copies the writer's progress into the running run.
    pub(crate) fn progress(&mut self, p: &Progress) {
        if let Some(c) = self.current.as_mut() {
            c.processed_files = p.processed;
            c.total_files = p.total.or(c.total_files);
            c.current_path = p.current_path.clone();
            c.is_destructive_rebuild |= p.destructive;
        }
    }

    /// This process's run waits for another process's reindex: show that run's progress (its
    /// files, its current path) in this one, which continues once the writer is free.
    pub(crate) fn other_process(&mut self, other: &ReindexProgress) {
        if let Some(c) = self.current.as_mut() {
            c.processed_files = other.processed_files;
            c.total_files = other.total_files;
            c.current_path = other.current_path.clone();
            c.is_destructive_rebuild = other.is_destructive_rebuild;
        }
    }

    /// Forgets what [`ReindexSlot::other_process`] showed: this process's run has the writer.
    pub(crate) fn own_run(&mut self) {
        if let Some(c) = self.current.as_mut() {
            c.processed_files = 0;
            c.total_files = None;
            c.current_path = None;
            c.is_destructive_rebuild = false;
        }
    }

    /// The lexical part is committed: searches are allowed again.
    pub(crate) fn lexical_done(&mut self) {
        if let Some(c) = self.current.as_mut() {
            c.is_destructive_rebuild = false;
        }
    }

    /// Shows the vector catch-up's progress in the running run.
    pub(crate) fn embedding(&mut self, (embedded_chunks, total_chunks): (u64, u64)) {
        if let Some(c) = self.current.as_mut() {
            c.embedding = Some(EmbeddingProgress { embedded_chunks, total_chunks });
        }
    }

    /// Ends the running run with its outcome.
    pub(crate) fn finish(&mut self, outcome: Result<ReindexResult>) {
        let Some(current) = self.current.take() else { return };
        let (result, error) = match &outcome {
            Ok(r) => (Some(r.clone()), None),
            Err(e) => (None, Some(e.message.clone())),
        };
        self.last = Some(LastReindex {
            scope: current.scope,
            force: current.force,
            started_at_utc: current.started_at_utc,
            completed_at_utc: rfc3339_utc(SystemTime::now()),
            outcome: if error.is_none() { "succeeded" } else { "failed" }.to_owned(),
            result,
            error,
        });
        self.last_result = Some(outcome);
        self.runs += 1;
    }

    /// `kb_status.indexing`.
    pub(crate) fn status(&self) -> IndexingStatus {
        IndexingStatus {
            is_running: self.current.is_some(),
            current: self.current.clone(),
            last: self.last.clone(),
        }
    }
}

#[derive(Default)]
struct State {
    queue: Queue,
    reindex: ReindexSlot,
    /// A start-up repair was asked for and the worker has not taken it yet.
    repair_requested: bool,
    /// A start-up repair was asked for and is not finished.
    repair_pending: bool,
    /// An embedding request's answer, waiting for the worker.
    answer: Option<(EmbedJob, Result<Vec<Vec<f32>>>)>,
    shutdown: bool,
    /// The embedding thread has ended.
    embed_ended: bool,
    /// Moves on whenever the index may have become searchable or a build ended (a reindex's
    /// commit, its lexical part done, its end, a repair): what [`IndexService::wait_searchable_change`]
    /// waits for, counted under the lock so a waiter cannot miss one.
    searchable_epoch: u64,
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn wait_timeout<'a>(&self, guard: MutexGuard<'a, State>, timeout: Duration) -> MutexGuard<'a, State> {
        self.changed.wait_timeout(guard, timeout).map_or_else(|e| e.into_inner().0, |r| r.0)
    }
}

/// The service and its worker; dropping it stops the worker after its current step.
pub struct IndexService {
    shared: Arc<Shared>,
    /// The readers and the project searches go through ([`IndexService::searchable`]).
    pub(super) readers: Arc<ReadSide>,
    pub(super) workspace: Arc<crate::workspace::Workspace>,
    pub(super) layout: super::IndexLayout,
    pub(super) auto_index: bool,
    worker: Option<std::thread::JoinHandle<()>>,
    embedder: Option<std::thread::JoinHandle<()>>,
}

impl IndexService {
    /// Starts the worker (and the embedding thread when embeddings are on).
    pub fn start(parts: ServiceParts) -> IndexService {
        let shared = Arc::new(Shared { state: Mutex::new(State::default()), changed: Condvar::new() });
        let (embed_tx, embedder) =
            parts.embed.and_then(|embed| start_embedder(Arc::clone(&shared), embed)).unzip();
        let worker_shared = Arc::clone(&shared);
        let (writer, readers) = (parts.writer, parts.readers);
        let (service_readers, workspace, layout) =
            (Arc::clone(&readers), Arc::clone(&writer.workspace), writer.layout.clone());
        let worker = std::thread::Builder::new()
            .name("index-service".into())
            .spawn(move || {
                let worker = Worker::new(&worker_shared, &writer, &readers, embed_tx);
                if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| worker.run())).is_err() {
                    // A bug: say so to every waiter instead of leaving them waiting forever.
                    let mut s = worker_shared.lock();
                    s.shutdown = true;
                    s.reindex.finish(Err(Error::internal(
                        "the indexing service stopped unexpectedly; restart the server and report this.",
                    )));
                    s.queue.report_error(
                        "<indexer>",
                        "the indexing service stopped unexpectedly; restart the server.".to_owned(),
                    );
                    s.searchable_epoch += 1;
                    drop(s);
                    worker_shared.changed.notify_all();
                }
            })
            .map_err(|e| tracing::error!("could not start the indexing service: {e}"))
            .ok();
        IndexService {
            shared,
            readers: service_readers,
            workspace,
            layout,
            auto_index: parts.auto_index,
            worker,
            embedder,
        }
    }

    /// Queues `path` for reconciliation and returns the generation of this change.
    pub fn schedule(&self, path: &RelPath) -> u64 {
        let generation = self.shared.lock().queue.schedule(path.as_str());
        tracing::debug!(target: "lvs::queue", "scheduled {path} as change {generation}");
        self.shared.changed.notify_all();
        generation
    }

    /// Records an error that is not about one file (e.g. the watcher failed).
    pub fn report_error(&self, pseudo_path: &str, message: String) {
        self.shared.lock().queue.report_error(pseudo_path, message);
    }

    /// Waits until searches see change `generation` of `path` (true) or `timeout` passes.
    pub fn wait_synced(&self, path: &RelPath, generation: u64, timeout: Duration) -> bool {
        let deadline = Instant::now() + sync_wait_override().unwrap_or(timeout);
        let mut s = self.shared.lock();
        loop {
            if s.queue.is_searchable(path.as_str(), generation) {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            s = self.shared.wait_timeout(s, deadline - now);
        }
    }

    /// Starts a reindex in the background unless one runs (then it reports that one).
    pub fn request_reindex(&self, opts: ReindexOptions) -> ReindexStartResponse {
        let response = self.shared.lock().reindex.request(opts);
        self.shared.changed.notify_all();
        response
    }

    /// Runs a reindex (or joins the running one) and waits for it, reporting progress.
    pub fn run_reindex(
        &self,
        opts: ReindexOptions,
        progress: &mut dyn FnMut(&ReindexProgress),
    ) -> Result<ReindexResult> {
        let mut s = self.shared.lock();
        let runs = s.reindex.runs;
        s.reindex.request(opts);
        self.shared.changed.notify_all();
        let mut last_seen: Option<ReindexProgress> = None;
        loop {
            if s.reindex.runs > runs {
                return s
                    .reindex
                    .last_result
                    .clone()
                    .unwrap_or_else(|| Err(Error::internal("the reindex ended without a result")));
            }
            if self.worker.is_none() || s.shutdown {
                return Err(Error::internal("the indexing service is not running"));
            }
            if let Some(current) = s.reindex.current.clone()
                && last_seen.as_ref() != Some(&current)
            {
                drop(s);
                progress(&current);
                last_seen = Some(current);
                s = self.shared.lock();
                continue;
            }
            s = self.shared.wait_timeout(s, Duration::from_millis(100));
        }
    }

    /// Opens the writer in the background (which repairs what an interrupted writer left: see
    /// `SessionMarker`), unless another process holds it — that one has repaired already.
    pub fn request_repair(&self) {
        {
            let mut s = self.shared.lock();
            s.repair_requested = true;
            s.repair_pending = true;
        }
        self.shared.changed.notify_all();
    }

    /// Waits until a requested start-up repair is finished, at most `timeout`.
    pub fn wait_repair(&self, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        let mut s = self.shared.lock();
        while s.repair_pending && !s.shutdown && self.worker.is_some() {
            let now = Instant::now();
            if now >= deadline {
                return;
            }
            s = self.shared.wait_timeout(s, deadline - now);
        }
    }

    /// Refuses searches while a destructive rebuild runs.
    pub fn check_searchable(&self) -> Result<()> {
        self.shared.lock().reindex.check_searchable()
    }

    /// What a search checks before it opens the index, under one lock: the searchable epoch
    /// (see [`IndexService::wait_searchable_change`]), the running reindex's progress, and the
    /// rebuild gate ([`IndexService::check_searchable`]).
    pub(super) fn search_gate(&self) -> (u64, Option<ReindexProgress>, Result<()>) {
        let s = self.shared.lock();
        (s.searchable_epoch, s.reindex.current.clone(), s.reindex.check_searchable())
    }

    /// Waits until the searchable epoch moves past `seen` (a commit, the end of a build, a
    /// repair) or `deadline` passes, without polling.
    pub(super) fn wait_searchable_change(&self, seen: u64, deadline: Instant) {
        let mut s = self.shared.lock();
        while s.searchable_epoch == seen && !s.shutdown {
            let now = Instant::now();
            if now >= deadline {
                return;
            }
            s = self.shared.wait_timeout(s, deadline - now);
        }
    }

    /// `kb_status.indexing`.
    pub fn indexing(&self) -> IndexingStatus {
        self.shared.lock().reindex.status()
    }

    /// `kb_status.synchronization`.
    pub fn synchronization(&self) -> SynchronizationStatus {
        self.shared.lock().queue.status()
    }
}

impl Drop for IndexService {
    fn drop(&mut self) {
        self.shared.lock().shutdown = true;
        self.shared.changed.notify_all();
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
        // The worker dropped its sender: the embedding thread ends after the request in flight.
        let Some(embedder) = self.embedder.take() else { return };
        let s = self.shared.lock();
        let (s, _) = self
            .shared
            .changed
            .wait_timeout_while(s, EMBED_JOIN_WAIT, |s| !s.embed_ended)
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let ended = s.embed_ended;
        drop(s);
        if ended {
            let _ = embedder.join();
        } else {
            tracing::debug!("an embedding request is still in flight; its thread ends when it times out");
        }
    }
}

/// The embedding thread: one request at a time, answers handed back to the worker. It ends when
/// the worker drops its sender (a request in flight then finishes or times out on its own); the
/// service joins it.
fn start_embedder(
    shared: Arc<Shared>,
    embed: Box<EmbedFn>,
) -> Option<(Sender<EmbedJob>, std::thread::JoinHandle<()>)> {
    let (tx, rx) = channel::<EmbedJob>();
    let handle = std::thread::Builder::new()
        .name("embed".into())
        .spawn(move || {
            // Marks the thread ended however it leaves (also on a panic in the client).
            let _ended = EmbedEnded(Arc::clone(&shared));
            for job in rx {
                let texts: Vec<&str> = job.texts.iter().map(String::as_str).collect();
                let answer = embed(&texts);
                let mut s = shared.lock();
                if s.shutdown {
                    return;
                }
                s.answer = Some((job, answer));
                drop(s);
                shared.changed.notify_all();
            }
        })
        .map_err(|e| tracing::error!("could not start the embedding thread: {e}"))
        .ok()?;
    Some((tx, handle))
}

/// Sets `embed_ended` when dropped.
struct EmbedEnded(Arc<Shared>);

impl Drop for EmbedEnded {
    fn drop(&mut self) {
        self.0.lock().embed_ended = true;
        self.0.changed.notify_all();
    }
}

/// A reindex whose lexical part is committed and whose vectors are catching up.
struct VectorPhase {
    result: ReindexResult,
    warnings: Vec<String>,
    /// The endpoint failed during this run: stop requesting, report it.
    failed: Option<String>,
}

enum Work {
    Shutdown,
    Answer(EmbedJob, Result<Vec<Vec<f32>>>),
    Reconcile(Vec<(String, u64)>),
    Reindex(ReindexOptions),
    Repair,
    Embed,
    FinishReindex,
    /// Write the link snapshot of the edits committed since the last one.
    FinishLinks,
    Release,
}

struct Worker<'a> {
    shared: &'a Shared,
    parts: &'a WriterParts,
    readers: &'a ReadSide,
    embed_tx: Option<Sender<EmbedJob>>,
    writer: Option<Indexer>,
    in_flight: bool,
    /// Set when the catch-up had nothing to request; cleared by anything that may give it work.
    vectors_idle: bool,
    phase: Option<VectorPhase>,
    last_work: Instant,
    /// The last piece of work was an edit batch: waiting background work goes next.
    yield_to_background: bool,
    /// Edit batches searchable, whose link snapshot is not written yet (module docs), and when
    /// the first of them was committed.
    links_unwritten: Vec<Vec<(String, u64)>>,
    links_since: Option<Instant>,
}

impl<'a> Worker<'a> {
    fn new(
        shared: &'a Shared,
        parts: &'a WriterParts,
        readers: &'a ReadSide,
        embed_tx: Option<Sender<EmbedJob>>,
    ) -> Self {
        Worker {
            shared,
            parts,
            readers,
            embed_tx,
            writer: None,
            in_flight: false,
            vectors_idle: false,
            phase: None,
            last_work: Instant::now(),
            yield_to_background: false,
            links_unwritten: Vec::new(),
            links_since: None,
        }
    }

    fn run(mut self) {
        loop {
            let work = self.next_work();
            match &work {
                Work::Reconcile(_) => self.yield_to_background = true,
                Work::Reindex(_) | Work::Repair | Work::Embed | Work::FinishReindex => {
                    self.yield_to_background = false
                }
                Work::Shutdown | Work::Answer(..) | Work::Release | Work::FinishLinks => {}
            }
            // Any other work writes a deferred link snapshot first (module docs).
            if !matches!(work, Work::Reconcile(_) | Work::Answer(..) | Work::FinishLinks) {
                self.finish_links();
            }
            match work {
                Work::Shutdown => {
                    self.close_writer();
                    return;
                }
                Work::Answer(job, answer) => self.answer(job, answer),
                Work::Reconcile(batch) => self.reconcile(&batch),
                Work::Reindex(opts) => self.reindex(opts),
                Work::Repair => self.repair(),
                Work::Embed => self.embed_step(),
                Work::FinishReindex => self.finish_reindex(),
                Work::FinishLinks => self.finish_links(),
                Work::Release => self.close_writer(),
            }
            self.last_work = Instant::now();
        }
    }

    /// Waits for the next piece of work, in priority order (see the module's "Work order").
    fn next_work(&self) -> Work {
        let reindexing = self.phase.as_ref().is_some_and(|p| p.failed.is_none());
        let embed_step = !self.in_flight
            && !self.vectors_idle
            && self.embed_tx.is_some()
            && self.writer.as_ref().is_some_and(|w| w.vectors_have_work(reindexing));
        let finish = self.phase.is_some() && !self.in_flight && !embed_step;
        let mut s = self.shared.lock();
        loop {
            if s.shutdown {
                return Work::Shutdown;
            }
            if let Some((job, answer)) = s.answer.take() {
                return Work::Answer(job, answer);
            }
            // Fairness: edits go first, but not twice in a row while background work waits.
            // Before, a reindex requested under 16 editing clients waited for a moment with no
            // edit queued and ran many minutes late (measured: `docs/reliability.md`, "Soak,
            // round 2").
            let background = s.repair_requested
                || (self.phase.is_none() && s.reindex.requested.is_some())
                || embed_step
                || finish;
            if s.queue.has_queued() && !(self.yield_to_background && background) {
                return Work::Reconcile(s.queue.take_batch());
            }
            if !self.links_unwritten.is_empty() {
                let quiet = self.last_work.elapsed();
                if quiet >= LINKS_QUIET || background {
                    return Work::FinishLinks;
                }
                s = self.shared.wait_timeout(s, LINKS_QUIET - quiet);
                continue;
            }
            if s.repair_requested {
                s.repair_requested = false;
                return Work::Repair;
            }
            if self.phase.is_none()
                && let Some(opts) = s.reindex.requested.take()
            {
                return Work::Reindex(opts);
            }
            if embed_step {
                return Work::Embed;
            }
            if finish {
                return Work::FinishReindex;
            }
            if self.writer.is_some() && !self.in_flight {
                let idle = self.last_work.elapsed();
                if idle >= IDLE_AFTER {
                    return Work::Release;
                }
                s = self.shared.wait_timeout(s, IDLE_AFTER - idle);
            } else {
                s = self.shared.wait_timeout(s, Duration::from_secs(3600));
            }
        }
    }

    /// Opens the writer if it is closed, waiting (without holding anything) while another
    /// process writes, up to [`WRITER_WAIT`].
    fn ensure_writer(&mut self) -> Result<&mut Indexer> {
        if self.writer.is_none() {
            let started = Instant::now();
            let mut deadline = started + writer_wait();
            let mut other = OtherRun::default();
            let mut mirrored = false;
            let opened = loop {
                match self.parts.open() {
                    Err(e) if e.is(ErrorDetail::WriterBusy) && Instant::now() < deadline => {
                        crate::failpoint("indexer.writer-busy");
                        let seen = other.observe(&self.parts.layout.progress_path());
                        if seen.advanced {
                            // The other process's reindex moves on: keep waiting for it.
                            deadline = Instant::now() + writer_wait();
                        }
                        let mut s = self.shared.lock();
                        if s.shutdown {
                            return Err(Error::internal("the indexing service is shutting down"));
                        }
                        if let Some(p) = &seen.progress {
                            s.reindex.other_process(p);
                            mirrored = true;
                        }
                        drop(self.shared.wait_timeout(s, Duration::from_millis(50)));
                    }
                    other => break other?,
                }
            };
            self.writer = Some(opened);
            self.vectors_idle = false;
            if mirrored {
                // This process's own run starts now: its own progress from zero.
                self.shared.lock().reindex.own_run();
            }
            tracing::debug!(target: "lvs::timing", "writer opened in {:?}", started.elapsed());
        }
        self.writer.as_mut().ok_or_else(|| Error::internal("the index writer could not be opened"))
    }

    /// Writes the link snapshot of the edit batches committed since the last one and completes
    /// them (with the snapshot's error, if any: the writer is closed then, and the next open
    /// repairs the snapshot).
    fn finish_links(&mut self) {
        if self.links_unwritten.is_empty() {
            return;
        }
        self.links_since = None;
        let batches = std::mem::take(&mut self.links_unwritten);
        let outcome = match self.writer.as_mut().map(Indexer::finish_commit) {
            Some(Err(e)) => {
                tracing::warn!("Could not write the link graph: {}", e.message);
                Err(e.message)
            }
            _ => Ok(()),
        };
        if outcome.is_err() {
            self.close_writer();
        }
        let mut s = self.shared.lock();
        for batch in &batches {
            s.queue.complete(batch, outcome.clone());
        }
        drop(s);
        self.shared.changed.notify_all();
    }

    fn close_writer(&mut self) {
        self.finish_links();
        if let Some(mut w) = self.writer.take()
            && let Err(e) = w.vectors_persist()
        {
            tracing::warn!("could not save the vectors: {}", e.message);
        }
        // A request still in flight is answered to nobody: its chunks stay pending.
        self.in_flight = false;
        self.shared.lock().answer = None;
    }

    fn reconcile(&mut self, batch: &[(String, u64)]) {
        let paths: Vec<RelPath> = batch.iter().filter_map(|(p, _)| RelPath::new(p).ok()).collect();
        let outcome = self.ensure_writer().and_then(|w| w.reconcile_searchable(&paths));
        let outcome = match outcome {
            Ok(changed) => {
                tracing::debug!(target: "lvs::queue", "reconciled {batch:?}: {changed} changed");
                let t = Instant::now();
                self.readers.reload();
                tracing::debug!(target: "lvs::timing", "reader reload after the commit {:?}", t.elapsed());
                self.vectors_idle = false;
                // Searchable now: the waiting edit is answered before the link snapshot is
                // written; `kb_status` shows the paths pending until that is done too, after a
                // quiet moment or at most LINKS_MAX_DELAY later (module docs).
                self.shared.lock().queue.searchable(batch);
                self.shared.changed.notify_all();
                // Only `links.gen` to write (or nothing): done now, as cheap as a stat. While
                // an earlier batch's graph is unwritten, the graph is still dirty, so this batch
                // waits with it.
                let rewrite = self.writer.as_ref().is_some_and(Indexer::links_rewrite_pending);
                self.links_unwritten.push(batch.to_vec());
                let since = *self.links_since.get_or_insert_with(Instant::now);
                if !rewrite || since.elapsed() >= LINKS_MAX_DELAY {
                    self.finish_links();
                }
                return;
            }
            Err(e) if e.is(ErrorDetail::WriterBusy) => {
                // Another process kept the writer past the wait: say so, and try again.
                tracing::debug!("edits wait for another process's index writer: {}", e.message);
                let mut s = self.shared.lock();
                s.queue.complete(batch, Err(e.message));
                s.queue.requeue(batch);
                drop(s);
                self.shared.changed.notify_all();
                return;
            }
            Err(e) => {
                tracing::warn!("Could not synchronize committed Markdown files: {}", e.message);
                self.close_writer();
                Err(e.message)
            }
        };
        self.shared.lock().queue.complete(batch, outcome);
        self.shared.changed.notify_all();
    }

    /// The start-up repair: opening the writer repairs; a busy writer means another process
    /// has it (and repaired when it opened it).
    fn repair(&mut self) {
        if self.writer.is_none() {
            match self.parts.open() {
                Ok(w) => {
                    self.writer = Some(w);
                    self.vectors_idle = false;
                    self.readers.reload();
                }
                Err(e) if e.is(ErrorDetail::WriterBusy) => {}
                Err(e) => tracing::warn!("could not repair the index: {}", e.message),
            }
        }
        {
            let mut s = self.shared.lock();
            s.repair_pending = false;
            s.searchable_epoch += 1;
        }
        self.shared.changed.notify_all();
    }

    fn reindex(&mut self, opts: ReindexOptions) {
        let shared = self.shared;
        let progress_path = self.parts.layout.progress_path();
        let mut last_written: Option<Instant> = None;
        let mut commits = 0;
        let mut on_progress = |p: &Progress| {
            let current = {
                let mut s = shared.lock();
                s.reindex.progress(p);
                if p.commits != commits {
                    // A commit: a search waiting for a first index may find chunks now.
                    commits = p.commits;
                    s.searchable_epoch += 1;
                    shared.changed.notify_all();
                }
                s.reindex.current.clone()
            };
            if last_written.is_none_or(|t| t.elapsed() >= PROGRESS_EVERY)
                && let Some(current) = current
            {
                last_written = Some(Instant::now());
                write_progress(&progress_path, &current);
            }
        };
        let outcome = self.ensure_writer().and_then(|w| w.reindex(opts, &mut on_progress));
        let _ = std::fs::remove_file(&progress_path);
        let result = match outcome {
            Ok(r) => r,
            Err(e) => {
                self.close_writer();
                self.end_reindex(Err(e));
                return;
            }
        };
        {
            let mut s = self.shared.lock();
            s.queue.clear_all();
            s.reindex.lexical_done();
            s.searchable_epoch += 1;
        }
        self.readers.reload();
        self.shared.changed.notify_all();
        let Some(w) = self.writer.as_mut().filter(|w| w.has_vectors() && self.embed_tx.is_some()) else {
            self.end_reindex(Ok(result));
            return;
        };
        match w.vectors_prepare(opts.force) {
            Ok(warning) => {
                self.vectors_idle = false;
                self.phase =
                    Some(VectorPhase { result, warnings: warning.into_iter().collect(), failed: None });
            }
            Err(e) => self.end_reindex(Err(e)),
        }
    }

    fn embed_step(&mut self) {
        let reindexing = self.phase.as_ref().is_some_and(|p| p.failed.is_none());
        let Some(w) = self.writer.as_mut() else { return };
        match w.vectors_next_job(reindexing) {
            Ok(Some(job)) => {
                let sent = self.embed_tx.as_ref().is_some_and(|tx| tx.send(job).is_ok());
                self.in_flight = sent;
                self.vectors_idle = !sent;
            }
            Ok(None) => self.vectors_idle = true,
            Err(e) => {
                tracing::warn!("could not update the vectors: {}", e.message);
                self.vectors_idle = true;
            }
        }
        self.show_embedding_progress();
    }

    fn answer(&mut self, job: EmbedJob, answer: Result<Vec<Vec<f32>>>) {
        self.in_flight = false;
        self.vectors_idle = false;
        let Some(w) = self.writer.as_mut() else { return };
        match w.vectors_accept(job, answer) {
            Ok(Some(failure)) => {
                tracing::warn!("{failure}");
                if let Some(phase) = self.phase.as_mut() {
                    phase.failed.get_or_insert(failure);
                }
            }
            Ok(None) => {}
            Err(e) => tracing::warn!("could not store the vectors: {}", e.message),
        }
        self.show_embedding_progress();
    }

    fn show_embedding_progress(&self) {
        if self.phase.is_some()
            && let Some(progress) = self.writer.as_ref().and_then(Indexer::vectors_progress)
        {
            self.shared.lock().reindex.embedding(progress);
            self.shared.changed.notify_all();
        }
    }

    fn finish_reindex(&mut self) {
        let Some(phase) = self.phase.take() else { return };
        let VectorPhase { mut result, mut warnings, failed } = phase;
        warnings.extend(failed);
        let all: Vec<String> = result.warning.take().into_iter().chain(warnings).collect();
        result.warning = (!all.is_empty()).then(|| all.join(" "));
        self.end_reindex(Ok(result));
    }

    fn end_reindex(&mut self, outcome: Result<ReindexResult>) {
        {
            let mut s = self.shared.lock();
            s.reindex.finish(outcome);
            s.searchable_epoch += 1;
        }
        self.shared.changed.notify_all();
    }
}

/// Publishes a running reindex's progress for other processes on this project (their
/// `kb_status` shows it while they wait for the writer). Best effort: a failure only logs.
fn write_progress(path: &std::path::Path, current: &ReindexProgress) {
    let outcome = serde_json::to_vec(current)
        .map_err(|e| Error::internal(format!("could not encode the reindex progress: {e}")))
        .and_then(|bytes| {
            crate::workspace::replace_file_atomic(path, "the reindex progress file", |temp| {
                std::fs::write(temp, &bytes).map_err(|e| Error::io("the reindex progress file", &e))
            })
        });
    if let Err(e) = outcome {
        tracing::debug!("could not publish the reindex progress: {}", e.message);
    }
}

/// What a waiting writer has seen of another process's reindex (through its progress file).
#[derive(Default)]
pub(crate) struct OtherRun {
    last: Option<Vec<u8>>,
}

/// One look at the other process's progress file.
pub(crate) struct Seen {
    /// Its progress, when the file is there, readable and fresh.
    pub(crate) progress: Option<ReindexProgress>,
    /// It changed since the last look (the other run is alive and moving).
    pub(crate) advanced: bool,
}

impl OtherRun {
    pub(crate) fn observe(&mut self, path: &std::path::Path) -> Seen {
        let fresh = std::fs::metadata(path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age < PROGRESS_STALE);
        let bytes = if fresh { std::fs::read(path).ok() } else { None };
        let progress = bytes.as_deref().and_then(|b| serde_json::from_slice::<ReindexProgress>(b).ok());
        let advanced = progress.is_some() && self.last.is_some() && bytes != self.last;
        if bytes.is_some() {
            self.last = bytes;
        }
        Seen { progress, advanced }
    }
}
