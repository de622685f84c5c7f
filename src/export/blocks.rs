//! The publishing stream (`publish`) → the block tree the PDF layout draws: headings,
//! paragraphs of styled spans, lists, quotes and alerts, code, tables, rules, images and the
//! footnotes, plus the front matter's `title`.
//!
//! The tree is deliberately small and plain: everything the layout needs and nothing about
//! source positions. The stream already made the decisions the HTML export shares (soft breaks,
//! heading ids, alert titles, task states, footnote numbers); what is the PDF's own is here. Raw
//! HTML is shown as a browser would show its text: comments hidden, tags dropped, `<img src>` as
//! an image, `<br>` as a line break.

use crate::markdown::text_rules::has_japanese;
use crate::publish::{self, AlertKind, Event, Tag};
use crate::text::Language;

/// A run of inline text with one look.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Span {
    /// The text (soft breaks as the publishing stream keeps them: a space; hard breaks are `\n`).
    pub text: String,
    /// `**strong**`.
    pub bold: bool,
    /// `*emphasis*`.
    pub italic: bool,
    /// `` `code` ``.
    pub code: bool,
    /// `~~strike~~`.
    pub strike: bool,
    /// A footnote reference's number, set small and raised.
    pub note: bool,
    /// The target of the link the span is in.
    pub link: Option<String>,
}

/// Column alignment of a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Left (also the default).
    Left,
    /// Centred.
    Center,
    /// Right.
    Right,
}

/// One list item: its task state (`- [ ]` / `- [x]`) and its blocks.
#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    /// `Some(done)` for a task item.
    pub task: Option<bool>,
    /// The item's content.
    pub blocks: Vec<Block>,
}

/// One footnote of the closing list.
#[derive(Clone, Debug, PartialEq)]
pub struct Note {
    /// Its number, as its references show it.
    pub number: usize,
    /// Its body.
    pub blocks: Vec<Block>,
}

/// A block of the document.
#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    /// `#`…`######`.
    Heading {
        /// 1–6.
        level: u8,
        /// An explicit `{#id}` (not part of the text).
        id: Option<String>,
        /// The heading's text.
        spans: Vec<Span>,
    },
    /// A paragraph (also the text of a tight list item).
    Paragraph(Vec<Span>),
    /// A list; `start` is the first number of an ordered list.
    List {
        /// `Some(n)` for an ordered list starting at `n`.
        start: Option<u64>,
        /// The items.
        items: Vec<Item>,
    },
    /// `> …`.
    Quote(Vec<Block>),
    /// A GitHub alert: a quote under its title.
    Alert {
        /// Which alert.
        kind: AlertKind,
        /// `Note`, `注記`, … (the HTML export's titles).
        title: String,
        /// Its content.
        blocks: Vec<Block>,
    },
    /// A fenced or indented code block, or raw HTML (shown verbatim).
    Code {
        /// The info string's first word.
        lang: String,
        /// The code, without the final newline.
        text: String,
    },
    /// A GFM table.
    Table {
        /// One per column.
        aligns: Vec<Align>,
        /// The header row's cells.
        header: Vec<Vec<Span>>,
        /// The body rows' cells.
        rows: Vec<Vec<Vec<Span>>>,
    },
    /// `---`.
    Rule,
    /// An image on its own (images inside a paragraph are split out of it).
    Image {
        /// The URL as written.
        src: String,
        /// The alternative text.
        alt: String,
    },
    /// The footnotes, after the body.
    Footnotes(Vec<Note>),
}

/// The parsed document.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Book {
    /// The front matter's `title`, if any.
    pub title: Option<String>,
    /// The blocks in order.
    pub blocks: Vec<Block>,
}

/// Parses `markdown` into a [`Book`]; alert titles are Japanese in a Japanese document (as the
/// HTML export's `html.lang: auto` chooses).
pub fn parse(markdown: &str) -> Book {
    let language = if has_japanese(markdown) { Language::Ja } else { Language::En };
    let mut builder = Builder::default();
    for (event, _) in publish::publish(markdown, language) {
        builder.event(event);
    }
    builder.finish()
}

/// What is open while events stream in.
#[derive(Debug)]
enum Frame {
    /// The document or a container (quote, list item) collecting blocks.
    Blocks(Vec<Block>),
    /// An open list.
    List { start: Option<u64>, items: Vec<Item> },
    /// An open list item.
    Item { task: Option<bool>, blocks: Vec<Block> },
    /// An open alert.
    Alert { kind: AlertKind, title: String, blocks: Vec<Block> },
    /// The footnotes.
    Notes(Vec<Note>),
    /// One footnote.
    Note { number: usize, blocks: Vec<Block> },
}

