//! The index directory and its writer lock (`product.md` §3).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::workspace::{LockFile, write_file_atomic};

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
    /// The link graph snapshot written after every commit (`docs/design/links.md`).
    pub fn links_path(&self) -> PathBuf {
        self.dir.join("links.json")
    }
    /// The generation `links.json` is valid for (written after every commit).
    pub fn links_generation_path(&self) -> PathBuf {
        self.dir.join("links.gen")
    }
    /// The generation recorded in `links.gen`, if any.
    pub fn links_generation(&self) -> Option<u64> {
        std::fs::read_to_string(self.links_generation_path()).ok()?.trim().parse().ok()
    }
    /// Whether an index has been built here.
    pub fn exists(&self) -> bool {
        self.snapshot_path().is_file()
    }
}

/// What a writer is told while another holds the index writer lock.
const WRITER_BUSY: &str = "Another local-vector-search-mcp process is writing this project's index; wait for it to finish (searches and reads keep working) or stop it, then retry.";

/// An exclusive OS lock on the index directory's `LOCK` file; released on drop or process death.
#[derive(Debug)]
pub struct WriterLock {
    _lock: LockFile,
}

impl WriterLock {
    /// Takes the lock or fails at once with a message that says what to do; when another
    /// process (or another writer in this one) holds it, the error is
    /// [`ErrorDetail::WriterBusy`](crate::error::ErrorDetail::WriterBusy).
    pub fn acquire(layout: &IndexLayout) -> Result<WriterLock> {
        let lock = LockFile::try_acquire(&layout.lock_path(), "the index lock file", WRITER_BUSY)?;
        Ok(WriterLock { _lock: lock })
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
    pub fn write(&self, layout: &IndexLayout) -> Result<()> {
        let bytes =
            serde_json::to_vec_pretty(self).map_err(|e| Error::internal(format!("status snapshot: {e}")))?;
        // No fsync: the snapshot is a cache for status readers, rewritten after every commit.
        write_file_atomic(&layout.snapshot_path(), &bytes, "the index status file")
    }
}
