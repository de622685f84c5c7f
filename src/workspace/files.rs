//! Binary files below the root (images, downloads): guarded opens, staged creates that never
//! overwrite, no-overwrite renames and plain deletes. The asset tools
//! (`docs/reference/original-server.md` §11) use these; Markdown keeps the hash-guarded writes of
//! `write.rs`.
//!
//! Publishing and moving rename without replacing: on Linux `renameat2(RENAME_NOREPLACE)`, one
//! atomic step; elsewhere (or on file systems without it) a hard link followed by removing the
//! old name, which never replaces a file either but leaves both names for a moment.

use std::fs;
use std::path::{Path, PathBuf};

use super::atomic::{TempFile, cleanup, rename_no_replace, sync_dir};
use super::path::RelPath;
use super::{Workspace, is_a_directory, is_missing};
use crate::error::{Error, ErrorCode, Result};

/// A temp file being filled in a destination folder (see [`Workspace::stage_file`]). Dropping it
/// removes the temp file and the folders created for it, when they are left empty.
pub struct Staged {
    temp: Option<TempFile>,
    file: Option<fs::File>,
    dir: Option<RelPath>,
    created: Vec<PathBuf>,
}

impl Staged {
    /// The open temp file, to write into.
    pub fn file(&mut self) -> &mut fs::File {
        self.file.as_mut().expect("the staged file is open until it is published")
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        self.file = None;
        self.temp = None; // removes the temp file unless published
        for dir in self.created.iter().rev() {
            let _ = fs::remove_dir(dir);
        }
    }
}

impl Workspace {
    /// The metadata of an existing file or directory at `path` (`None` when nothing is there),
    /// after the path guard walked it.
    pub fn file_metadata(&self, path: &RelPath) -> Result<Option<fs::Metadata>> {
        Ok(self.resolve(path)?.meta)
    }

    /// Opens the regular file at `path` for reading: missing is `NOT_FOUND`, a directory
    /// `UNSUPPORTED_FORMAT`, links anywhere on the path `INVALID_PATH`.
    pub fn open_file(&self, path: &RelPath) -> Result<(fs::File, fs::Metadata)> {
        let resolved = self.resolve(path)?;
        match &resolved.meta {
            None => return Err(Error::not_found(format!("'{path}' does not exist."))),
            Some(m) if m.is_dir() => return Err(is_a_directory(path)),
            Some(_) => {}
        }
        let file = fs::File::open(&resolved.abs).map_err(|e| open_error(path, &e))?;
        let meta = file.metadata().map_err(|e| Error::io(&format!("'{path}'"), &e))?;
        if !meta.is_file() {
            return Err(Error::new(ErrorCode::UnsupportedFormat, format!("'{path}' is not a regular file.")));
        }
        Ok((file, meta))
    }

    /// Creates a temp file (`.lvs-tmp-<32 hex>`, create-new) in `dir` (`None` = the root),
    /// creating missing folders one by one (each checked against links). Fill it through
    /// [`Staged::file`], then [`Workspace::publish_new`] it.
    pub fn stage_file(&self, dir: Option<&RelPath>) -> Result<Staged> {
        let created = match dir {
            Some(d) => {
                // `ensure_parent` creates the folders above a path: give it one inside `d`.
                let probe = d.join("probe")?;
                self.resolve(&probe)?;
                self.ensure_parent(&probe, true)?
            }
            None => Vec::new(),
        };
        let dir_abs = match dir {
            Some(d) => self.resolve(d)?.abs,
            None => self.root.clone(),
        };
        match TempFile::create(&dir_abs) {
            Ok((temp, file)) => Ok(Staged { temp: Some(temp), file: Some(file), dir: dir.cloned(), created }),
            Err(e) => Err(cleanup(&created, Error::temp_image(e))),
        }
    }

