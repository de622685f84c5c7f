//! Exclusive OS file locks: one lock file per purpose (the index writer, Markdown mutations),
//! held while the [`LockFile`] lives and released by the OS when the process dies.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;

use crate::error::{Error, ErrorDetail, Result};

/// An exclusive lock on a lock file; dropping it unlocks.
///
/// The lock is per open file, not per process: a second [`LockFile`] on the same path in the same
/// process waits (or is refused) like another process would.
#[derive(Debug)]
pub struct LockFile {
    _file: File,
}

impl LockFile {
    /// Opens `path` (creating it and its folder) and waits until the lock is free. `what` names
    /// the file in messages (e.g. `the mutation lock file`), never as an absolute path.
    pub fn acquire(path: &Path, what: &str) -> Result<LockFile> {
        let file = open(path, what)?;
        match file.try_lock() {
            Ok(()) => return Ok(LockFile { _file: file }),
            Err(TryLockError::WouldBlock) => crate::failpoint("workspace.lock.wait"),
            Err(TryLockError::Error(e)) => return Err(Error::io(what, &e)),
        }
        // Someone else holds it (another process, or another handle here): wait for it.
        file.lock().map_err(|e| Error::io(what, &e))?;
        Ok(LockFile { _file: file })
    }

    /// Takes the lock or fails at once. When someone else holds it the error is
    /// `INDEX_NOT_READY` with `busy` as its message and [`ErrorDetail::WriterBusy`], so the
    /// caller can wait and retry.
    pub fn try_acquire(path: &Path, what: &str, busy: &str) -> Result<LockFile> {
        let file = open(path, what)?;
        match file.try_lock() {
            Ok(()) => Ok(LockFile { _file: file }),
            Err(TryLockError::WouldBlock) => {
                Err(Error::index_not_ready(busy).with_detail(ErrorDetail::WriterBusy))
            }
            Err(TryLockError::Error(e)) => Err(Error::io(what, &e)),
        }
    }
}

fn open(path: &Path, what: &str) -> Result<File> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(what, &e))?;
    }
    // Never truncated: the file's content is irrelevant, only its lock matters.
    OpenOptions::new().create(true).truncate(false).write(true).open(path).map_err(|e| Error::io(what, &e))
}
