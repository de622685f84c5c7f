//! The analyzer: NFKC → word scanner / lindera → lowercase + katakana stem → tokens.
//!
//! One pass over a text produces [`AToken`]s whose offsets point into the original text and
//! whose positions are consecutive over the *primary* tokens. Two kinds of alternates share a
//! position with a primary token, like synonyms:
//!
//! - **wholes**: `kb_search` gives `kb`, `search` (positions 0, 1) and `kb_search` at
//!   position 0; `HTTPServer` gives `http`, `server` and `httpserver`; `C#` gives `c` and
//!   `c#`; a split compound noun gives its parts and itself; two katakana words with one
//!   space between them also give the compound (`コード スニペット` → `コードスニペット`);
//! - **base forms** of inflected verbs and adjectives: `住ん` (of `住んでいる`) also gives `住む`.
//!
//! Text is split into *word runs* (letters and digits of alphabetic scripts, joined by the
//! connectors `_ . - : :: ' / @`) handled by a small scanner here, and the rest (Japanese,
//! other CJK, punctuation), which goes to lindera with IPADIC in normal mode; a long noun is
//! then split on its own in decompose ("search") mode into parts plus the whole compound
//! (`関西国際空港` → `関西 国際 空港` + `関西国際空港`).
//!
//! Token texts live in one arena string per analyzer (no allocation per token); tantivy's
//! token stream copies each into one reused [`Token`].

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, Ordering};

use lindera::mode::{Mode, Penalty};
use lindera::segmenter::Segmenter;
use lindera_dictionary::dictionary::DetailFields;
use lindera_dictionary::viterbi::Lattice;

use super::chars::{is_alnum, is_connector, is_kanji, is_katakana_word, is_mark, is_word_char};
use super::normalize::Normalized;
use super::pos::{Class, class_code, class_of, classify};
use crate::error::{Error, Result};

/// Tokens longer than this (in bytes) are dropped: they are never typed in a query and only
/// bloat the term dictionary (base64 blobs, minified code).
pub(crate) const MAX_TOKEN_BYTES: usize = 255;

/// Word-run parts of at most this many letters may carry a `#`/`++` suffix (`C#`, `F#`, `C++`).
const MAX_SUFFIXED_LEN: usize = 3;

/// The role of a token at its position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The token that owns the position.
    Primary(Class),
    /// A whole identifier spanning `token.position_length` primary positions.
    Whole,
    /// The dictionary base form of the primary token at the same position.
    Base,
}

/// One analyzed token. Offsets are byte offsets into the original text; the text is in the
/// analyzer's arena ([`Analyzer::text`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct AToken {
    pub(crate) offset_from: usize,
    pub(crate) offset_to: usize,
    pub(crate) position: usize,
    /// Number of primary positions covered (more than 1 only for a whole identifier/compound).
    pub(crate) position_length: usize,
    pub(crate) kind: Kind,
    /// A primary token lindera found no dictionary word for (`スニペット`; IPADIC is from
    /// 2007 and lacks most technical loanwords).
    pub(crate) unknown: bool,
    text: (usize, usize),
}

/// The two segmenters over the one shared dictionary.
struct Segmenters {
    /// Normal mode: the sentence-level segmentation (context-stable dictionary words).
    normal: Segmenter,
    /// Decompose (search) mode: splits a long compound taken on its own.
    decompose: Segmenter,
    /// Per system-dictionary word: its [`Class`] and whether its base form differs from its
    /// surface, filled on first sight (reading an entry's details is a large part of the
    /// analysis cost; word frequencies are Zipfian). 0 = not yet known, else
    /// `1 + 2 * class + has_base`.
    word_info: Vec<AtomicU8>,
}

static SEGMENTERS: OnceLock<std::result::Result<Segmenters, String>> = OnceLock::new();

/// The shared lindera segmenters (IPADIC), created on first use.
fn segmenters() -> std::result::Result<&'static Segmenters, &'static str> {
    SEGMENTERS
        .get_or_init(|| {
            let dict = super::dictionary::load().map_err(|e| e.to_string())?;
            let words = dict.prefix_dictionary.words_idx_data.len() / 4;
            Ok(Segmenters {
                normal: Segmenter::new(Mode::Normal, dict.clone(), None),
                decompose: Segmenter::new(Mode::Decompose(Penalty::default()), dict, None),
                word_info: std::iter::repeat_with(|| AtomicU8::new(0)).take(words).collect(),
            })
        })
        .as_ref()
        .map_err(String::as_str)
}