    /// Gives the staged file its final name `dest` (which must be in the staged folder) without
    /// replacing anything: an existing `dest` is `ALREADY_EXISTS` and the temp file stays staged
    /// for another name.
    pub fn publish_new(&self, staged: &mut Staged, dest: &RelPath) -> Result<()> {
        if dest.parent() != staged.dir {
            return Err(Error::internal("An image is published in the folder it was staged in."));
        }
        if let Some(file) = staged.file.take() {
            let synced = file.sync_all();
            drop(file);
            synced.map_err(Error::temp_image)?;
        }
        let temp_path =
            staged.temp.as_ref().map(|t| t.path.clone()).ok_or_else(|| Error::internal("nothing staged"))?;
        let _guard = self.write_lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let target = self.resolve(dest)?;
        if target.meta.is_some() {
            return Err(already_exists());
        }
        crate::failpoint("workspace.publish.before-rename");
        match rename_no_replace(&temp_path, &target.abs) {
            Ok(()) => {
                if let Some(temp) = staged.temp.take() {
                    temp.disarm();
                }
                staged.created.clear();
                if let Some(dir) = target.abs.parent() {
                    sync_dir(dir);
                }
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(already_exists()),
            Err(e) => Err(Error::io(&format!("'{dest}'"), &e)),
        }
    }

    /// Removes the regular file at `path` (never a directory).
    pub fn remove_file(&self, path: &RelPath) -> Result<()> {
        let _guard = self.write_lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let resolved = self.resolve(path)?;
        match &resolved.meta {
            None => return Err(Error::not_found(format!("'{path}' does not exist."))),
            Some(m) if m.is_dir() => return Err(is_a_directory(path)),
            Some(_) => {}
        }
        crate::failpoint("workspace.remove.before-remove");
        fs::remove_file(&resolved.abs).map_err(|e| Error::io(&format!("'{path}'"), &e))
    }

    /// Renames `from` to `to` without replacing anything, creating `to`'s folders (removed
    /// again on failure). Under the write lock and after re-walking both paths, `verify` sees the
    /// source file (e.g. to hash it again) and may refuse the move.
    ///
    /// Failures: `to` exists → `ALREADY_EXISTS`; `from` gone → `NOT_FOUND`; access denied →
    /// `PERMISSION_DENIED`; a failed rename after which both or neither name exists →
    /// `PARTIAL_FAILURE`; anything else `INTERNAL_ERROR`.
    pub fn rename_new(
        &self,
        from: &RelPath,
        to: &RelPath,
        verify: impl FnOnce(fs::File) -> Result<()>,
    ) -> Result<()> {
        let created = self.ensure_parent(to, true)?;
        let result = (|| {
            let _guard = self.write_lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let source = self.resolve(from)?;
            match &source.meta {
                None => return Err(Error::not_found(format!("'{from}' does not exist."))),
                Some(m) if m.is_dir() => return Err(is_a_directory(from)),
                Some(_) => {}
            }
            let target = self.resolve(to)?;
            if target.meta.is_some() {
                return Err(already_exists());
            }
            verify(fs::File::open(&source.abs).map_err(|e| open_error(from, &e))?)?;
            crate::failpoint("workspace.rename-new.before-rename");
            match rename_no_replace(&source.abs, &target.abs) {
                Ok(()) => {
                    if let Some(dir) = target.abs.parent() {
                        sync_dir(dir);
                    }
                    Ok(())
                }
                Err(e) => Err(rename_failure(&source.abs, &target.abs, from, &e)),
            }
        })();
        result.map_err(|err| cleanup(&created, err))
    }
}

/// `ALREADY_EXISTS` `Destination already exists.` (`docs/reference/original-server.md` §11.2,
/// §11.6).
fn already_exists() -> Error {
    Error::new(ErrorCode::AlreadyExists, "Destination already exists.")
}

fn open_error(path: &RelPath, err: &std::io::Error) -> Error {
    if is_missing(err) {
        Error::not_found(format!("'{path}' does not exist."))
    } else {
        Error::io(&format!("'{path}'"), err)
    }
}

/// Classifies a failed rename by looking at both names afterwards
/// (`docs/reference/original-server.md` §11.6).
fn rename_failure(from_abs: &Path, to_abs: &Path, from: &RelPath, err: &std::io::Error) -> Error {
    let source_there = fs::symlink_metadata(from_abs).is_ok();
    let target_there = fs::symlink_metadata(to_abs).is_ok();
    match (source_there, target_there) {
        (true, true) if err.kind() == std::io::ErrorKind::AlreadyExists => already_exists(),
        (true, false) if err.kind() == std::io::ErrorKind::PermissionDenied => {
            Error::new(ErrorCode::PermissionDenied, "Access was denied.")
        }
        (true, false) => Error::io(&format!("'{from}'"), err),
        (false, false) if is_missing(err) => Error::not_found(format!("'{from}' does not exist.")),
        _ => Error::new(
            ErrorCode::PartialFailure,
            "Move outcome is uncertain; inspect both paths before retrying.",
        ),
    }
}
