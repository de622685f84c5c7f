//! The walk that turns Markdown source into numbered elements (`docs/reference/original-server.md`
//! §5.3–§5.5).
//!
//! pulldown-cmark supplies the block structure; spans are then cut to the contract's rules,
//! which follow Markdig's:
//!
//! - pulldown-cmark block ranges include the trailing line ending (and, for list items, trailing
//!   blank lines). Leaf spans (heading, paragraph, code, front matter) therefore end at the end of
//!   the line holding the last non-blank byte of the range, without its `\n` / `\r\n`.
//! - Quotes, tables and list items use *physical* ranges: from the start of the line holding the
//!   block start to the end of the line holding its last non-blank byte.
//! - pulldown-cmark omits paragraph events inside tight list items, while Markdig keeps
//!   `ParagraphBlock`s there. A run of inline events directly inside an item is counted as the
//!   paragraph Markdig would have seen, so paragraph ordinals stay Markdig's.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use super::syntax::{CodeBlockKind, Event, Purpose, Source, Tag, TagEnd};

use crate::text::{LineIndex, line_content_end, line_start, segments_hash_hex, xxh64_hex};

use super::pointer::LogicalPointer;
use super::{Document, Element, ElementKind, ListItemInfo};

/// Parses `text` (BOM already removed). Never fails, never changes a byte.
pub(super) fn parse(text: &str) -> Document {
    let current = walk(text, true);
    let mut reserved = current.reserved.clone();
    let mut elements = current.elements;
    if current.saw_table {
        let historical = walk(text, false);
        preserve_table_ordinals(&current.paragraphs, &historical.paragraphs, &mut elements, &mut reserved);
    }
    elements.retain(|e| e.range.end > e.range.start);
    elements.sort_by_key(|e| e.range.start);
    finish(text, &mut elements);
    Document { elements, reserved }
}

/// A paragraph the walk saw, published or not: what table-ordinal preservation needs.
#[derive(Clone, Debug)]
struct ParagraphRecord {
    section: String,
    span: Range<usize>,
    ordinal: u32,
    /// Index into `elements` when the paragraph was published.
    element: Option<usize>,
}

struct WalkResult {
    elements: Vec<Element>,
    reserved: BTreeSet<String>,
    paragraphs: Vec<ParagraphRecord>,
    saw_table: bool,
}

#[derive(Default, Clone, Copy)]
struct Counters {
    p: u32,
    code: u32,
    li: u32,
    q: u32,
    t: u32,
}

struct HeadingFrame {
    level: u8,
    pointer: String,
    title: String,
    children: u32,
}

enum Frame {
    /// A list item; items inside quotes are not published and number nothing.
    Item {
        published: bool,
        pointer: String,
        depth: u32,
        children: u32,
        /// An implicit (tight-list) paragraph is open: its span so far.
        implicit: Option<Range<usize>>,
    },
    List {
        start: usize,
    },
    Quote,
    /// Paragraph, heading, code block, table, front matter, HTML block and anything else whose
    /// inline content must not be mistaken for a tight-list paragraph.
    Leaf,
}

struct Walker<'a> {
    text: &'a str,
    headings: Vec<HeadingFrame>,
    root_headings: u32,
    section: String,
    counters: Counters,
    reserved: BTreeSet<String>,
    elements: Vec<Element>,
    paragraphs: Vec<ParagraphRecord>,
    frames: Vec<Frame>,
    /// How many `Frame::Quote`s are on `frames` (so `in_quote` is O(1) however deep the lists).
    quotes: usize,
    saw_table: bool,
}

/// Deepest list-item nesting published as elements (depth 0 is a top-level item). Items nested
/// deeper are part of their ancestor at this depth, as items inside quotes are: their pointers
/// would be kilobytes long (`li1.li1.…`), and 10,000 levels on one line made the parse quadratic
/// in time and memory (docs/reliability.md).
pub(super) const MAX_ITEM_DEPTH: u32 = 100;