/// Loads the dictionary now, so a broken build fails with a clear error instead of an index
/// without Japanese tokens.
pub(crate) fn ensure_ready() -> Result<()> {
    segmenters().map(|_| ()).map_err(|e| {
        Error::internal(format!(
            "Loading the embedded Japanese dictionary (IPADIC) failed: {e}; rebuild the binary."
        ))
    })
}

/// Distinct compounds an analyzer remembers the decomposition of; the cache is emptied when full
/// (a corpus has far fewer distinct long nouns than this, so it rarely is).
const MAX_CACHED_COMPOUNDS: usize = 65_536;

/// The decompose-mode split of one compound, as [`emit_compound`] emits it: each part's byte
/// range in the compound and its class; `None` when decompose mode keeps it whole.
type Decomposition = Option<Box<[(u32, u32, Class)]>>;

/// Reusable analysis state: normalisation buffers, the Viterbi lattice and the output.
pub(crate) struct Analyzer {
    norm: Normalized,
    lattice: Lattice,
    parts: Vec<(usize, usize)>,
    /// Decompositions of the long nouns seen so far (a second lindera pass per occurrence cost
    /// as much as a fifth of the analysis; the same compounds recur through a corpus).
    compounds: HashMap<Box<str>, Decomposition>,
    /// The output of the last [`Analyzer::run`].
    tokens: Vec<AToken>,
    /// The token texts, back to back.
    arena: String,
}

impl Analyzer {
    /// An analyzer with empty buffers (the dictionary is shared, not copied).
    pub(crate) fn new() -> Self {
        Analyzer {
            norm: Normalized::default(),
            lattice: Lattice::default(),
            parts: Vec::new(),
            compounds: HashMap::new(),
            tokens: Vec::new(),
            arena: String::new(),
        }
    }

    /// The tokens of the last [`Analyzer::run`].
    pub(crate) fn tokens(&self) -> &[AToken] {
        &self.tokens
    }

    /// The text of a token of the last [`Analyzer::run`].
    pub(crate) fn text(&self, t: &AToken) -> &str {
        self.arena.get(t.text.0..t.text.1).unwrap_or_default()
    }

    /// Analyzes `text`; the result is in [`Analyzer::tokens`].
    pub(crate) fn run(&mut self, text: &str) {
        self.tokens.clear();
        self.arena.clear();
        self.norm.normalize(text);
        let Analyzer { norm, lattice, parts, compounds, tokens, arena } = self;
        let mut emitter = Emitter { norm, tokens, arena, position: 0 };
        let s = emitter.norm.text.as_str();
        let mut other_start = 0;
        let mut i = 0;
        while let Some(c) = s[i..].chars().next() {
            if is_word_char(c) {
                if other_start < i {
                    segment_other(&mut emitter, lattice, compounds, other_start, i);
                }
                i = scan_word_run(&mut emitter, parts, i);
                other_start = i;
            } else {
                i += c.len_utf8();
            }
        }
        if other_start < s.len() {
            segment_other(&mut emitter, lattice, compounds, other_start, s.len());
        }
    }
}

impl Default for Analyzer {
    fn default() -> Self {
        Self::new()
    }
}

thread_local! {
    /// Per-thread analyzer for queries and snippets (the dictionary itself is shared).
    static ANALYZER: std::cell::RefCell<Analyzer> = std::cell::RefCell::new(Analyzer::new());
}

/// Runs `f` with this thread's analyzer (a fresh one if it is already in use).
pub(crate) fn with_analyzer<T>(f: impl FnOnce(&mut Analyzer) -> T) -> T {
    ANALYZER.with(|cell| match cell.try_borrow_mut() {
        Ok(mut a) => f(&mut a),
        Err(_) => f(&mut Analyzer::new()),
    })
}

/// Appends tokens, mapping normalised offsets back to the original text.
struct Emitter<'a> {
    norm: &'a Normalized,
    tokens: &'a mut Vec<AToken>,
    arena: &'a mut String,
    position: usize,
}

