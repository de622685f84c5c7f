//! The structural validator (`docs/reference/original-server.md` §9.5): after a patch that touches
//! a list item or a block quote, proves on the re-parsed result that everything outside the edits
//! survived with the same text, kind and list/quote ownership, and that each new fragment forms
//! exactly one structured root where it was meant to go.
//!
//! Identity is the source position mapped through the planned edits, never the (shifting)
//! ordinals of the pointers.

use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::markdown::{Document, Element, ElementKind};

use super::blocks::{BlockKind, Blocks, read_blocks};
use super::resolve::Resolved;
use super::{PatchKind, PlannedEdit};

fn unsupported(at: &str, reason: &str) -> Error {
    Error::invalid_argument(format!("Unsupported Markdown structure at '{at}': {reason}."))
}

struct Mapper<'a> {
    /// Sorted by start.
    edits: &'a [PlannedEdit],
    /// Start offsets of list items whose own prefix is replaced: they keep their identity.
    own_edited: Vec<usize>,
}

impl Mapper<'_> {
    /// Where an original offset is in the new source; `None` inside a replaced range.
    fn map(&self, position: usize) -> Option<usize> {
        let mut delta: isize = 0;
        for e in self.edits {
            let (start, end) = (e.range.start, e.range.end);
            if end > start && position >= start && position < end {
                return (position == start && self.own_edited.contains(&position))
                    .then(|| shift(position, delta))
                    .flatten();
            }
            if end <= position {
                delta += e.replacement.len() as isize - (end - start) as isize;
            }
        }
        shift(position, delta)
    }

    /// The range an edit's replacement occupies in the new source.
    fn new_range(&self, edit: &PlannedEdit) -> Option<(usize, usize)> {
        let mut delta: isize = 0;
        for e in self.edits.iter().filter(|e| e.range.start < edit.range.start) {
            delta += e.replacement.len() as isize - e.range.len() as isize;
        }
        let start = shift(edit.range.start, delta)?;
        Some((start, start + edit.replacement.len()))
    }
}

fn shift(position: usize, delta: isize) -> Option<usize> {
    position.checked_add_signed(delta)
}

fn index_elements(doc: &Document) -> HashMap<(usize, ElementKind), Vec<usize>> {
    let mut map: HashMap<(usize, ElementKind), Vec<usize>> = HashMap::new();
    for (i, e) in doc.elements.iter().enumerate() {
        map.entry((e.range.start, e.kind)).or_default().push(i);
    }
    map
}

fn index_blocks(blocks: &Blocks) -> HashMap<(usize, BlockKind), Vec<usize>> {
    let mut map: HashMap<(usize, BlockKind), Vec<usize>> = HashMap::new();
    for (i, b) in blocks.blocks.iter().enumerate() {
        map.entry((b.range.start, b.kind)).or_default().push(i);
    }
    map
}

/// Start of the parent list item of `element` in `doc`: `Ok(None)` for top-level items.
fn parent_start(element: &Element, doc: &Document) -> Result<Option<usize>> {
    let Some(parent) = element.list.as_ref().and_then(|l| l.parent.as_ref()) else {
        return Ok(None);
    };
    doc.get(parent)
        .map(|p| Some(p.range.start))
        .ok_or_else(|| unsupported(element.pointer.as_str(), "list parent cannot be resolved"))
}

/// Both sides of the patch, parsed.
struct Sides<'a> {
    after_text: &'a str,
    before: &'a Document,
    after: &'a Document,
    original: Blocks,
    updated: Blocks,
    after_blocks: HashMap<(usize, BlockKind), Vec<usize>>,
}

