//! Code blocks: a tinted box, monospaced lines broken where full, split between pages.

use super::{Draw, Face, Look, Shaped};
use crate::export::blocks::Span;
use crate::export::linebreak::{Mode, break_lines};
use crate::export::style::CodeLook;

impl super::Layout<'_> {
    pub(super) fn code(&mut self, _lang: &str, text: &str) {
        let style = self.style;
        let size = style.body * style.code_scale;
        let lh = size * 1.45;
        let pad = size * 0.6;
        let numbered = style.code == CodeLook::Numbered;
        let source_lines: Vec<&str> = text.split('\n').collect();
        let gutter = if numbered {
            let digits = source_lines.len().to_string().len() as f32;
            size * 0.6 * (digits + 1.5)
        } else {
            0.0
        };
        let accent_bar = if style.code == CodeLook::Accent { 3.0 } else { 0.0 };
        let inner_left = self.left + pad + gutter + accent_bar;
        let inner_w = (self.right - pad - inner_left).max(size * 4.0);
        let lines = self.code_lines(&source_lines, size, inner_w);
        let mut idx = 0;
        while idx < lines.len() {
            let avail = self.bottom() - self.y - 2.0 * pad;
            let fit = (avail / lh).floor().max(0.0) as usize;
            let remaining = lines.len() - idx;
            if (fit == 0 || (fit < 2 && remaining >= 2)) && !self.at_top() {
                self.new_page();
                continue;
            }
            let take = remaining.min(fit.max(1));
            let h = take as f32 * lh + 2.0 * pad;
            let (x, y, w) = (self.left, self.pdf_y(self.y + h), self.right - self.left);
            self.code_frame((x, y, w, h), x + pad + gutter - size * 0.5, accent_bar);
            self.advance(pad);
            for (number, shaped) in &lines[idx..idx + take] {
                let baseline = self.pdf_y(self.y + (lh - size) / 2.0 + size * 0.82);
                self.draw_marker(baseline, style.body);
                if numbered && let Some(n) = number {
                    let label = n.to_string();
                    let lw = label.len() as f32 * size * 0.6;
                    self.push(Draw::Text {
                        x: self.left + pad + gutter - size * 0.9 - lw,
                        y: baseline,
                        face: Face::Mono,
                        size,
                        color: style.rule,
                        bold: false,
                        italic: false,
                        text: label,
                        spacing: 0.0,
                    });
                }
                self.runs(shaped, 0..shaped.pieces.len(), inner_left, baseline);
                self.advance(lh);
            }
            self.advance(pad);
            idx += take;
            if idx < lines.len() {
                self.new_page();
            }
        }
    }

    /// Every source line of a code block wrapped at `width`, each visual line with the 1-based
    /// number of the source line it starts (`None` for a continuation).
    fn code_lines(&mut self, source_lines: &[&str], size: f32, width: f32) -> Vec<(Option<usize>, Shaped)> {
        let style = self.style;
        let mut lines: Vec<(Option<usize>, Shaped)> = Vec::new();
        for (n, line) in source_lines.iter().enumerate() {
            let mut shaped = Shaped::default();
            let mut look = self.text_look(Face::Mono, size);
            look.color = style.text;
            self.shape(
                &[Span { text: (*line).to_owned(), code: false, ..Span::default() }],
                &Look { face: Face::Mono, ..look.clone() },
                &mut shaped,
            );
            // `shape` put non-ASCII characters in the mono face only if it has them: fix faces.
            let ranges = break_lines(&shaped.pieces, width, Mode::Code);
            for (k, r) in ranges.into_iter().enumerate() {
                let part = Shaped {
                    pieces: shaped.pieces[r.clone()].to_vec(),
                    look_of: shaped.look_of[r].to_vec(),
                    looks: shaped.looks.clone(),
                    ..Shaped::default()
                };
                lines.push(((k == 0).then_some(n + 1), part));
            }
        }
        lines
    }

    /// The box of a code block (or of its part on one page) in the style's look; `gutter_x` is
    /// where the numbered look draws the line between the numbers and the code.
    fn code_frame(&mut self, (x, y, w, h): (f32, f32, f32, f32), gutter_x: f32, accent_bar: f32) {
        let style = self.style;
        match style.code {
            CodeLook::Filled => {
                self.push(Draw::Rect { x, y, w, h, fill: Some(style.tint), stroke: None });
            }
            CodeLook::Framed => {
                self.push(Draw::Rect { x, y, w, h, fill: None, stroke: Some((style.rule, 0.6)) });
            }
            CodeLook::Accent => {
                self.push(Draw::Rect { x, y, w, h, fill: Some(style.tint), stroke: None });
                self.push(Draw::Rect { x, y, w: accent_bar, h, fill: Some(style.accent), stroke: None });
            }
            CodeLook::Numbered => {
                self.push(Draw::Rect { x, y, w, h, fill: Some(style.tint), stroke: Some((style.rule, 0.5)) });
                let gx = gutter_x;
                self.push(Draw::Line { x1: gx, y1: y, x2: gx, y2: y + h, color: style.rule, width: 0.4 });
            }
            CodeLook::Rules => {
                let top = y + h;
                self.push(Draw::Line { x1: x, y1: top, x2: x + w, y2: top, color: style.rule, width: 0.6 });
                self.push(Draw::Line { x1: x, y1: y, x2: x + w, y2: y, color: style.rule, width: 0.6 });
            }
        }
    }
}
