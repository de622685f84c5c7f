//! The server configuration: built-in defaults, an optional YAML file, command-line overrides,
//! resolved paths and validation, in that order (`docs/reference/original-server.md` §3.1).
//!
//! - [`load`] turns [`CliOverrides`] (plus the environment and the working directory, injected
//!   so tests never touch the process) into a validated [`Config`] and a list of warnings.
//! - [`parse_args`] is the whole command line (`docs/reference/product.md` §4): global options
//!   compatible with the original (`docs/reference/original-server.md` §2.1), the legacy
//!   `--reindex` / `--status` flags and the subcommands. It yields the overrides and the
//!   [`Command`] to run.
//! - Include/exclude globs are validated with `workspace::GlobFilter`
//!   (`docs/reference/original-server.md` §3.4).
//! - [`json_schema`] describes the YAML file for editors and `schema/config.schema.json`.
//!
//! Invariants:
//! - Every path in a loaded [`Config`] is absolute and lexically normalised (no `.`/`..`).
//! - The YAML file is only read when `--config` names it; nothing is discovered implicitly.
//! - Unknown YAML keys never fail a load; they come back as warnings (`Unknown configuration key
//!   'knowledgeBase.foo' was ignored.`) for stderr and `kb_status`.
//! - Validation messages are the contract's texts (`docs/reference/original-server.md` §3.3), with
//!   code `INVALID_ARGUMENT`.

mod cli;
mod file;
mod load;

#[cfg(test)]
mod tests;

use std::fmt;
use std::path::{Path, PathBuf};

pub use cli::{
    Cli, Command, ExportHtmlArgs, GlobalArgs, HttpServe, ParsedArgs, PdfArgs, UsageError, parse_args,
};
pub use load::load;

/// A search mode (`search.defaultMode`, `--search-mode`, `kb_search.mode`): the wire's type.
pub use crate::wire::{HitDetail, SearchMode};

/// The name of the index directory under the project root (`docs/reference/product.md` §3).
pub const STORAGE_DIR_NAME: &str = ".local-vector-search-mcp";
/// The environment variable that names the project root when `--project-root` is absent.
pub const PROJECT_DIR_ENV: &str = "CLAUDE_PROJECT_DIR";
/// The embedding dimensions used when `embedding.dimensions` is not set.
pub const DEFAULT_EMBEDDING_DIMENSIONS: u32 = 1024;
/// The default `server.name`.
pub const DEFAULT_SERVER_NAME: &str = "local-vector-search-mcp";
/// The default `embedding.endpoint` (local Ollama).
pub const DEFAULT_EMBEDDING_ENDPOINT: &str = "http://localhost:11434/v1";
/// The default `embedding.apiKey`.
pub const DEFAULT_EMBEDDING_API_KEY: &str = "ollama";
/// The default `embedding.model`.
pub const DEFAULT_EMBEDDING_MODEL: &str = "bge-m3:latest";
/// The default `knowledgeBase.include`.
pub const DEFAULT_INCLUDE: &str = "**/*.md";

/// A configuration after loading: the settings and the warnings found on the way.
#[derive(Clone, Debug, PartialEq)]
pub struct Loaded {
    /// The resolved, validated settings.
    pub config: Config,
    /// One sentence per problem that did not stop the load (unknown keys, ignored entries), in
    /// file order. The CLI logs them; `kb_status` shows them.
    pub warnings: Vec<String>,
}

