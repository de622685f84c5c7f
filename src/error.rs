//! The error-code table and the crate-level error.
//!
//! Every failure that can reach a user carries an [`ErrorCode`] (the public table, also exported
//! as `schema/error-codes.json`) and one sentence that says what is wrong and how to fix it.
//! Modules build [`Error`] values with the constructors below; front-ends (CLI, MCP) decide how
//! to show them. Code that reacts to a failure branches on the code, the conflict reason or an
//! [`ErrorDetail`], never on the message text: messages are for people and may be reworded.

use std::fmt;
use std::sync::Arc;

/// The stable error codes of the MCP contract (`docs/reference/original-server.md` §7.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorCode {
    /// A malformed argument or pointer, or a pointer that names nothing.
    InvalidArgument,
    /// A path the workspace guard refuses.
    InvalidPath,
    /// The named file does not exist.
    NotFound,
    /// The target of a create or move exists already.
    AlreadyExists,
    /// The source changed since it was read (stale hash or anchor).
    Conflict,
    /// The operating system refused access.
    PermissionDenied,
    /// A file format the operation cannot handle.
    UnsupportedFormat,
    /// The search index is missing or being rebuilt.
    IndexNotReady,
    /// Part of a batch operation failed.
    PartialFailure,
    /// A bug or an unexpected I/O failure.
    InternalError,
}

impl ErrorCode {
    /// Every code, in table order.
    pub const ALL: [ErrorCode; 10] = [
        ErrorCode::InvalidArgument,
        ErrorCode::InvalidPath,
        ErrorCode::NotFound,
        ErrorCode::AlreadyExists,
        ErrorCode::Conflict,
        ErrorCode::PermissionDenied,
        ErrorCode::UnsupportedFormat,
        ErrorCode::IndexNotReady,
        ErrorCode::PartialFailure,
        ErrorCode::InternalError,
    ];

    /// The wire spelling, e.g. `INVALID_ARGUMENT`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidArgument => "INVALID_ARGUMENT",
            ErrorCode::InvalidPath => "INVALID_PATH",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::AlreadyExists => "ALREADY_EXISTS",
            ErrorCode::Conflict => "CONFLICT",
            ErrorCode::PermissionDenied => "PERMISSION_DENIED",
            ErrorCode::UnsupportedFormat => "UNSUPPORTED_FORMAT",
            ErrorCode::IndexNotReady => "INDEX_NOT_READY",
            ErrorCode::PartialFailure => "PARTIAL_FAILURE",
            ErrorCode::InternalError => "INTERNAL_ERROR",
        }
    }

    /// One line saying when the code is used.
    pub fn description(self) -> &'static str {
        match self {
            ErrorCode::InvalidArgument => {
                "An argument is malformed, out of range, or names an element that does not exist."
            }
            ErrorCode::InvalidPath => {
                "The path is absolute, leaves the project root, goes through a symlink, or names an internal or non-Markdown file."
            }
            ErrorCode::NotFound => "The named file does not exist.",
            ErrorCode::AlreadyExists => "The destination of a create or move exists already.",
            ErrorCode::Conflict => {
                "The source changed since it was read (stale sourceHash or anchor); read again and retry."
            }
            ErrorCode::PermissionDenied => "The operating system refused access to a file.",
            ErrorCode::UnsupportedFormat => "The file is not in a format this operation handles.",
            ErrorCode::IndexNotReady => {
                "The search index does not exist yet or is being rebuilt; reads keep working."
            }
            ErrorCode::PartialFailure => "Part of the operation failed; the message lists what.",
            ErrorCode::InternalError => "An unexpected failure; the message says what was being done.",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why an anchor could not be used (`docs/reference/original-server.md` §5.7). All map to
/// [`ErrorCode::Conflict`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConflictReason {
    /// The element at the pointer has a different self hash and nothing else matches.
    SelfHashMismatch,
    /// The element was found but its subtree changed.
    SubtreeHashMismatch,
    /// A subtree-scoped edit was given an anchor without a subtree hash.
    MissingSubtreeHash,
    /// Several current elements carry the anchor's self hash.
    AmbiguousSemanticPointer,
    /// Nothing with that kind and self hash exists any more.
    SemanticTargetNotFound,
}

