//! Paging through a document by elements (`contract.md` §7.6): the engine behind `kb_read`.

use crate::error::{Error, Result};
use crate::text::line_start;

use super::{Anchor, Document, Element, RESERVED_READ_MESSAGE};

/// Page-size limits, clamped to the contract's ranges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadLimits {
    /// Elements per page (1..=100, default 20).
    pub max_elements: usize,
    /// UTF-8 bytes of the Markdown slice (1..=100000, default 12000).
    pub max_bytes: usize,
}

impl Default for ReadLimits {
    fn default() -> Self {
        ReadLimits { max_elements: 20, max_bytes: 12_000 }
    }
}

impl ReadLimits {
    /// Limits from optional request values, clamped (`contract.md` §7.6).
    pub fn clamped(max_elements: Option<i64>, max_bytes: Option<i64>) -> Self {
        ReadLimits {
            max_elements: max_elements.map_or(20, |v| v.clamp(1, 100) as usize),
            max_bytes: max_bytes.map_or(12_000, |v| v.clamp(1, 100_000) as usize),
        }
    }
}

/// One page of a document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slice<'d> {
    /// `document`, or the v2 anchor of the first returned element.
    pub pointer: String,
    /// The returned elements.
    pub elements: Vec<&'d Element>,
    /// The exact source between this page's start and the next page's start.
    pub markdown: String,
    /// The v2 anchor of the first element not returned.
    pub next_pointer: Option<String>,
    /// Whether the request named a concrete element (not `document`).
    pub addressed: bool,
}

/// Reads one page from `anchor` (None = `document`). `path` only words error messages.
pub fn read_slice<'d>(
    text: &str,
    doc: &'d Document,
    path: &str,
    anchor: Option<&Anchor>,
    limits: ReadLimits,
) -> Result<Slice<'d>> {
    let elements = &doc.elements;
    let addressed = anchor.is_some_and(|a| !a.is_document());
    let first = match anchor {
        Some(a) if !a.is_document() => {
            if a.self_hash.is_some() {
                doc.resolve(a, RESERVED_READ_MESSAGE)?
            } else {
                doc.position(&a.pointer).ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "Pointer '{}' was not found in '{path}'; call kb_outline or read from 'document' to see the current pointers.",
                        a.pointer
                    ))
                })?
            }
        }
        _ => 0,
    };
    if elements.is_empty() {
        return Ok(Slice {
            pointer: "document".to_owned(),
            elements: Vec::new(),
            markdown: text.to_owned(),
            next_pointer: None,
            addressed,
        });
    }
    let boundary = |i: usize| elements.get(i).map_or(text.len(), |e| line_start(text, e.range.start));
    let start = if addressed { boundary(first) } else { 0 };
    let available = elements.len() - first;
    let mut count = 0;
    for i in 0..limits.max_elements.min(available) {
        let end = boundary(first + i + 1);
        let bytes = end.saturating_sub(start);
        if count >= 1 && bytes > limits.max_bytes {
            break;
        }
        count += 1;
        if bytes > limits.max_bytes {
            break;
        }
    }
    let next = first + count;
    let end = boundary(next).max(start);
    Ok(Slice {
        pointer: if addressed { elements[first].anchor() } else { "document".to_owned() },
        elements: elements[first..next].iter().collect(),
        markdown: text[start..end].to_owned(),
        next_pointer: elements.get(next).map(Element::anchor),
        addressed,
    })
}
