//! The raw block tree the structural validator compares: every block of the parse, addressed
//! or not (HTML, thematic breaks, link reference definitions, paragraphs inside list items and
//! quotes, …), with its container parent and physical range.
//!
//! The tree reads the source through `markdown::syntax` with the model's dialect and line-ending
//! view (`Purpose::EditValidation`), so the two views of one source agree, CR-only lines included. Kind names follow Markdig's block types (`ParagraphBlock`, `ListItemBlock`, …)
//! because they appear in messages.

use std::ops::Range;

use crate::markdown::syntax::{CodeBlockKind, Event, Purpose, Source, Tag, TagEnd};

use crate::text::{line_content_end, line_start};

/// A block's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) enum BlockKind {
    Paragraph,
    Heading,
    FencedCode,
    IndentedCode,
    Html,
    ThematicBreak,
    Table,
    FrontMatter,
    LinkDefinition,
    List,
    ListItem,
    Quote,
}

impl BlockKind {
    /// Markdig's type name, used in messages.
    pub(super) fn name(self) -> &'static str {
        match self {
            BlockKind::Paragraph => "ParagraphBlock",
            BlockKind::Heading => "HeadingBlock",
            BlockKind::FencedCode => "FencedCodeBlock",
            BlockKind::IndentedCode => "CodeBlock",
            BlockKind::Html => "HtmlBlock",
            BlockKind::ThematicBreak => "ThematicBreakBlock",
            BlockKind::Table => "Table",
            BlockKind::FrontMatter => "YamlFrontMatterBlock",
            BlockKind::LinkDefinition => "LinkReferenceDefinition",
            BlockKind::List => "ListBlock",
            BlockKind::ListItem => "ListItemBlock",
            BlockKind::Quote => "QuoteBlock",
        }
    }

    /// Lists, list items and quotes contain other blocks; everything else is a leaf.
    pub(super) fn is_container(self) -> bool {
        matches!(self, BlockKind::List | BlockKind::ListItem | BlockKind::Quote)
    }
}

/// One block.
#[derive(Clone, Debug)]
pub(super) struct Block {
    pub kind: BlockKind,
    /// Physical range: start of the first line to the end of the last non-blank line.
    pub range: Range<usize>,
    /// The parser's own range (used for containment).
    raw: Range<usize>,
    /// Index of the enclosing container block.
    pub parent: Option<usize>,
}

/// The blocks of one source, in the order they start in the event stream (link reference
/// definitions last).
#[derive(Clone, Debug, Default)]
pub(super) struct Blocks {
    pub blocks: Vec<Block>,
}

impl Blocks {
    /// Is `block` a (transitive) descendant of `ancestor`?
    pub(super) fn is_descendant(&self, block: usize, ancestor: usize) -> bool {
        let mut current = self.blocks.get(block).and_then(|b| b.parent);
        let mut guard = 0;
        while let Some(p) = current {
            if p == ancestor {
                return true;
            }
            guard += 1;
            if guard > self.blocks.len() {
                return false;
            }
            current = self.blocks.get(p).and_then(|b| b.parent);
        }
        false
    }

    /// The list-item and quote ancestors of `block`, outermost first, as (kind, line start).
    pub(super) fn structural_parents(&self, block: usize) -> Vec<(BlockKind, usize)> {
        let mut result = Vec::new();
        let mut current = self.blocks.get(block).and_then(|b| b.parent);
        while let Some(p) = current {
            let Some(b) = self.blocks.get(p) else { break };
            if matches!(b.kind, BlockKind::ListItem | BlockKind::Quote) {
                result.push((b.kind, b.range.start));
            }
            if result.len() > self.blocks.len() {
                break;
            }
            current = b.parent;
        }
        result.reverse();
        result
    }
}

