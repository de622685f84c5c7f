//! Replacement validation (`docs/reference/original-server.md` §9.4): each fragment is parsed on
//! its own and must have the shape its operation promises, before any edit is planned.

use crate::error::{Error, Result};
use crate::markdown::{Document, Element, ElementKind};

use super::PatchKind;
use super::resolve::Resolved;

const ONE_ELEMENT: &str = "replace_element expects markdown containing exactly one editable Markdown element. Use replace_section when replacing a heading together with its section content.";
const HEADING_LEVEL: &str =
    "replace_element cannot change a heading level or replace a heading with a non-heading element.";
const TABLE_KIND: &str = "replace_element cannot replace a table with a non-table element. Send a complete pipe table, or use kb_edit_table to change cells.";
const SECTION_ROOT: &str = "replace_section replacement must contain exactly one root section. Additional headings must be nested below the replacement heading. To remove the section, use delete_section.";
const QUOTE_BLANK: &str = "Invalid quote fragment: a complete block quote is required.";
const QUOTE_ONE: &str = "Invalid quote fragment: exactly one root BlockQuote is required.";
const LIST_BLANK: &str =
    "Invalid list fragment: exactly one item with the original indentation and marker style is required.";
const LIST_AMBIGUOUS: &str = "Unsupported list container: ambiguous marker or indentation.";
const SUBTREE_TARGET: &str = "replace_subtree requires a list item pointer. Use replace_element for other elements, or replace_section for a heading with its section.";

/// Section replace message when the target is not a heading.
pub(super) const REPLACE_SECTION_HEADING: &str = "replace_section requires a heading pointer.";
/// Section delete message when the target is not a heading.
pub(super) const DELETE_SECTION_HEADING: &str = "delete_section requires a heading pointer.";
/// `delete_section` with markdown.
pub(super) const DELETE_SECTION_MARKDOWN: &str = "delete_section does not accept markdown content.";

