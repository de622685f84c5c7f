//! The one place that runs pulldown-cmark (`docs/design/markdown-model.md`, "One parser").
//!
//! Every reader of Markdown — the anchor model, link extraction, the edit validator's block
//! tree, table cells, the publishing model of both exports — asks for events here, naming its
//! [`Purpose`]. A purpose fixes the dialect (which extensions are on), and every purpose reads
//! the same line-ending view of the source: a lone CR ends a line, exactly as
//! `text::{line_start, line_content_end, LineIndex}` count lines. Offsets index the caller's
//! text unchanged.
//!
//! The event types are re-exported so callers outside `markdown` never name the parser crate.

use std::borrow::Cow;
use std::ops::Range;

use pulldown_cmark::{OffsetIter, Options, Parser};

pub use pulldown_cmark::{
    Alignment, BlockQuoteKind, CodeBlockKind, Event, HeadingLevel, LinkType, Tag, TagEnd,
};

/// Who parses, and therefore which Markdown dialect is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// The anchor model (elements, pointers, hashes): front matter and GFM tables.
    Model,
    /// The anchor model's second walk without tables (table-ordinal preservation).
    ModelWithoutTables,
    /// The edit validator's raw block tree: the model's dialect, so both views of one source
    /// agree on every block.
    EditValidation,
    /// Link, heading and HTML-anchor extraction, and the prose text for word mentions.
    Links,
    /// The inline Markdown of one table cell (no extensions: a cell is plain CommonMark inline).
    TableCell,
    /// The publishing model both exports render (`publish`): tables, footnotes,
    /// strikethrough, task lists, heading attributes, alerts, front matter.
    Publish,
}

impl Purpose {
    /// The pulldown-cmark extensions of this purpose.
    fn options(self) -> Options {
        let model = Options::ENABLE_YAML_STYLE_METADATA_BLOCKS | Options::ENABLE_TABLES;
        match self {
            Purpose::Model | Purpose::EditValidation => model,
            Purpose::ModelWithoutTables => Options::ENABLE_YAML_STYLE_METADATA_BLOCKS,
            Purpose::Links => model | Options::ENABLE_HEADING_ATTRIBUTES | Options::ENABLE_STRIKETHROUGH,
            Purpose::TableCell => Options::empty(),
            Purpose::Publish => {
                model
                    | Options::ENABLE_FOOTNOTES
                    | Options::ENABLE_STRIKETHROUGH
                    | Options::ENABLE_TASKLISTS
                    | Options::ENABLE_HEADING_ATTRIBUTES
                    | Options::ENABLE_GFM
            }
        }
    }
}

/// A source prepared for parsing: the line-ending view of the text and the purpose.
pub struct Source<'a> {
    view: Cow<'a, str>,
    purpose: Purpose,
}

/// A link reference definition (`[label]: dest`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefDef {
    /// The label, lower-cased.
    pub label: String,
    /// The destination as written.
    pub dest: String,
    /// Its byte range in the source.
    pub span: Range<usize>,
}

impl<'a> Source<'a> {
    /// Prepares `text` (without BOM) for `purpose`.
    pub fn new(text: &'a str, purpose: Purpose) -> Source<'a> {
        Source { view: lf_view(text), purpose }
    }

    /// The events with their byte ranges (ranges index the original text).
    pub fn events(&self) -> Events<'_> {
        Events(Parser::new_ext(&self.view, self.purpose.options()).into_offset_iter())
    }
}

/// The event stream of a [`Source`].
pub struct Events<'s>(OffsetIter<'s>);

impl<'s> Iterator for Events<'s> {
    type Item = (Event<'s>, Range<usize>);

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next()
    }
}

impl Events<'_> {
    /// The link reference definitions of the document (known before the first event).
    pub fn reference_definitions(&self) -> Vec<RefDef> {
        self.0
            .reference_definitions()
            .iter()
            .map(|(label, def)| RefDef {
                label: label.to_lowercase(),
                dest: def.dest.to_string(),
                span: def.span.clone(),
            })
            .collect()
    }
}

/// The text the parser reads: every lone `\r` replaced by `\n`. pulldown-cmark does not treat a
/// lone CR as a line ending everywhere (a fence's info string runs past it, a heading attribute
/// scan too), while CommonMark does; one ASCII byte for another keeps every offset, so spans
/// still index `text`.
pub(super) fn lf_view(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let lone = |i: usize| bytes[i] == b'\r' && bytes.get(i + 1) != Some(&b'\n');
    if !(0..bytes.len()).any(lone) {
        return Cow::Borrowed(text);
    }
    let mapped: Vec<u8> = (0..bytes.len()).map(|i| if lone(i) { b'\n' } else { bytes[i] }).collect();
    // Replacing one ASCII byte by another keeps the text UTF-8.
    Cow::Owned(String::from_utf8(mapped).unwrap_or_else(|_| text.to_owned()))
}
