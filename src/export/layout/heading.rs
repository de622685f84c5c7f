//! The book title and headings: numbering, the styles' rules and bars, the outline entry.

use super::{Draw, OutlineEntry, Shaped};
use crate::export::blocks::{Align, Span, plain};
use crate::export::style::HeadingLook;

impl super::Layout<'_> {
    pub(super) fn title(&mut self, title: &str) {
        let size = self.style.body * 2.1;
        let mut shaped = Shaped::default();
        let mut look = self.text_look(self.body_face, size);
        look.bold = true;
        look.color = self.style.accent;
        self.shape(&[Span { text: title.to_owned(), ..Span::default() }], &look, &mut shaped);
        self.advance(self.style.line() * 1.5);
        self.paragraph(&shaped, Align::Center, 1.35);
        self.advance(self.style.line() * 0.5);
        let (x1, x2) = (self.left + self.width() * 0.2, self.right - self.width() * 0.2);
        let y = self.pdf_y(self.y);
        self.push(Draw::Line { x1, y1: y, x2, y2: y, color: self.style.accent, width: 0.8 });
        self.advance(self.style.line() * 2.0);
    }

    pub(super) fn heading(&mut self, level: u8, id: Option<&str>, spans: &[Span], first: bool) {
        let style = self.style;
        let level = level.clamp(1, 6);
        let scale = style.heading_scale[usize::from(level) - 1];
        let size = style.body * scale;
        let label = self.heading_number(level);
        let shown = format!("{label}{}", plain(spans));
        // Book styles open each chapter on a new page.
        if level == 1 && style.heading == HeadingLook::Ruled && !self.at_top() {
            self.new_page();
        }
        if !first && !self.at_top() {
            self.advance(style.line() * (style.gap + if level <= 2 { 0.9 } else { 0.5 }));
        }
        // Keep the heading with the start of what follows (a code block or table needs a few
        // lines before it starts on a page).
        self.ensure(size * 1.5 + style.line() * 4.5);
        let top = self.pdf_y(self.y);
        self.outline.push(OutlineEntry {
            level,
            title: shown.trim().to_owned(),
            page: self.pages.len() - 1,
            y: top,
            id: id.map(str::to_owned),
        });

        let mut look = self.text_look(self.body_face, size);
        look.bold = level <= 4;
        look.color = if level <= 2 { style.accent } else { style.text };
        let mut shaped = Shaped::default();
        if !label.is_empty() {
            self.shape(&[Span { text: label, ..Span::default() }], &look, &mut shaped);
        }
        self.shape(spans, &look, &mut shaped);
        let align =
            if level == 1 && style.heading == HeadingLook::Ruled { Align::Center } else { Align::Left };
        let (x1, x2) = (self.left, self.right);
        match (style.heading, level) {
            (HeadingLook::Ruled, 1) => {
                let y = self.pdf_y(self.y);
                self.push(Draw::Line { x1, y1: y, x2, y2: y, color: style.rule, width: 1.2 });
                self.advance(size * 0.5);
            }
            (HeadingLook::Bar, 1 | 2) => {
                let h = size * 1.35;
                let w = if level == 1 { 4.0 } else { 3.0 };
                let y = self.pdf_y(self.y + h);
                self.push(Draw::Rect { x: x1, y, w, h, fill: Some(style.accent), stroke: None });
                self.left += w + size * 0.45;
            }
            _ => {}
        }
        self.paragraph(&shaped, align, 1.35);
        self.left = x1;
        self.heading_rule_below(level, size, x1, x2);
        self.advance(style.line() * 0.35);
    }

    /// The rule a style draws under a heading of `level` (from `x1` to `x2`), if any.
    fn heading_rule_below(&mut self, level: u8, size: f32, x1: f32, x2: f32) {
        let style = self.style;
        let y = self.pdf_y(self.y + size * 0.15);
        match (style.heading, level) {
            (HeadingLook::Plain, 1) => {
                self.push(Draw::Line { x1, y1: y, x2, y2: y, color: style.rule, width: 0.6 });
            }
            (HeadingLook::Ruled, 1) => {
                self.advance(size * 0.3);
                let y = self.pdf_y(self.y);
                self.push(Draw::Line { x1, y1: y, x2, y2: y, color: style.rule, width: 1.2 });
            }
            (HeadingLook::Ruled, 2) => {
                self.push(Draw::Line {
                    x1,
                    y1: y,
                    x2: x1 + size * 3.0,
                    y2: y,
                    color: style.accent,
                    width: 0.8,
                });
            }
            (HeadingLook::Bar, 1) => {
                self.push(Draw::Line { x1, y1: y, x2, y2: y, color: style.accent, width: 0.8 });
            }
            (HeadingLook::Underlined, 1) => {
                self.push(Draw::Line { x1, y1: y, x2, y2: y, color: style.accent, width: 1.6 });
            }
            (HeadingLook::Underlined, 2) => {
                self.push(Draw::Line { x1, y1: y, x2, y2: y, color: style.rule, width: 0.5 });
            }
            _ => {}
        }
    }

    /// The number shown before a heading of `level` (`1.　`, `1.2　`) when the style numbers
    /// headings, counting it; else empty.
    fn heading_number(&mut self, level: u8) -> String {
        let style = self.style;
        let mut label = String::new();
        let rank = level.saturating_sub(self.top_level) + 1;
        if style.numbered && rank <= 3 {
            let i = usize::from(rank) - 1;
            self.numbers[i] += 1;
            for n in &mut self.numbers[i + 1..] {
                *n = 0;
            }

            let parts: Vec<String> = self.numbers[..=i].iter().map(u32::to_string).collect();
            label = parts.join(".");
            if rank == 1 {
                label.push('.');
            }
            label.push('\u{3000}');
        }
        label
    }
}
