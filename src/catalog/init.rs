//! `init` (`docs/reference/catalog-spec.md` §8.4): a commented starter configuration and an index.
//! Its messages are English: the configuration that could name a language is what it creates.
//!
//! Invariants:
//!
//! - Never overwrites: an existing standalone configuration or a `catalog` key in the server
//!   configuration stops the command before anything is written; an existing index is kept.
//! - The server configuration is changed only by appending text, so its comments stay; the
//!   append is atomic (`workspace::append_file_atomic`): a crash or a full disk leaves the file as
//!   it was, and a file created or changed meanwhile is left alone.
//! - Every file is reached through `workspace`: the index through the guard, the configuration
//!   files (which may lie outside the root) through `workspace::outside`.

use std::path::{Path, PathBuf};

use yaml_serde::{Mapping, Value};

use super::config::{STANDALONE_FILE, resolve_in_root};
use super::editor::new_entry_lines;
use super::index::stored_path;
use crate::error::{Error, Result};
use crate::markdown::scan_links;
use crate::messages::{Msg, msg};
use crate::text::Language;
use crate::workspace::{GlobFilter, PathContext, Workspace, append_file_atomic, outside};

/// The first lines of a created index.
const INDEX_HEADER: &str = "# Catalog index: docs, terms and the tag vocabulary.\n# Format: kb_read_guide {\"names\": [\"catalog-index\"]}\nversion: 1\n";

/// What `init` needs.
pub struct InitRequest<'a> {
    /// The project root (absolute).
    pub project_root: &'a Path,
    /// The server configuration named by `--config` (absolute), if any.
    pub server_config: Option<&'a Path>,
    /// `--index`, absolute (default: `index.yaml` in the root).
    pub index: Option<&'a Path>,
    /// `--scan` globs, relative to the configuration's base folder (the project root).
    pub scan: &'a [String],
}

/// Creates the configuration and the index; returns one line per file created or kept.
pub fn init(ws: &Workspace, req: &InitRequest<'_>) -> Result<Vec<String>> {
    let base = outside::canonical_or_given(req.project_root);
    let index_abs: PathBuf = match req.index {
        Some(p) => p.to_path_buf(),
        None => ws.root().join("index.yaml"),
    };
    let index_rel = resolve_in_root(ws, &base, &index_abs.to_string_lossy())
        .filter(|p| !p.is_empty())
        .ok_or_else(|| Error::invalid_path(Msg::InitIndexOutside.text(Language::En)))?;
    let index_rel = ws.rel_path(&index_rel, PathContext::Any)?;
    // The configuration's `index` value, relative to its base folder (the project root).
    let base_rel = resolve_in_root(ws, &base, ".").unwrap_or_default();
    let index_value = stored_path(&base_rel, index_rel.as_str());
    let scan_line = if req.scan.is_empty() {
        None
    } else {
        Some(format!("scan: {}", serde_json::to_string(req.scan).unwrap_or_default()))
    };

    // Refuse before writing anything.
    let config = planned_config(req, &base, &index_value, scan_line.as_deref())?;

    // The index text (pre-filled with --scan).
    let index_exists = ws.file_metadata(&index_rel)?.is_some();
    let index_text =
        if index_exists { None } else { Some(index_text(ws, &base, index_rel.as_str(), req.scan)?) };

    let mut lines = Vec::new();
    // Created when missing (never over a file that appeared meanwhile), else appended to.
    append_file_atomic(&config.path, config.text.as_bytes(), &format!("`{}`", config.shown))?;
    lines.push(if config.existed {
        format!("added a catalog section to {}", config.shown)
    } else {
        format!("created {}", config.shown)
    });
    match index_text {
        None => lines.push(format!("kept existing {index_rel}")),
        Some(text) => {
            ws.create_new(&index_rel, text.as_bytes())?;
            lines.push(format!("created {index_rel}"));
        }
    }
    Ok(lines)
}

/// The configuration file `init` writes.
struct PlannedConfig {
    /// Where it is (absolute).
    path: PathBuf,
    /// What to append to it (all of it, when it does not exist yet).
    text: String,
    /// Its name for messages.
    shown: String,
    /// Whether it exists (only a server configuration may: a standalone one is refused).
    existed: bool,
}