impl Emitter<'_> {
    /// Emits a token for normalised bytes `from..to` whose text is `source` lowercased and
    /// stemmed ([`final_text_into`]).
    fn push(
        &mut self,
        source: &str,
        from: usize,
        to: usize,
        position: usize,
        position_length: usize,
        kind: Kind,
    ) {
        let start = self.arena.len();
        final_text_into(source, self.arena);
        self.tokens.push(AToken {
            offset_from: self.norm.orig_start(from),
            offset_to: self.norm.orig_end(to),
            position,
            position_length,
            kind,
            unknown: false,
            text: (start, self.arena.len()),
        });
    }

    /// Drops the last emitted token if its text equals the one before.
    fn pop_if_repeated(&mut self) {
        let n = self.tokens.len();
        if n >= 2 {
            let (a, b) = (self.tokens[n - 2].text, self.tokens[n - 1].text);
            if self.arena.get(a.0..a.1) == self.arena.get(b.0..b.1) {
                self.arena.truncate(b.0);
                self.tokens.pop();
            }
        }
    }
}

/// Scans the word run starting at normalised byte `start` (a word char), emits its parts and,
/// for multi-part or suffixed runs, the whole identifier. Returns the end of the run.
fn scan_word_run(em: &mut Emitter<'_>, parts: &mut Vec<(usize, usize)>, start: usize) -> usize {
    let s = em.norm.text.as_str();
    parts.clear();
    let mut seg_start = start;
    let mut end;
    loop {
        // letters, digits and the marks attached to them
        let mut j = seg_start;
        while let Some(c) = s[j..].chars().next() {
            if is_word_char(c) || (j > seg_start && is_mark(c)) {
                j += c.len_utf8();
            } else {
                break;
            }
        }
        split_parts(s, seg_start, j, parts);
        end = j;
        // a connector continues the run only when a word char follows it
        let Some(c) = s[j..].chars().next().filter(|&c| is_connector(c)) else { break };
        let mut after = j + c.len_utf8();
        if c == ':' && s[after..].starts_with(':') {
            after += 1;
        }
        match s[after..].chars().next() {
            Some(n) if is_word_char(n) => seg_start = after,
            _ => break,
        }
    }
    // `C#`, `F#`, `C++`: a short single-part run with a language suffix
    let mut whole_end = end;
    if let [(a, b)] = parts.as_slice()
        && s[*a..*b].chars().count() <= MAX_SUFFIXED_LEN
        && s[*a..*b].chars().all(char::is_alphabetic)
    {
        let rest = &s[end..];
        let suffix = if rest.starts_with("++") {
            2
        } else if rest.starts_with('#') {
            1
        } else {
            0
        };
        if suffix > 0 && !rest[suffix..].chars().next().is_some_and(is_word_char) {
            whole_end = end + suffix;
        }
    }

    let first_position = em.position;
    for (k, &(a, b)) in parts.iter().enumerate() {
        if b - a > MAX_TOKEN_BYTES {
            continue;
        }
        let position = em.position;
        em.push(&s[a..b], a, b, position, 1, Kind::Primary(Class::Word));
        em.position += 1;
        if k == 0 && (parts.len() > 1 || whole_end > end) && whole_end - start <= MAX_TOKEN_BYTES {
            // the whole run, at the position of its first part
            em.push(&s[start..whole_end], start, whole_end, first_position, parts.len(), Kind::Whole);
        }
    }
    whole_end
}

/// Splits the connector-free word `s[a..b]` at case changes (`fooBar`, `HTTPServer`) and at
/// letter/digit changes (`utf8`, `x64`).
fn split_parts(s: &str, a: usize, b: usize, parts: &mut Vec<(usize, usize)>) {
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum K {
        Upper,
        Lower,
        Digit,
    }
    fn kind(c: char) -> K {
        if c.is_numeric() {
            K::Digit
        } else if c.is_uppercase() {
            K::Upper
        } else {
            K::Lower
        }
    }
    let word = &s[a..b];
    let mut part_start = a;
    let mut prev: Option<K> = None;
    let mut iter = word.char_indices().peekable();
    while let Some((i, c)) = iter.next() {
        if is_mark(c) {
            continue;
        }
        let k = kind(c);
        if let Some(p) = prev {
            let next_lower = iter.peek().is_some_and(|&(_, n)| !is_mark(n) && kind(n) == K::Lower);
            let split = match (p, k) {
                (K::Lower, K::Upper) => true,
                (K::Upper, K::Upper) => next_lower,
                (K::Digit, K::Upper | K::Lower) | (K::Upper | K::Lower, K::Digit) => true,
                _ => false,
            };
            if split {
                parts.push((part_start, a + i));
                part_start = a + i;
            }
        }
        prev = Some(k);
    }
    if part_start < b {
        parts.push((part_start, b));
    }
}