/// End of the last non-blank byte of `range`.
fn content_end(text: &str, range: &Range<usize>) -> usize {
    let bytes = text.as_bytes();
    let mut e = range.end.min(bytes.len());
    while e > range.start && matches!(bytes[e - 1], b' ' | b'\t' | b'\n' | b'\r') {
        e -= 1;
    }
    e
}

/// From the start of the line holding `range.start` to the end of the line holding its last
/// non-blank byte, without the line ending.
pub(super) fn physical_range(text: &str, range: &Range<usize>) -> Range<usize> {
    let start = line_start(text, range.start);
    let end = content_end(text, range);
    let end =
        if end > range.start { line_content_end(text, end - 1) } else { line_content_end(text, range.start) };
    start..end.max(start)
}

struct Frame {
    block: Option<usize>,
    /// Inside a leaf block (e.g. table rows): nested tags are not blocks.
    in_leaf: bool,
    /// A list item frame: inline content directly inside it forms an implicit paragraph.
    item: bool,
    implicit: Option<Range<usize>>,
}

struct Walker<'a> {
    text: &'a str,
    blocks: Vec<Block>,
    frames: Vec<Frame>,
}

impl Walker<'_> {
    fn parent(&self) -> Option<usize> {
        self.frames.iter().rev().find_map(|f| f.block)
    }

    fn in_leaf(&self) -> bool {
        self.frames.last().is_some_and(|f| f.in_leaf)
    }

    fn add(&mut self, kind: BlockKind, raw: Range<usize>) -> usize {
        let range = physical_range(self.text, &raw);
        let parent = self.parent();
        self.blocks.push(Block { kind, range, raw, parent });
        self.blocks.len() - 1
    }

    fn inline(&mut self, range: Range<usize>) {
        if let Some(frame) = self.frames.last_mut()
            && frame.item
        {
            match &mut frame.implicit {
                Some(span) => span.end = span.end.max(range.end),
                None => frame.implicit = Some(range),
            }
        }
    }

    fn close_implicit(&mut self) {
        if let Some(frame) = self.frames.last_mut()
            && let Some(span) = frame.implicit.take()
        {
            self.add(BlockKind::Paragraph, span);
        }
    }

    fn start(&mut self, tag: Tag<'_>, range: Range<usize>) {
        if crate::markdown::is_inline_tag(&tag) {
            self.inline(range);
            return;
        }
        self.close_implicit();
        if self.in_leaf() {
            self.frames.push(Frame { block: None, in_leaf: true, item: false, implicit: None });
            return;
        }
        let kind = match tag {
            Tag::Paragraph => Some(BlockKind::Paragraph),
            Tag::Heading { .. } => Some(BlockKind::Heading),
            Tag::CodeBlock(CodeBlockKind::Fenced(_)) => Some(BlockKind::FencedCode),
            Tag::CodeBlock(CodeBlockKind::Indented) => Some(BlockKind::IndentedCode),
            Tag::HtmlBlock => Some(BlockKind::Html),
            Tag::Table(_) => Some(BlockKind::Table),
            Tag::MetadataBlock(_) => Some(BlockKind::FrontMatter),
            Tag::List(_) => Some(BlockKind::List),
            Tag::Item => Some(BlockKind::ListItem),
            Tag::BlockQuote(_) => Some(BlockKind::Quote),
            _ => None,
        };
        let frame = match kind {
            Some(kind) => {
                let index = self.add(kind, range);
                Frame {
                    block: Some(index),
                    in_leaf: !kind.is_container(),
                    item: kind == BlockKind::ListItem,
                    implicit: None,
                }
            }
            None => Frame { block: None, in_leaf: true, item: false, implicit: None },
        };
        self.frames.push(frame);
    }

    fn end(&mut self, tag: TagEnd, range: Range<usize>) {
        if crate::markdown::is_inline_tag_end(&tag) {
            self.inline(range);
            return;
        }
        self.close_implicit();
        self.frames.pop();
    }
}

