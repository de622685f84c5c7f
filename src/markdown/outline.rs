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

/// Builds the heading tree: each heading is a child of the nearest earlier heading of a lower
/// level.
pub fn outline(doc: &Document, text: &str) -> Vec<OutlineNode> {
    let headings = doc.elements.iter().filter(|e| e.kind == ElementKind::Heading).map(|e| {
        let level = e.heading_level.unwrap_or(1);
        let node = OutlineNode {
            pointer: e.anchor(),
            level,
            title: heading_title(&text[e.range.clone()]),
            children: Vec::new(),
        };
        (node, usize::from(level))
    });
    build_tree(headings, |parent, child| parent.children.push(child))
}

/// Nodes in document order with their depth as a forest: each node becomes the child of the
/// nearest earlier node of a smaller depth (`adopt(parent, child)`), or a root. A node whose
/// parent is not in the list (a page of a longer outline) is a root.
pub fn build_tree<T>(flat: impl IntoIterator<Item = (T, usize)>, adopt: impl Fn(&mut T, T)) -> Vec<T> {
    let mut roots: Vec<T> = Vec::new();
    let mut stack: Vec<(T, usize)> = Vec::new();
    let pop = |stack: &mut Vec<(T, usize)>, roots: &mut Vec<T>| {
        if let Some((done, _)) = stack.pop() {
            match stack.last_mut() {
                Some((parent, _)) => adopt(parent, done),
                None => roots.push(done),
            }
        }
    };
    for (node, depth) in flat {
        while stack.last().is_some_and(|(_, d)| *d >= depth) {
            pop(&mut stack, &mut roots);
        }
        stack.push((node, depth));
    }
    while !stack.is_empty() {
        pop(&mut stack, &mut roots);
    }
    roots
}

/// The subtree whose root has anchor `wanted`.
pub fn find_subtree(nodes: Vec<OutlineNode>, wanted: &str) -> Option<OutlineNode> {
    let mut stack = nodes;
    while let Some(n) = stack.pop() {
        if n.pointer == wanted {
            return Some(n);
        }
        stack.extend(n.children);
    }
    None
}

/// The tree in document order (pre-order), `max_depth` levels deep: each heading without its
/// children, and its depth (1 for the roots).
pub fn flatten(nodes: Vec<OutlineNode>, max_depth: usize) -> Vec<(OutlineNode, usize)> {
    let mut out = Vec::new();
    // An explicit stack: a document may nest thousands of headings deep.
    let mut stack: Vec<(OutlineNode, usize)> = nodes.into_iter().rev().map(|n| (n, 1)).collect();
    while let Some((mut n, d)) = stack.pop() {
        if d > max_depth {
            continue;
        }
        let children = std::mem::take(&mut n.children);
        out.push((n, d));
        stack.extend(children.into_iter().rev().map(|c| (c, d + 1)));
    }
    out
}
