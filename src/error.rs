//! The error-code table and the crate-level error.
//!
//! Every failure that can reach a user carries an [`ErrorCode`] (the public table, also exported
//! as `schema/error-codes.json`) and one sentence that says what is wrong and how to fix it.
//! Modules build [`Error`] values with the constructors below; front-ends (CLI, MCP) decide how
//! to show them.

use std::fmt;

/// The stable error codes of the MCP contract (`contract.md` §7.1).
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

/// Why an anchor could not be used (`contract.md` §5.7). All map to [`ErrorCode::Conflict`].
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

/// A failure with a code and a one-sentence, actionable message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// The public code.
    pub code: ErrorCode,
    /// What is wrong and how to fix it.
    pub message: String,
    /// For anchor conflicts, the precise reason.
    pub conflict: Option<ConflictReason>,
}

impl Error {
    /// A new error with a code and message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Error { code, message: message.into(), conflict: None }
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
        Error { code: ErrorCode::Conflict, message: message.into(), conflict: Some(reason) }
    }
    /// `INTERNAL_ERROR`.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InternalError, message)
    }
    /// `INDEX_NOT_READY`.
    pub fn index_not_ready(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::IndexNotReady, message)
    }
    /// Maps an I/O error on `what` (a root-relative description, never an absolute path).
    pub fn io(what: &str, err: &std::io::Error) -> Self {
        match err.kind() {
            std::io::ErrorKind::NotFound => Self::not_found(format!("{what} was not found.")),
            std::io::ErrorKind::PermissionDenied => Self::new(
                ErrorCode::PermissionDenied,
                format!("Access to {what} was denied by the operating system; check its permissions."),
            ),
            _ => Self::internal(format!("I/O failed on {what}: {err}.")),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
