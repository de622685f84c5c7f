//! Snippets: the contract's FTS5 shape (`docs/reference/original-server.md` §8.2:
//! `snippet(chunks_fts, 0, '[', ']', '...', 16)`), with a window that shows the answer.
//!
//! A window of `window` tokens (`search.snippetTokens`, default 64 (`config`'s
//! `DEFAULT_SNIPPET_TOKENS`); the original's is [`ORIGINAL_WINDOW`]) of the chunk text is chosen to hold the most distinct query
//! terms, then the terms closest together (the proximity the ranking rewards), then the most
//! matches, with the matches centred; matched tokens are wrapped in
//! `[`…`]` (adjacent matches share one pair, so `形態素解析` shows as `[形態素解析]`), and `...`
//! marks text cut off before or after the window. A window that starts at the first token
//! keeps the text before it; one that ends at the last token keeps the text after it. When
//! nothing in the text matches (the match was in the heading path), the window is the first
//! `window` tokens. A window longer than the original's is cut at sentence ends around its
//! matches: it starts after the last sentence end before the first match and stops after the
//! first sentence end after the last one, so it shows whole sentences where it can
//! (`docs/tools.md`, "Snippets").
//!
//! Only a few sentences are analyzed, not the whole chunk: the text is cut into sentences (at
//! line breaks and `。`, where lindera cuts too, so tokens come out the same), each sentence
//! is normalised and tested for the query terms as substrings (cheap), and the sentence with
//! the most distinct terms (the closest together on a tie) is analyzed, with its neighbours
//! while the piece is shorter than the window needs.

use std::collections::HashMap;

use super::analyzer::{Analyzer, Kind, final_text_into, with_analyzer};
use super::query::plan;

/// Tokens in the original's snippet window (FTS5's `snippet(..., 16)`).
pub const ORIGINAL_WINDOW: usize = 16;
/// Tokens in the snippet of a hit after a search's first ones: a little more than the
/// original's, so it is cut at sentence ends too (a clause, not a fragment), and as cheap to
/// analyze.
pub const SHORT_WINDOW: usize = 24;
/// Bytes of text a window needs per token, to size the analyzed piece (Japanese tokens are two
/// or three characters of three bytes).
const PIECE_BYTES_PER_TOKEN: usize = 7;

/// Texts up to this size are analyzed whole.
const FULL_ANALYSIS_BYTES: usize = 256;
/// Longest sentence; longer runs without a break are cut (at a character boundary).
const SENTENCE_BYTES: usize = 1024;
/// The sentence holding the most query terms is analyzed with its neighbours only while the
/// piece is shorter than this (a window of [`ORIGINAL_WINDOW`] tokens fits in it; analyzing
/// three sentences around every hit was most of a query's lindera time, `docs/performance.md`,
/// "Query stages"); a larger window needs [`PIECE_BYTES_PER_TOKEN`] bytes a token.
const MIN_PIECE_BYTES: usize = 160;
/// After a sentence that holds every query term, the scan goes on this far for one holding
/// them closer together.
const PROXIMITY_SCAN_BYTES: usize = 4096;
/// Text analyzed when no sentence contains a query term.
const FALLBACK_BYTES: usize = 512;
/// Texts are searched for a matching sentence only this far.
const SCAN_LIMIT_BYTES: usize = 1024 * 1024;
/// Characters shown of a text that has no tokens at all.
const TOKENLESS_CHARS: usize = 100;

/// The snippets hits on `texts` get for `query` ([`LexicalHit::snippet`](super::LexicalHit::snippet)), made as a search
/// makes them: the query analyzed once, then each text with this thread's analyzer (for
/// benchmarks, which time snippets apart from the search).
pub fn snippets_of(texts: &[String], query: &str, window: usize) -> Vec<String> {
    with_analyzer(|a| {
        let plan = plan(query, a);
        texts.iter().map(|t| snippet(t, &plan.terms, a, window)).collect()
    })
}

