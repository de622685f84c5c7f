//! `kb_search` `filters`: front-matter conditions checked against the lexical index's
//! metadata terms, giving the set of files a search may return (applied while collecting, like
//! the path globs, on the lexical and the vector side alike).

use std::collections::HashSet;

use super::Engine;
use crate::error::Result;
use crate::lexical::{MetaCondition, MetaFilter, MetaOp};
use crate::wire::{FilterOp, SearchFilter};

/// The checked conditions of a request's `filters` (`None` when there are none).
pub(super) fn meta_filter(filters: Option<&[SearchFilter]>) -> Result<Option<MetaFilter>> {
    let Some(filters) = filters.filter(|f| !f.is_empty()) else { return Ok(None) };
    let conditions: Vec<MetaCondition> = filters
        .iter()
        .map(|f| MetaCondition {
            field: f.field.clone(),
            op: match f.op {
                FilterOp::Eq => MetaOp::Eq,
                FilterOp::Ne => MetaOp::Ne,
                FilterOp::In => MetaOp::In,
                FilterOp::Gt => MetaOp::Gt,
                FilterOp::Gte => MetaOp::Gte,
                FilterOp::Lt => MetaOp::Lt,
                FilterOp::Lte => MetaOp::Lte,
                FilterOp::Exists => MetaOp::Exists,
            },
            values: match f.op {
                FilterOp::In => {
                    f.values.clone().or_else(|| f.value.clone().map(|v| vec![v])).unwrap_or_default()
                }
                FilterOp::Exists => Vec::new(),
                _ => f.value.iter().cloned().chain(f.values.iter().flatten().cloned()).collect(),
            },
        })
        .collect();
    MetaFilter::new(&conditions, "filters").map(Some)
}

impl Engine {
    /// The files whose front matter meets `filter`, from the lexical index.
    pub(super) fn metadata_scope(&self, filter: Option<&MetaFilter>) -> Result<Option<HashSet<String>>> {
        match filter {
            Some(f) => self.with_reader(|index| index.paths_matching(f)).map(Some),
            None => Ok(None),
        }
    }
}
