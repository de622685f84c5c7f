//! The page layout: the block model in, pages of positioned drawing operations out.
//!
//! Pure and deterministic: fonts are seen only through [`Metrics`] (advance widths) and images
//! through a resolver that answers with pixel sizes, so the layout can be tested without a PDF.
//! Coordinates in the output are PDF points from the bottom-left corner; text `y` is the
//! baseline.
//!
//! Invariants:
//!
//! - Nothing is cut off: a line that does not fit goes to the next page; code blocks and table
//!   rows that do not fit are split between lines, and a table repeats its header row on every
//!   page it continues on.
//! - Every character of the source text is drawn once, in reading order (spaces at wrap points
//!   excepted); a character the font lacks is drawn as 〓 and reported once as a warning.

use std::collections::BTreeSet;

use super::blocks::{Block, Book, Span, plain};
use super::linebreak::Piece;
use super::style::{HeadingLook, Rgb, Style};
use crate::markdown::text_rules;

mod code;
mod folio;
mod heading;
mod image;
mod list;
mod quote;
mod table;
mod text;

/// A typeface of the book.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Face {
    /// The Japanese gothic (sans-serif) face.
    Sans,
    /// The Japanese mincho (serif) face; the gothic one when no mincho is installed.
    Serif,
    /// A monospaced Latin face for code (characters it lacks come from the body face).
    Mono,
}

/// Font metrics the layout needs.
pub trait Metrics {
    /// The advance of `ch` in `face`, in em, or `None` when the face has no glyph for it.
    fn advance(&self, face: Face, ch: char) -> Option<f32>;
}

/// What an image resolves to.
pub type ImageAnswer = std::result::Result<(usize, u32, u32), String>;

/// One positioned drawing operation.
#[derive(Clone, Debug, PartialEq)]
pub enum Draw {
    /// A run of text in one look.
    Text {
        /// Left of the run.
        x: f32,
        /// Baseline.
        y: f32,
        /// Typeface.
        face: Face,
        /// Size in points.
        size: f32,
        /// Fill colour.
        color: Rgb,
        /// Synthesised bold (the fonts have one weight).
        bold: bool,
        /// Synthesised oblique.
        italic: bool,
        /// The characters.
        text: String,
        /// Extra space after every glyph, in points (the PDF's character spacing): a justified
        /// run of CJK characters is one operation; 0 for ordinary text.
        spacing: f32,
    },
    /// A rectangle.
    Rect {
        /// Left.
        x: f32,
        /// Bottom.
        y: f32,
        /// Width.
        w: f32,
        /// Height.
        h: f32,
        /// Fill colour.
        fill: Option<Rgb>,
        /// Outline colour and width.
        stroke: Option<(Rgb, f32)>,
    },
    /// A straight line.
    Line {
        /// Start.
        x1: f32,
        /// Start.
        y1: f32,
        /// End.
        x2: f32,
        /// End.
        y2: f32,
        /// Colour.
        color: Rgb,
        /// Width.
        width: f32,
    },
    /// An image placed in a box.
    Image {
        /// The resolver's image number.
        id: usize,
        /// Left.
        x: f32,
        /// Bottom.
        y: f32,
        /// Width.
        w: f32,
        /// Height.
        h: f32,
    },
    /// A clickable area opening `target`.
    Link {
        /// Left.
        x: f32,
        /// Bottom.
        y: f32,
        /// Width.
        w: f32,
        /// Height.
        h: f32,
        /// The URL.
        target: String,
    },
}

/// One heading for the PDF outline.
#[derive(Clone, Debug, PartialEq)]
pub struct OutlineEntry {
    /// 1–6.
    pub level: u8,
    /// The heading as shown (with its number, if the style numbers headings).
    pub title: String,
    /// Page index (0-based).
    pub page: usize,
    /// Top of the heading in PDF points.
    pub y: f32,
    /// The heading's explicit `{#id}`: links to `#id` lead here.
    pub id: Option<String>,
}

/// The laid-out book.
#[derive(Debug, Default)]
pub struct Laid {
    /// Per page, the drawing operations.
    pub pages: Vec<Vec<Draw>>,
    /// Headings in order.
    pub outline: Vec<OutlineEntry>,
    /// Characters the fonts lack, and similar notes.
    pub warnings: Vec<String>,
}

