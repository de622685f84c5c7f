//! What the workspace remembers of the Markdown it read: each file's SHA-256 under the file's
//! stamp, so "does this file still hold the indexed revision?" (`kb_search`'s `stale`) costs a
//! `stat` instead of a read and a hash (issue #18).
//!
//! A stamp is the file's size, modification time and, on Unix, its inode and status-change time
//! (`ctime`). No unprivileged process can set `ctime`: every write, `utimensat` and rename sets
//! it to now. So a change that keeps the size and restores the modification time still changes
//! the stamp on Unix. Windows has no `ctime` in std: there a change that keeps the size and
//! restores the modification time keeps the stamp, and the old hash stands until the file is
//! read in full again (`kb_read`, `kb_outline`, a mutation, the indexer), which records the true
//! hash (`docs/design/indexing-service.md`, "Staleness").
//!
//! Racy entries are not kept: a file changed less than [`RACY`] before it was read could be
//! changed again within the same timestamp tick (coarse file-system clocks; FAT counts in 2 s)
//! without a new stamp, so its hash is not remembered until it is older (git's "racily clean"
//! rule).

use std::collections::HashMap;
use std::fs;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// Entries kept at most; the map is emptied when it would grow past this (a 63k-file project
/// fits; each entry is about 150 bytes).
const MAX_ENTRIES: usize = 200_000;

/// How old a file's last change must be when it is read for its hash to be remembered.
pub(super) const RACY: Duration = Duration::from_secs(2);

/// Size, modification time, inode and status-change time (the last two 0 off Unix): what
/// callers compare to learn that a file changed since they read it (`FileStamp` outside).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
    inode: u64,
    changed_ns: i128,
}

impl Stamp {
    /// The stamp of a file's metadata (from `symlink_metadata`).
    pub fn of(meta: &fs::Metadata) -> Stamp {
        #[cfg(unix)]
        let (inode, changed_ns) = {
            use std::os::unix::fs::MetadataExt;
            (meta.ino(), i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()))
        };
        #[cfg(not(unix))]
        let (inode, changed_ns) = (0, 0);
        Stamp { len: meta.len(), modified: meta.modified().ok(), inode, changed_ns }
    }

    /// Whether the file changed less than [`RACY`] before `now` (or its clock is ahead).
    pub(super) fn is_racy(&self, now: SystemTime) -> bool {
        let recent = |t: SystemTime| now.duration_since(t).map_or(true, |age| age < RACY);
        let changed = u64::try_from(self.changed_ns)
            .ok()
            .filter(|&ns| ns > 0)
            .map(|ns| SystemTime::UNIX_EPOCH + Duration::from_nanos(ns));
        self.modified.is_none_or(recent) || changed.is_some_and(recent)
    }
}

/// Path → (stamp, SHA-256 hex) of the last full read.
#[derive(Default)]
pub(super) struct HashCache {
    map: Mutex<HashMap<String, (Stamp, Box<str>)>>,
}

impl std::fmt::Debug for HashCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HashCache").field("entries", &self.lock().len()).finish()
    }
}

impl HashCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Stamp, Box<str>)>> {
        self.map.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The remembered hash of `path` if its stamp is still `stamp`.
    pub(super) fn get(&self, path: &str, stamp: &Stamp) -> Option<String> {
        self.lock().get(path).filter(|(s, _)| s == stamp).map(|(_, h)| h.to_string())
    }

    /// Remembers `hash` for `path` read under `stamp` (taken before the bytes were read); racy
    /// stamps are forgotten instead.
    pub(super) fn record(&self, path: &str, stamp: Stamp, hash: &str) {
        let mut map = self.lock();
        if stamp.is_racy(SystemTime::now()) {
            map.remove(path);
            return;
        }
        if map.len() >= MAX_ENTRIES && !map.contains_key(path) {
            map.clear();
        }
        map.insert(path.to_owned(), (stamp, hash.into()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(len: u64, modified_secs_ago: u64, changed_secs_ago: u64) -> Stamp {
        let now = SystemTime::now();
        let ago = |s: u64| now - Duration::from_secs(s);
        let changed = ago(changed_secs_ago).duration_since(SystemTime::UNIX_EPOCH).unwrap().as_nanos();
        Stamp { len, modified: Some(ago(modified_secs_ago)), inode: 7, changed_ns: changed as i128 }
    }

    #[test]
    fn a_hash_is_returned_only_for_the_stamp_it_was_read_under() {
        let cache = HashCache::default();
        let old = stamp(10, 60, 60);
        cache.record("a.md", old, "h1");
        assert_eq!(cache.get("a.md", &old).as_deref(), Some("h1"));
        for other in [
            Stamp { len: 11, ..old },
            Stamp { inode: 8, ..old },
            Stamp { changed_ns: old.changed_ns + 1, ..old },
            Stamp { modified: None, ..old },
        ] {
            assert_eq!(cache.get("a.md", &other), None, "{other:?}");
        }
        assert_eq!(cache.get("b.md", &old), None);
    }

    #[test]
    fn racy_stamps_are_not_remembered() {
        let cache = HashCache::default();
        let old = stamp(10, 60, 60);
        // modified or status-changed just now: forgotten, not replaced
        for racy in [stamp(10, 0, 60), stamp(10, 60, 0)] {
            cache.record("a.md", old, "h1");
            cache.record("a.md", racy, "h2");
            assert_eq!(cache.get("a.md", &racy), None);
            assert_eq!(cache.get("a.md", &old), None, "the old entry was dropped too");
        }
    }
}
