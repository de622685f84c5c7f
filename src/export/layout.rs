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

use super::blocks::{Align, Block, Book, Item, Note, Span, plain};
use super::linebreak::{Mode, Piece, break_lines, can_break, hangs, is_cjk, no_end, no_start};
use super::style::{CodeLook, Folio, HeadingLook, Rgb, Style, TableLook};
use crate::markdown::text_rules::{self, Emphasis};

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
        Look {
            face,
            size,
            color: self.color,
            bold: false,
            italic: false,
            code: false,
            strike: false,
            link: None,
            rise: 0.0,
        }
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

    /// Measures spans into pieces.
    fn shape(&mut self, spans: &[Span], base: &Look, shaped: &mut Shaped) {
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

    fn look_index(&self, shaped: &mut Shaped, look: &Look) -> usize {
        match shaped.looks.iter().position(|l| l == look) {
            Some(i) => i,
            None => {
                shaped.looks.push(look.clone());
                shaped.looks.len() - 1
            }
        }
    }

    /// Draws a pending list marker on the line whose baseline is `baseline` (PDF y).
    fn draw_marker(&mut self, baseline: f32, size: f32) {
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

    /// Lays out shaped text as wrapped lines between `left` and `right`.
    fn paragraph(&mut self, shaped: &Shaped, align: Align, leading: f32) {
        self.set_lines(shaped, align, leading, false);
    }

    /// Lays out body text justified: consecutive punctuation set half-width, every line but the
    /// last (and those ended by a hard break) stretched to the right edge.
    fn justified(&mut self, shaped: &Shaped, leading: f32) {
        let mut shaped = shaped.clone();
        tighten_punctuation(&mut shaped);
        self.set_lines(&shaped, Align::Left, leading, true);
    }

    fn set_lines(&mut self, shaped: &Shaped, align: Align, leading: f32, justify: bool) {
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
    fn runs(&mut self, shaped: &Shaped, range: std::ops::Range<usize>, x: f32, baseline: f32) {
        self.runs_spaced(shaped, range, x, baseline, &[]);
    }

    /// Draws pieces `range` of `shaped` from `x` on `baseline` with `extra[k]` points added after
    /// piece `range.start + k` (justification; empty: none). One text operation per look where
    /// the glyphs sit at their own advances, more where spacing or half-width punctuation moves
    /// them; underlines, strike-through, code tint and link areas span the whole look.
    fn runs_spaced(
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
            if look.strike {
                let y = baseline + size * 0.32;
                self.push(Draw::Line {
                    x1: x,
                    y1: y,
                    x2: x + w,
                    y2: y,
                    color: look.color,
                    width: size * 0.06,
                });
            }
            if let Some(target) = &look.link {
                let y = baseline - size * 0.12;
                self.push(Draw::Line { x1: x, y1: y, x2: x + w, y2: y, color: look.color, width: 0.4 });
                self.push(Draw::Link {
                    x,
                    y: baseline - size * 0.25,
                    w,
                    h: size * 1.2,
                    target: target.clone(),
                });
            }
            i = j;
        }
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
        let gap = if self.list_depth > 0 { self.style.gap * 0.4 } else { self.style.gap };
        match block {
            Block::Heading { level, id, spans } => self.heading(*level, id.as_deref(), spans, first),
            Block::Paragraph(spans) => {
                if !first {
                    self.gap(gap);
                }
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
            Block::List { start, items } => {
                if !first {
                    self.gap(gap);
                }
                self.list(*start, items);
            }
            Block::Quote(blocks) => {
                if !first {
                    self.gap(gap);
                }
                self.quote(None, blocks);
            }
            Block::Alert { title, blocks, .. } => {
                if !first {
                    self.gap(gap);
                }
                self.quote(Some(title), blocks);
            }
            Block::Footnotes(notes) => {
                if !first {
                    self.gap(gap);
                }
                self.footnotes(notes);
            }
            Block::Code { lang, text } => {
                if !first {
                    self.gap(gap);
                }
                self.code(lang, text);
            }
            Block::Table { aligns, header, rows } => {
                if !first {
                    self.gap(gap);
                }
                self.table(aligns, header, rows);
            }
            Block::Rule => {
                if !first {
                    self.gap(gap);
                }
                self.rule();
            }
            Block::Image { src, alt } => {
                if !first {
                    self.gap(gap);
                }
                self.image(src, alt);
            }
        }
    }

    /// A block quote, or an alert: its title in bold accent over the quote's blocks.
    fn quote(&mut self, title: Option<&str>, blocks: &[Block]) {
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

    /// The footnotes after the body: a short rule, then each body after its number.
    fn footnotes(&mut self, notes: &[Note]) {
        let size = self.style.body;
        let y = self.pdf_y(self.y);
        let (x1, x2) = (self.left, self.left + self.width() / 3.0);
        self.push(Draw::Line { x1, y1: y, x2, y2: y, color: self.style.rule, width: 0.5 });
        self.advance(self.style.line() * 0.5);
        let last = notes.iter().map(|n| n.number).max().unwrap_or(1);
        let widest: f32 = format!("{last}.").chars().map(|c| self.measure(self.body_face, c, size).2).sum();
        let marker_w = widest + size * 0.5;
        let left = self.left;
        self.list_depth += 1;
        for (i, note) in notes.iter().enumerate() {
            if i > 0 {
                self.advance(self.style.line() * self.style.gap * 0.25);
            }
            let right = left + marker_w - size * 0.35;
            self.marker = Some(Marker::Text { text: format!("{}.", note.number), right });
            self.left = left + marker_w;
            self.blocks(&note.blocks);
            self.left = left;
        }
        self.list_depth -= 1;
    }

    fn title(&mut self, title: &str) {
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

    fn heading(&mut self, level: u8, id: Option<&str>, spans: &[Span], first: bool) {
        let style = self.style;
        let level = level.clamp(1, 6);
        let scale = style.heading_scale[usize::from(level) - 1];
        let size = style.body * scale;
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
        self.advance(style.line() * 0.35);
    }

    fn list(&mut self, start: Option<u64>, items: &[Item]) {
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
        let left = self.left;
        self.list_depth += 1;
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.advance(self.style.line() * self.style.gap * 0.25);
            }
            let right = left + marker_w - size * 0.35;
            self.marker = Some(match (item.task, numbers) {
                (Some(done), _) => Marker::Task { done, right },
                (None, Some((s, _))) => Marker::Text { text: format!("{}.", s + i as u64), right },
                (None, None) => Marker::Text { text: bullet.to_string(), right },
            });
            self.left = left + marker_w;
            self.blocks(&item.blocks);
            self.left = left;
        }
        self.list_depth -= 1;
    }

    fn bullet(&mut self, depth: usize) -> char {
        let candidates: &[char] = match depth % 3 {
            0 => &['•', '●', '・'],
            1 => &['◦', '○', '・'],
            _ => &['▪', '■', '・'],
        };
        candidates.iter().copied().find(|c| self.metrics.advance(self.body_face, *c).is_some()).unwrap_or('-')
    }

    fn code(&mut self, _lang: &str, text: &str) {
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

    fn image(&mut self, src: &str, alt: &str) {
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

    fn caption(&mut self, text: &str) {
        let size = self.style.body * 0.85;
        let mut shaped = Shaped::default();
        let look = Look { color: self.style.rule, ..self.text_look(self.body_face, size) };
        self.shape(&[Span { text: text.to_owned(), ..Span::default() }], &look, &mut shaped);
        self.advance(size * 0.3);
        self.paragraph(&shaped, Align::Center, 1.4);
    }

    fn table(&mut self, aligns: &[Align], header: &[Vec<Span>], rows: &[Vec<Vec<Span>>]) {
        let style = self.style;
        let size = style.body * 0.92;
        let lh = size * 1.45;
        let (hpad, vpad) = (size * 0.45, size * 0.3);
        let columns = header.len().max(rows.iter().map(Vec::len).max().unwrap_or(0)).max(1);
        let avail = self.width();
        let header_look = {
            let mut l = self.text_look(self.body_face, size);
            l.bold = true;
            if style.table == TableLook::Banded {
                l.color = Rgb::WHITE;
            }
            l
        };
        let body_look = Look { color: style.text, ..self.text_look(self.body_face, size) };
        let shape_row = |this: &mut Self, cells: &[Vec<Span>], look: &Look| -> Vec<Shaped> {
            (0..columns)
                .map(|c| {
                    let mut s = Shaped::default();
                    if let Some(cell) = cells.get(c) {
                        this.shape(cell, look, &mut s);
                    }
                    s
                })
                .collect()
        };
        let head = shape_row(self, header, &header_look);
        let body: Vec<Vec<Shaped>> = rows.iter().map(|r| shape_row(self, r, &body_look)).collect();

        // Column widths from content: natural (one line) and minimum (longest unbreakable part).
        let mut natural = vec![size; columns];
        let mut minimum = vec![size; columns];
        for row in std::iter::once(&head).chain(body.iter()) {
            for (c, cell) in row.iter().enumerate() {
                let (nat, min) = widths(&cell.pieces);
                natural[c] = natural[c].max(nat);
                // Short words (up to four characters) are not broken either.
                minimum[c] = minimum[c].max(min.max(nat.min(size * 4.0)).min(avail * 0.3));
            }
        }
        let inner = avail - 2.0 * hpad * columns as f32;
        let total_nat: f32 = natural.iter().sum();
        let total_min: f32 = minimum.iter().sum();
        let cols: Vec<f32> = if total_nat <= inner {
            natural.clone()
        } else if total_min >= inner {
            minimum.iter().map(|m| m * inner / total_min).collect()
        } else {
            let spare = inner - total_min;
            let stretch: f32 = natural.iter().zip(&minimum).map(|(n, m)| n - m).sum::<f32>().max(0.01);
            natural.iter().zip(&minimum).map(|(n, m)| m + (n - m) * spare / stretch).collect()
        };
        let col_w: Vec<f32> = cols.iter().map(|w| w + 2.0 * hpad).collect();
        let table_w: f32 = col_w.iter().sum();
        let x0 = self.left;

        let lines_of = |row: &[Shaped]| -> Vec<Vec<std::ops::Range<usize>>> {
            row.iter().zip(&cols).map(|(s, w)| break_lines(&s.pieces, *w + 0.5, Mode::Prose)).collect()
        };
        let head_lines = lines_of(&head);
        let head_h = head_lines.iter().map(Vec::len).max().unwrap_or(1) as f32 * lh + 2.0 * vpad;

        // The whole header plus the first row should start on one page.
        let first_h = body
            .first()
            .map_or(0.0, |r| lines_of(r).iter().map(Vec::len).max().unwrap_or(1) as f32 * lh + 2.0 * vpad);
        self.ensure(head_h + first_h.min(lh * 3.0 + 2.0 * vpad));
        let rule_top = |this: &mut Self, width: f32| {
            let y = this.pdf_y(this.y);
            this.push(Draw::Line { x1: x0, y1: y, x2: x0 + table_w, y2: y, color: style.rule, width });
        };
        let draw_header = |this: &mut Self| {
            if style.table == TableLook::Booktabs {
                rule_top(this, 1.0);
            }
            this.row(&head, &head_lines, 0, &col_w, aligns, (hpad, vpad, lh, size), true);
            if style.table == TableLook::Booktabs {
                rule_top(this, 0.5);
            }
        };
        draw_header(self);
        for row in &body {
            let lines = lines_of(row);
            let count = lines.iter().map(Vec::len).max().unwrap_or(1);
            let mut from = 0;
            loop {
                let left = count - from;
                let need = left as f32 * lh + 2.0 * vpad;
                let room = self.bottom() - self.y;
                if need <= room + 0.01 {
                    self.row(row, &lines, from, &col_w, aligns, (hpad, vpad, lh, size), false);
                    break;
                }
                let fit = ((room - 2.0 * vpad) / lh).floor().max(0.0) as usize;
                let page_body = self.bottom() - self.top() - head_h;
                if fit == 0 || (from == 0 && need <= page_body) {
                    // Move the row to the next page (it fits there), or nothing fits here.
                    if style.table == TableLook::Booktabs {
                        rule_top(self, 1.0);
                    }
                    self.new_page();
                    draw_header(self);
                    continue;
                }
                let mut part = lines.clone();
                for cell in &mut part {
                    cell.truncate(from + fit);
                }
                self.row(row, &part, from, &col_w, aligns, (hpad, vpad, lh, size), false);
                from += fit;
                if style.table == TableLook::Booktabs {
                    rule_top(self, 1.0);
                }
                self.new_page();
                draw_header(self);
            }
        }
        if style.table == TableLook::Booktabs {
            rule_top(self, 1.0);
        }
    }

    /// Draws lines `from..` of one table row at the cursor and moves below it.
    #[allow(clippy::too_many_arguments)]
    fn row(
        &mut self,
        cells: &[Shaped],
        lines: &[Vec<std::ops::Range<usize>>],
        from: usize,
        col_w: &[f32],
        aligns: &[Align],
        (hpad, vpad, lh, size): (f32, f32, f32, f32),
        header: bool,
    ) {
        let style = self.style;
        let count = lines.iter().map(|l| l.len().saturating_sub(from)).max().unwrap_or(0).max(1);
        let h = count as f32 * lh + 2.0 * vpad;
        let top = self.y;
        let y = self.pdf_y(top + h);
        let mut x = self.left;
        for (c, w) in col_w.iter().enumerate() {
            let (fill, stroke) = match (style.table, header) {
                (TableLook::Grid, true) => (Some(style.tint), Some((style.rule, 0.5))),
                (TableLook::Grid, false) => (None, Some((style.rule, 0.5))),
                (TableLook::Banded, true) => (Some(style.accent), None),
                _ => (None, None),
            };
            if fill.is_some() || stroke.is_some() {
                self.push(Draw::Rect { x, y, w: *w, h, fill, stroke });
            }
            if let (Some(cell), Some(cell_lines)) = (cells.get(c), lines.get(c)) {
                let align = aligns.get(c).copied().unwrap_or(Align::Left);
                for (k, r) in cell_lines.iter().skip(from).enumerate() {
                    let lw: f32 = r.clone().map(|i| cell.pieces[i].width).sum();
                    let inner = w - 2.0 * hpad;
                    let lx = match align {
                        Align::Left => x + hpad,
                        Align::Center => x + hpad + (inner - lw).max(0.0) / 2.0,
                        Align::Right => x + hpad + (inner - lw).max(0.0),
                    };
                    let baseline = self.pdf_y(top + vpad + k as f32 * lh + (lh - size) / 2.0 + size * 0.86);
                    self.runs(cell, r.clone(), lx, baseline);
                }
            }
            x += w;
        }
        if style.table == TableLook::Banded {
            let table_w: f32 = col_w.iter().sum();
            self.push(Draw::Line {
                x1: self.left,
                y1: y,
                x2: self.left + table_w,
                y2: y,
                color: style.rule,
                width: 0.5,
            });
        }
        self.advance(h);
    }

    /// Page numbers (and the running title) on every page.
    fn folios(&mut self, title: &str) {
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

/// The natural (one-line) width and the widest unbreakable part of `pieces`.
fn widths(pieces: &[Piece]) -> (f32, f32) {
    let (mut line, mut natural) = (0.0_f32, 0.0_f32);
    let (mut part, mut widest) = (0.0_f32, 0.0_f32);
    for (i, p) in pieces.iter().enumerate() {
        if p.ch == '\n' {
            natural = natural.max(line);
            line = 0.0;
            widest = widest.max(part);
            part = 0.0;
            continue;
        }
        if i > 0 && can_break(pieces[i - 1].ch, p.ch) {
            widest = widest.max(part);
            part = 0.0;
        }
        line += p.width;
        if p.ch != ' ' {
            part += p.width;
        }
    }
    (natural.max(line), widest.max(part))
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

/// Closing punctuation: its glyph sits in the left half of its full-width box.
fn closing(c: char) -> bool {
    matches!(
        c,
        '、' | '。'
            | '，'
            | '．'
            | '」'
            | '』'
            | '）'
            | '］'
            | '｝'
            | '】'
            | '〉'
            | '》'
            | '〕'
            | '〙'
            | '〗'
            | '〟'
    )
}

/// Opening brackets: the glyph sits in the right half of its full-width box.
fn opening(c: char) -> bool {
    matches!(c, '「' | '『' | '（' | '［' | '｛' | '【' | '〈' | '《' | '〔' | '〘' | '〖' | '〝')
}

/// Consecutive punctuation set half-width (JIS X 4051): closing punctuation followed by more
/// punctuation keeps only its glyph half (`。」`, `」「`, `）、`), and an opening bracket after
/// another opening bracket drops its empty left half (`（「`). Only full-width glyphs are
/// touched; a proportional font's brackets are already tight.
fn tighten_punctuation(shaped: &mut Shaped) {
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
fn justification(shaped: &Shaped, range: std::ops::Range<usize>, width: f32) -> Vec<f32> {
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

#[cfg(test)]
mod typesetting_tests {
    use super::*;
    use crate::export::blocks::parse;
    use crate::export::style::{PageFormat, StyleName};

    /// CJK characters 1 em, everything else half.
    struct Grid;

    impl Metrics for Grid {
        fn advance(&self, _face: Face, ch: char) -> Option<f32> {
            Some(if is_cjk(ch) { 1.0 } else { 0.5 })
        }
    }

    fn lay(md: &str, style: StyleName) -> (Style, Laid) {
        let style = Style::new(style, PageFormat::A5);
        let laid = lay_out(&parse(md), &style, (400.0, 600.0), &Grid, &mut |_| Err("none".into()), true);
        (style, laid)
    }

    /// One text operation: x, right end, text.
    type Run = (f32, f32, String);

    /// Text operations per baseline: (y, runs).
    fn lines(laid: &Laid) -> Vec<(f32, Vec<Run>)> {
        let mut out: Vec<(f32, Vec<Run>)> = Vec::new();
        for d in &laid.pages[0] {
            let Draw::Text { x, y, size, text, spacing, .. } = d else { continue };
            let w: f32 = text.chars().map(|c| Grid.advance(Face::Sans, c).unwrap() * size).sum::<f32>()
                + spacing * (text.chars().count() as f32 - 1.0);
            match out.iter_mut().find(|(ly, _)| (ly - y).abs() < 0.01) {
                Some((_, runs)) => runs.push((*x, x + w, text.clone())),
                None => out.push((*y, vec![(*x, x + w, text.clone())])),
            }
        }
        out
    }

    #[test]
    fn every_line_of_a_paragraph_but_the_last_ends_at_the_right_edge() {
        let para = "日本語の本文は両端揃えで組みます。英単語 configuration と数字 2026 が混じる行も、右端をそろえます。"
            .repeat(3);
        for name in [StyleName::Classic, StyleName::Modern] {
            let (style, laid) = lay(&format!("{para}\n"), name);
            let right = 400.0 - style.margins[1];
            let lines = lines(&laid);
            let body: Vec<_> =
                lines.iter().filter(|(_, runs)| runs.iter().any(|r| r.2.chars().any(is_cjk))).collect();
            assert!(body.len() >= 4, "{name:?}: {lines:?}");
            for (y, runs) in &body[..body.len() - 1] {
                let end = runs.iter().map(|r| r.1).fold(f32::MIN, f32::max);
                let last = runs.last().unwrap().2.chars().last().unwrap();
                let hangs = matches!(last, '、' | '。');
                assert!(
                    (end - right).abs() < 0.05 || (hangs && end > right),
                    "{name:?}: the line at {y} ends at {end}, not {right}: {runs:?}"
                );
            }
            let (_, final_runs) = body.last().unwrap();
            assert!(
                final_runs.iter().map(|r| r.1).fold(f32::MIN, f32::max) < right - 1.0,
                "the last line is not stretched"
            );
        }
    }

    #[test]
    fn latin_words_are_not_letter_spaced_only_the_gaps_between_them() {
        let para = "漢字 configuration and synchronization are long words that wrap somewhere in this line of text, 漢字。\n";
        let (_, laid) = lay(para, StyleName::Modern);
        let texts: Vec<String> = laid.pages[0]
            .iter()
            .filter_map(|d| if let Draw::Text { text, .. } = d { Some(text.clone()) } else { None })
            .collect();
        assert!(texts.iter().any(|t| t.contains("configuration")), "{texts:?}");
        assert!(texts.iter().any(|t| t.contains("synchronization")), "{texts:?}");
    }

    fn shaped(text: &str) -> Shaped {
        let mut shaped = Shaped::default();
        shaped.looks.push(Look {
            face: Face::Sans,
            size: 10.0,
            color: Rgb::BLACK,
            bold: false,
            italic: false,
            code: false,
            strike: false,
            link: None,
            rise: 0.0,
        });
        for ch in text.chars() {
            shaped.pieces.push(Piece { ch, width: if is_cjk(ch) { 10.0 } else { 5.0 } });
            shaped.look_of.push(0);
        }
        shaped
    }

    #[test]
    fn the_slack_is_shared_equally_outside_latin_words() {
        // Six CJK characters (60), "is" and "Rust" (30), three spaces (15): 105 points.
        let s = shaped("所有権 is Rust の機能");
        let text: Vec<char> = "所有権 is Rust の機能".chars().collect();
        let extra = justification(&s, 0..s.pieces.len(), 112.0);
        // Stretch: 所|有, 有|権, the three spaces, の|機, 機|能 — seven gaps, 1 point each.
        for (k, e) in extra.iter().enumerate() {
            let inside_latin = text[k].is_ascii_alphabetic() && text[k + 1].is_ascii_alphabetic();
            let before_space = text[k + 1] == ' ';
            let expected = if inside_latin || before_space { 0.0 } else { 1.0 };
            assert!((e - expected).abs() < 1e-4, "gap after {:?}: {e}", text[k]);
        }
        // Too loose (more than an em per gap): ragged.
        assert!(justification(&s, 0..s.pieces.len(), 200.0).is_empty());
    }

    #[test]
    fn a_justified_cjk_run_is_one_text_operation_with_character_spacing() {
        let para = "日本語の本文は両端揃えで組みます。英単語 configuration と数字 2026 が混じる行も、右端をそろえます。"
            .repeat(3);
        let (_, laid) = lay(&format!("{para}\n"), StyleName::Modern);
        let texts: Vec<(String, f32)> = laid.pages[0]
            .iter()
            .filter_map(|d| {
                if let Draw::Text { text, spacing, .. } = d { Some((text.clone(), *spacing)) } else { None }
            })
            .collect();
        assert!(
            texts.iter().any(|(t, s)| t.chars().count() > 5 && t.chars().all(is_cjk) && *s > 0.0),
            "{texts:?}"
        );
        assert!(texts.iter().all(|(t, s)| !t.contains("configuration") || *s == 0.0), "{texts:?}");
    }

    #[test]
    fn inline_code_and_latin_sit_on_the_baseline_of_the_japanese_text() {
        let (_, laid) = lay("本文の `let x = 1;` と Latin words と**太字**です。\n", StyleName::Technical);
        let baselines: Vec<f32> = laid.pages[0]
            .iter()
            .filter_map(|d| match d {
                Draw::Text { y, text, .. }
                    if !text.chars().all(|c| c.is_ascii_digit() || " /".contains(c)) =>
                {
                    Some(*y)
                }
                _ => None,
            })
            .collect();
        assert!(baselines.len() >= 3, "{baselines:?}");
        assert!(baselines.iter().all(|y| (y - baselines[0]).abs() < 1e-4), "{baselines:?}");
    }

    #[test]
    fn consecutive_punctuation_is_set_half_width() {
        let mut shaped = Shaped::default();
        let look = Look {
            face: Face::Sans,
            size: 10.0,
            color: Rgb::BLACK,
            bold: false,
            italic: false,
            code: false,
            strike: false,
            link: None,
            rise: 0.0,
        };
        shaped.looks.push(look);
        for ch in "です。」「（注）".chars() {
            shaped.pieces.push(Piece { ch, width: 10.0 });
            shaped.look_of.push(0);
        }
        tighten_punctuation(&mut shaped);
        let widths: Vec<f32> = shaped.pieces.iter().map(|p| p.width).collect();
        // 。 before 」 and 」 before 「 keep half; （ after 「 loses its empty left half.
        assert_eq!(widths, [10.0, 10.0, 5.0, 5.0, 10.0, 5.0, 10.0, 10.0]);
        assert_eq!(shaped.shift[5], -5.0);
        assert_eq!(shaped.natural[5], 10.0);
    }

    #[test]
    fn japanese_emphasis_is_gothic_never_slanted() {
        let (_, laid) = lay("本文の*強調*と**所有権**と*emphasis*です。\n", StyleName::Classic);
        let mut seen = 0;
        for d in &laid.pages[0] {
            let Draw::Text { face, italic, bold, text, .. } = d else { continue };
            assert!(!italic, "nothing is slanted in a Japanese document: {d:?}");
            if text.contains("強") || text.contains("調") {
                assert_eq!(*face, Face::Sans, "emphasis in a mincho body is gothic: {d:?}");
                seen += 1;
            }
            if text.contains("所有権") {
                assert!(bold, "{d:?}");
            }
        }
        assert!(seen > 0);
        // A document without Japanese keeps slanted Latin emphasis.
        let (_, laid) = lay("Plain *emphasis* here.\n", StyleName::Classic);
        assert!(laid.pages[0].iter().any(|d| matches!(d, Draw::Text { italic: true, .. })));
    }

    #[test]
    fn soft_breaks_follow_the_shared_text_rule() {
        let book = parse("かかるほど\n深い、\n定期的\n*強調*。The borrow\nchecker\n`code`\n");
        let Block::Paragraph(spans) = &book.blocks[0] else { panic!("{book:?}") };
        assert_eq!(plain(spans), "かかるほど深い、定期的強調。The borrow checker code");
    }
}
