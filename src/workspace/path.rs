//! `RelPath` and the lexical half of the path guard (`docs/reference/original-server.md` §12).
//!
//! Everything here is pure: a string goes in, a [`RelPath`] or an `INVALID_PATH` error comes out.
//! The file-system half (symlink walk, root containment) lives in `mod.rs`.

use std::cmp::Ordering;
use std::fmt;

use crate::error::{Error, Result};

/// Message for empty, rooted, UNC or drive-letter input (`docs/reference/original-server.md` §12).
pub(crate) const MSG_RELATIVE: &str = "A non-empty root-relative path is required.";
/// Message for a component that breaks the portable-name rules (`docs/reference/original-server.md`
/// §12).
pub(crate) const MSG_COMPONENT: &str = "Path contains an invalid or unsafe component.";
/// Message for a path that resolves outside the root (`docs/reference/original-server.md` §12).
pub(crate) const MSG_OUTSIDE: &str = "Path is outside configured knowledge base root.";
/// Message for a path that goes through a link (`docs/reference/original-server.md` §12).
pub(crate) const MSG_REPARSE: &str =
    "Paths through symbolic links, junctions, or reparse points are not allowed.";
/// Message for a Markdown operation on a non-`.md` path (`docs/reference/original-server.md` §12).
pub(crate) const MSG_MARKDOWN_ONLY: &str = "Markdown write operations require a .md path.";
/// Message for an image path through `.git` (`docs/reference/original-server.md` §11.1).
pub(crate) const MSG_IMAGE_GIT: &str = "Image operations cannot access Git metadata.";
/// Message for an image path into the internal index directory (`docs/reference/original-server.md`
/// §11.1).
pub(crate) const MSG_IMAGE_INDEX: &str = "Image operations cannot access internal index files.";

/// Inputs longer than this many bytes are refused before any other work.
const MAX_PATH_BYTES: usize = 4096;

/// Windows device names, compared on the part of a component before its first dot.
const DEVICE_NAMES: [&str; 22] = [
    "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8", "COM9",
    "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
];

/// What a path is going to be used for; decides the checks on top of the generic guard.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PathContext {
    /// Any file or directory (e.g. the `kb_list_files` prefix): the generic guard only.
    Any,
    /// A Markdown read (`kb_read`, `kb_outline`): the guard plus a `.md` extension.
    Markdown,
    /// A Markdown mutation (`kb_patch`, `kb_create`, …): the guard plus a `.md` extension.
    MarkdownWrite,
    /// An image tool path: the guard, with image-specific messages for `.git` and the index
    /// directory (`docs/reference/original-server.md` §11.1). Extension checks belong to the image
    /// tools.
    Image,
}

/// A validated path relative to the knowledge-base root.
///
/// Invariants: non-empty; `/`-separated (input `\` is normalised to `/`); every component is
/// non-blank, not `.` or `..`, does not end with a space or dot, holds no control character and
/// none of `< > : " | ? *`, is not a Windows device name, and is not `.git` (case-insensitive).
/// Ordering and hashing are ordinal on the stored string; use [`compare_paths`] for listing
/// order.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RelPath(String);

impl RelPath {
    /// Validates `input` with the lexical rules of the path guard (no file-system access and no
    /// knowledge of the internal index directory; [`super::Workspace`] adds both before any I/O).
    pub fn new(input: &str) -> Result<RelPath> {
        parse(input, PathContext::Any, None)
    }

    /// The normalised path, e.g. `docs/a.md`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The last component, e.g. `a.md` for `docs/a.md`.
    pub fn file_name(&self) -> &str {
        self.0.rsplit('/').next().unwrap_or(&self.0)
    }

    /// The containing directory, or `None` for a top-level entry.
    pub fn parent(&self) -> Option<RelPath> {
        self.0.rfind('/').map(|i| RelPath(self.0[..i].to_owned()))
    }

    /// The components in order, e.g. `["docs", "a.md"]`.
    pub fn components(&self) -> impl Iterator<Item = &str> {
        self.0.split('/')
    }

