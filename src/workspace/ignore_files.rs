//! Ignore files: which files a developer already keeps out of the project.
//!
//! The Markdown source set leaves out what the project's ignore files name, as ripgrep and every
//! editor do (`docs/tools.md`, "What is indexed"): `.gitignore` in every folder (nested ones
//! too), `.ignore` (ripgrep's own, same syntax), the repository's `.git/info/exclude` and git's
//! global excludes (`core.excludesFile`, else `$XDG_CONFIG_HOME/git/ignore`). The matchers are
//! the `ignore` crate's (ripgrep's), so the syntax is git's: `!` re-includes, a trailing `/` names
//! folders only, a leading `/` anchors at the file's folder.
//!
//! Precedence, as ripgrep's: a deeper folder's files before a shallower one's, and within one
//! folder `.ignore` before `.gitignore`; then the `.gitignore` files of the folders between the
//! repository's top and the root (when the root is inside a git repository), then
//! `.git/info/exclude`, then the global excludes. The first file with a match decides: an ignore
//! pattern leaves the path out, a `!` pattern keeps it. An ignored folder is not entered, so a
//! file below it cannot be re-included (git's rule).
//!
//! `.gitignore` files count whether or not the root is a git repository: a copied or exported
//! tree keeps its author's intent. `knowledgeBase.respectIgnoreFiles: false` (or `--no-ignore`)
//! turns all of this off; `include`/`exclude` apply on top either way.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use super::path::RelPath;

/// The per-folder ignore files, highest precedence first.
pub const IGNORE_FILE_NAMES: [&str; 2] = [".ignore", ".gitignore"];

/// How many ignored paths a [`Skipped`] record keeps by name (the count covers them all).
pub const SKIPPED_NAMED: usize = 20;

/// The matchers that hold for the whole root: the `.gitignore` files of the folders above the
/// root inside its git repository, `.git/info/exclude` and the global excludes, highest
/// precedence first.
pub(super) struct Outer {
    matchers: Vec<Gitignore>,
}

/// One folder's own ignore files and the chain of its ancestors' (inside the root).
pub(super) struct Folder {
    parent: Option<Arc<Folder>>,
    own: Vec<Gitignore>,
}

/// Why a path is ignored: the pattern as written and the file it is in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IgnoredBy {
    /// The pattern, as written in the file (`node_modules/`).
    pub pattern: String,
    /// The file, root-relative when inside the root (`.gitignore`, `docs/.ignore`), else its
    /// name (`global git excludes`, `.git/info/exclude`, `../.gitignore`).
    pub file: String,
}

/// The ignored folders and Markdown files one scan left out: the count of all, the first
/// [`SKIPPED_NAMED`] by path.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Skipped {
    /// Every ignored folder (`node_modules/`) and Markdown file left out.
    pub count: u64,
    /// The first [`SKIPPED_NAMED`] of them, folders with a trailing `/`, in walk order.
    pub named: Vec<(String, IgnoredBy)>,
}

impl Skipped {
    pub(super) fn note(&mut self, rel: &str, is_dir: bool, by: IgnoredBy) {
        self.count += 1;
        if self.named.len() < SKIPPED_NAMED {
            self.named.push((if is_dir { format!("{rel}/") } else { rel.to_owned() }, by));
        }
    }
}

impl Outer {
    /// Reads the matchers that hold for every path below `root` (see the module doc).
    pub(super) fn load(root: &Path) -> Outer {
        let mut matchers = Vec::new();
        if let Some(top) = git_top(root) {
            // The folders between the repository's top and the root, deepest first.
            let mut dir = root.parent();
            while let Some(d) = dir.filter(|d| d.starts_with(&top)) {
                matchers.extend(read_folder(d));
                dir = d.parent();
            }
            let exclude = top.join(".git").join("info").join("exclude");
            if exclude.is_file() {
                matchers.extend(build(&top, &exclude));
            }
        }
        let (global, err) = GitignoreBuilder::new(root).build_global();
        if let Some(err) = err {
            tracing::warn!("could not read part of git's global excludes file: {err}");
        }
        if !global.is_empty() {
            matchers.push(global);
        }
        Outer { matchers }
    }
}

/// The rules for one path at a time (an edit, a watcher event): the matchers that hold for the
/// whole root are read once, the ignore files of the path's folders at each check.
pub struct PathRules {
    root: PathBuf,
    outer: Outer,
}

impl PathRules {
    /// The rules of the canonical `root`.
    pub(super) fn load(root: &Path) -> PathRules {
        PathRules { root: root.to_path_buf(), outer: Outer::load(root) }
    }

