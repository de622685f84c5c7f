//! The semantic Markdown model: elements, pointers, anchors and their hashes.
//!
//! A [`Document`] is a value over one source string (BOM already removed): a list of
//! [`Element`]s in source order, each a byte range into the source with a logical pointer
//! (`1.2`, `1.p3`, `li1.li2`, `t1`, …), a kind, a heading path and two XXH64 hashes. Public
//! anchors (`logical~selfHash~subtreeHash`) let callers find an element again after the file
//! changed ([`Document::resolve`]), and refuse to act when it is gone or ambiguous.
//!
//! Invariants:
//!
//! - Parsing never fails and never rewrites bytes: every range lies inside the source on `char`
//!   boundaries, and element text is exactly the source (own segments for list items).
//! - Numbering and hashes reproduce the original .NET server (`docs/reference/original-server.md`
//!   §5), so anchors mean the same thing in both. `docs/design/markdown-model.md` lists where
//!   pulldown-cmark's spans had to be adapted to Markdig's.
//! - No I/O here: reading files is `workspace`'s job.

mod links;
mod outline;
mod parse;
mod pointer;
mod read;
pub mod syntax;
pub mod text_rules;

use std::collections::BTreeSet;
use std::ops::Range;

pub use links::{LinkScan, RawLink, RawLinkKind, ScannedHeading, heading_level, prose_text, scan_links};
pub use outline::{OutlineNode, build_tree, find_subtree, flatten, outline};
pub(crate) use parse::{is_inline_tag, is_inline_tag_end};
pub use pointer::{Anchor, FINGERPRINT_MESSAGE, LogicalPointer};
pub use read::{CONTINUATION_MARK, Part, ReadLimits, Slice, read_slice, read_slice_from, split_continuation};

use crate::error::{ConflictReason, Error, Result};

/// Element kinds (`docs/reference/original-server.md` §5.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ElementKind {
    /// The whole document (synthetic; never an element of a [`Document`]).
    Document,
    /// YAML front matter at the very start.
    FrontMatter,
    /// An ATX or setext heading outside quotes and list items.
    Heading,
    /// A paragraph outside quotes and list items.
    Paragraph,
    /// A fenced or indented code block outside quotes and list items.
    CodeBlock,
    /// A list item outside quotes; nested items are elements of their own.
    ListItem,
    /// A standalone GFM pipe table (atomic).
    Table,
    /// A top-level block quote (atomic, opaque).
    BlockQuote,
}

impl ElementKind {
    /// The wire value (`heading`, `list_item`, …).
    pub fn as_wire(self) -> &'static str {
        match self {
            ElementKind::Document => "document",
            ElementKind::FrontMatter => "front_matter",
            ElementKind::Heading => "heading",
            ElementKind::Paragraph => "paragraph",
            ElementKind::CodeBlock => "code_block",
            ElementKind::ListItem => "list_item",
            ElementKind::Table => "table",
            ElementKind::BlockQuote => "block_quote",
        }
    }

    /// The original's enum name (`ListItem`, …), as stored in the index.
    pub fn as_name(self) -> &'static str {
        match self {
            ElementKind::Document => "Document",
            ElementKind::FrontMatter => "FrontMatter",
            ElementKind::Heading => "Heading",
            ElementKind::Paragraph => "Paragraph",
            ElementKind::CodeBlock => "CodeBlock",
            ElementKind::ListItem => "ListItem",
            ElementKind::Table => "Table",
            ElementKind::BlockQuote => "BlockQuote",
        }
    }
}

/// List-item source map (`docs/reference/original-server.md` §5.4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListItemInfo {
    /// The parent item's pointer, for nested items.
    pub parent: Option<LogicalPointer>,
    /// Start offset of the list that holds the item.
    pub container_id: usize,
    /// Nesting depth (top level 0).
    pub depth: u32,
    /// Leading whitespace of the marker line, in bytes.
    pub indent: usize,
    /// `-`, `+`, `*`, `ordered:.` or `ordered:)`.
    pub marker_style: String,
    /// The item's own text: its physical range minus its children's.
    pub own_segments: Vec<Range<usize>>,
    /// The physical range plus one line ending.
    pub delete_range: Range<usize>,
}

