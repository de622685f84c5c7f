//! The index's bookkeeping store (redb): documents, elements, chunks, links, manifest, generation.
//!
//! The store is the source of truth for *what is indexed*: which revision (SHA-256) of each file,
//! its chunk ids and their embedding-text hashes, and the manifest that decides whether the index
//! matches the configuration. Search does not read it (tantivy holds what hits need), so only
//! the process that holds the project's writer lock opens it, and only while it writes.
//!
//! Invariants:
//!
//! - Every batch is one redb transaction that also advances `generation` and records the paths
//!   it touched; the lexical index commits the same generation afterwards. A mismatch on open
//!   means a crash between the two commits, and `indexer` repairs it from these records.
//! - Chunk ids are allocated from a monotonic counter and never reused.

mod records;
mod tables;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use redb::{Database, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition};

pub use records::{ChunkRecord, DocumentRecord, ElementRecord, RECORD_VERSION};
use records::{decode, encode};
use tables::{CHUNKS, DOCUMENTS, ELEMENTS, LAST_BATCH, LINKS, MANIFEST, META, VECTOR_MANIFEST, VECTORS};

use crate::error::{Error, Result};

fn db_err(e: impl std::fmt::Display) -> Error {
    Error::internal(format!(
        "The index store failed: {e}. If this repeats, delete the index directory and reindex."
    ))
}

/// The store file is not a readable redb database of this format (truncated, garbage, another
/// version): it is derived data, so the writer replaces it ([`crate::error::ErrorDetail::IndexDamaged`]).
fn damaged(e: redb::DatabaseError) -> Error {
    Error::index_not_ready(
        "The index store is damaged or was written by another version; run `reindex` to rebuild it.",
    )
    .with_detail(crate::error::ErrorDetail::IndexDamaged)
    .with_source(e)
}

/// An open store.
pub struct Store {
    db: Database,
}

impl Store {
    /// Opens (or creates) the store file.
    pub fn open(path: &Path) -> Result<Store> {
        let db = Database::create(path).map_err(|e| match e {
            redb::DatabaseError::DatabaseAlreadyOpen => {
                Error::internal("The index store is open in another process; wait for its reindex to finish.")
            }
            redb::DatabaseError::UpgradeRequired(_)
            | redb::DatabaseError::Storage(redb::StorageError::Corrupted(_)) => damaged(e),
            redb::DatabaseError::Storage(redb::StorageError::Io(io))
                if matches!(
                    io.kind(),
                    std::io::ErrorKind::InvalidData | std::io::ErrorKind::UnexpectedEof
                ) =>
            {
                damaged(redb::DatabaseError::Storage(redb::StorageError::Io(io)))
            }
            other => db_err(other),
        })?;
        let store = Store { db };
        // Create every table so reads never meet a missing one.
        let txn = store.db.begin_write().map_err(db_err)?;
        {
            txn.open_table(DOCUMENTS).map_err(db_err)?;
            txn.open_table(ELEMENTS).map_err(db_err)?;
            txn.open_table(CHUNKS).map_err(db_err)?;
            txn.open_table(MANIFEST).map_err(db_err)?;
            txn.open_table(META).map_err(db_err)?;
            txn.open_table(LAST_BATCH).map_err(db_err)?;
            txn.open_table(VECTORS).map_err(db_err)?;
            txn.open_table(VECTOR_MANIFEST).map_err(db_err)?;
            txn.open_table(LINKS).map_err(db_err)?;
        }
        txn.commit().map_err(db_err)?;
        Ok(store)
    }

    fn meta(&self, key: &str) -> Result<u64> {
        let txn = self.db.begin_read().map_err(db_err)?;
        let t = txn.open_table(META).map_err(db_err)?;
        Ok(t.get(key).map_err(db_err)?.map_or(0, |v| v.value()))
    }

    /// The generation of the last committed batch (0 for a new store).
    pub fn generation(&self) -> Result<u64> {
        self.meta("generation")
    }

    /// The stored manifest.
    pub fn manifest(&self) -> Result<BTreeMap<String, String>> {
        self.string_map(MANIFEST)
    }

    fn string_map(&self, table: TableDefinition<'_, &str, &str>) -> Result<BTreeMap<String, String>> {
        let txn = self.db.begin_read().map_err(db_err)?;
        let t = txn.open_table(table).map_err(db_err)?;
        let mut out = BTreeMap::new();
        for row in t.iter().map_err(db_err)? {
            let (k, v) = row.map_err(db_err)?;
            out.insert(k.value().to_owned(), v.value().to_owned());
        }
        Ok(out)
    }

    /// Every indexed document by path.
    pub fn documents(&self) -> Result<BTreeMap<String, DocumentRecord>> {
        let txn = self.db.begin_read().map_err(db_err)?;
        let t = txn.open_table(DOCUMENTS).map_err(db_err)?;
        let mut out = BTreeMap::new();
        for row in t.iter().map_err(db_err)? {
            let (k, v) = row.map_err(db_err)?;
            out.insert(k.value().to_owned(), decode(v.value())?);
        }
        Ok(out)
    }

