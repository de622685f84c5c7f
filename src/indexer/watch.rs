//! File watching (`docs/reference/original-server.md` §6.5): external edits become searchable
//! without a reindex.
//!
//! The OS watcher (notify: inotify, FSEvents, ReadDirectoryChanges) reports paths; included
//! `.md` files are debounced per path (400 ms quiet) and handed to the synchronizer. A rename
//! reports both paths. Editors that save through a temp file and a rename are seen as a change
//! of the real path. Watcher errors are reported, never fatal.
//!
//! The debounce thread sleeps until the earliest path is due (woken by every event), not in
//! fixed steps: `docs/reference/original-server.md` §6.5 polls every 150 ms, which added 0–150 ms
//! (75 ms on average) to every external edit's latency (issue #18).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use notify::{RecursiveMode, Watcher as _};

use crate::error::{Error, Result};
use crate::workspace::{GlobFilter, IGNORE_FILE_NAMES, RelPath, TEMP_PREFIX};

/// How long a path must be quiet before it is reconciled.
pub const QUIET_PERIOD: Duration = Duration::from_millis(400);
/// Longest sleep of the debounce thread with nothing pending (it also wakes on every event and
/// when the watcher stops).
const IDLE_WAKE: Duration = Duration::from_secs(1);

/// The pending paths and the condition variable that wakes the debounce thread.
#[derive(Default)]
struct Pending {
    debouncer: Mutex<Debouncer>,
    wake: Condvar,
}

