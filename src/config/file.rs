//! The YAML file as written: raw types, reading, unknown-key warnings, the JSON Schema.
//!
//! Every key is optional here; [`super::load`] applies defaults and overrides. A key set to
//! `null` counts as absent, except where [`Setting`] keeps the difference (the original turns a
//! null string into "required" errors).

use std::path::Path;

use std::fmt;

use schemars::JsonSchema;
use serde::de::{self, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

use crate::error::{Error, ErrorCode, Result};

/// The largest configuration file we read.
const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// The configuration file of local-vector-search-mcp (YAML, camelCase keys). Unknown keys are
/// reported as warnings and ignored.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(title = "local-vector-search-mcp configuration")]
pub(crate) struct FileConfig {
    /// Informational settings.
    pub server: Option<ServerFile>,
    /// Where the derived index lives.
    pub storage: Option<StorageFile>,
    /// The OpenAI-compatible embedding backend.
    pub embedding: Option<EmbeddingFile>,
    /// How documents are cut into chunks.
    pub chunking: Option<ChunkingFile>,
    /// Search defaults.
    pub search: Option<SearchFile>,
    /// The Markdown root and what the server may do with it.
    pub knowledge_base: Option<KnowledgeBaseFile>,
    /// Which MCP tools the server lists, and how long one answer may be.
    pub tools: Option<ToolsFile>,
    /// How the server keeps its index.
    pub index: Option<IndexFile>,
    /// The document catalog settings (see the catalog documentation).
    #[schemars(with = "Option<serde_json::Value>")]
    pub catalog: Option<yaml_serde::Value>,
}

/// `server`.
#[derive(Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ServerFile {
    /// Informational server name.
    #[schemars(extend("default" = "local-vector-search-mcp"))]
    pub name: Option<String>,
    /// Bearer token `serve --http` requires (`--token` and `LVS_HTTP_TOKEN` take precedence).
    /// Keep it out of version control.
    pub http_token: Option<String>,
}

impl fmt::Debug for ServerFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerFile")
            .field("name", &self.name)
            .field("http_token", &self.http_token.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// `storage`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StorageFile {
    /// The index directory, relative to the project root. A path ending in `.db` (the original
    /// server's SQLite file) means its parent directory.
    #[schemars(extend("default" = "./.local-vector-search-mcp"))]
    pub path: Option<String>,
}

/// `embedding`.
// (Its `Debug` output redacts `apiKey`: see the impl below.)
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EmbeddingFile {
    /// `openai-compatible` or `none` (lexical-only, offline). Case-insensitive.
    #[schemars(extend("default" = "openai-compatible", "examples" = ["openai-compatible", "none"]))]
    pub provider: Option<String>,
    /// OpenAI-compatible base URL; requests go to `{endpoint}/embeddings`.
    #[serde(default)]
    #[schemars(with = "Option<String>", extend("default" = "http://localhost:11434/v1"))]
    pub endpoint: Setting<String>,
    /// Sent as `Authorization: Bearer <apiKey>`.
    #[serde(default)]
    #[schemars(with = "Option<String>", extend("default" = "ollama"))]
    pub api_key: Setting<Secret>,
    /// The embedding model.
    #[serde(default)]
    #[schemars(with = "Option<String>", extend("default" = "bge-m3:latest"))]
    pub model: Setting<String>,
    /// Vector dimensions; null means 1024.
    #[schemars(range(min = 1))]
    pub dimensions: Option<i64>,
    /// Texts per embedding request.
    #[schemars(range(min = 1), extend("default" = 16))]
    pub batch_size: Option<i64>,
    /// Allow a non-loopback endpoint.
    #[schemars(extend("default" = false))]
    pub allow_remote_endpoint: Option<bool>,
    /// HTTP timeout of one embedding call, in seconds.
    #[schemars(range(min = 1), extend("default" = 120))]
    pub timeout_seconds: Option<i64>,
    /// Prepended to every query before embedding (e5: `query: `).
    #[schemars(extend("default" = ""))]
    pub query_prefix: Option<String>,
    /// Prepended to every chunk's embedding text (e5: `passage: `).
    #[schemars(extend("default" = ""))]
    pub document_prefix: Option<String>,
    /// `input_type` values sent with queries and documents, for servers that take one.
    pub input_type: Option<InputTypeFile>,
}

