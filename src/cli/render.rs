//! Human-readable renderings of tool results for the terminal.

use std::fmt::Write;

use crate::wire::{
    MarkdownSlice, OutlineNode, OutlineResponse, ReindexResult, SearchResponse, StatusResponse,
};

/// `reindex` summary.
pub fn reindex(r: &ReindexResult) -> String {
    let mut out = format!(
        "indexed {} file(s) ({} chunks), {} unchanged, {} removed, {} scanned\n",
        r.indexed_files, r.chunks_indexed, r.skipped_files, r.deleted_files, r.scanned_files
    );
    for f in &r.failed_files {
        let _ = writeln!(out, "  skipped: {f}");
    }
    if let Some(w) = &r.warning {
        let _ = writeln!(out, "warning: {w}");
    }
    out
}

/// Bold yellow for the `[…]` matches when writing to a terminal.
fn highlight(snippet: &str, color: bool) -> String {
    if !color {
        return snippet.to_owned();
    }
    snippet.replace('[', "\x1b[1;33m").replace(']', "\x1b[0m")
}

/// `search` results.
pub fn search(r: &SearchResponse, color: bool) -> String {
    let mut out = String::new();
    if let Some(w) = &r.warning {
        let _ = writeln!(out, "note: {w}");
    }
    if r.results.is_empty() {
        out.push_str("no results\n");
    }
    for (i, hit) in r.results.iter().enumerate() {
        let (bold, reset) = if color { ("\x1b[1m", "\x1b[0m") } else { ("", "") };
        let _ = write!(out, "{:>2}. {bold}{}{reset}", i + 1, hit.path);
        if let Some(h) = &hit.heading_path {
            let _ = write!(out, "  {h}");
        }
        if hit.stale == Some(true) {
            out.push_str("  (changed since indexed)");
        }
        out.push('\n');
        let snippet: String = hit.snippet.split_whitespace().collect::<Vec<_>>().join(" ");
        let _ = writeln!(out, "    {}", highlight(&snippet, color));
        let _ = writeln!(out, "    read: {} {}", hit.path, hit.pointer);
        if let Some(e) = &hit.explain {
            let rank = |r: Option<u32>| r.map_or_else(|| "-".to_owned(), |r| r.to_string());
            let _ = write!(
                out,
                "    explain: {} score {:.5}  lexical rank {}  vector rank {}",
                hit.search_mode.as_deref().or(r.mode.as_deref()).unwrap_or_default(),
                e.fused_score,
                rank(e.lexical_rank),
                rank(e.vector_rank)
            );
            if let Some(d) = e.vector_distance {
                let _ = write!(out, " (distance {d:.4})");
            }
            if let Some(k) = e.rrf_k {
                let _ = write!(out, "  rrfK {k}");
            }
            out.push('\n');
        }
    }
    out
}

/// `status` summary.
pub fn status(s: &StatusResponse) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "root:        {}", s.project.root);
    let _ = writeln!(out, "index:       {}", s.database_path);
    let _ = writeln!(
        out,
        "documents:   {}   chunks: {}   last indexed: {}",
        s.project.documents,
        s.project.chunks,
        s.project.last_indexed_at_utc.as_deref().unwrap_or("never")
    );
    let _ = writeln!(out, "mode:        {} (embeddings: {})", s.index_mode, s.embedding_provider);
    if let Some(ignored) = s.project.ignored.as_ref().filter(|i| i.count > 0) {
        let shown: Vec<&str> = ignored.paths.iter().take(5).map(|p| p.path.as_str()).collect();
        let more = if ignored.count as usize > shown.len() { ", …" } else { "" };
        let _ = writeln!(
            out,
            "ignored:     {} by ignore files: {}{more} (`status --json` says by which rule; --no-ignore indexes them)",
            ignored.count,
            shown.join(", ")
        );
    }
    if let Some(v) = &s.vectors {
        let _ =
            writeln!(out, "vectors:     {} built, {} pending ({})", v.vectors, v.pending, s.embedding_model);
        if let Some(e) = &v.last_error {
            let _ = writeln!(out, "last error:  {e}");
        }
        if !v.compatibility.is_compatible {
            let _ =
                writeln!(out, "vectors compatible: no — run `reindex --force` to rebuild the vectors only");
        }
    }
    if !s.compatibility.is_compatible {
        let _ = writeln!(out, "compatible:  no — run `reindex --force`");
        for p in &s.compatibility.problems {
            let _ = writeln!(out, "  - {p}");
        }
    }
    for w in &s.warnings {
        let _ = writeln!(out, "warning:     {w}");
    }
    out
}

/// `read`: the Markdown itself, then where to continue.
pub fn read(s: &MarkdownSlice) -> String {
    let mut out = s.markdown.clone();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    if let Some(next) = &s.next_pointer {
        let _ = writeln!(out, "\n-- more: read {} {next}", s.path);
    }
    out
}

/// `links`: one line per edge, `from:line -> to#fragment (kind)  [broken: reason]`, then the counts.
pub fn links(r: &crate::wire::LinksResponse) -> String {
    let mut out = String::new();
    for e in &r.edges {
        let frag = e.to_fragment.as_deref().map(|f| format!("#{f}")).unwrap_or_default();
        let state = e.reason.as_deref().map(|r| format!("  [broken: {r}]")).unwrap_or_default();
        out.push_str(&format!("{}:{} -> {}{frag} ({}){state}\n", e.from, e.line, e.to, e.kind));
    }
    let scope = r.path.as_deref().unwrap_or("the project");
    out.push_str(&format!("{} link(s), {} broken, around {scope}\n", r.total, r.broken));
    out
}

/// `outline`: an indented heading tree with anchors.
pub fn outline(o: &OutlineResponse) -> String {
    fn walk(out: &mut String, nodes: &[OutlineNode], depth: usize) {
        for n in nodes {
            let _ = writeln!(out, "{}{}  {}", "  ".repeat(depth), n.title, n.pointer);
            walk(out, &n.children, depth + 1);
        }
    }
    let mut out = String::new();
    walk(&mut out, &o.headings, 0);
    out
}
