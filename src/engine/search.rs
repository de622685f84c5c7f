//! `kb_search`: the request checked ([`search::plan`]), the index waited for and opened by the
//! indexing service ([`crate::indexer::IndexService::searchable`]), and the search run in the
//! order [`search::run`] sets, its reads answered from one snapshot.

use super::Engine;
use crate::error::Result;
use crate::search;
use crate::wire::{SearchRequest, SearchResponse};

impl Engine {
    /// `kb_search`.
    pub fn search(&self, req: &SearchRequest) -> Result<SearchResponse> {
        let plan = search::plan(req, &self.config.search)?;
        let index = self.service.searchable()?;
        search::run(&plan, &mut index.sources(search::snippet_windows(&plan)))
    }
}