/// `embedding.inputType`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InputTypeFile {
    /// Sent as `input_type` with queries (e.g. `query`).
    pub query: Option<String>,
    /// Sent as `input_type` with documents (e.g. `passage`, `document`).
    pub document: Option<String>,
}

/// `chunking`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ChunkingFile {
    /// UTF-8 bytes of chunk text.
    #[schemars(range(min = 1), extend("default" = 4096))]
    pub max_chunk_bytes: Option<i64>,
    /// Elements per chunk.
    #[schemars(range(min = 1), extend("default" = 20))]
    pub max_elements: Option<i64>,
    /// Add a `Heading: …` line to the embedding text.
    #[schemars(extend("default" = true))]
    pub include_heading_context: Option<bool>,
    /// Index front matter as its own chunk.
    #[schemars(extend("default" = true))]
    pub include_front_matter: Option<bool>,
}

/// `search`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SearchFile {
    /// `lexical`, `semantic` or `hybrid`. Case-insensitive.
    #[schemars(extend("default" = "hybrid", "examples" = ["lexical", "semantic", "hybrid"]))]
    pub default_mode: Option<String>,
    /// Vector candidates considered per query.
    #[schemars(range(min = 1), extend("default" = 50))]
    pub semantic_candidate_pool_size: Option<i64>,
    /// Lexical candidates considered per query.
    #[schemars(range(min = 1), extend("default" = 50))]
    pub lexical_candidate_pool_size: Option<i64>,
    /// Results when a request gives no `topK`.
    #[schemars(range(min = 1), extend("default" = 10))]
    pub max_results: Option<i64>,
    /// Reciprocal Rank Fusion constant.
    #[schemars(range(min = 1), extend("default" = 60))]
    pub rrf_k: Option<i64>,
    /// Weight of the lexical list in hybrid fusion (the vector list weighs 1); it counts only for
    /// queries whose words no chunk has all of (else the lexical order stands). The default,
    /// 1000, keeps the lexical order there too: the vectors add the chunks lexical search did not
    /// find, after its hits (chosen on the tuning halves with multilingual-e5-small; a model
    /// that ranks better than the lexical side wants 1.5 to 4).
    #[schemars(range(min = 0.0), extend("default" = 1000.0))]
    pub lexical_weight: Option<f64>,
    /// Vector candidates more than this below the best one's cosine similarity are dropped
    /// (0 disables).
    #[schemars(range(min = 0.0), extend("default" = 0.04))]
    pub semantic_floor: Option<f64>,
    /// Vector candidates below this cosine similarity are dropped (null: no absolute floor).
    pub semantic_min_similarity: Option<f64>,
    /// Most hits one file may have in a result (0: no limit); a request's `maxPerFile`
    /// overrides it.
    #[schemars(range(min = 0), extend("default" = 0))]
    pub max_per_file: Option<i64>,
    /// Tokens in a hit's snippet: the window around the query's words, cut at sentence ends
    /// (16: the original's FTS5 window, without the sentence cut).
    #[schemars(range(min = 4, max = 200), extend("default" = 64))]
    pub snippet_tokens: Option<i64>,
    /// What each hit carries by default: `compact` (path, pointer, headingPath, snippet) or
    /// `full` (the original's shape, with fullPointer, score, searchMode, readHint,
    /// indexedSourceHash and stale on every hit). A request's `detail` overrides it.
    #[schemars(extend("default" = "compact", "enum" = ["compact", "full"]))]
    pub hit_detail: Option<String>,
    /// Lexical ranking: weight of a match in the heading path against one in the text.
    #[schemars(range(min = 0.0), extend("default" = 1.0))]
    pub heading_weight: Option<f64>,
    /// Lexical ranking: extra weight of a match in the chunk's own heading (the last part of
    /// its heading path), on top of headingWeight.
    #[schemars(range(min = 0.0), extend("default" = 2.0))]
    pub own_heading_weight: Option<f64>,
    /// Lexical ranking: weight of the bonus for two consecutive query words standing together
    /// in the text, in query order (0 disables).
    #[schemars(range(min = 0.0), extend("default" = 1.0))]
    pub proximity_weight: Option<f64>,
    /// Lexical ranking: extra positions allowed between two consecutive query words for the
    /// proximity bonus.
    #[schemars(range(min = 0), extend("default" = 2))]
    pub proximity_slop: Option<i64>,
    /// Lexical ranking: how many query words ahead a word is paired with for the proximity
    /// bonus (1: neighbours only).
    #[schemars(range(min = 1, max = 16), extend("default" = 3))]
    pub proximity_reach: Option<i64>,
    /// Lexical ranking: weight of a verb, adjective or adverb against a noun or name.
    #[schemars(range(min = 0.0), extend("default" = 0.5))]
    pub content_word_weight: Option<f64>,
    /// Lexical ranking: weight of a part of a compound the query has whole.
    #[schemars(range(min = 0.0), extend("default" = 1.0))]
    pub loose_weight: Option<f64>,
    /// Lexical ranking: weight of the share of query words a partial match has, against its
    /// BM25 score.
    #[schemars(range(min = 0.0), extend("default" = 2.0))]
    pub coordination_weight: Option<f64>,
    /// Lexical ranking: weight of the re-rank of the best `rerankDepth` candidates by the
    /// query's characters and character pairs they hold, against their rank (0 disables).
    #[schemars(range(min = 0.0), extend("default" = 0.2))]
    pub rerank_weight: Option<f64>,
    /// Lexical ranking: how many of the best candidates the re-rank orders again.
    #[schemars(range(min = 2, max = 200), extend("default" = 10))]
    pub rerank_depth: Option<i64>,
}

