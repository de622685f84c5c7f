//! Unknown katakana words found inside longer words.
//!
//! lindera keeps a run of katakana the dictionary does not know as one word: a text that
//! writes `コードスニペット` or `ソリューションエクスプローラー` unspaced has one token, so the
//! query `スニペット` or `エクスプローラー` (each also one unknown word) met nothing. IPADIC is
//! from 2007 and lacks most technical loanwords, so splitting such runs with it guesses wrong
//! (`docs/design/retrieval.md`, "Katakana compounds written apart").
//!
//! Instead, at query time, a query word the dictionary does not know, katakana and at least
//! [`MIN_INFIX_CHARS`] long, also matches the indexed katakana words that hold it
//! ([`grow_infixes`]). Known words do not grow: a known word inside a longer one is usually
//! another word (`ペット` in `スニペット`, `コード` in `エンコード`), as `京都` is in
//! `東京都庁`. The index is unchanged; each segment's katakana words are read from its term
//! dictionaries once, with an index from character pairs to the words that hold them, so the
//! lookup costs microseconds ([`KatakanaWords`]).

use std::collections::HashMap;

use tantivy::schema::Field;
use tantivy::{TantivyError, Term};

use super::errors::map_err;
use super::query::MIN_INFIX_CHARS;
use super::query::Plan;
use super::schema::SEARCHED;
use super::segments::SegmentCache;
use crate::error::Result;

/// Most indexed words one query word also finds (the most frequent first): `スニペット` finds
/// `コードスニペット`, `スニペットマネージャー`, ….
const MAX_WITHIN_WORDS: usize = 16;

/// Weight of an indexed word that holds a query word inside it, against the query word itself.
const WITHIN_WEIGHT: f32 = 0.5;

/// The term-dictionary range of words that start with katakana: U+30A0..=U+30FF is
/// `E3 82 A0` ..= `E3 83 BF` in UTF-8.
const KATAKANA_TERMS: (&[u8], &[u8]) = (&[0xE3, 0x82, 0xA0], &[0xE3, 0x84]);

/// The katakana words of one segment longer than [`MIN_INFIX_CHARS`] characters (a shorter one
/// cannot hold a query word and more), from the dictionaries of the searched fields.
#[derive(Default)]
pub(super) struct KatakanaWords {
    /// Each word with its document frequency in each searched field.
    words: Vec<(Box<str>, [u32; SEARCHED])>,
    /// For each pair of consecutive characters, the words that hold it (ascending indexes into
    /// `words`, each once).
    pairs: HashMap<(char, char), Vec<u32>>,
}

impl KatakanaWords {
    /// Reads the katakana words of `fields` in `reader`'s segment.
    fn read(reader: &tantivy::SegmentReader, fields: [Field; SEARCHED]) -> Result<KatakanaWords> {
        let failed = |e: TantivyError| map_err("Reading the index's katakana words", e);
        let mut dfs: HashMap<Box<str>, [u32; SEARCHED]> = HashMap::new();
        for (k, field) in fields.into_iter().enumerate() {
            let index = reader.inverted_index(field).map_err(failed)?;
            let mut stream = index
                .terms()
                .range()
                .ge(KATAKANA_TERMS.0)
                .lt(KATAKANA_TERMS.1)
                .into_stream()
                .map_err(|e| failed(e.into()))?;
            while stream.advance() {
                let Ok(word) = std::str::from_utf8(stream.key()) else { continue };
                if word.chars().nth(MIN_INFIX_CHARS).is_some() {
                    dfs.entry(word.into()).or_default()[k] += stream.value().doc_freq;
                }
            }
        }
        let mut out = KatakanaWords { words: dfs.into_iter().collect(), pairs: HashMap::new() };
        out.words.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        for (i, (word, _)) in out.words.iter().enumerate() {
            let chars: Vec<char> = word.chars().collect();
            for pair in chars.windows(2) {
                let list = out.pairs.entry((pair[0], pair[1])).or_default();
                if list.last() != Some(&(i as u32)) {
                    list.push(i as u32);
                }
            }
        }
        Ok(out)
    }

