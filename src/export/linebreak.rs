//! Line breaking for Japanese and Latin text without relying on spaces.
//!
//! A line may break between two CJK characters, between CJK and Latin text, and after a space;
//! never inside a Latin word (unless the word alone is wider than the line: long URLs and
//! identifiers are then cut where they overflow). Kinsoku shori (禁則処理, JIS X 4051, strict):
//! no line starts with closing brackets, 、。 and their kin, small kana or ー, and no line ends with
//! an opening bracket. When 、。，． would start the next line they hang into the right margin
//! instead (ぶら下げ), at most one per line.

use std::ops::Range;

/// One character with its advance width.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Piece {
    /// The character; `\n` forces a line break.
    pub ch: char,
    /// Its advance in points.
    pub width: f32,
}

/// How a run of text may be broken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Prose: the rules above; spaces at the start of a wrapped line are dropped.
    Prose,
    /// Code: break wherever the line is full, keep every space.
    Code,
}

/// Whether `c` is a CJK character: the one rule of `markdown::text_rules`.
pub use crate::markdown::text_rules::is_cjk;
use crate::markdown::text_rules::{is_closing_bracket, is_opening_bracket};

/// Characters that must not start a line (行頭禁則文字).
pub fn no_start(c: char) -> bool {
    is_closing_bracket(c)
        || matches!(
            c,
            '、' | '。'
                | '，'
                | '．'
                | '・'
                | '：'
                | '；'
                | '？'
                | '！'
                | '゛'
                | '゜'
                | 'ヽ'
                | 'ヾ'
                | 'ゝ'
                | 'ゞ'
                | '々'
                | '〻'
                | 'ー'
                | '’'
                | '”'
                | '｠'
                | '»'
                | '‐'
                | '〜'
                | '～'
                | '‥'
                | '…'
                | 'ぁ'
                | 'ぃ'
                | 'ぅ'
                | 'ぇ'
                | 'ぉ'
                | 'っ'
                | 'ゃ'
                | 'ゅ'
                | 'ょ'
                | 'ゎ'
                | 'ゕ'
                | 'ゖ'
                | 'ァ'
                | 'ィ'
                | 'ゥ'
                | 'ェ'
                | 'ォ'
                | 'ッ'
                | 'ャ'
                | 'ュ'
                | 'ョ'
                | 'ヮ'
                | 'ヵ'
                | 'ヶ'
                | ')'
                | ']'
                | '}'
                | ','
                | '.'
                | ':'
                | ';'
                | '?'
                | '!'
                | '%'
                | '％'
                | '｡'
                | '､'
                | '｣'
                | 'ｰ'
                | 'ｯ'
                | 'ｧ'
                | 'ｨ'
                | 'ｩ'
                | 'ｪ'
                | 'ｫ'
                | 'ｬ'
                | 'ｭ'
                | 'ｮ'
        )
        || ('\u{31F0}'..='\u{31FF}').contains(&c)
}

/// Characters that must not end a line (行末禁則文字).
pub fn no_end(c: char) -> bool {
    is_opening_bracket(c) || matches!(c, '‘' | '“' | '｟' | '«' | '(' | '[' | '{' | '｢')
}

/// Punctuation that may hang into the margin instead of starting a line.
pub fn hangs(c: char) -> bool {
    matches!(c, '、' | '。' | '，' | '．' | '､' | '｡')
}

/// Whether a prose line may break between `prev` and `next`.
pub fn can_break(prev: char, next: char) -> bool {
    if next.is_whitespace() || no_start(next) || no_end(prev) {
        return false;
    }
    if prev.is_whitespace() {
        return true;
    }
    is_cjk(prev) || is_cjk(next)
}

/// Splits `pieces` into lines no wider than `max` points (a hanging 、。 may exceed it by its
/// own width; a single piece wider than `max` gets a line of its own). Each range excludes
/// trailing spaces and the `\n` that ended it.
pub fn break_lines(pieces: &[Piece], max: f32, mode: Mode) -> Vec<Range<usize>> {
    let n = pieces.len();
    let mut lines = Vec::new();
    let mut start = 0;
    loop {
        if mode == Mode::Prose && !lines.is_empty() {
            while start < n && pieces[start].ch == ' ' {
                start += 1;
            }
        }
        let mut width = 0.0;
        let mut best = None;
        let mut end = (n, n);
        let mut i = start;
        while i < n {
            let p = pieces[i];
            if p.ch == '\n' {
                end = (i, i + 1);
                break;
            }
            if mode == Mode::Prose && i > start && can_break(pieces[i - 1].ch, p.ch) {
                best = Some(i);
            }
            let wider = width + p.width;
            if wider > max + 0.01 && !p.ch.is_whitespace() && i > start {
                end = if mode == Mode::Prose
                    && hangs(p.ch)
                    && pieces.get(i + 1).is_none_or(|next| !no_start(next.ch))
                {
                    // ぶら下げ: the comma or full stop stays on this line, in the margin.
                    (i + 1, i + 1)
                } else if let Some(b) = best {
                    (b, b)
                } else {
                    let cut = emergency(pieces, start, i, mode);
                    (cut, cut)
                };
                break;
            }
            width = wider;
            i += 1;
        }
        let (mut line_end, next) = end;
        if mode == Mode::Prose {
            while line_end > start && pieces[line_end - 1].ch == ' ' {
                line_end -= 1;
            }
        }
        lines.push(start..line_end);
        if next >= n {
            break;
        }
        start = next;
    }
    lines
}

/// Where to cut a run that has no break opportunity before `i` (the piece that overflows):
/// after a URL or identifier separator if there is one on the line, else just before `i`,
/// moved back one piece when that piece may not start a line.
fn emergency(pieces: &[Piece], start: usize, i: usize, mode: Mode) -> usize {
    if mode == Mode::Code {
        return i;
    }
    // Prefer the last separator in the second half of the line.
    let half = start + (i - start) / 2;
    for j in (half.max(start + 1)..i).rev() {
        if matches!(pieces[j - 1].ch, '/' | '-' | '_' | '.' | '?' | '&' | '=' | '#' | ':' | ',')
            && !no_start(pieces[j].ch)
        {
            return j;
        }
    }
    let mut cut = i;
    while cut > start + 1 && (no_start(pieces[cut].ch) || no_end(pieces[cut - 1].ch)) {
        cut -= 1;
    }
    cut
}
