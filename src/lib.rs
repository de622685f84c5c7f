//! local-vector-search-mcp: a project's Markdown, searchable (Japanese-aware) and safely editable.
//!
//! Modules in reading order, foundations first (see `docs/architecture.md`):
//! `error`, `text`, `wire`, `workspace`, `markdown` (L0); `chunk`, `edit`, `table`, `config` (L1);
//! `store`, `lexical`, `vectors` (L2); `indexer` (L3); `engine` (L4); `mcp`, `cli` (L6).

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
pub mod vectors;
pub mod wire;
pub mod workspace;

pub use error::{Error, ErrorCode, Result};

/// Test data shared by the unit tests of several modules.
#[cfg(test)]
pub(crate) mod testdata {
    /// A contract vector file from `../shared/spec/vectors/`, parsed.
    pub(crate) fn vectors(name: &str) -> serde_json::Value {
        let path = format!("{}/../shared/spec/vectors/{name}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        serde_json::from_str(&text).expect("vector file is JSON")
    }
}
