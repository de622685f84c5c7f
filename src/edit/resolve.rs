//! Anchor resolution for patches (`docs/reference/original-server.md` §9.2 step 3).

use crate::error::{ConflictReason, Error, Result};
use crate::markdown::{Anchor, Document, LogicalPointer};

use super::{MutationScope, PatchKind, PatchOp};

/// The message for an unhashed anchor on a concrete element.
pub(super) const FINGERPRINT_REQUIRED: &str =
    "A fingerprint is required when mutating a concrete semantic element.";

/// The patch wording for a hashed anchor on a reserved pointer (§5.3.6).
pub(super) const RESERVED_PATCH_MESSAGE: &str = "The original pointer belongs to a now-atomic list or quote. Read the document again and use its list_item or block_quote pointer.";

const MISSING_SUBTREE_HASH: &str = "The semantic pointer does not contain a subtree hash. Read the document again and use the current semantic pointer.";

const SUBTREE_HASH_MISMATCH: &str =
    "The target subtree changed after the pointer was created. Read the document again.";

/// An operation rewritten to its resolved target.
#[derive(Clone, Debug)]
pub(super) struct Resolved<'a> {
    /// The operation kind.
    pub kind: PatchKind,
    /// Index into the document's elements; `None` for `document`.
    pub target: Option<usize>,
    /// The resolved logical pointer (`document` for the document).
    pub pointer: LogicalPointer,
    /// The operation's markdown, as sent.
    pub markdown: Option<&'a str>,
}

/// Resolves every operation's anchor in request order; the first failure wins.
pub(super) fn resolve<'a>(doc: &Document, ops: &'a [PatchOp]) -> Result<Vec<Resolved<'a>>> {
    ops.iter().map(|op| resolve_one(doc, op)).collect()
}

fn resolve_one<'a>(doc: &Document, op: &'a PatchOp) -> Result<Resolved<'a>> {
    let anchor = Anchor::parse(&op.pointer)?;
    let markdown = op.markdown.as_deref();
    if anchor.is_document() {
        return Ok(Resolved { kind: op.kind, target: None, pointer: LogicalPointer::document(), markdown });
    }
    if anchor.self_hash.is_none() {
        return Err(Error::invalid_argument(FINGERPRINT_REQUIRED));
    }
    let index = doc.resolve(&anchor, RESERVED_PATCH_MESSAGE)?;
    let element = doc
        .elements
        .get(index)
        .ok_or_else(|| Error::internal("Anchor resolution returned an element that does not exist."))?;
    if op.kind.scope(element.kind) == MutationScope::Subtree {
        match &anchor.subtree_hash {
            None => return Err(Error::conflict(ConflictReason::MissingSubtreeHash, MISSING_SUBTREE_HASH)),
            Some(h) if !h.eq_ignore_ascii_case(&element.subtree_hash) => {
                return Err(Error::conflict(ConflictReason::SubtreeHashMismatch, SUBTREE_HASH_MISMATCH));
            }
            Some(_) => {}
        }
    }
    Ok(Resolved { kind: op.kind, target: Some(index), pointer: element.pointer.clone(), markdown })
}
