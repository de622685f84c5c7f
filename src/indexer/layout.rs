//! The index directory and its writer lock (`product.md` §3).

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Where one project's derived index lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexLayout {
    dir: PathBuf,
}

impl IndexLayout {
    /// The layout under an index directory (e.g. `<root>/.local-vector-search-mcp`).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        IndexLayout { dir: dir.into() }
    }
    /// The index directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
    /// The bookkeeping store.
    pub fn store_path(&self) -> PathBuf {
        self.dir.join("meta.redb")
    }
    /// The tantivy index.
    pub fn lexical_dir(&self) -> PathBuf {
        self.dir.join("lexical")
    }
    /// The writer lock file.
    pub fn lock_path(&self) -> PathBuf {
        self.dir.join("LOCK")
    }
    /// The vector index (only with embeddings on).
    pub fn vector_path(&self) -> PathBuf {
        self.dir.join(crate::vectors::VECTOR_FILE)
    }
    /// The status snapshot written after every commit.
    pub fn snapshot_path(&self) -> PathBuf {
        self.dir.join("status.json")
    }
    /// Whether an index has been built here.
    pub fn exists(&self) -> bool {
        self.snapshot_path().is_file()
    }
}

/// An exclusive OS lock on the index directory's `LOCK` file; released on drop or process death.
#[derive(Debug)]
pub struct WriterLock {
    _file: File,
}

impl WriterLock {
    /// Takes the lock or fails at once with a message that says what to do.
    pub fn acquire(layout: &IndexLayout) -> Result<WriterLock> {
        std::fs::create_dir_all(layout.dir()).map_err(|e| Error::io("the index directory", &e))?;
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(layout.lock_path())
            .map_err(|e| Error::io("the index lock file", &e))?;
        match file.try_lock() {
            Ok(()) => Ok(WriterLock { _file: file }),
            Err(TryLockError::WouldBlock) => Err(Error::new(
                crate::ErrorCode::IndexNotReady,
                "Another local-vector-search-mcp process is writing this project's index; wait for it to finish (searches and reads keep working) or stop it, then retry.",
            )),
            Err(TryLockError::Error(e)) => Err(Error::io("the index lock file", &e)),
        }
    }
}

/// What every commit leaves behind for status readers (any process, no lock, no store).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Snapshot {
    /// Generation of the last commit.
    pub generation: u64,
    /// Indexed documents.
    pub documents: u64,
    /// Indexed chunks.
    pub chunks: u64,
    /// When the last commit happened (UTC).
    pub last_indexed_at_utc: String,
    /// The stored manifest.
    pub manifest: BTreeMap<String, String>,
    /// Vector state (absent in lexical mode).
    #[serde(default)]
    pub vectors: Option<super::VectorState>,
}

impl Snapshot {
    /// Reads the snapshot; `None` when no index was built yet or it is unreadable.
    pub fn read(layout: &IndexLayout) -> Option<Snapshot> {
        let bytes = std::fs::read(layout.snapshot_path()).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Replaces the snapshot atomically (temp file + rename in the index directory).
    #[allow(clippy::disallowed_methods)]
    pub fn write(&self, layout: &IndexLayout) -> Result<()> {
        let tmp = layout.dir().join("status.json.tmp");
        let bytes =
            serde_json::to_vec_pretty(self).map_err(|e| Error::internal(format!("status snapshot: {e}")))?;
        let mut f = File::create(&tmp).map_err(|e| Error::io("the index status file", &e))?;
        // No fsync: the snapshot is a cache for status readers, rewritten after every commit.
        f.write_all(&bytes).map_err(|e| Error::io("the index status file", &e))?;
        std::fs::rename(&tmp, layout.snapshot_path()).map_err(|e| Error::io("the index status file", &e))
    }
}