impl ConflictReason {
    /// The contract's name of the reason.
    pub fn as_str(self) -> &'static str {
        match self {
            ConflictReason::SelfHashMismatch => "SelfHashMismatch",
            ConflictReason::SubtreeHashMismatch => "SubtreeHashMismatch",
            ConflictReason::MissingSubtreeHash => "MissingSubtreeHash",
            ConflictReason::AmbiguousSemanticPointer => "AmbiguousSemanticPointer",
            ConflictReason::SemanticTargetNotFound => "SemanticTargetNotFound",
        }
    }
}

/// What a caller may branch on, beyond the code. Control flow reads this, never the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorDetail {
    /// Another process (or another handle in this one) holds the index writer lock; waiting and
    /// retrying can succeed. Set by [`crate::workspace::LockFile::try_acquire`].
    WriterBusy,
    /// A derived index file is damaged or unreadable (truncated, garbage, written by another
    /// version); rebuilding it from what it is derived from repairs it.
    IndexDamaged,
    /// A file is larger than the limit the reader was given (`Workspace::read_bytes`); callers
    /// that know what the file is say so in their own words.
    TooLarge,
}

/// A failure with a code and a one-sentence, actionable message.
///
/// Anchor conflicts keep their precise reason in [`Error::conflict`]; anything else a caller
/// branches on is an [`ErrorDetail`] ([`Error::is`]). The underlying cause, when there is one
/// (e.g. the `std::io::Error` of [`Error::io`]), is kept for logs and exposed through
/// [`std::error::Error::source`]; it never changes the message users see.
///
/// Equality compares code, message, conflict reason and detail, not the source. `Debug` shows
/// the same fields and the source's `Display` text, so it prints nothing the message would not
/// (build errors from causes that carry no secrets: `std::io::Error` does not).
#[derive(Clone)]
pub struct Error {
    /// The public code.
    pub code: ErrorCode,
    /// What is wrong and how to fix it.
    pub message: String,
    /// For anchor conflicts, the precise reason.
    pub conflict: Option<ConflictReason>,
    /// What callers branch on, when the code alone does not say it.
    pub detail: Option<ErrorDetail>,
    /// The underlying cause, for logs and `source()` chains.
    source: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

impl Error {
    /// A new error with a code and message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Error { code, message: message.into(), conflict: None, detail: None, source: None }
    }
    /// `INVALID_ARGUMENT`.
    pub fn invalid_argument(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidArgument, message)
    }
    /// `INVALID_PATH`.
    pub fn invalid_path(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidPath, message)
    }
    /// `NOT_FOUND`.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, message)
    }
    /// `CONFLICT` with a reason.
    pub fn conflict(reason: ConflictReason, message: impl Into<String>) -> Self {
        Error { conflict: Some(reason), ..Self::new(ErrorCode::Conflict, message) }
    }
    /// `INTERNAL_ERROR`.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InternalError, message)
    }
    /// `INDEX_NOT_READY`.
    pub fn index_not_ready(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::IndexNotReady, message)
    }
    /// Maps an I/O error on `what` (a root-relative description, never an absolute path); the
    /// I/O error is kept as the source.
    pub fn io(what: &str, err: &std::io::Error) -> Self {
        let error = match err.kind() {
            std::io::ErrorKind::NotFound => Self::not_found(format!("{what} was not found.")),
            std::io::ErrorKind::PermissionDenied => Self::new(
                ErrorCode::PermissionDenied,
                format!("Access to {what} was denied by the operating system; check its permissions."),
            ),
            std::io::ErrorKind::InvalidFilename => Self::new(
                ErrorCode::InvalidPath,
                format!(
                    "The path of {what} is longer than the file system allows (255 bytes a name, 4096 a path); use a shorter one."
                ),
            ),
            std::io::ErrorKind::StorageFull
            | std::io::ErrorKind::QuotaExceeded
            | std::io::ErrorKind::FileTooLarge
            | std::io::ErrorKind::ReadOnlyFilesystem => Self::internal(format!(
                "Writing {what} failed because the disk refused it ({err}); free space, raise the limit or make it writable, then retry."
            )),
            _ => Self::internal(format!("I/O failed on {what}: {err}.")),
        };
        error.with_source(copy_io_error(err))
    }

    /// `PERMISSION_DENIED` "The temporary image could not be written." (the contract's sentence
    /// for a failed image write), with the reason and the fix added when the disk refused the
    /// write (full, over a quota or a size limit, read-only).
    pub fn temp_image(err: std::io::Error) -> Self {
        const BASE: &str = "The temporary image could not be written.";
        let message = match err.kind() {
            std::io::ErrorKind::StorageFull
            | std::io::ErrorKind::QuotaExceeded
            | std::io::ErrorKind::FileTooLarge
            | std::io::ErrorKind::ReadOnlyFilesystem => {
                format!(
                    "{BASE} The disk refused it ({err}); free space, raise the limit or make it writable, then retry."
                )
            }
            _ => BASE.to_owned(),
        };
        Self::new(ErrorCode::PermissionDenied, message).with_source(err)
    }

    /// The same error, marked with `detail` for callers that branch on it.
    #[must_use]
    pub fn with_detail(mut self, detail: ErrorDetail) -> Self {
        self.detail = Some(detail);
        self
    }

    /// The same error, with `source` as its underlying cause (replacing any earlier one).
    #[must_use]
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Arc::new(source));
        self
    }

    /// Whether the error carries `detail`.
    pub fn is(&self, detail: ErrorDetail) -> bool {
        self.detail == Some(detail)
    }
}

