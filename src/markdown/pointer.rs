//! Logical pointers and public anchors (`docs/reference/original-server.md` §5.6).

use std::fmt;

use crate::error::{Error, Result};

use super::ElementKind;

/// The message for every malformed hash part of an anchor.
pub const FINGERPRINT_MESSAGE: &str = "Invalid semantic pointer fingerprint.";

/// A validated logical pointer such as `document`, `frontmatter`, `1.2`, `1.p3` or `li1.li2`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LogicalPointer(String);

impl LogicalPointer {
    /// The synthetic pointer of the whole document.
    pub fn document() -> Self {
        LogicalPointer("document".to_owned())
    }

    /// Validates `s` against the pointer grammar.
    pub fn parse(s: &str) -> Result<Self> {
        if is_valid_logical(s) {
            Ok(LogicalPointer(s.to_owned()))
        } else {
            Err(Error::invalid_argument(format!("Invalid semantic pointer: {s}")))
        }
    }

    /// Builds a pointer that the parser produced itself (already valid by construction).
    pub(crate) fn from_parser(s: String) -> Self {
        debug_assert!(is_valid_logical(&s), "parser produced invalid pointer {s}");
        LogicalPointer(s)
    }

    /// The pointer text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The element kind named by the last `.`-segment.
    pub fn kind(&self) -> ElementKind {
        match self.0.as_str() {
            "document" => return ElementKind::Document,
            "frontmatter" => return ElementKind::FrontMatter,
            _ => {}
        }
        let last = self.0.rsplit('.').next().unwrap_or("");
        if last.starts_with("li") {
            ElementKind::ListItem
        } else if last.starts_with("code") {
            ElementKind::CodeBlock
        } else if last.starts_with('p') {
            ElementKind::Paragraph
        } else if last.starts_with('q') {
            ElementKind::BlockQuote
        } else if last.starts_with('t') {
            ElementKind::Table
        } else {
            ElementKind::Heading
        }
    }

    /// The containing section: the leading run of numeric segments (`1.2.li3.li1` → `1.2`).
    pub fn section(&self) -> Option<String> {
        if matches!(self.0.as_str(), "document" | "frontmatter") {
            return None;
        }
        let numeric: Vec<&str> =
            self.0.split('.').take_while(|seg| seg.bytes().all(|b| b.is_ascii_digit())).collect();
        (!numeric.is_empty()).then(|| numeric.join("."))
    }

    /// The parent list item of a nested list-item pointer (`1.li2.li1` → `1.li2`).
    pub fn parent_list_item(&self) -> Option<LogicalPointer> {
        if self.kind() != ElementKind::ListItem {
            return None;
        }
        let (head, _) = self.0.rsplit_once('.')?;
        let parent_last = head.rsplit('.').next().unwrap_or("");
        parent_last.starts_with("li").then(|| LogicalPointer(head.to_owned()))
    }
}

impl fmt::Display for LogicalPointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// `[1-9][0-9]*`
fn is_ordinal(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty() && b[0] != b'0' && b.iter().all(u8::is_ascii_digit)
}

fn leaf_prefix<'a>(seg: &'a str, prefix: &str) -> Option<&'a str> {
    seg.strip_prefix(prefix).filter(|rest| is_ordinal(rest))
}

fn is_single_leaf(seg: &str) -> bool {
    leaf_prefix(seg, "p").is_some()
        || leaf_prefix(seg, "code").is_some()
        || leaf_prefix(seg, "q").is_some()
        || leaf_prefix(seg, "t").is_some()
}

/// The grammar of §5.6, written out instead of a regex.
fn is_valid_logical(s: &str) -> bool {
    if s == "document" || s == "frontmatter" {
        return true;
    }
    let segs: Vec<&str> = s.split('.').collect();
    let numeric = segs.iter().take_while(|seg| is_ordinal(seg)).count();
    let rest = &segs[numeric..];
    match rest {
        [] => numeric > 0,
        [leaf] if is_single_leaf(leaf) => true,
        items => items.iter().all(|seg| leaf_prefix(seg, "li").is_some()),
    }
}

/// A public anchor: a logical pointer with optional hashes (`logical`, `logical~self` (v1) or
/// `logical~self~subtree` (v2)). Hashes are normalised to lowercase.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Anchor {
    /// The logical part.
    pub pointer: LogicalPointer,
    /// The element's self hash, when given.
    pub self_hash: Option<String>,
    /// The element's subtree hash, when given (v2 only).
    pub subtree_hash: Option<String>,
}

impl Anchor {
    /// Parses an anchor with the exact error texts of the contract.
    pub fn parse(s: &str) -> Result<Self> {
        let parts: Vec<&str> = s.split('~').collect();
        if parts.len() == 1 {
            if s.trim().is_empty() {
                return Err(Error::invalid_argument(
                    "Invalid semantic pointer: the pointer is empty; omit it or pass 'document' to start at the beginning.",
                ));
            }
            return Ok(Anchor { pointer: LogicalPointer::parse(s)?, self_hash: None, subtree_hash: None });
        }
        if parts.len() > 3 || parts[0].trim().is_empty() || parts[0] == "document" {
            return Err(Error::invalid_argument(FINGERPRINT_MESSAGE));
        }
        let mut hashes = Vec::with_capacity(2);
        for h in &parts[1..] {
            if h.len() != 16 || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(Error::invalid_argument(FINGERPRINT_MESSAGE));
            }
            hashes.push(h.to_ascii_lowercase());
        }
        let pointer = LogicalPointer::parse(parts[0])?;
        let mut hashes = hashes.into_iter();
        Ok(Anchor { pointer, self_hash: hashes.next(), subtree_hash: hashes.next() })
    }

    /// A plain, unhashed anchor.
    pub fn logical(pointer: LogicalPointer) -> Self {
        Anchor { pointer, self_hash: None, subtree_hash: None }
    }

    /// Whether this anchor names the whole document.
    pub fn is_document(&self) -> bool {
        self.pointer.as_str() == "document"
    }
}

impl fmt::Display for Anchor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.pointer.as_str())?;
        if let Some(h) = &self.self_hash {
            write!(f, "~{h}")?;
        }
        if let Some(h) = &self.subtree_hash {
            write!(f, "~{h}")?;
        }
        Ok(())
    }
}
