//! The public contract: request and response types of the tools and of `--json` output.
//!
//! Every type here is serialisable (camelCase, nulls emitted), carries a JSON Schema
//! (`schemars`), and documents every field: the doc comments are the descriptions an agent
//! reads in `tools/list` and they are exported to `schema/mcp-tools.json`. The engine returns
//! these types directly (one set of types instead of an engine copy plus a wire copy); nothing
//! outside `wire` defines a serialisable tool shape.
//!
//! Shapes follow `docs/reference/original-server.md` §7 exactly; additions (`stale`, `explain`) are
//! optional fields.
//!
//! Invariants:
//!
//! - `wire` is the bottom layer: serde/schemars data only, it imports nothing from the crate
//!   (the table planner, the engine and the front-ends import it).
//! - Every request type has `deny_unknown_fields`: a misspelled field is refused, naming it,
//!   instead of being silently ignored. (Case-insensitive names are the MCP layer's job: it
//!   rewrites them to these spellings before deserialising.)

mod assets;
mod catalog;
mod export;
mod html;
mod links;
mod table;
mod values;

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

pub use assets::{
    AssetFileInfo, AssetPathRequest, BinaryKind, BinaryReply, DeleteImageResponse, FileParam, ImageItem,
    ListImagesRequest, ListImagesResponse, MoveImageRequest, MoveImageResponse, SaveImageRequest,
    SaveImageResponse,
};
pub use catalog::{
    CatalogText, CheckIssue, CheckRequest, CheckResponse, FindDocsRequest, IssueKind, ListTagsRequest,
    UpdateIndexRequest, UpdateIndexResponse,
};
pub use export::{PdfBookRequest, PdfBookResponse};
pub use html::{BuildSiteRequest, BuildSiteResponse, ExportHtmlRequest, ExportHtmlResponse};
pub use links::{LinkDirection, LinkEdge, LinksRequest, LinksResponse, ReadGuideRequest, TextBlocks};
pub use table::{Alignment, CellUpdate, RowFilter, TableAction, TableEditRequest, ValueFormat};
pub use values::{ValueSet, refused};

/// `kb_read` arguments.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReadRequest {
    /// Root-relative path of a `.md` file, with `/` separators, e.g. `docs/setup.md`.
    pub path: String,
    /// Where to start: omit (or `document`) for the beginning, a logical pointer (`1.2`, `1.p3`,
    /// `li1.li2`, `t1`) or an anchor returned by another tool (`1.p3~<selfHash>~<subtreeHash>`).
    /// Hashed anchors are relocated if the element moved, and refused (CONFLICT) if it changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// Most elements to return (default 20, clamped to 1..100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_elements: Option<i64>,
    /// Most bytes of Markdown to return (default 12000, clamped to 1..100000); the first element
    /// is always returned whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<i64>,
}

/// One element of a read page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SliceElement {
    /// The element's anchor `logical~selfHash~subtreeHash`: pass it to `kb_read` or `kb_patch`.
    pub pointer: String,
    /// `front_matter`, `heading`, `paragraph`, `code_block`, `list_item`, `table` or `block_quote`.
    pub kind: String,
    /// Exact source text (a list item's own text, without its nested items).
    pub text: String,
    /// Enclosing heading titles joined with ` > `.
    pub heading_path: Option<String>,
}

/// A table column in a read projection.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TableColumn {
    /// 0-based column index.
    pub index: usize,
    /// Header display text.
    pub name: String,
    /// `none`, `left`, `center` or `right`.
    pub alignment: String,
}

/// A table data row in a read projection.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TableRow {
    /// 0-based data-row index (the header is not a row).
    pub index: usize,
    /// Display text of each cell (inline Markdown removed).
    pub cells: Vec<String>,
}

/// Structured view of a GFM table, returned when `kb_read` addresses a table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TableProjection {
    /// Number of header cells.
    pub column_count: usize,
    /// Number of data rows.
    pub row_count: usize,
    /// Columns in order.
    pub columns: Vec<TableColumn>,
    /// Data rows in order.
    pub rows: Vec<TableRow>,
}

