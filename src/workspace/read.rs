//! Loading Markdown sources exactly as they are on disk (`docs/reference/original-server.md` §5.1).

use std::fs;
use std::io::Read;
use std::time::SystemTime;

use super::path::{MSG_MARKDOWN_ONLY, RelPath};
use super::stamps::Stamp;
use super::{GuardWalk, Workspace, is_a_directory, is_missing};
use crate::error::{Error, ErrorCode, ErrorDetail, Result};
use crate::text::sha256_hex;

/// The largest Markdown file read (32 MiB); larger files are `UNSUPPORTED_FORMAT`.
pub const MAX_MARKDOWN_BYTES: u64 = 32 * 1024 * 1024;

/// The UTF-8 byte order mark.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One Markdown file as read: exact text plus the facts edits and the index need.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceDocument {
    /// Where the file is.
    pub path: RelPath,
    /// The exact text without a leading BOM (line endings and whitespace untouched).
    pub text: String,
    /// Whether the file starts with a UTF-8 BOM (writes put it back).
    pub has_bom: bool,
    /// SHA-256 of the exact file bytes, BOM included, as 64 lowercase hex digits.
    pub source_hash: String,
    /// File size in bytes, BOM included.
    pub len: u64,
    /// Last modification time.
    pub modified: SystemTime,
}

impl Workspace {
    /// Reads the Markdown file at `path`.
    ///
    /// Errors: `INVALID_PATH` for a non-`.md` path or a link on the way; `NOT_FOUND`
    /// (`Document '<path>' was not found.`); `UNSUPPORTED_FORMAT` for a directory, a file over
    /// [`MAX_MARKDOWN_BYTES`], invalid UTF-8 or a NUL byte; `PERMISSION_DENIED` when the OS
    /// refuses.
    pub fn read_markdown(&self, path: &RelPath) -> Result<SourceDocument> {
        if !path.is_markdown() {
            return Err(Error::invalid_path(format!(
                "{MSG_MARKDOWN_ONLY} '{path}' is not a Markdown file; give a path ending in .md."
            )));
        }
        let resolved = self.resolve(path)?;
        match &resolved.meta {
            None => return Err(document_not_found(path)),
            Some(meta) if meta.is_dir() => return Err(is_a_directory(path)),
            Some(_) => {}
        }
        let file = fs::File::open(&resolved.abs).map_err(|e| io_error(path, &e))?;
        let meta = file.metadata().map_err(|e| io_error(path, &e))?;
        if meta.is_dir() {
            return Err(is_a_directory(path));
        }
        if meta.len() > MAX_MARKDOWN_BYTES {
            return Err(too_large(path, meta.len()));
        }
        let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
        // Read at most one byte past the limit so a file growing under us is still bounded.
        file.take(MAX_MARKDOWN_BYTES + 1).read_to_end(&mut bytes).map_err(|e| io_error(path, &e))?;
        let len = bytes.len() as u64;
        if len > MAX_MARKDOWN_BYTES {
            return Err(too_large(path, len));
        }
        let source_hash = sha256_hex(&bytes);
        let has_bom = bytes.starts_with(BOM);
        let body_start = if has_bom { BOM.len() } else { 0 };
        if let Some(offset) = bytes.iter().position(|&b| b == 0) {
            return Err(Error::new(
                ErrorCode::UnsupportedFormat,
                format!(
                    "'{path}' contains a NUL byte at offset {offset}, so it is binary, not Markdown text; save it as UTF-8 text or exclude it."
                ),
            ));
        }
        bytes.drain(..body_start);
        let text = String::from_utf8(bytes).map_err(|e| {
            let offset = body_start + e.utf8_error().valid_up_to();
            Error::new(
                ErrorCode::UnsupportedFormat,
                format!("'{path}' is not UTF-8 text (invalid byte at offset {offset}); save it as UTF-8 or exclude it."),
            )
        })?;
        // `meta` was taken when the file was opened, before its bytes were read.
        self.hashes.record(path.as_str(), Stamp::of(&meta), &source_hash);
        Ok(SourceDocument {
            path: path.clone(),
            text,
            has_bom,
            source_hash,
            len,
            modified: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
        })
    }

