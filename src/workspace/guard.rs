//! The path guard for many paths in one call (issue #28): each folder on the way is checked
//! (`symlink_metadata`, refused when it is a link) once per [`GuardWalk`], not once per path.
//!
//! `kb_find_docs` checks every document the catalog index names on every call, so hand edits
//! are seen at once; with 5,000 documents in one folder that was four `lstat`s per document
//! (the folder and the file, once for `rel_path` and again for `stat`) and is now one per
//! document plus one per folder. A walk
//! lives for one call: a folder swapped for a link between two calls is refused by the next.

use std::collections::HashMap;
use std::fs;
use std::path::PathBuf;
use std::sync::Mutex;

use super::path::{self, MSG_REPARSE, PathContext, RelPath};
use super::{Workspace, is_link, is_missing};
use crate::error::{Error, Result};

/// What a folder on the way turned out to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Folder {
    /// A real directory: walk on.
    Dir,
    /// Missing, or a file: nothing below it exists.
    Absent,
    /// A link: every path through it is refused.
    Link,
}

/// One call's worth of path-guard checks, sharing the folder checks (see the module docs).
/// `Sync`: the threads of one call may share it.
pub struct GuardWalk<'a> {
    ws: &'a Workspace,
    folders: Mutex<HashMap<String, Folder>>,
}

impl std::fmt::Debug for GuardWalk<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GuardWalk").finish_non_exhaustive()
    }
}

impl Workspace {
    /// A [`GuardWalk`] for one call that checks many paths.
    pub fn guard_walk(&self) -> GuardWalk<'_> {
        GuardWalk { ws: self, folders: Mutex::new(HashMap::new()) }
    }
}

impl<'a> GuardWalk<'a> {
    /// The workspace this walk checks paths of.
    pub fn workspace(&self) -> &'a Workspace {
        self.ws
    }

    /// [`Workspace::rel_path`] and the target's `symlink_metadata` in one step: the same
    /// refusals (the same messages), and `None` for metadata when the target does not exist.
    pub fn check(&self, input: &str, ctx: PathContext) -> Result<(RelPath, Option<fs::Metadata>)> {
        let rel = path::parse(input, ctx, Some(&self.ws.internal))?;
        let rel = self.ws.on_disk(rel);
        let meta = self.restat(&rel)?;
        Ok((rel, meta))
    }

    /// The target's `symlink_metadata` for a path [`GuardWalk::check`] already accepted in this
    /// workspace (an earlier call): its folders are checked again (once per walk) and the target
    /// `lstat`ed, without parsing the name or looking up its Unicode form on disk again. `None`
    /// when it does not exist; the same refusal as `check` for a link on the way.
    pub fn restat(&self, rel: &RelPath) -> Result<Option<fs::Metadata>> {
        let mut shown = String::new();
        let components: Vec<&str> = rel.components().collect();
        for folder in &components[..components.len().saturating_sub(1)] {
            if !shown.is_empty() {
                shown.push('/');
            }
            shown.push_str(folder);
            match self.folder(&shown)? {
                Folder::Dir => {}
                Folder::Absent => return Ok(None),
                Folder::Link => return Err(link_error(&shown)),
            }
        }
        match fs::symlink_metadata(self.abs(rel)) {
            Ok(meta) if is_link(&meta) => Err(link_error(rel.as_str())),
            Ok(meta) => Ok(Some(meta)),
            Err(e) if is_missing(&e) => Ok(None),
            Err(e) => Err(Error::io(&format!("'{rel}'"), &e)),
        }
    }

    /// The state of the folder `shown` (root-relative), checked once per walk.
    fn folder(&self, shown: &str) -> Result<Folder> {
        let lock = || self.folders.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(state) = lock().get(shown) {
            return Ok(*state);
        }
        let mut abs = self.ws.root.clone();
        abs.extend(shown.split('/'));
        let state = match fs::symlink_metadata(&abs) {
            Ok(meta) if is_link(&meta) => Folder::Link,
            Ok(meta) if meta.is_dir() => Folder::Dir,
            Ok(_) => Folder::Absent,
            Err(e) if is_missing(&e) => Folder::Absent,
            // Not remembered: the next path asks again and reports it too.
            Err(e) => return Err(Error::io(&format!("'{shown}'"), &e)),
        };
        lock().insert(shown.to_owned(), state);
        Ok(state)
    }

    fn abs(&self, rel: &RelPath) -> PathBuf {
        let mut abs = self.ws.root.clone();
        abs.extend(rel.components());
        abs
    }
}

fn link_error(shown: &str) -> Error {
    Error::invalid_path(format!(
        "{MSG_REPARSE} '{shown}' is a link; address the real file inside the knowledge-base root."
    ))
}
