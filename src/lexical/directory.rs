//! The lexical index's directory: tantivy's `MmapDirectory` with its `fsync`s switchable.
//!
//! A tantivy commit syncs every file it writes (6–7 per new segment, a delete file per segment
//! that lost documents, `meta.json`, `.managed.json`) and the directory twice: 10–20 `fsync`s,
//! a few milliseconds on an idle disk and up to seconds on a busy one — the largest cost of
//! making one edit searchable (issue #18, `docs/performance.md`, "Patch/watch latency").
//!
//! In *relaxed* mode ([`SyncSwitch::set_relaxed`]) nothing is synced at commit; the files
//! written are remembered and synced by [`SyncSwitch::checkpoint`] (when the writer closes). A
//! process crash loses nothing (written data is in the page cache, which outlives the process);
//! only an OS crash or power loss can, and the index is derived data: the writer's session
//! marker records the boot it ran in, and after a restart of the machine a session that did not
//! close cleanly makes the next writer rebuild the lexical index from the store
//! (`indexer::SessionMarker`).
//!
//! It also keeps tantivy's mmap cache bounded. `MmapDirectory` remembers every file it ever
//! mapped (the path and a weak reference) and forgets dead entries only when someone asks for
//! its cache statistics; a server that commits an edit, reloads its reader and merges segments
//! opens several new segment files per commit, so the cache grew with every commit forever
//! (small allocations in the writer's and the readers' directories, scattered among the request
//! churn so that they pinned far more resident pages than their size; measured:
//! `docs/reliability.md`, "Seventh run"). [`SwitchedDirectory`] prunes it after every [`PRUNE_EVERY`] opens.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::workspace::{TEMP_PREFIX, rename_over};
use tantivy::directory::error::{DeleteError, LockError, OpenReadError, OpenWriteError};
use tantivy::directory::{
    AntiCallToken, Directory, DirectoryLock, FileHandle, Lock, MmapDirectory, TerminatingWrite,
    WatchCallback, WatchHandle, WritePtr,
};

/// Shared switch and bookkeeping of one directory (its clones share them).
#[derive(Debug)]
pub struct SyncSwitch {
    root: PathBuf,
    relaxed: AtomicBool,
    /// Files written without a sync since the last checkpoint.
    unsynced: Mutex<Vec<PathBuf>>,
    /// Files opened for reading since the mmap cache was last pruned.
    opened: AtomicUsize,
    /// Entries the mmap cache held after its last pruning (files still mapped), and how many
    /// prunings there were (tests read them).
    pruned_to: AtomicUsize,
    prunings: AtomicUsize,
}

impl SyncSwitch {
    /// Relaxed: commits write without syncing (see the module documentation).
    pub fn set_relaxed(&self, relaxed: bool) {
        self.relaxed.store(relaxed, Ordering::Release);
    }

    fn is_relaxed(&self) -> bool {
        self.relaxed.load(Ordering::Acquire)
    }

    fn remember(&self, path: PathBuf) {
        self.unsynced.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(path);
    }

    /// Entries tantivy's mmap cache held after its last pruning, `None` before the first.
    #[cfg(test)]
    pub(crate) fn mmap_cache_after_pruning(&self) -> Option<usize> {
        Some(self.pruned_to.load(Ordering::Relaxed)).filter(|_| self.prunings.load(Ordering::Relaxed) > 0)
    }

