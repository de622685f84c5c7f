//! `kb_search` `filters`: the request's front-matter conditions, checked. The index answers
//! them from its metadata terms ([`super::Sources::files_matching`]), giving the set of files a
//! search may return (applied while collecting, like the path globs, on the lexical and the
//! vector side alike).

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