/// An owned copy of a borrowed I/O error: the same OS code when there is one, else the same
/// kind and text.
fn copy_io_error(err: &std::io::Error) -> std::io::Error {
    match err.raw_os_error() {
        Some(code) => std::io::Error::from_raw_os_error(code),
        None => std::io::Error::new(err.kind(), err.to_string()),
    }
}

impl PartialEq for Error {
    fn eq(&self, other: &Self) -> bool {
        self.code == other.code
            && self.message == other.message
            && self.conflict == other.conflict
            && self.detail == other.detail
    }
}

impl Eq for Error {}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("Error");
        s.field("code", &self.code).field("message", &self.message);
        if let Some(reason) = self.conflict {
            s.field("conflict", &reason);
        }
        if let Some(detail) = self.detail {
            s.field("detail", &detail);
        }
        if let Some(source) = &self.source {
            s.field("source", &format_args!("{source}"));
        }
        s.finish()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref().map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    #[test]
    fn io_errors_keep_their_cause_as_source() {
        let cause = std::io::Error::from_raw_os_error(13);
        let err = Error::io("the index lock file", &cause);
        assert_eq!(err.code, ErrorCode::PermissionDenied);
        let source = err.source().expect("an io error keeps its cause");
        let io = source.downcast_ref::<std::io::Error>().expect("the cause is the io::Error");
        assert_eq!(io.raw_os_error(), Some(13));

        let custom = std::io::Error::other("disk on fire");
        let err = Error::io("'a.md'", &custom);
        assert_eq!(err.message, "I/O failed on 'a.md': disk on fire.");
        assert_eq!(err.source().map(ToString::to_string).as_deref(), Some("disk on fire"));
    }

    #[test]
    fn details_are_what_callers_branch_on() {
        let busy = Error::index_not_ready("Someone else is writing.").with_detail(ErrorDetail::WriterBusy);
        assert!(busy.is(ErrorDetail::WriterBusy));
        assert!(!Error::index_not_ready("Someone else is writing.").is(ErrorDetail::WriterBusy));

        let conflict = Error::conflict(ConflictReason::SelfHashMismatch, "Read again.");
        assert_eq!(
            (conflict.code, conflict.conflict),
            (ErrorCode::Conflict, Some(ConflictReason::SelfHashMismatch))
        );
        assert_eq!(conflict.detail, None);
    }

    #[test]
    fn equality_ignores_the_source_and_debug_shows_its_text() {
        let plain = Error::internal("I/O failed on 'a.md': boom.");
        let sourced = plain.clone().with_source(std::io::Error::other("boom"));
        assert_eq!(plain, sourced);
        assert_ne!(plain, plain.clone().with_detail(ErrorDetail::WriterBusy));
        assert_eq!(
            format!("{sourced:?}"),
            r#"Error { code: InternalError, message: "I/O failed on 'a.md': boom.", source: boom }"#
        );
    }
}
