//! The index's bookkeeping store (redb): documents, manifest, generation, vector records.
//!
//! The store is the source of truth for *what is indexed*: which revision (SHA-256) of each file,
//! its chunk ids, and the manifest that decides whether the index matches the configuration. The
//! chunks themselves (text, heading path, anchor) live only in the lexical index, which stores
//! them for hits anyway; a lexical index that must be refilled is re-derived from the Markdown.
//! Search does not read the store (tantivy holds what hits need), so only the process that holds
//! the project's writer lock opens it, and only while it writes.
//!
//! Invariants:
//!
//! - Every batch is one redb transaction that also advances `generation` and records the paths
//!   it touched; the lexical index commits the same generation afterwards. A mismatch on open
//!   means a crash between the two commits, and `indexer` repairs it from these paths and the
//!   Markdown files.
//! - Chunk ids are allocated from a monotonic counter and never reused.
//! - The format is read before anything else: `open` reads the `manifest` table (the same types
//!   in every format version) and opens no other table of a store whose `record_version` is not
//!   ours ([`Store::foreign_format`]); [`Store::wipe`] starts such a store over.

mod records;
mod tables;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use redb::{
    Database, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition, TableError,
    TableHandle,
};

pub use records::{DocumentRecord, RECORD_VERSION};
use records::{hash_bytes, hash_hex};
use tables::{DOCUMENTS, LAST_BATCH, MANIFEST, META, VECTOR_MANIFEST, VECTORS};

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

/// What the manifest of a store of another format says (its values, as found).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ForeignFormat {
    /// Its `schema_version` (`None`: missing or unreadable).
    pub schema_version: Option<String>,
    /// Its `record_version` (`None`: missing or unreadable).
    pub record_version: Option<String>,
}

/// Bytes a table takes in the store file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableSize {
    /// Table name.
    pub name: String,
    /// Rows.
    pub rows: u64,
    /// Keys and values.
    pub stored_bytes: u64,
    /// B-tree overhead.
    pub metadata_bytes: u64,
    /// Unused space in its pages.
    pub fragmented_bytes: u64,
}

/// An open store.
pub struct Store {
    db: Database,
    foreign: Option<ForeignFormat>,
}

/// Opens (creating when missing) every table of this format.
fn create_tables(db: &Database) -> Result<()> {
    let txn = db.begin_write().map_err(db_err)?;
    {
        txn.open_table(DOCUMENTS).map_err(db_err)?;
        txn.open_table(MANIFEST).map_err(db_err)?;
        txn.open_table(META).map_err(db_err)?;
        txn.open_table(LAST_BATCH).map_err(db_err)?;
        txn.open_table(VECTORS).map_err(db_err)?;
        txn.open_table(VECTOR_MANIFEST).map_err(db_err)?;
    }
    txn.commit().map_err(db_err)
}

/// The stored manifest, or `None` when the `manifest` table is not one this version can read.
fn read_manifest(db: &Database) -> Result<Option<BTreeMap<String, String>>> {
    let txn = db.begin_read().map_err(db_err)?;
    let t = match txn.open_table(MANIFEST) {
        Ok(t) => t,
        Err(TableError::TableDoesNotExist(_)) => return Ok(Some(BTreeMap::new())),
        Err(TableError::TableTypeMismatch { .. } | TableError::TableIsMultimap(_)) => return Ok(None),
        Err(e) => return Err(db_err(e)),
    };
    let mut out = BTreeMap::new();
    for row in t.iter().map_err(db_err)? {
        let (k, v) = row.map_err(db_err)?;
        out.insert(k.value().to_owned(), v.value().to_owned());
    }
    Ok(Some(out))
}

/// Deletes every table (whatever its types) in one transaction.
fn delete_all_tables(db: &Database) -> Result<()> {
    let txn = db.begin_write().map_err(db_err)?;
    let tables: Vec<_> = txn.list_tables().map_err(db_err)?.collect();
    for t in tables {
        txn.delete_table(t).map_err(db_err)?;
    }
    let multimaps: Vec<_> = txn.list_multimap_tables().map_err(db_err)?.collect();
    for t in multimaps {
        txn.delete_multimap_table(t).map_err(db_err)?;
    }
    txn.commit().map_err(db_err)
}