    /// One document's record.
    pub fn document(&self, path: &str) -> Result<Option<DocumentRecord>> {
        let txn = self.db.begin_read().map_err(db_err)?;
        let t = txn.open_table(DOCUMENTS).map_err(db_err)?;
        t.get(path).map_err(db_err)?.map(|v| decode(v.value())).transpose()
    }

    /// Chunk records by id.
    pub fn chunks(&self, ids: &[u64]) -> Result<Vec<(u64, ChunkRecord)>> {
        let txn = self.db.begin_read().map_err(db_err)?;
        let t = txn.open_table(CHUNKS).map_err(db_err)?;
        let mut out = Vec::with_capacity(ids.len());
        for &id in ids {
            if let Some(v) = t.get(id).map_err(db_err)? {
                out.push((id, decode(v.value())?));
            }
        }
        Ok(out)
    }

    /// `(documents, chunks)` counts.
    pub fn counts(&self) -> Result<(u64, u64)> {
        let txn = self.db.begin_read().map_err(db_err)?;
        let d = txn.open_table(DOCUMENTS).map_err(db_err)?.len().map_err(db_err)?;
        let c = txn.open_table(CHUNKS).map_err(db_err)?.len().map_err(db_err)?;
        Ok((d, c))
    }

    /// Every document's stored links (opaque bytes of the `links` module), by path.
    pub fn all_links(&self) -> Result<Vec<(String, Vec<u8>)>> {
        let txn = self.db.begin_read().map_err(db_err)?;
        let t = txn.open_table(LINKS).map_err(db_err)?;
        let mut out = Vec::new();
        for row in t.iter().map_err(db_err)? {
            let (k, v) = row.map_err(db_err)?;
            out.push((k.value().to_owned(), v.value().to_vec()));
        }
        Ok(out)
    }

    /// One document's stored links.
    pub fn links(&self, path: &str) -> Result<Option<Vec<u8>>> {
        let txn = self.db.begin_read().map_err(db_err)?;
        let t = txn.open_table(LINKS).map_err(db_err)?;
        Ok(t.get(path).map_err(db_err)?.map(|v| v.value().to_vec()))
    }

    /// Paths written by the last batch.
    pub fn last_batch(&self) -> Result<Vec<String>> {
        let txn = self.db.begin_read().map_err(db_err)?;
        let t = txn.open_table(LAST_BATCH).map_err(db_err)?;
        let mut out = Vec::new();
        for row in t.iter().map_err(db_err)? {
            out.push(row.map_err(db_err)?.0.value().to_owned());
        }
        Ok(out)
    }

    /// Chunk ids that have a stored vector → their embedding-text hash.
    pub fn vector_keys(&self) -> Result<HashMap<u64, String>> {
        let txn = self.db.begin_read().map_err(db_err)?;
        let t = txn.open_table(VECTORS).map_err(db_err)?;
        let mut out = HashMap::with_capacity(usize::try_from(t.len().map_err(db_err)?).unwrap_or(0));
        for row in t.iter().map_err(db_err)? {
            let (k, v) = row.map_err(db_err)?;
            out.insert(k.value(), v.value().to_owned());
        }
        Ok(out)
    }

    /// How many chunks have a stored vector.
    pub fn vector_count(&self) -> Result<u64> {
        let txn = self.db.begin_read().map_err(db_err)?;
        txn.open_table(VECTORS).map_err(db_err)?.len().map_err(db_err)
    }

    /// The manifest of the stored vectors (empty when none were built).
    pub fn vector_manifest(&self) -> Result<BTreeMap<String, String>> {
        self.string_map(VECTOR_MANIFEST)
    }

    /// Records vectors added and removed (after `vectors.usearch` was saved with them), in one
    /// transaction. `reset` first forgets every vector and installs `manifest`.
    pub fn update_vectors(
        &self,
        reset: Option<&BTreeMap<String, String>>,
        added: &[(u64, String)],
        removed: &[u64],
    ) -> Result<()> {
        let txn = self.db.begin_write().map_err(db_err)?;
        {
            let mut t = txn.open_table(VECTORS).map_err(db_err)?;
            if let Some(manifest) = reset {
                t.retain(|_, _| false).map_err(db_err)?;
                let mut m = txn.open_table(VECTOR_MANIFEST).map_err(db_err)?;
                m.retain(|_, _| false).map_err(db_err)?;
                for (k, v) in manifest {
                    m.insert(k.as_str(), v.as_str()).map_err(db_err)?;
                }
            }
            for id in removed {
                t.remove(*id).map_err(db_err)?;
            }
            for (id, hash) in added {
                t.insert(*id, hash.as_str()).map_err(db_err)?;
            }
        }
        txn.commit().map_err(db_err)
    }

    /// Starts a batch (one write transaction).
    pub fn batch(&self) -> Result<Batch> {
        let txn = self.db.begin_write().map_err(db_err)?;
        Ok(Batch { txn, touched: Vec::new() })
    }
}

/// A write batch: documents replaced or deleted, committed atomically with a new generation.
pub struct Batch {
    txn: redb::WriteTransaction,
    touched: Vec<String>,
}

