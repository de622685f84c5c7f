//! The workspace: the only door to user files under the knowledge-base root.
//!
//! Every path that comes from outside (a tool argument, a CLI argument, a stored index key)
//! becomes a [`RelPath`] here or is rejected here with `INVALID_PATH`; every read, listing and
//! write of project files goes through [`Workspace`].
//!
//! Invariants:
//!
//! - A [`RelPath`] is non-empty, relative, `/`-separated (`\` is normalised), and every component
//!   passes the portable-name rules of `docs/reference/original-server.md` §12: not blank, `.` or
//!   `..`; no trailing space or dot; no control character; none of `< > : " | ? *`; not a Windows
//!   device name (`CON`, `PRN`, `AUX`, `NUL`, `COM1`–`COM9`, `LPT1`–`LPT9`, on the part before the
//!   first dot, case-insensitively); not `.git` (case-insensitive). Rooted paths, drive letters and
//!   UNC forms are refused.
//! - Nothing is read or written in `.git` or in the internal index directory (default
//!   [`DEFAULT_INTERNAL_DIR`]): the guard refuses such components at any depth,
//!   case-insensitively, and listings skip them before descending.
//! - Before any read or write, resolution walks every existing component from the canonical root
//!   with `symlink_metadata` and refuses symbolic links, junctions and reparse points, dangling
//!   ones included. Listings skip links and never follow them. (The walk and the following open
//!   are two steps; a link swapped in between them is not detected.)
//! - Absolute paths never appear in error messages: messages quote the root-relative path, and
//!   rooted input is not echoed at all.
//! - Source bytes are kept exactly: [`SourceDocument::source_hash`] is SHA-256 over the file
//!   bytes including a UTF-8 BOM, and the text keeps CRLF, mixed line endings and trailing
//!   spaces.
//! - Writes are atomic: a temp file named [`TEMP_PREFIX`]`…` in the target's directory is
//!   written and fsynced, the current file's hash is re-checked under an in-process lock, and
//!   the temp file is renamed over the target. Readers see the old bytes or the new bytes.
//!
//! Error messages start with the contract's sentence (`docs/reference/original-server.md` §12, e.g.
//! `Path contains an invalid or unsafe component.`) and add one clause saying how to fix the input.
//!
//! Globs ([`GlobFilter`]) follow `Microsoft.Extensions.FileSystemGlobbing` as the contract uses
//! it (§3.4): case-insensitive, on root-relative `/` paths, `*` and `?` never cross a `/`, `**`
//! spans directories. So `*.md` matches only top-level files, `**/*.md` matches every depth (the
//! top level included) and `docs/**` matches everything below `docs`. This is what the contract
//! vectors imply: they write `**/*.png` and `**/*.md` for "anywhere". Patterns may use `\` as a
//! separator; a leading `./` is ignored and a trailing `/` means "everything below".
//!
//! Names are compared in one Unicode normal form (NFC): [`Workspace::rel_path`] answers with
//! the name as it is on disk when the caller typed another form of it (macOS writes NFD), and
//! globs match either form (`workspace/nfc.rs`).
//!
//! Configuration files may lie outside the root (`--config`, a standalone catalog configuration
//! above it): [`outside`] reads them by absolute path and [`append_file_atomic`] extends one;
//! neither is a door to user documents.
//!
//! Listings ([`Workspace::scan_markdown`], [`Workspace::list_files`]) are sorted
//! ordinal-ignore-case, then ordinal ([`compare_paths`]); they skip entries whose names the
//! guard would refuse (so every listed path can be addressed), names that are not UTF-8, and
//! in-flight temp files.

mod atomic;
mod files;
mod glob;
mod guard;
mod ignore_files;
mod listing;
mod lock;
mod nfc;
/// Configuration files outside the root (`workspace/outside.rs`): named, not guarded.
pub mod outside;
mod path;
mod read;
mod scan;
mod stamps;
mod write;

#[cfg(test)]
mod tests;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub use atomic::{
    RENAME_RETRY_MS, TEMP_PREFIX, append_file_atomic, rename_over, replace_file_atomic, write_file_atomic,
};
pub use files::Staged;
pub use glob::{DEFAULT_INCLUDE, GlobFilter};
pub use guard::GuardWalk;
pub use ignore_files::{IGNORE_FILE_NAMES, IgnoredBy, PathRules, SKIPPED_NAMED, Skipped};
pub use lock::LockFile;
pub use nfc::{form_sensitive, nfc};
pub use path::{PathContext, RelPath, compare_paths};
pub use read::{MAX_MARKDOWN_BYTES, SourceDocument};
pub use scan::{FileEntry, FileKind, ListedFile};
pub use stamps::Stamp as FileStamp;

use crate::error::{Error, ErrorCode, Result};
use path::{MSG_OUTSIDE, MSG_REPARSE};

/// The default name of the internal index directory under the project root.
pub const DEFAULT_INTERNAL_DIR: &str = ".local-vector-search-mcp";