/// `kb_read` result: one page of the current source.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MarkdownSlice {
    /// The file read.
    pub path: String,
    /// `document`, or the anchor of the first returned element.
    pub pointer: String,
    /// The elements on this page.
    pub elements: Vec<SliceElement>,
    /// The exact source of this page; consecutive pages concatenate to the whole file.
    pub markdown: String,
    /// Anchor to pass as `pointer` for the next page, or null at the end.
    pub next_pointer: Option<String>,
    /// SHA-256 of the file's exact bytes.
    pub source_hash: String,
    /// Table projection when the request addressed a table.
    pub table: Option<TableProjection>,
    /// True when this page holds only part of one element larger than `maxBytes` (its rows,
    /// items or lines continue on the next page: follow `nextPointer`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
    /// One sentence saying what was cut and how to read on; absent when nothing was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

/// `kb_outline` arguments.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OutlineRequest {
    /// Root-relative path of a `.md` file.
    pub path: String,
    /// `nextCursor` of the previous page (same path and filters); omit for the first page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Only headings this deep in the tree (1 = top-level headings only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_depth: Option<i64>,
    /// Only this heading (a pointer or anchor from an earlier answer) and its sub-headings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub under: Option<String>,
    /// Most bytes of JSON per page (default `tools.maxAnswerBytes`, 32768; at least 1024).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<i64>,
}

/// A heading with its sub-headings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OutlineNode {
    /// The heading's anchor.
    pub pointer: String,
    /// `#` level (1–6).
    pub level: u8,
    /// Title without `#` markers.
    pub title: String,
    /// Sub-headings.
    pub children: Vec<OutlineNode>,
}

/// `kb_outline` result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OutlineResponse {
    /// The file.
    pub path: String,
    /// SHA-256 of the file's exact bytes.
    pub source_hash: String,
    /// Top-level headings (of this page: a heading whose parent is on an earlier page is
    /// top-level here).
    pub headings: Vec<OutlineNode>,
    /// Pass as `cursor` for the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// True when more headings follow on later pages; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
    /// One sentence saying how many headings this page holds and how to read on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

/// `kb_list_files` arguments.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListFilesRequest {
    /// Only files under this folder (whole path segments, case-insensitive), e.g. `docs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_prefix: Option<String>,
    /// Only files matching this glob (case-insensitive; default `**/*`), e.g. `**/*.png`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_glob: Option<String>,
    /// `nextCursor` of the previous page (same filters); omit for the first page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Most bytes of JSON per page (default `tools.maxAnswerBytes`, 32768; at least 1024).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<i64>,
}

/// A listed file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListedFile {
    /// Root-relative path.
    pub relative_path: String,
    /// `markdown` (a `.md` file) or `asset`.
    pub kind: String,
    /// Size in bytes.
    pub size: u64,
    /// Last modification (UTC, RFC 3339).
    pub last_write_time_utc: String,
}

/// `kb_list_files` result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListFilesResponse {
    /// Files, sorted case-insensitively.
    pub files: Vec<ListedFile>,
    /// Pass as `cursor` for the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// True when more files follow on later pages; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
    /// One sentence saying how many files this page holds and how to read on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

/// What a `kb_search` hit carries (`kb_search.detail`, `search.hitDetail`; `docs/tools.md`, "The
/// hit shape").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[schemars(rename_all = "lowercase", inline)]
pub enum HitDetail {
    // Path, pointer, heading path and snippet; `stale` only when true; the mode once per answer.
    #[default]
    Compact,
    // The original's shape: also fullPointer, score, searchMode, readHint, indexedSourceHash and
    // stale on every hit.
    Full,
}

impl ValueSet for HitDetail {
    const ALL: &'static [Self] = &[HitDetail::Compact, HitDetail::Full];