impl Batch {
    /// Removes everything (a forced rebuild), keeping the chunk-id counter.
    pub fn reset(&mut self) -> Result<()> {
        let paths: Vec<String> = {
            let t = self.txn.open_table(DOCUMENTS).map_err(db_err)?;
            t.iter()
                .map_err(db_err)?
                .map(|r| r.map(|(k, _)| k.value().to_owned()))
                .collect::<Result<_, _>>()
                .map_err(db_err)?
        };
        for table in [DOCUMENTS, ELEMENTS, LINKS] {
            self.txn.open_table(table).map_err(db_err)?.retain(|_, _| false).map_err(db_err)?;
        }
        self.txn.open_table(CHUNKS).map_err(db_err)?.retain(|_, _| false).map_err(db_err)?;
        self.txn.open_table(MANIFEST).map_err(db_err)?.retain(|_, _| false).map_err(db_err)?;
        self.touched.extend(paths);
        Ok(())
    }

    /// Replaces the manifest.
    pub fn set_manifest(&mut self, manifest: &BTreeMap<String, String>) -> Result<()> {
        let mut t = self.txn.open_table(MANIFEST).map_err(db_err)?;
        t.retain(|_, _| false).map_err(db_err)?;
        for (k, v) in manifest {
            t.insert(k.as_str(), v.as_str()).map_err(db_err)?;
        }
        Ok(())
    }

    /// Reserves `n` fresh chunk ids.
    pub fn allocate_chunk_ids(&mut self, n: usize) -> Result<std::ops::Range<u64>> {
        let mut t = self.txn.open_table(META).map_err(db_err)?;
        let next = t.get("next_chunk_id").map_err(db_err)?.map_or(1, |v| v.value());
        let end = next + n as u64;
        t.insert("next_chunk_id", end).map_err(db_err)?;
        Ok(next..end)
    }

    /// Deletes a document and its chunks; returns the removed chunk ids.
    pub fn delete_document(&mut self, path: &str) -> Result<Vec<u64>> {
        let old: Option<DocumentRecord> = {
            let mut t = self.txn.open_table(DOCUMENTS).map_err(db_err)?;
            let removed = t.remove(path).map_err(db_err)?;
            removed.map(|v| decode(v.value())).transpose()?
        };
        self.txn.open_table(ELEMENTS).map_err(db_err)?.remove(path).map_err(db_err)?;
        self.txn.open_table(LINKS).map_err(db_err)?.remove(path).map_err(db_err)?;
        let ids = old.map(|d| d.chunk_ids).unwrap_or_default();
        let mut chunks = self.txn.open_table(CHUNKS).map_err(db_err)?;
        for id in &ids {
            chunks.remove(*id).map_err(db_err)?;
        }
        self.touched.push(path.to_owned());
        Ok(ids)
    }

    /// Replaces a document with a new revision and its elements and chunks.
    pub fn put_document(
        &mut self,
        path: &str,
        record: &DocumentRecord,
        elements: &[ElementRecord],
        chunks: &[(u64, ChunkRecord)],
    ) -> Result<Vec<u64>> {
        let removed = self.delete_document(path)?;
        self.txn
            .open_table(DOCUMENTS)
            .map_err(db_err)?
            .insert(path, encode(record)?.as_slice())
            .map_err(db_err)?;
        self.txn
            .open_table(ELEMENTS)
            .map_err(db_err)?
            .insert(path, encode(&elements)?.as_slice())
            .map_err(db_err)?;
        let mut t = self.txn.open_table(CHUNKS).map_err(db_err)?;
        for (id, c) in chunks {
            t.insert(*id, encode(c)?.as_slice()).map_err(db_err)?;
        }
        Ok(removed)
    }

    /// Stores a document's links (after [`Batch::put_document`], which clears them).
    pub fn put_links(&mut self, path: &str, links: &[u8]) -> Result<()> {
        self.txn.open_table(LINKS).map_err(db_err)?.insert(path, links).map_err(db_err)?;
        Ok(())
    }

    /// Rewrites a document's record only (same revision, new file metadata).
    pub fn touch_document(&mut self, path: &str, record: &DocumentRecord) -> Result<()> {
        let mut t = self.txn.open_table(DOCUMENTS).map_err(db_err)?;
        t.insert(path, encode(record)?.as_slice()).map_err(db_err)?;
        Ok(())
    }

    /// Commits with generation `generation`, recording the touched paths for repair; returns
    /// them (documents written, deleted or reset).
    pub fn commit(self, generation: u64) -> Result<Vec<String>> {
        {
            let mut meta = self.txn.open_table(META).map_err(db_err)?;
            meta.insert("generation", generation).map_err(db_err)?;
            let mut last = self.txn.open_table(LAST_BATCH).map_err(db_err)?;
            last.retain(|_, _| false).map_err(db_err)?;
            for p in &self.touched {
                last.insert(p.as_str(), generation).map_err(db_err)?;
            }
        }
        self.txn.commit().map_err(db_err)?;
        Ok(self.touched)
    }
}

#[cfg(test)]
mod tests;
