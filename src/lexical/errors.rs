//! How tantivy's errors reach the user: a damaged index or a busy writer is `INDEX_NOT_READY`
//! with the detail the indexer repairs or waits by; anything else is an I/O or internal error
//! naming what was being done.

use tantivy::TantivyError;
use tantivy::directory::error::{LockError, OpenReadError};

use crate::error::Error;

/// A writer is busy: another process or server holds the index.
const LOCKED: &str = "Another process is indexing this project; wait for it or stop it.";
/// The index files cannot be read as this version's index.
const DAMAGED: &str =
    "The lexical index is damaged or was written by another version; run `reindex` to rebuild it.";

/// Whether `err` says the index files are damaged (truncated, missing, garbage, another format)
/// rather than busy or unreachable.
fn is_damage(err: &TantivyError) -> bool {
    match err {
        TantivyError::DataCorruption(_)
        | TantivyError::IncompatibleIndex(_)
        | TantivyError::SchemaError(_) => true,
        TantivyError::OpenReadError(e) => match e {
            OpenReadError::FileDoesNotExist(_) | OpenReadError::IncompatibleIndex(_) => true,
            OpenReadError::IoError { io_error, .. } => {
                matches!(io_error.kind(), std::io::ErrorKind::InvalidData | std::io::ErrorKind::UnexpectedEof)
            }
        },
        _ => false,
    }
}

/// Whether `err` (from opening the index) says its files were written with another schema:
/// a version that indexes other fields. Unlike damage, that is expected after an upgrade (or a
/// downgrade); either way the lexical index alone is rebuilt from the Markdown.
pub fn is_other_schema(err: &Error) -> bool {
    std::error::Error::source(err)
        .and_then(|s| s.downcast_ref::<TantivyError>())
        .is_some_and(|e| matches!(e, TantivyError::SchemaError(_)))
}

/// Maps a tantivy error to the crate error; `doing` says what was being done.
pub(super) fn map_err(doing: &str, err: TantivyError) -> Error {
    if is_damage(&err) {
        return Error::index_not_ready(DAMAGED)
            .with_detail(crate::error::ErrorDetail::IndexDamaged)
            .with_source(err);
    }
    match err {
        TantivyError::LockFailure(LockError::LockBusy, _) => {
            Error::index_not_ready(LOCKED).with_detail(crate::error::ErrorDetail::WriterBusy)
        }
        TantivyError::IoError(e) => Error::io("the lexical index", &e),
        TantivyError::OpenDirectoryError(e) => Error::internal(format!("{doing} failed: {e}.")),
        other => Error::internal(format!("{doing} failed: {other}.")),
    }
}
