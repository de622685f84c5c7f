//! The heading tree of a document (`docs/reference/original-server.md` §5.9).

use super::{Document, ElementKind, parse::heading_title};

/// One heading with its sub-headings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutlineNode {
    /// The heading's v2 anchor.
    pub pointer: String,
    /// `#` level.
    pub level: u8,
    /// Title without markers.
    pub title: String,
    /// Sub-headings.
    pub children: Vec<OutlineNode>,
}

/// Builds the heading tree (pop while `top.level >= node.level`).
pub fn outline(doc: &Document, text: &str) -> Vec<OutlineNode> {
    let mut roots: Vec<OutlineNode> = Vec::new();
    let mut stack: Vec<OutlineNode> = Vec::new();
    for e in doc.elements.iter().filter(|e| e.kind == ElementKind::Heading) {
        let node = OutlineNode {
            pointer: e.anchor(),
            level: e.heading_level.unwrap_or(1),
            title: heading_title(&text[e.range.clone()]),
            children: Vec::new(),
        };
        while stack.last().is_some_and(|top| top.level >= node.level) {
            pop_into(&mut stack, &mut roots);
        }
        stack.push(node);
    }
    while !stack.is_empty() {
        pop_into(&mut stack, &mut roots);
    }
    roots
}

fn pop_into(stack: &mut Vec<OutlineNode>, roots: &mut Vec<OutlineNode>) {
    if let Some(done) = stack.pop() {
        match stack.last_mut() {
            Some(parent) => parent.children.push(done),
            None => roots.push(done),
        }
    }
}