/// A knowledge-base root and the guarded operations on the files below it.
///
/// Share one value (e.g. in an `Arc`) between all writers of a root: its write lock is what makes
/// the hash check and the rename of [`Workspace::write_atomic`] one step among them.
#[derive(Debug)]
pub struct Workspace {
    /// Canonical absolute root; never shown to users except through [`Workspace::root`].
    root: PathBuf,
    /// Name of the internal index directory, refused as a component at any depth.
    internal: String,
    /// Serialises the final hash check and rename of writes in this process.
    write_lock: Mutex<()>,
    /// The hash of each Markdown file last read, under the file's stamp.
    hashes: stamps::HashCache,
    /// Cached listings of the root (`workspace/listing.rs`).
    listings: listing::ListingCache,
    /// Whether the Markdown source set leaves out what ignore files name (`workspace/ignore_files.rs`).
    ignore_files: bool,
    /// What the last [`Workspace::scan_markdown`] left out for ignore files.
    skipped: Mutex<Option<Skipped>>,
}

/// The outcome of walking a path from the root.
struct Resolved {
    /// The absolute path (root joined with the components).
    abs: PathBuf,
    /// `symlink_metadata` of the target when it exists.
    meta: Option<fs::Metadata>,
}

impl Workspace {
    /// Opens the workspace at `root`, canonicalised once here.
    ///
    /// `internal_dir_name` is the name of the internal index directory (usually
    /// [`DEFAULT_INTERNAL_DIR`]); it must be a single portable component.
    pub fn new(root: PathBuf, internal_dir_name: &str) -> Result<Workspace> {
        if internal_dir_name.contains(['/', '\\']) || path::component_problem(internal_dir_name).is_some() {
            return Err(Error::invalid_argument(format!(
                "The internal index directory name '{}' is not a single portable file name; use e.g. '{DEFAULT_INTERNAL_DIR}'.",
                path::quoted(internal_dir_name)
            )));
        }
        let root = fs::canonicalize(&root).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Error::not_found(
                "The knowledge-base root does not exist; create it or point --root / knowledgeBase.root at an existing directory.",
            ),
            _ => Error::io("the knowledge-base root", &e),
        })?;
        if !root.is_dir() {
            return Err(Error::invalid_argument(
                "The knowledge-base root is not a directory; point --root / knowledgeBase.root at a directory.",
            ));
        }
        Ok(Workspace {
            root,
            internal: internal_dir_name.to_owned(),
            write_lock: Mutex::new(()),
            hashes: stamps::HashCache::default(),
            listings: listing::ListingCache::default(),
            ignore_files: true,
            skipped: Mutex::new(None),
        })
    }

    /// Whether the Markdown source set leaves out what ignore files name (`.gitignore`,
    /// `.ignore`, git's excludes; `workspace/ignore_files.rs`). On unless
    /// [`Workspace::with_ignore_files`] turned it off.
    pub fn respects_ignore_files(&self) -> bool {
        self.ignore_files
    }

    /// This workspace with ignore files respected or not (`knowledgeBase.respectIgnoreFiles`).
    #[must_use]
    pub fn with_ignore_files(mut self, on: bool) -> Workspace {
        self.ignore_files = on;
        self
    }

    /// What the last [`Workspace::scan_markdown`] left out for ignore files, if one ran in this
    /// process with them respected.
    pub fn last_skipped(&self) -> Option<Skipped> {
        self.skipped.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// The canonical absolute root (for status output; keep it out of error messages).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The name of the internal index directory this workspace refuses.
    pub fn internal_dir_name(&self) -> &str {
        &self.internal
    }

    /// The path guard: validates user input for `ctx` and refuses links on the way.
    ///
    /// Rejections are `INVALID_PATH` whose message starts with the contract's sentence:
    /// `A non-empty root-relative path is required.` (empty, rooted, drive letter, UNC),
    /// `Path contains an invalid or unsafe component.` (component rules, `.git`, the internal
    /// directory), `Markdown write operations require a .md path.` (Markdown contexts),
    /// `Image operations cannot access Git metadata.` / `… internal index files.` (image context),
    /// `Paths through symbolic links, junctions, or reparse points are not allowed.` (any existing
    /// component is a link, dangling or not). The target itself need not exist.
    pub fn rel_path(&self, input: &str, ctx: PathContext) -> Result<RelPath> {
        let path = path::parse(input, ctx, Some(&self.internal))?;
        let path = self.on_disk(path);
        self.resolve(&path)?;
        Ok(path)
    }

    /// [`Workspace::rel_path`] for the new name of a file (`kb_move`'s target): its folders are
    /// spelled as on disk, its file name as given, so a case-only rename (`kyoto.md` to
    /// `Kyoto.md`) keeps the new spelling where the file system would find the old file by it.
    pub fn rel_path_for_new_name(&self, input: &str, ctx: PathContext) -> Result<RelPath> {
        let given = path::parse(input, ctx, Some(&self.internal))?;
        let folders = self.on_disk(given.clone());
        let path = match (folders.as_str().rsplit_once('/'), given.as_str().rsplit_once('/')) {
            (Some((dir, _)), Some((_, name))) => RelPath::from_validated(format!("{dir}/{name}")),
            _ => given,
        };
        self.resolve(&path)?;
        Ok(path)
    }

    /// `path` spelled as the names on disk, where a name differs from the given one only in
    /// its Unicode normal form (NFC/NFD, `workspace/nfc.rs`) or, on Windows, only in letter case
    /// ([`case_on_disk`]); `path` itself otherwise.
    pub fn on_disk(&self, path: RelPath) -> RelPath {
        let path = nfc::on_disk(&self.root, &path).unwrap_or(path);
        if cfg!(windows) { case_on_disk(&self.root, &path).unwrap_or(path) } else { path }
    }

    /// Checks `path` against this workspace (internal directory, links, containment) and returns
    /// its absolute form with the target's metadata. Run before every read or write.
    fn resolve(&self, path: &RelPath) -> Result<Resolved> {
        // A `RelPath::new` value has not met this workspace's internal directory yet.
        if let Some(err) = path::reserved_component(path.as_str(), PathContext::Any, Some(&self.internal)) {
            return Err(err);
        }
        let mut abs = self.root.clone();
        abs.extend(path.components());
        if !abs.starts_with(&self.root) || abs == self.root {
            return Err(Error::invalid_path(format!(
                "{MSG_OUTSIDE} Give a path below the knowledge-base root."
            )));
        }
        let mut walked = self.root.clone();
        let mut shown = String::new();
        let count = path.components().count();
        for (i, component) in path.components().enumerate() {
            walked.push(component);
            if !shown.is_empty() {
                shown.push('/');
            }
            shown.push_str(component);
            match fs::symlink_metadata(&walked) {
                Ok(meta) if is_link(&meta) => {
                    return Err(Error::invalid_path(format!(
                        "{MSG_REPARSE} '{shown}' is a link; address the real file inside the knowledge-base root."
                    )));
                }
                Ok(meta) if i + 1 == count => {
                    return Ok(Resolved { abs, meta: Some(meta) });
                }
                // A file in the middle: the rest cannot exist.
                Ok(meta) if !meta.is_dir() => break,
                Ok(_) => {}
                Err(e) if is_missing(&e) => break,
                Err(e) => return Err(Error::io(&format!("'{shown}'"), &e)),
            }
        }
        Ok(Resolved { abs, meta: None })
    }
}

