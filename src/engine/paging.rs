//! The one pager of bounded answers (`docs/tools.md`, "Bounded answers"): lists and outlines
//! are cut into pages of at most a byte budget of JSON, with an opaque cursor for the next one.
//!
//! Paging happens here, at the engine's boundary, on the finished list a use case computed:
//! the modules that compute lists know nothing of budgets. The catalog, which renders its own
//! answers, receives the cut ([`fitting_room`]) and a budget from the engine and applies them.
//!
//! Invariants:
//!
//! - A page holds at least one item, and otherwise never more JSON than the budget.
//! - A cursor names its list (`kind`) and a fingerprint of the request's filters (and, for a
//!   file, its content hash): a cursor used with other filters, another list or a changed file
//!   is refused in one sentence instead of returning a page of something else.

use serde::Serialize;

use crate::config::MIN_ANSWER_BYTES;
use crate::error::{Error, Result};

/// Bytes kept for what surrounds the items in an answer (path, hashes, the notice, the cursor).
const ENVELOPE_BYTES: usize = 768;

/// One page of a list.
pub(crate) struct Page<T> {
    pub items: Vec<T>,
    pub next_cursor: Option<String>,
    /// Index of the first item on this page in the whole list.
    pub first: usize,
    /// Items in the whole list.
    pub total: usize,
}

impl<T> Page<T> {
    /// `Some(true)` when more pages follow (the wire's `truncated`), else `None`.
    pub fn truncated(&self) -> Option<bool> {
        self.next_cursor.is_some().then_some(true)
    }

    /// The sentence of a cut page, or `None` for the last page.
    pub fn notice(&self, noun: &str) -> Option<String> {
        self.next_cursor.as_ref().map(|_| {
            format!(
                "This page holds {noun} {} to {} of {}; pass nextCursor as cursor for the next page.",
                self.first + 1,
                self.first + self.items.len(),
                self.total
            )
        })
    }
}

/// The budget of one answer: the caller's `maxBytes`, else `default` (`tools.maxAnswerBytes`).
pub(crate) fn budget(max_bytes: Option<i64>, default: usize) -> Result<usize> {
    match max_bytes {
        None => Ok(default),
        Some(n) if n < MIN_ANSWER_BYTES as i64 => Err(Error::invalid_argument(format!(
            "maxBytes must be at least {MIN_ANSWER_BYTES}; omit it for the default of {default}."
        ))),
        Some(n) => Ok(usize::try_from(n).unwrap_or(usize::MAX)),
    }
}

/// A short fingerprint of what a cursor is valid for.
pub(crate) fn fingerprint(parts: &[&str]) -> String {
    let joined = parts.join("\u{1f}");
    crate::text::xxh64_hex(joined.as_bytes())
}

/// Cuts `items` into the page that `cursor` (or the start) names, at most `budget` bytes of
/// JSON for the answer. `kind` names the list in cursors and messages (`kb_outline`).
pub(crate) fn page<T: Serialize>(
    items: Vec<T>,
    cursor: Option<&str>,
    budget: usize,
    kind: &str,
    fingerprint: &str,
) -> Result<Page<T>> {
    let total = items.len();
    let first = match cursor.filter(|c| !c.is_empty()) {
        None => 0,
        Some(c) => parse_cursor(c, kind, fingerprint, total)?,
    };
    let mut items = items;
    let mut taken: Vec<T> = items.drain(first.min(total)..).collect();
    taken.truncate(fitting(&taken, budget));
    let end = first + taken.len();
    let next_cursor = (end < total).then(|| format!("{kind}:{end}:{fingerprint}"));
    Ok(Page { items: taken, next_cursor, first, total })
}

/// How many of `items`, from the first, fit in an answer of `budget` bytes (at least one).
pub(crate) fn fitting<T: Serialize>(items: &[T], budget: usize) -> usize {
    fitting_room(items, budget.saturating_sub(ENVELOPE_BYTES))
}

/// How many of `items`, from the first, take at most `room` bytes of JSON (at least one): the
/// cut for an answer whose envelope the caller measured itself (the catalog's Markdown and
/// JSON answers, whose totals and tag counts vary in size).
pub(crate) fn fitting_room<T: Serialize>(items: &[T], room: usize) -> usize {
    let mut used = 0usize;
    for (i, item) in items.iter().enumerate() {
        // Each item costs its JSON and a separating comma.
        used += serde_json::to_vec(item).map_or(0, |v| v.len()) + 1;
        if used > room {
            return i.max(1);
        }
    }
    items.len()
}

/// Cuts a list that has no pages of its own (an export's warnings, a status list) to the entries
/// that take at most `room` bytes of JSON (at least one); returns how many there were when it cut.
pub(crate) fn cap<T: Serialize>(list: &mut Vec<T>, room: usize) -> Option<usize> {
    let keep = fitting_room(list, room);
    (keep < list.len()).then(|| {
        let total = list.len();
        list.truncate(keep);
        total
    })
}

/// [`cap`] for a list of warnings: a last entry says how many were left out and where `all`
/// of them are shown.
pub(crate) fn cap_warnings(warnings: &mut Vec<String>, budget: usize, all: &str) {
    if let Some(total) = cap(warnings, budget.saturating_sub(ENVELOPE_BYTES)) {
        let more = total - warnings.len();
        warnings.push(format!(
            "… and {more} more warning(s), left out to keep this answer within {budget} bytes; {all} lists them all."
        ));
    }
}

fn parse_cursor(cursor: &str, kind: &str, fingerprint: &str, total: usize) -> Result<usize> {
    let mut parts = cursor.splitn(3, ':');
    let (k, index, fp) = (parts.next(), parts.next(), parts.next());
    if k != Some(kind) {
        return Err(Error::invalid_argument(format!(
            "The cursor was not returned by {kind}; omit cursor to start again from the first page."
        )));
    }
    let index = index.and_then(|i| i.parse::<usize>().ok()).filter(|&i| i <= total);
    match (index, fp) {
        (Some(i), Some(f)) if f == fingerprint => Ok(i),
        _ => Err(Error::invalid_argument(format!(
            "The cursor belongs to other filters or to an earlier version of the file; repeat the {kind} call without cursor to start again."
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_cover_the_list_once_and_stay_within_the_budget() {
        let items: Vec<String> = (0..5000).map(|i| format!("item number {i}")).collect();
        let mut cursor: Option<String> = None;
        let mut seen = Vec::new();
        loop {
            let p = page(items.clone(), cursor.as_deref(), 2048, "kb_x", "fp").unwrap();
            let bytes = serde_json::to_vec(&p.items).unwrap().len();
            assert!(bytes + ENVELOPE_BYTES <= 2048, "{bytes}");
            assert!(!p.items.is_empty());
            seen.extend(p.items);
            match p.next_cursor {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        assert_eq!(seen, items);
    }

    #[test]
    fn a_cursor_of_other_filters_or_another_list_is_refused() {
        let items: Vec<u32> = (0..10_000).collect();
        let p = page(items.clone(), None, 2048, "kb_x", "fp").unwrap();
        let c = p.next_cursor.unwrap();
        let e = page(items.clone(), Some(&c), 2048, "kb_x", "other").err().unwrap();
        assert!(e.message.contains("other filters"), "{}", e.message);
        let e = page(items.clone(), Some(&c), 2048, "kb_y", "fp").err().unwrap();
        assert!(e.message.contains("not returned by kb_y"), "{}", e.message);
        assert!(page(items, Some("kb_x:zz:fp"), 2048, "kb_x", "fp").is_err());
    }
}
