//! The semantic side: the embedding client, the usearch vector index and the vector manifest
//! (how vector candidates are floored and fused with the lexical ones is `search`'s).
//!
//! usearch and reqwest stay inside this module. The vector index is optional and derived: in
//! lexical mode (`embedding.provider: none`) no file is created or opened, and turning
//! embeddings on or off never touches the lexical index.
//!
//! Invariants:
//!
//! - Keys are chunk ids (the store's ids, never reused). A key the lexical index does not know
//!   is ignored by search, so a vector file one step behind is harmless.
//! - The vector manifest (model, dimensions, embedding-text version, heading context,
//!   query/document prefixes and input types) decides
//!   whether stored vectors can be reused; a change needs `force` and rebuilds only vectors.

mod embed;
mod index;

use std::collections::BTreeMap;

pub use embed::{Embedder, check_dimensions};
pub use index::{PRECISION, Precision, VectorIndex};

use crate::chunk::EMBEDDING_TEXT_VERSION;
use crate::config::EmbeddingConfig;

/// The vector index file inside the index directory.
pub const VECTOR_FILE: &str = "vectors.usearch";

/// What stored vectors were built with; any difference means they cannot be reused.
pub fn vector_manifest(config: &EmbeddingConfig, include_heading_context: bool) -> BTreeMap<String, String> {
    let mut m = BTreeMap::from([
        ("embedding_model".to_owned(), config.model.clone()),
        ("embedding_dimensions".to_owned(), config.effective_dimensions().to_string()),
        ("embedding_text_builder_version".to_owned(), EMBEDDING_TEXT_VERSION.to_owned()),
        ("chunking_include_heading_context".to_owned(), include_heading_context.to_string()),
        ("vector_metric".to_owned(), format!("cos-{}", PRECISION.name())),
    ]);
    // Empty when unset: a manifest written before these settings existed lacks the keys, and
    // `compatibility` reads a missing key as empty, so it stays compatible.
    let input_type = config.input_type.as_ref().map(|t| format!("query={} document={}", t.query, t.document));
    m.insert("embedding_query_prefix".to_owned(), config.query_prefix.clone());
    m.insert("embedding_document_prefix".to_owned(), config.document_prefix.clone());
    m.insert("embedding_input_type".to_owned(), input_type.unwrap_or_default());
    m
}

#[cfg(test)]
mod tests;
