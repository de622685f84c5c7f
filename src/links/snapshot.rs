//! The one stored form of the link graph: `links.bin`, a binary snapshot the writer rewrites
//! after a commit that changed links or anchors and every reader (any process) loads
//! (`docs/design/links.md`, "Where the graph lives").
//!
//! Layout (numbers are LEB128 varints, strings a length then UTF-8 bytes):
//!
//! ```text
//! "LVSLINKS" format(u8 = 1) generation
//! strings: count, then each string once (paths, kinds, destinations, anchors, pointers)
//! documents: count, then per document:
//!   path(string id)
//!   anchors: count, string ids
//!   holders: count, then per holder: tag 0 string id (any anchor as written)
//!                                    tag 1 pointer id, hash (u64 LE; self = subtree)
//!                                    tag 2 pointer id, self hash, subtree hash (u64 LE each)
//!   links: count, then per link: holder index, kind id, destination id, line
//! ```
//!
//! Every string is stored once for the whole graph (a destination such as `../ide/index.md`
//! or a kind is written by thousands of links), and the v2 anchor of a link's holder element
//! (`pointer~self~subtree`, two 16-digit hex hashes) keeps its hashes as 8 bytes each.
//!
//! Invariants:
//!
//! - Decoding never panics and never misreads: a wrong magic, format, truncation, an index out
//!   of range or trailing bytes is an error that asks for a rebuild.
//! - `decode(encode(g)) == g` for every graph (anchors that are not v2 anchors are kept as
//!   written; `tests.rs` checks both kinds).

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use super::{DocLinks, LinkGraph, LinkRecord};
use crate::error::{Error, Result};

/// The first bytes of the file.
const MAGIC: &[u8; 8] = b"LVSLINKS";
/// Version of the layout above.
const FORMAT: u8 = 1;

fn put_varint(out: &mut Vec<u8>, v: u64) {
    crate::text::put_varint(out, u128::from(v));
}

/// Strings by first use, each stored once. Fx hashing: encoding interns every path, anchor,
/// holder, kind and destination of the project (about 270,000 lookups on visualstudio-docs-ja),
/// and the writer's next edit may wait for it (`docs/performance.md`, "links.bin encoding").
struct Strings<'a> {
    list: Vec<&'a str>,
    ids: FxHashMap<&'a str, u64>,
}

impl<'a> Strings<'a> {
    fn id(&mut self, s: &'a str) -> u64 {
        *self.ids.entry(s).or_insert_with(|| {
            self.list.push(s);
            self.list.len() as u64 - 1
        })
    }
}

