//! Atomic, hash-guarded writes (`docs/reference/original-server.md` §9.6).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::atomic::{TempFile, cleanup, rename_no_replace, rename_over, sync_dir};
use super::path::RelPath;
use super::read::io_error;
use super::{Workspace, is_a_directory, is_link, is_missing};
use crate::error::{Error, ErrorCode, Result};
use crate::text::sha256_hex;

/// The whole-file conflict message (`docs/reference/original-server.md` §7.2).
const MSG_CONFLICT: &str = "Source content changed; reread before retrying.";

impl Workspace {
    /// Replaces (or creates) the file at `path` with `bytes`, atomically, and returns the new
    /// `sourceHash` (SHA-256 of `bytes`).
    ///
    /// With `expected_source_hash`, the current file must exist and hash to it (compared
    /// case-insensitively) both before the temp file is written and again just before the
    /// rename; otherwise nothing changes and the result is `CONFLICT`
    /// (`Source content changed; reread before retrying.`). Without it the file is written
    /// whatever it holds. Missing parent directories are created only when `create_dirs` is set
    /// (and removed again if the write fails); otherwise they are `NOT_FOUND`. The existing
    /// file's permissions are carried over. Links anywhere on the path are `INVALID_PATH`.
    pub fn write_atomic(
        &self,
        path: &RelPath,
        bytes: &[u8],
        expected_source_hash: Option<&str>,
        create_dirs: bool,
    ) -> Result<String> {
        let resolved = self.resolve(path)?;
        if resolved.meta.as_ref().is_some_and(|m| m.is_dir()) {
            return Err(is_a_directory(path));
        }
        if let Some(expected) = expected_source_hash {
            check_hash(&resolved.abs, path, expected)?;
        }
        let parent_abs = resolved.abs.parent().map(Path::to_path_buf).unwrap_or_else(|| self.root.clone());
        let created = self.ensure_parent(path, create_dirs)?;
        let result = self.replace(path, &parent_abs, bytes, expected_source_hash, resolved.meta.as_ref());
        result.map_err(|err| cleanup(&created, err))
    }

