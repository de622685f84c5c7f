//! Persisted records. Each is JSON with an explicit `v` so an old index is recognised, not
//! misread; a changed layout bumps `RECORD_VERSION` and the manifest's schema version.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The record layout version; part of the manifest's `schema_version`.
pub const RECORD_VERSION: u32 = 1;

/// One indexed Markdown file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocumentRecord {
    /// Record version.
    pub v: u32,
    /// SHA-256 of the exact file bytes of the indexed revision.
    pub source_hash: String,
    /// File size when indexed (fast path).
    pub len: u64,
    /// Modification time when indexed, nanoseconds since the Unix epoch (fast path).
    pub mtime_ns: u128,
    /// When it was indexed (RFC 3339 UTC).
    pub indexed_at: String,
    /// Its chunk ids, in order.
    pub chunk_ids: Vec<u64>,
}

/// One element of an indexed revision (`contract.md` §4.1 `elements`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ElementRecord {
    /// Logical pointer.
    pub pointer: String,
    /// Kind name (`ListItem`, …).
    pub kind: String,
    /// 1-based first line.
    pub start_line: usize,
    /// 1-based last line.
    pub end_line: usize,
    /// Byte offset.
    pub source_start: usize,
    /// Byte length.
    pub source_length: usize,
    /// XXH64 self hash.
    pub self_hash: String,
    /// XXH64 subtree hash.
    pub subtree_hash: String,
    /// Heading path.
    pub heading_path: Option<String>,
}

/// One chunk (`contract.md` §4.1 `chunks`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkRecord {
    /// Record version.
    pub v: u32,
    /// Document path.
    pub path: String,
    /// v2 anchor of the chunk's first element.
    pub anchor: String,
    /// Chunk text.
    pub text: String,
    /// Heading path.
    pub heading_path: Option<String>,
    /// SHA-256 of the embedding text.
    pub embedding_text_hash: String,
    /// 1-based first line.
    pub start_line: usize,
    /// 1-based last line.
    pub end_line: usize,
}

pub(crate) fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>> {
    serde_json::to_vec(value).map_err(|e| Error::internal(format!("could not encode an index record: {e}")))
}

pub(crate) fn decode<T: for<'de> Deserialize<'de>>(bytes: &[u8]) -> Result<T> {
    serde_json::from_slice(bytes).map_err(|e| {
        Error::index_not_ready(format!(
            "The index holds a record this version cannot read ({e}); run `reindex --force` to rebuild it."
        ))
    })
}