    fn as_str(self) -> &'static str {
        match self {
            HitDetail::Compact => "compact",
            HitDetail::Full => "full",
        }
    }

    fn refusal(given: &str) -> String {
        format!(
            "detail '{given}' is not valid; use compact (path, pointer, headingPath, snippet) or full (the original's shape)."
        )
    }

    /// Ignores ASCII case and surrounding whitespace.
    fn find(given: &str) -> Option<Self> {
        values::find_loosely(given)
    }
}

values::value_set_serde!(HitDetail);

/// A search mode (`kb_search.mode`, `search.defaultMode`, `--search-mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[schemars(rename_all = "lowercase", inline)]
pub enum SearchMode {
    // BM25 over the lexical index only. (No doc comments on the variants: the schema is a plain
    // string `enum` and the field's description says what each value does.)
    Lexical,
    // Nearest neighbours over embeddings only.
    Semantic,
    // Both, fused by Reciprocal Rank Fusion.
    #[default]
    Hybrid,
}

impl ValueSet for SearchMode {
    const ALL: &'static [Self] = &[SearchMode::Lexical, SearchMode::Semantic, SearchMode::Hybrid];

    fn as_str(self) -> &'static str {
        match self {
            SearchMode::Lexical => "lexical",
            SearchMode::Semantic => "semantic",
            SearchMode::Hybrid => "hybrid",
        }
    }

    fn refusal(given: &str) -> String {
        format!("mode '{given}' is not valid; use {}.", values::or_list(&Self::spellings()))
    }

    /// Ignores ASCII case and surrounding whitespace.
    fn find(given: &str) -> Option<Self> {
        values::find_loosely(given)
    }
}

values::value_set_serde!(SearchMode);

impl SearchMode {
    /// The wire spelling (lowercase).
    pub fn as_str(self) -> &'static str {
        ValueSet::as_str(self)
    }

    /// Parses a spelling, ignoring ASCII case and surrounding whitespace.
    pub fn parse(s: &str) -> Option<SearchMode> {
        Self::find(s)
    }
}

impl std::fmt::Display for SearchMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// `kb_search` arguments.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SearchRequest {
    /// What to look for. Japanese and English both work; every word is optional but results
    /// containing all words rank first; `"double quotes"` search for an exact phrase.
    pub query: String,
    /// `lexical`, `semantic` or `hybrid` (default: `search.defaultMode`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<SearchMode>,
    /// Number of results (default `search.maxResults`, at most 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_k: Option<i64>,
    /// Only files matching any of these globs, e.g. `["docs/**"]`; topK counts within scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_globs: Option<Vec<String>>,
    /// Leave out files matching any of these globs, e.g. `["drafts/**"]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclude_globs: Option<Vec<String>>,
    /// Only documents whose front matter meets every condition, e.g.
    /// `[{"field":"tags","op":"eq","value":"api"},{"field":"updated","op":"gte","value":"2024-01-01"}]`;
    /// combined with the globs, topK counts within what passes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filters: Option<Vec<SearchFilter>>,
    /// Add an `explain` object to every hit: its lexical rank, vector rank and fused score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<bool>,
    /// At most this many hits per file (default `search.maxPerFile`, 0: no limit), so other
    /// files' matches are not pushed out by many sections of one file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_per_file: Option<i64>,
    /// What each hit carries: `compact` (default `search.hitDetail`: path, pointer,
    /// headingPath, snippet; `stale` when true) or `full` (the original's shape, adding
    /// fullPointer, score, searchMode, readHint, indexedSourceHash and stale to every hit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<HitDetail>,
}

/// One condition on a front-matter field (`kb_search` `filters`). Keys and values are
/// compared after NFKC and case folding; a list field (`tags: [api, 設計]`) matches when one
/// of its items does.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(inline)]
pub struct SearchFilter {
    /// The front-matter key, e.g. `status`, `tags`, `タグ`; `author.name` for a nested key.
    pub field: String,
    /// `eq` (equals, or a list field contains it; `contains` is accepted as the same), `ne`
    /// (not eq; documents without the field pass), `in` (equals one of `values`), `gte`/`gt`/`lte`/`lt` (dates, by calendar day),
    /// `exists` (the key is present).
    pub op: FilterOp,
    /// The value to compare with (all ops but `in` and `exists`); dates as `YYYY-MM-DD`.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "scalar_text")]
    pub value: Option<String>,
    /// The values for `in`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<String>>,
}

