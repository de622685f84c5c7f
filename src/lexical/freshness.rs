//! When a search must reload the index reader: after a commit by this process's writer, or
//! when `meta.json` changed on disk (a commit by any process).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tantivy::IndexReader;

use super::errors::map_err;
use crate::error::Result;

/// What the reader last loaded, so a search reloads it only after a commit.
///
/// The reader's policy is `Manual`: tantivy's `OnCommitWithDelay` polls `meta.json` every
/// 500 ms on a thread of its own and reloads up to that long after a commit. Instead every
/// search compares `meta.json`'s stamp (size, modification time, inode: every commit replaces
/// the file) with the one last loaded — one `stat` — and reloads first when it changed, so a
/// commit by any process is visible to the next search. Commits through a writer of this index
/// also set `committed` (an index in RAM has no `meta.json`).
pub(super) struct Freshness {
    /// The index's `meta.json` (`None` for an index in RAM).
    meta: Option<PathBuf>,
    /// Set by a writer of this index at each commit ([`Freshness::commit_flag`]).
    committed: Arc<AtomicBool>,
    loaded: Mutex<Option<FileStamp>>,
}

impl Freshness {
    /// The freshness of a reader that has just loaded the index in `dir` (`None`: in RAM).
    pub(super) fn new(dir: Option<&Path>) -> Freshness {
        let meta = dir.map(|d| d.join("meta.json"));
        let loaded = meta.as_deref().and_then(file_stamp);
        Freshness { meta, committed: Default::default(), loaded: Mutex::new(loaded) }
    }

    /// The flag a writer of this index sets when it commits.
    pub(super) fn commit_flag(&self) -> Arc<AtomicBool> {
        self.committed.clone()
    }

    /// Reloads `reader` when a commit happened since it last loaded (by a writer of this
    /// index, or by any process for an index on disk); returns whether it reloaded.
    pub(super) fn refresh(&self, reader: &IndexReader) -> Result<bool> {
        let stamp = self.meta.as_deref().and_then(file_stamp);
        let mut loaded = self.loaded.lock().unwrap_or_else(PoisonError::into_inner);
        let committed = self.committed.swap(false, Ordering::AcqRel);
        if !committed && stamp == *loaded {
            return Ok(false);
        }
        if let Err(e) = reader.reload() {
            // try again at the next search
            self.committed.store(committed, Ordering::Release);
            return Err(map_err("Reloading the lexical index", e));
        }
        *loaded = stamp;
        Ok(true)
    }
}

/// A file's size, modification time and (on Unix) inode and change time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FileStamp(u64, Option<std::time::SystemTime>, u64, i64);

fn file_stamp(path: &Path) -> Option<FileStamp> {
    let m = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    let (ino, ctime) = {
        use std::os::unix::fs::MetadataExt;
        (m.ino(), m.ctime().wrapping_mul(1_000_000_000).wrapping_add(m.ctime_nsec()))
    };
    #[cfg(not(unix))]
    let (ino, ctime) = (0, 0);
    Some(FileStamp(m.len(), m.modified().ok(), ino, ctime))
}
