//! Walking the root: the Markdown source set (`docs/reference/original-server.md` §3.4, §6.1) and
//! `kb_list_files` (§7.8).

use std::fs;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use super::atomic::TEMP_PREFIX;
use super::glob::GlobFilter;
use super::ignore_files::{Folder, Outer, PathRules, Skipped};
use super::path::{RelPath, compare_paths, component_problem, eq_ignore_case, has_md_extension};
use super::{Workspace, is_link};
use crate::error::{Error, ErrorCode, Result};

/// A Markdown file found by [`Workspace::scan_markdown`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileEntry {
    /// Where the file is.
    pub path: RelPath,
    /// Size in bytes.
    pub len: u64,
    /// Last modification time.
    pub modified: SystemTime,
}

/// What `kb_list_files` calls a file (`docs/reference/original-server.md` §7.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FileKind {
    /// The extension is `.md` (case-insensitive).
    Markdown,
    /// Anything else.
    Asset,
}

impl FileKind {
    /// The wire spelling: `markdown` or `asset`.
    pub fn as_str(self) -> &'static str {
        match self {
            FileKind::Markdown => "markdown",
            FileKind::Asset => "asset",
        }
    }
}

/// A file found by [`Workspace::list_files`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedFile {
    /// Where the file is.
    pub path: RelPath,
    /// Markdown or asset.
    pub kind: FileKind,
    /// Size in bytes.
    pub size: u64,
    /// Last modification time (`lastWriteTimeUtc` on the wire).
    pub last_write_time: SystemTime,
}

impl Workspace {
    /// The Markdown source set: every `.md` file (case-insensitive extension) below the root that
    /// `filter` matches, sorted with [`compare_paths`].
    ///
    /// Skips `.git` (any case, before descending), the internal index directory, links (never
    /// followed), in-flight temp files, and names the path guard would refuse. A directory that
    /// cannot be enumerated is `PERMISSION_DENIED`; there are no partial results.
    ///
    /// With ignore files respected ([`Workspace::respects_ignore_files`]), what they name is left
    /// out too (`workspace/ignore_files.rs`) and recorded: [`Workspace::last_skipped`].
    pub fn scan_markdown(&self, filter: &GlobFilter) -> Result<Vec<FileEntry>> {
        let mut out = Vec::new();
        let mut skipped = Skipped::default();
        let ignore = self.ignore_files.then_some(&mut skipped);
        self.walk_filtered(&|_| true, false, None, ignore, &mut |path, meta| {
            if has_md_extension(path.file_name()) && filter.matches(&path) {
                out.push(FileEntry { path, len: meta.len(), modified: modified(meta) });
            }
        })?;
        out.sort_by(|a, b| compare_paths(a.path.as_str(), b.path.as_str()));
        if self.ignore_files {
            *self.skipped.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(skipped);
        }
        Ok(out)
    }

    /// The ignore rules for one path at a time (an edit, a watcher event; read once for a batch
    /// of them), or `None` when ignore files are not respected.
    pub fn path_rules(&self) -> Option<PathRules> {
        self.ignore_files.then(|| PathRules::load(&self.root))
    }

    /// `kb_list_files`: every file below the root, Markdown or not (the Markdown include/exclude
    /// configuration does not apply), sorted with [`compare_paths`].
    ///
    /// `prefix` keeps files equal to it or below it, compared case-insensitively on whole
    /// segments (`chapters` keeps `Chapters/a.md`, not `chapters2/a.md`). `glob` keeps files it
    /// matches (`None` keeps all, like `**/*`). Other dot files (`.editorconfig`, `.github/…`)
    /// are kept; skips and errors are as in [`Workspace::scan_markdown`].
    pub fn list_files(&self, prefix: Option<&RelPath>, glob: Option<&GlobFilter>) -> Result<Vec<ListedFile>> {
        let prefix: Option<Vec<&str>> = prefix.map(|p| p.components().collect());
        let within = |path: &str| prefix.as_ref().is_none_or(|p| segments_start_with(path, p));
        // Descend into directories inside the prefix and into the prefix's ancestors only.
        let descend = |dir: &str| {
            prefix.as_ref().is_none_or(|p| {
                segments_start_with(dir, p) || {
                    let d: Vec<&str> = dir.split('/').collect();
                    d.len() < p.len() && segments_start_with(&p.join("/"), &d)
                }
            })
        };
        let mut out = Vec::new();
        self.walk(&descend, false, None, &mut |path, meta| {
            if within(path.as_str()) && glob.is_none_or(|g| g.matches(&path)) {
                let kind = if path.is_markdown() { FileKind::Markdown } else { FileKind::Asset };
                out.push(ListedFile { path, kind, size: meta.len(), last_write_time: modified(meta) });
            }
        })?;
        out.sort_by(|a, b| compare_paths(a.path.as_str(), b.path.as_str()));
        Ok(out)
    }

    /// Removes the temp files that interrupted atomic writes left behind (a process killed
    /// between writing a temp file and renaming it) and returns their root-relative paths. A
    /// temp file whose process is still running (a write in flight, here or in another server)
    /// is left alone: see `atomic::temp_file_is_orphan`.
    pub fn sweep_temp_files(&self) -> Result<Vec<String>> {
        let mut found = Vec::new();
        self.walk(&|_| true, true, None, &mut |path, meta| {
            if super::atomic::temp_file_is_orphan(path.file_name(), modified(meta)) {
                found.push(path);
            }
        })?;
        let mut removed = Vec::new();
        for path in found {
            match fs::remove_file(self.root.join(path.as_str())) {
                Ok(()) => removed.push(path.as_str().to_owned()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io(&format!("'{path}'"), &e)),
            }
        }
        Ok(removed)
    }

