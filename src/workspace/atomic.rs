//! Atomic file replacement: a temp file in the target's folder, renamed over the target, removed
//! again when anything fails. Readers see the old file or the new one, never half of either.
//!
//! Two users: [`super::Workspace::write_atomic`] (user files: random temp names because several
//! writers may race, fsync of the file and its folder) and [`write_file_atomic`] /
//! [`replace_file_atomic`] for derived files under the index directory (one writer, the holder
//! of the index writer lock, so the temp name is fixed per target and a crash leaves at most one
//! stale temp file that the next write replaces; no fsync, as derived files can be rebuilt).
//!
//! A third, [`append_file_atomic`], adds text to the end of a configuration file the user named
//! (`init` appending a `catalog:` section): such a file may lie outside the root, so it is reached
//! by its absolute path, but it is the user's file, so it gets random temp names and fsync.
//!
//! It also holds the two primitives both writers of user files share: the no-overwrite rename
//! (`files.rs` publishes and moves assets with it, `write.rs` moves Markdown) and the removal of
//! folders a failed write created. They live here, below both, so neither imports the other.

use std::collections::hash_map::RandomState;
use std::fs;
use std::hash::BuildHasher;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, ErrorCode, Result};

/// Name prefix of the temp files writes create next to their target; listings skip such names.
pub const TEMP_PREFIX: &str = ".lvs-tmp-";

/// Replaces the derived file at `path` with `bytes` atomically. `what` names the file in
/// messages (e.g. `the index status file`).
pub fn write_file_atomic(path: &Path, bytes: &[u8], what: &str) -> Result<()> {
    replace_file_atomic(path, what, |temp| fs::write(temp, bytes).map_err(|e| Error::io(what, &e)))
}

/// Replaces the derived file at `path` atomically with what `fill` writes to the temp path it is
/// given (for writers that take a path, not bytes). The temp file is `.lvs-tmp-<file name>` in
/// the same folder; it is removed when `fill` or the rename fails.
pub fn replace_file_atomic(path: &Path, what: &str, fill: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let name = path.file_name().ok_or_else(|| Error::internal(format!("{what} has no file name.")))?;
    let mut temp_name = std::ffi::OsString::from(TEMP_PREFIX);
    temp_name.push(name);
    let temp = TempFile { path: path.with_file_name(temp_name), armed: true };
    match fs::remove_file(&temp.path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io(what, &e)),
    }
    fill(&temp.path)?;
    rename_over(&temp.path, path).map_err(|e| Error::io(what, &e))?;
    temp.disarm();
    Ok(())
}

/// Renames `from` over `to`, replacing it. On Windows a replace fails while any other handle of
/// `to` is open without delete sharing, and where the rename has no POSIX semantics (FAT32,
/// exFAT, Wine, older Windows) while any handle is open at all: our own reader of that moment
/// (the indexer reading the Markdown file, a search reloading `meta.json`), an antivirus scan or
/// the search indexer. Those hold files for milliseconds, so the rename is retried for up to
/// [`RENAME_RETRY_MS`] in total before the error is passed on (issue #47: under Wine, one patch
/// in a few dozen failed with "Access to 'kyoto.md' was denied"). Elsewhere it is `fs::rename`.
pub fn rename_over(from: &Path, to: &Path) -> std::io::Result<()> {
    #[cfg(windows)]
    {
        let mut waits = RENAME_RETRY_MS.iter();
        loop {
            match fs::rename(from, to) {
                // ERROR_ACCESS_DENIED, ERROR_SHARING_VIOLATION, ERROR_LOCK_VIOLATION
                Err(e) if matches!(e.raw_os_error(), Some(5 | 32 | 33)) => match waits.next() {
                    Some(&ms) => std::thread::sleep(std::time::Duration::from_millis(ms)),
                    None => return Err(e),
                },
                done => return done,
            }
        }
    }
    #[cfg(not(windows))]
    fs::rename(from, to)
}

/// The waits between the attempts of [`rename_over`] on Windows (about 0.8 s in all).
pub const RENAME_RETRY_MS: [u64; 8] = [2, 5, 10, 20, 50, 100, 200, 400];

/// Appends `text` to the file at `path` atomically: the current bytes and then `text` are
/// written to a temp file in the same folder (with the file's permissions), fsynced and renamed
/// over the file, so a crash or a full disk leaves the old file whole. `what` names the file in
/// messages (e.g. `` `lvsm.yaml` ``).
///
/// - A missing file is created, but never over a file that appeared meanwhile.
/// - A link is followed: its target gets the new bytes, the link stays a link.
/// - A file that changed between the read and the rename is left as it is (`CONFLICT`).
pub fn append_file_atomic(path: &Path, text: &[u8], what: &str) -> Result<()> {
    append_between(path, text, what, |_| {})
}