/// `knowledgeBase`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct KnowledgeBaseFile {
    /// The Markdown root, relative to the project root. Must exist.
    #[schemars(extend("default" = "."))]
    pub root: Option<String>,
    /// Enable the mutation tools (patch, tables, create, move, delete, image save/delete/move).
    #[schemars(extend("default" = false))]
    pub allow_writes: Option<bool>,
    /// Reindex when files change outside the server.
    #[schemars(extend("default" = false))]
    pub watch_files: Option<bool>,
    /// Leave out what the project's ignore files name: `.gitignore` (nested ones too), `.ignore`,
    /// `.git/info/exclude`, git's global excludes. `include`/`exclude` apply on top.
    #[schemars(extend("default" = true))]
    pub respect_ignore_files: Option<bool>,
    /// Globs of indexed files (case-insensitive, `/`-separated, relative to the root).
    #[serde(default)]
    #[schemars(with = "Option<Vec<String>>", extend("default" = ["**/*.md"]))]
    pub include: Setting<StringList>,
    /// Globs removed from the include set.
    #[schemars(with = "Option<Vec<String>>", extend("default" = []))]
    pub exclude: Option<StringList>,
}

/// `tools`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolsFile {
    /// Tool names (`kb_…`) or groups (`read`, `edit`, `assets`, `export`, `catalog`) to list;
    /// absent = every tool.
    #[schemars(with = "Option<Vec<String>>")]
    pub enabled: Option<StringList>,
    /// Tool names or groups never to list.
    #[schemars(with = "Option<Vec<String>>")]
    pub disabled: Option<StringList>,
    /// The most bytes of text one tool answer carries before it is paged (a call may ask for
    /// more, or less, with its own `maxBytes`).
    #[schemars(range(min = 1024), extend("default" = 32768))]
    pub max_answer_bytes: Option<u64>,
}

/// `index`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct IndexFile {
    /// The server builds a missing index, and rebuilds a damaged one, in the background as soon
    /// as it starts (false: only `kb_reindex` or the CLI `reindex` build it).
    #[schemars(extend("default" = true))]
    pub auto_index: Option<bool>,
}

/// A secret text (the embedding API key): read like a string, shown as `<redacted>` by `Debug`,
/// so the file's section can derive `Debug` without a hand-written list of its fields.
#[derive(Default, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub(crate) struct Secret(pub String);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"<redacted>\"")
    }
}

