//! The stored graph (one snapshot file per index) and the queries over it.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Read;
use std::path::Path;

use super::resolve::{Target, resolve};
use super::{DocLinks, LINKS_VERSION};
use crate::error::{Error, Result};
use crate::workspace::{form_sensitive, nfc, write_file_atomic};

/// Every indexed document's links, as committed with one index generation.
///
/// Stored in one binary file (`links.bin`, layout in `snapshot.rs`) that the writer rewrites and
/// readers in any process load; the generation comes first, so a writer can check it without
/// decoding the whole file ([`LinkGraph::read_generation`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkGraph {
    /// [`LINKS_VERSION`] of the records.
    pub version: String,
    /// The index generation the graph belongs to.
    pub generation: u64,
    /// Root-relative path → its links.
    pub docs: BTreeMap<String, DocLinks>,
}

impl LinkGraph {
    /// An empty graph of generation `generation`.
    pub fn new(generation: u64) -> Self {
        LinkGraph { version: LINKS_VERSION.to_owned(), generation, docs: BTreeMap::new() }
    }

    /// The bytes of the snapshot file.
    pub fn encode(&self) -> Vec<u8> {
        super::snapshot::encode(self)
    }

    /// A graph from the bytes [`LinkGraph::encode`] made; a damaged or foreign file is
    /// `INDEX_NOT_READY` with what to run.
    pub fn decode(bytes: &[u8]) -> Result<LinkGraph> {
        super::snapshot::decode(bytes)
    }

    /// Writes the graph atomically to `path` (a file of the index directory).
    pub fn write(&self, path: &Path) -> Result<()> {
        write_file_atomic(path, &self.encode(), "the link graph")
    }

    /// Reads a graph written by [`LinkGraph::write`].
    pub fn read(path: &Path) -> Result<LinkGraph> {
        let bytes = std::fs::read(path).map_err(|e| Error::io("the link graph", &e))?;
        LinkGraph::decode(&bytes)
    }

    /// The generation recorded at the start of the file, or `None` when it is missing or
    /// unreadable.
    pub fn read_generation(path: &Path) -> Option<u64> {
        let mut head = [0u8; 32];
        let mut file = std::fs::File::open(path).ok()?;
        let n = file.read(&mut head).ok()?;
        super::snapshot::generation(&head[..n])
    }
}

/// Which way a traversal follows links.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Links written in the file.
    Outgoing,
    /// Links to the file from other files (and from itself).
    Incoming,
    /// Both.
    Both,
}

/// Why a link is broken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// The target file does not exist.
    MissingFile,
    /// The target Markdown file exists but has no heading (or HTML anchor) for the fragment.
    MissingAnchor,
    /// The path climbs above the root with `..`.
    OutsideRoot,
    /// The path is refused by the path guard (`.git`, the index directory, bad characters).
    InvalidPath,
}

impl Reason {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::MissingFile => "missing_file",
            Reason::MissingAnchor => "missing_anchor",
            Reason::OutsideRoot => "outside_root",
            Reason::InvalidPath => "invalid_path",
        }
    }
}

/// One link, resolved and checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edge {
    /// The linking file.
    pub from: String,
    /// v2 anchor of the element holding the link.
    pub from_anchor: String,
    /// The target: root-relative path, or the URL of an external link.
    pub to: String,
    /// The fragment after `#`, percent-decoded.
    pub to_fragment: Option<String>,
    /// `inline`, `reference`, `autolink`, `image` or `definition`.
    pub kind: String,
    /// An external URL (never fetched, never broken).
    pub external: bool,
    /// Why the link is broken, if it is.
    pub reason: Option<Reason>,
    /// The destination as written.
    pub raw: String,
    /// Line of the destination.
    pub line: usize,
    /// Traversal depth at which the link was found (1 = the start file's own links).
    pub depth: u8,
}

/// A loaded graph with every link resolved and an incoming-link map.
#[derive(Debug)]
pub struct LinkIndex {
    graph: LinkGraph,
    /// Per document, the resolved target of each of its links (same order).
    resolved: HashMap<String, Vec<Target>>,
    /// Local target path → `(from, link index)`.
    incoming: HashMap<String, Vec<(String, usize)>>,
}

impl LinkIndex {
    /// Resolves every link of `graph`; `x.html` / `x.htm` targets that are not documents map to an
    /// indexed sibling `x.md` (mdBook).
    pub fn new(graph: LinkGraph) -> LinkIndex {
        let mut resolved = HashMap::with_capacity(graph.docs.len());
        let mut incoming: HashMap<String, Vec<(String, usize)>> = HashMap::new();
        // Documents whose names NFC and NFD write differently, by their NFC form: a link typed
        // composed reaches a file macOS stored decomposed, and the reverse (`workspace/nfc.rs`).
        let by_nfc: HashMap<String, &String> =
            graph.docs.keys().filter(|p| form_sensitive(p)).map(|p| (nfc(p).into_owned(), p)).collect();
        for (from, doc) in &graph.docs {
            let targets: Vec<Target> = doc
                .links
                .iter()
                .map(|l| match resolve(from, &l.raw) {
                    Target::Local { path, fragment } => {
                        Target::Local { path: document_named(&graph.docs, &by_nfc, path), fragment }
                    }
                    other => other,
                })
                .collect();
            for (i, t) in targets.iter().enumerate() {
                if let Target::Local { path, .. } = t {
                    incoming.entry(path.clone()).or_default().push((from.clone(), i));
                    // `x.html` with no `x.md` document (e.g. moved away): still a link to `x.md`.
                    if let Some(md) = html_stem(path).map(|stem| format!("{stem}.md")) {
                        incoming.entry(md).or_default().push((from.clone(), i));
                    }
                }
            }
            resolved.insert(from.clone(), targets);
        }
        LinkIndex { graph, resolved, incoming }
    }