    /// Size and modification time of the file at `path`, without reading it (the fast path of
    /// change detection). Errors as [`Workspace::read_markdown`] for missing files, directories
    /// and links; any file type is accepted.
    pub fn stat(&self, path: &RelPath) -> Result<(u64, SystemTime)> {
        let resolved = self.resolve(path)?;
        match resolved.meta {
            None => Err(document_not_found(path)),
            Some(meta) if meta.is_dir() => Err(is_a_directory(path)),
            Some(meta) => Ok((meta.len(), meta.modified().unwrap_or(SystemTime::UNIX_EPOCH))),
        }
    }
}

impl GuardWalk<'_> {
    /// The SHA-256 the Markdown file at `path` has now (as [`SourceDocument::source_hash`]), or
    /// `None` when it cannot be read as Markdown. Remembered from the last full read while the
    /// file's stamp (size, modification time; on Unix also inode and `ctime`) is unchanged, so
    /// this usually costs the path guard's `stat`s only (`workspace/stamps.rs` says what a stamp
    /// can miss), and the folders of the paths one walk checks (a search's hits share folders)
    /// are checked once. `path` must be one the workspace accepted before (an indexed path), as
    /// for [`GuardWalk::restat`].
    pub fn current_hash(&self, path: &RelPath) -> Option<String> {
        if !path.is_markdown() {
            return None;
        }
        let meta = self.restat(path).ok()??;
        let ws = self.workspace();
        if let Some(hash) = ws.hashes.get(path.as_str(), &Stamp::of(&meta)) {
            return Some(hash);
        }
        ws.read_markdown(path).ok().map(|s| s.source_hash)
    }
}

impl Workspace {
    /// Reads any regular file at `path` (an image for the PDF export, say), at most `max` bytes.
    ///
    /// Errors: `NOT_FOUND` when it is missing, `UNSUPPORTED_FORMAT` for a directory or a file
    /// over `max` bytes, `INVALID_PATH` for a link on the way, `PERMISSION_DENIED` when the OS
    /// refuses.
    pub fn read_bytes(&self, path: &RelPath, max: u64) -> Result<Vec<u8>> {
        let resolved = self.resolve(path)?;
        match &resolved.meta {
            None => return Err(Error::not_found(format!("'{path}' was not found."))),
            Some(meta) if meta.is_dir() => return Err(is_a_directory(path)),
            Some(_) => {}
        }
        let file = fs::File::open(&resolved.abs).map_err(|e| io_error(path, &e))?;
        let mut bytes = Vec::new();
        file.take(max + 1).read_to_end(&mut bytes).map_err(|e| io_error(path, &e))?;
        if bytes.len() as u64 > max {
            return Err(Error::new(
                ErrorCode::UnsupportedFormat,
                format!("'{path}' is larger than {max} bytes."),
            )
            .with_detail(ErrorDetail::TooLarge));
        }
        Ok(bytes)
    }
}

/// `NOT_FOUND` with the contract's `DocumentNotFound` text (`docs/reference/original-server.md`
/// §5.1).
pub(super) fn document_not_found(path: &RelPath) -> Error {
    Error::not_found(format!("Document '{path}' was not found."))
}

/// Maps an I/O error on `path`; a file that vanished is `DocumentNotFound`.
pub(super) fn io_error(path: &RelPath, err: &std::io::Error) -> Error {
    if is_missing(err) { document_not_found(path) } else { Error::io(&format!("'{path}'"), err) }
}

fn too_large(path: &RelPath, len: u64) -> Error {
    Error::new(
        ErrorCode::UnsupportedFormat,
        format!(
            "'{path}' is {len} bytes, over the {MAX_MARKDOWN_BYTES}-byte (32 MiB) limit for Markdown files; split it or exclude it with an exclude glob such as '{path}'."
        ),
    )
}
