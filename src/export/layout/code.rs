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
        // Wrap every source line; remember which visual line starts a source line.
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
            let ranges = break_lines(&shaped.pieces, inner_w, Mode::Code);
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
                    self.push(Draw::Rect {
                        x,
                        y,
                        w,
                        h,
                        fill: Some(style.tint),
                        stroke: Some((style.rule, 0.5)),
                    });
                    let gx = x + pad + gutter - size * 0.5;
                    self.push(Draw::Line { x1: gx, y1: y, x2: gx, y2: y + h, color: style.rule, width: 0.4 });
                }
                CodeLook::Rules => {
                    let top = y + h;
                    self.push(Draw::Line {
                        x1: x,
                        y1: top,
                        x2: x + w,
                        y2: top,
                        color: style.rule,
                        width: 0.6,
                    });
                    self.push(Draw::Line { x1: x, y1: y, x2: x + w, y2: y, color: style.rule, width: 0.6 });
                }
            }
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
}
