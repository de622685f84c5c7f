//! local-vector-search-mcp: a project's Markdown, searchable (Japanese-aware) and safely editable.
//!
//! Modules in reading order, foundations first (see `docs/architecture.md`):
//! `error`, `text`, `workspace`, `markdown` (L0); `chunk`, `table`, `config` (L1);
//! `store`, `lexical` (L2); `indexer` (L3); `engine` (L4); `wire` (L5); `mcp`, `cli` (L6).

pub mod chunk;
pub mod cli;
pub mod config;
pub mod edit;
pub mod engine;
pub mod error;
pub mod indexer;
pub mod lexical;
pub mod markdown;
pub mod mcp;
pub mod store;
pub mod table;
pub mod text;
pub mod wire;
pub mod workspace;

pub use error::{Error, ErrorCode, Result};