    /// The words longer than `word` that hold it, with their document frequencies.
    fn holding<'a>(&'a self, word: &'a str) -> impl Iterator<Item = &'a (Box<str>, [u32; SEARCHED])> + 'a {
        let chars: Vec<char> = word.chars().collect();
        // the rarest pair of the word narrows the candidates most
        let lists: Option<Vec<&Vec<u32>>> = chars.windows(2).map(|p| self.pairs.get(&(p[0], p[1]))).collect();
        let shortest = lists.and_then(|l| l.into_iter().min_by_key(|l| l.len())).map_or(&[][..], |l| &l[..]);
        shortest
            .iter()
            .filter_map(|&i| self.words.get(i as usize))
            .filter(move |(w, _)| w.len() > word.len() && w.contains(word))
    }
}

/// Fills [`super::query::Clause::within`] of the plan's infix clauses: the indexed katakana
/// words (of `fields`, the searched fields, in every segment of `searcher`) that hold
/// the clause's word inside them, at most [`MAX_WITHIN_WORDS`], the most frequent first. They
/// also become highlight terms.
///
/// Each is boosted by [`WITHIN_WEIGHT`] times the word's IDF over its own (per field), so it
/// scores like the word itself at a lower weight: a rare compound does not outrank the word it
/// holds for being rare.
pub(super) fn grow_infixes(
    searcher: &tantivy::Searcher,
    fields: [Field; SEARCHED],
    cache: &SegmentCache<KatakanaWords>,
    plan: &mut Plan,
) -> Result<()> {
    let words: Vec<(usize, String)> = plan
        .strict
        .iter()
        .enumerate()
        .filter(|(_, c)| c.infix)
        .filter_map(|(i, c)| Some((i, c.terms.first()?.clone())))
        .collect();
    if words.is_empty() {
        return Ok(());
    }
    cache.retain(searcher);
    let failed = |e: TantivyError| map_err("Searching the lexical index", e);
    // per query word: each longer word's document frequency per field, over all segments
    let mut found: Vec<HashMap<&str, [u64; SEARCHED]>> = vec![HashMap::new(); words.len()];
    let segments = searcher
        .segment_readers()
        .iter()
        .map(|r| cache.get_or_read(r, || KatakanaWords::read(r, fields).map(Some)))
        .collect::<Result<Vec<_>>>()?;
    for segment in segments.iter().flatten() {
        for ((_, word), found) in words.iter().zip(found.iter_mut()) {
            for (w, df) in segment.holding(word) {
                let sum = found.entry(w).or_default();
                for (s, d) in sum.iter_mut().zip(df) {
                    *s += u64::from(*d);
                }
            }
        }
    }
    let n = searcher.num_docs() as f32;
    let idf = |df: u64| (1.0 + (n - df as f32 + 0.5) / (df as f32 + 0.5)).ln().max(f32::MIN_POSITIVE);
    for ((i, word), found) in words.iter().zip(found) {
        let mut own = [0.0f32; SEARCHED];
        for (k, field) in fields.into_iter().enumerate() {
            own[k] = idf(searcher.doc_freq(&Term::from_field_text(field, word)).map_err(failed)?);
        }
        let mut found: Vec<(&str, [u64; SEARCHED])> = found.into_iter().collect();
        let total = |df: &[u64; SEARCHED]| df.iter().sum::<u64>();
        found.sort_by(|a, b| total(&b.1).cmp(&total(&a.1)).then_with(|| a.0.cmp(b.0)));
        found.truncate(MAX_WITHIN_WORDS);
        plan.terms.extend(found.iter().map(|(w, _)| w.to_string()));
        plan.strict[*i].within = found
            .into_iter()
            .map(|(w, df)| (w.to_string(), std::array::from_fn(|k| WITHIN_WEIGHT * own[k] / idf(df[k]))))
            .collect();
    }
    plan.terms.sort();
    plan.terms.dedup();
    Ok(())
}