    /// Syncs every file written in relaxed mode that still exists, then the directory.
    ///
    /// Each file is opened for writing: Windows flushes a file (`FlushFileBuffers`, what
    /// `sync_data` calls) only through a handle with write access and answers "access denied"
    /// otherwise, so with a read-only handle every writer close after a relaxed commit logged
    /// "could not sync the lexical index" there (issue #47; `tests/mcp/test_windows.py` patches
    /// forty times under Wine and checks the log).
    pub fn checkpoint(&self) -> io::Result<()> {
        let files =
            std::mem::take(&mut *self.unsynced.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        if files.is_empty() {
            return Ok(());
        }
        for path in files {
            match OpenOptions::new().write(true).open(&path) {
                Ok(f) => f.sync_data()?,
                // merged away and deleted since: nothing to keep
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        sync_dir(&self.root)
    }
}

#[cfg(not(windows))]
fn sync_dir(root: &Path) -> io::Result<()> {
    File::open(root)?.sync_data()
}

#[cfg(windows)]
fn sync_dir(_root: &Path) -> io::Result<()> {
    Ok(())
}

/// Opens of files for reading between two prunings of tantivy's mmap cache (a commit with
/// its reader reload opens 10–20; pruning costs one pass over the few live entries).
pub(crate) const PRUNE_EVERY: usize = 256;

/// `MmapDirectory` whose writes skip `fsync` while its [`SyncSwitch`] is relaxed, and whose
/// mmap cache forgets unmapped files (module documentation).
#[derive(Clone, Debug)]
pub struct SwitchedDirectory {
    inner: MmapDirectory,
    root: PathBuf,
    switch: Arc<SyncSwitch>,
}

impl SwitchedDirectory {
    pub fn open(root: &Path) -> Result<SwitchedDirectory, tantivy::directory::error::OpenDirectoryError> {
        Ok(SwitchedDirectory {
            inner: MmapDirectory::open(root)?,
            root: root.to_path_buf(),
            switch: Arc::new(SyncSwitch {
                root: root.to_path_buf(),
                relaxed: AtomicBool::new(false),
                unsynced: Mutex::default(),
                opened: AtomicUsize::new(0),
                pruned_to: AtomicUsize::new(0),
                prunings: AtomicUsize::new(0),
            }),
        })
    }

    pub fn switch(&self) -> Arc<SyncSwitch> {
        Arc::clone(&self.switch)
    }

    /// Drops the mmap cache's entries of files no longer mapped (tantivy prunes them only when
    /// asked for its statistics) and returns how many entries are left.
    fn prune_mmap_cache(&self) -> usize {
        let left = self.inner.get_cache_info().mmapped.len();
        self.switch.pruned_to.store(left, Ordering::Relaxed);
        self.switch.prunings.fetch_add(1, Ordering::Relaxed);
        left
    }
}

/// A file written in relaxed mode: flushed, not synced, at terminate.
struct UnsyncedFile {
    file: File,
    path: PathBuf,
    switch: Arc<SyncSwitch>,
}

impl Write for UnsyncedFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl TerminatingWrite for UnsyncedFile {
    fn terminate_ref(&mut self, _: AntiCallToken) -> io::Result<()> {
        self.file.flush()?;
        self.switch.remember(std::mem::take(&mut self.path));
        Ok(())
    }
}

impl Directory for SwitchedDirectory {
    fn get_file_handle(&self, path: &Path) -> Result<Arc<dyn FileHandle>, OpenReadError> {
        if self.switch.opened.fetch_add(1, Ordering::Relaxed) + 1 >= PRUNE_EVERY {
            self.switch.opened.store(0, Ordering::Relaxed);
            self.prune_mmap_cache();
        }
        self.inner.get_file_handle(path)
    }

    fn delete(&self, path: &Path) -> Result<(), DeleteError> {
        self.inner.delete(path)
    }

    fn exists(&self, path: &Path) -> Result<bool, OpenReadError> {
        self.inner.exists(path)
    }

    fn open_write(&self, path: &Path) -> Result<WritePtr, OpenWriteError> {
        if !self.switch.is_relaxed() {
            return self.inner.open_write(path);
        }
        let full = self.root.join(path);
        let file = OpenOptions::new().write(true).create_new(true).open(&full).map_err(|e| {
            if e.kind() == io::ErrorKind::AlreadyExists {
                OpenWriteError::FileAlreadyExists(path.to_path_buf())
            } else {
                OpenWriteError::wrap_io_error(e, path.to_path_buf())
            }
        })?;
        let writer = UnsyncedFile { file, path: full, switch: Arc::clone(&self.switch) };
        Ok(BufWriter::new(Box::new(writer)))
    }

    fn atomic_read(&self, path: &Path) -> Result<Vec<u8>, OpenReadError> {
        self.inner.atomic_read(path)
    }

    /// `meta.json` and `.managed.json`: a temp file renamed over the file, synced unless
    /// relaxed. Not tantivy's own (`MmapDirectory::atomic_write`): its rename fails on Windows
    /// while a reader has the file open for the moment of a reload, which ours retries
    /// ([`rename_over`], issue #47).
    fn atomic_write(&self, path: &Path, data: &[u8]) -> io::Result<()> {
        let relaxed = self.switch.is_relaxed();
        let full = self.root.join(path);
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        // One writer holds the directory, so the temp name cannot collide.
        let temp = self.root.join(format!("{TEMP_PREFIX}{name}"));
        let written = File::create(&temp)
            .and_then(|mut f| {
                f.write_all(data)?;
                if !relaxed {
                    f.sync_data()?;
                }
                Ok(())
            })
            .and_then(|()| rename_over(&temp, &full));
        if written.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        written?;
        if relaxed {
            self.switch.remember(full);
            Ok(())
        } else {
            sync_dir(&self.root)
        }
    }

    fn sync_directory(&self) -> io::Result<()> {
        if self.switch.is_relaxed() {
            return Ok(());
        }
        self.inner.sync_directory()
    }

    fn acquire_lock(&self, lock: &Lock) -> Result<DirectoryLock, LockError> {
        self.inner.acquire_lock(lock)
    }

    fn watch(&self, watch_callback: WatchCallback) -> tantivy::Result<WatchHandle> {
        self.inner.watch(watch_callback)
    }
}
