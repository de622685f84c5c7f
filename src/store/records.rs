//! Persisted records, in a compact little-endian binary layout (LEB128 varints, hashes as raw
//! bytes). The first byte of every record is `RECORD_VERSION`, so a record of another layout is
//! refused, never misread; a changed layout bumps `RECORD_VERSION` and the manifest's schema
//! version (the indexer rebuilds an index of an older format, `docs/design/index-format.md`).

use crate::error::{Error, Result};
use crate::text::put_varint;

/// The record layout version; part of the manifest (`record_version`). Version 1 was JSON with
/// chunk and element records; version 2 keeps one binary record per document.
pub const RECORD_VERSION: u32 = 2;

/// One indexed Markdown file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocumentRecord {
    /// SHA-256 of the exact file bytes of the indexed revision (64 lowercase hex digits; stored
    /// as 32 bytes).
    pub source_hash: String,
    /// File size when indexed (fast path).
    pub len: u64,
    /// Modification time when indexed, nanoseconds since the Unix epoch (fast path).
    pub mtime_ns: u128,
    /// When it was indexed, seconds since the Unix epoch.
    pub indexed_at_s: u64,
    /// Its chunk ids, in order. The chunks themselves live in the lexical index only.
    pub chunk_ids: Vec<u64>,
}

/// `hex` (64 hex digits) as 32 bytes.
pub(crate) fn hash_bytes(hex: &str) -> Result<[u8; 32]> {
    let mut out = [0u8; 32];
    let digits = hex.as_bytes();
    if digits.len() != 64 {
        return Err(Error::internal(format!("'{hex}' is not a SHA-256 hash of 64 hex digits")));
    }
    for (i, pair) in digits.chunks(2).enumerate() {
        let s = std::str::from_utf8(pair).ok().and_then(|p| u8::from_str_radix(p, 16).ok());
        out[i] =
            s.ok_or_else(|| Error::internal(format!("'{hex}' is not a SHA-256 hash of 64 hex digits")))?;
    }
    Ok(out)
}

/// 32 bytes as 64 lowercase hex digits.
pub(crate) fn hash_hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn unreadable(what: &str) -> Error {
    Error::index_not_ready(format!(
        "The index holds a record this version cannot read ({what}); run `reindex --force` to rebuild it."
    ))
}

/// A cursor over a record's bytes; every read fails cleanly on truncated or damaged input.
pub(crate) struct Reader<'a>(pub(crate) &'a [u8]);

impl Reader<'_> {
    pub(crate) fn varint(&mut self) -> Result<u128> {
        let mut v: u128 = 0;
        for shift in (0..128).step_by(7) {
            let (&byte, rest) = self.0.split_first().ok_or_else(|| unreadable("truncated"))?;
            self.0 = rest;
            v |= u128::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(unreadable("a number is too long"))
    }

    pub(crate) fn u64(&mut self) -> Result<u64> {
        u64::try_from(self.varint()?).map_err(|_| unreadable("a number is too large"))
    }

    /// A count of items that take at least one byte each (bounded by the bytes left).
    pub(crate) fn count(&mut self) -> Result<usize> {
        let n = self.u64()?;
        if n > self.0.len() as u64 {
            return Err(unreadable("truncated"));
        }
        Ok(n as usize)
    }

    /// Fails unless every byte was read.
    pub(crate) fn finish(&self) -> Result<()> {
        if self.0.is_empty() { Ok(()) } else { Err(unreadable("trailing bytes")) }
    }

    pub(crate) fn bytes(&mut self, n: usize) -> Result<&[u8]> {
        if self.0.len() < n {
            return Err(unreadable("truncated"));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
}

impl DocumentRecord {
    /// `[version u8][source hash 32 bytes][len][mtime_ns][indexed_at_s][chunk count][first id]
    /// [zigzag deltas of the following ids]`, numbers as LEB128 varints. A document's ids are
    /// usually consecutive, so each costs one byte.
    pub(crate) fn encode(&self) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(48 + self.chunk_ids.len());
        out.push(RECORD_VERSION as u8);
        out.extend_from_slice(&hash_bytes(&self.source_hash)?);
        put_varint(&mut out, u128::from(self.len));
        put_varint(&mut out, self.mtime_ns);
        put_varint(&mut out, u128::from(self.indexed_at_s));
        put_varint(&mut out, self.chunk_ids.len() as u128);
        let mut prev = 0u64;
        for (i, &id) in self.chunk_ids.iter().enumerate() {
            if i == 0 {
                put_varint(&mut out, u128::from(id));
            } else {
                let delta = id.wrapping_sub(prev) as i64;
                put_varint(&mut out, u128::from(((delta << 1) ^ (delta >> 63)) as u64));
            }
            prev = id;
        }
        Ok(out)
    }

    pub(crate) fn decode(bytes: &[u8]) -> Result<DocumentRecord> {
        let mut r = Reader(bytes);
        let version = r.bytes(1)?[0];
        if u32::from(version) != RECORD_VERSION {
            return Err(unreadable(&format!("record version {version}")));
        }
        let source_hash = hash_hex(r.bytes(32)?);
        let len = r.u64()?;
        let mtime_ns = r.varint()?;
        let indexed_at_s = r.u64()?;
        // Each id takes at least one byte: a count beyond the bytes left is damage.
        let n = r.count()?;
        let mut chunk_ids = Vec::with_capacity(n);
        let mut prev = 0u64;
        for i in 0..n {
            let id = if i == 0 {
                r.u64()?
            } else {
                let z = r.u64()?;
                let delta = ((z >> 1) as i64) ^ -((z & 1) as i64);
                prev.wrapping_add(delta as u64)
            };
            chunk_ids.push(id);
            prev = id;
        }
        r.finish()?;
        Ok(DocumentRecord { source_hash, len, mtime_ns, indexed_at_s, chunk_ids })
    }
}
