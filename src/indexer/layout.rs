//! The index directory and its writer lock (`docs/reference/product.md` §3).

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
        self.dir.join("links.bin")
    }
    /// The generation `links.bin` is valid for (written after every commit).
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
    /// `reindex-progress.json`: the progress of a reindex running in some process, for the
    /// others (removed when the run ends).
    pub fn progress_path(&self) -> PathBuf {
        self.dir.join("reindex-progress.json")
    }

    /// The writer-session marker ([`SessionMarker`]).
    pub fn session_path(&self) -> PathBuf {
        self.dir.join("SESSION")
    }
    /// Whether a writer session ended without closing cleanly (a crash, a kill, a failed
    /// commit): the next start opens the writer, which repairs what the session left.
    pub fn interrupted(&self) -> bool {
        self.session_path().is_file()
    }
}

/// `SESSION` in the index directory: created (and synced) when a writer opens, removed when it
/// closes with every commit complete and synced. One left behind says the last writer died or
/// failed in the middle of its work; the lexical index or the link and status snapshots may
/// then lag the store, and nothing but opening the writer repairs that
/// ([`IndexLayout::interrupted`]).
///
/// It holds the id of the boot it was written in (Linux): the writer's lexical commits for
/// edits skip `fsync` (`lexical/directory.rs`), which a process crash cannot undo but an OS
/// crash can, so a marker left in an earlier boot means the lexical index may be torn. Without
/// a boot id every commit is synced.
#[derive(Debug)]
pub struct SessionMarker {
    path: PathBuf,
    /// Every commit of this session completed (the marker goes when the writer closes).
    pub clean: bool,
    /// This boot's id, when the OS tells it (relaxed lexical commits are allowed then).
    pub boot_id: Option<String>,
}

/// What an earlier session left behind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LeftBehind {
    /// It did not close cleanly.
    pub interrupted: bool,
    /// ... and it ran in another boot (or its boot is unknown): the machine went down meanwhile.
    pub other_boot: bool,
}

/// The id of the running boot (Linux), `None` elsewhere.
fn boot_id() -> Option<String> {
    let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let id = id.trim();
    (!id.is_empty()).then(|| id.to_owned())
}

impl SessionMarker {
    /// Creates the marker (its holder holds the writer lock) and says what an earlier session
    /// left behind.
    pub fn begin(layout: &IndexLayout) -> Result<(SessionMarker, LeftBehind)> {
        let path = layout.session_path();
        let boot_id = boot_id();
        let left = match std::fs::read_to_string(&path) {
            Ok(previous) => LeftBehind {
                interrupted: true,
                other_boot: !previous.trim().is_empty() && Some(previous.trim()) != boot_id.as_deref(),
            },
            Err(_) => LeftBehind::default(),
        };
        let mut file = std::fs::File::create(&path).map_err(|e| Error::io("the index session marker", &e))?;
        std::io::Write::write_all(&mut file, boot_id.as_deref().unwrap_or_default().as_bytes())
            .map_err(|e| Error::io("the index session marker", &e))?;
        // Synced, so that after a power loss it is there whenever a commit of this session is.
        file.sync_all().map_err(|e| Error::io("the index session marker", &e))?;
        #[cfg(unix)]
        if let Ok(dir) = std::fs::File::open(layout.dir()) {
            let _ = dir.sync_all();
        }
        Ok((SessionMarker { path, clean: true, boot_id }, left))
    }
}

impl Drop for SessionMarker {
    fn drop(&mut self) {
        if self.clean
            && let Err(e) = std::fs::remove_file(&self.path)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!("could not remove the index session marker: {e}");
        }
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