#[derive(Debug, Default)]
struct Builder {
    frames: Vec<Frame>,
    title: Option<String>,
    /// Inline text being collected (paragraph, heading, cell, image alt).
    spans: Vec<Span>,
    /// Nesting of inline styles.
    bold: usize,
    italic: usize,
    strike: usize,
    links: Vec<String>,
    /// Inside a heading: its level and id.
    heading: Option<(u8, Option<String>)>,
    /// Inside an HTML block: its text.
    html: Option<String>,
    /// Inside an image: its URL; the alt text collects into `alt`.
    image: Option<String>,
    alt: String,
    /// Table being built.
    table: Option<TableBuild>,
}

#[derive(Debug, Default)]
struct TableBuild {
    aligns: Vec<Align>,
    header: Vec<Vec<Span>>,
    rows: Vec<Vec<Vec<Span>>>,
    row: Vec<Vec<Span>>,
    in_head: bool,
}

impl Builder {
    fn push_block(&mut self, block: Block) {
        match self.frames.last_mut() {
            Some(Frame::Blocks(blocks))
            | Some(Frame::Item { blocks, .. })
            | Some(Frame::Alert { blocks, .. })
            | Some(Frame::Note { blocks, .. }) => blocks.push(block),
            // Text directly in a list or the footnotes (never produced) or no frame yet.
            Some(Frame::List { .. }) | Some(Frame::Notes(_)) | None => {
                self.frames.push(Frame::Blocks(vec![block]))
            }
        }
    }

    fn style(&self, text: String) -> Span {
        Span {
            text,
            bold: self.bold > 0 || self.heading.is_some(),
            italic: self.italic > 0,
            code: false,
            strike: self.strike > 0,
            note: false,
            link: self.links.last().cloned(),
        }
    }

    fn text(&mut self, text: &str) {
        if self.image.is_some() {
            self.alt.push_str(text);
            return;
        }
        if let Some(html) = &mut self.html {
            html.push_str(text);
            return;
        }
        let span = self.style(text.to_owned());
        match self.spans.last_mut() {
            Some(last) if same_look(last, &span) => last.text.push_str(text),
            _ => self.spans.push(span),
        }
    }

    /// Ends the inline run: a paragraph (split around images) when not in a heading or cell.
    fn flush_paragraph(&mut self) {
        let spans = std::mem::take(&mut self.spans);
        let mut current = Vec::new();
        for span in spans {
            if let Some(rest) = span.text.strip_prefix('\u{0}') {
                // An image marker: `\0src\0alt`.
                if has_text(&current) {
                    self.push_block(Block::Paragraph(trim(std::mem::take(&mut current))));
                }
                current.clear();
                let (src, alt) = rest.split_once('\u{0}').unwrap_or((rest, ""));
                self.push_block(Block::Image { src: src.to_owned(), alt: alt.to_owned() });
            } else {
                current.push(span);
            }
        }
        if has_text(&current) {
            self.push_block(Block::Paragraph(trim(current)));
        }
    }

