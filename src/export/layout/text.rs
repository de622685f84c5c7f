//! Running text: spans measured into pieces, lines broken and justified, and the runs of one
//! line drawn (one text operation per look, half-width punctuation, code tint, links).

use super::{Draw, Face, Look, Shaped};
use crate::export::blocks::{Align, Span};
use crate::export::linebreak::{Mode, Piece, break_lines, hangs, is_cjk, no_end, no_start};
use crate::markdown::text_rules::{self, Emphasis};

impl super::Layout<'_> {
    /// Measures spans into pieces.
    pub(super) fn shape(&mut self, spans: &[Span], base: &Look, shaped: &mut Shaped) {
        for span in spans {
            let mut look = base.clone();
            look.bold |= span.bold;
            if span.italic {
                // Never slanted kanji: Japanese emphasis is set upright in the gothic face, as
                // the HTML export sets it (`markdown::text_rules::emphasis`).
                match text_rules::emphasis(self.japanese, &span.text) {
                    Emphasis::Slanted => look.italic = true,
                    Emphasis::Gothic => {
                        look.face = Face::Sans;
                        look.bold |= base.face == Face::Sans;
                    }
                }
            }
            look.strike |= span.strike;
            if span.code {
                look.code = true;
                look.size = base.size * 0.92;
            }
            if let Some(link) = &span.link {
                look.link = Some(link.clone());
                look.color = self.link_color();
            }
            if span.note {
                look.rise = base.size * 0.38;
                look.size = base.size * 0.62;
                look.color = self.style.accent;
            }
            for ch in span.text.chars() {
                let chars: &[char] = match ch {
                    '\t' if span.code => &[' ', ' ', ' ', ' '],
                    '\t' | '\r' => &[' '],
                    c if c.is_control() && c != '\n' => &[],
                    _ => &[ch],
                };
                for &c in chars {
                    if c == '\n' {
                        shaped.pieces.push(Piece { ch: '\n', width: 0.0 });
                        let index = self.look_index(shaped, &look);
                        shaped.look_of.push(index);
                        continue;
                    }
                    let face = if look.code && c.is_ascii() { Face::Mono } else { look.face };
                    let (face, drawn, width) = self.measure(face, c, look.size);
                    let mut l = look.clone();
                    l.face = face;
                    shaped.pieces.push(Piece { ch: drawn, width });
                    let index = self.look_index(shaped, &l);
                    shaped.look_of.push(index);
                }
            }
        }
    }

    pub(super) fn look_index(&self, shaped: &mut Shaped, look: &Look) -> usize {
        match shaped.looks.iter().position(|l| l == look) {
            Some(i) => i,
            None => {
                shaped.looks.push(look.clone());
                shaped.looks.len() - 1
            }
        }
    }

    /// Lays out shaped text as wrapped lines between `left` and `right`.
    pub(super) fn paragraph(&mut self, shaped: &Shaped, align: Align, leading: f32) {
        self.set_lines(shaped, align, leading, false);
    }

    /// Lays out body text justified: consecutive punctuation set half-width, every line but the
    /// last (and those ended by a hard break) stretched to the right edge.
    pub(super) fn justified(&mut self, shaped: &Shaped, leading: f32) {
        let mut shaped = shaped.clone();
        tighten_punctuation(&mut shaped);
        self.set_lines(&shaped, Align::Left, leading, true);
    }

    pub(super) fn set_lines(&mut self, shaped: &Shaped, align: Align, leading: f32, justify: bool) {
        let lines = break_lines(&shaped.pieces, self.width(), Mode::Prose);
        let count = lines.len();
        for (n, range) in lines.into_iter().enumerate() {
            let size = range
                .clone()
                .map(|i| shaped.looks[shaped.look_of[i]].size)
                .fold(0.0_f32, f32::max)
                .max(shaped.looks.first().map_or(self.style.body, |l| l.size));
            let lh = size * leading;
            self.ensure(lh);
            let baseline = self.pdf_y(self.y + (lh - size) / 2.0 + size * 0.86);
            self.draw_marker(baseline, size);
            let width: f32 = range.clone().map(|i| shaped.pieces[i].width).sum();
            let x = match align {
                Align::Left => self.left,
                Align::Center => self.left + (self.width() - width).max(0.0) / 2.0,
                Align::Right => self.left + (self.width() - width).max(0.0),
            };
            let hard_end = shaped.pieces.get(range.end).is_some_and(|p| p.ch == '\n');
            let extra = if justify && n + 1 < count && !hard_end {
                justification(shaped, range.clone(), self.width())
            } else {
                Vec::new()
            };
            self.runs_spaced(shaped, range, x, baseline, &extra);
            self.advance(lh);
        }
    }

    /// Draws pieces `range` of `shaped` from `x` on `baseline`, one text operation per look.
    pub(super) fn runs(&mut self, shaped: &Shaped, range: std::ops::Range<usize>, x: f32, baseline: f32) {
        self.runs_spaced(shaped, range, x, baseline, &[]);
    }

    /// Draws pieces `range` of `shaped` from `x` on `baseline` with `extra[k]` points added after
    /// piece `range.start + k` (justification; empty: none). One text operation per look where
    /// the glyphs sit at their own advances, more where spacing or half-width punctuation moves
    /// them; underlines, strike-through, code tint and link areas span the whole look.
    pub(super) fn runs_spaced(
        &mut self,
        shaped: &Shaped,
        range: std::ops::Range<usize>,
        x0: f32,
        baseline: f32,
        extra: &[f32],
    ) {
        let extra_after = |k: usize| extra.get(k - range.start).copied().unwrap_or(0.0);
        let mut pos = Vec::with_capacity(range.len() + 1);
        let mut at = x0;
        for k in range.clone() {
            pos.push(at);
            at += shaped.pieces[k].width + extra_after(k);
        }
        let place = |k: usize| pos[k - range.start];
        let mut i = range.start;
        while i < range.end {
            let look_index = shaped.look_of[i];
            let look = &shaped.looks[look_index];
            let mut j = i;
            while j < range.end && shaped.look_of[j] == look_index {
                j += 1;
            }
            let x = place(i);
            let w = place(j - 1) + shaped.pieces[j - 1].width - x;
            let size = look.size;
            if look.code {
                self.push(Draw::Rect {
                    x: x - 0.5,
                    y: baseline - size * 0.25,
                    w: w + 1.0,
                    h: size * 1.15,
                    fill: Some(self.style.tint),
                    stroke: None,
                });
            }
            // Text operations: one per stretch of glyphs that sit one advance plus the same
            // spacing apart (a justified CJK run is one), split where the spacing changes
            // (a Latin word, a space, half-width punctuation).
            let drawn = |k: usize| place(k) + shaped.shift(k);
            let mut a = i;
            while a < j {
                let extend = |spacing: f32| {
                    let mut b = a + 1;
                    while b < j && (drawn(b) - drawn(b - 1) - shaped.natural(b - 1) - spacing).abs() < 1e-3 {
                        b += 1;
                    }
                    b
                };
                let mut spacing = if a + 1 < j { drawn(a + 1) - drawn(a) - shaped.natural(a) } else { 0.0 };
                if spacing.abs() < 1e-4 {
                    spacing = 0.0;
                }
                let mut b = extend(spacing);
                if spacing != 0.0 && b - a < 3 {
                    // Spacing for one gap only (a space before a word): a new operation instead.
                    spacing = 0.0;
                    b = extend(0.0);
                }
                let text: String = (a..b).map(|k| shaped.pieces[k].ch).filter(|&c| c != '\n').collect();
                if !text.trim().is_empty() {
                    self.push(Draw::Text {
                        x: place(a) + shaped.shift(a),
                        y: baseline + look.rise,
                        face: look.face,
                        size,
                        color: look.color,
                        bold: look.bold,
                        italic: look.italic,
                        text,
                        spacing,
                    });
                }
                a = b;
            }
            self.decorate(look, x, w, baseline);
            i = j;
        }
    }

    /// A look's strike-through, and a link's underline and target area, over `x..x + w`.
    fn decorate(&mut self, look: &Look, x: f32, w: f32, baseline: f32) {
        let size = look.size;
        if look.strike {
            let y = baseline + size * 0.32;
            self.push(Draw::Line { x1: x, y1: y, x2: x + w, y2: y, color: look.color, width: size * 0.06 });
        }
        if let Some(target) = &look.link {
            let y = baseline - size * 0.12;
            self.push(Draw::Line { x1: x, y1: y, x2: x + w, y2: y, color: look.color, width: 0.4 });
            self.push(Draw::Link { x, y: baseline - size * 0.25, w, h: size * 1.2, target: target.clone() });
        }
    }
}