fn walk(text: &str, tables: bool) -> WalkResult {
    let mut w = Walker {
        text,
        headings: Vec::new(),
        root_headings: 0,
        section: "document".to_owned(),
        counters: Counters::default(),
        reserved: BTreeSet::new(),
        elements: Vec::new(),
        paragraphs: Vec::new(),
        frames: Vec::new(),
        quotes: 0,
        saw_table: false,
    };
    let source = Source::new(text, if tables { Purpose::Model } else { Purpose::ModelWithoutTables });
    for (event, range) in source.events() {
        match event {
            Event::Start(tag) => w.start(tag, range),
            Event::End(tag) => w.end(tag, range),
            _ => w.inline(range),
        }
    }
    WalkResult {
        elements: w.elements,
        reserved: w.reserved,
        paragraphs: w.paragraphs,
        saw_table: w.saw_table,
    }
}

/// Is this tag inline content (part of a paragraph) rather than a block?
pub(crate) fn is_inline_tag(tag: &Tag<'_>) -> bool {
    matches!(
        tag,
        Tag::Emphasis
            | Tag::Strong
            | Tag::Strikethrough
            | Tag::Superscript
            | Tag::Subscript
            | Tag::Link { .. }
            | Tag::Image { .. }
    )
}

/// The end-tag twin of [`is_inline_tag`].
pub(crate) fn is_inline_tag_end(tag: &TagEnd) -> bool {
    matches!(
        tag,
        TagEnd::Emphasis
            | TagEnd::Strong
            | TagEnd::Strikethrough
            | TagEnd::Superscript
            | TagEnd::Subscript
            | TagEnd::Link
            | TagEnd::Image
    )
}

/// End of the last non-blank byte of `range` (spaces, tabs and line endings are blank).
fn content_end(text: &str, range: &Range<usize>) -> usize {
    let bytes = text.as_bytes();
    let mut e = range.end.min(bytes.len());
    while e > range.start && matches!(bytes[e - 1], b' ' | b'\t' | b'\n' | b'\r') {
        e -= 1;
    }
    e
}

/// Leaf span: block start to the end of the line holding its last non-blank byte.
fn leaf_span(text: &str, range: &Range<usize>) -> Range<usize> {
    let e = content_end(text, range);
    if e == range.start {
        return range.start..range.start;
    }
    range.start..line_content_end(text, e - 1)
}

/// Physical range: from the start of the first line to the end of the last non-blank line.
fn physical_range(text: &str, range: &Range<usize>) -> Range<usize> {
    let span = leaf_span(text, range);
    let start = line_start(text, range.start);
    let end = if span.is_empty() { line_content_end(text, range.start) } else { span.end };
    start..end.max(start)
}

fn join(section: &str, leaf: &str) -> String {
    if section == "document" { leaf.to_owned() } else { format!("{section}.{leaf}") }
}

