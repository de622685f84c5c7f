//! Reading the index file and the documents, with a cache of per-document derived data
//! (`docs/reference/catalog-spec.md` §2.8, §5.2–§5.4).
//!
//! Invariants:
//!
//! - The index and the documents are checked on every call; derived data is reused only while
//!   the file's stamp (size, modification time, inode, status-change time) is unchanged, so an
//!   edit by any process is seen by the next call. A call that names the same documents as the
//!   one before re-checks each by its cached on-disk path (one `lstat`, the folders once per
//!   call) and re-reads only those whose stamp changed.
//! - Every file is opened through the workspace guard; a refused or missing file has
//!   `chars: None` and no links.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use yaml_serde::Value;

use super::config::{CatalogSettings, yaml_detail};
use super::index::{MAX_INDEX_BYTES, PathBase, Validated, validate};
use super::model::Model;
use super::{Language, norm};
use crate::error::{Error, ErrorCode, ErrorDetail, Result};
use crate::links::{DocLinks, extract};
use crate::markdown::{Document, prose_text};
use crate::messages::{Msg, msg};
use crate::workspace::{FileStamp, GuardWalk, PathContext, RelPath, Workspace};

/// Documents larger than this are not scanned for links or mentions (§5.2).
pub const MAX_SCAN_BYTES: u64 = 8 * 1024 * 1024;
/// The largest document read at all (the workspace's Markdown limit).
const MAX_DOC_BYTES: u64 = 32 * 1024 * 1024;

/// What the catalog knows about one file.
#[derive(Debug, Default)]
pub struct DocInfo {
    /// Unicode code points (§5.4); `None` when missing, unreadable, refused or not UTF-8.
    pub chars: Option<usize>,
    /// Why the file could not be read, as the guard or the file system said.
    pub problem: Option<FileProblem>,
    /// Anchors and links (empty for files over 8 MiB).
    pub links: DocLinks,
    /// `norm` of the prose (§5.2), for alias mentions.
    pub prose: String,
}

/// Why a file is unreadable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileProblem {
    /// It does not exist.
    Missing,
    /// Refused by the path guard (a symbolic link on the way).
    Refused,
    /// Not a regular file (a folder, a link at the end).
    NotRegular,
    /// Not readable (permissions, not UTF-8, too large).
    Unreadable,
}

/// A cached entry: the file's stamp when it was read, and its data.
type Cached = (FileStamp, Arc<DocInfo>);

/// One document as the last [`DocCache::get_all`] found it: its on-disk path (when the guard
/// accepted it), its stamp (when it is a regular file) and its data.
type Checked = (Option<RelPath>, Option<FileStamp>, Arc<DocInfo>);

/// The documents of the last [`DocCache::get_all`], in its order.
struct LastCall {
    root: PathBuf,
    /// Shared from call to call while the documents stay the same.
    paths: Arc<[String]>,
    docs: Vec<Checked>,
}

/// Cached derived data per path: each document's, and the parsed index files. Owned by the
/// caller (the engine holds one per project).
#[derive(Default)]
pub struct DocCache {
    entries: Mutex<HashMap<String, Cached>>,
    /// Parsed index files by absolute path and language, with the stamp they were read at.
    indexes: Mutex<HashMap<String, CachedIndex>>,
    /// The last `get_all` (the query tools ask for the same documents call after call).
    last: Mutex<Option<Arc<LastCall>>>,
}

impl DocCache {
    /// The data of the file at `path` (root-relative), fresh for its current stamp. Entries are
    /// keyed by the absolute path, so one cache can serve several workspaces.
    pub fn get(&self, ws: &Workspace, path: &str) -> Arc<DocInfo> {
        self.check_in(&ws.guard_walk(), path).2
    }

    /// The full check of one document: the guard (name, Unicode form on disk, folders, the
    /// target), then its data, read again unless cached under the same stamp.
    fn check_in(&self, walk: &GuardWalk<'_>, path: &str) -> Checked {
        let ws = walk.workspace();
        let (rel, meta) = match walk.check(path, PathContext::Any) {
            Ok(found) => found,
            Err(_) => {
                return (
                    None,
                    None,
                    Arc::new(DocInfo { problem: Some(FileProblem::Refused), ..DocInfo::default() }),
                );
            }
        };
        let (stamp, size) = match meta {
            Some(meta) if meta.is_file() => (FileStamp::of(&meta), meta.len()),
            found => {
                let problem = if found.is_some() { FileProblem::NotRegular } else { FileProblem::Missing };
                return (Some(rel), None, Arc::new(DocInfo { problem: Some(problem), ..DocInfo::default() }));
            }
        };
        let key = format!("{}\u{0}{path}", ws.root().display());
        if let Ok(map) = self.entries.lock()
            && let Some((s, info)) = map.get(&key)
            && *s == stamp
        {
            return (Some(rel), Some(stamp), Arc::clone(info));
        }
        let info = Arc::new(read_doc(ws, &rel, size));
        if let Ok(mut map) = self.entries.lock() {
            map.insert(key, (stamp, Arc::clone(&info)));
        }
        (Some(rel), Some(stamp), info)
    }

