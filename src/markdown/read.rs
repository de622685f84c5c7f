//! Paging through a document by elements (`docs/reference/original-server.md` §7.6): the engine
//! behind `kb_read`.

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
    /// Limits from optional request values, clamped (`docs/reference/original-server.md` §7.6).
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
    /// Set when this page holds only part of one element too large for `max_bytes`: the
    /// page's `markdown` is bytes `from..to` of the element's span (which is `len` bytes, from
    /// the start of its first line to the start of the next element).
    pub part: Option<Part>,
}

/// Which bytes of an oversized element's span a page holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Part {
    /// First byte (offset into the span).
    pub from: usize,
    /// End (exclusive).
    pub to: usize,
    /// The span's length.
    pub len: usize,
}

/// The separator between an anchor and a byte offset in a continuation pointer
/// (`1.t1~…~…@40960`): where the next page of a split element starts.
pub const CONTINUATION_MARK: char = '@';

/// Splits a continuation pointer into the anchor and its byte offset (`None`: no offset).
pub fn split_continuation(pointer: &str) -> (&str, Option<usize>) {
    match pointer.rsplit_once(CONTINUATION_MARK) {
        Some((anchor, digits)) if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
            (anchor, digits.parse().ok())
        }
        _ => (pointer, None),
    }
}

/// Reads one page from `anchor` (None = `document`). `path` only words error messages.
pub fn read_slice<'d>(
    text: &str,
    doc: &'d Document,
    path: &str,
    anchor: Option<&Anchor>,
    limits: ReadLimits,
) -> Result<Slice<'d>> {
    read_slice_from(text, doc, path, anchor, 0, limits)
}

/// Reads one page from `anchor`, starting `offset` bytes into its element's span (a
/// continuation pointer, see [`split_continuation`]). An element whose span is larger than
/// `max_bytes` is returned in parts cut after a line end (a table row, a list or code line),
/// or inside a line longer than the limit at a character boundary; each part's `next_pointer`
/// is the same anchor with the next offset, so the pages' `markdown` still concatenate to the
/// exact file.
pub fn read_slice_from<'d>(
    text: &str,
    doc: &'d Document,
    path: &str,
    anchor: Option<&Anchor>,
    offset: usize,
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
        if offset > 0 {
            return Err(bad_offset(path, offset));
        }
        return Ok(Slice {
            pointer: "document".to_owned(),
            elements: Vec::new(),
            markdown: text.to_owned(),
            next_pointer: None,
            addressed,
            part: None,
        });
    }
    let boundary = |i: usize| elements.get(i).map_or(text.len(), |e| line_start(text, e.range.start));
    let start = if addressed { boundary(first) } else { 0 };
    let span_end = boundary(first + 1).max(start);
    if offset > 0 || span_end - start > limits.max_bytes {
        // The first element alone is over the limit, or this continues one that was.
        let from = start + offset;
        if from >= span_end || !text.is_char_boundary(from) {
            return Err(bad_offset(path, offset));
        }
        let to = if span_end - from <= limits.max_bytes {
            span_end
        } else {
            cut_point(text, from, limits.max_bytes)
        };
        // Offsets count from the element's first line (a page from `document` may start
        // earlier, at blank lines before it): a cut must land past that line's start.
        let base = boundary(first);
        let to = if to <= base { cut_point(text, base, 1).min(span_end) } else { to };
        let e = &elements[first];
        let next_pointer = if to < span_end {
            Some(format!("{}{CONTINUATION_MARK}{}", e.anchor(), to - base))
        } else {
            elements.get(first + 1).map(Element::anchor)
        };
        return Ok(Slice {
            pointer: if addressed { e.anchor() } else { "document".to_owned() },
            elements: vec![e],
            markdown: text[from..to].to_owned(),
            next_pointer,
            addressed,
            part: Some(Part { from: offset, to: to - start, len: span_end - start }),
        });
    }
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
        part: None,
    })
}

/// Where a part of at most `max` bytes starting at `from` ends: after the last line end in
/// that window, else at the last character boundary in it (at least one character).
fn cut_point(text: &str, from: usize, max: usize) -> usize {
    let mut end = (from + max).min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    if let Some(nl) = text[from..end].rfind('\n') {
        return from + nl + 1;
    }
    if end > from {
        return end;
    }
    from + text[from..].chars().next().map_or(1, char::len_utf8)
}

fn bad_offset(path: &str, offset: usize) -> Error {
    Error::invalid_argument(format!(
        "The continuation offset {offset} does not fall inside that element of '{path}'; pass nextPointer exactly as the previous page returned it, or read from the element's anchor."
    ))
}