/// Command-line values that override the YAML file (`docs/reference/original-server.md` §2.1).
/// `None` = not given.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CliOverrides {
    /// `--config <path>`: the YAML file. Relative to the working directory, or to the project
    /// root when `--project-root` is given.
    pub config: Option<PathBuf>,
    /// `--project-root <dir>`: must exist; a relative path is resolved against the working directory.
    pub project_root: Option<PathBuf>,
    /// `--root <path>`: `knowledgeBase.root`.
    pub root: Option<PathBuf>,
    /// `--storage-path <path>`: `storage.path`.
    pub storage_path: Option<PathBuf>,
    /// `--embedding-provider <openai-compatible|none>`: `embedding.provider`.
    pub embedding_provider: Option<EmbeddingProvider>,
    /// `--search-mode <lexical|semantic|hybrid>`: `search.defaultMode`.
    pub search_mode: Option<SearchMode>,
    /// `--watch-files` (`true`) / `--no-watch-files` (`false`): `knowledgeBase.watchFiles`.
    pub watch_files: Option<bool>,
    /// `--no-ignore` (`false`): `knowledgeBase.respectIgnoreFiles`.
    pub respect_ignore_files: Option<bool>,
    /// `--embedding-endpoint <url>`: `embedding.endpoint`.
    pub embedding_endpoint: Option<String>,
    /// `--embedding-model <model>`: `embedding.model`.
    pub embedding_model: Option<String>,
    /// `--include <glob>`…: replaces `knowledgeBase.include` when given.
    pub include: Option<Vec<String>>,
    /// `--exclude <glob>`…: replaces `knowledgeBase.exclude` when given.
    pub exclude: Option<Vec<String>>,
}

/// Where the project root came from (`docs/reference/original-server.md` §2.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProjectRootSource {
    /// `--project-root`.
    Flag,
    /// The `CLAUDE_PROJECT_DIR` environment variable.
    Env,
    /// The process working directory.
    WorkingDirectory,
}

/// The resolved settings. Field names follow the YAML keys (`docs/reference/original-server.md`
/// §3.2) in snake case; sections are nested the same way as in the file.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// The project root: absolute, existing directory. Not a YAML key
    /// (`docs/reference/original-server.md` §2.3).
    pub project_root: PathBuf,
    /// Where [`Config::project_root`] came from.
    pub project_root_source: ProjectRootSource,
    /// The YAML file that was loaded (absolute), if `--config` named one.
    pub config_file: Option<PathBuf>,
    /// `server`.
    pub server: ServerConfig,
    /// `storage`.
    pub storage: StorageConfig,
    /// `embedding`.
    pub embedding: EmbeddingConfig,
    /// `chunking`.
    pub chunking: ChunkingConfig,
    /// `search`.
    pub search: SearchConfig,
    /// `knowledgeBase`.
    pub knowledge_base: KnowledgeBaseConfig,
    /// `tools` (`docs/reference/product.md` §5): which MCP tools the server lists.
    pub tools: ToolsConfig,
    /// `index`: how the server keeps its index.
    pub index: IndexConfig,
    /// `catalog` (`docs/reference/catalog-spec.md` §3): the raw section, interpreted by the catalog
    /// module. Its unknown keys are already reported as warnings by [`load`]. `None` when absent or
    /// null.
    pub catalog: Option<yaml_serde::Value>,
}

impl Config {
    /// The built-in defaults for a project root, without a file, overrides or validation.
    /// Handy for tests of other modules.
    pub fn defaults(project_root: &Path) -> Config {
        let project_root = load::normalize(project_root);
        Config {
            storage: StorageConfig { path: project_root.join(STORAGE_DIR_NAME), db_file: None },
            knowledge_base: KnowledgeBaseConfig {
                root: project_root.clone(),
                allow_writes: false,
                watch_files: false,
                respect_ignore_files: true,
                include: vec![DEFAULT_INCLUDE.to_owned()],
                exclude: Vec::new(),
            },
            project_root,
            project_root_source: ProjectRootSource::WorkingDirectory,
            config_file: None,
            server: ServerConfig { name: DEFAULT_SERVER_NAME.to_owned(), http_token: None },
            embedding: EmbeddingConfig::default(),
            chunking: ChunkingConfig::default(),
            search: SearchConfig::default(),
            tools: ToolsConfig::default(),
            index: IndexConfig::default(),
            catalog: None,
        }
    }
}

/// `server`: informational settings and the HTTP transport's token.
#[derive(Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// `server.name` (default `local-vector-search-mcp`).
    pub name: String,
    /// `server.httpToken`: the bearer token of `serve --http` when neither `--token` nor
    /// `LVS_HTTP_TOKEN` gives one. Never shown by `Debug`.
    pub http_token: Option<String>,
}