    /// One document of a call that names the same documents as the last one: `known` is what
    /// the last call found. A regular file at its on-disk path with the same stamp keeps its
    /// data; anything else gets the full check.
    fn recheck_in(&self, walk: &GuardWalk<'_>, path: &str, known: &Checked) -> Checked {
        if let (Some(rel), Some(stamp)) = (&known.0, &known.1)
            && let Ok(Some(meta)) = walk.restat(rel)
            && meta.is_file()
            && FileStamp::of(&meta) == *stamp
        {
            return (known.0.clone(), known.1, Arc::clone(&known.2));
        }
        self.check_in(walk, path)
    }
}

impl DocCache {
    /// [`DocCache::get`] for every path, in order. The checks are system calls (a path-guard
    /// walk and a stat per document, re-done on every call so hand edits are seen), so large
    /// indexes spread them over the cores.
    pub fn get_all(&self, ws: &Workspace, paths: &[&str]) -> Vec<Arc<DocInfo>> {
        const PER_THREAD_MIN: usize = 256;
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(paths.len() / PER_THREAD_MIN)
            .max(1);
        let walk = &ws.guard_walk();
        let last = self.last.lock().ok().and_then(|l| l.clone());
        let last = last.filter(|l| {
            l.root == ws.root()
                && l.paths.len() == paths.len()
                && l.paths.iter().zip(paths).all(|(a, b)| a == b)
        });
        let known = last.as_ref().map(|l| l.docs.as_slice());
        let one = |i: usize, p: &str| match known {
            Some(k) => self.recheck_in(walk, p, &k[i]),
            None => self.check_in(walk, p),
        };
        let docs: Vec<Checked> = if threads == 1 {
            paths.iter().enumerate().map(|(i, p)| one(i, p)).collect()
        } else {
            let per = paths.len().div_ceil(threads);
            std::thread::scope(|scope| {
                let parts: Vec<_> = paths
                    .chunks(per)
                    .enumerate()
                    .map(|(n, part)| {
                        let one = &one;
                        scope.spawn(move || {
                            part.iter().enumerate().map(|(i, p)| one(n * per + i, p)).collect::<Vec<_>>()
                        })
                    })
                    .collect();
                parts
                    .into_iter()
                    .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                    .collect()
            })
        };
        let infos = docs.iter().map(|d| Arc::clone(&d.2)).collect();
        if let Ok(mut slot) = self.last.lock() {
            let paths = match last {
                Some(l) => Arc::clone(&l.paths),
                None => paths.iter().map(|p| (*p).to_owned()).collect(),
            };
            *slot = Some(Arc::new(LastCall { root: ws.root().to_path_buf(), paths, docs }));
        }
        infos
    }
}

fn read_doc(ws: &Workspace, rel: &RelPath, size: u64) -> DocInfo {
    let bytes = match ws.read_bytes(rel, MAX_DOC_BYTES) {
        Ok(b) => b,
        Err(e) => {
            let problem =
                if e.code == ErrorCode::NotFound { FileProblem::Missing } else { FileProblem::Unreadable };
            return DocInfo { problem: Some(problem), ..DocInfo::default() };
        }
    };
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return DocInfo { problem: Some(FileProblem::Unreadable), ..DocInfo::default() };
    };
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    let chars = Some(text.chars().count());
    if size > MAX_SCAN_BYTES || !rel.is_markdown() {
        return DocInfo { chars, ..DocInfo::default() };
    }
    let doc = Document::parse(text);
    DocInfo { chars, problem: None, links: extract(text, &doc), prose: norm(&prose_text(text)) }
}

/// The index file as read.
#[derive(Debug)]
pub struct IndexFile {
    /// Root-relative path.
    pub path: String,
    /// Root-relative folder (`""` at the root).
    pub dir: String,
    /// The exact bytes.
    pub bytes: Vec<u8>,
    /// The parsed value.
    pub value: Value,
    /// Schema check and model.
    pub validated: Validated,
    /// What the query tools derive from the index (made on first use).
    model: OnceLock<Model>,
}

impl IndexFile {
    /// The query tools' [`Model`] of this index, derived once per parsed file.
    pub fn model(&self) -> &Model {
        self.model.get_or_init(|| Model::new(&self.validated.index))
    }
}

