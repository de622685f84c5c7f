//! The order of a search ([`run`]): the steps of [`super`] with the reads of a [`Sources`]
//! between them.

use super::{
    Candidates, LONG_SNIPPETS, LexicalStep, Plan, Sources, VectorStep, effective_mode, fusion, lexical_step,
    rank_weights, response, vector_answer, vector_step, vectors_cannot_change,
};
use crate::error::Result;
use crate::lexical::ScopeFilter;
use crate::wire::SearchResponse;

/// One search: the filter (scope globs and front matter), the vector side, the lexical side,
/// the ranking, the hits still to read, and the answer with `stale` from the files as they are.
/// In hybrid mode the lexical ranks come first, so that a query whose answer the vectors cannot
/// change is not embedded ([`vectors_cannot_change`]).
pub fn run(plan: &Plan, sources: &mut impl Sources) -> Result<SearchResponse> {
    let config = &plan.config;
    let mut warnings: Vec<String> = Vec::new();
    if let Some((indexed, total)) = sources.coverage() {
        warnings.push(partial_index_warning(indexed, total));
    }
    // The filter every candidate list is read through: the scope globs and the front-matter
    // filters (the set of files that pass them).
    let files = plan.filters.as_ref().map(|f| sources.files_matching(f)).transpose()?;
    let scope = plan.scope.as_ref();
    let filter = (scope.is_some() || files.is_some()).then_some(|p: &str| {
        scope.is_none_or(|g| g.matches(p)) && files.as_ref().is_none_or(|m| m.contains(p))
    });
    let filter = filter.as_ref().map(|f| f as &ScopeFilter<'_>);
    let query = plan.query.as_str();
    let weights = rank_weights(config);

    // Hybrid ranks the lexical side first: when the vectors cannot change its answer, the query
    // is not embedded (`vectors_cannot_change`).
    let mut lexical_first = None;
    let vector = match vector_step(plan, sources.vectors_enabled())? {
        VectorStep::Skip => None,
        VectorStep::Warn(w) => {
            warnings.push(w);
            None
        }
        VectorStep::Ask { pool } => {
            if let LexicalStep::Rank { pool } = lexical_step(plan.mode, plan) {
                lexical_first = Some(sources.lexical_ranks(query, pool, filter, &weights)?);
            }
            let skip =
                lexical_first.as_ref().is_some_and(|(ids, all)| vectors_cannot_change(plan, ids.len(), *all));
            // Nothing the vectors say can change the answer: only checked to be usable, not asked.
            let answer = if skip {
                sources.vectors_usable().map(|()| Vec::new())
            } else {
                sources.vector_candidates(query, pool, filter)
            };
            vector_answer(plan.mode, answer, config, &sources.pending_vectors(), &mut warnings)?
        }
    };
    let effective = effective_mode(plan.mode, vector.is_some());
    let mut candidates = Candidates::new(vector);
    match lexical_step(effective, plan) {
        LexicalStep::Skip => {}
        LexicalStep::Rank { pool } => {
            let (ids, all_terms) = match lexical_first {
                Some(ranked) => ranked,
                None => sources.lexical_ranks(query, pool, filter, &weights)?,
            };
            if plan.max_per_file.is_some() {
                candidates.set_paths(&ids, sources.paths_of(&ids)?);
            }
            candidates.set_lexical_ranks(ids, all_terms);
        }
        LexicalStep::Tiered { top_k } => {
            let (hits, all_terms) = sources.lexical_hits(query, top_k, filter, &weights)?;
            candidates.set_lexical_hits(hits, all_terms);
        }
    }
    let ranked = rank(plan, &mut candidates, effective, sources)?;
    let results = candidates
        .assemble(&ranked, effective, plan.explain, plan.detail, config.rrf_k, |p| sources.current_hash(p));
    Ok(response(results, &warnings, effective, plan.detail))
}

/// The ranked ids of the answer, with every hit they need read: the first `top_k`, or with a
/// per-file limit, candidates in rank order read in batches until the limit has picked `top_k`
/// (each round reads at least one new id, so it ends).
fn rank(
    plan: &Plan,
    candidates: &mut Candidates,
    effective: crate::config::SearchMode,
    sources: &mut impl Sources,
) -> Result<Vec<(u64, f64)>> {
    let fusion = fusion(&plan.config);
    let Some(max_per_file) = plan.max_per_file else {
        let ranked = candidates.rank(effective, fusion, plan.top_k);
        let missing = candidates.missing(&ranked);
        if !missing.is_empty() {
            let found = sources.fetch(&missing, &plan.query)?;
            candidates.add_hits(found.into_iter().flatten());
        }
        return Ok(ranked);
    };
    let all = candidates.rank(effective, fusion, usize::MAX);
    loop {
        match candidates.select(&all, max_per_file, plan.top_k) {
            Ok(ranked) => return Ok(ranked),
            Err(need) => {
                let found = sources.fetch(&need, &plan.query)?;
                candidates.add_fetched(&need, found);
            }
        }
    }
}

/// The `warning` of a search answered while a reindex is still adding files: how much of the
/// project the answer covers.
fn partial_index_warning(indexed: u64, total: u64) -> String {
    use crate::text::thousands;
    format!(
        "The index is still being built: this answer covers {} of {} files; search again when kb_status shows the reindex finished.",
        thousands(indexed),
        thousands(total)
    )
}

/// The snippet windows a search's lexical reads make: `search.snippetTokens` on the first
/// [`LONG_SNIPPETS`] hits, the short window on the rest.
pub fn snippet_windows(plan: &Plan) -> (usize, usize) {
    (plan.config.snippet_tokens, LONG_SNIPPETS)
}