impl std::fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerConfig")
            .field("name", &self.name)
            .field("http_token", &self.http_token.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// `storage`: where the derived index lives (`docs/reference/product.md` §3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StorageConfig {
    /// The index directory, absolute. `storage.path` / `--storage-path`, relative to the project
    /// root; default `<project-root>/.local-vector-search-mcp`.
    pub path: PathBuf,
    /// `Some` when the configured path named the original's SQLite file (it ended in `.db`):
    /// that file path, absolute. [`StorageConfig::path`] is then its parent directory.
    pub db_file: Option<PathBuf>,
}

impl StorageConfig {
    /// Whether the configured path named a `.db` file and its parent directory is used instead.
    pub fn from_db_path(&self) -> bool {
        self.db_file.is_some()
    }

    /// One sentence for `kb_status` when the path named a `.db` file, otherwise `None`.
    pub fn db_file_note(&self) -> Option<String> {
        self.db_file.as_ref().map(|file| {
            format!(
                "storage.path names the SQLite file {} of the original server; the index is kept in its directory {}.",
                file.display(),
                self.path.display()
            )
        })
    }
}

/// `embedding.provider`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum EmbeddingProvider {
    /// `openai-compatible`: embeddings from `POST {endpoint}/embeddings`.
    #[default]
    OpenAiCompatible,
    /// `none`: lexical-only mode, no network, no model.
    None,
}

impl EmbeddingProvider {
    /// The configuration spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            EmbeddingProvider::OpenAiCompatible => "openai-compatible",
            EmbeddingProvider::None => "none",
        }
    }

    /// Parses a spelling, ignoring ASCII case and surrounding whitespace.
    pub fn parse(s: &str) -> Option<EmbeddingProvider> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("openai-compatible") {
            Some(EmbeddingProvider::OpenAiCompatible)
        } else if s.eq_ignore_ascii_case("none") {
            Some(EmbeddingProvider::None)
        } else {
            None
        }
    }
}

impl fmt::Display for EmbeddingProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `embedding`: the OpenAI-compatible embedding backend.
#[derive(Clone, PartialEq, Eq)]
pub struct EmbeddingConfig {
    /// `embedding.provider` / `--embedding-provider` (default `openai-compatible`).
    pub provider: EmbeddingProvider,
    /// `embedding.endpoint` / `--embedding-endpoint`: base URL; requests go to
    /// `{endpoint}/embeddings` (default `http://localhost:11434/v1`).
    pub endpoint: String,
    /// `embedding.apiKey`: sent as `Authorization: Bearer <apiKey>` (default `ollama`). Never
    /// logged: the `Debug` output redacts it.
    pub api_key: String,
    /// `embedding.model` / `--embedding-model` (default `bge-m3:latest`).
    pub model: String,
    /// `embedding.dimensions`: `None` = [`DEFAULT_EMBEDDING_DIMENSIONS`] for the index.
    pub dimensions: Option<u32>,
    /// `embedding.batchSize`: texts per request (default 16).
    pub batch_size: usize,
    /// `embedding.allowRemoteEndpoint`: allow a non-loopback endpoint (default `false`).
    pub allow_remote_endpoint: bool,
    /// `embedding.timeoutSeconds`: HTTP timeout of one embedding call (default 120).
    pub timeout_seconds: u64,
    /// `embedding.queryPrefix`: prepended to every query before it is embedded (default none;
    /// e5 models want `query: `). Part of the vector manifest.
    pub query_prefix: String,
    /// `embedding.documentPrefix`: prepended to every chunk's embedding text (default none;
    /// e5 models want `passage: `). Part of the vector manifest.
    pub document_prefix: String,
    /// `embedding.inputType`: an `input_type` field sent with queries and with documents, for
    /// servers that pick the modality from it (default: not sent). Part of the vector manifest.
    pub input_type: Option<InputTypes>,
}

/// `embedding.inputType`: the `input_type` values sent with queries and with documents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputTypes {
    /// `embedding.inputType.query` (e.g. `query`, `search_query`).
    pub query: String,
    /// `embedding.inputType.document` (e.g. `passage`, `document`, `search_document`).
    pub document: String,
}

impl EmbeddingConfig {
    /// Whether embeddings are on (`provider: openai-compatible`).
    pub fn is_enabled(&self) -> bool {
        self.provider == EmbeddingProvider::OpenAiCompatible
    }

    /// The dimensions the vector index uses: `dimensions`, or 1024.
    pub fn effective_dimensions(&self) -> u32 {
        self.dimensions.unwrap_or(DEFAULT_EMBEDDING_DIMENSIONS)
    }
}