impl Walker<'_> {
    fn in_quote(&self) -> bool {
        self.quotes > 0
    }

    fn in_item(&self) -> bool {
        self.frames.iter().any(|f| matches!(f, Frame::Item { .. }))
    }

    fn heading_path(&self) -> Option<String> {
        if self.headings.is_empty() {
            None
        } else {
            Some(self.headings.iter().map(|h| h.title.as_str()).collect::<Vec<_>>().join(" > "))
        }
    }

    /// A block starts or ends inside a tight item: close its implicit paragraph.
    fn close_implicit(&mut self) {
        if let Some(Frame::Item { implicit, .. }) = self.frames.last_mut()
            && let Some(span) = implicit.take()
        {
            let span = leaf_span(self.text, &span);
            self.record_paragraph(span, false);
        }
    }

    /// Inline content: directly inside an item it is a tight-list paragraph.
    fn inline(&mut self, range: Range<usize>) {
        if let Some(Frame::Item { implicit, .. }) = self.frames.last_mut() {
            match implicit {
                Some(span) => span.end = span.end.max(range.end),
                None => *implicit = Some(range),
            }
        }
    }

    fn push_element(&mut self, kind: ElementKind, pointer: String, range: Range<usize>) -> usize {
        // A list item's text is its own segments, known only in `finish`; copying its physical
        // range here would hold every nested subtree at once (cubic memory for deep nesting).
        let text =
            if kind == ElementKind::ListItem { String::new() } else { self.text[range.clone()].to_owned() };
        self.elements.push(Element {
            pointer: LogicalPointer::from_parser(pointer),
            kind,
            text,
            range: range.clone(),
            subtree_range: range,
            start_line: 0,
            end_line: 0,
            heading_level: None,
            heading_path: self.heading_path(),
            section: self.section.clone(),
            self_hash: String::new(),
            subtree_hash: String::new(),
            list: None,
        });
        self.elements.len() - 1
    }

    /// Records a paragraph; publishes it unless it sits in a quote or list item (rule 7).
    fn record_paragraph(&mut self, span: Range<usize>, may_publish: bool) {
        self.counters.p += 1;
        let ordinal = self.counters.p;
        let pointer = join(&self.section, &format!("p{ordinal}"));
        let publish = may_publish && !self.in_quote() && !self.in_item();
        let element = if publish {
            Some(self.push_element(ElementKind::Paragraph, pointer, span.clone()))
        } else {
            self.reserved.insert(pointer);
            None
        };
        self.paragraphs.push(ParagraphRecord { section: self.section.clone(), span, ordinal, element });
    }

    fn start(&mut self, tag: Tag<'_>, range: Range<usize>) {
        if is_inline_tag(&tag) {
            self.inline(range);
            return;
        }
        self.close_implicit();
        match tag {
            Tag::Paragraph => {
                self.record_paragraph(leaf_span(self.text, &range), true);
                self.frames.push(Frame::Leaf);
            }
            Tag::CodeBlock(kind) => {
                self.counters.code += 1;
                let pointer = join(&self.section, &format!("code{}", self.counters.code));
                if self.in_quote() || self.in_item() {
                    self.reserved.insert(pointer);
                } else {
                    // pulldown-cmark starts an indented code block after its indentation; the
                    // element starts at the line start so edits never land mid-line.
                    let start = match kind {
                        CodeBlockKind::Indented => line_start(self.text, range.start),
                        CodeBlockKind::Fenced(_) => range.start,
                    };
                    let span = leaf_span(self.text, &(start..range.end));
                    self.push_element(ElementKind::CodeBlock, pointer, span);
                }
                self.frames.push(Frame::Leaf);
            }
            Tag::Heading { level, .. } => {
                if !self.in_quote() && !self.in_item() {
                    self.heading(level as u8, leaf_span(self.text, &range));
                }
                self.frames.push(Frame::Leaf);
            }
            // pulldown-cmark also reads a `---` block later in the document as metadata; only the
            // one at the very start is front matter (there is one `frontmatter` pointer), a later
            // one is raw source that belongs to no element.
            Tag::MetadataBlock(_) if range.start != 0 => self.frames.push(Frame::Leaf),
            Tag::MetadataBlock(_) => {
                let span = leaf_span(self.text, &range);
                let saved = std::mem::replace(&mut self.section, "frontmatter".to_owned());
                self.push_element(ElementKind::FrontMatter, "frontmatter".to_owned(), span);
                self.section = saved;
                self.frames.push(Frame::Leaf);
            }
            Tag::Table(_) => {
                self.saw_table = true;
                if !self.in_quote() && !self.in_item() {
                    self.counters.t += 1;
                    let pointer = join(&self.section, &format!("t{}", self.counters.t));
                    let span = physical_range(self.text, &range);
                    self.push_element(ElementKind::Table, pointer, span);
                }
                self.frames.push(Frame::Leaf);
            }
            Tag::BlockQuote(_) => {
                // Nested quotes and quotes inside list items are part of their container.
                if !self.in_quote() && !self.in_item() {
                    self.counters.q += 1;
                    let pointer = join(&self.section, &format!("q{}", self.counters.q));
                    let span = physical_range(self.text, &range);
                    self.push_element(ElementKind::BlockQuote, pointer, span);
                }
                self.frames.push(Frame::Quote);
                self.quotes += 1;
            }
            Tag::List(_) => self.frames.push(Frame::List { start: range.start }),
            Tag::Item => self.item(range),
            _ => self.frames.push(Frame::Leaf),
        }
    }

    fn end(&mut self, tag: TagEnd, range: Range<usize>) {
        if is_inline_tag_end(&tag) {
            self.inline(range);
            return;
        }
        self.close_implicit();
        // An item's physical range was fixed at its start: pulldown-cmark's item range already
        // covers every descendant.
        let _ = (tag, range);
        if let Some(Frame::Quote) = self.frames.pop() {
            self.quotes -= 1;
        }
    }

    fn heading(&mut self, level: u8, span: Range<usize>) {
        while self.headings.last().is_some_and(|h| h.level >= level) {
            self.headings.pop();
        }
        let pointer = match self.headings.last_mut() {
            None => {
                self.root_headings += 1;
                self.root_headings.to_string()
            }
            Some(top) => {
                top.children += 1;
                format!("{}.{}", top.pointer, top.children)
            }
        };
        let title = heading_title(&self.text[span.clone()]);
        self.headings.push(HeadingFrame { level, pointer: pointer.clone(), title, children: 0 });
        self.section = pointer.clone();
        self.counters = Counters::default();
        let idx = self.push_element(ElementKind::Heading, pointer, span);
        self.elements[idx].heading_level = Some(level);
    }

    fn item(&mut self, range: Range<usize>) {
        let container_start = match self.frames.last() {
            Some(Frame::List { start }) => *start,
            _ => range.start,
        };
        // The nearest enclosing item: below an unpublished one (in a quote, or too deep) nothing
        // is published either.
        let nearest = self.frames.iter().rev().find_map(|f| match f {
            Frame::Item { published, depth, .. } => Some((*published, *depth)),
            _ => None,
        });
        let too_deep = nearest.is_some_and(|(published, depth)| !published || depth >= MAX_ITEM_DEPTH);
        if self.in_quote() || too_deep {
            self.frames.push(Frame::Item {
                published: false,
                pointer: String::new(),
                depth: 0,
                children: 0,
                implicit: None,
            });
            return;
        }
        // The nearest enclosing published item, if any.
        let parent = self.frames.iter_mut().rev().find_map(|f| match f {
            Frame::Item { published: true, pointer, depth, children, .. } => Some((pointer, depth, children)),
            _ => None,
        });
        let (pointer, depth, parent_pointer) = match parent {
            Some((pointer, depth, children)) => {
                *children += 1;
                (format!("{pointer}.li{children}"), *depth + 1, Some(pointer.clone()))
            }
            None => {
                self.counters.li += 1;
                (join(&self.section, &format!("li{}", self.counters.li)), 0, None)
            }
        };
        let physical = physical_range(self.text, &range);
        let idx = self.push_element(ElementKind::ListItem, pointer.clone(), physical.clone());
        let (indent, marker_style) = parse_marker(&self.text[physical]);
        self.elements[idx].list = Some(ListItemInfo {
            parent: parent_pointer.map(LogicalPointer::from_parser),
            container_id: container_start,
            depth,
            indent,
            marker_style,
            own_segments: Vec::new(),
            delete_range: 0..0,
        });
        self.frames.push(Frame::Item { published: true, pointer, depth, children: 0, implicit: None });
    }
}

