//! Behaviour a user would notice: Japanese matching, identifiers, ranking, scope, snippets,
//! persistence. Real tantivy indexes (in RAM or in temporary folders), no mocks.

use super::analyzer::{Analyzer, Kind};
use super::*;
use crate::error::ErrorCode;

mod analysis;
mod front_matter;
mod huge;
mod identifiers;
mod japanese;
mod measurements;
mod ranking;
mod scope;
mod snippets;
mod views;
mod writing;

fn doc(chunk_id: u64, path: &str, heading_path: &str, text: &str) -> LexicalDoc {
    LexicalDoc {
        chunk_id,
        path: path.to_string(),
        heading_path: heading_path.to_string(),
        text: text.to_string(),
        anchor: format!("p{chunk_id}~a~b"),
        source_hash: format!("hash-of-{path}"),
        meta: Default::default(),
    }
}

/// An in-memory index holding `texts` as chunks 1, 2, … of `doc{N}.md`.
fn index_of(texts: &[&str]) -> LexicalIndex {
    let docs: Vec<LexicalDoc> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| doc(i as u64 + 1, &format!("doc{}.md", i + 1), "", t))
        .collect();
    index_with(&docs)
}

fn index_with(docs: &[LexicalDoc]) -> LexicalIndex {
    let index = LexicalIndex::create_in_ram().unwrap();
    let mut w = index.writer(WriterSize::Bulk(0)).unwrap();
    for d in docs {
        w.add(d).unwrap();
    }
    w.commit(1).unwrap();
    index
}

fn ids(index: &LexicalIndex, query: &str) -> Vec<u64> {
    index.search(query, 10, None).unwrap().into_iter().map(|h| h.chunk_id).collect()
}

fn sorted(mut ids: Vec<u64>) -> Vec<u64> {
    ids.sort_unstable();
    ids
}

fn snippet_of(index: &LexicalIndex, query: &str) -> String {
    index.search(query, 1, None).unwrap().into_iter().next().map(|h| h.snippet).unwrap_or_default()
}