    /// Makes sure every directory above `path` exists (creating them one by one when allowed)
    /// and none is a link; returns the directories created.
    pub(super) fn ensure_parent(&self, path: &RelPath, create_dirs: bool) -> Result<Vec<PathBuf>> {
        let Some(parent) = path.parent() else {
            return Ok(Vec::new());
        };
        let mut created = Vec::new();
        let mut abs = self.root.clone();
        let mut shown = String::new();
        for component in parent.components() {
            abs.push(component);
            if !shown.is_empty() {
                shown.push('/');
            }
            shown.push_str(component);
            let step = match fs::symlink_metadata(&abs) {
                Ok(meta) => check_dir(&meta, &shown),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && !create_dirs => {
                    Err(Error::not_found(format!(
                        "Directory '{parent}' does not exist; create it first or use an operation that creates folders."
                    )))
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => match fs::create_dir(&abs) {
                    Ok(()) => {
                        created.push(abs.clone());
                        Ok(())
                    }
                    // Someone else made it meanwhile: check what it is.
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => fs::symlink_metadata(&abs)
                        .map_err(|e| dir_io_error(&shown, &e))
                        .and_then(|meta| check_dir(&meta, &shown)),
                    Err(e) => Err(dir_io_error(&shown, &e)),
                },
                Err(e) => Err(dir_io_error(&shown, &e)),
            };
            if let Err(err) = step {
                return Err(cleanup(&created, err));
            }
        }
        Ok(created)
    }

    /// Writes the temp file, re-checks the hash under the write lock and renames.
    fn replace(
        &self,
        path: &RelPath,
        dir: &Path,
        bytes: &[u8],
        expected_source_hash: Option<&str>,
        old_meta: Option<&fs::Metadata>,
    ) -> Result<String> {
        let temp_error = |e: &std::io::Error| Error::io(&format!("a temp file next to '{path}'"), e);
        crate::failpoint("workspace.write.before-temp");
        let (temp, mut file) = TempFile::create(dir).map_err(|e| temp_error(&e))?;
        let written = file.write_all(bytes).and_then(|()| {
            if let Some(meta) = old_meta {
                // Best effort: keep the mode of the file being replaced.
                let _ = file.set_permissions(meta.permissions());
            }
            file.sync_all()
        });
        drop(file); // Closed before the rename (required on Windows).
        written.map_err(|e| temp_error(&e))?;
        crate::failpoint("workspace.write.temp-written");

        let _guard = self.write_lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        // The file system may have changed since the first walk: check links and the hash again.
        let resolved = self.resolve(path)?;
        if resolved.meta.as_ref().is_some_and(|m| m.is_dir()) {
            return Err(is_a_directory(path));
        }
        if let Some(expected) = expected_source_hash {
            check_hash(&resolved.abs, path, expected)?;
        }
        rename_over(&temp.path, &resolved.abs).map_err(|e| Error::io(&format!("'{path}'"), &e))?;
        temp.disarm();
        sync_dir(dir);
        crate::failpoint("workspace.write.renamed");
        Ok(sha256_hex(bytes))
    }
}

impl Workspace {
    /// Creates a new file with `bytes` (never overwrites; parent folders are created) and returns
    /// its `sourceHash`. An existing file is `INVALID_ARGUMENT`
    /// (`docs/reference/original-server.md` §7.11).
    pub fn create_new(&self, path: &RelPath, bytes: &[u8]) -> Result<String> {
        let resolved = self.resolve(path)?;
        if resolved.meta.is_some() {
            return Err(Error::invalid_argument(format!(
                "Markdown file '{path}' already exists; read it and use kb_patch, or choose another path."
            )));
        }
        let created = self.ensure_parent(path, true)?;
        let result = (|| {
            // Written to a temp file first and published without replacing: a crash leaves no
            // half-written document, only a temp file that the next start sweeps away.
            let dir = resolved.abs.parent().map(Path::to_path_buf).unwrap_or_else(|| self.root.clone());
            let temp_error = |e: &std::io::Error| Error::io(&format!("a temp file next to '{path}'"), e);
            let (temp, mut file) = TempFile::create(&dir).map_err(|e| temp_error(&e))?;
            let written = file.write_all(bytes).and_then(|()| file.sync_all());
            drop(file);
            written.map_err(|e| temp_error(&e))?;
            crate::failpoint("workspace.create.temp-written");
            let _guard = self.write_lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let target = self.resolve(path)?;
            match rename_no_replace(&temp.path, &target.abs) {
                Ok(()) => temp.disarm(),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    return Err(Error::invalid_argument(format!(
                        "Markdown file '{path}' already exists; choose another path."
                    )));
                }
                Err(e) => return Err(Error::io(&format!("'{path}'"), &e)),
            }
            sync_dir(&dir);
            Ok(sha256_hex(bytes))
        })();
        result.map_err(|err| cleanup(&created, err))
    }

    /// Renames `from` to `to` after checking `from` hashes to `expected` (before and again just
    /// before the rename); `to` must not exist. Returns the file's `sourceHash`.
    pub fn move_file(&self, from: &RelPath, to: &RelPath, expected: &str) -> Result<String> {
        let source = self.resolve(from)?;
        if source.meta.is_none() {
            return Err(Error::not_found(format!("Document '{from}' was not found.")));
        }
        check_expected(&source.abs, from, expected)?;
        let target = self.resolve(to)?;
        if target.meta.is_some() && !same_file_in_other_case(from, to, &source.abs, &target.abs) {
            return Err(Error::invalid_argument(format!(
                "Destination '{to}' already exists; choose another path."
            )));
        }
        let created = self.ensure_parent(to, true)?;
        let result = (|| {
            let _guard = self.write_lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let hash = check_expected(&self.resolve(from)?.abs, from, expected)?;
            let target = self.resolve(to)?;
            let case_only =
                target.meta.is_some() && same_file_in_other_case(from, to, &source.abs, &target.abs);
            if target.meta.is_some() && !case_only {
                return Err(Error::invalid_argument(format!(
                    "Destination '{to}' already exists; choose another path."
                )));
            }
            crate::failpoint("workspace.move.before-rename");
            // Never replaces a file that appeared at the target since the check above. A
            // case-only rename on a case-insensitive file system renames the file onto its own
            // name: there is no other file to replace, and the no-replace rename (a hard link
            // first, off Linux) would find the "target" taken.
            let renamed = if case_only {
                fs::rename(&source.abs, &target.abs)
            } else {
                rename_no_replace(&source.abs, &target.abs)
            };
            match renamed {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    return Err(Error::invalid_argument(format!(
                        "Destination '{to}' already exists; choose another path."
                    )));
                }
                Err(e) => return Err(Error::io(&format!("'{from}'"), &e)),
            }
            if let Some(dir) = target.abs.parent() {
                sync_dir(dir);
            }
            Ok(hash)
        })();
        result.map_err(|err| cleanup(&created, err))
    }

    /// Deletes `path` after checking it hashes to `expected` (before and again just before).
    pub fn delete_file(&self, path: &RelPath, expected: &str) -> Result<()> {
        let resolved = self.resolve(path)?;
        if resolved.meta.is_none() {
            return Err(Error::not_found(format!("Document '{path}' was not found.")));
        }
        check_expected(&resolved.abs, path, expected)?;
        let _guard = self.write_lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let resolved = self.resolve(path)?;
        check_expected(&resolved.abs, path, expected)?;
        crate::failpoint("workspace.delete.before-remove");
        fs::remove_file(&resolved.abs).map_err(|e| Error::io(&format!("'{path}'"), &e))
    }
}

