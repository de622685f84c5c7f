//! Files outside the knowledge-base root that a project's configuration lives in: the server
//! configuration named by `--config`, and the standalone catalog configuration
//! (`mdmark.config.yaml`), looked for in the project root and its parents up to the repository's
//! top. They are not reached through a [`RelPath`](super::RelPath) because they need not lie below
//! the root; what they get instead is stated per function (a file found by searching upwards is
//! read only as a regular file, never through a link). Writing one is
//! [`append_file_atomic`](super::append_file_atomic).

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// `path` made absolute with links resolved, or `path` itself when that fails (e.g. it does not
/// exist yet).
pub fn canonical_or_given(path: &Path) -> PathBuf {
    fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Whether anything (a file, a folder, a link, even a dangling one) is at `path`.
pub fn exists(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok()
}

/// The bytes of the file at `path`, links followed; `None` when nothing is there.
pub fn read_if_exists(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The bytes of the regular file at `path`; `None` when nothing is there or it is not a regular
/// file (a folder, a link: links are not followed).
pub fn read_regular_file(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() => fs::read(path).map(Some),
        _ => Ok(None),
    }
}

/// `start` (canonicalised) and its parents, up to and including the first folder that holds a
/// `.git` entry (the repository's top), or up to the file system's root.
pub fn folders_up_to_repository(start: &Path) -> Vec<PathBuf> {
    let start = canonical_or_given(start);
    let mut out = Vec::new();
    let mut folder = Some(start.as_path());
    while let Some(f) = folder {
        out.push(f.to_path_buf());
        if exists(&f.join(".git")) {
            break;
        }
        folder = f.parent();
    }
    out
}
