//! The one soft-break rule of the publishing stream: a soft line break between two characters
//! the text rule joins (`markdown::text_rules::soft_break_joins`: Japanese on both sides, or
//! full-width punctuation on either) leaves the stream; every other one stays, and each export
//! shows it as its white space (a space in the PDF, a line break in the HTML source).
//!
//! The sides are the last character of the text before the break and the first after it.
//! Inline styles and links do not end the text (`かかる⏎*深い*` joins), and a raw inline HTML
//! tag keeps the text before it; anything else — an image, a footnote reference, a line break,
//! a block boundary — is an unknown side, which keeps the space. Inside an image's alternative
//! text every soft break stays.

use crate::markdown::text_rules::soft_break_joins;

use super::model::{Event, Node, Tag};

/// Drops the soft breaks of `nodes` that the rule joins.
pub(super) fn resolve(nodes: Vec<Node>) -> Vec<Node> {
    let joined = joined_breaks(&nodes);
    if joined.is_empty() {
        return nodes;
    }
    let mut joined = joined.into_iter().peekable();
    let mut out = Vec::with_capacity(nodes.len());
    for (i, node) in nodes.into_iter().enumerate() {
        if joined.peek() == Some(&i) {
            joined.next();
            continue;
        }
        out.push(node);
    }
    out
}

/// Whether an event leaves the text run open on both sides (a style or a link).
fn transparent(event: &Event) -> bool {
    matches!(
        event,
        Event::Start(Tag::Emphasis | Tag::Strong | Tag::Strikethrough | Tag::Link { .. })
            | Event::End(Tag::Emphasis | Tag::Strong | Tag::Strikethrough | Tag::Link { .. })
    )
}

/// The first character of the text that follows `nodes[from..]`, if text follows.
fn next_char(nodes: &[Node], from: usize) -> Option<char> {
    for (event, _) in &nodes[from..] {
        match event {
            Event::Text(t) | Event::Code(t) => return t.chars().next(),
            e if transparent(e) => {}
            _ => return None,
        }
    }
    None
}

/// Indices of the soft breaks the rule joins, ascending.
fn joined_breaks(nodes: &[Node]) -> Vec<usize> {
    let mut joined = Vec::new();
    let mut last: Option<char> = None;
    let mut images = 0usize;
    for (i, (event, _)) in nodes.iter().enumerate() {
        match event {
            Event::Start(Tag::Image { .. }) => images += 1,
            Event::End(Tag::Image { .. }) => {
                images = images.saturating_sub(1);
                last = None;
            }
            _ if images > 0 => {}
            Event::Text(t) | Event::Code(t) => last = t.chars().last().or(last),
            Event::SoftBreak => {
                if soft_break_joins(last, next_char(nodes, i + 1)) {
                    joined.push(i);
                }
            }
            Event::InlineHtml(_) => {}
            e if transparent(e) => {}
            _ => last = None,
        }
    }
    joined
}