    /// Iterative walk of the root: calls `visit` for every regular file (with `temp`, for every
    /// leftover temp file instead) and descends into the directories `descend` accepts (given
    /// their root-relative path). `on_dir`, when given, is called with each directory's absolute
    /// path before it is read.
    pub(super) fn walk(
        &self,
        descend: &dyn Fn(&str) -> bool,
        temp: bool,
        on_dir: Option<&mut dyn FnMut(&std::path::Path)>,
        visit: &mut dyn FnMut(RelPath, &fs::Metadata),
    ) -> Result<()> {
        self.walk_filtered(descend, temp, on_dir, None, visit)
    }

    /// [`Workspace::walk`], leaving out what ignore files name when `ignore` is given, and
    /// recording there the folders and Markdown files left out.
    fn walk_filtered(
        &self,
        descend: &dyn Fn(&str) -> bool,
        temp: bool,
        mut on_dir: Option<&mut dyn FnMut(&std::path::Path)>,
        mut ignore: Option<&mut Skipped>,
        visit: &mut dyn FnMut(RelPath, &fs::Metadata),
    ) -> Result<()> {
        let outer = ignore.is_some().then(|| Outer::load(&self.root));
        let mut stack: Vec<(String, PathBuf, Option<Arc<Folder>>)> =
            vec![(String::new(), self.root.clone(), None)];
        while let Some((dir_rel, dir_abs, parent_rules)) = stack.pop() {
            if let Some(on_dir) = on_dir.as_mut() {
                on_dir(&dir_abs);
            }
            let entries = match fs::read_dir(&dir_abs) {
                Ok(entries) => entries,
                // Removed while we walked: nothing to list.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && !dir_rel.is_empty() => {
                    continue;
                }
                // Deeper than the system's path limit (4096 bytes on Linux): no call can reach
                // it by its path, now or later, so it is left out rather than failing the scan.
                Err(e) if e.kind() == std::io::ErrorKind::InvalidFilename && !dir_rel.is_empty() => {
                    tracing::warn!(
                        "skipped a folder whose path is longer than the system allows ({} bytes): '{}…'",
                        dir_abs.as_os_str().len(),
                        dir_rel.chars().take(120).collect::<String>()
                    );
                    continue;
                }
                Err(e) => return Err(enumeration_error(&dir_rel, &e)),
            };
            let entries =
                entries.collect::<std::io::Result<Vec<_>>>().map_err(|e| enumeration_error(&dir_rel, &e))?;
            // This folder's ignore rules (its own files on top of its parent's).
            let rules = outer.as_ref().map(|_| {
                let names: Vec<String> =
                    entries.iter().filter_map(|e| e.file_name().into_string().ok()).collect();
                match &parent_rules {
                    Some(parent) => parent.child(&dir_abs, &names),
                    None => Folder::root(&dir_abs, &names),
                }
            });
            for entry in entries {
                let Ok(name) = entry.file_name().into_string() else {
                    continue; // Not UTF-8: cannot be a `RelPath`.
                };
                let is_temp = name.starts_with(TEMP_PREFIX);
                if self.skip_name(&name) && !(temp && is_temp) {
                    continue;
                }
                let meta = match entry.metadata() {
                    Ok(meta) => meta,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(enumeration_error(&dir_rel, &e)),
                };
                if is_link(&meta) {
                    continue;
                }
                let rel = if dir_rel.is_empty() { name } else { format!("{dir_rel}/{name}") };
                if let (Some(rules), Some(outer), Some(skipped)) = (&rules, &outer, ignore.as_deref_mut()) {
                    let is_dir = meta.is_dir();
                    // Only folders and Markdown files are worth naming; other files are never indexed.
                    if (is_dir || has_md_extension(&rel))
                        && let Some(by) = rules.ignored(outer, &self.root, &entry.path(), is_dir)
                    {
                        skipped.note(&rel, is_dir, by);
                        continue;
                    }
                }
                if meta.is_dir() {
                    if descend(&rel) {
                        stack.push((rel, entry.path(), rules.clone()));
                    }
                } else if meta.is_file() && is_temp == temp {
                    visit(RelPath::from_validated(rel), &meta);
                }
            }
        }
        Ok(())
    }

    /// Whether a directory entry is never listed: `.git`, the internal directory, temp files,
    /// and names the path guard refuses.
    fn skip_name(&self, name: &str) -> bool {
        name.eq_ignore_ascii_case(".git")
            || name.eq_ignore_ascii_case(&self.internal)
            || name.starts_with(TEMP_PREFIX)
            || component_problem(name).is_some()
    }
}

/// Whether `path`'s first segments equal `prefix`, case-insensitively.
fn segments_start_with(path: &str, prefix: &[&str]) -> bool {
    let mut segments = path.split('/');
    prefix.iter().all(|p| segments.next().is_some_and(|s| eq_ignore_case(s, p)))
}

pub(super) fn modified(meta: &fs::Metadata) -> SystemTime {
    meta.modified().unwrap_or(SystemTime::UNIX_EPOCH)
}

fn enumeration_error(dir: &str, err: &std::io::Error) -> Error {
    if dir.is_empty() && err.kind() == std::io::ErrorKind::NotFound {
        return Error::not_found(
            "The knowledge-base root no longer exists; recreate it or restart with an existing --root.",
        );
    }
    let what =
        if dir.is_empty() { "the knowledge-base root".to_owned() } else { format!("directory '{dir}'") };
    Error::new(
        ErrorCode::PermissionDenied,
        format!("Could not list {what} ({}); check its permissions or exclude it.", err.kind()),
    )
}
