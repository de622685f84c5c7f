//! The chunk stream as NDJSON (`export-chunks`, `docs/design/scale.md`): one JSON object per
//! chunk, the chunks the index would hold for the project's files, in the shape a distributed
//! engine (Quickwit, OpenSearch's `_bulk`) ingests.
//!
//! Invariants:
//!
//! - The same chunks as the index: the files the index filter admits, parsed and chunked with
//!   the index's settings; each chunk's `anchor` is the v2 anchor of its first element, as a
//!   search hit names it, so a hit found elsewhere is read and edited here by `path` + `anchor`.
//! - Reads only the Markdown (no index is opened or written); a file that cannot be read (not
//!   UTF-8, too large) is skipped and counted, never fatal.

use std::io::Write;

use serde_json::{Map, Value, json};

use crate::chunk::{ChunkOptions, chunk, front_matter_fields};
use crate::error::{Error, ErrorCode, Result};
use crate::markdown::Document;
use crate::workspace::{GlobFilter, Workspace};

/// What an export wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChunkExport {
    /// Files exported.
    pub files: usize,
    /// Chunks (lines) written.
    pub chunks: usize,
    /// Files skipped, each `path: reason`.
    pub skipped: Vec<String>,
}

/// Writes every chunk of the project's indexed files to `out`, one JSON object per line, files in
/// path order: `path`, `anchor`, `ordinal`, `heading_path`, `text`, `start_line`, `end_line`,
/// `chunk_hash` (XXH64 of the text), `source_hash` (SHA-256 of the file) and `front_matter`
/// (the file's fields: a string, a list for repeated keys, `null` for a key without a value).
pub fn export_chunks(
    workspace: &Workspace,
    filter: &GlobFilter,
    options: &ChunkOptions,
    out: &mut dyn Write,
) -> Result<ChunkExport> {
    let mut done = ChunkExport::default();
    let write_err = |e: std::io::Error| Error::io("the chunk export", &e);
    for entry in workspace.scan_markdown(filter)? {
        let source = match workspace.read_markdown(&entry.path) {
            Ok(s) => s,
            Err(e) if matches!(e.code, ErrorCode::UnsupportedFormat | ErrorCode::NotFound) => {
                done.skipped.push(format!("{}: {}", entry.path, e.message));
                continue;
            }
            Err(e) => return Err(e),
        };
        let doc = Document::parse(&source.text);
        let front_matter = front_matter_object(&doc);
        let mut anchor_of = super::anchor_finder(&doc);
        for c in chunk(&doc, options) {
            let anchor = anchor_of(&c.pointer);
            let line = json!({
                "path": entry.path.as_str(),
                "anchor": anchor,
                "ordinal": c.ordinal,
                "heading_path": c.heading_path.unwrap_or_default(),
                "text": c.text,
                "start_line": c.start_line,
                "end_line": c.end_line,
                "chunk_hash": crate::text::xxh64_hex(c.text.as_bytes()),
                "source_hash": source.source_hash,
                "front_matter": front_matter,
            });
            serde_json::to_writer(&mut *out, &line)
                .map_err(|e| Error::internal(format!("chunk export: {e}")))?;
            out.write_all(b"\n").map_err(write_err)?;
            done.chunks += 1;
        }
        done.files += 1;
    }
    out.flush().map_err(write_err)?;
    Ok(done)
}

/// The file's front-matter fields as one JSON object.
fn front_matter_object(doc: &Document) -> Value {
    let mut map = Map::new();
    for (key, value) in front_matter_fields(doc) {
        let value = value.map_or(Value::Null, Value::String);
        let Some(slot) = map.get_mut(&key) else {
            map.insert(key, value);
            continue;
        };
        match slot {
            Value::Array(list) => list.push(value),
            Value::Null => *slot = value,
            first => {
                let first_value = first.take();
                *first = Value::Array(vec![first_value, value]);
            }
        }
    }
    Value::Object(map)
}