/// How a [`SearchFilter`] compares (the meaning of each is on [`SearchFilter::op`]; the variants
/// carry no doc comments so the schema is a plain string `enum`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
pub enum FilterOp {
    // the field (or an item of a list field) equals `value`; `contains` reads naturally for
    // lists and is accepted as the same test
    #[serde(alias = "contains")]
    Eq,
    // not `eq`; documents without the field pass
    Ne,
    // the field (or an item of a list field) equals one of `values`
    In,
    // a date of the field is after, on or after, before, on or before `value`
    Gt,
    Gte,
    Lt,
    Lte,
    // the front matter has the field
    Exists,
}

/// A filter value: a string, or a number or boolean taken as its text (clients often send
/// `true` or `2` for front matter written `draft: true` or `version: 2`).
fn scalar_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    use serde::de::Error;
    match serde_json::Value::deserialize(d)? {
        serde_json::Value::Null => Ok(None),
        serde_json::Value::String(s) => Ok(Some(s)),
        serde_json::Value::Number(n) => Ok(Some(n.to_string())),
        serde_json::Value::Bool(b) => Ok(Some(b.to_string())),
        _ => Err(D::Error::custom("value must be a string (or a number or boolean); use values for a list")),
    }
}

/// Why a hit ranks where it does (`explain: true`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchExplain {
    /// 1-based rank in the lexical (BM25) candidates, if it was among them.
    pub lexical_rank: Option<u32>,
    /// Whether the chunk matched every word of the query (the lexical first tier), if it was
    /// a lexical candidate.
    pub lexical_all_terms: Option<bool>,
    /// 1-based rank in the vector candidates, if it was among them.
    pub vector_rank: Option<u32>,
    /// Cosine distance to the query (0 = same direction), if it was a vector candidate.
    pub vector_distance: Option<f32>,
    /// The RRF constant k used for fusion (hybrid only).
    pub rrf_k: Option<u32>,
    /// The final score. Hybrid mode: `w/(k + lexical rank)` when some chunk matched every
    /// word (the lexical order stands; vectorRank is shown but not counted), else
    /// `Σ wᵢ/(k + rank)` over both lists (lexical weight `search.lexicalWeight`, vector weight
    /// 1). `1/rank` in the other modes.
    pub fused_score: f64,
}

/// Arguments for reading a hit in full.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadHint {
    /// The file.
    pub path: String,
    /// The anchor to start reading at.
    pub pointer: String,
    /// Suggested page size in elements.
    pub max_elements: i64,
    /// Suggested page size in bytes.
    pub max_bytes: i64,
}

/// One search result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    /// The file.
    pub path: String,
    /// Anchor of the first element of the matching chunk: `kb_read {path, pointer}` reads on
    /// from here.
    pub pointer: String,
    /// `<path>::<pointer>` (`detail: full` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_pointer: Option<String>,
    /// `1/rank` for lexical or semantic results; the fused score in hybrid mode (`detail: full`
    /// only; the order says the rank).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// The mode that produced the result (`detail: full` only; compact answers name it once,
    /// as `mode`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_mode: Option<String>,
    /// Heading path of the chunk (absent before the first heading).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heading_path: Option<String>,
    /// The sentences around the match, matches in `[brackets]`, elisions as `...`.
    pub snippet: String,
    /// How to read this hit in full (`detail: full` only; it is `kb_read` with `path` and
    /// `pointer`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_hint: Option<ReadHint>,
    /// SHA-256 of the file revision that was indexed (`detail: full` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub indexed_source_hash: Option<String>,
    /// True when the file changed since it was indexed (read it for the current text). Compact
    /// hits carry it only when true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stale: Option<bool>,
    /// Present when the request asked for `explain`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<SearchExplain>,
}