/// Whether `meta` (from `symlink_metadata`) is a symbolic link, junction or reparse point.
fn is_link(meta: &fs::Metadata) -> bool {
    #[cfg(windows)]
    {
        use std::os::windows::fs::MetadataExt;
        const FILE_ATTRIBUTE_REPARSE_POINT: u32 = 0x400;
        if meta.file_attributes() & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
            return true;
        }
    }
    meta.file_type().is_symlink()
}

/// Whether an I/O error means "nothing there" (missing, or a file where a directory should be).
fn is_missing(err: &std::io::Error) -> bool {
    matches!(err.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory)
}

/// The error for a directory at `path` where a file is needed.
fn is_a_directory(path: &RelPath) -> Error {
    Error::new(
        ErrorCode::UnsupportedFormat,
        format!("'{path}' is a directory, not a file; give the path of a file."),
    )
}

/// `path` with the letter case of the names on disk under `root` (canonical), for a
/// case-insensitive file system: NTFS opens `KYOTO.md` as `kyoto.md`, and an edit through
/// `KYOTO.md` indexed the file under a second key until the next scan dropped it (issue #47).
/// The longest existing part of the path is canonicalized (Windows answers with the names as
/// stored); the rest, not on disk yet, stays as given. `None` when nothing differs, when the
/// canonical form is not the path in other letter case (a link, a short name: the path guard
/// decides about those), or when nothing of it exists.
pub(crate) fn case_on_disk(root: &Path, path: &RelPath) -> Option<RelPath> {
    let parts: Vec<&str> = path.components().collect();
    for existing in (1..=parts.len()).rev() {
        let mut abs = root.to_path_buf();
        abs.extend(&parts[..existing]);
        let Ok(canonical) = fs::canonicalize(&abs) else { continue };
        let rel = canonical.strip_prefix(root).ok()?;
        let mut names: Vec<String> =
            rel.components().map(|c| c.as_os_str().to_str().map(str::to_owned)).collect::<Option<_>>()?;
        names.extend(parts[existing..].iter().map(|p| (*p).to_owned()));
        let spelled = names.join("/");
        let same_but_case =
            spelled != path.as_str() && spelled.to_lowercase() == path.as_str().to_lowercase();
        return same_but_case.then(|| RelPath::from_validated(spelled));
    }
    None
}