impl Pending {
    fn lock(&self) -> std::sync::MutexGuard<'_, Debouncer> {
        self.debouncer.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A running watcher; dropping it stops watching.
pub struct FileWatcher {
    _watcher: notify::RecommendedWatcher,
    stop: Arc<AtomicBool>,
    pending: Arc<Pending>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for FileWatcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        {
            let _guard = self.pending.lock();
            self.pending.wake.notify_all();
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Per-path quiet-period debouncing: a path is due once no event has touched it for
/// [`QUIET_PERIOD`]. Pure (time is passed in), so it is tested without a file system.
#[derive(Debug, Default)]
pub(crate) struct Debouncer {
    pending: BTreeMap<String, (RelPath, Instant)>,
}

impl Debouncer {
    /// An event touched `rel` at `at` (restarts its quiet period).
    pub(crate) fn note(&mut self, rel: RelPath, at: Instant) {
        self.pending.insert(rel.as_str().to_owned(), (rel, at));
    }

    /// Takes the paths that have been quiet for [`QUIET_PERIOD`] at `now`, in path order.
    pub(crate) fn due(&mut self, now: Instant) -> Vec<RelPath> {
        let keys: Vec<String> = self
            .pending
            .iter()
            .filter(|(_, (_, t))| now.saturating_duration_since(*t) >= QUIET_PERIOD)
            .map(|(k, _)| k.clone())
            .collect();
        keys.into_iter().filter_map(|k| self.pending.remove(&k).map(|(rel, _)| rel)).collect()
    }

    /// When the next path falls due (`None` with nothing pending).
    pub(crate) fn next_due(&self) -> Option<Instant> {
        self.pending.values().map(|(_, t)| *t + QUIET_PERIOD).min()
    }
}

/// The root-relative Markdown path of an event path, if it is one we index.
fn relevant(root: &Path, internal: &str, filter: &GlobFilter, path: &Path) -> Option<RelPath> {
    let rel = path.strip_prefix(root).ok()?;
    let text = rel.to_str()?.replace('\\', "/");
    if text.split('/').any(|c| c.eq_ignore_ascii_case(internal) || c.eq_ignore_ascii_case(".git")) {
        return None;
    }
    let rel = RelPath::new(&text).ok()?;
    if rel.file_name().starts_with(TEMP_PREFIX) || !rel.is_markdown() || !filter.matches(rel.as_str()) {
        return None;
    }
    Some(rel)
}

/// Whether an event path is an ignore file of the tree (`.gitignore`, `.ignore`; see
/// `workspace/ignore_files.rs`): a change to one can add or remove files anywhere below it.
fn names_ignore_file(root: &Path, internal: &str, path: &Path) -> bool {
    let Ok(rel) = path.strip_prefix(root) else { return false };
    let mut parts = rel.iter().map(|c| c.to_string_lossy());
    let inside = |c: &str| c.eq_ignore_ascii_case(internal) || c.eq_ignore_ascii_case(".git");
    rel.file_name().and_then(|n| n.to_str()).is_some_and(|n| IGNORE_FILE_NAMES.contains(&n))
        && !parts.any(|c| inside(&c))
}

/// Whether the OS dropped events (inotify's queue overflowed, FSEvents asks for a rescan of a
/// folder): notify then reports one event with the `Rescan` flag and no usable path, and only a
/// full reconcile of the tree catches up.
pub(crate) fn needs_rescan(event: &notify::Event) -> bool {
    event.need_rescan()
}

/// Watches `root` recursively; calls `on_change` for each debounced path, `on_rescan` when the
/// OS dropped events (see [`needs_rescan`]) and `on_error` for watcher failures.
pub fn watch(
    root: PathBuf,
    internal_dir: String,
    filter: GlobFilter,
    on_change: Box<dyn Fn(RelPath) + Send>,
    on_rescan: Box<dyn Fn() + Send + Sync>,
    on_error: Box<dyn Fn(String) + Send + Sync>,
) -> Result<FileWatcher> {
    let pending: Arc<Pending> = Arc::default();
    let on_error: Arc<dyn Fn(String) + Send + Sync> = Arc::from(on_error);
    let events_pending = Arc::clone(&pending);
    let events_error = Arc::clone(&on_error);
    let events_root = root.clone();
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| match res {
        Ok(event) => {
            if matches!(event.kind, notify::EventKind::Access(_)) {
                return;
            }
            if needs_rescan(&event) {
                tracing::info!(
                    "the OS dropped file events (its queue overflowed); reconciling the whole tree"
                );
                on_rescan();
                return;
            }
            if event.paths.iter().any(|p| names_ignore_file(&events_root, &internal_dir, p)) {
                // What is ignored changed: files may have come in or gone out anywhere below.
                tracing::info!("an ignore file changed; reconciling the whole tree");
                on_rescan();
                return;
            }
            let mut map = events_pending.lock();
            let mut noted = false;
            for p in &event.paths {
                if let Some(rel) = relevant(&events_root, &internal_dir, &filter, p) {
                    map.note(rel, Instant::now());
                    noted = true;
                }
            }
            if noted {
                events_pending.wake.notify_all();
            }
        }
        Err(e) => {
            events_error(format!("The file watcher reported an error: {e}. Run kb_reindex to catch up."))
        }
    })
    .map_err(|e| Error::internal(format!("could not start the file watcher: {e}")))?;
    watcher
        .watch(&root, RecursiveMode::Recursive)
        .map_err(|e| Error::internal(format!("could not watch the knowledge-base root: {e}")))?;
    let stop = Arc::new(AtomicBool::new(false));
    let thread_stop = Arc::clone(&stop);
    let thread_pending = Arc::clone(&pending);
    let thread = std::thread::Builder::new()
        .name("watch-debounce".into())
        .spawn(move || {
            let pending = thread_pending;
            let mut map = pending.lock();
            while !thread_stop.load(Ordering::Relaxed) {
                let now = Instant::now();
                let due = map.due(now);
                if !due.is_empty() {
                    drop(map);
                    for rel in due {
                        on_change(rel);
                    }
                    map = pending.lock();
                    continue;
                }
                let sleep = map.next_due().map_or(IDLE_WAKE, |t| t.saturating_duration_since(now));
                map = pending
                    .wake
                    .wait_timeout(map, sleep.min(IDLE_WAKE))
                    .map_or_else(|e| e.into_inner().0, |r| r.0);
            }
        })
        .map_err(|e| Error::internal(format!("could not start the watcher thread: {e}")))?;
    Ok(FileWatcher { _watcher: watcher, stop, pending, thread: Some(thread) })
}