/// A key that tells "absent" from "null" (`#[serde(default)]` gives [`Setting::Absent`]).
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) enum Setting<T> {
    /// The key is not in the file.
    #[default]
    Absent,
    /// The key is present with a null (or empty) value.
    Null,
    /// The key has a value.
    Value(T),
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Setting<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        Ok(Option::<T>::deserialize(d)?.map_or(Setting::Null, Setting::Value))
    }
}

/// A list of strings, also written as a single string. A null item becomes `None` (blank).
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct StringList(pub Vec<Option<String>>);

impl<'de> Deserialize<'de> for StringList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct ListVisitor;
        impl<'de> Visitor<'de> for ListVisitor {
            type Value = StringList;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or a list of strings")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<StringList, E> {
                Ok(StringList(vec![Some(v.to_owned())]))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<StringList, E> {
                Ok(StringList(vec![Some(v.to_string())]))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<StringList, E> {
                Ok(StringList(vec![Some(v.to_string())]))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<StringList, E> {
                Ok(StringList(vec![Some(v.to_string())]))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> std::result::Result<StringList, E> {
                Ok(StringList(vec![Some(v.to_string())]))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<StringList, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<Option<Scalar>>()? {
                    items.push(item.map(|s| s.0));
                }
                Ok(StringList(items))
            }
        }
        d.deserialize_any(ListVisitor)
    }
}

/// One scalar list item as text (strings, numbers and booleans).
struct Scalar(String);

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct ScalarVisitor;
        impl Visitor<'_> for ScalarVisitor {
            type Value = Scalar;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Scalar, E> {
                Ok(Scalar(v.to_owned()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> std::result::Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
        }
        d.deserialize_any(ScalarVisitor)
    }
}

/// The text of a scalar (strings, numbers, booleans), `None` for anything else.
fn scalar_text(value: &yaml_serde::Value) -> Option<String> {
    match value {
        yaml_serde::Value::String(s) => Some(s.clone()),
        yaml_serde::Value::Number(n) => Some(n.to_string()),
        yaml_serde::Value::Bool(b) => Some(b.to_string()),
        yaml_serde::Value::Tagged(tagged) => scalar_text(&tagged.value),
        _ => None,
    }
}

/// A parsed file and the warnings found in it.
pub(crate) struct ReadFile {
    /// The typed content.
    pub config: FileConfig,
    /// Unknown keys, in file order.
    pub warnings: Vec<String>,
}

/// Reads and decodes the YAML file at `path` (absolute); `shown` names it in messages.
pub(crate) fn read(path: &Path, shown: &str) -> Result<ReadFile> {
    let invalid =
        |details: &str| Error::invalid_argument(format!("Configuration file is invalid: {shown}. {details}"));
    let meta = std::fs::metadata(path).map_err(|e| read_error(path, &e))?;
    if meta.is_dir() {
        return Err(Error::invalid_argument(format!(
            "Configuration file is a directory, not a YAML file: {}.",
            path.display()
        )));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(invalid("It is larger than 1 MiB; a configuration file is a few lines of YAML."));
    }
    let bytes = std::fs::read(path).map_err(|e| read_error(path, &e))?;
    let text = String::from_utf8(bytes).map_err(|_| invalid("It is not UTF-8 text; save it as UTF-8."))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    parse(text, shown)
}

/// Decodes YAML text; `shown` names the file in messages.
pub(crate) fn parse(text: &str, shown: &str) -> Result<ReadFile> {
    let invalid = |details: String| {
        Error::invalid_argument(format!("Configuration file is invalid: {shown}. {details}"))
    };
    let value: yaml_serde::Value =
        yaml_serde::from_str(text).map_err(|e| invalid(describe_yaml_error(&e, "YAML syntax error")))?;
    let root = match &value {
        yaml_serde::Value::Null => None,
        yaml_serde::Value::Mapping(map) => Some(map),
        _ => {
            return Err(invalid(
                "The top level must be a mapping of sections such as knowledgeBase: and embedding:."
                    .to_owned(),
            ));
        }
    };
    let mut warnings = Vec::new();
    if let Some(map) = root {
        if map.contains_key("knowledgeBases") {
            return Err(Error::invalid_argument(
                "knowledgeBases list is no longer supported. Use singular knowledgeBase instead.",
            ));
        }
        unknown_keys(map, KNOWN_ROOT, "", &mut warnings);
    }
    let config = if root.is_some() {
        yaml_serde::from_str::<FileConfig>(text)
            .map_err(|e| invalid(describe_yaml_error(&e, "Wrong value")))?
    } else {
        FileConfig::default()
    };
    Ok(ReadFile { config, warnings })
}

/// An I/O failure on the configuration file.
fn read_error(path: &Path, err: &std::io::Error) -> Error {
    match err.kind() {
        std::io::ErrorKind::NotFound => {
            Error::not_found(format!("Configuration file was not found: {}", path.display()))
        }
        std::io::ErrorKind::PermissionDenied => Error::new(
            ErrorCode::PermissionDenied,
            format!(
                "Configuration file {} cannot be read: access was denied; check its permissions.",
                path.display()
            ),
        ),
        _ => Error::invalid_argument(format!("Configuration file {} cannot be read: {err}.", path.display())),
    }
}

/// One sentence for a YAML error: `<what> at line L, column C: <reason>.`
fn describe_yaml_error(err: &yaml_serde::Error, what: &str) -> String {
    let mut reason = err.to_string();
    let position = err.location().map(|loc| {
        let (line, column) = (loc.line(), loc.column());
        reason = reason.replace(&format!(" at line {line} column {column}"), "");
        format!(" at line {line}, column {column}")
    });
    let mut reason = reason
        .replace("expected i64", "expected an integer")
        .replace("expected a boolean", "expected true or false");
    if let Some(at) = reason.find("expected struct ") {
        let name = at + "expected struct ".len();
        let end = reason[name..]
            .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .map_or(reason.len(), |j| name + j);
        reason.replace_range(at..end, "expected a mapping of keys");
    }
    let reason = reason.trim_end_matches('.');
    format!("{what}{}: {reason}.", position.unwrap_or_default())
}

/// The known keys of one mapping level.
type Known = &'static [(&'static str, Node)];

