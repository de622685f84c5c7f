//! Background reindex, one at a time (`contract.md` §6.2).

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::SystemTime;

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::indexer::ReindexOptions;
use crate::text::rfc3339_utc;
use crate::wire::{
    EmbeddingProgress, IndexingStatus, LastReindex, ReindexProgress, ReindexRequest, ReindexStartResponse,
    SynchronizationStatus,
};

#[derive(Default)]
struct State {
    current: Option<ReindexProgress>,
    last: Option<LastReindex>,
}

/// Runs reindexes on a thread of their own and tracks their progress for `kb_status`.
pub struct Coordinator {
    engine: Arc<Engine>,
    state: Arc<Mutex<State>>,
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Coordinator {
    /// A coordinator for one engine.
    pub fn new(engine: Arc<Engine>) -> Self {
        Coordinator { engine, state: Arc::new(Mutex::new(State::default())) }
    }

    /// `kb_status.indexing`.
    pub fn indexing(&self) -> IndexingStatus {
        let s = lock(&self.state);
        IndexingStatus { is_running: s.current.is_some(), current: s.current.clone(), last: s.last.clone() }
    }

    /// `kb_status.synchronization`.
    pub fn synchronization(&self) -> SynchronizationStatus {
        self.engine.synchronizer().status()
    }

    /// Refuses searches while a destructive rebuild runs.
    pub fn check_searchable(&self) -> Result<()> {
        if lock(&self.state).current.as_ref().is_some_and(|c| c.is_destructive_rebuild) {
            return Err(Error::index_not_ready(
                "Index rebuild is in progress; check kb_status before retrying.",
            ));
        }
        Ok(())
    }

    /// Starts a reindex unless one is running.
    pub fn start(&self, req: &ReindexRequest) -> Result<ReindexStartResponse> {
        let all = match req.scope.as_deref().map(str::to_ascii_lowercase).as_deref() {
            None | Some("changed") => false,
            Some("all") => true,
            Some(other) => {
                return Err(Error::invalid_argument(format!(
                    "scope '{other}' is not valid; use changed or all."
                )));
            }
        };
        let force = req.force.unwrap_or(false);
        let mut state = lock(&self.state);
        if let Some(current) = &state.current {
            return Ok(ReindexStartResponse { started: false, current: Some(current.clone()) });
        }
        let started_at = rfc3339_utc(SystemTime::now());
        let current = ReindexProgress {
            scope: if all { "all" } else { "changed" }.to_owned(),
            force,
            started_at_utc: started_at.clone(),
            processed_files: 0,
            total_files: None,
            current_path: None,
            is_destructive_rebuild: false,
            embedding: None,
        };
        state.current = Some(current.clone());
        drop(state);
        let engine = Arc::clone(&self.engine);
        let shared = Arc::clone(&self.state);
        let spawned = std::thread::Builder::new().name("reindex".into()).spawn(move || {
            let mut on_progress = |p: &crate::indexer::Progress| {
                let mut s = lock(&shared);
                if let Some(c) = s.current.as_mut() {
                    c.processed_files = p.processed;
                    c.total_files = p.total.or(c.total_files);
                    c.current_path = p.current_path.clone();
                    c.is_destructive_rebuild |= p.destructive;
                    c.embedding = p.embedding.map(|(embedded_chunks, total_chunks)| EmbeddingProgress {
                        embedded_chunks,
                        total_chunks,
                    });
                }
            };
            let outcome = engine.reindex(ReindexOptions { all, force }, &mut on_progress);
            let mut s = lock(&shared);
            let (result, error) = match outcome {
                Ok(r) => (Some(r), None),
                Err(e) => (None, Some(e.message)),
            };
            s.last = Some(LastReindex {
                scope: if all { "all" } else { "changed" }.to_owned(),
                force,
                started_at_utc: started_at,
                completed_at_utc: rfc3339_utc(SystemTime::now()),
                outcome: if error.is_none() { "succeeded" } else { "failed" }.to_owned(),
                result,
                error,
            });
            s.current = None;
        });
        if let Err(e) = spawned {
            lock(&self.state).current = None;
            return Err(Error::internal(format!("could not start the reindex thread: {e}")));
        }
        Ok(ReindexStartResponse { started: true, current: Some(current) })
    }
}