impl Default for EmbeddingConfig {
    fn default() -> Self {
        EmbeddingConfig {
            provider: EmbeddingProvider::OpenAiCompatible,
            endpoint: DEFAULT_EMBEDDING_ENDPOINT.to_owned(),
            api_key: DEFAULT_EMBEDDING_API_KEY.to_owned(),
            model: DEFAULT_EMBEDDING_MODEL.to_owned(),
            dimensions: None,
            batch_size: 16,
            allow_remote_endpoint: false,
            timeout_seconds: 120,
            query_prefix: String::new(),
            document_prefix: String::new(),
            input_type: None,
        }
    }
}

impl fmt::Debug for EmbeddingConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EmbeddingConfig")
            .field("provider", &self.provider)
            .field("endpoint", &self.endpoint)
            .field("api_key", &"<redacted>")
            .field("model", &self.model)
            .field("dimensions", &self.dimensions)
            .field("batch_size", &self.batch_size)
            .field("allow_remote_endpoint", &self.allow_remote_endpoint)
            .field("timeout_seconds", &self.timeout_seconds)
            .field("query_prefix", &self.query_prefix)
            .field("document_prefix", &self.document_prefix)
            .field("input_type", &self.input_type)
            .finish()
    }
}

/// `chunking`: how documents are cut into indexed chunks (`docs/reference/original-server.md`
/// §5.8).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkingConfig {
    /// `chunking.maxChunkBytes`: UTF-8 bytes of chunk text (default 4096).
    pub max_chunk_bytes: usize,
    /// `chunking.maxElements`: elements per chunk (default 20).
    pub max_elements: usize,
    /// `chunking.includeHeadingContext`: a `Heading: …` line in the embedding text (default
    /// `true`).
    pub include_heading_context: bool,
    /// `chunking.includeFrontMatter`: index front matter as its own chunk (default `true`).
    pub include_front_matter: bool,
}

impl Default for ChunkingConfig {
    fn default() -> Self {
        ChunkingConfig {
            max_chunk_bytes: 4096,
            max_elements: 20,
            include_heading_context: true,
            include_front_matter: true,
        }
    }
}

/// `search`: defaults and pool sizes of `kb_search` (`docs/reference/original-server.md` §8).
#[derive(Clone, Debug, PartialEq)]
pub struct SearchConfig {
    /// `search.defaultMode` / `--search-mode` (default `hybrid`).
    pub default_mode: SearchMode,
    /// `search.semanticCandidatePoolSize`: vector candidates (default 50).
    pub semantic_candidate_pool_size: usize,
    /// `search.lexicalCandidatePoolSize`: lexical candidates (default 50).
    pub lexical_candidate_pool_size: usize,
    /// `search.maxResults`: `topK` when a request omits it (default 10).
    pub max_results: usize,
    /// `search.rrfK`: the Reciprocal Rank Fusion constant (default 60).
    pub rrf_k: u32,
    /// `search.lexicalWeight`: the lexical list's weight in the fusion; the vector list's is 1
    /// (default [`DEFAULT_LEXICAL_WEIGHT`], see `docs/design/retrieval.md`).
    pub lexical_weight: f64,
    /// `search.semanticFloor`: vector candidates whose cosine similarity is more than this
    /// below the best vector candidate's are dropped (default [`DEFAULT_SEMANTIC_FLOOR`];
    /// 0 disables). Model-dependent.
    pub semantic_floor: f64,
    /// `search.semanticMinSimilarity`: vector candidates below this cosine similarity are
    /// dropped (default none). Model-dependent.
    pub semantic_min_similarity: Option<f64>,
    /// `search.maxPerFile`: most hits of one file in a result (`None`, the default: no limit;
    /// a request's `maxPerFile` overrides it).
    pub max_per_file: Option<usize>,
    /// The lexical ranking weights (`docs/design/retrieval.md`, "Lexical ranking").
    pub ranking: LexicalRanking,
    /// `search.snippetTokens`: tokens in a hit's snippet window (default
    /// [`DEFAULT_SNIPPET_TOKENS`]; 16 is the original's FTS5 window).
    pub snippet_tokens: usize,
    /// `search.hitDetail`: what each hit carries by default (`compact`; `full` is the original's
    /// shape). A request's `detail` overrides it.
    pub hit_detail: HitDetail,
}

