//! Folios: the page numbers the style draws at the foot of every page.

use super::Draw;
use crate::export::style::Folio;

impl super::Layout<'_> {
    /// Page numbers (and the running title) on every page.
    pub(super) fn folios(&mut self, title: &str) {
        let style = self.style;
        let total = self.pages.len();
        let size = style.body * 0.8;
        let y = style.margins[2] * 0.45;
        let face = self.body_face;
        for p in 0..total {
            let n = p + 1;
            let text = match style.folio {
                Folio::Centered => n.to_string(),
                Folio::Dashed => format!("— {n} —"),
                Folio::OfTotal => format!("{n} / {total}"),
                Folio::Running => n.to_string(),
            };
            let w: f32 = text.chars().map(|c| self.measure(face, c, size).2).sum();
            let (l, r) = (style.margins[3], self.page_w - style.margins[1]);
            let x = match style.folio {
                Folio::Centered | Folio::Dashed => (l + r - w) / 2.0,
                Folio::OfTotal | Folio::Running => r - w,
            };
            let mut ops = vec![Draw::Text {
                x,
                y,
                face,
                size,
                color: style.rule,
                bold: false,
                italic: false,
                text,
                spacing: 0.0,
            }];
            if style.folio == Folio::Running {
                let ly = y + size * 1.3;
                ops.push(Draw::Line { x1: l, y1: ly, x2: r, y2: ly, color: style.rule, width: 0.4 });
                let mut shown = String::new();
                let mut tw = 0.0;
                for c in title.chars() {
                    let cw = self.measure(face, c, size).2;
                    if tw + cw > (r - l) * 0.7 {
                        shown.push('…');
                        break;
                    }
                    tw += cw;
                    shown.push(c);
                }
                if !shown.trim().is_empty() {
                    ops.push(Draw::Text {
                        x: l,
                        y,
                        face,
                        size,
                        color: style.rule,
                        bold: false,
                        italic: false,
                        text: shown,
                        spacing: 0.0,
                    });
                }
            }
            self.pages[p].extend(ops);
        }
    }
}