/// Reads the block tree of `text`.
pub(super) fn read_blocks(text: &str) -> Blocks {
    let mut walker = Walker { text, blocks: Vec::new(), frames: Vec::new() };
    let source = Source::new(text, Purpose::EditValidation);
    let mut events = source.events();
    for (event, range) in events.by_ref() {
        match event {
            Event::Start(tag) => walker.start(tag, range),
            Event::End(tag) => walker.end(tag, range),
            Event::Rule => {
                walker.close_implicit();
                if !walker.in_leaf() {
                    walker.add(BlockKind::ThematicBreak, range);
                }
            }
            _ => walker.inline(range),
        }
    }
    let mut definitions: Vec<Range<usize>> =
        events.reference_definitions().into_iter().map(|def| def.span).collect();
    definitions.sort_by_key(|r| (r.start, r.end));
    let mut blocks = walker.blocks;
    let parents = innermost_containers(&blocks, &definitions);
    for (raw, parent) in definitions.into_iter().zip(parents) {
        let range = physical_range(text, &raw);
        blocks.push(Block { kind: BlockKind::LinkDefinition, range, raw, parent });
    }
    Blocks { blocks }
}

/// For each position of `definitions` (sorted by start), the innermost container block whose
/// parser range holds its start: one sweep over the (properly nested) container ranges.
fn innermost_containers(blocks: &[Block], definitions: &[Range<usize>]) -> Vec<Option<usize>> {
    let mut containers: Vec<usize> = (0..blocks.len()).filter(|&i| blocks[i].kind.is_container()).collect();
    containers.sort_by_key(|&i| (blocks[i].raw.start, std::cmp::Reverse(blocks[i].raw.end)));
    let mut open: Vec<usize> = Vec::new();
    let mut next = 0;
    let mut result = Vec::with_capacity(definitions.len());
    for def in definitions {
        while let Some(&c) = containers.get(next)
            && blocks[c].raw.start <= def.start
        {
            while open.last().is_some_and(|&top| blocks[top].raw.end <= blocks[c].raw.start) {
                open.pop();
            }
            open.push(c);
            next += 1;
        }
        while open.last().is_some_and(|&top| blocks[top].raw.end <= def.start) {
            open.pop();
        }
        result.push(open.last().copied());
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markdown::{Document, ElementKind};

    /// The validator's tree and the anchor model read one source the same way, CR-only line
    /// endings included (a fence's info string must end at a lone CR).
    #[test]
    fn the_block_tree_sees_the_blocks_the_model_sees_with_any_line_ending() {
        for eol in ["\n", "\r\n", "\r"] {
            let text = [
                "# 見出し",
                "",
                "```rust",
                "fn main() {}",
                "```",
                "",
                "本文。",
                "",
                "| a |",
                "|---|",
                "| 1 |",
                "",
            ]
            .join(eol);
            let blocks = read_blocks(&text);
            let leaves: Vec<(BlockKind, Range<usize>)> = blocks
                .blocks
                .iter()
                .filter(|b| !b.kind.is_container())
                .map(|b| (b.kind, b.range.clone()))
                .collect();
            let model: Vec<(ElementKind, Range<usize>)> =
                Document::parse(&text).elements.iter().map(|e| (e.kind, e.range.clone())).collect();
            let kinds: Vec<BlockKind> = leaves.iter().map(|l| l.0).collect();
            assert_eq!(
                kinds,
                [BlockKind::Heading, BlockKind::FencedCode, BlockKind::Paragraph, BlockKind::Table],
                "{eol:?}"
            );
            let model_kinds: Vec<ElementKind> = model.iter().map(|m| m.0).collect();
            assert_eq!(
                model_kinds,
                [ElementKind::Heading, ElementKind::CodeBlock, ElementKind::Paragraph, ElementKind::Table],
                "{eol:?}"
            );
            for ((_, block), (_, element)) in leaves.iter().zip(&model) {
                assert_eq!(block, element, "{eol:?}: the tree and the model disagree on a block's range");
            }
        }
    }
}