    /// Why ignore files leave out the file `path` (they name it or one of its folders), or
    /// `None`.
    pub fn ignored(&self, path: &RelPath) -> Option<IgnoredBy> {
        let mut folder = Folder::with(None, read_folder(&self.root));
        let mut abs = self.root.clone();
        let parts: Vec<&str> = path.components().collect();
        for (i, part) in parts.iter().enumerate() {
            abs.push(part);
            let is_dir = i + 1 < parts.len();
            if let Some(by) = folder.ignored(&self.outer, &self.root, &abs, is_dir) {
                return Some(by);
            }
            if is_dir {
                folder = Folder::with(Some(&folder), read_folder(&abs));
            }
        }
        None
    }
}

impl Folder {
    /// The chain for the root folder itself, whose entries are `names`.
    pub(super) fn root(abs: &Path, names: &[String]) -> Arc<Folder> {
        Folder::with(None, read_present(abs, names))
    }

    /// The chain for a sub-folder at `abs` whose entries are `names`.
    pub(super) fn child(self: &Arc<Folder>, abs: &Path, names: &[String]) -> Arc<Folder> {
        Folder::with(Some(self), read_present(abs, names))
    }

    /// The chain of a folder with the matchers `own` below `parent`.
    fn with(parent: Option<&Arc<Folder>>, own: Vec<Gitignore>) -> Arc<Folder> {
        match parent {
            // Nothing of its own: share the parent's chain.
            Some(parent) if own.is_empty() => Arc::clone(parent),
            parent => Arc::new(Folder { parent: parent.cloned(), own }),
        }
    }

    /// Why `abs` (a file or, with `is_dir`, a folder) is ignored, or `None` when it is kept.
    pub(super) fn ignored(&self, outer: &Outer, root: &Path, abs: &Path, is_dir: bool) -> Option<IgnoredBy> {
        let mut folder = Some(self);
        while let Some(f) = folder {
            for m in &f.own {
                if let Some(decided) = decide(m, root, abs, is_dir) {
                    return decided;
                }
            }
            folder = f.parent.as_deref();
        }
        for m in &outer.matchers {
            if let Some(decided) = decide(m, root, abs, is_dir) {
                return decided;
            }
        }
        None
    }
}

/// `Some(Some(why))` ignored by `m`, `Some(None)` re-included by `m`, `None` when `m` says nothing.
fn decide(m: &Gitignore, root: &Path, abs: &Path, is_dir: bool) -> Option<Option<IgnoredBy>> {
    match m.matched(abs, is_dir) {
        Match::None => None,
        Match::Whitelist(_) => Some(None),
        Match::Ignore(glob) => {
            let file = match glob.from() {
                Some(from) => match from.strip_prefix(root) {
                    Ok(rel) => rel.to_string_lossy().replace('\\', "/"),
                    Err(_) if from.ends_with(Path::new("info").join("exclude")) => {
                        ".git/info/exclude".to_owned()
                    }
                    Err(_) if from.file_name().is_some_and(|n| IGNORE_FILE_NAMES.iter().any(|f| n == *f)) => {
                        format!("{} above the root", from.file_name().unwrap_or_default().to_string_lossy())
                    }
                    Err(_) => "git's global excludes file".to_owned(),
                },
                None => "git's global excludes file".to_owned(),
            };
            Some(Some(IgnoredBy { pattern: glob.original().to_owned(), file }))
        }
    }
}

/// The ignore files among a folder's entry `names`, read (highest precedence first).
fn read_present(abs: &Path, names: &[String]) -> Vec<Gitignore> {
    IGNORE_FILE_NAMES
        .iter()
        .filter(|f| names.iter().any(|n| n == *f))
        .filter_map(|f| build(abs, &abs.join(f)))
        .collect()
}

/// A folder's ignore files, whichever exist (highest precedence first).
fn read_folder(abs: &Path) -> Vec<Gitignore> {
    IGNORE_FILE_NAMES
        .iter()
        .map(|f| abs.join(f))
        .filter(|p| p.is_file())
        .filter_map(|p| build(abs, &p))
        .collect()
}

/// The matcher of one ignore file rooted at `dir`; a file that cannot be read counts as empty
/// (with a warning), a bad line is skipped (as git does).
fn build(dir: &Path, file: &Path) -> Option<Gitignore> {
    let mut builder = GitignoreBuilder::new(dir);
    // Git compares case-insensitively where the file system does (core.ignoreCase).
    builder.case_insensitive(cfg!(any(windows, target_os = "macos"))).ok()?;
    if let Some(err) = builder.add(file) {
        tracing::debug!("ignore file {}: {err}", file.display());
    }
    match builder.build() {
        Ok(m) if !m.is_empty() => Some(m),
        Ok(_) => None,
        Err(err) => {
            tracing::warn!("could not use an ignore file: {err}");
            None
        }
    }
}

/// The top of the git repository holding `root` (the folder with `.git`), if any.
fn git_top(root: &Path) -> Option<PathBuf> {
    root.ancestors().find(|d| fs::symlink_metadata(d.join(".git")).is_ok()).map(Path::to_path_buf)
}
