//! Block quotes and alerts: a bar down the left, lighter text, an alert's title on top.

use super::{BAR, Shaped};
use crate::export::blocks::{Align, Block, Span};
use crate::export::style::Rgb;

impl super::Layout<'_> {
    /// A block quote, or an alert: its title in bold accent over the quote's blocks.
    pub(super) fn quote(&mut self, title: Option<&str>, blocks: &[Block]) {
        let (left, color) = (self.left, self.color);
        self.bars.push(self.left + BAR / 2.0);
        self.left += self.style.body * 1.2;
        self.color =
            Rgb(color.0 * 0.55 + 0.45 * 0.35, color.1 * 0.55 + 0.45 * 0.35, color.2 * 0.55 + 0.45 * 0.35);
        if let Some(title) = title {
            let mut look = self.text_look(self.body_face, self.style.body);
            look.bold = true;
            look.color = self.style.accent;
            let mut shaped = Shaped::default();
            self.shape(&[Span { text: title.to_owned(), ..Span::default() }], &look, &mut shaped);
            self.paragraph(&shaped, Align::Left, self.style.leading);
        }
        self.blocks(blocks);
        self.bars.pop();
        self.left = left;
        self.color = color;
    }
}
