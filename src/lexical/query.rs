//! From user text to a query plan: clauses built from the analyzer's output, never from a
//! query syntax, so no user input can cause a parse error.
//!
//! - `"quoted text"` (also `＂…＂` and `“…”`) is one phrase clause. An unbalanced quote is
//!   ignored.
//! - Every other whitespace-separated word is analyzed on its own and split into clauses:
//!   - consecutive word-run parts and Japanese nouns form one *group*, matched as a phrase
//!     (`形態素解析` → phrase `形態素 解析`; `kb_search` → phrase `kb search` or the whole
//!     identifier `kb_search`; `C#` → the term `c#`);
//!   - an independent verb, adjective or adverb is a clause of its own, matching its surface or
//!     its base form (`住んだ` matches `住む`, `住んでいる`);
//!   - particles, auxiliaries, pronouns and other function words are not clauses (a natural
//!     question such as `日本で梅雨がないのは北海道とどこか` keeps `日本`, `梅雨`, `ない`,
//!     `北海道`), unless the word has nothing else (`です` alone is still searched).
//! - Each part (two characters or longer) of a multi-token group is also a *loose* term: it
//!   adds to the score and lets a chunk that has only part of a compound match, below chunks
//!   that have the compound itself.
//! - A clause of one katakana word the dictionary does not know ([`Clause::infix`]) also matches
//!   the indexed words that hold it, found per search in the snapshot's term dictionaries
//!   (`infix.rs`).

use super::analyzer::{Analyzer, Kind};
use super::chars::is_katakana_word;
use super::pos::Class;

/// Most clauses (strict or loose) a query keeps; the rest of a very long query is ignored.
pub(crate) const MAX_CLAUSES: usize = 64;

/// Longest phrase; a longer run of tokens is cut into phrases of this length.
pub(crate) const MAX_PHRASE: usize = 16;

/// Shortest unknown katakana word (in characters) looked for inside longer indexed words: a
/// shorter piece (`ペッ`) would find unrelated words.
pub(crate) const MIN_INFIX_CHARS: usize = 3;

/// Only this much of a query is read (a longer one is cut at a character boundary).
pub(crate) const MAX_QUERY_BYTES: usize = 8 * 1024;

/// The query-time ranking weights (the `search.*` ranking keys; `docs/design/retrieval.md`,
/// "Lexical ranking", has what each was measured to do). The default is the measured best.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RankWeights {
    /// Weight of a match in the heading path against one in the text (`search.headingWeight`).
    pub heading: f32,
    /// Extra weight of a match in the chunk's own heading (the last part of the heading path),
    /// on top of [`RankWeights::heading`] (`search.ownHeadingWeight`).
    pub own_heading: f32,
    /// Weight of the proximity boost: two consecutive query words found in the text in query
    /// order, at most [`RankWeights::proximity_slop`] extra positions apart (0 turns it off;
    /// `search.proximityWeight`).
    pub proximity: f32,
    /// Extra positions allowed between two consecutive query words (`search.proximitySlop`).
    pub proximity_slop: u32,
    /// How many clauses ahead a clause is paired with for the proximity boost: 1 pairs
    /// neighbours only, 2 also every second clause, … (`search.proximityReach`).
    pub proximity_reach: u32,
    /// Weight of a verb, adjective or adverb clause against a noun or name clause
    /// (`search.contentWordWeight`).
    pub content_word: f32,
    /// Weight of a loose term (a part of a compound the query has whole; `search.looseWeight`).
    pub loose: f32,
    /// Weight of the share of query clauses a second-tier chunk matches against its relative
    /// BM25 score (`search.coordinationWeight`).
    pub coordination: f32,
    /// Weight of the character-gram re-rank of the best [`RankWeights::rerank_depth`]
    /// candidates against their rank (0 turns it off; `search.rerankWeight`).
    pub rerank: f32,
    /// How many of the best candidates the re-rank orders again (`search.rerankDepth`).
    pub rerank_depth: usize,
}

impl Default for RankWeights {
    fn default() -> Self {
        RankWeights {
            heading: 1.0,
            own_heading: 2.0,
            proximity: 1.0,
            proximity_slop: 2,
            proximity_reach: 3,
            content_word: 0.5,
            loose: 1.0,
            coordination: 2.0,
            rerank: 0.2,
            rerank_depth: 10,
        }
    }
}

/// One unit of the query: matches when any of its phrases or terms matches.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Clause {
    /// Phrases of at least two terms, each term with its offset in the phrase.
    pub(crate) phrases: Vec<Vec<(usize, String)>>,
    /// Single terms.
    pub(crate) terms: Vec<String>,
    /// A verb, adjective or adverb (weighted by [`RankWeights::content_word`]), not a noun,
    /// name or identifier.
    pub(crate) content: bool,
    /// The clause is one katakana word the dictionary does not know, so the index may hold it
    /// only inside longer words (`スニペット` in a text that writes `コードスニペット`).
    pub(crate) infix: bool,
    /// The indexed words that hold the term of an [`Clause::infix`] clause inside them, found
    /// in the searched snapshot's term dictionaries (`grow_infixes` in `infix.rs`), each with
    /// its boost in each searched field.
    pub(crate) within: Vec<(String, [f32; super::schema::SEARCHED])>,
}