/// The default `search.snippetTokens`, chosen with `benches/agent_answers.py`
/// (`docs/performance.md`, "Agent benchmark").
pub const DEFAULT_SNIPPET_TOKENS: usize = 64;

/// `search.headingWeight`, `search.ownHeadingWeight`, `search.proximityWeight`, `search.proximitySlop`,
/// `search.contentWordWeight`, `search.looseWeight`, `search.coordinationWeight`,
/// `search.rerankWeight`, `search.rerankDepth`: the lexical
/// ranking weights (the search module hands them to
/// the lexical index).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LexicalRanking {
    /// Weight of a heading-path match against a text match (default 1).
    pub heading_weight: f64,
    /// Extra weight of a match in the chunk's own heading, on top of `heading_weight` (default 2).
    pub own_heading_weight: f64,
    /// Weight of the bonus for two consecutive query words together in the text (default 1;
    /// 0: off).
    pub proximity_weight: f64,
    /// Extra positions allowed between those two words.
    pub proximity_slop: u32,
    /// How many query words ahead a word is paired with (default 3; 1: neighbours only).
    pub proximity_reach: u32,
    /// Weight of a verb, adjective or adverb against a noun or name (default 0.5).
    pub content_word_weight: f64,
    /// Weight of a loose term, a part of a compound the query has whole (default 1).
    pub loose_weight: f64,
    /// Weight of the share of query words a partial match has, against its BM25 (default 2).
    pub coordination_weight: f64,
    /// Weight of the character-gram re-rank against the rank (default 0.2; 0: off).
    pub rerank_weight: f64,
    /// How many of the best candidates the re-rank orders again (default 10).
    pub rerank_depth: usize,
}

impl Default for LexicalRanking {
    fn default() -> Self {
        LexicalRanking {
            heading_weight: 1.0,
            own_heading_weight: 2.0,
            proximity_weight: 1.0,
            proximity_slop: 2,
            proximity_reach: 3,
            content_word_weight: 0.5,
            loose_weight: 1.0,
            coordination_weight: 2.0,
            rerank_weight: 0.2,
            rerank_depth: 10,
        }
    }
}

/// The default `search.lexicalWeight`.
pub const DEFAULT_LEXICAL_WEIGHT: f64 = 1000.0;
/// The default `search.semanticFloor`.
pub const DEFAULT_SEMANTIC_FLOOR: f64 = 0.04;

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            default_mode: SearchMode::Hybrid,
            semantic_candidate_pool_size: 50,
            lexical_candidate_pool_size: 50,
            max_results: 10,
            rrf_k: 60,
            lexical_weight: DEFAULT_LEXICAL_WEIGHT,
            semantic_floor: DEFAULT_SEMANTIC_FLOOR,
            semantic_min_similarity: None,
            // No limit: three per file cost held-out recall on every set (issue #46,
            // `docs/design/retrieval.md`, "The rule for a ranking change").
            max_per_file: None,
            ranking: LexicalRanking::default(),
            snippet_tokens: DEFAULT_SNIPPET_TOKENS,
            hit_detail: HitDetail::Compact,
        }
    }
}

/// `knowledgeBase`: the Markdown root and what the server may do with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnowledgeBaseConfig {
    /// `knowledgeBase.root` / `--root`: absolute, existing directory (default: the project
    /// root).
    pub root: PathBuf,
    /// `knowledgeBase.allowWrites`: enables the mutation tools (default `false`).
    pub allow_writes: bool,
    /// `knowledgeBase.watchFiles` / `--watch-files` / `--no-watch-files`: reindex on external
    /// changes (default `false`).
    pub watch_files: bool,
    /// `knowledgeBase.respectIgnoreFiles` / `--no-ignore`: leave out what the project's ignore
    /// files name (default `true`; `workspace/ignore_files.rs`).
    pub respect_ignore_files: bool,
    /// `knowledgeBase.include` / `--include`…: globs of indexed files, at least one (default
    /// `**/*.md`).
    pub include: Vec<String>,
    /// `knowledgeBase.exclude` / `--exclude`…: globs removed from the include set (default
    /// none).
    pub exclude: Vec<String>,
}