    fn event(&mut self, event: Event) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => self.text(&t),
            Event::Code(t) => {
                if self.image.is_some() {
                    self.alt.push_str(&t);
                } else {
                    let mut span = self.style(t);
                    span.code = true;
                    self.spans.push(span);
                }
            }
            Event::SoftBreak => self.text(" "),
            Event::HardBreak => self.text("\n"),
            Event::Html(t) => {
                if let Some(html) = &mut self.html {
                    html.push_str(&t);
                }
            }
            Event::InlineHtml(t) => {
                // Tags are dropped (their text still shows), as a browser would; <br> breaks.
                let tag = t.trim().to_ascii_lowercase();
                if tag.starts_with("<br") {
                    self.text("\n");
                }
            }
            Event::FrontMatter(meta) => self.title = front_matter_title(&meta),
            Event::CodeBlock { lang, mut text } => {
                self.flush_paragraph();
                while text.ends_with('\n') {
                    text.pop();
                }
                self.push_block(Block::Code { lang, text });
            }
            Event::Rule => self.push_block(Block::Rule),
            // The item's task state came with its start.
            Event::TaskMarker(_) => {}
            Event::FootnoteReference { number, .. } => {
                if self.image.is_some() {
                    return;
                }
                let mut span = self.style(number.to_string());
                span.note = true;
                self.spans.push(span);
            }
        }
    }

    fn start(&mut self, tag: Tag) {
        match tag {
            Tag::Paragraph => self.flush_paragraph(),
            Tag::Heading { level, id, .. } => {
                self.flush_paragraph();
                self.heading = Some((level, id));
            }
            Tag::Quote => {
                self.flush_paragraph();
                self.frames.push(Frame::Blocks(Vec::new()));
            }
            Tag::Alert { kind, title } => {
                self.flush_paragraph();
                self.frames.push(Frame::Alert { kind, title, blocks: Vec::new() });
            }
            Tag::HtmlBlock => {
                self.flush_paragraph();
                self.html = Some(String::new());
            }
            Tag::List { start } => {
                self.flush_paragraph();
                self.frames.push(Frame::List { start, items: Vec::new() });
            }
            Tag::Item { task } => {
                self.flush_paragraph();
                self.frames.push(Frame::Item { task, blocks: Vec::new() });
            }
            Tag::Footnotes => {
                self.flush_paragraph();
                self.frames.push(Frame::Notes(Vec::new()));
            }
            Tag::FootnoteDefinition { number, .. } => {
                self.flush_paragraph();
                self.frames.push(Frame::Note { number, blocks: Vec::new() });
            }
            Tag::Table { aligns } => {
                self.flush_paragraph();
                self.table = Some(TableBuild {
                    aligns: aligns
                        .iter()
                        .map(|a| match a {
                            publish::Align::Center => Align::Center,
                            publish::Align::Right => Align::Right,
                            publish::Align::Left | publish::Align::None => Align::Left,
                        })
                        .collect(),
                    ..TableBuild::default()
                });
            }
            Tag::TableHead => {
                if let Some(t) = &mut self.table {
                    t.in_head = true;
                }
            }
            Tag::TableRow | Tag::TableCell => {}
            Tag::Emphasis => self.italic += 1,
            Tag::Strong => self.bold += 1,
            Tag::Strikethrough => self.strike += 1,
            Tag::Link { dest, .. } => self.links.push(dest),
            Tag::Image { dest, .. } => {
                self.image = Some(dest);
                self.alt.clear();
            }
            Tag::Superscript | Tag::Subscript => {}
        }
    }

    fn end(&mut self, tag: Tag) {
        match tag {
            Tag::Paragraph => self.flush_paragraph(),
            Tag::Heading { .. } => {
                let (level, id) = self.heading.take().unwrap_or((1, None));
                let spans = trim(std::mem::take(&mut self.spans));
                self.push_block(Block::Heading { level, id, spans });
            }
            Tag::Quote => {
                self.flush_paragraph();
                if let Some(Frame::Blocks(blocks)) = self.frames.pop() {
                    self.push_block(Block::Quote(blocks));
                }
            }
            Tag::Alert { .. } => {
                self.flush_paragraph();
                if let Some(Frame::Alert { kind, title, blocks }) = self.frames.pop() {
                    self.push_block(Block::Alert { kind, title, blocks });
                }
            }
            Tag::HtmlBlock => {
                if let Some(html) = self.html.take() {
                    self.html_block(&html);
                }
            }
            Tag::List { .. } => {
                self.flush_paragraph();
                if let Some(Frame::List { start, items }) = self.frames.pop() {
                    self.push_block(Block::List { start, items });
                }
            }
            Tag::Item { .. } => {
                self.flush_paragraph();
                if let Some(Frame::Item { task, blocks }) = self.frames.pop()
                    && let Some(Frame::List { items, .. }) = self.frames.last_mut()
                {
                    items.push(Item { task, blocks });
                }
            }
            Tag::Footnotes => {
                if let Some(Frame::Notes(notes)) = self.frames.pop() {
                    self.push_block(Block::Footnotes(notes));
                }
            }
            Tag::FootnoteDefinition { .. } => {
                self.flush_paragraph();
                if let Some(Frame::Note { number, blocks }) = self.frames.pop()
                    && let Some(Frame::Notes(notes)) = self.frames.last_mut()
                {
                    notes.push(Note { number, blocks });
                }
            }
            Tag::TableCell => {
                let cell = trim(std::mem::take(&mut self.spans));
                if let Some(t) = &mut self.table {
                    t.row.push(cell);
                }
            }
            Tag::TableHead => {
                if let Some(t) = &mut self.table {
                    t.header = std::mem::take(&mut t.row);
                    t.in_head = false;
                }
            }
            Tag::TableRow => {
                if let Some(t) = &mut self.table {
                    let row = std::mem::take(&mut t.row);
                    if t.in_head {
                        t.header = row;
                    } else {
                        t.rows.push(row);
                    }
                }
            }
            Tag::Table { .. } => {
                if let Some(t) = self.table.take() {
                    self.push_block(Block::Table { aligns: t.aligns, header: t.header, rows: t.rows });
                }
            }
            Tag::Emphasis => self.italic = self.italic.saturating_sub(1),
            Tag::Strong => self.bold = self.bold.saturating_sub(1),
            Tag::Strikethrough => self.strike = self.strike.saturating_sub(1),
            Tag::Link { .. } => {
                self.links.pop();
            }
            Tag::Image { .. } => {
                if let Some(src) = self.image.take() {
                    let alt = std::mem::take(&mut self.alt);
                    if self.table.is_some() || self.heading.is_some() {
                        // No room for a picture in a cell or a heading: show its alt text.
                        self.text(&alt);
                    } else {
                        self.spans.push(Span { text: format!("\u{0}{src}\u{0}{alt}"), ..Span::default() });
                    }
                }
            }
            Tag::Superscript | Tag::Subscript => {}
        }
    }

    /// An HTML block as a browser would show it: comments hidden, `<img>` as an image, the text
    /// of other elements as a paragraph, tags dropped.
    fn html_block(&mut self, html: &str) {
        let mut rest = html;
        let mut visible = String::new();
        while let Some(start) = rest.find("<!--") {
            visible.push_str(&rest[..start]);
            rest = match rest[start..].find("-->") {
                Some(end) => &rest[start + end + 3..],
                None => "",
            };
        }
        visible.push_str(rest);
        let mut text = String::new();
        let mut rest = visible.as_str();
        while let Some(open) = rest.find('<') {
            text.push_str(&rest[..open]);
            let Some(close) = rest[open..].find('>') else {
                text.push_str(&rest[open..]);
                rest = "";
                break;
            };
            let tag = &rest[open..open + close + 1];
            if tag.len() > 4 && tag[..4].eq_ignore_ascii_case("<img") {
                let attr = |name: &str| {
                    let at = tag.find(&format!("{name}=\""))? + name.len() + 2;
                    Some(tag[at..].split('"').next().unwrap_or("").to_owned())
                };
                if let Some(src) = attr("src") {
                    if !text.trim().is_empty() {
                        self.push_block(Block::Paragraph(vec![Span {
                            text: text.trim().to_owned(),
                            ..Span::default()
                        }]));
                    }
                    text.clear();
                    self.push_block(Block::Image { src, alt: attr("alt").unwrap_or_default() });
                }
            } else if tag.len() > 2 && tag[..3].eq_ignore_ascii_case("<br") {
                text.push('\n');
            }
            rest = &rest[open + close + 1..];
        }
        text.push_str(rest);
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if !text.is_empty() {
            self.push_block(Block::Paragraph(vec![Span { text, ..Span::default() }]));
        }
    }

    fn finish(mut self) -> Book {
        self.flush_paragraph();
        let mut blocks = Vec::new();
        for frame in self.frames {
            if let Frame::Blocks(b) = frame {
                blocks.extend(b);
            }
        }
        Book { title: self.title, blocks }
    }
}

