//! `export-chunks`: the project's chunk stream as NDJSON for a distributed engine
//! (`docs/design/scale.md`, "Export").

use super::Engine;
use crate::error::Result;
use crate::indexer::{ChunkExport, export_chunks};

impl Engine {
    /// Writes every chunk the index would hold for the project's files to `out`, one JSON object
    /// per line (fields in `indexer::export_chunks`). Reads only the Markdown.
    pub fn export_chunks(&self, out: &mut dyn std::io::Write) -> Result<ChunkExport> {
        export_chunks(&self.core.workspace, &self.core.filter, &self.core.chunk_options, out)
    }
}
