//! The semantic side: the embedding client, the usearch vector index, the vector manifest and
//! Reciprocal Rank Fusion.
//!
//! usearch and reqwest stay inside this module. The vector index is optional and derived: in
//! lexical mode (`embedding.provider: none`) no file is created or opened, and turning
//! embeddings on or off never touches the lexical index.
//!
//! Invariants:
//!
//! - Keys are chunk ids (the store's ids, never reused). A key the lexical index does not know
//!   is ignored by search, so a vector file one step behind is harmless.
//! - The vector manifest (model, dimensions, embedding-text version, heading context) decides
//!   whether stored vectors can be reused; a change needs `force` and rebuilds only vectors.

mod embed;
mod index;

use std::collections::{BTreeMap, HashMap};

pub use embed::{Embedder, check_dimensions};
pub use index::{PRECISION, Precision, VectorIndex};

use crate::chunk::EMBEDDING_TEXT_VERSION;
use crate::config::EmbeddingConfig;

/// The vector index file inside the index directory.
pub const VECTOR_FILE: &str = "vectors.usearch";

/// What stored vectors were built with; any difference means they cannot be reused.
pub fn vector_manifest(config: &EmbeddingConfig, include_heading_context: bool) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("embedding_model".to_owned(), config.model.clone()),
        ("embedding_dimensions".to_owned(), config.effective_dimensions().to_string()),
        ("embedding_text_builder_version".to_owned(), EMBEDDING_TEXT_VERSION.to_owned()),
        ("chunking_include_heading_context".to_owned(), include_heading_context.to_string()),
        ("vector_metric".to_owned(), format!("cos-{}", PRECISION.name())),
    ])
}

/// Reciprocal Rank Fusion (`contract.md` §8.1): `score(id) = Σ 1/(k + rank)` over the ranked
/// lists (rank 1-based), sorted by score descending then id ascending, first `top_k`.
pub fn fuse(lists: &[&[u64]], k: usize, top_k: usize) -> Vec<(u64, f64)> {
    let mut scores: HashMap<u64, f64> = HashMap::new();
    for list in lists {
        for (rank, id) in list.iter().enumerate() {
            *scores.entry(*id).or_default() += 1.0 / (k as f64 + rank as f64 + 1.0);
        }
    }
    let mut fused: Vec<(u64, f64)> = scores.into_iter().collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    fused.truncate(top_k);
    fused
}

#[cfg(test)]
mod tests;