/// `kb_search` result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchResponse {
    /// The mode that produced every result (compact answers; full ones name it on each hit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// Results, best first.
    pub results: Vec<SearchHit>,
    /// Set when the search ran in a reduced mode (e.g. lexical instead of hybrid).
    pub warning: Option<String>,
}

/// `kb_reindex` arguments.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReindexRequest {
    /// `changed` (default: only files whose content changed) or `all`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["changed", "all", null]))]
    pub scope: Option<String>,
    /// Rebuild from scratch when the index is incompatible with the configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force: Option<bool>,
}

/// `kb_status` arguments: none. Its schema is exactly
/// `{"type":"object","properties":{},"additionalProperties":false}`
/// (`docs/reference/original-server.md` §7.1).
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StatusRequest {}

impl JsonSchema for StatusRequest {
    fn schema_name() -> Cow<'static, str> {
        "StatusRequest".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "object", "properties": {}, "additionalProperties": false})
    }
}

/// What a reindex did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReindexResult {
    /// Markdown files found.
    pub scanned_files: u64,
    /// Files (re)indexed.
    pub indexed_files: u64,
    /// Files unchanged since the last index.
    pub skipped_files: u64,
    /// Files removed from the index because they are gone or excluded.
    pub deleted_files: u64,
    /// Chunks written.
    pub chunks_indexed: u64,
    /// Files that could not be indexed (not UTF-8, too large, …), with the reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_files: Vec<String>,
    /// Something the user should know (e.g. vectors pending).
    pub warning: Option<String>,
}

/// A running reindex.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReindexProgress {
    /// `changed` or `all`.
    pub scope: String,
    /// Whether `force` was requested.
    pub force: bool,
    /// Start time (UTC).
    pub started_at_utc: String,
    /// Files processed so far.
    pub processed_files: u64,
    /// Files to process, once known.
    pub total_files: Option<u64>,
    /// The file being processed.
    pub current_path: Option<String>,
    /// True when the index is being rebuilt from scratch (search answers INDEX_NOT_READY).
    pub is_destructive_rebuild: bool,
    /// After the files: chunks embedded so far and chunks to embed (embeddings on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedding: Option<EmbeddingProgress>,
}

/// Progress of the vector catch-up at the end of a reindex.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddingProgress {
    /// Chunks embedded so far.
    pub embedded_chunks: u64,
    /// Chunks to embed in this reindex.
    pub total_chunks: u64,
}

/// `kb_reindex` result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReindexStartResponse {
    /// False when a reindex was already running (`current` is that one).
    pub started: bool,
    /// The running operation.
    pub current: Option<ReindexProgress>,
}

/// The last finished reindex.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LastReindex {
    /// `changed` or `all`.
    pub scope: String,
    /// Whether `force` was requested.
    pub force: bool,
    /// Start time (UTC).
    pub started_at_utc: String,
    /// End time (UTC).
    pub completed_at_utc: String,
    /// `succeeded`, `failed` or `cancelled`.
    pub outcome: String,
    /// What it did, when it succeeded.
    pub result: Option<ReindexResult>,
    /// Why it failed.
    pub error: Option<String>,
}

/// Indexing state.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IndexingStatus {
    /// A reindex is running.
    pub is_running: bool,
    /// The running reindex.
    pub current: Option<ReindexProgress>,
    /// The last finished reindex in this process.
    pub last: Option<LastReindex>,
}

/// Files whose latest edit is not yet in the index.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SynchronizationStatus {
    /// Number of pending files.
    pub pending_files: u64,
    /// Pending paths.
    pub paths: Vec<String>,
    /// The last synchronisation error.
    pub last_error: Option<String>,
}

/// The indexed project.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectStatus {
    /// Absolute knowledge-base root.
    pub root: String,
    /// Indexed documents.
    pub documents: u64,
    /// Indexed chunks.
    pub chunks: u64,
    /// When the index last changed (UTC).
    pub last_indexed_at_utc: Option<String>,
    /// What the project's ignore files keep out of the index (absent when
    /// `knowledgeBase.respectIgnoreFiles` is false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignored: Option<IgnoredStatus>,
}

