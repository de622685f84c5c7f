//! The usearch HNSW index: one vector per chunk id, cosine distance, stored as bfloat16.
//!
//! - Metric: cosine (`1 - cos θ`), so unnormalised vectors rank like normalised ones; for
//!   bge-m3 (normalised) that is the same order as L2 (`docs/reference/original-server.md` §8.3).
//! - Scalars are stored as bfloat16: half the memory of f32, as fast as f32 (IEEE f16 is much
//!   slower to build without usearch's SIMD kernels) and nearly the recall of an exact scan
//!   (measured: `docs/design/vectors.md`, `docs/performance.md`).
//! - Saving writes a temporary file and renames it, so a reader that mapped the old file keeps a
//!   consistent view and a crash never leaves half a file.

use std::path::Path;

use usearch::{Index, IndexOptions, MetricKind, ScalarKind};

use super::embed::dimension_mismatch;
use crate::error::{Error, Result};
use crate::workspace::replace_file_atomic;

/// Fewest inserts a thread of `add_many` gets (a thread per vector would cost more than it saves).
const MIN_PER_THREAD: usize = 64;

/// Below this many in-scope vectors a scoped search compares them all (exact and cheap).
const EXACT_SCOPE_LIMIT: usize = 4_096;

fn vec_err(doing: &str, e: impl std::fmt::Display) -> Error {
    Error::internal(format!(
        "{doing} failed: {e}. If this repeats, delete vectors.usearch in the index directory and reindex."
    ))
}

/// How vectors are stored (the metric is always cosine).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// 4 bytes per dimension.
    F32,
    /// IEEE half precision, 2 bytes.
    F16,
    /// bfloat16, 2 bytes.
    BF16,
    /// 8-bit integers, 1 byte (usearch scales unit vectors into `i8`).
    I8,
}

impl Precision {
    /// Every precision, for comparisons.
    pub const ALL: [Precision; 4] = [Precision::F32, Precision::F16, Precision::BF16, Precision::I8];

    /// `f32`, `f16`, `bf16`, `i8`.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F16 => "f16",
            Precision::BF16 => "bf16",
            Precision::I8 => "i8",
        }
    }

    fn scalar(self) -> ScalarKind {
        match self {
            Precision::F32 => ScalarKind::F32,
            Precision::F16 => ScalarKind::F16,
            Precision::BF16 => ScalarKind::BF16,
            Precision::I8 => ScalarKind::I8,
        }
    }
}

/// The precision the index uses (see `docs/design/vectors.md` for the measurements).
pub const PRECISION: Precision = Precision::BF16;

/// An open vector index.
pub struct VectorIndex {
    index: Index,
    dims: usize,
}

impl std::fmt::Debug for VectorIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VectorIndex").field("dims", &self.dims).field("len", &self.len()).finish()
    }
}

fn options(dims: usize, precision: Precision) -> IndexOptions {
    IndexOptions {
        dimensions: dims,
        metric: MetricKind::Cos,
        quantization: precision.scalar(),
        connectivity: 0,
        expansion_add: 0,
        expansion_search: 0,
        multi: false,
    }
}

impl VectorIndex {
    /// An empty in-memory index of `dims` dimensions.
    pub fn new(dims: usize) -> Result<VectorIndex> {
        VectorIndex::with_precision(dims, PRECISION)
    }

    /// An empty index with another precision (benchmarks compare them).
    pub fn with_precision(dims: usize, precision: Precision) -> Result<VectorIndex> {
        let index =
            Index::new(&options(dims, precision)).map_err(|e| vec_err("Creating the vector index", e))?;
        Ok(VectorIndex { index, dims })
    }

    /// Loads `path` into memory (the writer's copy). The file's dimensions must be `dims`.
    pub fn load(path: &Path, dims: usize) -> Result<VectorIndex> {
        let v = VectorIndex::new(dims)?;
        check_header(path, dims)?;
        v.index.load(&path_str(path)?).map_err(|e| vec_err("Loading the vector index", e))?;
        Ok(v)
    }

    /// Maps `path` read-only (a searcher's copy: cheap to open, pages shared with the OS cache).
    pub fn view(path: &Path) -> Result<VectorIndex> {
        let meta = Index::metadata(&path_str(path)?).map_err(|e| vec_err("Reading the vector index", e))?;
        let dims = usize::try_from(meta.dimensions).unwrap_or(0);
        let index =
            Index::new(&IndexOptions::from(meta)).map_err(|e| vec_err("Opening the vector index", e))?;
        index.view(&path_str(path)?).map_err(|e| vec_err("Opening the vector index", e))?;
        Ok(VectorIndex { index, dims })
    }

    /// Reads `path` into memory whatever its dimensions: a searcher's copy that keeps no handle
    /// and no mapping of the file once it returns.
    pub fn read(path: &Path) -> Result<VectorIndex> {
        let meta = Index::metadata(&path_str(path)?).map_err(|e| vec_err("Reading the vector index", e))?;
        let dims = usize::try_from(meta.dimensions).unwrap_or(0);
        let index =
            Index::new(&IndexOptions::from(meta)).map_err(|e| vec_err("Opening the vector index", e))?;
        index.load(&path_str(path)?).map_err(|e| vec_err("Loading the vector index", e))?;
        Ok(VectorIndex { index, dims })
    }

    /// A searcher's copy of `path`: mapped ([`VectorIndex::view`]) where the writer may rename
    /// a new file over a mapped one (Linux, macOS: the mapping keeps the old inode), read into
    /// memory ([`VectorIndex::read`]) on Windows, where usearch maps the file without delete
    /// sharing and the writer's rename over it would fail while any search holds the view
    /// (docs/design/portability.md).
    pub fn open_for_search(path: &Path) -> Result<VectorIndex> {
        if cfg!(windows) { VectorIndex::read(path) } else { VectorIndex::view(path) }
    }

