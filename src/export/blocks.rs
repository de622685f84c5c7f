//! Markdown → the block model the PDF layout draws: headings, paragraphs of styled spans, lists,
//! quotes, code, tables, rules and images, plus the front matter's `title`.
//!
//! The model is deliberately small and plain: everything the layout needs and nothing about
//! source positions. Raw HTML is shown as a browser would show its text: comments hidden, tags
//! dropped, `<img src>` as an image, `<br>` as a line break; footnote syntax is left as text.

use crate::markdown::syntax::{Alignment, CodeBlockKind, Event, Purpose, Source, Tag, TagEnd};

use crate::markdown::heading_level;
use crate::markdown::text_rules::soft_break_joins;

/// A run of inline text with one look.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Span {
    /// The text (soft breaks follow `markdown::text_rules::soft_break`: nothing between Japanese
    /// characters, else a space; hard breaks are `\n`).
    pub text: String,
    /// `**strong**`.
    pub bold: bool,
    /// `*emphasis*`.
    pub italic: bool,
    /// `` `code` ``.
    pub code: bool,
    /// `~~strike~~`.
    pub strike: bool,
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

/// A block of the document.
#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    /// `#`…`######`.
    Heading {
        /// 1–6.
        level: u8,
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
}

/// The parsed document.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Book {
    /// The front matter's `title`, if any.
    pub title: Option<String>,
    /// The blocks in order.
    pub blocks: Vec<Block>,
}

