//! Source edit planning (`docs/reference/original-server.md` §9.3): byte ranges, separators and
//! line endings.

use std::ops::Range;

use crate::error::{Error, Result};
use crate::markdown::{Document, Element, ElementKind};

use super::resolve::Resolved;
use super::validate::{DELETE_SECTION_HEADING, DELETE_SECTION_MARKDOWN, REPLACE_SECTION_HEADING};
use super::{PatchKind, PlannedEdit};

/// `\r\n` if the source contains any CRLF, else `\n`; `\r` for a file whose only line
/// endings are lone CRs (classic Mac), so an edit does not mix endings into it.
pub(super) fn detect_eol(source: &str) -> &'static str {
    if source.contains("\r\n") {
        "\r\n"
    } else if source.contains('\r') && !source.contains('\n') {
        "\r"
    } else {
        "\n"
    }
}

/// Every `\r\n` and lone `\r` becomes `\n`, then every `\n` becomes `eol`.
pub(super) fn normalize_eol(value: &str, eol: &str) -> String {
    value.replace("\r\n", "\n").replace('\r', "\n").replace('\n', eol)
}

fn trim_end_eol(s: &str) -> &str {
    s.trim_end_matches(['\r', '\n'])
}

fn trim_start_eol(s: &str) -> &str {
    s.trim_start_matches(['\r', '\n'])
}

fn requires_markdown(kind: PatchKind) -> Error {
    Error::invalid_argument(format!("Patch operation '{}' requires markdown content.", kind.as_name()))
}

fn edit(range: Range<usize>, replacement: String, pointer: &str) -> PlannedEdit {
    PlannedEdit { range, replacement, pointer: pointer.to_owned() }
}

/// Plans one edit per operation, then sorts them and refuses overlaps.
pub(super) fn plan_edits(source: &str, doc: &Document, ops: &[Resolved<'_>]) -> Result<Vec<PlannedEdit>> {
    if ops.is_empty() {
        return Err(Error::invalid_argument("At least one patch operation is required."));
    }
    for (i, op) in ops.iter().enumerate() {
        if ops[..i].iter().any(|prev| prev.pointer == op.pointer) {
            continue;
        }
        if ops[i + 1..].iter().any(|later| later.pointer == op.pointer) {
            return Err(Error::invalid_argument(format!(
                "Patch operations conflict at pointer '{}'.",
                op.pointer
            )));
        }
    }
    let eol = detect_eol(source);
    let mut edits = Vec::with_capacity(ops.len());
    for op in ops {
        let planned = match op.target {
            None => document_edit(source, op, eol)?,
            Some(index) => {
                let element = doc.elements.get(index).ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "Pointer '{}' was not found in the requested document revision.",
                        op.pointer
                    ))
                })?;
                element_edit(source, element, op, eol)?
            }
        };
        if planned.range.start > planned.range.end
            || planned.range.end > source.len()
            || !source.is_char_boundary(planned.range.start)
            || !source.is_char_boundary(planned.range.end)
        {
            return Err(Error::invalid_argument("Patch edit is outside source bounds."));
        }
        edits.push(planned);
    }
    edits.sort_by_key(|e| (e.range.start, e.range.len()));
    for pair in edits.windows(2) {
        let (previous, current) = (&pair[0], &pair[1]);
        if current.range.start < previous.range.end || current.range.start == previous.range.start {
            return Err(Error::invalid_argument(format!(
                "Patch operations at '{}' and '{}' overlap.",
                previous.pointer, current.pointer
            )));
        }
    }
    Ok(edits)
}

/// Applies sorted, non-overlapping edits.
pub(super) fn apply(source: &str, edits: &[PlannedEdit]) -> Result<String> {
    let mut out =
        String::with_capacity(source.len() + edits.iter().map(|e| e.replacement.len()).sum::<usize>());
    let mut cursor = 0;
    for e in edits {
        let gap = source
            .get(cursor..e.range.start)
            .ok_or_else(|| Error::internal("Planned patch edits are out of order."))?;
        out.push_str(gap);
        out.push_str(&e.replacement);
        cursor = e.range.end;
    }
    out.push_str(
        source.get(cursor..).ok_or_else(|| Error::internal("Planned patch edits are out of bounds."))?,
    );
    Ok(out)
}