    /// The generation the graph was committed with.
    pub fn generation(&self) -> u64 {
        self.graph.generation
    }

    /// Number of indexed documents.
    pub fn documents(&self) -> usize {
        self.graph.docs.len()
    }

    /// Number of links (external ones included).
    pub fn link_count(&self) -> usize {
        self.graph.docs.values().map(|d| d.links.len()).sum()
    }

    /// Whether `path` is an indexed document.
    pub fn is_document(&self, path: &str) -> bool {
        self.graph.docs.contains_key(path)
    }

    /// Whether any link points at `path`.
    pub fn has_incoming(&self, path: &str) -> bool {
        self.incoming.contains_key(path)
    }

    /// The links around `start`, following `direction` up to `depth` files away; each file is
    /// visited once and each link reported once, nearest first. `exists` answers for targets
    /// that are not indexed documents (non-Markdown files, excluded files, folders).
    pub fn traverse(
        &self,
        start: &str,
        direction: Direction,
        depth: u8,
        exists: &mut dyn FnMut(&str) -> bool,
    ) -> Vec<Edge> {
        let mut edges = Vec::new();
        let mut visited: HashSet<String> = HashSet::from([start.to_owned()]);
        let mut seen: HashSet<(String, usize)> = HashSet::new();
        let mut frontier = vec![start.to_owned()];
        for d in 1..=depth {
            let mut next = Vec::new();
            for file in &frontier {
                if direction != Direction::Incoming {
                    for i in 0..self.resolved.get(file).map_or(0, Vec::len) {
                        if !seen.insert((file.clone(), i)) {
                            continue;
                        }
                        let edge = self.edge(file, i, d, exists);
                        if !edge.external && self.is_document(&edge.to) && visited.insert(edge.to.clone()) {
                            next.push(edge.to.clone());
                        }
                        edges.push(edge);
                    }
                }
                if direction != Direction::Outgoing {
                    for (from, i) in self.incoming.get(file).into_iter().flatten() {
                        if !seen.insert((from.clone(), *i)) {
                            continue;
                        }
                        edges.push(self.edge(from, *i, d, exists));
                        if visited.insert(from.clone()) {
                            next.push(from.clone());
                        }
                    }
                }
            }
            frontier = next;
        }
        edges
    }

    /// Every link of the project, by file then source order.
    pub fn all(&self, exists: &mut dyn FnMut(&str) -> bool) -> Vec<Edge> {
        let mut out = Vec::new();
        for from in self.graph.docs.keys() {
            for i in 0..self.resolved.get(from).map_or(0, Vec::len) {
                out.push(self.edge(from, i, 1, exists));
            }
        }
        out
    }

    fn edge(&self, from: &str, i: usize, depth: u8, exists: &mut dyn FnMut(&str) -> bool) -> Edge {
        let record = &self.graph.docs[from].links[i];
        let target = &self.resolved[from][i];
        let (to, to_fragment, external, reason) = match target {
            Target::External(url) => (url.clone(), None, true, None),
            Target::Invalid { path, reason } => {
                let r = if *reason == "outside_root" { Reason::OutsideRoot } else { Reason::InvalidPath };
                (path.clone(), None, false, Some(r))
            }
            Target::Local { path, fragment } => {
                let reason = match self.graph.docs.get(path) {
                    Some(doc) => fragment
                        .as_deref()
                        .filter(|f| !f.is_empty() && !has_anchor(&doc.anchors, f))
                        .map(|_| Reason::MissingAnchor),
                    None if exists(path) => None,
                    None => Some(Reason::MissingFile),
                };
                (path.clone(), fragment.clone(), false, reason)
            }
        };
        Edge {
            from: from.to_owned(),
            from_anchor: record.anchor.clone(),
            to,
            to_fragment,
            kind: record.kind.clone(),
            external,
            reason,
            raw: record.raw.clone(),
            line: record.line,
            depth,
        }
    }
}

/// Whether `fragment` names one of `anchors` (exactly, or after lowercasing as GitHub's slugs
/// are lowercase).
fn has_anchor(anchors: &[String], fragment: &str) -> bool {
    if anchors.iter().any(|a| a == fragment) {
        return true;
    }
    let lower = fragment.to_lowercase();
    anchors.iter().any(|a| a.to_lowercase() == lower)
}

/// The document a local link target names: `path` itself when it is a document, else the
/// document whose name equals it in NFC, else (`x.html` / `x.htm`, mdBook) the document `x.md`
/// in either form; `path` as written when none is.
fn document_named(
    docs: &BTreeMap<String, DocLinks>,
    by_nfc: &HashMap<String, &String>,
    path: String,
) -> String {
    let find = |p: &str| -> Option<String> {
        if docs.contains_key(p) {
            return Some(p.to_owned());
        }
        by_nfc.get(nfc(p).as_ref()).map(|d| (*d).clone())
    };
    if let Some(doc) = find(&path) {
        return doc;
    }
    html_stem(&path).and_then(|stem| find(&format!("{stem}.md"))).unwrap_or(path)
}

/// `x` for `x.html` / `x.htm` (ASCII case-insensitive).
pub fn html_stem(path: &str) -> Option<&str> {
    let lower = path.to_ascii_lowercase();
    if lower.ends_with(".html") {
        Some(&path[..path.len() - 5])
    } else if lower.ends_with(".htm") {
        Some(&path[..path.len() - 4])
    } else {
        None
    }
}