/// Parses `markdown` into a [`Book`].
pub fn parse(markdown: &str) -> Book {
    let mut builder = Builder::default();
    let source = Source::new(markdown, Purpose::Pdf);
    for (event, _) in source.events() {
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
    /// An open list item (its task marker comes as an event).
    Item { task: Option<bool>, blocks: Vec<Block> },
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
    /// Inside a heading: its level.
    heading: Option<u8>,
    /// Inside a code block or an HTML block: its language and text.
    code: Option<(String, String)>,
    /// Inside the front matter.
    metadata: Option<String>,
    /// Inside an image: its URL; the alt text collects into `alt`.
    image: Option<String>,
    alt: String,
    /// Table being built.
    table: Option<TableBuild>,
    /// A soft break waits for the character after it (the shared soft-break rule).
    pending_soft: bool,
    /// The last character of the inline text so far.
    last_char: Option<char>,
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
            Some(Frame::Blocks(blocks)) | Some(Frame::Item { blocks, .. }) => blocks.push(block),
            // Text directly in a list (never produced by the parser) or no frame yet.
            Some(Frame::List { .. }) | None => self.frames.push(Frame::Blocks(vec![block])),
        }
    }

    fn style(&self, text: String) -> Span {
        Span {
            text,
            bold: self.bold > 0 || self.heading.is_some(),
            italic: self.italic > 0,
            code: false,
            strike: self.strike > 0,
            link: self.links.last().cloned(),
        }
    }

    fn text(&mut self, text: &str) {
        if self.image.is_some() {
            self.alt.push_str(text);
            return;
        }
        if let Some(meta) = &mut self.metadata {
            meta.push_str(text);
            return;
        }
        if let Some((_, code)) = &mut self.code {
            code.push_str(text);
            return;
        }
        if let Some(c) = text.chars().last() {
            self.last_char = Some(c);
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

    /// Decides a waiting soft break now that the next character (`None`: not text) is known.
    fn resolve_soft(&mut self, next: Option<char>) {
        if std::mem::take(&mut self.pending_soft) && !soft_break_joins(self.last_char, next) {
            self.text(" ");
        }
    }

    fn event(&mut self, event: Event<'_>) {
        if self.image.is_none() && self.metadata.is_none() && self.code.is_none() {
            match &event {
                Event::Text(t) | Event::Code(t) => self.resolve_soft(t.chars().next()),
                Event::SoftBreak => {
                    self.pending_soft = true;
                    return;
                }
                // Inline styles do not end the text run: `かかる⏎*深い*` still joins.
                Event::Start(Tag::Emphasis | Tag::Strong | Tag::Strikethrough | Tag::Link { .. })
                | Event::End(TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough | TagEnd::Link) => {}
                _ => {
                    self.resolve_soft(None);
                    self.last_char = None;
                }
            }
        }
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => self.text(&t),
            Event::Code(t) => {
                if self.image.is_some() {
                    self.alt.push_str(&t);
                } else {
                    self.last_char = t.chars().last().or(self.last_char);
                    let mut span = self.style(t.into_string());
                    span.code = true;
                    self.spans.push(span);
                }
            }
            Event::SoftBreak => self.text(" "),
            Event::HardBreak => self.text("\n"),
            Event::Html(t) => {
                if let Some((_, code)) = &mut self.code {
                    code.push_str(&t);
                }
            }
            Event::InlineHtml(t) => {
                // Tags are dropped (their text still shows), as a browser would; <br> breaks.
                let tag = t.trim().to_ascii_lowercase();
                if tag.starts_with("<br") {
                    self.text("\n");
                }
            }
            Event::Rule => self.push_block(Block::Rule),
            Event::TaskListMarker(done) => {
                if let Some(Frame::Item { task, .. }) = self.frames.last_mut() {
                    *task = Some(done);
                }
            }
            Event::FootnoteReference(t) => self.text(&format!("[^{t}]")),
            Event::InlineMath(t) | Event::DisplayMath(t) => self.text(&t),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.flush_paragraph(),
            Tag::Heading { level, .. } => {
                self.flush_paragraph();
                self.heading = Some(heading_level(level));
            }
            Tag::BlockQuote(_) => {
                self.flush_paragraph();
                self.frames.push(Frame::Blocks(Vec::new()));
            }
            Tag::CodeBlock(kind) => {
                self.flush_paragraph();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info.split_whitespace().next().unwrap_or("").to_owned(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Tag::HtmlBlock => {
                self.flush_paragraph();
                self.code = Some(("html".to_owned(), String::new()));
            }
            Tag::List(start) => {
                self.flush_paragraph();
                self.frames.push(Frame::List { start, items: Vec::new() });
            }
            Tag::Item => {
                self.flush_paragraph();
                self.frames.push(Frame::Item { task: None, blocks: Vec::new() });
            }
            Tag::Table(aligns) => {
                self.flush_paragraph();
                self.table = Some(TableBuild {
                    aligns: aligns
                        .iter()
                        .map(|a| match a {
                            Alignment::Center => Align::Center,
                            Alignment::Right => Align::Right,
                            Alignment::Left | Alignment::None => Align::Left,
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
            Tag::Link { dest_url, .. } => self.links.push(dest_url.into_string()),
            Tag::Image { dest_url, .. } => {
                self.image = Some(dest_url.into_string());
                self.alt.clear();
            }
            Tag::MetadataBlock(_) => self.metadata = Some(String::new()),
            Tag::FootnoteDefinition(_)
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::Superscript
            | Tag::Subscript => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => self.flush_paragraph(),
            TagEnd::Heading(_) => {
                let level = self.heading.take().unwrap_or(1);
                let spans = trim(std::mem::take(&mut self.spans));
                self.push_block(Block::Heading { level, spans });
            }
            TagEnd::BlockQuote(_) => {
                self.flush_paragraph();
                if let Some(Frame::Blocks(blocks)) = self.frames.pop() {
                    self.push_block(Block::Quote(blocks));
                }
            }
            TagEnd::HtmlBlock => {
                if let Some((_, html)) = self.code.take() {
                    self.html_block(&html);
                }
            }
            TagEnd::CodeBlock => {
                if let Some((lang, mut text)) = self.code.take() {
                    while text.ends_with('\n') {
                        text.pop();
                    }
                    self.push_block(Block::Code { lang, text });
                }
            }
            TagEnd::List(_) => {
                self.flush_paragraph();
                if let Some(Frame::List { start, items }) = self.frames.pop() {
                    self.push_block(Block::List { start, items });
                }
            }
            TagEnd::Item => {
                self.flush_paragraph();
                if let Some(Frame::Item { task, blocks }) = self.frames.pop()
                    && let Some(Frame::List { items, .. }) = self.frames.last_mut()
                {
                    items.push(Item { task, blocks });
                }
            }
            TagEnd::TableCell => {
                let cell = trim(std::mem::take(&mut self.spans));
                if let Some(t) = &mut self.table {
                    t.row.push(cell);
                }
            }
            TagEnd::TableHead => {
                if let Some(t) = &mut self.table {
                    t.header = std::mem::take(&mut t.row);
                    t.in_head = false;
                }
            }
            TagEnd::TableRow => {
                if let Some(t) = &mut self.table {
                    let row = std::mem::take(&mut t.row);
                    if t.in_head {
                        t.header = row;
                    } else {
                        t.rows.push(row);
                    }
                }
            }
            TagEnd::Table => {
                if let Some(t) = self.table.take() {
                    self.push_block(Block::Table { aligns: t.aligns, header: t.header, rows: t.rows });
                }
            }
            TagEnd::Emphasis => self.italic = self.italic.saturating_sub(1),
            TagEnd::Strong => self.bold = self.bold.saturating_sub(1),
            TagEnd::Strikethrough => self.strike = self.strike.saturating_sub(1),
            TagEnd::Link => {
                self.links.pop();
            }
            TagEnd::Image => {
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
            TagEnd::MetadataBlock(_) => {
                if let Some(meta) = self.metadata.take() {
                    self.title = front_matter_title(&meta);
                }
            }
            TagEnd::FootnoteDefinition
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition
            | TagEnd::Superscript
            | TagEnd::Subscript => {}
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
    a.bold == b.bold
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