/// Inserts on the `document` pointer; every other kind is refused.
fn document_edit(source: &str, op: &Resolved<'_>, eol: &str) -> Result<PlannedEdit> {
    let pointer = op.pointer.as_str();
    if !matches!(op.kind, PatchKind::InsertBefore | PatchKind::InsertAfter) {
        return Err(Error::invalid_argument(format!(
            "Operation '{}' is not supported for the document pointer.",
            op.kind.as_wire()
        )));
    }
    let markdown = normalize_eol(op.markdown.ok_or_else(|| requires_markdown(op.kind))?, eol);
    if source.is_empty() {
        return Ok(edit(0..0, markdown, pointer));
    }
    Ok(if op.kind == PatchKind::InsertBefore {
        let separator = leading_separator(source, eol);
        edit(0..0, format!("{}{separator}", trim_end_eol(&markdown)), pointer)
    } else {
        let separator = trailing_separator(source, eol);
        edit(source.len()..source.len(), format!("{separator}{}", trim_start_eol(&markdown)), pointer)
    })
}

/// `""` if `s` starts with a blank line, `eol` if with one line ending, else two.
fn leading_separator(s: &str, eol: &str) -> String {
    if s.starts_with(&eol.repeat(2)) {
        String::new()
    } else if s.starts_with(eol) {
        eol.to_owned()
    } else {
        eol.repeat(2)
    }
}

/// `""` if `s` ends with a blank line, `eol` if with one line ending, else two.
fn trailing_separator(s: &str, eol: &str) -> String {
    if s.ends_with(&eol.repeat(2)) {
        String::new()
    } else if s.ends_with(eol) {
        eol.to_owned()
    } else {
        eol.repeat(2)
    }
}

/// A section replacement that does not reach EOF ends with a blank line.
fn ensure_block_separator(markdown: String, eol: &str) -> String {
    if markdown.ends_with(&eol.repeat(2)) {
        markdown
    } else if markdown.ends_with(eol) {
        markdown + eol
    } else {
        markdown + eol + eol
    }
}

fn element_edit(source: &str, element: &Element, op: &Resolved<'_>, eol: &str) -> Result<PlannedEdit> {
    if matches!(element.kind, ElementKind::ListItem | ElementKind::BlockQuote) {
        return structured_edit(source, element, op, eol);
    }
    let pointer = op.pointer.as_str();
    let markdown = op.markdown.map(|m| normalize_eol(m, eol));
    let range = element.range.clone();
    Ok(match (op.kind, markdown) {
        (PatchKind::Replace | PatchKind::ReplaceElement, Some(md)) => edit(range, md, pointer),
        (PatchKind::ReplaceSection, Some(md)) => section_edit(source, element, md, pointer, eol, true)?,
        (PatchKind::DeleteSection, None) => {
            section_edit(source, element, String::new(), pointer, eol, false)?
        }
        (PatchKind::DeleteSection, Some(_)) => return Err(Error::invalid_argument(DELETE_SECTION_MARKDOWN)),
        (PatchKind::InsertBefore, Some(md)) => {
            edit(range.start..range.start, format!("{}{eol}{eol}", trim_end_eol(&md)), pointer)
        }
        (PatchKind::InsertAfter, Some(md)) => {
            edit(range.end..range.end, format!("{eol}{eol}{}", trim_start_eol(&md)), pointer)
        }
        (PatchKind::Delete, _) => edit(range, String::new(), pointer),
        (kind, _) => return Err(requires_markdown(kind)),
    })
}

fn section_edit(
    source: &str,
    target: &Element,
    markdown: String,
    pointer: &str,
    eol: &str,
    keep_separator: bool,
) -> Result<PlannedEdit> {
    if target.kind != ElementKind::Heading {
        let message = if keep_separator { REPLACE_SECTION_HEADING } else { DELETE_SECTION_HEADING };
        return Err(Error::invalid_argument(message));
    }
    let range = target.subtree_range.clone();
    let replacement = if keep_separator && range.end != source.len() {
        ensure_block_separator(markdown, eol)
    } else {
        markdown
    };
    Ok(edit(range, replacement, pointer))
}

/// The physical range extended by one line ending (`\r`, then `\n`, each optional).
fn extend_line_ending(source: &str, range: &Range<usize>) -> Range<usize> {
    let bytes = source.as_bytes();
    let mut end = range.end;
    if bytes.get(end) == Some(&b'\r') {
        end += 1;
    }
    if bytes.get(end) == Some(&b'\n') {
        end += 1;
    }
    range.start..end
}

