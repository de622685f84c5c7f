//! Lexical search: a tantivy BM25 index of chunks with a Japanese-aware analyzer.
//!
//! This module owns the `lexical/` folder of the storage directory and is the only place that
//! knows tantivy and lindera; neither type appears in its public API.
//!
//! # What it owns
//!
//! - **The analyzer** ([`analyze`], [`ANALYZER_NAME`], [`ANALYZER_VERSION`]), used for the
//!   indexed text, the query and snippets alike:
//!   1. NFKC (`ＡＰＩ` → `API`, `ｻｰﾊﾞｰ` → `サーバー`), remembering where every normalised byte
//!      came from, so token offsets (and snippet highlights) point into the original text;
//!   2. alphabetic words and code identifiers are split by a small scanner: at the connectors
//!      `_ . - : :: ' / @`, at camelCase changes and at letter/digit changes. The parts take
//!      consecutive positions and the whole identifier is added at the position of its first
//!      part, so `kb_search` is found by `kb_search`, `kb`, `search` and the phrase
//!      `kb search`; `Array.prototype.map` by `prototype`; `HTTPServer` by `http`, `server` and
//!      `httpserver`; `Vec<T>` by `vec`; `C#`, `F#`, `C++` are kept whole as well;
//!   3. everything else goes to lindera with the embedded IPADIC in *normal* mode, which keeps
//!      dictionary words whole whatever follows them, so word boundaries hold (`京都` does not
//!      match `東京都庁`, which is `東京 都庁`; `会議` matches `会議室`, which is `会議 室`).
//!      A long noun (three or more kanji, or more than seven characters) is then split *on its
//!      own* in decompose mode (Lucene's "search" mode penalties); when that splits it, the
//!      parts become the tokens and the whole compound is added at the first part's position
//!      like a whole identifier (`関西国際空港` → `関西`+`関西国際空港`, `国際`, `空港`), so a
//!      part finds the compound. Splitting the word alone, not in context, gives the same
//!      parts wherever it appears (in-context decompose mode split `日本共産党の` and
//!      `日本共産党が` differently). Two katakana words with one space between them (the
//!      style of Microsoft's Japanese docs: `コード スニペット`) also give the compound as a
//!      whole at the first word's position, so the query `コードスニペット`, one word to
//!      lindera, finds them; the words stay words of their own;
//!   4. lowercase, then the katakana stem: a trailing `ー` is removed from all-katakana tokens
//!      of four or more characters (Lucene's `JapaneseKatakanaStemFilter`), so `サーバー`,
//!      `サーバ` and `ｻｰﾊﾞｰ` are one term;
//!   5. tokens without a letter or digit are dropped (positions stay consecutive), as are
//!      tokens longer than 255 bytes;
//!   6. independent verbs and adjectives also get their dictionary **base form** at the same
//!      position (`住んでいる` → `住ん`+`住む`, `で`, `いる`), so `住む` finds `住んでいる`.
//!      Only these get base forms: particles and auxiliaries would turn `で` into `だ`, and
//!      light verbs (`する`, `いる`, `ある`, `なる`, `いう`, …) mean nothing as a term.
//! - **The index** ([`LexicalIndex`], [`LexicalWriter`]): fields `chunk_id` (u64, indexed,
//!   stored, fast), `path` (raw string, indexed, stored, fast), `text` and `heading_path`
//!   (analyzed with positions, stored), and `anchor`, `source_hash` (stored only, so a hit can
//!   be answered from the index alone while another process re-indexes), and `meta` (raw
//!   terms, indexed only: the file's front-matter fields, [`meta_terms`]). Every commit stores
//!   the caller's generation number as its payload ([`LexicalIndex::generation`]).
//! - **Search** ([`LexicalIndex::search`]) and **snippets** in the contract's FTS5 shape.
//! - **Metadata filters** ([`MetaFilter`], [`LexicalIndex::paths_matching`]): front-matter
//!   conditions as one tantivy query over `meta`, giving the files a search may return.
//!
//! # Invariants
//!
//! - Index and query use the same analyzer, registered under [`ANALYZER_NAME`]; any change to
//!   its output bumps [`ANALYZER_VERSION`], which the manifest records, forcing a rebuild.
//! - User query text is never parsed as a query language: clauses are built from analyzer
//!   output, so no input can fail to parse. A query with no letters or digits is
//!   `INVALID_ARGUMENT`.
//! - The scope filter is applied while collecting, before `top_k`.
//! - Nothing here panics on any input text or query.
//! - The dictionary is loaded once per process and shared; tokenizers are cheap clones.
//!
//! # Query semantics
//!
//! Each quoted phrase is one clause; each other whitespace-separated word becomes one or more
//! clauses: runs of nouns and identifier parts are phrases (`形態素解析` → `形態素 解析`,
//! `kb_search` → `kb search` or the whole `kb_search`), verbs, adjectives and adverbs are
//! terms (surface or base form), and particles, auxiliaries, pronouns, light verbs and
//! question words (`何`, `いつ`, `どこ`, …) are dropped unless nothing else is left. Japanese
//! questions typed without spaces therefore work (`日本で梅雨がないのは北海道とどこか` →
//! `日本`, `梅雨`, `北海道`). Parts of multi-token clauses are also optional terms, so a chunk
//! with only `解析` is still found, below chunks with `形態素解析`. A katakana word of three or
//! more characters that the dictionary does not know also matches the indexed katakana words
//! that hold it, scaled down (`スニペット` finds a text writing `コードスニペット` unspaced,
//! which lindera keeps as one word; `infix.rs`); a known word does not (`ペット` stays out of
//! `スニペット`, as `京都` stays out of `東京都庁`).
//!
//! Ranking: chunks that match every clause come first, by BM25 over `text` and `heading_path`
//! (weights 1:1). The others follow, ordered by how many clauses they match, then BM25 (the
//! best 50 by BM25 are re-ranked this way). So a query never returns nothing just because one
//! word is missing, and `会議 予算` lists chunks with both words before chunks with one.
//! Last, the best few (`search.rerankDepth`) are ordered again within their tier by which of the
//! query's characters and character pairs they hold, each weighted by how few of those
//! candidates hold it (`rerank.rs`; `docs/design/retrieval.md`, "Character-gram re-rank").
//!
//! # Indexing throughput
//!
//! Tokenizing is the expensive part. tantivy tokenizes inside its indexing threads, and the
//! writer uses two of them, so a caller that simply calls [`LexicalWriter::add`] in a loop from
//! one thread keeps two cores busy (the writer is also `Sync` for callers that want several
//! producers).