/// What reading the index gave.
#[derive(Debug)]
pub enum IndexRead {
    /// The file does not exist (E6).
    Missing(String),
    /// Not valid YAML (E7), with the message.
    InvalidYaml {
        /// 1-based line.
        line: usize,
        /// E7 in the configured language.
        message: String,
    },
    /// Parsed.
    Parsed(Arc<IndexFile>),
}

/// E6.
pub fn index_missing_message(language: Language, path: &str) -> String {
    msg!(language, IndexMissing, path)
}

/// Reads the index named by `settings` (E5 when there is no `index` setting).
pub fn read_index(ws: &Workspace, settings: &CatalogSettings, cache: &DocCache) -> Result<IndexRead> {
    let path = settings.index_path()?.to_owned();
    let rel = ws.rel_path(&path, PathContext::Any)?;
    // The parsed form is reused while the file's size and time are unchanged (§2.8).
    let key = format!("{}\u{0}{path}\u{0}{}", ws.root().display(), settings.language.as_str());
    let stamp =
        ws.guard_walk().restat(&rel).ok().flatten().filter(|m| m.is_file()).map(|m| FileStamp::of(&m));
    if let (Some(stamp), Ok(cache)) = (stamp, cache.indexes.lock())
        && let Some((s, file)) = cache.get(&key)
        && *s == stamp
    {
        return Ok(IndexRead::Parsed(Arc::clone(file)));
    }
    let read = read_index_uncached(ws, settings, &rel, path)?;
    if let (Some(stamp), IndexRead::Parsed(file), Ok(mut cache)) = (stamp, &read, cache.indexes.lock()) {
        cache.insert(key, (stamp, Arc::clone(file)));
    }
    Ok(read)
}

/// A parsed index with the stamp of the file it came from.
type CachedIndex = (FileStamp, Arc<IndexFile>);

fn read_index_uncached(
    ws: &Workspace,
    settings: &CatalogSettings,
    rel: &RelPath,
    path: String,
) -> Result<IndexRead> {
    let bytes = match ws.read_bytes(rel, MAX_INDEX_BYTES) {
        Ok(b) => b,
        Err(e) if e.code == ErrorCode::NotFound => return Ok(IndexRead::Missing(path)),
        Err(e) if e.is(ErrorDetail::TooLarge) => {
            return Err(Error::new(
                ErrorCode::UnsupportedFormat,
                msg!(settings.language, IndexTooLarge, path),
            ));
        }
        Err(e) => return Err(e),
    };
    let dir = rel.parent().map(|p| p.as_str().to_owned()).unwrap_or_default();
    Ok(parse_index(bytes, path, dir, ws.internal_dir_name(), settings.language))
}

/// Parses and validates index bytes.
pub fn parse_index(
    bytes: Vec<u8>,
    path: String,
    dir: String,
    internal: &str,
    language: Language,
) -> IndexRead {
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
    let value = match yaml_serde::from_slice::<Value>(body) {
        Ok(v) => v,
        Err(e) => {
            let line = e.location().map_or(1, |l| l.line());
            let message = msg!(language, IndexNotYaml, path, line, detail = yaml_detail(&e));
            return IndexRead::InvalidYaml { line, message };
        }
    };
    let validated = validate(&value, PathBase { dir: &dir, internal }, language);
    IndexRead::Parsed(Arc::new(IndexFile { path, dir, bytes, value, validated, model: OnceLock::new() }))
}

/// The index for a query tool: E6, E7 and E8 are errors.
pub fn load_valid_index(
    ws: &Workspace,
    settings: &CatalogSettings,
    cache: &DocCache,
) -> Result<Arc<IndexFile>> {
    let language = settings.language;
    match read_index(ws, settings, cache)? {
        IndexRead::Missing(path) => Err(Error::not_found(index_missing_message(language, &path))),
        IndexRead::InvalidYaml { message, .. } => Err(Error::invalid_argument(message)),
        IndexRead::Parsed(file) => {
            if !file.validated.violations.is_empty() {
                return Err(Error::invalid_argument(violation_message(
                    Msg::IndexSchemaFind,
                    &file.validated.violations,
                    language,
                )));
            }
            Ok(file)
        }
    }
}

/// A first line (E8 or E9) and at most 20 violation lines, then "… and N more".
pub fn violation_message(first: Msg, violations: &[super::index::Violation], language: Language) -> String {
    let mut out = first.text(language);
    for v in violations.iter().take(20) {
        out.push('\n');
        out.push_str(&v.line());
    }
    if violations.len() > 20 {
        let more = violations.len() - 20;
        out.push('\n');
        out.push_str(&msg!(language, AndMore, n = more));
    }
    out
}