/// A dictionary token's part of speech (fields 0 and 1) and base form (field 6).
fn details<'d>(t: &lindera::token::Token<'d>) -> (&'d str, &'d str, &'d str) {
    let id = t.word_id.id() as usize;
    let mut details = if t.word_id.is_unknown() {
        t.dictionary.unknown_word_details_iter(id)
    } else if t.word_id.is_system() {
        t.dictionary.word_details_iter(id)
    } else {
        DetailFields::unk()
    };
    let pos = details.next().unwrap_or("");
    let sub = details.next().unwrap_or("");
    let base = details.nth(4).unwrap_or("*");
    (pos, sub, base)
}

/// Whether a noun is long enough for decompose mode to consider splitting it: more than two
/// kanji, or more than seven characters (lindera's default decompose penalties).
fn is_compound_candidate(surface: &str) -> bool {
    let n = surface.chars().count();
    (n > 2 && surface.chars().all(is_kanji)) || n > 7
}

/// Whether two katakana words with `between` between them are written as one compound: one
/// space (Microsoft's style writes `コード スニペット`, `ソリューション エクスプローラー`; an
/// ideographic space is a space after NFKC). A middle dot needs nothing: lindera takes
/// `ソリューション・エクスプローラー` as one word.
fn is_katakana_joint(between: &str) -> bool {
    between == " "
}

/// Segments the non-word text `norm[a..b]` with lindera and emits its tokens.
///
/// The text is segmented in normal mode, which keeps dictionary words whole whatever follows
/// them. A long noun is then segmented again *on its own* in decompose mode; if that splits
/// it, the parts become the primary tokens and the compound an alternate spanning them, like
/// an identifier (`関西国際空港` → `関西`+`関西国際空港`, `国際`, `空港`). Splitting the word
/// on its own, not in context, keeps the parts the same wherever the word appears.
fn segment_other(
    em: &mut Emitter<'_>,
    lattice: &mut Lattice,
    compounds: &mut HashMap<Box<str>, Decomposition>,
    a: usize,
    b: usize,
) {
    let s = &em.norm.text[a..b];
    if !s.chars().any(is_alnum) {
        return;
    }
    let Ok(segs) = segmenters() else { return };
    let Ok(tokens) = segs.normal.segment_with_lattice(Cow::Borrowed(s), lattice) else { return };
    // The last primary token when it was one katakana word: (from, to, position).
    let mut katakana: Option<(usize, usize, usize)> = None;
    for t in tokens {
        let (from, to) = match s.get(t.byte_start..t.byte_end) {
            Some(surface) if surface == t.surface => (t.byte_start, t.byte_end),
            _ => continue, // offsets disagree with the surface: never seen, but never panic
        };
        let surface = &s[from..to];
        if surface.len() > MAX_TOKEN_BYTES || !surface.chars().any(is_alnum) {
            continue;
        }
        let (class, has_base) = word_info(segs, &t, surface);
        if class == Class::Noun
            && is_compound_candidate(surface)
            && emit_compound(em, lattice, compounds, surface, a + from)
        {
            katakana = None;
            continue;
        }
        let position = em.position;
        let is_katakana_word = class == Class::Noun && is_katakana_word(surface);
        if is_katakana_word
            && let Some((pf, pt, pp)) = katakana
            && pp + 1 == position
            && s.get(pt..from).is_some_and(is_katakana_joint)
        {
            // `コード スニペット` also as `コードスニペット`, as the query writes it unspaced
            let whole = [&s[pf..pt], surface].concat();
            em.push(&whole, a + pf, a + to, pp, 2, Kind::Whole);
        }
        katakana = is_katakana_word.then_some((from, to, position));
        em.push(surface, a + from, a + to, position, 1, Kind::Primary(class));
        if t.word_id.is_unknown()
            && let Some(last) = em.tokens.last_mut()
        {
            last.unknown = true;
        }
        if has_base {
            let base = details(&t).2;
            if base.len() <= MAX_TOKEN_BYTES {
                em.push(base, a + from, a + to, position, 1, Kind::Base);
                em.pop_if_repeated(); // the same as the surface once lowercased and stemmed
            }
        }
        em.position += 1;
    }
}