    /// Whether the file name ends in `.md`, compared case-insensitively
    /// (`docs/reference/original-server.md` §5.1).
    pub fn is_markdown(&self) -> bool {
        has_md_extension(self.file_name())
    }

    /// `self/child`, validated like [`RelPath::new`] (`child` may hold several components).
    pub fn join(&self, child: &str) -> Result<RelPath> {
        parse(&format!("{}/{child}", self.0), PathContext::Any, None)
    }

    /// Wraps a string the caller has already validated component by component.
    pub(super) fn from_validated(path: String) -> RelPath {
        RelPath(path)
    }
}

impl fmt::Display for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for RelPath {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// Listing order (`docs/reference/original-server.md` §7.8): ordinal-ignore-case first, then
/// ordinal.
///
/// Case folding is per character with the simple upper-case mapping (a character whose upper
/// case is several characters, such as `ß`, compares as itself), as .NET's `OrdinalIgnoreCase`.
pub fn compare_paths(a: &str, b: &str) -> Ordering {
    a.chars().map(fold).cmp(b.chars().map(fold)).then_with(|| a.cmp(b))
}

/// Whether `a` and `b` are equal ignoring case, with the folding of [`compare_paths`].
pub(crate) fn eq_ignore_case(a: &str, b: &str) -> bool {
    a.chars().map(fold).eq(b.chars().map(fold))
}

/// The simple upper-case mapping of `c`, or `c` when it maps to several characters.
fn fold(c: char) -> char {
    let mut up = c.to_uppercase();
    match (up.next(), up.next()) {
        (Some(u), None) => u,
        _ => c,
    }
}

/// Whether `name` ends in `.md`, ASCII case-insensitively.
pub(crate) fn has_md_extension(name: &str) -> bool {
    let bytes = name.as_bytes();
    bytes.len() >= 3 && bytes[bytes.len() - 3..].eq_ignore_ascii_case(b".md")
}

/// The lexical guard: `input` → [`RelPath`], with context checks and, when given, the internal
/// index directory name (refused as a component at any depth, case-insensitively).
pub(crate) fn parse(input: &str, ctx: PathContext, internal: Option<&str>) -> Result<RelPath> {
    // Never echo rooted input: it may be an absolute machine path.
    let fix_relative = "Give the path relative to the knowledge-base root, e.g. 'docs/guide.md'.";
    if input.is_empty() || input.starts_with(['/', '\\']) || has_drive_letter(input) {
        return Err(Error::invalid_path(format!("{MSG_RELATIVE} {fix_relative}")));
    }
    if input.len() > MAX_PATH_BYTES {
        return Err(Error::invalid_path(format!(
            "{MSG_COMPONENT} The path is longer than {MAX_PATH_BYTES} bytes; use a shorter one."
        )));
    }
    let normalised = input.replace('\\', "/");
    for component in normalised.split('/') {
        if let Some(reason) = component_problem(component) {
            return Err(Error::invalid_path(format!("{MSG_COMPONENT} {reason}")));
        }
    }
    if let Some(err) = reserved_component(&normalised, ctx, internal) {
        return Err(err);
    }
    let path = RelPath(normalised);
    if matches!(ctx, PathContext::Markdown | PathContext::MarkdownWrite) && !path.is_markdown() {
        return Err(Error::invalid_path(format!(
            "{MSG_MARKDOWN_ONLY} '{}' is not a Markdown file; give a path ending in .md.",
            quoted(path.as_str())
        )));
    }
    Ok(path)
}

/// The refusal of a `.git` or internal-directory component anywhere in `normalised`, if any.
pub(crate) fn reserved_component(
    normalised: &str,
    ctx: PathContext,
    internal: Option<&str>,
) -> Option<Error> {
    let image = ctx == PathContext::Image;
    if normalised.split('/').any(|c| c.eq_ignore_ascii_case(".git")) {
        return Some(Error::invalid_path(if image {
            format!("{MSG_IMAGE_GIT} Choose a path outside '.git'.")
        } else {
            format!(
                "{MSG_COMPONENT} '.git' holds Git metadata, which is never read or written; name a file outside it."
            )
        }));
    }
    let internal = internal?;
    if normalised.split('/').any(|c| c.eq_ignore_ascii_case(internal)) {
        return Some(Error::invalid_path(if image {
            format!("{MSG_IMAGE_INDEX} Choose a path outside '{internal}'.")
        } else {
            format!(
                "{MSG_COMPONENT} '{internal}' holds the derived index, which is never read or written; name a project file instead."
            )
        }));
    }
    None
}

/// `C:`, `C:/…` or `C:\…` (but not `a:b.md`, which is a bad component instead).
fn has_drive_letter(input: &str) -> bool {
    let b = input.as_bytes();
    b.len() >= 2
        && b[0].is_ascii_alphabetic()
        && b[1] == b':'
        && (b.len() == 2 || matches!(b[2], b'/' | b'\\'))
}

/// Why `component` is not a safe portable name, as the fix-it clause of the error, or `None`.
pub(crate) fn component_problem(component: &str) -> Option<String> {
    if component.trim().is_empty() {
        return Some("The path has an empty segment (a doubled or trailing '/'); remove it.".to_owned());
    }
    let shown = quoted(component);
    if component == "." || component == ".." {
        return Some(format!(
            "'{shown}' segments are not allowed; name the file from the knowledge-base root."
        ));
    }
    if component.ends_with([' ', '.']) {
        return Some(format!("'{shown}' ends with a space or dot, which Windows cannot store; rename it."));
    }
    if component.chars().any(char::is_control) {
        return Some(format!("'{shown}' contains a control character; remove it."));
    }
    if let Some(c) = component.chars().find(|c| matches!(c, '<' | '>' | ':' | '"' | '|' | '?' | '*')) {
        return Some(format!("'{shown}' contains '{c}', which file names cannot hold; rename it."));
    }
    let stem = component.split('.').next().unwrap_or(component).trim_end();
    if DEVICE_NAMES.iter().any(|d| d.eq_ignore_ascii_case(stem)) {
        return Some(format!("'{shown}' is a reserved Windows device name; rename it."));
    }
    if is_short_name(component) {
        return Some(format!(
            "'{shown}' has the form of a Windows 8.3 short name (like PROGRA~1), which can stand for another, longer name there; use the long name, or rename the file without '~' and a number."
        ));
    }
    None
}

/// Whether `component` has the shape of an NTFS 8.3 short name (`PROGRA~1`, `DOCUME~1.MD`,
/// `LOCAL-~1`, the hashed `AB12C~1`): ASCII only, a stem of at most 8 characters that ends in
/// `~` and 1–6 digits after at least one other character, and an extension of at most 3.
///
/// On Windows such a name can be a second name of a file or folder with a long name (the index
/// folder, `.git`), so the guard, which compares names, would not see where it leads. Refused on
/// every platform (see docs/design/portability.md): a knowledge base behaves the same
/// everywhere, and resolving short names needs the Windows API.
pub(crate) fn is_short_name(component: &str) -> bool {
    if !component.is_ascii() {
        return false;
    }
    let (stem, ext) = match component.split_once('.') {
        Some((stem, ext)) => (stem, Some(ext)),
        None => (component, None),
    };
    if ext.is_some_and(|e| e.is_empty() || e.len() > 3 || e.contains('.')) || stem.len() > 8 {
        return false;
    }
    let Some((base, digits)) = stem.rsplit_once('~') else { return false };
    !base.is_empty()
        && !base.contains('~')
        && (1..=6).contains(&digits.len())
        && digits.bytes().all(|b| b.is_ascii_digit())
}

/// `s` with control characters and quotes escaped, for echoing user input in messages.
pub(crate) fn quoted(s: &str) -> String {
    s.chars()
        .flat_map(|c| if c.is_control() { c.escape_default().collect::<Vec<_>>() } else { vec![c] })
        .collect()
}