impl Clause {
    /// A clause of one plain term.
    pub(crate) fn term(text: String) -> Clause {
        Clause { phrases: Vec::new(), terms: vec![text], content: false, infix: false, within: Vec::new() }
    }

    /// The clause's first and last token in query order (for the proximity pairs).
    pub(crate) fn ends(&self) -> Option<(&str, &str)> {
        if let Some(p) = self.phrases.first() {
            return Some((p.first()?.1.as_str(), p.last()?.1.as_str()));
        }
        let t = self.terms.first()?;
        Some((t.as_str(), t.as_str()))
    }
}

/// The analyzed query.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    /// Clauses a chunk must all match to rank in the first tier.
    pub(crate) strict: Vec<Clause>,
    /// Optional terms that only add to the score.
    pub(crate) loose: Vec<String>,
    /// Every term the query can match, for highlighting.
    pub(crate) terms: Vec<String>,
}

enum Piece<'a> {
    Word(&'a str),
    Phrase(&'a str),
}

fn is_quote(c: char) -> bool {
    matches!(c, '"' | '＂' | '“' | '”')
}

/// Splits the query into words and quoted phrases.
fn pieces(query: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut word_start: Option<usize> = None;
    let mut iter = query.char_indices();
    while let Some((i, c)) = iter.next() {
        if is_quote(c) {
            if let Some(ws) = word_start.take() {
                out.push(Piece::Word(&query[ws..i]));
            }
            let inner = i + c.len_utf8();
            if let Some(close) = query[inner..].find(is_quote) {
                out.push(Piece::Phrase(&query[inner..inner + close]));
                let resume = inner + close;
                // skip to the closing quote (inclusive)
                for (j, _) in iter.by_ref() {
                    if j >= resume {
                        break;
                    }
                }
            }
            // an unbalanced quote is dropped
        } else if c.is_whitespace() {
            if let Some(ws) = word_start.take() {
                out.push(Piece::Word(&query[ws..i]));
            }
        } else if word_start.is_none() {
            word_start = Some(i);
        }
    }
    if let Some(ws) = word_start {
        out.push(Piece::Word(&query[ws..]));
    }
    out
}

/// Primary token and alternates at one position.
#[derive(Default)]
struct Slot {
    primary: Option<(String, Class)>,
    /// The primary token is a word the dictionary does not know.
    unknown: bool,
    /// Whole identifiers: text and the number of positions covered.
    wholes: Vec<(String, usize)>,
    bases: Vec<String>,
}

fn slots(analyzer: &Analyzer) -> Vec<Slot> {
    let mut slots: Vec<Slot> = Vec::new();
    for t in analyzer.tokens() {
        let p = t.position;
        let text = analyzer.text(t).to_string();
        if p >= slots.len() {
            slots.resize_with(p + 1, Slot::default);
        }
        let slot = &mut slots[p];
        match t.kind {
            Kind::Primary(class) => {
                slot.primary = Some((text, class));
                slot.unknown = t.unknown;
            }
            Kind::Whole => slot.wholes.push((text, t.position_length)),
            Kind::Base => slot.bases.push(text),
        }
    }
    slots.retain(|s| s.primary.is_some());
    slots
}

/// The clause for one position: its term, plus base forms; a suffixed identifier (`c#`)
/// matches only as a whole.
fn single(slot: &Slot) -> Option<Clause> {
    let (text, _) = slot.primary.as_ref()?;
    if let Some((whole, _)) = slot.wholes.iter().find(|(_, len)| *len == 1) {
        return Some(Clause::term(whole.clone()));
    }
    let mut terms = vec![text.clone()];
    terms.extend(slot.bases.iter().filter(|b| *b != text).cloned());
    let content = slot.primary.as_ref().is_some_and(|(_, c)| *c == Class::Content);
    let infix = slot.unknown && text.chars().nth(MIN_INFIX_CHARS - 1).is_some() && is_katakana_word(text);
    Some(Clause { phrases: Vec::new(), terms, content, infix, within: Vec::new() })
}

/// The clause for several consecutive positions: a phrase, or a whole identifier covering
/// exactly these positions.
fn group(slots: &[Slot]) -> Option<Clause> {
    match slots {
        [] => None,
        [one] => single(one),
        many => {
            let phrase: Vec<(usize, String)> = many
                .iter()
                .enumerate()
                .filter_map(|(i, s)| s.primary.as_ref().map(|(t, _)| (i, t.clone())))
                .collect();
            let terms =
                many[0].wholes.iter().filter(|(_, len)| *len == many.len()).map(|(w, _)| w.clone()).collect();
            Some(Clause { phrases: vec![phrase], terms, content: false, infix: false, within: Vec::new() })
        }
    }
}

/// Builds the plan for `query`. An empty plan (no strict clause) means the query has nothing
/// searchable.
pub(crate) fn plan(query: &str, analyzer: &mut Analyzer) -> Plan {
    let mut cut = query.len().min(MAX_QUERY_BYTES);
    while !query.is_char_boundary(cut) {
        cut -= 1;
    }
    let query = &query[..cut];
    let mut plan = Plan::default();
    // The last word when it was one katakana word, and its clause.
    let mut katakana: Option<(&str, usize)> = None;
    for piece in pieces(query) {
        if plan.strict.len() >= MAX_CLAUSES {
            break;
        }
        let previous = katakana.take();
        match piece {
            Piece::Phrase(text) => {
                analyzer.run(text);
                let slots = slots(analyzer);
                for part in slots.chunks(MAX_PHRASE) {
                    if let Some(c) = group(part) {
                        push_clause(&mut plan, c);
                    }
                }
            }
            Piece::Word(text) => {
                analyzer.run(text);
                let slots = slots(analyzer);
                let before = plan.strict.len();
                let mut start = 0;
                for (i, slot) in slots.iter().enumerate() {
                    let class = slot.primary.as_ref().map_or(Class::Function, |(_, c)| *c);
                    if matches!(class, Class::Word | Class::Noun) {
                        continue;
                    }
                    word_group(&mut plan, &slots[start..i]);
                    if class == Class::Content
                        && let Some(c) = single(slot)
                    {
                        push_clause(&mut plan, c);
                    }
                    start = i + 1;
                }
                word_group(&mut plan, &slots[start..]);
                if plan.strict.len() == before + 1 && is_katakana_clause(&plan.strict[before]) {
                    katakana = Some((text, before));
                    if let Some((first, at)) = previous {
                        join_katakana(&mut plan, analyzer, first, text, [at, before]);
                    }
                }
                if plan.strict.len() == before {
                    // only function words: search them as typed
                    for part in slots.chunks(MAX_PHRASE) {
                        if let Some(c) = group(part) {
                            push_clause(&mut plan, c);
                        }
                    }
                }
            }
        }
    }
    plan.strict.truncate(MAX_CLAUSES);
    plan.loose.truncate(MAX_CLAUSES);
    let mut terms: Vec<String> = Vec::new();
    for c in &plan.strict {
        terms.extend(c.terms.iter().cloned());
        terms.extend(c.phrases.iter().flatten().map(|(_, t)| t.clone()));
    }
    terms.extend(plan.loose.iter().cloned());
    terms.sort();
    terms.dedup();
    plan.terms = terms;
    plan
}

/// Whether `c` is one katakana word (`コード`, `スニペット`).
fn is_katakana_clause(c: &Clause) -> bool {
    c.phrases.is_empty() && matches!(c.terms.as_slice(), [t] if is_katakana_word(t))
}

/// Two katakana words typed with a space between (`コード スニペット`) also match the text
/// that writes them as one word (`コードスニペット`): when lindera takes the two written
/// together as one word, that word joins both clauses (the index side gives spaced text that
/// whole too; `analyzer.rs`).
fn join_katakana(plan: &mut Plan, analyzer: &mut Analyzer, first: &str, second: &str, clauses: [usize; 2]) {
    analyzer.run(&[first, second].concat());
    let slots = slots(analyzer);
    let [one] = slots.as_slice() else { return };
    let Some((whole, _)) = &one.primary else { return };
    for i in clauses {
        if let Some(c) = plan.strict.get_mut(i)
            && !c.terms.contains(whole)
        {
            c.terms.push(whole.clone());
        }
    }
}

/// A group from a whitespace word: the strict clause plus its loose parts.
fn word_group(plan: &mut Plan, slots: &[Slot]) {
    if slots.len() > MAX_PHRASE {
        for part in slots.chunks(MAX_PHRASE) {
            word_group(plan, part);
        }
        return;
    }
    let Some(clause) = group(slots) else { return };
    if slots.len() > 1 {
        for slot in slots {
            let parts = slot.primary.iter().map(|(t, _)| t);
            let inner_wholes = slot.wholes.iter().filter(|(_, len)| *len < slots.len()).map(|(t, _)| t);
            for text in parts.chain(inner_wholes) {
                if text.chars().count() >= 2 && !plan.loose.contains(text) {
                    plan.loose.push(text.clone());
                }
            }
        }
    }
    push_clause(plan, clause);
}

fn push_clause(plan: &mut Plan, clause: Clause) {
    if !plan.strict.contains(&clause) {
        plan.strict.push(clause);
    }
}