/// Runs every check; the first failure wins.
pub(super) fn validate(
    before_text: &str,
    after_text: &str,
    before: &Document,
    after: &Document,
    ops: &[Resolved<'_>],
    edits: &[PlannedEdit],
) -> Result<()> {
    let own_edited = ops
        .iter()
        .filter(|op| matches!(op.kind, PatchKind::Replace | PatchKind::ReplaceElement))
        .filter_map(|op| op.target.and_then(|i| before.elements.get(i)))
        .filter(|e| e.kind == ElementKind::ListItem)
        .map(|e| e.range.start)
        .collect();
    let mapper = Mapper { edits, own_edited };
    let after_elements = index_elements(after);
    let updated = read_blocks(after_text);
    let sides = Sides {
        after_text,
        before,
        after,
        original: read_blocks(before_text),
        after_blocks: index_blocks(&updated),
        updated,
    };

    check_elements(before, after, &mapper, &after_elements)?;
    check_leaf_blocks(before_text, &sides, &mapper)?;
    let forward = check_list_containers(&sides, &mapper)?;
    for op in ops {
        check_new_root(&sides, op, &mapper, &forward)?;
    }
    Ok(())
}

/// Every addressed element outside the edits reappears at its mapped offset, unchanged, and
/// surviving list items keep their depth, marker and parent.
fn check_elements(
    before: &Document,
    after: &Document,
    mapper: &Mapper<'_>,
    after_elements: &HashMap<(usize, ElementKind), Vec<usize>>,
) -> Result<()> {
    for old in &before.elements {
        let Some(position) = mapper.map(old.range.start) else { continue };
        if mapper.own_edited.contains(&old.range.start) {
            continue;
        }
        let at = old.pointer.as_str();
        let current = match after_elements.get(&(position, old.kind)).map(Vec::as_slice) {
            Some([one]) => &after.elements[*one],
            _ => return Err(unsupported(at, "surviving element text or kind changed")),
        };
        if current.self_hash != old.self_hash || current.text != old.text {
            return Err(unsupported(at, "surviving element text or kind changed"));
        }
        if old.kind != ElementKind::ListItem {
            continue;
        }
        match (&old.list, &current.list) {
            (Some(o), Some(c)) if o.depth == c.depth && o.marker_style == c.marker_style => {}
            _ => return Err(unsupported(at, "list depth or marker changed")),
        }
        let original_parent = parent_start(old, before)?.and_then(|p| mapper.map(p));
        let current_parent = parent_start(current, after)?;
        if original_parent != current_parent {
            return Err(unsupported(at, "surviving list item was reparented"));
        }
    }
    Ok(())
}

/// Every raw leaf block outside the edits (HTML, link definitions, thematic breaks, paragraphs
/// inside items and quotes, …) keeps its kind, text and list/quote ancestors.
fn check_leaf_blocks(before_text: &str, sides: &Sides<'_>, mapper: &Mapper<'_>) -> Result<()> {
    let Sides { after_text, original, updated, after_blocks, .. } = sides;
    for (index, old) in original.blocks.iter().enumerate() {
        if old.kind.is_container() {
            continue;
        }
        let intersects = mapper
            .edits
            .iter()
            .any(|e| !e.range.is_empty() && e.range.start < old.range.end && e.range.end > old.range.start);
        if intersects {
            continue;
        }
        let Some(position) = mapper.map(old.range.start) else { continue };
        let at = old.kind.name();
        let current_index = match after_blocks.get(&(position, old.kind)).map(Vec::as_slice) {
            Some([one]) => *one,
            _ => return Err(unsupported(at, "surviving Markdown block changed kind or ownership")),
        };
        let current = &updated.blocks[current_index];
        if before_text.get(old.range.clone()) != after_text.get(current.range.clone()) {
            return Err(unsupported(at, "unmodified Markdown block text changed"));
        }
        let original_parents = original.structural_parents(index);
        let new_parents = updated.structural_parents(current_index);
        if original_parents.len() != new_parents.len() {
            return Err(unsupported(at, "surviving block was absorbed by a container"));
        }
        for ((old_kind, old_start), (new_kind, new_start)) in original_parents.iter().zip(&new_parents) {
            if old_kind != new_kind || mapper.map(*old_start) != Some(*new_start) {
                return Err(unsupported(at, "surviving block changed list or quote parent"));
            }
        }
    }
    Ok(())
}

/// Surviving list items keep their container, and original and resulting lists correspond one
/// to one (no list split or merged). Returns the original → resulting list map.
fn check_list_containers(sides: &Sides<'_>, mapper: &Mapper<'_>) -> Result<HashMap<usize, usize>> {
    let Sides { original, updated, after_blocks, .. } = sides;
    let mut forward: HashMap<usize, usize> = HashMap::new();
    let mut reverse: HashMap<usize, usize> = HashMap::new();
    for old in original.blocks.iter().filter(|b| b.kind == BlockKind::ListItem) {
        let Some(position) = mapper.map(old.range.start) else { continue };
        let matched = match after_blocks.get(&(position, BlockKind::ListItem)).map(Vec::as_slice) {
            Some([one]) => updated.blocks.get(*one),
            _ => None,
        };
        let old_list =
            old.parent.filter(|&p| original.blocks.get(p).is_some_and(|b| b.kind == BlockKind::List));
        let new_list = matched
            .and_then(|m| m.parent)
            .filter(|&p| updated.blocks.get(p).is_some_and(|b| b.kind == BlockKind::List));
        let (Some(old_list), Some(new_list)) = (old_list, new_list) else {
            return Err(unsupported("list", "surviving list item changed container"));
        };
        if forward.get(&old_list).is_some_and(|&n| n != new_list)
            || reverse.get(&new_list).is_some_and(|&o| o != old_list)
        {
            return Err(unsupported("list", "a list container was split or merged"));
        }
        forward.insert(old_list, new_list);
        reverse.insert(new_list, old_list);
    }
    Ok(forward)
}

/// For a non-delete operation on a list item or quote: the new text forms exactly one root of
/// the target's kind (and, for list items, depth, marker, indentation, parent and container),
/// and everything the fragment introduced belongs to that root.
fn check_new_root(
    sides: &Sides<'_>,
    op: &Resolved<'_>,
    mapper: &Mapper<'_>,
    forward: &HashMap<usize, usize>,
) -> Result<()> {
    let Sides { after_text, before, after, original, updated, after_blocks } = sides;
    let Some(target) = op.target.and_then(|i| before.elements.get(i)) else {
        return Ok(());
    };
    if !matches!(target.kind, ElementKind::ListItem | ElementKind::BlockQuote) || op.kind == PatchKind::Delete
    {
        return Ok(());
    }
    let at = op.pointer.as_str();
    let Some(edit) = mapper.edits.iter().find(|e| e.pointer == at) else {
        return Err(unsupported(at, "exactly one structured root is required"));
    };
    let Some((start, end)) = mapper.new_range(edit) else {
        return Err(unsupported(at, "exactly one structured root is required"));
    };
    let quote = target.kind == ElementKind::BlockQuote;
    let target_depth = target.list.as_ref().map(|l| l.depth);
    let roots: Vec<&Element> = after
        .elements
        .iter()
        .filter(|e| e.kind == target.kind && e.range.start >= start && e.range.start < end)
        .filter(|e| quote || e.list.as_ref().map(|l| l.depth) == target_depth)
        .collect();
    let [root] = roots.as_slice() else {
        return Err(unsupported(at, "exactly one structured root is required"));
    };
    let root_kind = if quote { BlockKind::Quote } else { BlockKind::ListItem };
    let root_block = match after_blocks.get(&(root.range.start, root_kind)).map(Vec::as_slice) {
        Some([one]) => *one,
        _ => return Err(unsupported(at, "structured root has ambiguous Markdig ownership")),
    };
    let root_parent_list = updated.blocks.get(root_block).and_then(|b| b.parent);

    if !quote {
        let same_marker = match (&root.list, &target.list) {
            (Some(r), Some(t)) => r.marker_style == t.marker_style && r.indent == t.indent,
            _ => false,
        };
        if !same_marker {
            return Err(unsupported(at, "replacement list marker or indentation changed"));
        }
        let expected_parent = parent_start(target, before)?.and_then(|p| mapper.map(p));
        let actual_parent = match root.list.as_ref().and_then(|l| l.parent.as_ref()) {
            None => None,
            Some(p) => match after.get(p) {
                Some(parent) => Some(parent.range.start),
                None => return Err(unsupported(at, "new item has the wrong list parent")),
            },
        };
        if expected_parent != actual_parent {
            return Err(unsupported(at, "new item has the wrong list parent"));
        }
        if matches!(op.kind, PatchKind::InsertBefore | PatchKind::InsertAfter) {
            let sibling = mapper.map(target.range.start).and_then(|p| {
                match after_blocks.get(&(p, BlockKind::ListItem)).map(Vec::as_slice) {
                    Some([one]) => updated.blocks.get(*one),
                    _ => None,
                }
            });
            let sibling_list = sibling.and_then(|s| s.parent);
            if sibling_list.is_none() || sibling_list != root_parent_list {
                return Err(unsupported(at, "new sibling is in a different list container"));
            }
        } else {
            let old_items: Vec<usize> = original
                .blocks
                .iter()
                .enumerate()
                .filter(|(_, b)| b.kind == BlockKind::ListItem && b.range.start == target.range.start)
                .map(|(i, _)| i)
                .collect();
            let old_list = match old_items.as_slice() {
                [one] => original.blocks.get(*one).and_then(|b| b.parent),
                _ => None,
            };
            let Some(old_list) = old_list else {
                return Err(unsupported(at, "original list container is ambiguous"));
            };
            if let Some(&preserved) = forward.get(&old_list)
                && root_parent_list != Some(preserved)
            {
                return Err(unsupported(at, "replacement split the original list"));
            }
        }
    }

    for (index, block) in updated.blocks.iter().enumerate() {
        let relevant =
            !block.kind.is_container() || matches!(block.kind, BlockKind::ListItem | BlockKind::Quote);
        if !relevant || block.range.start < start || block.range.start >= end {
            continue;
        }
        if index != root_block && !updated.is_descendant(index, root_block) {
            return Err(unsupported(
                at,
                &format!("fragment introduces an unrelated {} outside the new subtree", block.kind.name()),
            ));
        }
    }

    let owned = updated.blocks.get(root_block).map(|b| b.range.clone()).unwrap_or(0..0);
    let inserted = after_text.get(start..end).unwrap_or("");
    for (offset, c) in inserted.char_indices() {
        let offset = start + offset;
        if !c.is_whitespace() && !owned.contains(&offset) {
            return Err(unsupported(at, "fragment contains Markdown outside the new structured root"));
        }
    }
    Ok(())
}
