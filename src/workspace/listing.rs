//! Cached listings of the root (issue #28): `kb_list_images` pages through thousands of images,
//! and walking the whole root again for every page made each page cost a full walk (measured:
//! `docs/performance.md`, "Asset tools (issue #11)").
//!
//! A listing remembers the stamp ([`Stamp`]: size, modification time, inode, status-change
//! time) of every directory it read. Creating, deleting or renaming an entry changes its
//! directory's stamp, so while every directory keeps its stamp the set of names is the same and
//! the walk, the guard checks of the names and the sort are skipped. Each listed file is still
//! `lstat`ed on every call, so a file rewritten in place shows its new size and time, and one
//! swapped for a link (or removed) makes the listing be walked again. A directory changed less
//! than [`super::stamps::RACY`] before it was read could change again within the same clock
//! tick without a new stamp; a listing holding such a directory is used once and walked again
//! on the next call.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use super::path::compare_paths;
use super::scan::{FileKind, ListedFile, modified};
use super::stamps::Stamp;
use super::{Workspace, is_link};
use crate::error::Result;

/// Listings by the caller's key.
#[derive(Default)]
pub(super) struct ListingCache {
    map: Mutex<HashMap<&'static str, Arc<Listing>>>,
}

impl std::fmt::Debug for ListingCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ListingCache").finish_non_exhaustive()
    }
}

/// One walk's result.
struct Listing {
    /// Every directory read, with its stamp before it was read (`None`: it vanished).
    dirs: Vec<(PathBuf, Option<Stamp>)>,
    /// The files, sorted with [`compare_paths`], with their absolute paths.
    files: Vec<(PathBuf, ListedFile)>,
    /// No directory was racy when read: the listing may be reused.
    reusable: bool,
}

impl Workspace {
    /// Every regular file below the root whose file name `keep` accepts, sorted with
    /// [`compare_paths`]: [`Workspace::list_files`] without a prefix or glob, then filtered by
    /// name, but answered from a cached walk while no directory changed (see the module docs).
    /// `key` names the listing (one per `keep`).
    pub fn list_files_cached(&self, key: &'static str, keep: fn(&str) -> bool) -> Result<Vec<ListedFile>> {
        let cached = self.listings.map.lock().ok().and_then(|m| m.get(key).cloned());
        if let Some(listing) = cached
            && let Some(files) = listing.refresh()
        {
            return Ok(files);
        }
        let listing = Arc::new(self.walk_listing(keep)?);
        let files = listing.files.iter().map(|(_, f)| f.clone()).collect();
        if let Ok(mut map) = self.listings.map.lock() {
            map.insert(key, listing);
        }
        Ok(files)
    }

    fn walk_listing(&self, keep: fn(&str) -> bool) -> Result<Listing> {
        let mut dirs = Vec::new();
        let mut files = Vec::new();
        let mut on_dir = |dir: &Path| {
            let stamp = fs::symlink_metadata(dir).ok().map(|m| Stamp::of(&m));
            dirs.push((dir.to_path_buf(), stamp));
        };
        self.walk(&|_| true, false, Some(&mut on_dir), &mut |path, meta| {
            if keep(path.file_name()) {
                let abs = self.root.join(path.as_str());
                let kind = if path.is_markdown() { FileKind::Markdown } else { FileKind::Asset };
                files.push((
                    abs,
                    ListedFile { path, kind, size: meta.len(), last_write_time: modified(meta) },
                ));
            }
        })?;
        files.sort_by(|a, b| compare_paths(a.1.path.as_str(), b.1.path.as_str()));
        let now = SystemTime::now();
        let reusable = dirs.iter().all(|(_, s)| s.is_some_and(|s| !s.is_racy(now)));
        Ok(Listing { dirs, files, reusable })
    }
}

impl Listing {
    /// The files with their current sizes and times, or `None` when the listing must be walked
    /// again (a directory changed, a file is gone or is no longer a regular file).
    fn refresh(&self) -> Option<Vec<ListedFile>> {
        if !self.reusable {
            return None;
        }
        for (dir, stamp) in &self.dirs {
            let meta = fs::symlink_metadata(dir).ok()?;
            if is_link(&meta) || !meta.is_dir() || Some(Stamp::of(&meta)) != *stamp {
                return None;
            }
        }
        let mut out = Vec::with_capacity(self.files.len());
        for (abs, file) in &self.files {
            let meta = fs::symlink_metadata(abs).ok()?;
            if is_link(&meta) || !meta.is_file() {
                return None;
            }
            let mut file = file.clone();
            file.size = meta.len();
            file.last_write_time = modified(&meta);
            out.push(file);
        }
        Some(out)
    }
}
