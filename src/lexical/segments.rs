//! Data read once per index segment and reused by every search: the generic [`SegmentCache`]
//! and the segments' path lists ([`PathCache`]) that scoped searches and the path column read.

use std::collections::{HashMap, HashSet};

use tantivy::TantivyError;

use super::errors::map_err;
use super::schema::F_PATH;
use crate::error::Result;

/// The `path` values of a segment, in term-ordinal order, with its ordinal column.
pub(super) struct SegmentPaths {
    pub(super) names: Vec<Box<str>>,
    pub(super) ords: tantivy::columnar::Column<u64>,
}

/// Per-segment data read once per segment and reused by every search (path lists, the
/// katakana words of `infix.rs`). Segments are immutable, so entries never go stale; entries
/// of segments no longer searched are dropped.
pub(super) struct SegmentCache<T> {
    segments: std::sync::Mutex<HashMap<tantivy::index::SegmentId, std::sync::Arc<T>>>,
}

impl<T> Default for SegmentCache<T> {
    fn default() -> Self {
        SegmentCache { segments: Default::default() }
    }
}

impl<T> SegmentCache<T> {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<tantivy::index::SegmentId, std::sync::Arc<T>>> {
        self.segments.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Drops entries of segments that `searcher` no longer has.
    pub(super) fn retain(&self, searcher: &tantivy::Searcher) {
        let live: HashSet<tantivy::index::SegmentId> =
            searcher.segment_readers().iter().map(|r| r.segment_id()).collect();
        self.lock().retain(|id, _| live.contains(id));
    }

    /// The entry of `reader`'s segment, made by `read` the first time (a `None` is not kept).
    pub(super) fn get_or_read(
        &self,
        reader: &tantivy::SegmentReader,
        read: impl FnOnce() -> Result<Option<T>>,
    ) -> Result<Option<std::sync::Arc<T>>> {
        let id = reader.segment_id();
        if let Some(p) = self.lock().get(&id) {
            return Ok(Some(p.clone()));
        }
        let Some(value) = read()? else { return Ok(None) };
        let value = std::sync::Arc::new(value);
        self.lock().insert(id, value.clone());
        Ok(Some(value))
    }
}

/// Per-segment path lists for scoped searches (looking ordinals up one by one decodes a
/// dictionary block each time; streaming the dictionary once is cheap).
pub(super) type PathCache = SegmentCache<SegmentPaths>;

impl PathCache {
    /// The paths of `reader`'s segment (`None` if it has no path column).
    pub(super) fn get(
        &self,
        reader: &tantivy::SegmentReader,
    ) -> Result<Option<std::sync::Arc<SegmentPaths>>> {
        self.get_or_read(reader, || {
            let err = |e: std::io::Error| map_err("Reading indexed paths", TantivyError::from(e));
            let Some(col) =
                reader.fast_fields().str(F_PATH).map_err(|e| map_err("Reading indexed paths", e))?
            else {
                return Ok(None);
            };
            let mut names = Vec::with_capacity(col.num_terms());
            let mut stream = col.dictionary().stream().map_err(err)?;
            while stream.advance() {
                names.push(String::from_utf8_lossy(stream.key()).into());
            }
            Ok(Some(SegmentPaths { names, ords: col.ords().clone() }))
        })
    }
}