/// Validates every resolved operation in request order; the first failure wins.
pub(super) fn validate(source: &str, doc: &Document, ops: &[Resolved<'_>]) -> Result<()> {
    for op in ops {
        let Some(index) = op.target else {
            validate_document(op.kind)?;
            continue;
        };
        let Some(target) = doc.elements.get(index) else {
            return Err(Error::invalid_argument(format!(
                "Pointer '{}' was not found in the requested document revision.",
                op.pointer
            )));
        };
        match op.kind {
            PatchKind::Replace | PatchKind::ReplaceElement => match target.kind {
                ElementKind::ListItem => {
                    let fragment = validate_list_fragment(source, target, op.markdown)?;
                    reject_list_children(target, fragment)?;
                }
                ElementKind::BlockQuote => {
                    if let Some(markdown) = op.markdown {
                        validate_quote_fragment(Some(markdown))?;
                    }
                }
                _ => validate_element_replacement(target, op.markdown)?,
            },
            PatchKind::InsertBefore | PatchKind::InsertAfter => match target.kind {
                ElementKind::ListItem => {
                    validate_list_fragment(source, target, op.markdown)?;
                }
                ElementKind::BlockQuote => validate_quote_fragment(op.markdown)?,
                _ => {}
            },
            PatchKind::ReplaceSubtree => {
                if target.kind != ElementKind::ListItem {
                    return Err(Error::invalid_argument(SUBTREE_TARGET));
                }
                if op.markdown.is_some() {
                    validate_list_fragment(source, target, op.markdown)?;
                }
            }
            PatchKind::ReplaceSection => validate_section_replacement(target, op.markdown)?,
            PatchKind::DeleteSection => {
                if target.kind != ElementKind::Heading {
                    return Err(Error::invalid_argument(DELETE_SECTION_HEADING));
                }
                if op.markdown.is_some() {
                    return Err(Error::invalid_argument(DELETE_SECTION_MARKDOWN));
                }
            }
            PatchKind::Delete => {}
        }
    }
    Ok(())
}

/// The kind-specific refusals on the `document` pointer that validation reports first.
fn validate_document(kind: PatchKind) -> Result<()> {
    let message = match kind {
        PatchKind::ReplaceSection => REPLACE_SECTION_HEADING,
        PatchKind::DeleteSection => DELETE_SECTION_HEADING,
        PatchKind::ReplaceElement => "replace_element requires a concrete Markdown element pointer.",
        _ => return Ok(()),
    };
    Err(Error::invalid_argument(message))
}

/// The elements of a fragment parsed on its own.
fn parse_fragment(markdown: &str) -> Vec<Element> {
    Document::parse(markdown).elements
}

fn is_blank(s: &str) -> bool {
    s.chars().all(char::is_whitespace)
}

/// Is there anything but whitespace outside `element` in `markdown`?
fn has_text_outside(markdown: &str, element: &Element) -> bool {
    let before = markdown.get(..element.range.start).unwrap_or("");
    let after = markdown.get(element.range.end..).unwrap_or("");
    !is_blank(before) || !is_blank(after)
}

/// `replace`/`replace_element` on a heading, paragraph, code block, front matter or table.
fn validate_element_replacement(target: &Element, markdown: Option<&str>) -> Result<()> {
    let Some(markdown) = markdown else {
        // The planner reports the missing markdown.
        return Ok(());
    };
    let elements = parse_fragment(markdown);
    let [replacement] = elements.as_slice() else {
        return Err(Error::invalid_argument(ONE_ELEMENT));
    };
    if has_text_outside(markdown, replacement) {
        return Err(Error::invalid_argument(ONE_ELEMENT));
    }
    if target.kind == ElementKind::Heading
        && (replacement.kind != ElementKind::Heading || replacement.heading_level != target.heading_level)
    {
        return Err(Error::invalid_argument(HEADING_LEVEL));
    }
    if target.kind == ElementKind::Table && replacement.kind != ElementKind::Table {
        return Err(Error::invalid_argument(TABLE_KIND));
    }
    Ok(())
}

/// A quote fragment must be exactly one block quote and nothing else.
fn validate_quote_fragment(markdown: Option<&str>) -> Result<()> {
    let markdown = markdown.unwrap_or("");
    if is_blank(markdown) {
        return Err(Error::invalid_argument(QUOTE_BLANK));
    }
    let elements = parse_fragment(markdown);
    match elements.as_slice() {
        [quote] if quote.kind == ElementKind::BlockQuote && !has_text_outside(markdown, quote) => Ok(()),
        _ => Err(Error::invalid_argument(QUOTE_ONE)),
    }
}

/// `^(?<indent>[ \t]*)(?<marker>[-+*]|[0-9]+[.)])(?=[ \t]|$)` on one line: the indentation
/// string and the marker style (`-`, `+`, `*`, `ordered:.`, `ordered:)`).
pub(super) fn parse_marker(line: &str) -> Option<(&str, String)> {
    let indent_len = line.len() - line.trim_start_matches([' ', '\t']).len();
    let (indent, rest) = line.split_at(indent_len);
    let followed_ok = |i: usize| rest.get(i..).is_some_and(|r| r.is_empty() || r.starts_with([' ', '\t']));
    if let Some(c) = rest.chars().next()
        && matches!(c, '-' | '+' | '*')
        && followed_ok(1)
    {
        return Some((indent, c.to_string()));
    }
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0
        && let Some(&d) = rest.as_bytes().get(digits)
        && (d == b'.' || d == b')')
        && followed_ok(digits + 1)
    {
        return Some((indent, format!("ordered:{}", d as char)));
    }
    None
}

/// The first line of `s` (up to the first `\r` or `\n`).
pub(super) fn first_line(s: &str) -> &str {
    s.split(['\r', '\n']).next().unwrap_or("")
}

/// A list fragment must start with a marker of the target's indentation and style. Returns the
/// fragment on success.
fn validate_list_fragment<'m>(source: &str, target: &Element, markdown: Option<&'m str>) -> Result<&'m str> {
    let markdown = match markdown {
        Some(m) if !is_blank(m) => m,
        _ => return Err(Error::invalid_argument(LIST_BLANK)),
    };
    let Some(info) = target.list.as_ref() else {
        return Err(Error::invalid_argument("Unsupported list container: source ownership is unavailable."));
    };
    if info.marker_style.is_empty() {
        return Err(Error::invalid_argument(LIST_AMBIGUOUS));
    }
    let original_line = first_line(source.get(target.range.start..).unwrap_or(""));
    let original = parse_marker(original_line);
    let fragment = parse_marker(first_line(markdown));
    let matches = match (&original, &fragment) {
        (Some((want_indent, _)), Some((indent, style))) => {
            indent == want_indent && *style == info.marker_style
        }
        _ => false,
    };
    if !matches {
        let indent = original.map_or("", |(indent, _)| indent);
        return Err(Error::invalid_argument(format!(
            "Invalid list fragment at '{}': expected indent '{indent}' and marker style '{}'.",
            target.pointer, info.marker_style
        )));
    }
    Ok(markdown)
}

/// `replace_element` on a list item edits only its own text: the fragment may hold one item
/// and no child (or sibling) items.
fn reject_list_children(target: &Element, fragment: &str) -> Result<()> {
    let items = parse_fragment(fragment).iter().filter(|e| e.kind == ElementKind::ListItem).count();
    if items > 1 {
        return Err(Error::invalid_argument(format!(
            "Invalid list fragment at '{}': replace_element changes only the item's own text and cannot contain other list items. Use replace_subtree to replace the item together with its children.",
            target.pointer
        )));
    }
    Ok(())
}

/// `replace_section`: a heading target, and a replacement that is one section of the same level
/// whose later headings are all deeper.
fn validate_section_replacement(target: &Element, markdown: Option<&str>) -> Result<()> {
    if target.kind != ElementKind::Heading {
        return Err(Error::invalid_argument(REPLACE_SECTION_HEADING));
    }
    let Some(markdown) = markdown else {
        return Ok(());
    };
    let elements = parse_fragment(markdown);
    let Some(root) = elements.first() else {
        return Err(Error::invalid_argument(SECTION_ROOT));
    };
    let level = target.heading_level;
    let deeper = |e: &Element| e.kind != ElementKind::Heading || e.heading_level > level;
    if root.kind != ElementKind::Heading
        || root.heading_level != level
        || !is_blank(markdown.get(..root.range.start).unwrap_or(""))
        || !elements[1..].iter().all(deeper)
    {
        return Err(Error::invalid_argument(SECTION_ROOT));
    }
    Ok(())
}
