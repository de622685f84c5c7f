//! Unit tests of the text helpers: line arithmetic and RFC 3339 timestamps.

use super::*;

#[test]
fn line_helpers() {
    let t = "ab\r\ncd\nef";
    assert_eq!(line_start(t, 5), 4);
    assert_eq!(line_content_end(t, 0), 2);
    assert_eq!(line_content_end(t, 4), 6);
    assert_eq!(line_content_end(t, 8), 9);
    assert_eq!(line_number(t, 8), 3);
}

#[test]
fn rfc3339() {
    use std::time::{Duration, UNIX_EPOCH};
    assert_eq!(rfc3339_utc(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
    assert_eq!(
        rfc3339_utc(UNIX_EPOCH + Duration::from_millis(1_795_995_784_123)),
        "2026-11-29T23:43:04.123Z"
    );
    assert_eq!(rfc3339_utc(UNIX_EPOCH + Duration::from_secs(951_782_400)), "2000-02-29T00:00:00.000Z");
}

#[test]
fn line_index_agrees_with_line_number() {
    let t = "a\nbb\r\n\nccc";
    let idx = LineIndex::new(t);
    for pos in 0..=t.len() {
        assert_eq!(idx.line(pos), line_number(t, pos), "{pos}");
    }
}

#[test]
fn a_lone_cr_ends_a_line_as_in_commonmark() {
    // Classic Mac line endings: `a`, `# H`, `text`, then an empty last line.
    let t = "a\r# H\rtext\r";
    assert_eq!(line_number(t, 2), 2);
    assert_eq!(line_number(t, 6), 3);
    assert_eq!(line_start(t, 4), 2);
    assert_eq!(line_content_end(t, 2), 5);
    // Mixed: a CRLF is one ending, not two.
    let m = "a\r\nb\rc\nd";
    assert_eq!(line_number(m, 3), 2);
    assert_eq!(line_number(m, 5), 3);
    assert_eq!(line_number(m, 7), 4);
    assert_eq!(line_content_end(m, 0), 1);
    for text in [t, m] {
        let idx = LineIndex::new(text);
        for pos in 0..=text.len() {
            assert_eq!(idx.line(pos), line_number(text, pos), "{text:?} {pos}");
        }
    }
}

#[test]
fn thousands_separates_every_three_digits() {
    assert_eq!(thousands(0), "0");
    assert_eq!(thousands(999), "999");
    assert_eq!(thousands(6339), "6,339");
    assert_eq!(thousands(1_234_567), "1,234,567");
}