/// `^(?<indent>[ \t]*)(?<marker>[-+*]|[0-9]+[.)])(?=[ \t]|$)` on the item's first line.
fn parse_marker(item: &str) -> (usize, String) {
    let line = item.split(['\n', '\r']).next().unwrap_or("");
    let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
    let rest = &line[indent..];
    let followed_ok = |i: usize| rest[i..].is_empty() || rest[i..].starts_with([' ', '\t']);
    if let Some(c) = rest.chars().next()
        && matches!(c, '-' | '+' | '*')
        && followed_ok(1)
    {
        return (indent, c.to_string());
    }
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0
        && let Some(&d) = rest.as_bytes().get(digits)
        && (d == b'.' || d == b')')
        && followed_ok(digits + 1)
    {
        return (indent, format!("ordered:{}", d as char));
    }
    (indent, String::new())
}

/// Title of a heading span: ATX `^#{1,6}\s+(.+?)\s*$` minus a closing `#` run; setext: the
/// trimmed first line.
pub(super) fn heading_title(span: &str) -> String {
    let first = span.split(['\n', '\r']).next().unwrap_or("");
    let hashes = first.bytes().take_while(|&b| b == b'#').count();
    if (1..=6).contains(&hashes) {
        let rest = &first[hashes..];
        if rest.starts_with(char::is_whitespace) {
            let mut title = rest.trim();
            // Remove a closing sequence `\s+#+\s*$`.
            let without = title.trim_end_matches('#');
            if without.len() < title.len() && without.ends_with(char::is_whitespace) {
                title = without.trim_end();
            }
            return title.to_owned();
        }
        if rest.trim().is_empty() {
            return String::new();
        }
    }
    first.trim().to_owned()
}

