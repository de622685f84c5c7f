//! Link destinations → root-relative files and fragments; GitHub's heading slugs.

use percent_encoding::percent_decode_str;

use crate::workspace::RelPath;

/// Where a destination points, before checking that it exists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A URL with a scheme (`https:`, `mailto:`, `xref:` …) or `//host`: kept, never fetched.
    External(String),
    /// A file below the root (`path` root-relative, percent-decoded) and an optional heading
    /// fragment (percent-decoded). `#frag` alone targets the linking file.
    Local {
        /// Root-relative path.
        path: String,
        /// The fragment after `#`, if any.
        fragment: Option<String>,
    },
    /// A destination that cannot name a file below the root.
    Invalid {
        /// The path as resolved so far (or the raw destination).
        path: String,
        /// `outside_root` (`..` above the root) or `invalid_path` (refused by the path guard).
        reason: &'static str,
    },
}

/// Resolves the destination `raw` of a link in the file `from` (root-relative).
///
/// Relative paths resolve against `from`'s folder, paths starting with `/` against the root;
/// `?query` is dropped; path and fragment are percent-decoded (`%E3%81%82.md` → `あ.md`).
/// The mdBook `x.html` → `x.md` mapping needs to know which files exist, so it happens in
/// [`super::LinkIndex`].
pub fn resolve(from: &str, raw: &str) -> Target {
    let raw = raw.trim();
    if raw.starts_with("//") || has_scheme(raw) {
        return Target::External(raw.to_owned());
    }
    let (before, fragment) = match raw.split_once('#') {
        Some((b, f)) => (b, Some(decode(f))),
        None => (raw, None),
    };
    let before = before.split_once('?').map_or(before, |(b, _)| b);
    let decoded = decode(before).replace('\\', "/");
    if decoded.is_empty() {
        return Target::Local { path: from.to_owned(), fragment };
    }
    let mut parts: Vec<&str> = if decoded.starts_with('/') {
        Vec::new()
    } else {
        let mut p: Vec<&str> = from.split('/').collect();
        p.pop();
        p
    };
    for seg in decoded.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Target::Invalid { path: decoded.clone(), reason: "outside_root" };
                }
            }
            s => parts.push(s),
        }
    }
    let path = parts.join("/");
    if path.is_empty() {
        return Target::Invalid { path: decoded, reason: "outside_root" };
    }
    match RelPath::new(&path) {
        Ok(p) => Target::Local { path: p.as_str().to_owned(), fragment },
        Err(_) => Target::Invalid { path, reason: "invalid_path" },
    }
}

/// `scheme:` with a scheme of two or more characters (`C:` is a drive letter, not a scheme).
fn has_scheme(s: &str) -> bool {
    let Some(colon) = s.find(':') else { return false };
    let scheme = &s[..colon];
    scheme.len() >= 2
        && scheme.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

fn decode(s: &str) -> String {
    match percent_decode_str(s).decode_utf8() {
        Ok(d) => d.into_owned(),
        Err(_) => s.to_owned(),
    }
}

/// GitHub's heading slug (`docs/reference/catalog-spec.md` §7.3, steps 2–4): lowercase; keep
/// letters, marks, numbers, connector punctuation (`_`), `-` and spaces (kana and kanji are letters
/// and stay); spaces become `-`. `## ツールの一覧（MCP）` → `ツールの一覧mcp`; `Hello, World!` →
/// `hello-world`. Numbering repeats is [`super::heading_slugs`]' job.
pub fn slug(title: &str) -> String {
    title
        .trim()
        .to_lowercase()
        .chars()
        .filter(|&c| c.is_alphanumeric() || c == '-' || c == ' ' || is_mark(c) || is_connector(c))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Combining marks (Unicode category M) in the blocks that occur in headings: Latin/Greek
/// diacritics, kana voicing marks, variation selectors and the general combining blocks.
fn is_mark(c: char) -> bool {
    matches!(c as u32,
        0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0x3099..=0x309A
        | 0xFE00..=0xFE0F | 0xFE20..=0xFE2F)
}

/// Connector punctuation (Unicode category Pc).
fn is_connector(c: char) -> bool {
    matches!(
        c,
        '_' | '\u{203F}' | '\u{2040}' | '\u{2054}' | '\u{FE33}' | '\u{FE34}' | '\u{FE4D}'
            ..='\u{FE4F}' | '\u{FF3F}'
    )
}