/// Lays `book` out on pages of `page` (width, height in points).
pub fn lay_out(
    book: &Book,
    style: &Style,
    page: (f32, f32),
    metrics: &dyn Metrics,
    images: &mut dyn FnMut(&str) -> ImageAnswer,
    serif_available: bool,
) -> Laid {
    let body_face = if style.serif && serif_available { Face::Serif } else { Face::Sans };
    let mut l = Layout {
        style,
        metrics,
        images,
        page_w: page.0,
        page_h: page.1,
        pages: vec![Vec::new()],
        y: style.margins[0],
        left: style.margins[3],
        right: page.0 - style.margins[1],
        bars: Vec::new(),
        marker: None,
        outline: Vec::new(),
        missing: BTreeSet::new(),
        numbers: [0; 6],
        body_face,
        color: style.text,
        list_depth: 0,
        top_level: book
            .blocks
            .iter()
            .filter_map(|b| match b {
                Block::Heading { level, .. } => Some(*level),
                _ => None,
            })
            .min()
            .unwrap_or(1),
        japanese: book.title.as_deref().is_some_and(text_rules::has_japanese)
            || blocks_have_japanese(&book.blocks),
    };
    if let Some(title) = &book.title {
        l.title(title);
    }
    l.blocks(&book.blocks);
    let running = book.title.clone().or_else(|| {
        book.blocks.iter().find_map(|b| match b {
            Block::Heading { level: 1, spans, .. } => Some(plain(spans)),
            _ => None,
        })
    });
    l.folios(running.as_deref().unwrap_or(""));
    let mut warnings = Vec::new();
    if !l.missing.is_empty() {
        let chars: String = l.missing.iter().collect();
        warnings.push(format!("The font has no glyph for these characters; they are shown as 〓: {chars}"));
    }
    Laid { pages: l.pages, outline: l.outline, warnings }
}

/// The look of a run of text.
#[derive(Clone, Debug, PartialEq)]
struct Look {
    face: Face,
    size: f32,
    color: Rgb,
    bold: bool,
    italic: bool,
    code: bool,
    strike: bool,
    link: Option<String>,
    /// How far the baseline is raised (a footnote reference's number).
    rise: f32,
}

impl Look {
    /// Plain text of `face`, `size` and `color`: no emphasis, no link, on the baseline.
    fn plain(face: Face, size: f32, color: Rgb) -> Look {
        Look {
            face,
            size,
            color,
            bold: false,
            italic: false,
            code: false,
            strike: false,
            link: None,
            rise: 0.0,
        }
    }
}

/// Text measured into pieces, each with the index of its look.
#[derive(Clone, Default)]
struct Shaped {
    pieces: Vec<Piece>,
    look_of: Vec<usize>,
    looks: Vec<Look>,
    /// Where punctuation is set half-width ([`tighten_punctuation`]): each piece's glyph advance
    /// (its `width` is then the space it takes on the line) and how far its glyph is drawn to
    /// the left of its place. Empty: every glyph takes its own advance, unshifted.
    natural: Vec<f32>,
    shift: Vec<f32>,
}

impl Shaped {
    /// The advance the font gives piece `k`'s glyph.
    fn natural(&self, k: usize) -> f32 {
        self.natural.get(k).copied().unwrap_or(self.pieces[k].width)
    }

    /// How far piece `k`'s glyph is drawn from its place on the line (negative: to the left).
    fn shift(&self, k: usize) -> f32 {
        self.shift.get(k).copied().unwrap_or(0.0)
    }
}

/// A list marker waiting for the first line of its item.
#[derive(Clone, Debug)]
enum Marker {
    /// A bullet or number, right-aligned at `right`.
    Text { text: String, right: f32 },
    /// A task box whose right edge is `right`.
    Task { done: bool, right: f32 },
}

struct Layout<'a> {
    style: &'a Style,
    metrics: &'a dyn Metrics,
    images: &'a mut dyn FnMut(&str) -> ImageAnswer,
    page_w: f32,
    page_h: f32,
    pages: Vec<Vec<Draw>>,
    /// Distance of the cursor from the top of the page.
    y: f32,
    left: f32,
    right: f32,
    /// x of the bar of each open block quote.
    bars: Vec<f32>,
    marker: Option<Marker>,
    outline: Vec<OutlineEntry>,
    missing: BTreeSet<char>,
    numbers: [u32; 6],
    body_face: Face,
    /// Current text colour (quotes are lighter).
    color: Rgb,
    list_depth: usize,
    /// The highest heading level used: numbering starts there (a chapter may begin at `##`).
    top_level: u8,
    /// The book holds Japanese text: emphasis is set in gothic (`markdown::text_rules`).
    japanese: bool,
}

/// The width of the bar of a block quote.
const BAR: f32 = 2.0;