/// A holder anchor split into its pointer and hashes, when it is a v2 anchor that formats
/// back to the same text.
fn split_v2(anchor: &str) -> Option<(&str, u64, u64)> {
    let mut parts = anchor.rsplitn(3, '~');
    let (subtree, own, pointer) = (parts.next()?, parts.next()?, parts.next()?);
    let hex = |h: &str| {
        (h.len() == 16 && h.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
            .then(|| u64::from_str_radix(h, 16).ok())
            .flatten()
    };
    Some((pointer, hex(own)?, hex(subtree)?))
}

/// The file's bytes.
pub(super) fn encode(graph: &LinkGraph) -> Vec<u8> {
    // Sized so the map seldom grows: visualstudio-docs-ja has 22 anchors and links per
    // document (75,469 and 63,374 in 6,339 files), each string stored once at most.
    let expected = graph.docs.len() * 24;
    let mut strings = Strings {
        list: Vec::with_capacity(expected),
        ids: FxHashMap::with_capacity_and_hasher(expected, Default::default()),
    };
    let mut body = Vec::with_capacity(graph.docs.len() * 256);
    put_varint(&mut body, graph.docs.len() as u64);
    for (path, doc) in &graph.docs {
        put_varint(&mut body, strings.id(path));
        put_varint(&mut body, doc.anchors.len() as u64);
        for a in &doc.anchors {
            put_varint(&mut body, strings.id(a));
        }
        // The links' holders, each once per document.
        let mut holders: Vec<&str> = Vec::new();
        let mut holder_ids: FxHashMap<&str, u64> = FxHashMap::default();
        let refs: Vec<u64> = doc
            .links
            .iter()
            .map(|l| {
                *holder_ids.entry(l.anchor.as_str()).or_insert_with(|| {
                    holders.push(l.anchor.as_str());
                    holders.len() as u64 - 1
                })
            })
            .collect();
        put_varint(&mut body, holders.len() as u64);
        for h in holders {
            match split_v2(h) {
                Some((pointer, own, subtree)) if own == subtree => {
                    body.push(1);
                    put_varint(&mut body, strings.id(pointer));
                    body.extend_from_slice(&own.to_le_bytes());
                }
                Some((pointer, own, subtree)) => {
                    body.push(2);
                    put_varint(&mut body, strings.id(pointer));
                    body.extend_from_slice(&own.to_le_bytes());
                    body.extend_from_slice(&subtree.to_le_bytes());
                }
                None => {
                    body.push(0);
                    put_varint(&mut body, strings.id(h));
                }
            }
        }
        put_varint(&mut body, doc.links.len() as u64);
        for (l, holder) in doc.links.iter().zip(refs) {
            put_varint(&mut body, holder);
            put_varint(&mut body, strings.id(&l.kind));
            put_varint(&mut body, strings.id(&l.raw));
            put_varint(&mut body, l.line as u64);
        }
    }
    let text_bytes: usize = strings.list.iter().map(|s| s.len() + 2).sum();
    let mut out = Vec::with_capacity(MAGIC.len() + 16 + text_bytes + body.len());
    out.extend_from_slice(MAGIC);
    out.push(FORMAT);
    put_varint(&mut out, graph.generation);
    put_varint(&mut out, strings.list.len() as u64);
    for s in &strings.list {
        put_varint(&mut out, s.len() as u64);
        out.extend_from_slice(s.as_bytes());
    }
    out.extend_from_slice(&body);
    out
}

/// What a reader is told about a file it cannot use.
fn unreadable(why: &str) -> Error {
    Error::index_not_ready(format!(
        "The link graph of the index cannot be read ({why}); run kb_reindex with force=true to rebuild it."
    ))
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.0.len() < n {
            return Err(unreadable("truncated"));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn varint(&mut self) -> Result<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.bytes(1)?[0];
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(unreadable("a number is too long"))
    }

    /// A count of items that take at least one byte each.
    fn count(&mut self) -> Result<usize> {
        let n = self.varint()?;
        if n > self.0.len() as u64 {
            return Err(unreadable("truncated"));
        }
        Ok(n as usize)
    }

    fn u64_le(&mut self) -> Result<u64> {
        let b = self.bytes(8)?;
        Ok(u64::from_le_bytes(b.try_into().map_err(|_| unreadable("truncated"))?))
    }
}

/// The generation at the start of `bytes` (the file's first few bytes suffice), if the
/// header is ours.
pub(super) fn generation(bytes: &[u8]) -> Option<u64> {
    let mut r = Reader(bytes.strip_prefix(MAGIC.as_slice())?);
    (r.bytes(1).ok()?[0] == FORMAT).then(|| r.varint().ok()).flatten()
}

/// Reads what [`encode`] wrote.
pub(super) fn decode(bytes: &[u8]) -> Result<LinkGraph> {
    let rest = bytes.strip_prefix(MAGIC.as_slice()).ok_or_else(|| unreadable("not a link graph file"))?;
    let mut r = Reader(rest);
    if r.bytes(1)?[0] != FORMAT {
        return Err(Error::index_not_ready(
            "The link graph was built by another version; run kb_reindex with force=true to rebuild it.",
        ));
    }
    let generation = r.varint()?;
    let n = r.count()?;
    let mut strings: Vec<&str> = Vec::with_capacity(n);
    for _ in 0..n {
        let len = usize::try_from(r.varint()?).map_err(|_| unreadable("a length is too large"))?;
        strings.push(std::str::from_utf8(r.bytes(len)?).map_err(|_| unreadable("text is not UTF-8"))?);
    }
    let string = |r: &mut Reader<'_>| -> Result<&str> {
        let i = usize::try_from(r.varint()?).unwrap_or(usize::MAX);
        strings.get(i).copied().ok_or_else(|| unreadable("a string index is out of range"))
    };
    let mut docs = BTreeMap::new();
    for _ in 0..r.count()? {
        let path = string(&mut r)?.to_owned();
        let n = r.count()?;
        let anchors = (0..n).map(|_| string(&mut r).map(str::to_owned)).collect::<Result<Vec<_>>>()?;
        let n = r.count()?;
        let mut holders = Vec::with_capacity(n);
        for _ in 0..n {
            let holder = match r.bytes(1)?[0] {
                0 => string(&mut r)?.to_owned(),
                1 => {
                    let pointer = string(&mut r)?;
                    let h = r.u64_le()?;
                    format!("{pointer}~{h:016x}~{h:016x}")
                }
                2 => {
                    let pointer = string(&mut r)?;
                    let (own, subtree) = (r.u64_le()?, r.u64_le()?);
                    format!("{pointer}~{own:016x}~{subtree:016x}")
                }
                _ => return Err(unreadable("an unknown anchor tag")),
            };
            holders.push(holder);
        }
        let n = r.count()?;
        let mut links = Vec::with_capacity(n);
        for _ in 0..n {
            let h = usize::try_from(r.varint()?).unwrap_or(usize::MAX);
            let anchor =
                holders.get(h).cloned().ok_or_else(|| unreadable("an anchor index is out of range"))?;
            let kind = string(&mut r)?.to_owned();
            let raw = string(&mut r)?.to_owned();
            let line = usize::try_from(r.varint()?).map_err(|_| unreadable("a line number is too large"))?;
            links.push(LinkRecord { anchor, kind, raw, line });
        }
        if docs.insert(path, DocLinks { anchors, links }).is_some() {
            return Err(unreadable("a document appears twice"));
        }
    }
    if !r.0.is_empty() {
        return Err(unreadable("trailing bytes"));
    }
    Ok(LinkGraph { version: super::LINKS_VERSION.to_owned(), generation, docs })
}
