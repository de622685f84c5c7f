//! Small shared text primitives: content hashes and line boundaries.
//!
//! Invariants:
//! - Element hashes are XXH64 with seed 0 over UTF-8 bytes, printed as 16 lowercase hex digits
//!   (`docs/reference/original-server.md` §5.5). Source hashes are SHA-256 over the exact file
//!   bytes, 64 lowercase hex.
//! - Nothing here uses `std::hash`, whose algorithm may change between releases.

use sha2::{Digest, Sha256};

mod language;

pub use language::Language;

/// XXH64 (seed 0) of `bytes` as 16 lowercase hex digits.
pub fn xxh64_hex(bytes: &[u8]) -> String {
    format!("{:016x}", xxhash_rust::xxh64::xxh64(bytes, 0))
}

/// The list-item self hash over its own segments (`docs/reference/original-server.md` §5.5): no
/// segment hashes the empty input, one segment hashes its bytes, more hash `i32le(count)` then, per
/// segment, `i32le(len) ‖ bytes` (the .NET `BinaryWriter` layout).
pub fn segments_hash_hex(segments: &[&str]) -> String {
    match segments {
        [] => xxh64_hex(b""),
        [one] => xxh64_hex(one.as_bytes()),
        many => xxh64_hex(&segments_bytes(many)),
    }
}

/// The byte string hashed for two or more segments.
pub fn segments_bytes(segments: &[&str]) -> Vec<u8> {
    let mut buf = Vec::with_capacity(4 + segments.iter().map(|s| s.len() + 4).sum::<usize>());
    buf.extend_from_slice(&(segments.len() as i32).to_le_bytes());
    for s in segments {
        buf.extend_from_slice(&(s.len() as i32).to_le_bytes());
        buf.extend_from_slice(s.as_bytes());
    }
    buf
}

/// Appends `v` as a LEB128 varint (the number encoding of the binary records in
/// `store::records` and `links::snapshot`).
pub fn put_varint(out: &mut Vec<u8>, mut v: u128) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// SHA-256 of `bytes` as 64 lowercase hex digits.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for b in digest.iter() {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// Incremental SHA-256 for data that arrives in pieces (downloads, large files), printed like
/// [`sha256_hex`].
#[derive(Clone, Default)]
pub struct Sha256Stream(Sha256);

impl Sha256Stream {
    /// Feeds the next piece.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The digest as 64 lowercase hex digits.
    pub fn finish_hex(self) -> String {
        let digest = self.0.finalize();
        let mut out = String::with_capacity(64);
        for b in digest.iter() {
            out.push_str(&format!("{b:02x}"));
        }
        out
    }
}

/// Whether the byte at `i` ends a line: a `\n`, or a lone `\r` (not followed by `\n`), as in
/// CommonMark, so a file saved with classic Mac (CR-only) line endings has lines too.
fn is_line_end(bytes: &[u8], i: usize) -> bool {
    match bytes[i] {
        b'\n' => true,
        b'\r' => bytes.get(i + 1) != Some(&b'\n'),
        _ => false,
    }
}

/// Byte offset of the start of the line that contains `pos` (just after the previous line
/// ending: `\n`, `\r\n` or a lone `\r`).
pub fn line_start(text: &str, pos: usize) -> usize {
    let bytes = text.as_bytes();
    (0..pos.min(bytes.len())).rev().find(|&i| is_line_end(bytes, i)).map_or(0, |i| i + 1)
}

/// Byte offset of the end of the line that contains `pos`, excluding its line ending (`\n`,
/// `\r\n` or a lone `\r`).
pub fn line_content_end(text: &str, pos: usize) -> usize {
    let bytes = text.as_bytes();
    match bytes[pos.min(bytes.len())..].iter().position(|&b| b == b'\n' || b == b'\r') {
        Some(i) => pos + i,
        None => bytes.len(),
    }
}

/// 1-based line number of byte offset `pos` (`\n`, `\r\n` and a lone `\r` each end a line).
pub fn line_number(text: &str, pos: usize) -> usize {
    let bytes = text.as_bytes();
    1 + (0..pos.min(bytes.len())).filter(|&i| is_line_end(bytes, i)).count()
}

/// Line numbers for many offsets of one text: built once, then O(log lines) per lookup.
pub struct LineIndex {
    ends: Vec<usize>,
}

impl LineIndex {
    /// Indexes the line endings of `text` (`\n`, and a lone `\r`).
    pub fn new(text: &str) -> Self {
        let bytes = text.as_bytes();
        LineIndex { ends: (0..bytes.len()).filter(|&i| is_line_end(bytes, i)).collect() }
    }

    /// 1-based line number of byte offset `pos` (same as [`line_number`]).
    pub fn line(&self, pos: usize) -> usize {
        1 + self.ends.partition_point(|&end| end < pos)
    }
}

/// `1234567` as `1,234,567` (counts in messages).
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests;

/// RFC 3339 UTC timestamp with millisecond precision (`2026-11-29T23:43:04.123Z`).
pub fn rfc3339_utc(t: std::time::SystemTime) -> String {
    let d = t.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's civil-from-days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}