/// Whether `to`, which exists, is `from` itself written in other letter case: a case-only
/// rename (`kyoto.md` to `Kyoto.md`) on a case-insensitive file system (Windows, macOS by
/// default), where the target resolves to the source. Both canonical paths name the file as it
/// is on disk, so they are equal only then (never on Linux, where the names differ).
pub(super) fn same_file_in_other_case(from: &RelPath, to: &RelPath, from_abs: &Path, to_abs: &Path) -> bool {
    from.as_str() != to.as_str()
        && from.as_str().to_lowercase() == to.as_str().to_lowercase()
        && matches!((fs::canonicalize(from_abs), fs::canonicalize(to_abs)), (Ok(a), Ok(b)) if a == b)
}

/// The `expectedSourceHash` check of `kb_move` / `kb_delete`; returns the current hash.
fn check_expected(abs: &Path, path: &RelPath, expected: &str) -> Result<String> {
    if expected.trim().is_empty() {
        return Err(Error::invalid_argument("expectedSourceHash is required."));
    }
    let current = match fs::read(abs) {
        Ok(bytes) => sha256_hex(&bytes),
        Err(e) if is_missing(&e) => {
            return Err(Error::not_found(format!("Document '{path}' was not found.")));
        }
        Err(e) => return Err(io_error(path, &e)),
    };
    if current.eq_ignore_ascii_case(expected.trim()) {
        Ok(current)
    } else {
        Err(Error::new(
            ErrorCode::Conflict,
            "Document has changed since it was read. Read the affected document again and retry the mutation.",
        ))
    }
}

/// `Ok(())` when `meta` is a real directory, else the error for `shown`.
fn check_dir(meta: &fs::Metadata, shown: &str) -> Result<()> {
    if is_link(meta) {
        Err(Error::invalid_path(format!(
            "{} '{shown}' is a link; address the real file inside the knowledge-base root.",
            super::path::MSG_REPARSE
        )))
    } else if !meta.is_dir() {
        Err(Error::new(
            ErrorCode::InvalidPath,
            format!("'{shown}' is a file, not a directory; choose another path."),
        ))
    } else {
        Ok(())
    }
}

fn dir_io_error(shown: &str, err: &std::io::Error) -> Error {
    Error::io(&format!("directory '{shown}'"), err)
}

/// `CONFLICT` unless the file at `abs` exists and hashes to `expected` (case-insensitive).
fn check_hash(abs: &Path, path: &RelPath, expected: &str) -> Result<()> {
    let current = match fs::read(abs) {
        Ok(bytes) => sha256_hex(&bytes),
        Err(e) if is_missing(&e) => return Err(Error::new(ErrorCode::Conflict, MSG_CONFLICT)),
        Err(e) => return Err(io_error(path, &e)),
    };
    if current.eq_ignore_ascii_case(expected.trim()) {
        Ok(())
    } else {
        Err(Error::new(ErrorCode::Conflict, MSG_CONFLICT))
    }
}