/// The [`Class`] of a lindera token and whether it carries a base form that differs from its
/// surface, cached per system-dictionary word.
fn word_info(segs: &Segmenters, t: &lindera::token::Token<'_>, surface: &str) -> (Class, bool) {
    let slot = (!t.word_id.is_unknown() && t.word_id.is_system())
        .then(|| segs.word_info.get(t.word_id.id() as usize))
        .flatten();
    if let Some(slot) = slot {
        let code = slot.load(Ordering::Relaxed);
        if let Some(c) = code.checked_sub(1) {
            return (class_of(c >> 1), c & 1 == 1);
        }
    }
    let (pos, sub, base) = details(t);
    let class = classify(pos, sub, surface, base);
    let has_base = class == Class::Content && base != "*" && base != surface;
    if let Some(slot) = slot {
        slot.store(1 + (class_code(class) << 1) + u8::from(has_base), Ordering::Relaxed);
    }
    (class, has_base)
}

/// Emits the compound `surface` (at normalised offset `at`) as its decompose-mode parts plus
/// the whole. Returns false, emitting nothing, when decompose mode keeps it in one piece.
/// The split of each distinct compound is computed once per analyzer ([`decompose`]).
fn emit_compound(
    em: &mut Emitter<'_>,
    lattice: &mut Lattice,
    compounds: &mut HashMap<Box<str>, Decomposition>,
    surface: &str,
    at: usize,
) -> bool {
    let parts = match compounds.get(surface) {
        Some(parts) => parts,
        None => {
            if compounds.len() >= MAX_CACHED_COMPOUNDS {
                compounds.clear();
            }
            let parts = decompose(lattice, surface);
            compounds.entry(surface.into()).or_insert(parts)
        }
    };
    let Some(parts) = parts else { return false };
    let first = em.position;
    for (k, &(from, to, class)) in parts.iter().enumerate() {
        let (from, to) = (from as usize, to as usize);
        let position = em.position;
        em.push(&surface[from..to], at + from, at + to, position, 1, Kind::Primary(class));
        if k == 0 {
            em.push(surface, at, at + surface.len(), first, parts.len(), Kind::Whole);
        }
        em.position += 1;
    }
    true
}

/// The decompose-mode split of `surface` taken on its own: the parts that hold a letter or
/// digit, each a noun unless the dictionary calls it a function word; `None` when fewer than two
/// such parts come out.
fn decompose(lattice: &mut Lattice, surface: &str) -> Decomposition {
    let segs = segmenters().ok()?;
    let parts = segs.decompose.segment_with_lattice(Cow::Borrowed(surface), lattice).ok()?;
    let parts: Vec<(u32, u32, Class)> = parts
        .iter()
        .filter_map(|p| {
            let part = surface.get(p.byte_start..p.byte_end).filter(|x| x.chars().any(is_alnum))?;
            let class = match word_info(segs, p, part).0 {
                Class::Function => Class::Function,
                _ => Class::Noun,
            };
            Some((u32::try_from(p.byte_start).ok()?, u32::try_from(p.byte_end).ok()?, class))
        })
        .collect();
    (parts.len() >= 2).then(|| parts.into_boxed_slice())
}

/// Appends `s` lowercased, with the katakana prolonged-sound stem, to `out`.
pub(crate) fn final_text_into(s: &str, out: &mut String) {
    let start = out.len();
    if s.is_ascii() {
        out.push_str(s);
        out[start..].make_ascii_lowercase();
        return;
    }
    // CJK and kana have no case: skip the Unicode lookup for them
    let cased = |c: char| !(0x3000..=0x9FFF).contains(&(c as u32)) && c.is_uppercase();
    if s.chars().any(cased) {
        for c in s.chars() {
            if cased(c) {
                out.extend(c.to_lowercase());
            } else {
                out.push(c);
            }
        }
    } else {
        out.push_str(s);
    }
    stem_katakana(out, start);
}

/// Strips one trailing `ー` from `s[start..]` when that is all katakana and at least four
/// characters (Lucene's `JapaneseKatakanaStemFilter`), so `サーバー` and `サーバ` meet.
fn stem_katakana(s: &mut String, start: usize) {
    let token = &s[start..];
    if token.ends_with('ー')
        && token.chars().count() >= 4
        && token.chars().all(|c| ('\u{30A0}'..='\u{30FF}').contains(&c))
    {
        s.pop();
    }
}