/// One addressable element.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Element {
    /// Logical pointer.
    pub pointer: LogicalPointer,
    /// Kind.
    pub kind: ElementKind,
    /// Exact source text (list items: the concatenated own segments).
    pub text: String,
    /// Source range (list items, quotes, tables: the physical range).
    pub range: Range<usize>,
    /// Owned range: a heading's section, a list item's physical range, else `range`.
    pub subtree_range: Range<usize>,
    /// 1-based first line.
    pub start_line: usize,
    /// 1-based last line.
    pub end_line: usize,
    /// `#` level, headings only.
    pub heading_level: Option<u8>,
    /// Titles of the enclosing headings joined with `" > "`.
    pub heading_path: Option<String>,
    /// Pointer of the section the element is in (`document`, `frontmatter` or a heading).
    pub section: String,
    /// XXH64 of the element's own text.
    pub self_hash: String,
    /// XXH64 of the element's owned range.
    pub subtree_hash: String,
    /// List-item source map.
    pub list: Option<ListItemInfo>,
}

impl Element {
    /// The canonical v2 anchor `logical~self~subtree`.
    pub fn anchor(&self) -> String {
        format!("{}~{}~{}", self.pointer, self.self_hash, self.subtree_hash)
    }
}

/// A parsed Markdown document.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Document {
    /// Elements in source order (the synthetic `document` is not included).
    pub elements: Vec<Element>,
    /// Pointers consumed by paragraphs or code inside lists/quotes, or kept free by table
    /// ordinal preservation; hashed anchors naming them are refused.
    pub reserved: BTreeSet<String>,
}

/// The read-time message for a hashed anchor on a reserved pointer.
pub const RESERVED_READ_MESSAGE: &str =
    "The pointer belongs to an atomic list or quote. Read the document again.";

impl Document {
    /// Parses `text` (without BOM). Never fails.
    pub fn parse(text: &str) -> Document {
        parse::parse(text)
    }

    /// The element at a logical pointer.
    pub fn get(&self, pointer: &LogicalPointer) -> Option<&Element> {
        self.elements.iter().find(|e| &e.pointer == pointer)
    }

    /// Index of the element at a logical pointer.
    pub fn position(&self, pointer: &LogicalPointer) -> Option<usize> {
        self.elements.iter().position(|e| &e.pointer == pointer)
    }

    /// Resolves a hashed anchor by kind and self hash (`docs/reference/original-server.md` §5.7).
    /// Unhashed anchors resolve only to the element at their logical pointer. `reserved_message` is
    /// the text used when the logical pointer is reserved (reads and patches word it differently).
    pub fn resolve(&self, anchor: &Anchor, reserved_message: &str) -> Result<usize> {
        let Some(self_hash) = &anchor.self_hash else {
            return self.position(&anchor.pointer).ok_or_else(|| {
                Error::invalid_argument(format!("Pointer '{}' was not found.", anchor.pointer))
            });
        };
        if self.reserved.contains(anchor.pointer.as_str()) {
            return Err(Error::conflict(ConflictReason::SemanticTargetNotFound, reserved_message));
        }
        let kind = anchor.pointer.kind();
        let at_pointer = self.position(&anchor.pointer).filter(|&i| self.elements[i].kind == kind);
        if let Some(i) = at_pointer
            && &self.elements[i].self_hash == self_hash
        {
            return Ok(i);
        }
        let matches: Vec<usize> = self
            .elements
            .iter()
            .enumerate()
            .filter(|(_, e)| e.kind == kind && &e.self_hash == self_hash)
            .map(|(i, _)| i)
            .collect();
        match matches.as_slice() {
            [one] => Ok(*one),
            [] if at_pointer.is_some() => Err(Error::conflict(
                ConflictReason::SelfHashMismatch,
                "Pointer fingerprint does not match the current element.",
            )),
            [] => Err(Error::conflict(
                ConflictReason::SemanticTargetNotFound,
                "The original element could not be found in the current document.",
            )),
            _ => Err(Error::conflict(
                ConflictReason::AmbiguousSemanticPointer,
                "The element fingerprint matches multiple current elements and cannot be relocated safely.",
            )),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