impl Layout<'_> {
    fn top(&self) -> f32 {
        self.style.margins[0]
    }

    fn bottom(&self) -> f32 {
        self.page_h - self.style.margins[2]
    }

    fn width(&self) -> f32 {
        self.right - self.left
    }

    /// PDF y of a distance from the top.
    fn pdf_y(&self, from_top: f32) -> f32 {
        self.page_h - from_top
    }

    fn push(&mut self, draw: Draw) {
        if let Some(page) = self.pages.last_mut() {
            page.push(draw);
        }
    }

    fn at_top(&self) -> bool {
        self.y <= self.top() + 0.5
    }

    fn new_page(&mut self) {
        self.pages.push(Vec::new());
        self.y = self.top();
    }

    /// Starts a new page unless `h` more points fit on this one (or this one is still empty).
    fn ensure(&mut self, h: f32) {
        if self.y + h > self.bottom() + 0.01 && !self.at_top() {
            self.new_page();
        }
    }

    /// Moves down by `dy`, drawing the bars of open block quotes alongside.
    fn advance(&mut self, dy: f32) {
        let from = self.y;
        let to = (self.y + dy).min(self.bottom());
        if to > from {
            for x in self.bars.clone() {
                let (y1, y2) = (self.pdf_y(from), self.pdf_y(to));
                self.push(Draw::Line { x1: x, y1, x2: x, y2, color: self.style.rule, width: BAR });
            }
        }
        self.y += dy;
    }

    /// The space between two blocks (none at the top of a page).
    fn gap(&mut self, lines: f32) {
        if !self.at_top() {
            self.advance(self.style.line() * lines);
        }
    }

    fn text_look(&self, face: Face, size: f32) -> Look {
        Look::plain(face, size, self.color)
    }

    fn link_color(&self) -> Rgb {
        let a = self.style.accent;
        if (a.0 - a.1).abs() < 0.05 && (a.1 - a.2).abs() < 0.05 { Rgb::hex(0x1F4E99) } else { a }
    }

    /// The advance of `ch` in `face` at `size`, falling back from mono and serif to sans, and to
    /// 〓 when no face has it.
    fn measure(&mut self, face: Face, ch: char, size: f32) -> (Face, char, f32) {
        if let Some(a) = self.metrics.advance(face, ch) {
            return (face, ch, a * size);
        }
        if face != Face::Sans
            && let Some(a) = self.metrics.advance(Face::Sans, ch)
        {
            return (Face::Sans, ch, a * size);
        }
        self.missing.insert(ch);
        let a = self.metrics.advance(Face::Sans, '〓').unwrap_or(1.0);
        (Face::Sans, '〓', a * size)
    }

    fn blocks(&mut self, blocks: &[Block]) {
        for (i, block) in blocks.iter().enumerate() {
            self.block(block, i == 0);
        }
        if self.marker.is_some() {
            // An empty list item: its marker on a line of its own.
            let size = self.style.body;
            let lh = self.style.line();
            self.ensure(lh);
            let baseline = self.pdf_y(self.y + (lh - size) / 2.0 + size * 0.86);
            self.draw_marker(baseline, size);
            self.advance(lh);
        }
    }

    fn block(&mut self, block: &Block, first: bool) {
        if let Block::Heading { level, id, spans } = block {
            self.heading(*level, id.as_deref(), spans, first);
            return;
        }
        if !first {
            self.gap(if self.list_depth > 0 { self.style.gap * 0.4 } else { self.style.gap });
        }
        match block {
            Block::Heading { .. } => {}
            Block::Paragraph(spans) => {
                let base = self.text_look(self.body_face, self.style.body);
                let mut shaped = Shaped::default();
                if self.style.indent && self.list_depth == 0 && self.bars.is_empty() {
                    // 字下げ: one full-width space, not drawn.
                    shaped.pieces.push(Piece { ch: '\u{3000}', width: self.style.body });
                    shaped.look_of.push(0);
                    shaped.looks.push(base.clone());
                }
                self.shape(spans, &base, &mut shaped);
                self.justified(&shaped, self.style.leading);
            }
            Block::List { start, items } => self.list(*start, items),
            Block::Quote(blocks) => self.quote(None, blocks),
            Block::Alert { title, blocks, .. } => self.quote(Some(title), blocks),
            Block::Footnotes(notes) => self.footnotes(notes),
            Block::Code { lang, text } => self.code(lang, text),
            Block::Table { aligns, header, rows } => self.table(aligns, header, rows),
            Block::Rule => self.rule(),
            Block::Image { src, alt } => self.image(src, alt),
        }
    }

    fn rule(&mut self) {
        let style = self.style;
        let lh = style.line();
        self.ensure(lh);
        let y = self.pdf_y(self.y + lh / 2.0);
        let (x1, x2, color, width) = match style.heading {
            HeadingLook::Ruled => {
                let c = self.left + self.width() / 2.0;
                (c - self.width() * 0.15, c + self.width() * 0.15, style.rule, 0.8)
            }
            HeadingLook::Bar => (self.left, self.right, style.accent, 1.0),
            _ => (self.left, self.right, style.rule, 0.5),
        };
        self.push(Draw::Line { x1, y1: y, x2, y2: y, color, width });
        self.advance(lh);
    }
}

/// Whether any text of `blocks` is Japanese.
fn blocks_have_japanese(blocks: &[Block]) -> bool {
    let spans = |spans: &[Span]| spans.iter().any(|s| text_rules::has_japanese(&s.text));
    blocks.iter().any(|b| match b {
        Block::Heading { spans: s, .. } | Block::Paragraph(s) => spans(s),
        Block::List { items, .. } => items.iter().any(|i| blocks_have_japanese(&i.blocks)),
        Block::Quote(inner) => blocks_have_japanese(inner),
        Block::Alert { title, blocks, .. } => text_rules::has_japanese(title) || blocks_have_japanese(blocks),
        Block::Footnotes(notes) => notes.iter().any(|n| blocks_have_japanese(&n.blocks)),
        Block::Table { header, rows, .. } => {
            header.iter().any(|c| spans(c)) || rows.iter().flatten().any(|c| spans(c))
        }
        Block::Image { alt, .. } => text_rules::has_japanese(alt),
        Block::Code { .. } | Block::Rule => false,
    })
}

#[cfg(test)]
mod tests;
