//! Include/exclude globs (`contract.md` §3.4).
//!
//! The original uses `Microsoft.Extensions.FileSystemGlobbing` with case-insensitive matching
//! on root-relative, `/`-separated paths. We reproduce the parts that matter:
//! - `*` and `?` stay within one path segment; `**` spans any number of segments, including
//!   none (`**/*.md` matches `a.md`).
//! - Matching ignores case.
//! - An exclude pattern that matches a directory excludes everything below it (`drafts`
//!   excludes `drafts/a.md`); an include pattern must match the file itself.
//! - Patterns may be written with `\` separators and a leading `./` or `/`; both are ignored.
//!   `[…]` classes and `{a,b}` alternatives are accepted as well.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// A compiled include/exclude pair.
#[derive(Clone, Debug)]
pub struct GlobFilter {
    include: GlobSet,
    exclude: GlobSet,
}

/// A pattern that does not compile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidGlob {
    /// The pattern as written.
    pub pattern: String,
    /// Why it does not compile, e.g. `unclosed character class; missing ']'`.
    pub reason: String,
}

impl GlobFilter {
    /// Compiles the two pattern lists. Blank patterns are the caller's concern (the
    /// configuration rejects them); here they match nothing.
    pub fn new<S: AsRef<str>>(include: &[S], exclude: &[S]) -> Result<GlobFilter, InvalidGlob> {
        Ok(GlobFilter { include: compile(include)?, exclude: compile(exclude)? })
    }

    /// Whether `rel_path` (root-relative, `/`-separated) is selected: an include pattern matches
    /// it and no exclude pattern matches it or one of its parent directories.
    pub fn is_included(&self, rel_path: &str) -> bool {
        let path = clean(rel_path);
        self.include.is_match(path) && !self.is_excluded(path)
    }

    /// Whether an exclude pattern matches `rel_path` or one of its parent directories. Use it
    /// on directories to prune a walk.
    pub fn is_excluded(&self, rel_path: &str) -> bool {
        let path = clean(rel_path);
        if self.exclude.is_empty() || path.is_empty() {
            return false;
        }
        path.match_indices('/')
            .map(|(i, _)| &path[..i])
            .chain(std::iter::once(path))
            .any(|prefix| self.exclude.is_match(prefix))
    }

    /// Whether `rel_path` is an indexed document: a `.md` file (any case) that
    /// [`GlobFilter::is_included`] selects.
    pub fn is_indexed(&self, rel_path: &str) -> bool {
        is_markdown_path(rel_path) && self.is_included(rel_path)
    }
}

/// Whether the path ends in `.md`, ignoring case (`contract.md` §3.4).
pub fn is_markdown_path(rel_path: &str) -> bool {
    let name = rel_path.rsplit('/').next().unwrap_or(rel_path);
    name.len() > 3 && name.get(name.len() - 3..).is_some_and(|ext| ext.eq_ignore_ascii_case(".md"))
}

/// A path without leading `./` or `/` and without a trailing `/`.
fn clean(path: &str) -> &str {
    let mut p = path;
    loop {
        if let Some(rest) = p.strip_prefix("./") {
            p = rest;
        } else if let Some(rest) = p.strip_prefix('/') {
            p = rest;
        } else {
            break;
        }
    }
    p.trim_end_matches('/')
}

/// Compiles one list into a set.
fn compile<S: AsRef<str>>(patterns: &[S]) -> Result<GlobSet, InvalidGlob> {
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        let written = pattern.as_ref();
        let normalized = written.trim().replace('\\', "/");
        let glob = GlobBuilder::new(clean(&normalized))
            .case_insensitive(true)
            .literal_separator(true)
            .backslash_escape(false)
            .build()
            .map_err(|e| InvalidGlob { pattern: written.to_owned(), reason: e.kind().to_string() })?;
        builder.add(glob);
    }
    builder.build().map_err(|e| InvalidGlob { pattern: String::new(), reason: e.to_string() })
}