/// The folders and Markdown files that ignore files (`.gitignore`, `.ignore`, git's excludes)
/// keep out of the index.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IgnoredStatus {
    /// Ignored folders (each counted once, not what is inside) and Markdown files.
    pub count: u64,
    /// The first of them: folders end with `/`.
    pub paths: Vec<IgnoredPath>,
    /// How to index them anyway.
    pub hint: String,
}

/// One ignored folder or file and the rule that ignores it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IgnoredPath {
    /// Root-relative path; a folder ends with `/`.
    pub path: String,
    /// The pattern and the file it is in: `node_modules/ (.gitignore)`.
    pub rule: String,
}

/// Whether the index matches the configuration.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Compatibility {
    /// True when no rebuild is needed.
    pub is_compatible: bool,
    /// What differs, as `<key>: indexed '<old>', current '<new>'`.
    pub problems: Vec<String>,
}

impl Compatibility {
    /// Nothing differs (also: nothing was built yet, so nothing needs a rebuild).
    pub fn compatible() -> Compatibility {
        Compatibility { is_compatible: true, problems: Vec::new() }
    }
}

/// `kb_status` result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusResponse {
    /// Absolute path of the index directory.
    pub database_path: String,
    /// Index schema version.
    pub schema_version: String,
    /// Chunker version.
    pub chunker_version: String,
    /// Embedding-text builder version.
    pub embedding_text_builder_version: String,
    /// Japanese analyzer version.
    pub analyzer_version: String,
    /// Embedding model, or `none` in lexical mode.
    pub embedding_model: String,
    /// Embedding dimensions, null in lexical mode.
    pub embedding_dimensions: Option<u32>,
    /// The indexed project.
    pub project: ProjectStatus,
    /// Pending edits.
    pub synchronization: SynchronizationStatus,
    /// Reindex state.
    pub indexing: IndexingStatus,
    /// `lexical` or `vector-enabled`.
    pub index_mode: String,
    /// `none` or `openai-compatible`.
    pub embedding_provider: String,
    /// Whether the index matches the configuration.
    pub compatibility: Compatibility,
    /// Configuration warnings (unknown keys, a `.db` storage path, …).
    pub warnings: Vec<String>,
    /// Vector index state (absent in lexical mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vectors: Option<VectorStatus>,
    /// Which lists were cut to keep the answer within `tools.maxAnswerBytes`, with their totals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

/// The vector index in `kb_status`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VectorStatus {
    /// Chunks that have a vector.
    pub vectors: u64,
    /// Chunks still waiting for one (endpoint down or slow); they catch up on the next
    /// reindex or edit.
    pub pending: u64,
    /// The last embedding failure, until a catch-up succeeds.
    pub last_error: Option<String>,
    /// When that failure happened (UTC).
    pub last_error_at_utc: Option<String>,
    /// Whether the stored vectors match the configured model, dimensions and embedding text.
    pub compatibility: Compatibility,
}

/// The patch operation kinds of `kb_patch` (`docs/reference/original-server.md` §9.1), in schema
/// order. What each does is on [`PatchOperation::kind`] (the variants carry no doc comments, so
/// the schema is a plain string `enum`); the edit rules are in `edit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
#[schemars(rename_all = "snake_case", inline)]
pub enum PatchKind {
    // Deprecated alias of `ReplaceElement` (same validation).
    Replace,
    // Replace exactly one element (a list item: only its own prefix before its children).
    ReplaceElement,
    // Replace a list item together with all its descendants.
    ReplaceSubtree,
    // Replace a heading and its owned section.
    ReplaceSection,
    // Delete a heading and its owned section (no markdown).
    DeleteSection,
    // Insert new block(s) before an element or at the start of the document.
    InsertBefore,
    // Insert new block(s) after an element or at the end of the document.
    InsertAfter,
    // Remove exactly one element (heading: body kept; list item: whole subtree).
    Delete,
}

