//! Structural edits to Markdown documents: the pure planning engine behind `kb_patch`
//! (`docs/reference/original-server.md` §9.1–§9.5).
//!
//! [`plan`] takes the exact source text (BOM already removed by the caller) and a list of
//! [`PatchOp`]s whose pointers are public anchors, and returns the new text:
//!
//! 1. every anchor is resolved against one parse of the source (§9.2 steps 3–6): `document` is
//!    unhashed and only inserts may use it, concrete targets need a fingerprint, reserved
//!    pointers and stale or ambiguous fingerprints are CONFLICTs, and Subtree-scoped operations
//!    (section operations, `delete`/`replace_subtree` on list items) also check the subtree hash;
//! 2. replacements are validated on their own (§9.4);
//! 3. byte edits are planned with the exact separator and line-ending rules of §9.3, duplicate
//!    targets and overlapping edits are refused, and the edits are applied;
//! 4. when any operation targets a list item or a block quote, the result is re-parsed and the
//!    structural validator (§9.5) proves that everything outside the edits survived unchanged,
//!    with the same list and quote ownership.
//!
//! Invariants:
//!
//! - Pure and all-or-nothing: no I/O, and any error means no change at all.
//! - Bytes outside the planned ranges are never touched: the text before the first edit and
//!   after the last one is byte-identical, and so is every gap between edits.
//! - Never panics, whatever the text or the operations; every range is checked against the
//!   source before it is sliced.
//! - Inserted text uses the document's line ending (`\r\n` if the source contains any CRLF,
//!   else `\n`); untouched bytes keep theirs.

mod blocks;
mod planner;
mod resolve;
mod structure;
mod validate;

use std::fmt;
use std::ops::Range;
use std::str::FromStr;

use crate::error::{Error, Result};
use crate::markdown::{Document, ElementKind, LogicalPointer};
use crate::wire::ValueSet;

/// The patch operation kinds of `kb_patch`: the wire's type, with the edit rules below.
pub use crate::wire::PatchKind;

/// Whether an operation checks only the self hash or also the subtree hash (§9.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MutationScope {
    /// The contract's "Self" scope: the element's own text (selfHash).
    Own,
    /// The element and everything it owns (selfHash and subtreeHash).
    Subtree,
}

impl PatchKind {
    /// Every kind, in the order of the wire schema.
    pub const ALL: &[PatchKind] = <PatchKind as ValueSet>::ALL;

    /// The snake_case wire value (`replace_element`, …).
    pub fn as_wire(self) -> &'static str {
        ValueSet::as_str(self)
    }

    /// The original's enum name (`ReplaceElement`, …), used by some of its messages.
    pub fn as_name(self) -> &'static str {
        match self {
            PatchKind::Replace => "Replace",
            PatchKind::ReplaceElement => "ReplaceElement",
            PatchKind::ReplaceSubtree => "ReplaceSubtree",
            PatchKind::ReplaceSection => "ReplaceSection",
            PatchKind::DeleteSection => "DeleteSection",
            PatchKind::InsertBefore => "InsertBefore",
            PatchKind::InsertAfter => "InsertAfter",
            PatchKind::Delete => "Delete",
        }
    }

    /// Parses the wire value, case-insensitively. Unknown values are `INVALID_ARGUMENT` with the
    /// sentence the wire refuses them with, which lists the valid kinds.
    pub fn parse(s: &str) -> Result<Self> {
        Self::find(s).ok_or_else(|| Error::invalid_argument(Self::refusal(s)))
    }

    /// The hash scope of this kind on a target of `target` kind (§9.1): Subtree for section
    /// operations and for `delete`/`replace_subtree` on list items, else Self.
    pub fn scope(self, target: ElementKind) -> MutationScope {
        let subtree = matches!(self, PatchKind::ReplaceSection | PatchKind::DeleteSection)
            || (target == ElementKind::ListItem
                && matches!(self, PatchKind::Delete | PatchKind::ReplaceSubtree));
        if subtree { MutationScope::Subtree } else { MutationScope::Own }
    }
}

impl fmt::Display for PatchKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_wire())
    }
}

impl FromStr for PatchKind {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        PatchKind::parse(s)
    }
}

/// One operation of a `kb_patch` request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatchOp {
    /// What to do.
    pub kind: PatchKind,
    /// The public anchor of the target (`document`, `logical~self` or `logical~self~subtree`).
    pub pointer: String,
    /// The new Markdown (required by replace and insert kinds, refused by `delete_section`).
    pub markdown: Option<String>,
}

impl PatchOp {
    /// A convenience constructor.
    pub fn new(kind: PatchKind, pointer: impl Into<String>, markdown: Option<&str>) -> Self {
        PatchOp { kind, pointer: pointer.into(), markdown: markdown.map(str::to_owned) }
    }
}

/// One planned byte edit: `range` of the original source is replaced by `replacement`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedEdit {
    /// Byte range in the original source (empty for insertions).
    pub range: Range<usize>,
    /// The text put in its place.
    pub replacement: String,
    /// The resolved logical pointer of the operation that planned it.
    pub pointer: String,
}

/// The outcome of a successful [`plan_patch`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatchPlan {
    /// The new source text (without BOM; the caller re-adds one if the file had it).
    pub text: String,
    /// The resolved logical pointer of every operation, in request order (`document` stays
    /// `document`).
    pub resolved_pointers: Vec<LogicalPointer>,
    /// The planned edits, sorted by start offset, non-overlapping.
    pub edits: Vec<PlannedEdit>,
}

/// Plans and applies `ops` to `text` (BOM removed). Returns the new text; any error means
/// nothing changes. See the module docs for the steps.
pub fn plan(text: &str, ops: &[PatchOp]) -> Result<String> {
    plan_patch(text, ops).map(|p| p.text)
}

/// [`plan`] with the details: resolved pointers and the planned edits.
pub fn plan_patch(text: &str, ops: &[PatchOp]) -> Result<PatchPlan> {
    let doc = Document::parse(text);
    let resolved = resolve::resolve(&doc, ops)?;
    validate::validate(text, &doc, &resolved)?;
    let edits = planner::plan_edits(text, &doc, &resolved)?;
    let new_text = planner::apply(text, &edits)?;
    let structured = resolved.iter().any(|op| {
        op.target
            .is_some_and(|i| matches!(doc.elements[i].kind, ElementKind::ListItem | ElementKind::BlockQuote))
    });
    if structured {
        let after = Document::parse(&new_text);
        structure::validate(text, &new_text, &doc, &after, &resolved, &edits)?;
    }
    Ok(PatchPlan {
        text: new_text,
        resolved_pointers: resolved.into_iter().map(|r| r.pointer).collect(),
        edits,
    })
}

/// Resolves only the anchors of `ops` against `text` (§9.2 step 3) and returns the logical
/// pointer each one names now, in request order.
pub fn resolved_pointers(text: &str, ops: &[PatchOp]) -> Result<Vec<LogicalPointer>> {
    let doc = Document::parse(text);
    Ok(resolve::resolve(&doc, ops)?.into_iter().map(|r| r.pointer).collect())
}

#[cfg(test)]
mod tests;