/// §5.3.6: paragraphs keep the ordinal they had when tables were parsed as paragraphs.
fn preserve_table_ordinals(
    current: &[ParagraphRecord],
    historical: &[ParagraphRecord],
    elements: &mut [Element],
    reserved: &mut BTreeSet<String>,
) {
    let by_span: BTreeMap<(usize, usize), &ParagraphRecord> =
        historical.iter().map(|h| ((h.span.start, h.span.end), h)).collect();
    // Ordinals already claimed per section: every historical one (mapped ones keep theirs,
    // unmapped ones become reserved).
    let mut used: BTreeMap<&str, BTreeSet<u32>> = BTreeMap::new();
    for h in historical {
        used.entry(h.section.as_str()).or_default().insert(h.ordinal);
    }
    let mut mapped: BTreeSet<(String, u32)> = BTreeSet::new();
    // Remove every current paragraph pointer from the reserved set; it is rebuilt below.
    for c in current {
        reserved.remove(&join(&c.section, &format!("p{}", c.ordinal)));
    }
    let mut unmatched = Vec::new();
    for c in current {
        match by_span.get(&(c.span.start, c.span.end)) {
            Some(h) if h.section == c.section => {
                mapped.insert((h.section.clone(), h.ordinal));
                assign(c, h.ordinal, elements, reserved);
            }
            _ => unmatched.push(c),
        }
    }
    for c in unmatched {
        let set = used.entry(c.section.as_str()).or_default();
        let ordinal = (1..).find(|o| !set.contains(o)).unwrap_or(1);
        set.insert(ordinal);
        assign(c, ordinal, elements, reserved);
    }
    for h in historical {
        if !mapped.contains(&(h.section.clone(), h.ordinal)) {
            reserved.insert(join(&h.section, &format!("p{}", h.ordinal)));
        }
    }
}

fn assign(c: &ParagraphRecord, ordinal: u32, elements: &mut [Element], reserved: &mut BTreeSet<String>) {
    let pointer = join(&c.section, &format!("p{ordinal}"));
    match c.element {
        Some(idx) => elements[idx].pointer = LogicalPointer::from_parser(pointer),
        None => {
            reserved.insert(pointer);
        }
    }
}