impl Store {
    /// Opens (or creates) the store file. A store of another record format is opened without
    /// touching its tables: see [`Store::foreign_format`].
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
        let foreign = match read_manifest(&db)? {
            None => Some(ForeignFormat::default()),
            Some(m) if m.is_empty() => None,
            Some(m) => {
                (m.get("record_version") != Some(&RECORD_VERSION.to_string())).then(|| ForeignFormat {
                    schema_version: m.get("schema_version").cloned(),
                    record_version: m.get("record_version").cloned(),
                })
            }
        };
        let store = Store { db, foreign };
        if store.foreign.is_none() {
            // Create every table so reads never meet a missing one. A store that never
            // recorded a manifest holds nothing worth keeping: tables of another layout go.
            if create_tables(&store.db).is_err() {
                delete_all_tables(&store.db)?;
                create_tables(&store.db)?;
            }
        }
        Ok(store)
    }

    /// The manifest of a store written in another record format (by an older or newer
    /// version), which this version must not read; `None` for a store of this format.
    pub fn foreign_format(&self) -> Option<&ForeignFormat> {
        self.foreign.as_ref()
    }

    /// Deletes every table (a store of another format, or a forced rebuild), creates this
    /// format's, and compacts the file.
    pub fn wipe(&mut self) -> Result<()> {
        delete_all_tables(&self.db)?;
        create_tables(&self.db)?;
        self.foreign = None;
        self.compact()
    }

    /// Gives the file's free pages back to the file system (after a wipe or large deletions).
    pub fn compact(&mut self) -> Result<()> {
        self.db.compact().map_err(db_err)?;
        Ok(())
    }

    /// Bytes per table (for benchmarks and bug reports), and the file's total.
    pub fn table_sizes(&self) -> Result<Vec<TableSize>> {
        let txn = self.db.begin_read().map_err(db_err)?;
        let mut out = Vec::new();
        for handle in txn.list_tables().map_err(db_err)? {
            let name = handle.name().to_owned();
            // A table opens only with its own types: the ones of this format, by name.
            let stats = match name.as_str() {
                "documents" => txn.open_table(DOCUMENTS).and_then(|t| Ok((t.len()?, t.stats()?))),
                "manifest" => txn.open_table(MANIFEST).and_then(|t| Ok((t.len()?, t.stats()?))),
                "meta" => txn.open_table(META).and_then(|t| Ok((t.len()?, t.stats()?))),
                "last_batch" => txn.open_table(LAST_BATCH).and_then(|t| Ok((t.len()?, t.stats()?))),
                "vectors" => txn.open_table(VECTORS).and_then(|t| Ok((t.len()?, t.stats()?))),
                "vector_manifest" => txn.open_table(VECTOR_MANIFEST).and_then(|t| Ok((t.len()?, t.stats()?))),
                _ => continue,
            };
            let (rows, s) = stats.map_err(db_err)?;
            out.push(TableSize {
                name,
                rows,
                stored_bytes: s.stored_bytes(),
                metadata_bytes: s.metadata_bytes(),
                fragmented_bytes: s.fragmented_bytes(),
            });
        }
        Ok(out)
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
            out.insert(k.value().to_owned(), DocumentRecord::decode(v.value())?);
        }
        Ok(out)
    }

    /// One document's record.
    pub fn document(&self, path: &str) -> Result<Option<DocumentRecord>> {
        let txn = self.db.begin_read().map_err(db_err)?;
        let t = txn.open_table(DOCUMENTS).map_err(db_err)?;
        t.get(path).map_err(db_err)?.map(|v| DocumentRecord::decode(v.value())).transpose()
    }

    /// `(documents, chunks)` counts.
    pub fn counts(&self) -> Result<(u64, u64)> {
        let txn = self.db.begin_read().map_err(db_err)?;
        let d = txn.open_table(DOCUMENTS).map_err(db_err)?.len().map_err(db_err)?;
        Ok((d, self.meta("chunk_count")?))
    }

    /// Which of `paths` are indexed documents (one read transaction for all).
    pub fn contains_documents(&self, paths: &[String]) -> Result<Vec<bool>> {
        let txn = self.db.begin_read().map_err(db_err)?;
        let t = txn.open_table(DOCUMENTS).map_err(db_err)?;
        paths.iter().map(|p| Ok(t.get(p.as_str()).map_err(db_err)?.is_some())).collect()
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

    /// Chunk ids that have a stored vector → their embedding-text hash (hex).
    pub fn vector_keys(&self) -> Result<HashMap<u64, String>> {
        let txn = self.db.begin_read().map_err(db_err)?;
        let t = txn.open_table(VECTORS).map_err(db_err)?;
        let mut out = HashMap::with_capacity(usize::try_from(t.len().map_err(db_err)?).unwrap_or(0));
        for row in t.iter().map_err(db_err)? {
            let (k, v) = row.map_err(db_err)?;
            out.insert(k.value(), hash_hex(v.value()));
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
                t.insert(*id, hash_bytes(hash)?.as_slice()).map_err(db_err)?;
            }
        }
        txn.commit().map_err(db_err)
    }

    /// Starts a batch (one write transaction).
    pub fn batch(&self) -> Result<Batch> {
        let txn = self.db.begin_write().map_err(db_err)?;
        Ok(Batch { txn, touched: Vec::new(), chunk_delta: 0 })
    }
}

