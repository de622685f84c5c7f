//! The character-gram re-rank: the best few candidates of a query, ordered again by which of
//! the query's characters and character pairs each holds, weighted by how few of the *other*
//! candidates hold them (`docs/design/retrieval.md`, "Character-gram re-rank").
//!
//! Why: most first-place misses on natural questions are the right article's wrong sibling
//! section. Siblings share the article's words, so BM25 over the whole index (whose IDF says
//! how rare a word is in the project) barely separates them; an IDF taken over the candidates
//! themselves says which of the question's characters tell *these* sections apart. Characters
//! and pairs (not words) also catch what the dictionary splits differently in the question and
//! in the text (inflections, unknown compounds, katakana spellings).
//!
//! The re-rank stays inside a tier (chunks with every query word keep coming first) and mixes
//! the candidate's rank (`RANK_K / (RANK_K + rank)`) with its gram score relative to the pool's
//! best, times [`super::RankWeights::rerank`].

use rustc_hash::FxHashMap;

use super::chars::is_alnum;
use super::normalize::Normalized;

/// The rank term's constant, as in reciprocal-rank fusion (60).
const RANK_K: f32 = 60.0;
/// Bytes of a candidate's text scanned for grams, over all its pieces (a huge chunk, stored as
/// many pieces, costs no more than this).
const SCAN_BYTES: usize = 16 * 1024;

/// A gram key: one character, or a pair (first character in the high half, flag bit set).
fn unigram(c: char) -> u64 {
    u64::from(c as u32)
}

fn bigram(a: char, b: char) -> u64 {
    1 << 63 | u64::from(a as u32) << 32 | u64::from(b as u32)
}

/// Lowercases what has case (ASCII fast, CJK and kana untouched).
fn fold(c: char) -> char {
    if c.is_ascii() {
        c.to_ascii_lowercase()
    } else if (0x3000..=0x9FFF).contains(&(c as u32)) {
        c
    } else {
        c.to_lowercase().next().unwrap_or(c)
    }
}

/// The NFKC form of `text`, in `norm` (whose fast paths copy runs of ASCII, kana and kanji; the
/// crate's `is_nfkc_quick` check alone cost three times as much per chunk).
fn nfkc<'a>(text: &str, norm: &'a mut Normalized) -> &'a str {
    norm.normalize(text);
    &norm.text
}

/// The query's grams (every character and adjacent pair of letters or digits of its NFKC,
/// lowercased form), each with its index.
pub(crate) struct QueryGrams {
    index: FxHashMap<u64, usize>,
    /// A cheap first test of "is a query character": bit `c % 256` is set for each one.
    chars: [u64; 4],
}

impl QueryGrams {
    pub(crate) fn new(query: &str) -> Self {
        let mut index = FxHashMap::default();
        let mut chars = [0u64; 4];
        let mut norm = Normalized::default();
        let mut prev: Option<char> = None;
        let mut add = |g: u64| {
            let n = index.len();
            index.entry(g).or_insert(n);
        };
        for c in nfkc(query, &mut norm).chars() {
            if !is_alnum(c) {
                prev = None;
                continue;
            }
            let c = fold(c);
            let bit = c as usize & 255;
            chars[bit / 64] |= 1 << (bit % 64);
            add(unigram(c));
            if let Some(p) = prev {
                add(bigram(p, c));
            }
            prev = Some(c);
        }
        QueryGrams { index, chars }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Calls `f` with the index of every query gram in `text` (repeats included). A pair of
    /// the query is two characters of the query, so only those are looked up.
    fn scan(&self, text: &str, norm: &mut Normalized, mut f: impl FnMut(usize)) {
        let mut prev: Option<char> = None;
        for c in nfkc(text, norm).chars() {
            let c = fold(c);
            let bit = c as usize & 255;
            if self.chars[bit / 64] & (1 << (bit % 64)) == 0 {
                prev = None;
                continue;
            }
            let Some(&i) = self.index.get(&unigram(c)) else {
                prev = None;
                continue;
            };
            f(i);
            if let Some(p) = prev
                && let Some(&j) = self.index.get(&bigram(p, c))
            {
                f(j);
            }
            prev = Some(c);
        }
    }
}

/// Which query grams each candidate text holds, and the pool-local score of each.
pub(crate) struct GramScores {
    /// Per candidate: the indexes of the query grams it holds.
    held: Vec<Vec<usize>>,
    /// Per query gram: how many candidates hold it.
    df: Vec<u32>,
    norm: Normalized,
    seen: Vec<bool>,
}

impl GramScores {
    pub(crate) fn new(query: &QueryGrams) -> Self {
        let n = query.index.len();
        GramScores { held: Vec::new(), df: vec![0; n], norm: Normalized::default(), seen: vec![false; n] }
    }

    /// Adds one candidate, given as the pieces of its text (heading path, body).
    pub(crate) fn add<'t>(&mut self, query: &QueryGrams, pieces: impl IntoIterator<Item = &'t str>) {
        let GramScores { held, df, norm, seen } = self;
        seen.iter_mut().for_each(|s| *s = false);
        let mut mine = Vec::new();
        let mut budget = SCAN_BYTES;
        for piece in pieces {
            let piece = &piece[..piece.floor_char_boundary(budget)];
            budget -= piece.len();
            query.scan(piece, norm, |i| {
                if !seen[i] {
                    seen[i] = true;
                    df[i] += 1;
                    mine.push(i);
                }
            });
        }
        held.push(mine);
    }

    /// Each candidate's score: the sum over the query grams it holds of `ln(1 + N / df)`, N the
    /// number of candidates; then divided by the best, so the scores lie in [0, 1].
    pub(crate) fn scores(&self) -> Vec<f32> {
        let n = self.held.len() as f32;
        let idf: Vec<f32> =
            self.df.iter().map(|&d| if d == 0 { 0.0 } else { (1.0 + n / d as f32).ln() }).collect();
        let raw: Vec<f32> = self.held.iter().map(|h| h.iter().map(|&i| idf[i]).sum()).collect();
        let best = raw.iter().copied().fold(0.0f32, f32::max);
        if best <= 0.0 {
            return vec![0.0; raw.len()];
        }
        raw.into_iter().map(|s| s / best).collect()
    }
}

/// The new order of `n` candidates (their current ranks 0..n) whose gram scores are `scores`:
/// within each tier (`0..first_tier` and `first_tier..n`) by `RANK_K / (RANK_K + rank + 1) +
/// weight * score`, ties to the earlier rank.
pub(crate) fn order(scores: &[f32], first_tier: usize, weight: f32) -> Vec<usize> {
    let key = |i: usize| RANK_K / (RANK_K + i as f32 + 1.0) + weight * scores[i];
    let mut out: Vec<usize> = (0..scores.len()).collect();
    let split = first_tier.min(out.len());
    let (a, b) = out.split_at_mut(split);
    for part in [a, b] {
        part.sort_by(|&x, &y| key(y).total_cmp(&key(x)).then(x.cmp(&y)));
    }
    out
}
