//! Lists and footnotes: markers (bullets, numbers, task boxes) hung left of their item's
//! first line.

use super::{Draw, Marker};
use crate::export::blocks::{Block, Item, Note};

impl super::Layout<'_> {
    /// Draws a pending list marker on the line whose baseline is `baseline` (PDF y).
    pub(super) fn draw_marker(&mut self, baseline: f32, size: f32) {
        let Some(marker) = self.marker.take() else { return };
        match marker {
            Marker::Text { text, right } => {
                // The full-width fallbacks ● ○ ■ are heavy next to text: draw them smaller.
                let size = if matches!(text.as_str(), "●" | "○" | "■") { size * 0.6 } else { size };
                let mut w = 0.0;
                let face = self.body_face;
                for ch in text.chars() {
                    w += self.measure(face, ch, size).2;
                }
                self.push(Draw::Text {
                    x: right - w,
                    y: baseline,
                    face,
                    size,
                    color: self.style.accent,
                    bold: false,
                    italic: false,
                    text,
                    spacing: 0.0,
                });
            }
            Marker::Task { done, right } => {
                let s = size * 0.78;
                let (x, y) = (right - s, baseline - size * 0.08);
                self.push(Draw::Rect {
                    x,
                    y,
                    w: s,
                    h: s,
                    fill: None,
                    stroke: Some((self.style.accent, 0.7)),
                });
                if done {
                    let c = self.style.accent;
                    self.push(Draw::Line {
                        x1: x + s * 0.18,
                        y1: y + s * 0.5,
                        x2: x + s * 0.42,
                        y2: y + s * 0.2,
                        color: c,
                        width: 1.1,
                    });
                    self.push(Draw::Line {
                        x1: x + s * 0.42,
                        y1: y + s * 0.2,
                        x2: x + s * 0.85,
                        y2: y + s * 0.85,
                        color: c,
                        width: 1.1,
                    });
                }
            }
        }
    }

    pub(super) fn list(&mut self, start: Option<u64>, items: &[Item]) {
        let size = self.style.body;
        let depth = self.list_depth;
        let bullet = self.bullet(depth);
        let numbers = start.map(|s| {
            let last = s + items.len().saturating_sub(1) as u64;
            let widest: f32 =
                format!("{last}.").chars().map(|c| self.measure(self.body_face, c, size).2).sum();
            (s, widest)
        });
        let marker_w = match numbers {
            Some((_, w)) => w + size * 0.5,
            None => size * 1.3,
        };
        let right = self.left + marker_w - size * 0.35;
        let entries = items.iter().enumerate().map(|(i, item)| {
            let marker = match (item.task, numbers) {
                (Some(done), _) => Marker::Task { done, right },
                (None, Some((s, _))) => Marker::Text { text: format!("{}.", s + i as u64), right },
                (None, None) => Marker::Text { text: bullet.to_string(), right },
            };
            (marker, item.blocks.as_slice())
        });
        self.items(entries.collect(), marker_w);
    }

    /// Lays out list entries: each one's blocks indented by `marker_w`, its marker (placed by
    /// the caller in that space) drawn on its first line.
    fn items(&mut self, entries: Vec<(Marker, &[Block])>, marker_w: f32) {
        let left = self.left;
        self.list_depth += 1;
        for (i, (marker, blocks)) in entries.into_iter().enumerate() {
            if i > 0 {
                self.advance(self.style.line() * self.style.gap * 0.25);
            }
            self.marker = Some(marker);
            self.left = left + marker_w;
            self.blocks(blocks);
            self.left = left;
        }
        self.list_depth -= 1;
    }

    pub(super) fn bullet(&mut self, depth: usize) -> char {
        let candidates: &[char] = match depth % 3 {
            0 => &['•', '●', '・'],
            1 => &['◦', '○', '・'],
            _ => &['▪', '■', '・'],
        };
        candidates.iter().copied().find(|c| self.metrics.advance(self.body_face, *c).is_some()).unwrap_or('-')
    }

    /// The footnotes after the body: a short rule, then each body after its number.
    pub(super) fn footnotes(&mut self, notes: &[Note]) {
        let size = self.style.body;
        let y = self.pdf_y(self.y);
        let (x1, x2) = (self.left, self.left + self.width() / 3.0);
        self.push(Draw::Line { x1, y1: y, x2, y2: y, color: self.style.rule, width: 0.5 });
        self.advance(self.style.line() * 0.5);
        let last = notes.iter().map(|n| n.number).max().unwrap_or(1);
        let widest: f32 = format!("{last}.").chars().map(|c| self.measure(self.body_face, c, size).2).sum();
        let marker_w = widest + size * 0.5;
        let right = self.left + marker_w - size * 0.35;
        let entries = notes
            .iter()
            .map(|n| (Marker::Text { text: format!("{}.", n.number), right }, n.blocks.as_slice()))
            .collect();
        self.items(entries, marker_w);
    }
}