/// What a known key holds, for the unknown-key walk.
#[derive(Clone, Copy)]
enum Node {
    /// A value whose inside is not checked.
    Leaf,
    /// A mapping with these keys.
    Map(Known),
}

const KNOWN_ROOT: Known = &[
    ("server", Node::Map(&[("name", Node::Leaf), ("httpToken", Node::Leaf)])),
    ("storage", Node::Map(&[("path", Node::Leaf)])),
    (
        "embedding",
        Node::Map(&[
            ("provider", Node::Leaf),
            ("endpoint", Node::Leaf),
            ("apiKey", Node::Leaf),
            ("model", Node::Leaf),
            ("dimensions", Node::Leaf),
            ("batchSize", Node::Leaf),
            ("allowRemoteEndpoint", Node::Leaf),
            ("timeoutSeconds", Node::Leaf),
            ("queryPrefix", Node::Leaf),
            ("documentPrefix", Node::Leaf),
            ("inputType", Node::Map(&[("query", Node::Leaf), ("document", Node::Leaf)])),
        ]),
    ),
    (
        "chunking",
        Node::Map(&[
            ("maxChunkBytes", Node::Leaf),
            ("maxElements", Node::Leaf),
            ("includeHeadingContext", Node::Leaf),
            ("includeFrontMatter", Node::Leaf),
        ]),
    ),
    (
        "search",
        Node::Map(&[
            ("defaultMode", Node::Leaf),
            ("semanticCandidatePoolSize", Node::Leaf),
            ("lexicalCandidatePoolSize", Node::Leaf),
            ("maxResults", Node::Leaf),
            ("rrfK", Node::Leaf),
            ("lexicalWeight", Node::Leaf),
            ("semanticFloor", Node::Leaf),
            ("semanticMinSimilarity", Node::Leaf),
            ("maxPerFile", Node::Leaf),
            ("snippetTokens", Node::Leaf),
            ("hitDetail", Node::Leaf),
            ("headingWeight", Node::Leaf),
            ("ownHeadingWeight", Node::Leaf),
            ("proximityWeight", Node::Leaf),
            ("proximitySlop", Node::Leaf),
            ("proximityReach", Node::Leaf),
            ("contentWordWeight", Node::Leaf),
            ("looseWeight", Node::Leaf),
            ("coordinationWeight", Node::Leaf),
            ("rerankWeight", Node::Leaf),
            ("rerankDepth", Node::Leaf),
        ]),
    ),
    (
        "knowledgeBase",
        Node::Map(&[
            ("root", Node::Leaf),
            ("allowWrites", Node::Leaf),
            ("watchFiles", Node::Leaf),
            ("respectIgnoreFiles", Node::Leaf),
            ("include", Node::Leaf),
            ("exclude", Node::Leaf),
        ]),
    ),
    (
        "tools",
        Node::Map(&[("enabled", Node::Leaf), ("disabled", Node::Leaf), ("maxAnswerBytes", Node::Leaf)]),
    ),
    ("index", Node::Map(&[("autoIndex", Node::Leaf)])),
    // `docs/reference/catalog-spec.md` §3.3: the catalog module interprets the values; the keys are
    // checked here so every unknown key of the server configuration is reported the same way.
    (
        "catalog",
        Node::Map(&[
            ("index", Node::Leaf),
            ("language", Node::Leaf),
            ("scan", Node::Leaf),
            ("check", Node::Map(&[("ignore", Node::Leaf)])),
            (
                "html",
                Node::Map(&[
                    ("lang", Node::Leaf),
                    ("toc", Node::Leaf),
                    ("tocDepth", Node::Leaf),
                    ("highlight", Node::Leaf),
                ]),
            ),
            (
                "build",
                Node::Map(&[
                    ("include", Node::Leaf),
                    ("exclude", Node::Leaf),
                    ("out", Node::Leaf),
                    ("title", Node::Leaf),
                ]),
            ),
        ]),
    ),
];