/// The configuration file to write and the text to append to it; an existing catalog
/// configuration is refused.
fn planned_config(
    req: &InitRequest<'_>,
    base: &Path,
    index_value: &str,
    scan_line: Option<&str>,
) -> Result<PlannedConfig> {
    let Some(path) = req.server_config else {
        let path = base.join(STANDALONE_FILE);
        if outside::exists(&path) {
            return Err(Error::invalid_argument(msg!(Language::En, InitFileExists, path = STANDALONE_FILE)));
        }
        let text = standalone(index_value, scan_line);
        return Ok(PlannedConfig { path, text, shown: STANDALONE_FILE.to_owned(), existed: false });
    };
    let shown = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let io = |e: &std::io::Error| Error::io(&format!("`{shown}`"), e);
    let Some(bytes) = outside::read_if_exists(path).map_err(|e| io(&e))? else {
        let text = server_section(index_value, scan_line);
        return Ok(PlannedConfig { path: path.to_path_buf(), text, shown, existed: false });
    };
    let text =
        String::from_utf8(bytes).map_err(|e| io(&std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
    let has_catalog =
        matches!(yaml_serde::from_str::<Value>(&text), Ok(Value::Mapping(m)) if m.contains_key("catalog"));
    if has_catalog {
        return Err(Error::invalid_argument(msg!(Language::En, InitHasSection, path = shown)));
    }
    let mut section = String::new();
    if !text.is_empty() && !text.ends_with('\n') {
        section.push('\n');
    }
    section.push_str(&server_section(index_value, scan_line));
    Ok(PlannedConfig { path: path.to_path_buf(), text: section, shown, existed: true })
}

fn standalone(index: &str, scan: Option<&str>) -> String {
    format!(
        "# Catalog settings for local-vector-search-mcp (also readable by mdmark).\nindex: {index}\nlanguage: en\n{}\n# build:\n#   include: [\"docs/**/*.md\"]\n#   out: dist/docs.html\n#   title: Documentation\n",
        scan.map_or_else(|| "# scan: [\"docs/**/*.md\"]".to_owned(), str::to_owned)
    )
}

fn server_section(index: &str, scan: Option<&str>) -> String {
    let body = standalone(index, scan);
    let mut out = String::from("catalog:\n");
    for line in body.lines() {
        if line.starts_with("# Catalog settings") {
            out.push_str("  # Catalog settings (see the catalog guide).\n");
            continue;
        }
        out.push_str("  ");
        out.push_str(line);
        out.push('\n');
    }
    out
}

fn index_text(ws: &Workspace, base: &Path, index_rel: &str, scan: &[String]) -> Result<String> {
    let mut out = String::from(INDEX_HEADER);
    if scan.is_empty() {
        out.push_str("docs: []\n");
        return Ok(out);
    }
    let globs: Vec<String> =
        scan.iter().filter_map(|g| resolve_in_root(ws, base, g)).filter(|g| !g.is_empty()).collect();
    let filter = GlobFilter::new(&globs, &[])?;
    let mut files: Vec<String> =
        ws.scan_markdown(&filter)?.into_iter().map(|e| e.path.as_str().to_owned()).collect();
    files.sort();
    files.retain(|f| f != index_rel);
    if files.is_empty() {
        out.push_str("docs: []\n");
        return Ok(out);
    }
    let dir = index_rel.rsplit_once('/').map_or("", |(d, _)| d);
    out.push_str("docs:\n");
    for f in files {
        let stem = &f[..f.len() - 3];
        let id: String = stem.chars().map(|c| if c.is_whitespace() { '-' } else { c }).collect();
        let title = title_of(ws, &f).unwrap_or_else(|| stem.rsplit('/').next().unwrap_or(stem).to_owned());
        let mut m = Mapping::new();
        m.insert("id".into(), Value::String(id));
        m.insert("path".into(), Value::String(stored_path(dir, &f)));
        m.insert("title".into(), Value::String(title));
        for line in new_entry_lines(&m, "docs") {
            out.push_str(&line);
            out.push('\n');
        }
    }
    Ok(out)
}

/// The front matter `title`, else the first H1.
fn title_of(ws: &Workspace, path: &str) -> Option<String> {
    let rel = ws.rel_path(path, PathContext::Markdown).ok()?;
    let text = ws.read_markdown(&rel).ok()?.text;
    let body = text.strip_prefix('\u{FEFF}').unwrap_or(&text);
    if let Some(rest) = body.strip_prefix("---\n").or_else(|| body.strip_prefix("---\r\n"))
        && let Some(end) = rest.find("\n---")
        && let Ok(Value::Mapping(m)) = yaml_serde::from_str::<Value>(&rest[..end])
        && let Some(Value::String(t)) = m.get("title")
        && !t.trim().is_empty()
    {
        return Some(t.trim().to_owned());
    }
    scan_links(body)
        .headings
        .into_iter()
        .find(|h| h.level == 1)
        .map(|h| h.text.trim().to_owned())
        .filter(|t| !t.is_empty())
}