/// Closing punctuation: 、。，． and the closing brackets (`markdown::text_rules`); the glyph
/// sits in the left half of its full-width box.
pub(super) fn closing(c: char) -> bool {
    matches!(c, '、' | '。' | '，' | '．') || text_rules::is_closing_bracket(c)
}

/// Opening brackets: the glyph sits in the right half of its full-width box.
pub(super) fn opening(c: char) -> bool {
    text_rules::is_opening_bracket(c)
}

/// Consecutive punctuation set half-width (JIS X 4051): closing punctuation followed by more
/// punctuation keeps only its glyph half (`。」`, `」「`, `）、`), and an opening bracket after
/// another opening bracket drops its empty left half (`（「`). Only full-width glyphs are
/// touched; a proportional font's brackets are already tight.
pub(super) fn tighten_punctuation(shaped: &mut Shaped) {
    let n = shaped.pieces.len();
    shaped.natural = shaped.pieces.iter().map(|p| p.width).collect();
    shaped.shift = vec![0.0; n];
    let full = |shaped: &Shaped, k: usize| {
        let size = shaped.looks[shaped.look_of[k]].size;
        shaped.natural[k] >= size * 0.9
    };
    for k in 0..n.saturating_sub(1) {
        let (a, b) = (shaped.pieces[k].ch, shaped.pieces[k + 1].ch);
        if closing(a) && (closing(b) || opening(b)) && full(shaped, k) {
            shaped.pieces[k].width = shaped.natural[k] / 2.0;
        } else if opening(a) && opening(b) && full(shaped, k + 1) {
            let half = shaped.natural[k + 1] / 2.0;
            shaped.pieces[k + 1].width = half;
            shaped.shift[k + 1] = -half;
        }
    }
}