    /// Dimensions.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// Vectors held.
    pub fn len(&self) -> usize {
        self.index.size()
    }

    /// Whether it holds no vector.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `key` has a vector.
    pub fn contains(&self, key: u64) -> bool {
        self.index.contains(key)
    }

    /// Bytes of memory the index uses.
    pub fn memory_usage(&self) -> usize {
        self.index.memory_usage()
    }

    /// Adds many vectors using both cores (usearch inserts concurrently); replaces existing keys.
    pub fn add_many(&mut self, items: &[(u64, &[f32])]) -> Result<()> {
        for (key, v) in items {
            if v.len() != self.dims {
                return Err(dimension_mismatch(self.dims, v.len()));
            }
            if self.index.contains(*key) {
                self.index.remove(*key).map_err(|e| vec_err("Replacing a vector", e))?;
            }
        }
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 4);
        let needed = self.index.size() + items.len();
        if needed > self.index.capacity() {
            let grow = needed.max(self.index.capacity() * 2).max(1_024);
            self.index
                .reserve_capacity_and_threads(grow, threads)
                .map_err(|e| vec_err("Growing the vector index", e))?;
        }
        let per = items.len().div_ceil(threads).max(MIN_PER_THREAD);
        let index = &self.index;
        let insert = |part: &[(u64, &[f32])]| -> Result<()> {
            for (key, v) in part {
                index.add(*key, v).map_err(|e| vec_err("Adding a vector", e))?;
            }
            Ok(())
        };
        if per >= items.len() {
            return insert(items); // too few for threads to pay off
        }
        std::thread::scope(|scope| {
            let handles: Vec<_> = items.chunks(per).map(|part| scope.spawn(move || insert(part))).collect();
            handles.into_iter().try_for_each(|h| {
                h.join().unwrap_or_else(|_| Err(Error::internal("a vector insert thread panicked")))
            })
        })
    }

    /// Adds (or replaces) the vector of `key`.
    pub fn add(&mut self, key: u64, vector: &[f32]) -> Result<()> {
        self.add_many(&[(key, vector)])
    }

    /// The stored vector of `key` (as f32).
    pub fn get(&self, key: u64) -> Option<Vec<f32>> {
        let mut out = vec![0f32; self.dims];
        match self.index.get(key, &mut out) {
            Ok(n) if n > 0 => Some(out),
            _ => None,
        }
    }

    /// Removes `key` (no-op when absent).
    pub fn remove(&mut self, key: u64) -> Result<()> {
        if self.index.contains(key) {
            self.index.remove(key).map_err(|e| vec_err("Removing a vector", e))?;
        }
        Ok(())
    }

    /// Writes the index to `path` atomically (temp file in the same directory + rename). usearch
    /// writes to a path itself, so it fills the temp file directly (no copy of the index in memory).
    pub fn save(&self, path: &Path) -> Result<()> {
        replace_file_atomic(path, "the vector index", |temp| {
            self.index.save(&path_str(temp)?).map_err(|e| vec_err("Saving the vector index", e))?;
            crate::failpoint("vectors.save.temp-written");
            Ok(())
        })
    }

    /// The `k` nearest keys to `query` with their cosine distances, nearest first. With a
    /// `scope` (the keys allowed), only those are considered *before* `k` is applied: small
    /// scopes are compared exhaustively, larger ones through the filtered HNSW search.
    pub fn search(&self, query: &[f32], k: usize, scope: Option<&[u64]>) -> Result<Vec<(u64, f32)>> {
        if query.len() != self.dims {
            return Err(dimension_mismatch(self.dims, query.len()));
        }
        if k == 0 || self.is_empty() {
            return Ok(Vec::new());
        }
        let matches = match scope {
            None => self.index.search(query, k).map_err(|e| vec_err("Searching the vector index", e))?,
            Some(keys) if keys.len() <= EXACT_SCOPE_LIMIT => return Ok(self.exact_in(query, k, keys)),
            Some(keys) => {
                let mut allowed: Vec<u64> = keys.to_vec();
                allowed.sort_unstable();
                let found = self
                    .index
                    .filtered_search(query, k, |key| allowed.binary_search(&key).is_ok())
                    .map_err(|e| vec_err("Searching the vector index", e))?;
                if found.keys.len() < k.min(keys.len()) {
                    // The graph walk ran out of allowed neighbours: compare them all.
                    return Ok(self.exact_in(query, k, keys));
                }
                found
            }
        };
        Ok(matches.keys.into_iter().zip(matches.distances).collect())
    }

    fn exact_in(&self, query: &[f32], k: usize, keys: &[u64]) -> Vec<(u64, f32)> {
        let qn = norm(query);
        let mut scored: Vec<(u64, f32)> = keys
            .iter()
            .filter_map(|&key| {
                let v = self.get(key)?;
                let denom = qn * norm(&v);
                let cos = if denom > 0.0 { dot(query, &v) / denom } else { 0.0 };
                Some((key, 1.0 - cos))
            })
            .collect();
        scored.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        scored.truncate(k);
        scored
    }
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn norm(a: &[f32]) -> f32 {
    dot(a, a).sqrt()
}

fn check_header(path: &Path, dims: usize) -> Result<()> {
    let meta = Index::metadata(&path_str(path)?).map_err(|e| vec_err("Reading the vector index", e))?;
    if meta.dimensions != dims as u64 {
        return Err(dimension_mismatch(dims, meta.dimensions));
    }
    Ok(())
}

fn path_str(path: &Path) -> Result<String> {
    path.to_str().map(str::to_owned).ok_or_else(|| {
        Error::internal("The index directory's path is not valid UTF-8; choose another --storage-path.")
    })
}
