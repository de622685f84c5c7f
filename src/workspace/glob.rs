//! Include/exclude glob filters (`docs/reference/original-server.md` §3.4, §7.5, §7.8).

use globset::{Candidate, GlobBuilder, GlobSet, GlobSetBuilder};

use super::path::quoted;
use crate::error::{Error, Result};

/// The include pattern used when none is given: every Markdown file at any depth.
pub const DEFAULT_INCLUDE: &str = "**/*.md";

/// The `kb_search` wording for a bad `includeGlobs` / `excludeGlobs` entry
/// (`docs/reference/original-server.md` §7.5).
const MSG_SEARCH_GLOBS: &str = "One or more glob patterns are invalid.";

/// A compiled include/exclude pair matched against root-relative `/` paths.
///
/// A path matches when an include pattern matches it and no exclude pattern matches it or one of
/// its ancestor folders (an excluded folder excludes everything below it, as in the original's
/// .NET globbing: `drafts` excludes `drafts/a.md`). Matching is case-insensitive, `*` and `?` stay within one path segment, `**` spans segments (`*.md` is
/// top-level only; `**/*.md` is every depth; `docs/**` is everything below `docs`).
#[derive(Clone, Debug)]
pub struct GlobFilter {
    include: GlobSet,
    exclude: GlobSet,
}

impl GlobFilter {
    /// Compiles `includes` (default [`DEFAULT_INCLUDE`] when empty) and `excludes`.
    ///
    /// A bad pattern is `INVALID_ARGUMENT` starting `One or more glob patterns are invalid.`
    /// (the `kb_search` wording).
    pub fn new(includes: &[String], excludes: &[String]) -> Result<GlobFilter> {
        Self::build(includes, excludes, &|_| MSG_SEARCH_GLOBS.to_owned())
    }

    /// Like [`GlobFilter::new`], but a bad pattern's message starts `<field> is invalid.` where
    /// `<field>` is `include_name` or `exclude_name`, e.g. `includeGlob is invalid.` for
    /// `kb_list_files` (`docs/reference/original-server.md` §7.8).
    pub fn with_names(
        includes: &[String],
        excludes: &[String],
        include_name: &str,
        exclude_name: &str,
    ) -> Result<GlobFilter> {
        Self::build(includes, excludes, &|is_include| {
            format!("{} is invalid.", if is_include { include_name } else { exclude_name })
        })
    }

    fn build(includes: &[String], excludes: &[String], base: &dyn Fn(bool) -> String) -> Result<GlobFilter> {
        let default = [DEFAULT_INCLUDE.to_owned()];
        let includes = if includes.is_empty() { &default[..] } else { includes };
        Ok(GlobFilter {
            include: compile(includes, &|| base(true))?,
            exclude: compile(excludes, &|| base(false))?,
        })
    }

    /// Whether the root-relative `path` (`/` or `\` separated) is included and not excluded.
    pub fn matches(&self, path: impl AsRef<str>) -> bool {
        let path = path.as_ref();
        let normalised;
        let path = if path.contains('\\') {
            normalised = path.replace('\\', "/");
            normalised.as_str()
        } else {
            path
        };
        // Compared in NFC (the patterns are normalised when compiled): a macOS name in NFD
        // matches a pattern typed composed, and the reverse.
        let composed = super::nfc::nfc(path);
        let path = composed.as_ref();
        let candidate = Candidate::new(path);
        self.include.is_match_candidate(&candidate) && !self.is_excluded(path)
    }

    /// Whether `path` or one of its ancestor folders matches an exclude pattern.
    fn is_excluded(&self, path: &str) -> bool {
        if self.exclude.is_empty() {
            return false;
        }
        path.match_indices('/')
            .map(|(i, _)| &path[..i])
            .chain(std::iter::once(path))
            .any(|prefix| self.exclude.is_match(prefix))
    }
}

fn compile(patterns: &[String], base: &dyn Fn() -> String) -> Result<GlobSet> {
    let mut set = GlobSetBuilder::new();
    for pattern in patterns {
        let glob = normalise(pattern)
            .map(|p| super::nfc::nfc(&p).into_owned())
            .and_then(|p| {
                GlobBuilder::new(&p)
                    .case_insensitive(true)
                    .literal_separator(true)
                    .backslash_escape(false)
                    .build()
                    .map_err(|e| format!("is not a valid glob ({})", e.kind()))
            })
            .map_err(|reason| {
                Error::invalid_argument(format!("{} Pattern '{}' {reason}.", base(), quoted(pattern)))
            })?;
        set.add(glob);
    }
    set.build().map_err(|e| Error::invalid_argument(format!("{} {}.", base(), e.kind())))
}

/// Applies the contract's validation (blank, rooted, `:`, control characters, `..` segments),
/// then normalises: `\` → `/`, leading `./` dropped, trailing `/` → `/**`.
fn normalise(pattern: &str) -> Result<String, String> {
    if pattern.trim().is_empty() {
        return Err("is blank; give a pattern such as 'docs/**'".to_owned());
    }
    if pattern.starts_with(['/', '\\']) {
        return Err("starts with a separator; write it relative to the root, e.g. 'docs/**'".to_owned());
    }
    if pattern.contains(':') {
        return Err("contains ':'; drive letters and URLs are not allowed".to_owned());
    }
    if pattern.chars().any(char::is_control) {
        return Err("contains a control character; remove it".to_owned());
    }
    if pattern.split(['/', '\\']).any(|s| s == "..") {
        return Err("has a '..' segment; patterns cannot leave the root".to_owned());
    }
    let mut p = pattern.replace('\\', "/");
    while let Some(rest) = p.strip_prefix("./") {
        p = rest.to_owned();
    }
    if p.is_empty() {
        return Err("matches nothing; give a pattern such as 'docs/**'".to_owned());
    }
    if p.ends_with('/') {
        p.push_str("**");
    }
    Ok(p)
}
