//! Snippets in the contract's FTS5 shape (`docs/reference/original-server.md` §8.2:
//! `snippet(chunks_fts, 0, '[', ']', '...', 16)`).
//!
//! A window of [`WINDOW`] tokens of the chunk text is chosen to hold the most distinct query
//! terms (then the most matches), with the matches centred; matched tokens are wrapped in
//! `[`…`]` (adjacent matches share one pair, so `形態素解析` shows as `[形態素解析]`), and `...`
//! marks text cut off before or after the window. A window that starts at the first token
//! keeps the text before it; one that ends at the last token keeps the text after it. When
//! nothing in the text matches (the match was in the heading path), the window is the first
//! [`WINDOW`] tokens.
//!
//! Only a few sentences are analyzed, not the whole chunk: the text is cut into sentences (at
//! line breaks and `。`, where lindera cuts too, so tokens come out the same), each sentence
//! is normalised and tested for the query terms as substrings (cheap), and the sentence with
//! the most distinct terms is analyzed, with its neighbours when it is short.

use std::collections::HashMap;

use super::analyzer::{Analyzer, Kind, final_text_into, with_analyzer};
use super::query::plan;

/// Tokens in a snippet window (FTS5's `snippet(..., 16)`).
pub(crate) const WINDOW: usize = 16;

/// Texts up to this size are analyzed whole.
const FULL_ANALYSIS_BYTES: usize = 256;
/// Longest sentence; longer runs without a break are cut (at a character boundary).
const SENTENCE_BYTES: usize = 1024;
/// The sentence holding the most query terms is analyzed with its neighbours only while the
/// piece is shorter than this (a window of [`WINDOW`] tokens fits in it; analyzing three
/// sentences around every hit was most of a query's lindera time, `docs/performance.md`,
/// "Query stages").
const MIN_PIECE_BYTES: usize = 160;
/// Text analyzed when no sentence contains a query term.
const FALLBACK_BYTES: usize = 512;
/// Texts are searched for a matching sentence only this far.
const SCAN_LIMIT_BYTES: usize = 1024 * 1024;
/// Characters shown of a text that has no tokens at all.
const TOKENLESS_CHARS: usize = 100;

/// The snippets hits on `texts` get for `query` ([`LexicalHit::snippet`](super::LexicalHit::snippet)), made as a search
/// makes them: the query analyzed once, then each text with this thread's analyzer (for
/// benchmarks, which time snippets apart from the search).
pub fn snippets_of(texts: &[String], query: &str) -> Vec<String> {
    with_analyzer(|a| {
        let plan = plan(query, a);
        texts.iter().map(|t| snippet(t, &plan.terms, a)).collect()
    })
}

/// The snippet of `text` for the query terms `terms` (analyzed forms).
pub(crate) fn snippet(text: &str, terms: &[String], analyzer: &mut Analyzer) -> String {
    let (start, end) =
        if text.len() <= FULL_ANALYSIS_BYTES { (0, text.len()) } else { choose_range(text, terms) };
    let piece = &text[start..end];
    analyzer.run(piece);
    let index: HashMap<&str, usize> = terms.iter().enumerate().map(|(i, t)| (t.as_str(), i)).collect();

    // spans of primary tokens by position, and matches (position, term, span)
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut hits: Vec<(usize, usize, usize, usize)> = Vec::new();
    for tok in analyzer.tokens() {
        if let Kind::Primary(_) = tok.kind {
            if tok.position >= spans.len() {
                spans.resize(tok.position + 1, (tok.offset_from, tok.offset_to));
            }
            spans[tok.position] = (tok.offset_from, tok.offset_to);
        }
        if let Some(&term) = index.get(analyzer.text(tok)) {
            hits.push((tok.position, term, tok.offset_from, tok.offset_to));
        }
    }
    let n = spans.len();
    if n == 0 {
        let shown: String = piece.chars().take(TOKENLESS_CHARS).collect();
        let more = start + shown.len() < text.len();
        return format!("{}{shown}{}", if start > 0 { "..." } else { "" }, if more { "..." } else { "" });
    }
    hits.retain(|h| h.0 < n);
    hits.sort_unstable();

    let s = best_window_start(&hits, n);
    let e = (s + WINDOW).min(n);
    let from = if s == 0 { 0 } else { spans[s].0 };
    let to = if e == n { piece.len() } else { spans[e - 1].1 };

    let mut marks: Vec<(usize, usize)> = hits
        .iter()
        .filter(|h| h.0 >= s && h.0 < e)
        .map(|h| (h.2.max(from), h.3.min(to)))
        .filter(|(a, b)| a < b)
        .collect();
    marks.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(marks.len());
    for (a, b) in marks {
        match merged.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }

    let mut out = String::with_capacity(to - from + 8 + 2 * merged.len());
    if start + from > 0 {
        out.push_str("...");
    }
    let mut at = from;
    for (a, b) in merged {
        out.push_str(&piece[at..a]);
        out.push('[');
        out.push_str(&piece[a..b]);
        out.push(']');
        at = b;
    }
    out.push_str(&piece[at..to]);
    if start + to < text.len() {
        out.push_str("...");
    }
    out
}

