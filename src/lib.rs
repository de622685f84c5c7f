//! local-vector-search-mcp: a project's Markdown, searchable (Japanese-aware) and safely editable.
//!
//! Modules in reading order, foundations first (see `docs/architecture.md`):
//! `error`, `text`, `workspace`, `markdown` (L0); `chunk`, `table`, `config` (L1);
//! `lexical` (L2); and the layers above as they land.

#[cfg(feature = "wip-config")]
pub mod config;
pub mod chunk;
pub mod error;
#[cfg(feature = "wip-lexical")]
pub mod lexical;
pub mod markdown;
pub mod table;
pub mod text;
#[cfg(feature = "wip-workspace")]
pub mod workspace;

pub use error::{Error, ErrorCode, Result};
