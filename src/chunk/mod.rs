//! Chunks: the units that search indexes and returns (`docs/reference/original-server.md` §5.8,
//! chunker version 6).
//!
//! A chunk is a run of consecutive indexable elements of one section. Headings are never chunk
//! text (their words are searchable through the heading path); front matter is its own section.
//!
//! Invariants:
//!
//! - Deterministic: the same document and options give the same chunks in the same order.
//! - Chunks never cross a section boundary and never overlap; an element is never split, so a
//!   single oversized element is a chunk of its own.
//! - The embedding text always uses `\n` (the original used the platform newline).

use std::ops::Range;

mod front_matter;
pub use front_matter::{fields_of_yaml, front_matter_fields};

use crate::markdown::{Document, Element, ElementKind, LogicalPointer};
use crate::text::sha256_hex;

/// The chunker's version, recorded in the index manifest.
pub const CHUNKER_VERSION: &str = "6";
/// The embedding-text builder's version, recorded in the index manifest.
pub const EMBEDDING_TEXT_VERSION: &str = "1";

/// Chunking settings (`chunking.*` in the config).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkOptions {
    /// Largest chunk text in UTF-8 bytes, unless one element alone is larger.
    pub max_chunk_bytes: usize,
    /// Most elements per chunk.
    pub max_elements: usize,
    /// Put a `Heading:` line into the embedding text.
    pub include_heading_context: bool,
    /// Index front matter as a chunk.
    pub include_front_matter: bool,
}

impl Default for ChunkOptions {
    fn default() -> Self {
        ChunkOptions {
            max_chunk_bytes: 4096,
            max_elements: 20,
            include_heading_context: true,
            include_front_matter: true,
        }
    }
}

/// One chunk of a document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// 0-based position in the document.
    pub ordinal: usize,
    /// Logical pointer of the first element (search hits point here).
    pub pointer: LogicalPointer,
    /// Heading path of the last element that has one.
    pub heading_path: Option<String>,
    /// Trimmed element texts joined by a blank line.
    pub text: String,
    /// Source range from the first element's start to the last element's end.
    pub range: Range<usize>,
    /// 1-based first line.
    pub start_line: usize,
    /// 1-based last line.
    pub end_line: usize,
    /// Number of elements.
    pub element_count: usize,
}

impl Chunk {
    /// The text sent to the embedding model (builder v1, `\n` separators).
    pub fn embedding_text(&self, path: &str, include_heading_context: bool) -> String {
        embedding_text(path, self.heading_path.as_deref(), &self.text, include_heading_context)
    }
}

/// `Path: <path>\n[Heading: <heading path>\n]\n<text trimmed>`.
pub fn embedding_text(
    path: &str,
    heading_path: Option<&str>,
    text: &str,
    include_heading_context: bool,
) -> String {
    let mut out = format!("Path: {path}\n");
    if let Some(h) = heading_path.filter(|h| include_heading_context && !h.trim().is_empty()) {
        out.push_str("Heading: ");
        out.push_str(h);
        out.push('\n');
    }
    out.push('\n');
    out.push_str(text.trim());
    out
}

/// SHA-256 of the embedding text: what decides whether a chunk needs a new vector.
pub fn embedding_text_hash(embedding_text: &str) -> String {
    sha256_hex(embedding_text.as_bytes())
}

fn indexable(e: &Element, opts: &ChunkOptions) -> bool {
    match e.kind {
        ElementKind::Document | ElementKind::Heading => false,
        ElementKind::FrontMatter => opts.include_front_matter,
        _ => true,
    }
}

/// Splits a parsed document into chunks.
pub fn chunk(doc: &Document, opts: &ChunkOptions) -> Vec<Chunk> {
    let mut chunks = Vec::new();
    let mut current: Vec<&Element> = Vec::new();
    let mut text = String::new();
    let max_elements = opts.max_elements.max(1);
    for e in doc.elements.iter().filter(|e| indexable(e, opts)) {
        let piece = e.text.trim();
        if let Some(last) = current.last() {
            let section_changed = last.section != e.section;
            let joined_len = text.len() + 2 + piece.len();
            if section_changed || current.len() + 1 > max_elements || joined_len > opts.max_chunk_bytes {
                close(&mut chunks, &mut current, &mut text);
            }
        }
        if !current.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(piece);
        current.push(e);
    }
    close(&mut chunks, &mut current, &mut text);
    if chunks.iter().all(|c| c.pointer.as_str() == "frontmatter") {
        headings_only(doc, &mut chunks);
    }
    chunks
}

/// A document whose body has no indexable text (a `# 見出しだけの文書` stub, a page of headings)
/// is still found by its headings: one chunk of their titles, pointing at the first heading.
/// (The original indexed no chunk for it, so it could not be found at all; `docs/tools.md`,
/// "What is indexed".)
fn headings_only(doc: &Document, chunks: &mut Vec<Chunk>) {
    let headings: Vec<&Element> =
        doc.elements.iter().filter(|e| e.kind == ElementKind::Heading && !e.text.trim().is_empty()).collect();
    let (Some(first), Some(last)) = (headings.first(), headings.last()) else { return };
    let text = headings.iter().map(|e| e.text.trim()).collect::<Vec<_>>().join("\n\n");
    chunks.push(Chunk {
        ordinal: chunks.len(),
        pointer: first.pointer.clone(),
        heading_path: first.heading_path.clone(),
        text,
        range: first.range.start..last.range.end,
        start_line: first.start_line,
        end_line: last.end_line,
        element_count: headings.len(),
    });
}

fn close(chunks: &mut Vec<Chunk>, current: &mut Vec<&Element>, text: &mut String) {
    let (Some(first), Some(last)) = (current.first(), current.last()) else { return };
    chunks.push(Chunk {
        ordinal: chunks.len(),
        pointer: first.pointer.clone(),
        heading_path: current.iter().rev().find_map(|e| e.heading_path.clone()),
        text: std::mem::take(text),
        range: first.range.start..current.iter().map(|e| e.range.end).max().unwrap_or(last.range.end),
        start_line: first.start_line,
        end_line: current.iter().map(|e| e.end_line).max().unwrap_or(last.end_line),
        element_count: current.len(),
    });
    current.clear();
}

#[cfg(test)]
mod tests;