/// A write batch: documents replaced or deleted, committed atomically with a new generation.
pub struct Batch {
    txn: redb::WriteTransaction,
    touched: Vec<String>,
    /// Chunks added minus chunks removed (applied to `chunk_count` at commit).
    chunk_delta: i64,
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
        self.txn.open_table(DOCUMENTS).map_err(db_err)?.retain(|_, _| false).map_err(db_err)?;
        self.txn.open_table(MANIFEST).map_err(db_err)?.retain(|_, _| false).map_err(db_err)?;
        self.txn.open_table(META).map_err(db_err)?.insert("chunk_count", 0).map_err(db_err)?;
        self.chunk_delta = 0;
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

    /// Deletes a document; returns its removed chunk ids.
    pub fn delete_document(&mut self, path: &str) -> Result<Vec<u64>> {
        let old: Option<DocumentRecord> = {
            let mut t = self.txn.open_table(DOCUMENTS).map_err(db_err)?;
            let removed = t.remove(path).map_err(db_err)?;
            removed.map(|v| DocumentRecord::decode(v.value())).transpose()?
        };
        let ids = old.map(|d| d.chunk_ids).unwrap_or_default();
        self.chunk_delta -= ids.len() as i64;
        self.touched.push(path.to_owned());
        Ok(ids)
    }

    /// Replaces a document with a new revision (its chunks go to the lexical index); returns
    /// the chunk ids of the revision it replaced.
    pub fn put_document(&mut self, path: &str, record: &DocumentRecord) -> Result<Vec<u64>> {
        let removed = self.delete_document(path)?;
        self.txn
            .open_table(DOCUMENTS)
            .map_err(db_err)?
            .insert(path, record.encode()?.as_slice())
            .map_err(db_err)?;
        self.chunk_delta += record.chunk_ids.len() as i64;
        Ok(removed)
    }

    /// Rewrites a document's record only (same revision and chunks, new file metadata).
    pub fn touch_document(&mut self, path: &str, record: &DocumentRecord) -> Result<()> {
        let mut t = self.txn.open_table(DOCUMENTS).map_err(db_err)?;
        t.insert(path, record.encode()?.as_slice()).map_err(db_err)?;
        Ok(())
    }

    /// Commits with generation `generation`, recording the touched paths for repair; returns
    /// them (documents written, deleted or reset).
    pub fn commit(self, generation: u64) -> Result<Vec<String>> {
        {
            let mut meta = self.txn.open_table(META).map_err(db_err)?;
            meta.insert("generation", generation).map_err(db_err)?;
            if self.chunk_delta != 0 {
                let count = meta.get("chunk_count").map_err(db_err)?.map_or(0, |v| v.value());
                let count = count.saturating_add_signed(self.chunk_delta);
                meta.insert("chunk_count", count).map_err(db_err)?;
            }
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
