//! Every redb table of the index, in one place so the schema reads at a glance.
//!
//! Values are versioned JSON records (`records.rs`); keys are plain.

use redb::TableDefinition;

/// `path` → `DocumentRecord`.
pub const DOCUMENTS: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("documents");
/// `path` → `Vec<ElementRecord>` (the parsed elements of the indexed revision).
pub const ELEMENTS: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("elements");
/// `chunk id` → `ChunkRecord`.
pub const CHUNKS: TableDefinition<'_, u64, &[u8]> = TableDefinition::new("chunks");
/// Manifest key → value (`contract.md` §4.2 keys plus `analyzer_version`).
pub const MANIFEST: TableDefinition<'_, &str, &str> = TableDefinition::new("manifest");
/// Bookkeeping: `generation`, `next_chunk_id`.
pub const META: TableDefinition<'_, &str, u64> = TableDefinition::new("meta");
/// Paths written by the batch of the current generation (for repair after a crash).
pub const LAST_BATCH: TableDefinition<'_, &str, u64> = TableDefinition::new("last_batch");
/// Chunk ids that have a vector in `vectors.usearch` → the embedding-text hash it was made from.
pub const VECTORS: TableDefinition<'_, u64, &str> = TableDefinition::new("vectors");
/// What the stored vectors were built with (model, dimensions, embedding-text version, …).
pub const VECTOR_MANIFEST: TableDefinition<'_, &str, &str> = TableDefinition::new("vector_manifest");
/// `path` → the document's links and anchors (`links::DocLinks`, JSON), for the link graph.
pub const LINKS: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("links");