/// Appends a warning for every key of `map` (at dotted `prefix`) that `known` does not list.
fn unknown_keys(map: &yaml_serde::Mapping, known: Known, prefix: &str, out: &mut Vec<String>) {
    for (key, value) in map {
        let name = key_text(key);
        let full = if prefix.is_empty() { name.clone() } else { format!("{prefix}.{name}") };
        match known.iter().find(|(k, _)| *k == name) {
            Some((_, Node::Map(inner))) => {
                if let yaml_serde::Value::Mapping(inner_map) = value {
                    unknown_keys(inner_map, inner, &full, out);
                }
            }
            Some((_, Node::Leaf)) => {}
            None => {
                let hint = known
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(&name))
                    .map(|(k, _)| {
                        let k = if prefix.is_empty() { (*k).to_owned() } else { format!("{prefix}.{k}") };
                        format!(" Did you mean '{k}'? Keys are case-sensitive.")
                    })
                    .unwrap_or_default();
                out.push(format!("Unknown configuration key '{full}' was ignored.{hint}"));
            }
        }
    }
}

/// A mapping key as text.
fn key_text(key: &yaml_serde::Value) -> String {
    match key {
        yaml_serde::Value::Null => "~".to_owned(),
        other => scalar_text(other).unwrap_or_else(|| "<complex key>".to_owned()),
    }
}

/// The known key tree as dotted paths of leaves (tests compare it with the schema).
#[cfg(test)]
pub(crate) fn known_leaf_paths() -> Vec<String> {
    fn walk(known: Known, prefix: &str, out: &mut Vec<String>) {
        for (k, node) in known {
            let full = if prefix.is_empty() { (*k).to_owned() } else { format!("{prefix}.{k}") };
            match node {
                Node::Leaf => out.push(full),
                Node::Map(inner) => walk(inner, &full, out),
            }
        }
    }
    let mut out = Vec::new();
    walk(KNOWN_ROOT, "", &mut out);
    out
}

/// The JSON Schema of [`FileConfig`].
pub(crate) fn json_schema() -> serde_json::Value {
    let schema = schemars::schema_for!(FileConfig);
    serde_json::to_value(&schema).unwrap_or(serde_json::Value::Null)
}