/// A named group of MCP tools (`docs/reference/product.md` §5, `docs/reference/catalog-spec.md`
/// §1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ToolGroup {
    /// Search, read, outline, status and the other read-only tools.
    Read,
    /// Markdown mutations (`kb_patch`, `kb_edit_table`, `kb_create`, `kb_move`, `kb_delete`).
    Edit,
    /// Image and file assets.
    Assets,
    /// PDF and HTML export.
    Export,
    /// The document catalog tools.
    Catalog,
}

impl ToolGroup {
    /// Every group, in documentation order.
    pub const ALL: [ToolGroup; 5] =
        [ToolGroup::Read, ToolGroup::Edit, ToolGroup::Assets, ToolGroup::Export, ToolGroup::Catalog];

    /// The configuration spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolGroup::Read => "read",
            ToolGroup::Edit => "edit",
            ToolGroup::Assets => "assets",
            ToolGroup::Export => "export",
            ToolGroup::Catalog => "catalog",
        }
    }

    /// Parses a group name, ignoring ASCII case and surrounding whitespace.
    pub fn parse(s: &str) -> Option<ToolGroup> {
        let s = s.trim();
        ToolGroup::ALL.into_iter().find(|g| s.eq_ignore_ascii_case(g.as_str()))
    }
}

/// One entry of `tools.enabled` / `tools.disabled`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ToolSelector {
    /// A whole group.
    Group(ToolGroup),
    /// One tool by name (`kb_…`, lowercase).
    Tool(String),
}

impl ToolSelector {
    /// Whether this entry selects `tool` (a `kb_…` name) that belongs to `group`.
    pub fn selects(&self, tool: &str, group: ToolGroup) -> bool {
        match self {
            ToolSelector::Group(g) => *g == group,
            ToolSelector::Tool(name) => name.eq_ignore_ascii_case(tool),
        }
    }
}

/// `tools`: the tool profile (`docs/reference/product.md` §5). Independent of `allowWrites`, which
/// still gates the mutation tools that are listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolsConfig {
    /// `tools.enabled`: `None` = every tool; otherwise only the selected ones (never empty).
    pub enabled: Option<Vec<ToolSelector>>,
    /// `tools.disabled`: removed from the enabled set.
    pub disabled: Vec<ToolSelector>,
    /// `tools.maxAnswerBytes`: the default budget of one answer's text (`docs/tools.md`,
    /// "Bounded answers").
    pub max_answer_bytes: usize,
}

/// The default of `tools.maxAnswerBytes`: 32 KiB, which Claude Code, Codex and Gemini CLI all
/// hand their model whole, with margin (`docs/design/clients.md`, "Agent CLIs and the answer
/// budget"; the smallest cut-off is Gemini CLI's 40,000 characters).
pub const DEFAULT_MAX_ANSWER_BYTES: usize = 32 * 1024;

/// The smallest accepted `tools.maxAnswerBytes` (and per-call `maxBytes`).
pub const MIN_ANSWER_BYTES: usize = 1024;

impl Default for ToolsConfig {
    fn default() -> Self {
        ToolsConfig { enabled: None, disabled: Vec::new(), max_answer_bytes: DEFAULT_MAX_ANSWER_BYTES }
    }
}

/// `index`: how the server keeps its index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexConfig {
    /// `index.autoIndex` (default true): a server builds a missing index and rebuilds a damaged
    /// one in the background at start (`docs/tools.md`, "The index builds itself").
    pub auto_index: bool,
}

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig { auto_index: true }
    }
}

impl ToolsConfig {
    /// Whether the server lists `tool` (a `kb_…` name) of `group`.
    pub fn is_enabled(&self, tool: &str, group: ToolGroup) -> bool {
        let enabled = self.enabled.as_ref().is_none_or(|list| list.iter().any(|s| s.selects(tool, group)));
        enabled && !self.disabled.iter().any(|s| s.selects(tool, group))
    }
}

/// The JSON Schema of the YAML configuration file (draft 2020-12), for editors and
/// `schema/config.schema.json`.
pub fn json_schema() -> serde_json::Value {
    file::json_schema()
}
