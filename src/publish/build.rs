//! pulldown-cmark's events (through `markdown::syntax`) → the publishing stream, before soft
//! breaks are resolved ([`super::breaks`]).

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

use crate::markdown::heading_level;
use crate::markdown::syntax::{self, BlockQuoteKind, CodeBlockKind, Purpose, Source, TagEnd};
use crate::messages::Msg;
use crate::text::Language;

use super::model::{AlertKind, Align, Event, Node, Tag};

/// Converts the parser's events of `text`; alert titles in `language`.
pub(super) fn build(text: &str, language: Language) -> Vec<Node> {
    let source = Source::new(text, Purpose::Publish);
    let events: Vec<(syntax::Event<'_>, Range<usize>)> = source.events().collect();
    let mut b = Builder { language, ..Builder::default() };
    b.outs.push(Vec::with_capacity(events.len()));
    let mut i = 0;
    while i < events.len() {
        i = b.event(&events, i);
    }
    b.finish(text.len())
}

#[derive(Default)]
struct Builder {
    language: Language,
    /// Where nodes go: the document, or (on top) a footnote definition being read.
    outs: Vec<Vec<Node>>,
    /// The open tags, so each `End` repeats its `Start`.
    open: Vec<Tag>,
    /// Labels of the footnote definitions being read (one per extra `outs` entry).
    defining: Vec<String>,
    /// Footnote labels in the order of their first reference (then of their definition).
    order: Vec<String>,
    /// References seen per label.
    refs: HashMap<String, usize>,
    /// Footnote bodies by label (the first definition wins).
    bodies: BTreeMap<String, Vec<Node>>,
}

impl Builder {
    fn push(&mut self, event: Event, range: Range<usize>) {
        if let Some(out) = self.outs.last_mut() {
            out.push((event, range));
        }
    }

    fn start(&mut self, tag: Tag, range: Range<usize>) {
        self.open.push(tag.clone());
        self.push(Event::Start(tag), range);
    }

    fn end(&mut self, range: Range<usize>) {
        if let Some(tag) = self.open.pop() {
            self.push(Event::End(tag), range);
        }
    }

    /// The footnote number of `label`, numbering it when first seen.
    fn number(&mut self, label: &str) -> usize {
        match self.order.iter().position(|l| l == label) {
            Some(i) => i + 1,
            None => {
                self.order.push(label.to_owned());
                self.order.len()
            }
        }
    }

    /// Handles `events[i]` (and what it swallows); returns the index of the next event.
    fn event(&mut self, events: &[(syntax::Event<'_>, Range<usize>)], i: usize) -> usize {
        let (event, range) = &events[i];
        let range = range.clone();
        match event {
            syntax::Event::Start(syntax::Tag::CodeBlock(kind)) => return self.code_block(events, i, kind),
            syntax::Event::Start(syntax::Tag::MetadataBlock(_)) => return self.front_matter(events, i),
            syntax::Event::Start(syntax::Tag::FootnoteDefinition(label)) => {
                self.number(label);
                self.defining.push(label.to_string());
                self.outs.push(Vec::new());
            }
            syntax::Event::End(TagEnd::FootnoteDefinition) => {
                if let (Some(label), Some(body)) = (self.defining.pop(), self.outs.pop()) {
                    self.bodies.entry(label).or_insert(body);
                }
            }
            syntax::Event::Start(syntax::Tag::Item) => {
                let marker = |k: usize| match events.get(k) {
                    Some((syntax::Event::TaskListMarker(done), _)) => Some(*done),
                    _ => None,
                };
                let task = match events.get(i + 1) {
                    Some((syntax::Event::Start(syntax::Tag::Paragraph), _)) => marker(i + 2),
                    _ => marker(i + 1),
                };
                self.start(Tag::Item { task }, range);
            }
            syntax::Event::Start(tag) => {
                if let Some(tag) = self.tag(tag) {
                    self.start(tag, range);
                }
            }
            syntax::Event::End(end) => {
                if !matches!(
                    end,
                    TagEnd::DefinitionList | TagEnd::DefinitionListTitle | TagEnd::DefinitionListDefinition
                ) {
                    self.end(range);
                }
            }
            syntax::Event::Text(t) | syntax::Event::InlineMath(t) | syntax::Event::DisplayMath(t) => {
                self.push(Event::Text(t.to_string()), range)
            }
            syntax::Event::Code(t) => self.push(Event::Code(t.to_string()), range),
            syntax::Event::Html(t) => self.push(Event::Html(t.to_string()), range),
            syntax::Event::InlineHtml(t) => self.push(Event::InlineHtml(t.to_string()), range),
            syntax::Event::FootnoteReference(label) => {
                let number = self.number(label);
                let seen = self.refs.entry(label.to_string()).or_insert(0);
                *seen += 1;
                let nth = *seen;
                self.push(Event::FootnoteReference { label: label.to_string(), number, nth }, range);
            }
            syntax::Event::SoftBreak => self.push(Event::SoftBreak, range),
            syntax::Event::HardBreak => self.push(Event::HardBreak, range),
            syntax::Event::Rule => self.push(Event::Rule, range),
            syntax::Event::TaskListMarker(done) => self.push(Event::TaskMarker(*done), range),
        }
        i + 1
    }

    /// The publishing tag of a parser tag (`None`: a container the exports do not show).
    fn tag(&self, tag: &syntax::Tag<'_>) -> Option<Tag> {
        Some(match tag {
            syntax::Tag::Paragraph => Tag::Paragraph,
            syntax::Tag::Heading { level, id, classes, .. } => Tag::Heading {
                level: heading_level(*level),
                id: id.as_ref().map(|i| i.to_string()),
                classes: classes.iter().map(|c| c.to_string()).collect(),
            },
            syntax::Tag::BlockQuote(None) => Tag::Quote,
            syntax::Tag::BlockQuote(Some(kind)) => {
                let (kind, title) = match kind {
                    BlockQuoteKind::Note => (AlertKind::Note, Msg::AlertNote),
                    BlockQuoteKind::Tip => (AlertKind::Tip, Msg::AlertTip),
                    BlockQuoteKind::Important => (AlertKind::Important, Msg::AlertImportant),
                    BlockQuoteKind::Warning => (AlertKind::Warning, Msg::AlertWarning),
                    BlockQuoteKind::Caution => (AlertKind::Caution, Msg::AlertCaution),
                };
                Tag::Alert { kind, title: title.template(self.language).to_owned() }
            }
            syntax::Tag::List(start) => Tag::List { start: *start },
            syntax::Tag::Item => Tag::Item { task: None },
            syntax::Tag::Table(aligns) => Tag::Table {
                aligns: aligns
                    .iter()
                    .map(|a| match a {
                        syntax::Alignment::None => Align::None,
                        syntax::Alignment::Left => Align::Left,
                        syntax::Alignment::Center => Align::Center,
                        syntax::Alignment::Right => Align::Right,
                    })
                    .collect(),
            },
            syntax::Tag::TableHead => Tag::TableHead,
            syntax::Tag::TableRow => Tag::TableRow,
            syntax::Tag::TableCell => Tag::TableCell,
            syntax::Tag::HtmlBlock => Tag::HtmlBlock,
            syntax::Tag::Emphasis => Tag::Emphasis,
            syntax::Tag::Strong => Tag::Strong,
            syntax::Tag::Strikethrough => Tag::Strikethrough,
            syntax::Tag::Superscript => Tag::Superscript,
            syntax::Tag::Subscript => Tag::Subscript,
            syntax::Tag::Link { dest_url, title, .. } => {
                Tag::Link { dest: dest_url.to_string(), title: title.to_string() }
            }
            syntax::Tag::Image { dest_url, title, .. } => {
                Tag::Image { dest: dest_url.to_string(), title: title.to_string() }
            }
            // Handled by `event` (code, front matter, footnotes) or not shown (definition lists
            // are not enabled).
            syntax::Tag::CodeBlock(_)
            | syntax::Tag::MetadataBlock(_)
            | syntax::Tag::FootnoteDefinition(_)
            | syntax::Tag::DefinitionList
            | syntax::Tag::DefinitionListTitle
            | syntax::Tag::DefinitionListDefinition => return None,
        })
    }

    /// A code block, whole: its text up to the end tag.
    fn code_block(
        &mut self,
        events: &[(syntax::Event<'_>, Range<usize>)],
        i: usize,
        kind: &CodeBlockKind<'_>,
    ) -> usize {
        let lang = match kind {
            CodeBlockKind::Fenced(info) => info
                .split(|c: char| c.is_whitespace() || c == ',' || c == '{')
                .next()
                .unwrap_or("")
                .to_owned(),
            CodeBlockKind::Indented => String::new(),
        };
        let (text, span, next) = text_until(events, i, |e| matches!(e, TagEnd::CodeBlock));
        self.push(Event::CodeBlock { lang, text }, span);
        next
    }

    /// The front matter, whole.
    fn front_matter(&mut self, events: &[(syntax::Event<'_>, Range<usize>)], i: usize) -> usize {
        let (text, span, next) = text_until(events, i, |e| matches!(e, TagEnd::MetadataBlock(_)));
        self.push(Event::FrontMatter(text), span);
        next
    }

    /// The body, then the defined footnotes in the order of their numbers.
    fn finish(mut self, len: usize) -> Vec<Node> {
        // Unclosed definitions (never produced by the parser) end here.
        while self.outs.len() > 1 {
            if let (Some(label), Some(body)) = (self.defining.pop(), self.outs.pop()) {
                self.bodies.entry(label).or_insert(body);
            }
        }
        let mut out = self.outs.pop().unwrap_or_default();
        let defined: Vec<(usize, String)> = self
            .order
            .iter()
            .enumerate()
            .filter(|(_, l)| self.bodies.contains_key(*l))
            .map(|(i, l)| (i + 1, l.clone()))
            .collect();
        if defined.is_empty() {
            return out;
        }
        let at = len..len;
        out.push((Event::Start(Tag::Footnotes), at.clone()));
        for (number, label) in defined {
            let body = self.bodies.remove(&label).unwrap_or_default();
            let tag = Tag::FootnoteDefinition { referenced: self.refs.contains_key(&label), label, number };
            let start = body.first().map_or(at.clone(), |(_, r)| r.clone());
            out.push((Event::Start(tag.clone()), start));
            out.extend(body);
            out.push((Event::End(tag), at.clone()));
        }
        out.push((Event::End(Tag::Footnotes), at));
        out
    }
}

/// The text of the block that starts at `events[i]`, up to the end tag `is_end` accepts: the
/// text, the block's source range and the index of the event after the end.
fn text_until(
    events: &[(syntax::Event<'_>, Range<usize>)],
    i: usize,
    is_end: impl Fn(&TagEnd) -> bool,
) -> (String, Range<usize>, usize) {
    let mut text = String::new();
    let mut k = i + 1;
    while k < events.len() {
        match &events[k].0 {
            syntax::Event::End(end) if is_end(end) => break,
            syntax::Event::Text(t) => text.push_str(t),
            _ => {}
        }
        k += 1;
    }
    let end = events.get(k).map_or(events[i].1.end, |(_, r)| r.end);
    (text, events[i].1.start..end, k + 1)
}