mod analyzer;
mod chars;
mod clauses;
mod collector;
pub mod dictionary;
mod directory;
mod errors;
mod freshness;
mod index;
mod infix;
mod meta;
mod normalize;
mod pos;
mod query;
mod rank;
mod rerank;
mod schema;
mod segments;
mod snippet;
mod tokenizer;
mod view;
mod writer;

#[cfg(test)]
mod tests;

pub use errors::is_other_schema;
pub use index::LexicalIndex;
pub use meta::{MAX_CONDITIONS, MetaCondition, MetaFilter, MetaOp, date_of, meta_terms, normalize_meta};
pub use query::RankWeights;
pub use view::LexicalView;
pub use writer::{LexicalWriter, WriterSize};

/// The name under which the analyzer is registered in tantivy (the schema refers to it).
pub const ANALYZER_NAME: &str = "lvs_ja";

/// Version of the analyzer's output; stored in the manifest. Bump on any change that alters
/// tokens: an index of an older analyzer is rebuilt from the Markdown like one of an older
/// format (one log sentence, no `--force`). `2`: two katakana words with a space between them
/// also give the compound as one whole token (`コード スニペット` → `コードスニペット`).
pub const ANALYZER_VERSION: &str = "2";

/// The scope filter of [`LexicalIndex::search`]: given a chunk's path, whether it is in scope.
pub type ScopeFilter<'a> = dyn Fn(&str) -> bool + Sync + 'a;

/// A chunk to index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LexicalDoc {
    /// The chunk's id (unique in the project).
    pub chunk_id: u64,
    /// The file's root-relative path, as stored in the metadata store.
    pub path: String,
    /// The chunk's heading path (`"Intro > Setup"`), searchable.
    pub heading_path: String,
    /// The chunk's text, searchable and the source of snippets.
    pub text: String,
    /// The v2 anchor of the chunk's first element (stored, returned with hits, not searched).
    pub anchor: String,
    /// The source hash of the file revision the chunk came from (stored, returned with hits).
    pub source_hash: String,
    /// The file's front-matter terms ([`meta_terms`]; indexed for metadata filters, not
    /// stored, so empty in [`LexicalIndex::stored_docs`]). Shared by the file's chunks.
    pub meta: std::sync::Arc<[String]>,
}

/// One search hit.
#[derive(Clone, Debug, PartialEq)]
pub struct LexicalHit {
    /// The chunk's id.
    pub chunk_id: u64,
    /// The chunk's file path.
    pub path: String,
    /// The chunk's heading path, as indexed.
    pub heading_path: String,
    /// The anchor stored with the chunk ([`LexicalDoc::anchor`]).
    pub anchor: String,
    /// The source hash stored with the chunk ([`LexicalDoc::source_hash`]).
    pub source_hash: String,
    /// BM25 score within the hit's tier (chunks with all query clauses, then the others);
    /// for diagnostics only: the order of the hits is the ranking.
    pub score: f32,
    /// Up to 16 tokens of the chunk text around the best match, matches in `[`…`]`, cut-offs
    /// marked `...` (the contract's FTS5 snippet shape).
    pub snippet: String,
}

pub use snippet::{ORIGINAL_WINDOW, snippets_of};

/// The analyzer's tokens for `text`, in position order (alternates such as a whole identifier
/// or a base form follow the token whose position they share). For tests and debugging.
pub fn analyze(text: &str) -> Vec<String> {
    let mut a = analyzer::Analyzer::new();
    a.run(text);
    a.tokens().iter().map(|t| a.text(t).to_string()).collect()
}