/// The first position of the best window: most distinct terms, then most matches, matches
/// centred, earliest on ties.
fn best_window_start(hits: &[(usize, usize, usize, usize)], n: usize) -> usize {
    let mut best: Option<(usize, usize)> = None; // (score, start)
    let mut seen: Vec<usize> = Vec::new();
    let mut prev_first = None;
    for (i, &(first, ..)) in hits.iter().enumerate() {
        if prev_first == Some(first) {
            continue;
        }
        prev_first = Some(first);
        seen.clear();
        let mut count = 0;
        let mut last = first;
        for h in hits[i..].iter().take_while(|h| h.0 < first + WINDOW) {
            if !seen.contains(&h.1) {
                seen.push(h.1);
            }
            count += 1;
            last = h.0;
        }
        let score = seen.len() * 1000 + count;
        let shift = (WINDOW - (last - first + 1)) / 2;
        let start = first.saturating_sub(shift).min(n.saturating_sub(WINDOW));
        if best.is_none_or(|(b, _)| score > b) {
            best = Some((score, start));
        }
    }
    best.map_or(0, |(_, s)| s)
}

/// The byte range to analyze: the sentence holding the most distinct query terms (by a
/// substring test on its normalised, lowercased form), with the sentences around it; or the
/// start of the text when no sentence holds any.
fn choose_range(text: &str, terms: &[String]) -> (usize, usize) {
    let mut probes: Vec<String> = Vec::new();
    for t in terms {
        probes.push(t.clone());
        // inflected forms of a base form share all but the last character (住む → 住ん)
        let mut chars = t.chars();
        if !t.is_ascii() && chars.next_back().is_some() && !chars.as_str().is_empty() {
            probes.push(chars.as_str().to_string());
        }
    }
    let mut norm = super::normalize::Normalized::default();
    let mut folded = String::new();
    // (distinct probes, sentence index) of the best sentence, and every sentence's range
    let mut best: Option<(usize, usize)> = None;
    let mut sentences: Vec<(usize, usize)> = Vec::new();
    let mut start = 0;
    let mut scan_until = SCAN_LIMIT_BYTES;
    while start < text.len() && start < scan_until {
        let end = sentence_end(text, start);
        // Once a sentence holds every probe none can beat it: the rest is only cut into
        // sentences, as far as the neighbours of a short best sentence may reach.
        if best.is_none_or(|(b, _)| b < probes.len()) {
            norm.normalize(&text[start..end]);
            folded.clear();
            final_text_into(&norm.text, &mut folded);
            let found = probes.iter().filter(|p| folded.contains(p.as_str())).count();
            if found > 0 && best.is_none_or(|(b, _)| found > b) {
                best = Some((found, sentences.len()));
                if found == probes.len() {
                    scan_until = end + MIN_PIECE_BYTES;
                }
            }
        }
        sentences.push((start, end));
        start = end;
    }
    match best {
        Some((_, i)) => {
            // the sentence, then its neighbours (before, after, before, ...) while it is short
            let (mut first, mut last) = (i, i);
            let len = |a: usize, b: usize| sentences[b].1 - sentences[a].0;
            while len(first, last) < MIN_PIECE_BYTES && (first > 0 || last + 1 < sentences.len()) {
                if first > 0 && (last + 1 == sentences.len() || i - first <= last - i) {
                    first -= 1;
                } else {
                    last += 1;
                }
            }
            (sentences[first].0, sentences[last].1)
        }
        None => {
            let to = sentences.iter().map(|s| s.1).take_while(|&e| e <= FALLBACK_BYTES).last();
            (0, to.unwrap_or_else(|| sentences.first().map_or(text.len(), |s| s.1)))
        }
    }
}

/// End of the sentence starting at `start`: just after the next line break or `。`, or a
/// character boundary [`SENTENCE_BYTES`] on.
fn sentence_end(text: &str, start: usize) -> usize {
    let rest = &text[start..];
    let limit = rest.len().min(SENTENCE_BYTES);
    let cut = rest.as_bytes()[..limit].iter().enumerate().find_map(|(i, &b)| match b {
        b'\n' => Some(i + 1),
        // the last byte of `。` (E3 80 82)
        0x82 if i >= 2 && rest.as_bytes()[i - 2..=i] == [0xE3, 0x80, 0x82] => Some(i + 1),
        _ => None,
    });
    let mut end = start + cut.unwrap_or(limit);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    if end == start { rest.chars().next().map_or(text.len(), |c| start + c.len_utf8()) } else { end }
}