/// [`append_file_atomic`], running `between` (with the target's path) after the temp file is
/// written and before it is published: the tests change the target there.
pub(super) fn append_between(
    path: &Path,
    text: &[u8],
    what: &str,
    between: impl FnOnce(&Path),
) -> Result<()> {
    use std::io::Write;
    let io = |e: &std::io::Error| Error::io(what, e);
    let target = match fs::canonicalize(path) {
        Ok(target) => target,
        // Missing (or a dangling link, which the no-replace rename below then refuses).
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => path.to_path_buf(),
        Err(e) => return Err(io(&e)),
    };
    let before = match fs::read(&target) {
        Ok(bytes) => Some(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io(&e)),
    };
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let (temp, mut file) = TempFile::create(&dir).map_err(|e| io(&e))?;
    let mut written =
        file.write_all(before.as_deref().unwrap_or_default()).and_then(|()| file.write_all(text));
    if written.is_ok() && before.is_some() {
        written = fs::metadata(&target).and_then(|m| file.set_permissions(m.permissions()));
    }
    let written = written.and_then(|()| file.sync_all());
    drop(file);
    written.map_err(|e| io(&e))?;
    between(&target);
    match before {
        None => rename_no_replace(&temp.path, &target).map_err(|e| io(&e))?,
        Some(before) => {
            // Another writer's change would be lost by the rename: keep theirs instead.
            if fs::read(&target).map_err(|e| io(&e))? != before {
                return Err(Error::new(
                    ErrorCode::Conflict,
                    format!(
                        "{what} changed while it was being written, so it was left as it is; run the command again."
                    ),
                ));
            }
            rename_over(&temp.path, &target).map_err(|e| io(&e))?;
        }
    }
    temp.disarm();
    sync_dir(&dir);
    Ok(())
}

/// How old a temp file of unknown origin must be before a sweep removes it (a name without a
/// process id, or a platform where liveness cannot be checked).
const ORPHAN_AGE: std::time::Duration = std::time::Duration::from_secs(600);

/// Whether the temp file `name` (with `modified` time) was left by a write that can no longer
/// finish: its process (named in the file name) is gone. Without a usable process id it must
/// be older than [`ORPHAN_AGE`]. Files of this process are never orphans (its writes clean up
/// after themselves).
pub(super) fn temp_file_is_orphan(name: &str, modified: std::time::SystemTime) -> bool {
    let pid = name
        .strip_prefix(TEMP_PREFIX)
        .and_then(|rest| rest.split_once('-'))
        .and_then(|(pid, _)| u32::from_str_radix(pid, 16).ok());
    match pid.map(|pid| (pid, process_alive(pid))) {
        Some((pid, _)) if pid == std::process::id() => false,
        Some((_, Some(alive))) => !alive,
        _ => modified.elapsed().is_ok_and(|age| age >= ORPHAN_AGE),
    }
}

/// Whether process `pid` exists (`None`: cannot tell on this platform).
fn process_alive(pid: u32) -> Option<bool> {
    #[cfg(target_os = "linux")]
    {
        Some(Path::new("/proc").join(pid.to_string()).exists())
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        None
    }
}

/// Flushes a directory entry change to disk (best effort; not available on every platform).
pub(super) fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

/// A temp file that is deleted on drop unless [`TempFile::disarm`] is called.
pub(super) struct TempFile {
    pub(super) path: PathBuf,
    armed: bool,
}

impl TempFile {
    /// Creates `<dir>/.lvs-tmp-<32 hex>` with create-new semantics, returning it open.
    pub(super) fn create(dir: &Path) -> std::io::Result<(TempFile, fs::File)> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let mut last_err = None;
        for _ in 0..16 {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            let seed = (n, nanos, std::process::id());
            // Each `RandomState` is freshly keyed, so the two halves differ.
            let hi = RandomState::new().hash_one(seed);
            let lo = RandomState::new().hash_one(seed);
            // The creating process's id comes first, so a sweep can tell a live write from one
            // whose process died (`temp_file_is_orphan`).
            let path = dir.join(format!("{TEMP_PREFIX}{:x}-{hi:016x}{lo:016x}", std::process::id()));
            match fs::OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(file) => return Ok((TempFile { path, armed: true }, file)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last_err = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last_err.unwrap_or_else(|| std::io::Error::other("no free temp file name")))
    }

    /// Keeps the file (it has been renamed into place).
    pub(super) fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if self.armed {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// Removes the directories in `created` (newest first; only empty ones go) and passes `err` on.
pub(super) fn cleanup(created: &[PathBuf], err: Error) -> Error {
    for dir in created.iter().rev() {
        let _ = fs::remove_dir(dir);
    }
    err
}

/// Renames `from` to `to` unless `to` exists (`AlreadyExists` then).
pub(super) fn rename_no_replace(from: &Path, to: &Path) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{CWD, RenameFlags, renameat_with};
        match renameat_with(CWD, from, CWD, to, RenameFlags::NOREPLACE) {
            Ok(()) => return Ok(()),
            // Not supported by this file system: fall back to link + unlink.
            Err(e) if e == rustix::io::Errno::INVAL || e == rustix::io::Errno::NOSYS => {}
            Err(e) => return Err(std::io::Error::from(e)),
        }
    }
    fs::hard_link(from, to)?;
    if let Err(e) = fs::remove_file(from) {
        // Undo the link so that the outcome is "nothing happened".
        let _ = fs::remove_file(to);
        return Err(e);
    }
    Ok(())
}