/// The snippet of `text` for the query terms `terms` (analyzed forms), a window of `window`
/// tokens.
pub(crate) fn snippet(text: &str, terms: &[String], analyzer: &mut Analyzer, window: usize) -> String {
    let window = window.max(1);
    let min_piece = MIN_PIECE_BYTES.max(window * PIECE_BYTES_PER_TOKEN);
    let (start, end) = if text.len() <= FULL_ANALYSIS_BYTES.max(min_piece) {
        (0, text.len())
    } else {
        choose_range(text, terms, min_piece)
    };
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

    let (s, core) = best_window_start(&hits, n, window);
    let e = (s + window).min(n);
    let mut from = if s == 0 { 0 } else { spans[s].0 };
    let mut to = if e == n { piece.len() } else { spans[e - 1].1 };
    if window > ORIGINAL_WINDOW
        && let Some((first, last)) = core
    {
        (from, to) = whole_sentences(piece, from, to, spans[first].0, spans[last].1);
    }

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

/// `from..to` of `piece` cut at sentence ends around the matches `first..last`: after the last
/// sentence end before `first`, through the first one after `last`.
fn whole_sentences(piece: &str, from: usize, to: usize, first: usize, last: usize) -> (usize, usize) {
    let ends = |s: &str| {
        s.char_indices()
            .filter(|(_, c)| matches!(c, '。' | '．' | '！' | '？' | '!' | '?' | '\n'))
            .map(|(i, c)| i + c.len_utf8())
            .collect::<Vec<_>>()
    };
    let head = &piece[from..first.max(from)];
    let start = match ends(head).last() {
        Some(&i) => {
            let rest = &piece[from + i..];
            from + i + (rest.len() - rest.trim_start().len())
        }
        None => from,
    };
    let tail_from = last.min(to).max(start);
    let end = match ends(&piece[tail_from..to]).first() {
        // A line break is not shown at the end.
        Some(&i) => tail_from + i - usize::from(piece[tail_from..tail_from + i].ends_with('\n')),
        None => to,
    };
    (start.min(first), end.max(last.min(to)))
}

/// The first position of the best window of `window` tokens: most distinct terms, then the
/// shortest stretch holding them (proximity), then most matches; matches centred, earliest on
/// ties. Also that stretch (first and last token position), when there is a match.
fn best_window_start(
    hits: &[(usize, usize, usize, usize)],
    n: usize,
    window: usize,
) -> (usize, Option<(usize, usize)>) {
    // (score, start, stretch)
    type Best = ((usize, std::cmp::Reverse<usize>, usize), usize, (usize, usize));
    let mut best: Option<Best> = None;
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
        // The stretch from `first` to the first match of the last new term seen.
        let mut cover = first;
        for h in hits[i..].iter().take_while(|h| h.0 < first + window) {
            if !seen.contains(&h.1) {
                seen.push(h.1);
                cover = h.0;
            }
            count += 1;
            last = h.0;
        }
        let score = (seen.len(), std::cmp::Reverse(cover - first), count);
        let shift = (window - (last - first + 1)) / 2;
        let start = first.saturating_sub(shift).min(n.saturating_sub(window));
        if best.is_none_or(|(b, ..)| score > b) {
            best = Some((score, start, (first, cover)));
        }
    }
    best.map_or((0, None), |(_, s, stretch)| (s, Some(stretch)))
}

/// The byte range to analyze: the sentence holding the most distinct query terms (by a
/// substring test on its normalised, lowercased form; on a tie, the one holding them closest
/// together), with the sentences around it while the piece is shorter than `min_piece`; or the
/// start of the text when no sentence holds any.
fn choose_range(text: &str, terms: &[String], min_piece: usize) -> (usize, usize) {
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
    // ((distinct probes, closeness), sentence index) of the best sentence, and every sentence's
    // range
    let mut best: Option<((usize, std::cmp::Reverse<usize>), usize)> = None;
    let mut sentences: Vec<(usize, usize)> = Vec::new();
    let mut start = 0;
    let mut scan_until = SCAN_LIMIT_BYTES;
    while start < text.len() && start < scan_until {
        let end = sentence_end(text, start);
        // Once a sentence holds every probe only a tighter one can beat it, looked for a little
        // further; then the rest is only cut into sentences, as far as the neighbours of a
        // short best sentence may reach.
        let complete = best.is_some_and(|((b, _), _)| b == probes.len());
        if !complete || end <= scan_until.saturating_sub(min_piece) {
            norm.normalize(&text[start..end]);
            folded.clear();
            final_text_into(&norm.text, &mut folded);
            let at: Vec<usize> = probes.iter().filter_map(|p| folded.find(p.as_str())).collect();
            let spread = at.iter().max().zip(at.iter().min()).map_or(0, |(a, b)| a - b);
            let score = (at.len(), std::cmp::Reverse(spread));
            if !at.is_empty() && best.is_none_or(|(b, _)| score > b) {
                best = Some((score, sentences.len()));
                if at.len() == probes.len() && !complete {
                    scan_until = end + PROXIMITY_SCAN_BYTES + min_piece;
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
            while len(first, last) < min_piece && (first > 0 || last + 1 < sentences.len()) {
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
