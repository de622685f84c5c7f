//! Images on their own: scaled to the text width, kept on one page, with their caption.

use super::{Draw, Look, Shaped};
use crate::export::blocks::{Align, Span};
use crate::export::linebreak::{Mode, break_lines};
use crate::export::style::Rgb;

impl super::Layout<'_> {
    pub(super) fn image(&mut self, src: &str, alt: &str) {
        let style = self.style;
        let max_w = self.width();
        let max_h = (self.bottom() - self.top()) * 0.8;
        let answer = (self.images)(src);
        match answer {
            Ok((id, pw, ph)) => {
                // Pixels at 96 per inch, shrunk to fit (never enlarged).
                let (w0, h0) = (pw.max(1) as f32 * 0.75, ph.max(1) as f32 * 0.75);
                let k = (max_w / w0).min(max_h / h0).min(1.0);
                let (w, h) = (w0 * k, h0 * k);
                self.ensure(h);
                let x = self.left + (max_w - w) / 2.0;
                let y = self.pdf_y(self.y + h);
                self.push(Draw::Image { id, x, y, w, h });
                self.advance(h);
                if !alt.trim().is_empty() {
                    self.caption(alt);
                }
            }
            Err(reason) => {
                let size = style.body * 0.85;
                let lh = size * 1.5;
                let mut shaped = Shaped::default();
                let look = Look { color: style.rule, ..self.text_look(self.body_face, size) };
                let label = if alt.trim().is_empty() { src.to_owned() } else { format!("{alt}（{src}）") };
                self.shape(
                    &[Span { text: format!("［画像なし］{label}\n{reason}"), ..Span::default() }],
                    &look,
                    &mut shaped,
                );
                let inner = max_w * 0.8 - size * 2.0;
                let lines = break_lines(&shaped.pieces, inner, Mode::Prose);
                let h = lines.len() as f32 * lh + size * 2.0;
                self.ensure(h);
                let x = self.left + max_w * 0.1;
                let y = self.pdf_y(self.y + h);
                self.push(Draw::Rect {
                    x,
                    y,
                    w: max_w * 0.8,
                    h,
                    fill: Some(Rgb::hex(0xFAFAFA)),
                    stroke: Some((style.rule, 0.6)),
                });
                self.advance(size);
                for r in lines {
                    let baseline = self.pdf_y(self.y + (lh - size) / 2.0 + size * 0.86);
                    self.runs(&shaped, r, x + size, baseline);
                    self.advance(lh);
                }
                self.advance(size);
            }
        }
    }

    pub(super) fn caption(&mut self, text: &str) {
        let size = self.style.body * 0.85;
        let mut shaped = Shaped::default();
        let look = Look { color: self.style.rule, ..self.text_look(self.body_face, size) };
        self.shape(&[Span { text: text.to_owned(), ..Span::default() }], &look, &mut shaped);
        self.advance(size * 0.3);
        self.paragraph(&shaped, Align::Center, 1.4);
    }
}
