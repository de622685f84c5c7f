//! The tantivy queries of a [`Plan`]: each clause's leaves over the text and the headings,
//! the proximity pairs, and the two tiers (every clause required; any clause).

use tantivy::Term;
use tantivy::query::{BooleanQuery, Occur, PhraseQuery, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption};

use super::query::{Clause, Plan, RankWeights};
use super::schema::Fields;

/// Most proximity pairs one query adds (a long question pairs its first clauses only).
const MAX_PROXIMITY_PAIRS: usize = 64;

/// The tantivy query of one clause over both fields.
pub(super) fn clause_query(f: &Fields, c: &Clause, w: &RankWeights) -> Box<dyn Query> {
    Box::new(BooleanQuery::new(clause_leaves(f, c, w, 1.0)))
}

/// The leaf queries (terms and phrases over the searched fields, the heading path's boosted by
/// [`RankWeights::heading`], the own heading's by [`RankWeights::own_heading`], a verb's or
/// adjective's by [`RankWeights::content_word`], all by `scale`) of one clause, all `Should`.
fn clause_leaves(f: &Fields, c: &Clause, w: &RankWeights, scale: f32) -> Vec<(Occur, Box<dyn Query>)> {
    let mut subs: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    let field_weights = [1.0, w.heading, w.own_heading];
    for (k, field) in f.searched().into_iter().enumerate() {
        if field == f.heading && w.own_heading <= 0.0 {
            // Every own-heading match is a heading-path match too: unweighted, it adds nothing.
            continue;
        }
        let start = subs.len();
        for phrase in &c.phrases {
            let terms: Vec<(usize, Term)> =
                phrase.iter().map(|(o, t)| (*o, Term::from_field_text(field, t))).collect();
            match terms.len() {
                0 => {}
                1 => subs.push((Occur::Should, term_query(field, &phrase[0].1))),
                _ => subs.push((Occur::Should, Box::new(PhraseQuery::new_with_offset(terms)))),
            }
        }
        if c.within.is_empty() {
            for t in &c.terms {
                subs.push((Occur::Should, term_query(field, t)));
            }
        } else {
            // A longer word counts as the word itself, scaled down, and only where it scores
            // more: a chunk with the word keeps its score, one with only a longer word still
            // matches the clause.
            let word = c.terms.iter().map(|t| (Occur::Should, term_query(field, t))).collect();
            let within = c
                .within
                .iter()
                .map(|(t, boost)| {
                    let q: Box<dyn Query> =
                        Box::new(tantivy::query::BoostQuery::new(term_query(field, t), boost[k]));
                    (Occur::Should, q)
                })
                .collect();
            let either: Vec<Box<dyn Query>> =
                vec![Box::new(BooleanQuery::new(word)), Box::new(BooleanQuery::new(within))];
            subs.push((Occur::Should, Box::new(tantivy::query::DisjunctionMaxQuery::new(either))));
        }
        let mut boost = field_weights[k] * scale;
        if c.content {
            boost *= w.content_word;
        }
        if boost != 1.0 {
            for sub in subs.iter_mut().skip(start) {
                let q = std::mem::replace(&mut sub.1, Box::new(tantivy::query::EmptyQuery));
                sub.1 = Box::new(tantivy::query::BoostQuery::new(q, boost));
            }
        }
    }
    subs
}

/// The proximity leaves: for each two strict clauses at most [`RankWeights::proximity_reach`]
/// apart in the query, the last token of the first and the first token of the second as a
/// sloppy phrase over the text (tantivy's slop is a distance, so either order counts), boosted
/// by [`RankWeights::proximity`] (none when it is 0). Rewards a section where the query's
/// words stand together over a sibling where they are scattered.
fn proximity_leaves(f: &Fields, plan: &Plan, w: &RankWeights) -> Vec<(Occur, Box<dyn Query>)> {
    if w.proximity <= 0.0 {
        return Vec::new();
    }
    let mut out: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    let reach = w.proximity_reach.max(1) as usize;
    let pairs = (0..plan.strict.len())
        .flat_map(|i| (i + 1..plan.strict.len().min(i + 1 + reach)).map(move |j| (i, j)))
        .take(MAX_PROXIMITY_PAIRS);
    for (i, j) in pairs {
        let (Some((_, a)), Some((b, _))) = (plan.strict[i].ends(), plan.strict[j].ends()) else { continue };
        if a == b {
            continue;
        }
        let terms = vec![(0, Term::from_field_text(f.text, a)), (1, Term::from_field_text(f.text, b))];
        let q = PhraseQuery::new_with_offset_and_slop(terms, w.proximity_slop);
        out.push((Occur::Should, Box::new(tantivy::query::BoostQuery::new(Box::new(q), w.proximity))));
    }
    out
}

fn term_query(field: Field, text: &str) -> Box<dyn Query> {
    Box::new(TermQuery::new(Term::from_field_text(field, text), IndexRecordOption::WithFreqs))
}

/// The first-tier query (all strict clauses required, loose terms scoring) and, when it can
/// match more, the second-tier query (any clause or loose term). The second tier is one flat
/// disjunction of leaves (the same score as nesting, a sum), which lets tantivy prune with
/// Block-WAND when the leaves are plain terms.
pub(super) fn tier_queries(
    f: &Fields,
    plan: &Plan,
    w: &RankWeights,
) -> (Box<dyn Query>, Option<Box<dyn Query>>) {
    let loose: Vec<Clause> = plan.loose.iter().map(|t| Clause::term(t.clone())).collect();
    let loose_leaves = |c: &Clause| clause_leaves(f, c, w, w.loose);
    let mut first: Vec<(Occur, Box<dyn Query>)> =
        plan.strict.iter().map(|c| (Occur::Must, clause_query(f, c, w))).collect();
    first.extend(loose.iter().flat_map(loose_leaves));
    first.extend(proximity_leaves(f, plan, w));
    let first: Box<dyn Query> = Box::new(BooleanQuery::new(first));
    if plan.strict.len() < 2 && loose.is_empty() {
        return (first, None);
    }
    let mut rest: Vec<(Occur, Box<dyn Query>)> =
        plan.strict.iter().flat_map(|c| clause_leaves(f, c, w, 1.0)).collect();
    rest.extend(loose.iter().flat_map(loose_leaves));
    rest.extend(proximity_leaves(f, plan, w));
    (first, Some(Box::new(BooleanQuery::new(rest))))
}
