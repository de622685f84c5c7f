//! File names in one normal form: a name a user types and the name on disk are the same file
//! when their NFC forms are equal.
//!
//! macOS hands out decomposed names (`ガイド.md` as `カ` + `゛`…), and its file systems accept
//! either form for the same file, while Linux keeps both as different names. Agents type the
//! composed form. So a user-supplied path is mapped to the name *as it is on disk* before
//! anything reads, writes, indexes or answers with it: a component that NFC and NFD write alike
//! (ASCII, kanji, kana without sound marks: nearly every name) is used as given; any other is
//! looked up among its directory's entries by NFC, the exactly equal entry first. Each directory
//! is listed at most once per path (one per component). Names that match nothing stay as given,
//! so a new file is created with the name the caller chose.
//!
//! Globs compare in NFC too ([`super::GlobFilter`]), so `docs/ガイド*.md` in either form
//! matches the file in either form.

use std::borrow::Cow;
use std::path::Path;

use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfc_quick};

use super::RelPath;

/// Whether `name` has characters that NFC and NFD write differently (only then can the same
/// name reach us in two forms).
pub fn form_sensitive(name: &str) -> bool {
    !name.is_ascii() && name.nfc().ne(name.nfd())
}

/// `s` in NFC (borrowed when it already is).
pub fn nfc(s: &str) -> Cow<'_, str> {
    if s.is_ascii() || is_nfc_quick(s.chars()) == IsNormalized::Yes {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(s.nfc().collect())
    }
}

/// `path` with each component spelled as the entry on disk under `root` whose NFC form equals
/// the component's (see the module comment); `None` when nothing differs.
pub(super) fn on_disk(root: &Path, path: &RelPath) -> Option<RelPath> {
    if path.as_str().is_ascii() || !path.components().any(form_sensitive) {
        return None;
    }
    let mut dir = root.to_path_buf();
    let mut out: Vec<String> = Vec::new();
    let mut changed = false;
    let mut listable = true;
    for component in path.components() {
        let mut name = component.to_owned();
        if listable && form_sensitive(component) {
            match entry_named(&dir, component) {
                Some(found) => {
                    changed |= found != component;
                    name = found;
                }
                None => listable = false,
            }
        }
        dir.push(&name);
        out.push(name);
    }
    changed.then(|| RelPath::from_validated(out.join("/")))
}

/// The entry of `dir` that is `name` exactly, else the first (in byte order) whose NFC form
/// equals `name`'s; `None` when there is none or `dir` cannot be listed.
fn entry_named(dir: &Path, name: &str) -> Option<String> {
    let wanted = nfc(name);
    let mut best: Option<String> = None;
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let os = entry.file_name();
        let Some(candidate) = os.to_str() else { continue };
        if candidate == name {
            return Some(name.to_owned());
        }
        if nfc(candidate) == wanted && best.as_deref().is_none_or(|b| candidate < b) {
            best = Some(candidate.to_owned());
        }
    }
    best
}
