//! NFKC normalisation that remembers where every normalised byte came from.
//!
//! The analyzer segments the *normalised* text (full-width `ＡＰＩ` → `API`, half-width
//! `ｻｰﾊﾞｰ` → `サーバー`), but tantivy's token offsets, and therefore snippets, must point into
//! the *original* text. [`Normalized`] keeps a compact map from normalised byte offsets back
//! to original ones.
//!
//! The text is cut into *units*: a starter character plus every following character that may
//! combine with it under NFKC (combining marks, the half-width voiced sound marks `ﾞ` `ﾟ`,
//! Hangul vowel/final jamo). Each unit is normalised on its own, which gives exactly the same
//! result as normalising the whole string, because NFKC never composes across such a boundary.
//! Units that NFKC leaves unchanged (nearly all text) are merged into *linear* segments, in
//! which a normalised offset maps to an original offset by a plain shift. A unit that NFKC
//! changes is its own segment: any offset inside it maps to the unit's start (for a token
//! start) or the unit's end (for a token end), so a highlight always covers whole original
//! characters.

use unicode_normalization::char::{canonical_combining_class, decompose_compatible};
use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfkc_quick};

/// Longest unit, in characters, before a boundary is forced (a run of thousands of combining
/// marks must not make one huge unit). Mirrors the stream-safe limit of UAX #15.
const MAX_UNIT_CHARS: usize = 32;

/// One run of normalised text and where it starts in the original text.
#[derive(Clone, Copy, Debug)]
struct Seg {
    /// Byte offset of the segment in the normalised text.
    norm: usize,
    /// Byte offset of the segment in the original text.
    orig: usize,
    /// Normalised bytes equal original bytes one to one.
    linear: bool,
}

/// NFKC-normalised text plus the map back to the original byte offsets.
#[derive(Debug, Default)]
pub(crate) struct Normalized {
    /// The normalised text.
    pub(crate) text: String,
    segs: Vec<Seg>,
    orig_len: usize,
}

impl Normalized {
    /// Replaces the content with the NFKC form of `src`.
    pub(crate) fn normalize(&mut self, src: &str) {
        self.text.clear();
        self.segs.clear();
        self.orig_len = src.len();
        if src.is_empty() {
            return;
        }
        if src.is_ascii() {
            self.text.push_str(src);
            self.segs.push(Seg { norm: 0, orig: 0, linear: true });
            return;
        }
        // Runs of kana, kanji and ASCII (each its own, unchanged unit) are copied in one go;
        // other characters are grouped into units and normalised.
        let mut linear_start = 0; // start of the pending run of fast characters
        let mut unit: Option<(usize, usize)> = None; // start and length of a pending unit
        let mut prev = 0; // start of the previous character
        for (i, c) in src.char_indices() {
            if c.is_ascii() || is_stable_starter(c) {
                if let Some((u, _)) = unit.take() {
                    self.push_unit(&src[u..i], u);
                    linear_start = i;
                }
            } else if starts_unit(c) {
                match unit.take() {
                    Some((u, _)) => self.push_unit(&src[u..i], u),
                    None => self.push_linear(&src[linear_start..i], linear_start),
                }
                unit = Some((i, 1));
            } else {
                // `c` combines with what precedes it
                match unit {
                    Some((u, n)) if n < MAX_UNIT_CHARS => unit = Some((u, n + 1)),
                    Some((u, _)) => {
                        self.push_unit(&src[u..i], u);
                        unit = Some((i, 1));
                    }
                    None => {
                        self.push_linear(&src[linear_start..prev], linear_start);
                        unit = Some((prev, 2));
                    }
                }
            }
            prev = i;
        }
        match unit {
            Some((u, _)) => self.push_unit(&src[u..], u),
            None => self.push_linear(&src[linear_start..], linear_start),
        }
    }

    /// Appends text that NFKC leaves unchanged.
    fn push_linear(&mut self, run: &str, orig: usize) {
        if run.is_empty() {
            return;
        }
        let norm = self.text.len();
        self.text.push_str(run);
        if let Some(last) = self.segs.last()
            && last.linear
            && last.orig + (norm - last.norm) == orig
        {
            return; // continues the previous linear segment
        }
        self.segs.push(Seg { norm, orig, linear: true });
    }

    fn push_unit(&mut self, unit: &str, orig: usize) {
        let norm = self.text.len();
        let mut chars = unit.chars();
        let unchanged = match (chars.next(), chars.next()) {
            (Some(c), None) => {
                c.is_ascii() || is_stable_starter(c) || is_nfkc_quick(std::iter::once(c)) == IsNormalized::Yes
            }
            _ => is_nfkc_quick(unit.chars()) == IsNormalized::Yes,
        };
        if unchanged {
            self.text.push_str(unit);
        } else {
            self.text.extend(unit.nfkc());
            if self.text.len() == norm {
                return; // normalised to nothing: no segment, offsets skip over it
            }
        }
        let linear = unchanged || self.text[norm..] == *unit;
        if linear
            && let Some(last) = self.segs.last()
            && last.linear
            && last.orig + (norm - last.norm) == orig
        {
            return; // continues the previous linear segment
        }
        self.segs.push(Seg { norm, orig, linear });
    }

    /// The original byte offset where the character at normalised offset `n` starts.
    pub(crate) fn orig_start(&self, n: usize) -> usize {
        if n >= self.text.len() {
            return self.orig_len;
        }
        let idx = self.segs.partition_point(|s| s.norm <= n);
        let Some(seg) = idx.checked_sub(1).and_then(|i| self.segs.get(i)) else {
            return 0;
        };
        if seg.linear { seg.orig + (n - seg.norm) } else { seg.orig }
    }

    /// The original byte offset just after the character that ends at normalised offset `n`.
    pub(crate) fn orig_end(&self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        if n >= self.text.len() {
            return self.orig_len;
        }
        let idx = self.segs.partition_point(|s| s.norm < n);
        let Some(i) = idx.checked_sub(1) else {
            return 0;
        };
        let seg = self.segs[i];
        if seg.linear {
            seg.orig + (n - seg.norm)
        } else {
            self.segs.get(i + 1).map_or(self.orig_len, |next| next.orig)
        }
    }
}

/// Whether `c` begins a new normalisation unit, i.e. NFKC cannot combine it with what precedes.
fn starts_unit(c: char) -> bool {
    if c.is_ascii() || is_stable_starter(c) {
        return true;
    }
    let mut first = None;
    decompose_compatible(c, |d| {
        if first.is_none() {
            first = Some(d);
        }
    });
    let first = first.unwrap_or(c);
    canonical_combining_class(first) == 0
        && is_nfkc_quick(std::iter::once(first)) != IsNormalized::Maybe
        && is_nfkc_quick(std::iter::once(c)) != IsNormalized::Maybe
}

/// Kana, common kanji and `、。`: NFKC leaves them unchanged and never combines them with what
/// precedes (a fast path; everything else goes through the Unicode tables).
fn is_stable_starter(c: char) -> bool {
    matches!(c as u32, 0x3001..=0x3002 | 0x3041..=0x3096 | 0x30A1..=0x30FC | 0x4E00..=0x9FFF)
}
