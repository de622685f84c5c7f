//! Background reconciliation of changed paths (`contract.md` §6.3–§6.4).
//!
//! Mutations and the file watcher call [`Synchronizer::schedule`]; one worker thread reconciles
//! queued paths in batches. Each schedule bumps a generation: a completion only clears a path
//! whose generation still matches, so an older completion never hides a newer change. A failed
//! batch keeps its paths dirty and shows the error in `kb_status.synchronization`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::error::Result;
use crate::wire::SynchronizationStatus;
use crate::workspace::{RelPath, compare_paths};

/// The pseudo path that carries file-watcher errors.
pub const WATCHER_PATH: &str = "<watcher>";

/// Quiet time after a batch before the worker reports idle.
pub const IDLE_AFTER: Duration = Duration::from_secs(1);

/// Reconciles a batch of paths (the indexer under the writer lock).
pub type ReconcileFn = dyn Fn(&[RelPath]) -> Result<()> + Send + Sync;

/// Runs when edits pause (`false`) or at shutdown (`true`).
pub type IdleFn = dyn Fn(bool) + Send + Sync;

#[derive(Default)]
struct State {
    next_generation: u64,
    /// Path → generation of its newest pending change.
    dirty: BTreeMap<String, u64>,
    /// Paths waiting for the worker.
    queue: BTreeSet<String>,
    last_error: Option<String>,
    shutdown: bool,
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

fn lock(shared: &Shared) -> MutexGuard<'_, State> {
    shared.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The scheduler and its worker thread; dropping it stops the worker after its current batch.
pub struct Synchronizer {
    shared: Arc<Shared>,
    worker: Option<std::thread::JoinHandle<()>>,
}

impl Synchronizer {
    /// Starts the worker thread. `on_idle(false)` runs when no work has arrived for
    /// [`IDLE_AFTER`] after a batch (the engine embeds pending vectors and closes its writer
    /// then); `on_idle(true)` runs once at shutdown.
    pub fn start(reconcile: Box<ReconcileFn>, on_idle: Box<IdleFn>) -> Synchronizer {
        let shared = Arc::new(Shared { state: Mutex::new(State::default()), changed: Condvar::new() });
        let worker_shared = Arc::clone(&shared);
        let worker = std::thread::Builder::new()
            .name("index-sync".into())
            .spawn(move || worker(&worker_shared, &*reconcile, &*on_idle))
            .map_err(|e| tracing::error!("could not start the index synchronizer: {e}"))
            .ok();
        Synchronizer { shared, worker }
    }

    /// Queues `path` for reconciliation and returns the generation of this change.
    pub fn schedule(&self, path: &RelPath) -> u64 {
        let mut s = lock(&self.shared);
        s.next_generation += 1;
        let generation = s.next_generation;
        s.dirty.insert(path.as_str().to_owned(), generation);
        s.queue.insert(path.as_str().to_owned());
        drop(s);
        self.shared.changed.notify_all();
        generation
    }

    /// Records an error that is not about one file (e.g. the watcher failed).
    pub fn report_error(&self, pseudo_path: &str, message: String) {
        let mut s = lock(&self.shared);
        s.next_generation += 1;
        let generation = s.next_generation;
        s.dirty.insert(pseudo_path.to_owned(), generation);
        s.last_error = Some(message);
    }

    /// Waits until the change `generation` of `path` is in the index (true) or `timeout` passes.
    pub fn wait_synced(&self, path: &RelPath, generation: u64, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut s = lock(&self.shared);
        loop {
            let pending = s.dirty.get(path.as_str()).is_some_and(|&g| g <= generation);
            if !pending {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            s = self
                .shared
                .changed
                .wait_timeout(s, deadline - now)
                .map_or_else(|e| e.into_inner().0, |r| r.0);
        }
    }

    /// Forgets every pending mark (a full reindex just covered every file).
    pub fn clear_all(&self) {
        let mut s = lock(&self.shared);
        let queued = s.queue.clone();
        s.dirty.retain(|p, _| queued.contains(p));
        if s.dirty.is_empty() {
            s.last_error = None;
        }
        drop(s);
        self.shared.changed.notify_all();
    }

    /// `kb_status.synchronization`.
    pub fn status(&self) -> SynchronizationStatus {
        let s = lock(&self.shared);
        let mut paths: Vec<String> = s.dirty.keys().cloned().collect();
        paths.sort_by(|a, b| compare_paths(a, b));
        SynchronizationStatus { pending_files: paths.len() as u64, paths, last_error: s.last_error.clone() }
    }
}

impl Drop for Synchronizer {
    fn drop(&mut self) {
        lock(&self.shared).shutdown = true;
        self.shared.changed.notify_all();
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

fn worker(shared: &Shared, reconcile: &ReconcileFn, on_idle: &IdleFn) {
    let mut busy = false;
    loop {
        let batch: Vec<(String, u64)> = {
            let mut s = lock(shared);
            while s.queue.is_empty() && !s.shutdown {
                if busy {
                    let (next, timeout) = shared
                        .changed
                        .wait_timeout(s, IDLE_AFTER)
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    s = next;
                    if timeout.timed_out() && s.queue.is_empty() {
                        drop(s);
                        on_idle(false);
                        busy = false;
                        s = lock(shared);
                    }
                } else {
                    s = shared.changed.wait(s).unwrap_or_else(std::sync::PoisonError::into_inner);
                }
            }
            if s.shutdown {
                drop(s);
                on_idle(true);
                return;
            }
            busy = true;
            let queued = std::mem::take(&mut s.queue);
            queued.into_iter().map(|p| (p.clone(), s.dirty.get(&p).copied().unwrap_or(0))).collect()
        };
        let paths: Vec<RelPath> = batch.iter().filter_map(|(p, _)| RelPath::new(p).ok()).collect();
        let outcome = reconcile(&paths);
        let mut s = lock(shared);
        match outcome {
            Ok(()) => {
                for (path, generation) in &batch {
                    if s.dirty.get(path) == Some(generation) {
                        s.dirty.remove(path);
                    }
                }
                if s.dirty.is_empty() {
                    s.last_error = None;
                }
            }
            Err(e) => {
                tracing::warn!("Could not synchronize committed Markdown files: {}", e.message);
                s.last_error = Some(e.message);
            }
        }
        drop(s);
        shared.changed.notify_all();
    }
}