/// List items and block quotes, through their source maps.
fn structured_edit(source: &str, target: &Element, op: &Resolved<'_>, eol: &str) -> Result<PlannedEdit> {
    let pointer = op.pointer.as_str();
    let quote = target.kind == ElementKind::BlockQuote;
    let (delete_range, own_segments) = match (&target.list, quote) {
        (_, true) => (extend_line_ending(source, &target.range), vec![target.range.clone()]),
        (Some(info), false) => (info.delete_range.clone(), info.own_segments.clone()),
        (None, false) => {
            return Err(Error::invalid_argument(
                "Unsupported list container: exact source ownership is not available.",
            ));
        }
    };
    if matches!(op.kind, PatchKind::ReplaceSection | PatchKind::DeleteSection) {
        return Err(Error::invalid_argument("Section operations require a heading pointer."));
    }
    if !quote && target.list.as_ref().is_none_or(|info| info.marker_style.is_empty()) {
        return Err(Error::invalid_argument(format!(
            "Unsupported list container at '{pointer}': marker or indentation is ambiguous."
        )));
    }
    let markdown = op.markdown.map(|m| normalize_eol(m, eol));
    let fragment = markdown.as_deref().map(trim_end_eol);
    let range = target.range.clone();
    Ok(match (op.kind, fragment) {
        (PatchKind::Delete, None) => edit(delete_range, String::new(), pointer),
        (PatchKind::Delete, Some(_)) => {
            return Err(Error::invalid_argument(
                "delete does not accept markdown content for list items or quotes.",
            ));
        }
        (PatchKind::ReplaceSubtree, Some(f)) if !quote => edit(range, f.to_owned(), pointer),
        (PatchKind::Replace | PatchKind::ReplaceElement, Some(f)) if !quote => {
            list_own_edit(source, &range, &own_segments, f, pointer)?
        }
        (PatchKind::Replace | PatchKind::ReplaceElement, Some(f)) => edit(range, f.to_owned(), pointer),
        (PatchKind::InsertBefore, Some(f)) => {
            let separator = if quote { eol.repeat(2) } else { eol.to_owned() };
            edit(range.start..range.start, format!("{f}{separator}"), pointer)
        }
        (PatchKind::InsertAfter, Some(f)) => {
            let at = delete_range.end;
            let text = if quote {
                quote_insert_after(source, at, f, eol)
            } else {
                list_insert_after(source, at, f, eol)
            };
            edit(at..at, text, pointer)
        }
        (kind, _) => return Err(requires_markdown(kind)),
    })
}

/// Replaces only the item's first own segment (its text before the first child), keeping the
/// segment's trailing line endings so children and later own text stay byte-identical.
fn list_own_edit(
    source: &str,
    range: &Range<usize>,
    own_segments: &[Range<usize>],
    fragment: &str,
    pointer: &str,
) -> Result<PlannedEdit> {
    let prefix = match own_segments.first() {
        Some(prefix) if prefix.start == range.start => prefix.clone(),
        _ => {
            return Err(Error::invalid_argument(format!(
                "Unsupported list container at '{pointer}': own source prefix is ambiguous."
            )));
        }
    };
    let prefix_text = source.get(prefix.clone()).unwrap_or("");
    let separator = &prefix_text[trim_end_eol(prefix_text).len()..];
    Ok(edit(prefix, format!("{fragment}{separator}"), pointer))
}

fn list_insert_after(source: &str, at: usize, fragment: &str, eol: &str) -> String {
    let prefix =
        if at > 0 && !matches!(source.as_bytes().get(at - 1), Some(b'\n' | b'\r')) { eol } else { "" };
    let suffix = if at < source.len() { eol } else { "" };
    format!("{prefix}{fragment}{suffix}")
}

fn quote_insert_after(source: &str, at: usize, fragment: &str, eol: &str) -> String {
    let prefix = if at > 0 && matches!(source.as_bytes().get(at - 1), Some(b'\n' | b'\r')) {
        eol.to_owned()
    } else {
        eol.repeat(2)
    };
    let suffix = match source.get(at..) {
        Some(rest) if !rest.is_empty() => {
            if rest.starts_with(eol) {
                eol.to_owned()
            } else {
                eol.repeat(2)
            }
        }
        _ => String::new(),
    };
    format!("{prefix}{fragment}{suffix}")
}