impl ValueSet for PatchKind {
    const ALL: &'static [Self] = &[
        PatchKind::Replace,
        PatchKind::ReplaceElement,
        PatchKind::ReplaceSubtree,
        PatchKind::ReplaceSection,
        PatchKind::DeleteSection,
        PatchKind::InsertBefore,
        PatchKind::InsertAfter,
        PatchKind::Delete,
    ];

    fn as_str(self) -> &'static str {
        match self {
            PatchKind::Replace => "replace",
            PatchKind::ReplaceElement => "replace_element",
            PatchKind::ReplaceSubtree => "replace_subtree",
            PatchKind::ReplaceSection => "replace_section",
            PatchKind::DeleteSection => "delete_section",
            PatchKind::InsertBefore => "insert_before",
            PatchKind::InsertAfter => "insert_after",
            PatchKind::Delete => "delete",
        }
    }

    fn refusal(given: &str) -> String {
        format!("Unknown patch operation kind '{given}'. Valid kinds: {}.", Self::spellings().join(", "))
    }
}

values::value_set_serde!(PatchKind);

/// One `kb_patch` operation.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PatchOperation {
    /// `replace_element` (one element; a list item's own text only), `replace` (deprecated alias
    /// of replace_element), `replace_subtree` (a list item with all its nested items),
    /// `replace_section` (a heading and its complete owned section subtree, up to the next heading
    /// of the same or a higher level), `delete_section`, `insert_before`, `insert_after`
    /// (`document` inserts at the start/end), `delete` (one element; for a heading the section
    /// body is preserved; for a list item its whole subtree).
    pub kind: PatchKind,
    /// The target's anchor from kb_read/kb_outline/kb_search (`logical~selfHash~subtreeHash`);
    /// `document` (unhashed) for inserts at the start or end. Section and subtree operations need
    /// the v2 anchor with both hashes.
    pub pointer: String,
    /// The new Markdown (required by replace and insert kinds, forbidden for delete_section).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub markdown: Option<String>,
}

/// `kb_patch` arguments.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PatchRequest {
    /// Root-relative path of an existing `.md` file.
    pub path: String,
    /// The operations, applied atomically against one revision (all or nothing).
    pub operations: Vec<PatchOperation>,
}

/// `kb_create` arguments.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateRequest {
    /// Root-relative path of the new `.md` file (folders are created; never overwrites).
    pub path: String,
    /// The file's content (UTF-8, written without BOM; may be empty).
    #[serde(default)]
    pub markdown: String,
}

/// `kb_move` arguments.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MoveRequest {
    /// The `.md` file to move.
    pub source_path: String,
    /// The new `.md` path (must not exist; folders are created).
    pub target_path: String,
    /// The `sourceHash` from your last read of the source file.
    pub expected_source_hash: String,
}

/// `kb_delete` arguments.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeleteRequest {
    /// The `.md` file to delete.
    pub path: String,
    /// The `sourceHash` from your last read of the file.
    pub expected_source_hash: String,
}

/// Result of a Markdown mutation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MutationResponse {
    /// The file written (the target of a move).
    pub path: String,
    /// SHA-256 of the new bytes; null after a delete.
    pub source_hash: Option<String>,
    /// True when kb_search already sees the change; false while it is being indexed in the
    /// background (kb_read always sees it at once).
    pub index_synchronized: bool,
    /// The last indexing error, if the change could not be indexed yet.
    pub index_error: Option<String>,
    /// The source of a move.
    pub previous_path: Option<String>,
}

/// Result of `kb_edit_table`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TableEditResponse {
    /// The file.
    pub path: String,
    /// The table's new anchor (`tN~self~subtree`) for the next edit.
    pub pointer: String,
    /// SHA-256 of the new bytes.
    pub source_hash: String,
    /// True when kb_search already sees the change.
    pub index_synchronized: bool,
    /// The last indexing error, if the change could not be indexed yet.
    pub index_error: Option<String>,
}