fn same_look(a: &Span, b: &Span) -> bool {
    !a.note
        && !b.note
        && a.bold == b.bold
        && a.italic == b.italic
        && a.code == b.code
        && a.strike == b.strike
        && a.link == b.link
        && !a.text.starts_with('\u{0}')
}

fn has_text(spans: &[Span]) -> bool {
    spans.iter().any(|s| !s.text.trim().is_empty())
}

/// Drops leading and trailing white space of a run of spans.
fn trim(mut spans: Vec<Span>) -> Vec<Span> {
    if let Some(first) = spans.first_mut() {
        first.text = first.text.trim_start().to_owned();
    }
    if let Some(last) = spans.last_mut() {
        last.text = last.text.trim_end().to_owned();
    }
    spans.retain(|s| !s.text.is_empty());
    spans
}

/// The `title:` of a YAML front matter block (plain, single- or double-quoted scalar).
pub fn front_matter_title(yaml: &str) -> Option<String> {
    for line in yaml.lines() {
        let Some(rest) = line.strip_prefix("title:") else { continue };
        let value = rest.trim();
        let value = if value.len() >= 2
            && ((value.starts_with('"') && value.ends_with('"'))
                || (value.starts_with('\'') && value.ends_with('\'')))
        {
            &value[1..value.len() - 1]
        } else {
            value
        };
        if !value.is_empty() {
            return Some(value.to_owned());
        }
    }
    None
}

/// The plain text of spans.
pub fn plain(spans: &[Span]) -> String {
    spans.iter().map(|s| s.text.as_str()).collect()
}
