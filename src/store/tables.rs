//! Every redb table of the index, in one place so the schema reads at a glance.
//!
//! Values are binary records (`records.rs`) or plain values; keys are plain. `manifest` is the
//! one table every format version keeps with the same types: the store reads it first to learn
//! the format before it opens any other table.

use redb::TableDefinition;

/// `path` → `DocumentRecord` (source hash, size, mtime, chunk ids).
pub const DOCUMENTS: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("documents");
/// Manifest key → value (`docs/reference/original-server.md` §4.2 keys plus `analyzer_version`,
/// `record_version`).
pub const MANIFEST: TableDefinition<'_, &str, &str> = TableDefinition::new("manifest");
/// Bookkeeping: `generation`, `next_chunk_id`, `chunk_count`.
pub const META: TableDefinition<'_, &str, u64> = TableDefinition::new("meta");
/// Paths written by the batch of the current generation (for repair after a crash).
pub const LAST_BATCH: TableDefinition<'_, &str, u64> = TableDefinition::new("last_batch");
/// Chunk ids that have a vector in `vectors.usearch` → the SHA-256 (32 bytes) of the embedding
/// text it was made from.
pub const VECTORS: TableDefinition<'_, u64, &[u8]> = TableDefinition::new("vectors");
/// What the stored vectors were built with (model, dimensions, embedding-text version, …).
pub const VECTOR_MANIFEST: TableDefinition<'_, &str, &str> = TableDefinition::new("vector_manifest");