/// The space to add after each piece of line `range` so that it ends at `width` (justified
/// setting): shared equally by the gaps next to a CJK character (not before a character that
/// may not start a line, nor after one that may not end it) and the spaces between Latin
/// words; none inside a Latin word or inline code, or after the paragraph indent. Equal small
/// amounts keep the text one run per script for a PDF reader (a wide gap reads as a space in
/// extracted text) and let a CJK run be drawn as one operation. Empty when the line is full,
/// cannot stretch, or would stretch more than one em per gap (it is then set ragged).
pub(super) fn justification(shaped: &Shaped, range: std::ops::Range<usize>, width: f32) -> Vec<f32> {
    let natural: f32 = range.clone().map(|k| shaped.pieces[k].width).sum();
    let last = range.end.saturating_sub(1);
    // A comma or full stop hanging in the margin (ぶら下げ): the line before it is justified.
    let hang = natural > width + 0.01 && hangs(shaped.pieces[last].ch);
    let slack = width - if hang { natural - shaped.pieces[last].width } else { natural };
    if slack <= 0.01 || range.len() < 2 {
        return Vec::new();
    }
    let code = |k: usize| shaped.looks[shaped.look_of[k]].code;
    let stretches = |k: usize| {
        let (a, b) = (shaped.pieces[k].ch, shaped.pieces[k + 1].ch);
        if code(k) || code(k + 1) || b == ' ' || a == '\u{3000}' || (hang && k + 1 == last) {
            return false;
        }
        a == ' ' || ((is_cjk(a) || is_cjk(b)) && !no_start(b) && !no_end(a))
    };
    let gaps: Vec<bool> = (range.start..range.end - 1).map(stretches).collect();
    let count = gaps.iter().filter(|g| **g).count();
    let size = shaped.looks[shaped.look_of[range.start]].size;
    if count == 0 || slack / count as f32 > size {
        return Vec::new();
    }
    let each = slack / count as f32;
    gaps.into_iter().map(|g| if g { each } else { 0.0 }).collect()
}