/// Lines, list-item own segments, hashes and heading subtree ranges.
fn finish(text: &str, elements: &mut [Element]) {
    // Physical ranges of items, by pointer, for own-segment computation.
    let item_ranges: BTreeMap<String, Range<usize>> = elements
        .iter()
        .filter(|e| e.kind == ElementKind::ListItem)
        .map(|e| (e.pointer.as_str().to_owned(), e.range.clone()))
        .collect();
    let children_of: BTreeMap<String, Vec<Range<usize>>> = {
        let mut m: BTreeMap<String, Vec<Range<usize>>> = BTreeMap::new();
        for e in elements.iter() {
            if let Some(parent) = e.list.as_ref().and_then(|l| l.parent.as_ref()) {
                m.entry(parent.as_str().to_owned()).or_default().push(e.range.clone());
            }
        }
        m
    };
    // Owned-section end of every heading: the start of the next heading of the same or a higher
    // level (one pass with a stack), else EOF.
    let mut section_end: BTreeMap<usize, usize> = BTreeMap::new();
    let mut open: Vec<(usize, u8)> = Vec::new();
    for (start, level) in elements.iter().filter_map(|e| e.heading_level.map(|l| (e.range.start, l))) {
        while open.last().is_some_and(|&(_, l)| l >= level) {
            if let Some((s, _)) = open.pop() {
                section_end.insert(s, start);
            }
        }
        open.push((start, level));
    }

    let lines = LineIndex::new(text);
    for e in elements.iter_mut() {
        e.start_line = lines.line(e.range.start);
        e.end_line = lines.line(e.range.end.saturating_sub(1).max(e.range.start));
        match e.kind {
            ElementKind::ListItem => {
                let range = item_ranges.get(e.pointer.as_str()).cloned().unwrap_or(e.range.clone());
                let mut children = children_of.get(e.pointer.as_str()).cloned().unwrap_or_default();
                children.sort_by_key(|r| r.start);
                let segments = own_segments(text, &range, &children);
                let seg_strs: Vec<&str> = segments.iter().map(|r| &text[r.clone()]).collect();
                e.text = seg_strs.concat();
                e.self_hash = segments_hash_hex(&seg_strs);
                e.subtree_hash = if children.is_empty() {
                    e.self_hash.clone()
                } else {
                    xxh64_hex(text[range.clone()].as_bytes())
                };
                if let Some(info) = e.list.as_mut() {
                    info.own_segments = segments;
                    info.delete_range = range.start..extend_eol(text, range.end);
                }
            }
            ElementKind::Heading => {
                let end = section_end.get(&e.range.start).copied().unwrap_or(text.len());
                e.subtree_range = e.range.start..end;
                e.self_hash = xxh64_hex(e.text.as_bytes());
                e.subtree_hash = xxh64_hex(text[e.subtree_range.clone()].as_bytes());
            }
            _ => {
                e.self_hash = xxh64_hex(e.text.as_bytes());
                e.subtree_hash = e.self_hash.clone();
            }
        }
    }
}

/// The position after one line ending at `pos` (`\n`, `\r\n` or a lone `\r`), or `pos`.
pub(super) fn extend_eol(text: &str, pos: usize) -> usize {
    let rest = &text.as_bytes()[pos..];
    if rest.starts_with(b"\r\n") {
        pos + 2
    } else if rest.starts_with(b"\n") || rest.starts_with(b"\r") {
        pos + 1
    } else {
        pos
    }
}

/// The item's physical range minus its direct children's ranges (§5.4): the line ending that
/// joins the parent text to a child is not owned, and a child's own terminating line ending is
/// skipped.
fn own_segments(text: &str, range: &Range<usize>, children: &[Range<usize>]) -> Vec<Range<usize>> {
    let bytes = text.as_bytes();
    let mut segments = Vec::new();
    let mut cursor = range.start;
    for child in children {
        let mut end = child.start.max(cursor);
        if end > cursor && bytes[end - 1] == b'\n' {
            end -= 1;
            if end > cursor && bytes[end - 1] == b'\r' {
                end -= 1;
            }
        } else if end > cursor && bytes[end - 1] == b'\r' {
            end -= 1;
        }
        if end > cursor {
            segments.push(cursor..end);
        }
        cursor = extend_eol(text, child.end.max(cursor)).min(range.end.max(cursor));
        cursor = cursor.max(child.end);
    }
    if range.end > cursor {
        segments.push(cursor..range.end);
    }
    segments
}
