//! Loading: project root → YAML file → overrides → path resolution → validation.

use std::net::IpAddr;
use std::path::{Component, Path, PathBuf};

use super::file::{self, FileConfig, Setting, StringList};
use super::{
    ChunkingConfig, CliOverrides, Config, DEFAULT_EMBEDDING_API_KEY, DEFAULT_EMBEDDING_ENDPOINT,
    DEFAULT_EMBEDDING_MODEL, DEFAULT_INCLUDE, DEFAULT_MAX_ANSWER_BYTES, DEFAULT_SERVER_NAME, EmbeddingConfig,
    EmbeddingProvider, HitDetail, IndexConfig, InputTypes, KnowledgeBaseConfig, LexicalRanking, Loaded,
    MIN_ANSWER_BYTES, PROJECT_DIR_ENV, ProjectRootSource, STORAGE_DIR_NAME, SearchConfig, SearchMode,
    ServerConfig, StorageConfig, ToolGroup, ToolSelector, ToolsConfig,
};
use crate::error::{Error, Result};

/// Loads the configuration with the precedence of `docs/reference/original-server.md` §3.1:
/// built-in defaults, then the `--config` YAML file (only when given; nothing is discovered
/// implicitly), then the command-line overrides, then path resolution against the project root,
/// then validation.
///
/// `env` reads an environment variable (only `CLAUDE_PROJECT_DIR` is consulted); `cwd` is the
/// process working directory (absolute). Failures are one-sentence errors: `INVALID_ARGUMENT`
/// for bad values (the contract's texts), `NOT_FOUND` for a missing `--config` file.
pub fn load(overrides: &CliOverrides, env: &dyn Fn(&str) -> Option<String>, cwd: &Path) -> Result<Loaded> {
    let cwd = normalize(cwd);
    let (project_root, project_root_source) = project_root(overrides, env, &cwd)?;
    let mut warnings = Vec::new();

    let (file, config_file) = match &overrides.config {
        Some(given) => {
            if is_blank_path(given) {
                return Err(Error::invalid_argument("--config requires a value."));
            }
            // Relative to the working directory, or to an explicit --project-root (§2.1).
            let base = if overrides.project_root.is_some() { &project_root } else { &cwd };
            let path = resolve(base, given);
            let read = file::read(&path, &given.display().to_string())?;
            warnings.extend(read.warnings);
            (read.config, Some(path))
        }
        None => (FileConfig::default(), None),
    };

    let config = build(project_root, project_root_source, config_file, file, overrides, &mut warnings)?;
    Ok(Loaded { config, warnings })
}

/// The project root: `--project-root`, else a non-empty `CLAUDE_PROJECT_DIR`, else `cwd`.
fn project_root(
    overrides: &CliOverrides,
    env: &dyn Fn(&str) -> Option<String>,
    cwd: &Path,
) -> Result<(PathBuf, ProjectRootSource)> {
    if let Some(given) = &overrides.project_root {
        // Relative: against the working directory, as every command-line tool does (issue #26;
        // an MCP client's configuration should still name an absolute path: docs/tools.md).
        let root = resolve(cwd, given);
        check_dir(&root, |what| match what {
            DirProblem::Missing => format!(
                "--project-root directory does not exist: {}; create it or pass an existing directory.",
                root.display()
            ),
            DirProblem::NotDir => format!(
                "--project-root is not a directory: {}; pass the project's directory.",
                root.display()
            ),
        })?;
        return Ok((root, ProjectRootSource::Flag));
    }
    if let Some(value) = env(PROJECT_DIR_ENV).filter(|v| !v.trim().is_empty()) {
        let root = resolve(cwd, Path::new(&value));
        check_dir(&root, |what| {
            let problem = match what {
                DirProblem::Missing => "does not exist",
                DirProblem::NotDir => "is not a directory",
            };
            format!(
                "{PROJECT_DIR_ENV} names {}, which {problem}; fix the variable or pass --project-root.",
                root.display()
            )
        })?;
        return Ok((root, ProjectRootSource::Env));
    }
    Ok((cwd.to_path_buf(), ProjectRootSource::WorkingDirectory))
}

/// Why a directory check failed.
enum DirProblem {
    Missing,
    NotDir,
}

/// Fails with `message(problem)` unless `path` is an existing directory.
fn check_dir(path: &Path, message: impl Fn(DirProblem) -> String) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(Error::invalid_argument(message(DirProblem::NotDir))),
        Err(_) => Err(Error::invalid_argument(message(DirProblem::Missing))),
    }
}

/// Merges defaults, file and overrides, resolves paths and validates, in the order of the
/// original validator (`docs/reference/original-server.md` §3.3): storage, root, patterns,
/// embedding, chunking, search, tools. Each section is one function below, called in that order.
fn build(
    project_root: PathBuf,
    project_root_source: ProjectRootSource,
    config_file: Option<PathBuf>,
    file: FileConfig,
    cli: &CliOverrides,
    warnings: &mut Vec<String>,
) -> Result<Config> {
    let server = file.server.unwrap_or_default();
    let kb = file.knowledge_base.unwrap_or_default();
    let storage = storage_setting(&project_root, cli, file.storage.unwrap_or_default())?;
    let root = knowledge_base_root(&project_root, cli, &kb)?;
    let (include, exclude) = patterns(cli, kb.include, kb.exclude)?;
    let embedding = embedding_config(cli, file.embedding.unwrap_or_default())?;
    let chunking = chunking_config(file.chunking.unwrap_or_default())?;
    let search = search_config(cli, file.search.unwrap_or_default(), embedding.provider)?;
    let tools = tools_config(file.tools.unwrap_or_default(), warnings)?;
    let index = file.index.unwrap_or_default();
    Ok(Config {
        project_root,
        project_root_source,
        config_file,
        server: ServerConfig {
            name: server.name.unwrap_or_else(|| DEFAULT_SERVER_NAME.to_owned()),
            http_token: server.http_token.filter(|t| !t.is_empty()),
        },
        storage,
        embedding,
        chunking,
        search,
        knowledge_base: KnowledgeBaseConfig {
            root,
            allow_writes: kb.allow_writes.unwrap_or(false),
            watch_files: cli.watch_files.or(kb.watch_files).unwrap_or(false),
            respect_ignore_files: cli.respect_ignore_files.or(kb.respect_ignore_files).unwrap_or(true),
            include,
            exclude,
        },
        tools,
        index: IndexConfig { auto_index: index.auto_index.unwrap_or(true) },
        catalog: file.catalog.filter(|v| !v.is_null()),
    })
}

/// `storage.path`: the override, the file's, else `./.lvs`, resolved against the project root.
fn storage_setting(
    project_root: &Path,
    cli: &CliOverrides,
    storage: file::StorageFile,
) -> Result<StorageConfig> {
    let storage_path = match (&cli.storage_path, &storage.path) {
        (Some(p), _) => p.clone(),
        (None, Some(p)) => PathBuf::from(p),
        (None, None) => PathBuf::from(".").join(STORAGE_DIR_NAME),
    };
    if is_blank_path(&storage_path) {
        return Err(Error::invalid_argument("storage.path is required."));
    }
    Ok(storage_dir(resolve(project_root, &storage_path)))
}

/// `knowledgeBase.root`, resolved against the project root: an existing directory.
fn knowledge_base_root(
    project_root: &Path,
    cli: &CliOverrides,
    kb: &file::KnowledgeBaseFile,
) -> Result<PathBuf> {
    let root = match (&cli.root, &kb.root) {
        (Some(p), _) => p.clone(),
        (None, Some(p)) => PathBuf::from(p),
        (None, None) => PathBuf::from("."),
    };
    if is_blank_path(&root) {
        return Err(Error::invalid_argument("knowledgeBase.root is required."));
    }
    let root = resolve(project_root, &root);
    if !root.is_absolute() {
        return Err(Error::invalid_argument("knowledgeBase.root must be absolute after path resolution."));
    }
    match std::fs::metadata(&root) {
        Ok(meta) if meta.is_dir() => Ok(root),
        Ok(_) => Err(Error::invalid_argument("knowledgeBase.root must be a directory, but it names a file.")),
        Err(_) => Err(Error::invalid_argument("knowledgeBase.root does not exist.")),
    }
}

/// `knowledgeBase.include` / `exclude`: non-blank patterns that compile.
fn patterns(
    cli: &CliOverrides,
    include: Setting<StringList>,
    exclude: Option<StringList>,
) -> Result<(Vec<String>, Vec<String>)> {
    let include: Vec<Option<String>> = match (&cli.include, include) {
        (Some(list), _) => list.iter().cloned().map(Some).collect(),
        (None, Setting::Value(StringList(list))) => list,
        (None, Setting::Null) => Vec::new(),
        (None, Setting::Absent) => vec![Some(DEFAULT_INCLUDE.to_owned())],
    };
    let exclude: Vec<Option<String>> = match (&cli.exclude, exclude) {
        (Some(list), _) => list.iter().cloned().map(Some).collect(),
        (None, Some(StringList(list))) => list,
        (None, None) => Vec::new(),
    };
    if include.is_empty() {
        return Err(Error::invalid_argument("knowledgeBase.include must contain at least one pattern."));
    }
    let include = non_blank(include).ok_or_else(blank_pattern)?;
    let exclude = non_blank(exclude).ok_or_else(blank_pattern)?;
    crate::workspace::GlobFilter::with_names(
        &include,
        &exclude,
        "knowledgeBase.include",
        "knowledgeBase.exclude",
    )?;
    Ok((include, exclude))
}

/// A text setting: the override, the file's value (`null` = empty), else `default`.
fn text_setting(cli: &Option<String>, file: Setting<String>, default: &str) -> String {
    match (cli, file) {
        (Some(v), _) => v.clone(),
        (None, Setting::Value(v)) => v,
        (None, Setting::Null) => String::new(),
        (None, Setting::Absent) => default.to_owned(),
    }
}

/// `embedding.*`: the provider, and for `openai-compatible` a key, a model and a local endpoint
/// (unless `allowRemoteEndpoint`).
fn embedding_config(cli: &CliOverrides, embedding: file::EmbeddingFile) -> Result<EmbeddingConfig> {
    let provider = match (cli.embedding_provider, &embedding.provider) {
        (Some(p), _) => p,
        (None, Some(text)) => EmbeddingProvider::parse(text).ok_or_else(|| {
            Error::invalid_argument(format!(
                "embedding.provider must be openai-compatible or none, not '{text}'."
            ))
        })?,
        (None, None) => EmbeddingProvider::OpenAiCompatible,
    };
    let endpoint = text_setting(&cli.embedding_endpoint, embedding.endpoint, DEFAULT_EMBEDDING_ENDPOINT);
    let api_key = match embedding.api_key {
        Setting::Value(file::Secret(key)) => Setting::Value(key),
        Setting::Null => Setting::Null,
        Setting::Absent => Setting::Absent,
    };
    let api_key = text_setting(&None, api_key, DEFAULT_EMBEDDING_API_KEY);
    let model = text_setting(&cli.embedding_model, embedding.model, DEFAULT_EMBEDDING_MODEL);
    let allow_remote_endpoint = embedding.allow_remote_endpoint.unwrap_or(false);
    let defaults = EmbeddingConfig::default();
    if provider == EmbeddingProvider::OpenAiCompatible {
        if api_key.trim().is_empty() {
            return Err(Error::invalid_argument("embedding.apiKey is required."));
        }
        if model.trim().is_empty() {
            return Err(Error::invalid_argument("embedding.model is required."));
        }
    }
    let dimensions = match embedding.dimensions {
        None => None,
        Some(n) if n <= 0 => {
            return Err(Error::invalid_argument(
                "embedding.dimensions must be greater than 0 when specified.",
            ));
        }
        Some(n) => Some(positive("embedding.dimensions", n)?),
    };
    let batch_size = count("embedding.batchSize", embedding.batch_size, defaults.batch_size)?;
    let timeout_seconds =
        count("embedding.timeoutSeconds", embedding.timeout_seconds, defaults.timeout_seconds)?;
    let endpoint = endpoint.trim().to_owned();
    if provider == EmbeddingProvider::OpenAiCompatible {
        check_endpoint(&endpoint, allow_remote_endpoint)?;
    }
    Ok(EmbeddingConfig {
        provider,
        endpoint,
        api_key,
        model,
        dimensions,
        batch_size,
        allow_remote_endpoint,
        timeout_seconds,
        query_prefix: embedding.query_prefix.unwrap_or_default(),
        document_prefix: embedding.document_prefix.unwrap_or_default(),
        input_type: input_types(embedding.input_type)?,
    })
}

/// `embedding.inputType`: both `query` and `document`, or neither.
fn input_types(input_type: Option<file::InputTypeFile>) -> Result<Option<InputTypes>> {
    match input_type {
        None => Ok(None),
        Some(t) => match (t.query, t.document) {
            (Some(query), Some(document)) if !query.trim().is_empty() && !document.trim().is_empty() => {
                Ok(Some(InputTypes { query, document }))
            }
            _ => Err(Error::invalid_argument(
                "embedding.inputType needs both query and document (e.g. query: query, document: passage).",
            )),
        },
    }
}

/// `chunking.*`.
fn chunking_config(chunking: file::ChunkingFile) -> Result<ChunkingConfig> {
    let chunk_defaults = ChunkingConfig::default();
    Ok(ChunkingConfig {
        max_chunk_bytes: count(
            "chunking.maxChunkBytes",
            chunking.max_chunk_bytes,
            chunk_defaults.max_chunk_bytes,
        )?,
        max_elements: count("chunking.maxElements", chunking.max_elements, chunk_defaults.max_elements)?,
        include_heading_context: chunking
            .include_heading_context
            .unwrap_or(chunk_defaults.include_heading_context),
        include_front_matter: chunking.include_front_matter.unwrap_or(chunk_defaults.include_front_matter),
    })
}

/// `search.*`.
///
/// Unset, `search.defaultMode` is `hybrid` with an embedding provider and `lexical` without one:
/// a search that does not name its mode then runs what the server can run, without the contract's
/// fallback warning on every answer (`docs/tools.md`, "The hit shape"). A `defaultMode: hybrid`
/// set with no provider keeps the contract's warning.
fn search_config(
    cli: &CliOverrides,
    search: file::SearchFile,
    provider: EmbeddingProvider,
) -> Result<SearchConfig> {
    let search_defaults = SearchConfig::default();
    let default_mode = match (cli.search_mode, &search.default_mode) {
        (Some(m), _) => m,
        (None, Some(text)) => SearchMode::parse(text).ok_or_else(|| {
            Error::invalid_argument(format!(
                "search.defaultMode must be lexical, semantic or hybrid, not '{text}'."
            ))
        })?,
        (None, None) if provider == EmbeddingProvider::None => SearchMode::Lexical,
        (None, None) => search_defaults.default_mode,
    };
    Ok(SearchConfig {
        default_mode,
        semantic_candidate_pool_size: count(
            "search.semanticCandidatePoolSize",
            search.semantic_candidate_pool_size,
            search_defaults.semantic_candidate_pool_size,
        )?,
        lexical_candidate_pool_size: count(
            "search.lexicalCandidatePoolSize",
            search.lexical_candidate_pool_size,
            search_defaults.lexical_candidate_pool_size,
        )?,
        max_results: count("search.maxResults", search.max_results, search_defaults.max_results)?,
        rrf_k: count("search.rrfK", search.rrf_k, search_defaults.rrf_k)?,
        lexical_weight: non_negative(
            "search.lexicalWeight",
            search.lexical_weight,
            search_defaults.lexical_weight,
        )?,
        semantic_floor: non_negative(
            "search.semanticFloor",
            search.semantic_floor,
            search_defaults.semantic_floor,
        )?,
        semantic_min_similarity: match search.semantic_min_similarity {
            Some(v) if !(-1.0..=1.0).contains(&v) => {
                return Err(Error::invalid_argument(
                    "search.semanticMinSimilarity must be a cosine similarity between -1 and 1.",
                ));
            }
            v => v,
        },
        max_per_file: match search.max_per_file {
            None => search_defaults.max_per_file,
            Some(0) => None,
            Some(n) if n < 0 => {
                return Err(Error::invalid_argument("search.maxPerFile must be 0 (no limit) or more."));
            }
            Some(n) => Some(positive("search.maxPerFile", n)?),
        },
        ranking: ranking(&search, search_defaults.ranking)?,
        snippet_tokens: whole_in(
            "search.snippetTokens",
            search.snippet_tokens,
            search_defaults.snippet_tokens,
            4,
            200,
        )?,
        hit_detail: match &search.hit_detail {
            None => search_defaults.hit_detail,
            Some(text) => <HitDetail as crate::wire::ValueSet>::find(text).ok_or_else(|| {
                Error::invalid_argument(format!("search.hitDetail must be compact or full, not '{text}'."))
            })?,
        },
    })
}

/// The lexical ranking weights of `search.*`.
fn ranking(search: &file::SearchFile, d: LexicalRanking) -> Result<LexicalRanking> {
    Ok(LexicalRanking {
        heading_weight: non_negative("search.headingWeight", search.heading_weight, d.heading_weight)?,
        own_heading_weight: non_negative(
            "search.ownHeadingWeight",
            search.own_heading_weight,
            d.own_heading_weight,
        )?,
        proximity_weight: non_negative(
            "search.proximityWeight",
            search.proximity_weight,
            d.proximity_weight,
        )?,
        proximity_slop: whole_in("search.proximitySlop", search.proximity_slop, d.proximity_slop, 0, 64)?,
        proximity_reach: whole_in("search.proximityReach", search.proximity_reach, d.proximity_reach, 1, 16)?,
        content_word_weight: non_negative(
            "search.contentWordWeight",
            search.content_word_weight,
            d.content_word_weight,
        )?,
        loose_weight: non_negative("search.looseWeight", search.loose_weight, d.loose_weight)?,
        coordination_weight: non_negative(
            "search.coordinationWeight",
            search.coordination_weight,
            d.coordination_weight,
        )?,
        rerank_weight: non_negative("search.rerankWeight", search.rerank_weight, d.rerank_weight)?,
        rerank_depth: whole_in("search.rerankDepth", search.rerank_depth, d.rerank_depth, 2, 200)?,
    })
}

/// `value` (or `default` when absent) if it lies in `lo..=hi`, else `<key> must be a whole number
/// from <lo> to <hi>.`.
fn whole_in<T: TryFrom<i64>>(key: &str, value: Option<i64>, default: T, lo: i64, hi: i64) -> Result<T> {
    let Some(n) = value else { return Ok(default) };
    (lo..=hi)
        .contains(&n)
        .then(|| T::try_from(n).ok())
        .flatten()
        .ok_or_else(|| Error::invalid_argument(format!("{key} must be a whole number from {lo} to {hi}.")))
}

/// `tools.*`: the enabled and disabled selectors and the answer budget.
fn tools_config(tools: file::ToolsFile, warnings: &mut Vec<String>) -> Result<ToolsConfig> {
    let enabled = match tools.enabled {
        None => None,
        Some(StringList(list)) => {
            let selectors = tool_selectors("tools.enabled", list, warnings)?;
            if selectors.is_empty() {
                return Err(Error::invalid_argument(
                    "tools.enabled must name at least one tool or group; remove the key to enable every tool.",
                ));
            }
            Some(selectors)
        }
    };
    let disabled = match tools.disabled {
        None => Vec::new(),
        Some(StringList(list)) => tool_selectors("tools.disabled", list, warnings)?,
    };
    let max_answer_bytes = match tools.max_answer_bytes {
        None => DEFAULT_MAX_ANSWER_BYTES,
        Some(n) if (n as usize) < MIN_ANSWER_BYTES => {
            return Err(Error::invalid_argument(format!(
                "tools.maxAnswerBytes must be at least {MIN_ANSWER_BYTES}; remove the key for the default of {DEFAULT_MAX_ANSWER_BYTES}."
            )));
        }
        Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
    };
    Ok(ToolsConfig { enabled, disabled, max_answer_bytes })
}

/// The storage directory for a resolved `storage.path`: a path ending in `.db` that is not an
/// existing directory names the original's SQLite file, so its parent directory is used.
fn storage_dir(path: PathBuf) -> StorageConfig {
    let is_db = path.extension().is_some_and(|ext| ext.eq_ignore_ascii_case("db"));
    match path.parent() {
        Some(parent) if is_db && !path.is_dir() => {
            StorageConfig { path: parent.to_path_buf(), db_file: Some(path) }
        }
        _ => StorageConfig { path, db_file: None },
    }
}

/// The message for a blank include or exclude pattern.
fn blank_pattern() -> Error {
    Error::invalid_argument("knowledgeBase include and exclude patterns must not be blank.")
}

/// The list without `None`s, or `None` if any item is missing or blank.
fn non_blank(list: Vec<Option<String>>) -> Option<Vec<String>> {
    list.into_iter().map(|item| item.filter(|s| !s.trim().is_empty())).collect()
}

/// `value` (or `default` when unset) as a positive count; the contract's message otherwise.
fn count<T: TryFrom<i64>>(key: &str, value: Option<i64>, default: T) -> Result<T> {
    match value {
        None => Ok(default),
        Some(n) => positive(key, n),
    }
}

/// A finite number ≥ 0, or `<key> must be a number of 0 or more.`.
fn non_negative(key: &str, value: Option<f64>, default: f64) -> Result<f64> {
    match value {
        None => Ok(default),
        Some(v) if v.is_finite() && v >= 0.0 => Ok(v),
        Some(_) => Err(Error::invalid_argument(format!("{key} must be a number of 0 or more."))),
    }
}

/// `n` as a positive `T`, or `<key> must be greater than 0.` / `<key> is too large.`.
fn positive<T: TryFrom<i64>>(key: &str, n: i64) -> Result<T> {
    if n <= 0 {
        return Err(Error::invalid_argument(format!("{key} must be greater than 0.")));
    }
    T::try_from(n).map_err(|_| Error::invalid_argument(format!("{key} is too large ({n}).")))
}

/// Checks `embedding.endpoint`: an absolute http(s) URI whose host is loopback unless remote
/// endpoints are allowed.
fn check_endpoint(endpoint: &str, allow_remote: bool) -> Result<()> {
    let host = uri_host(endpoint)
        .ok_or_else(|| Error::invalid_argument("embedding.endpoint must be an absolute URI."))?;
    let scheme = endpoint.split(':').next().unwrap_or_default();
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return Err(Error::invalid_argument(format!(
            "embedding.endpoint must use http or https, not '{scheme}'."
        )));
    }
    if !allow_remote && !is_loopback_host(&host) {
        return Err(Error::invalid_argument(
            "embedding.endpoint must be loopback unless allowRemoteEndpoint is true.",
        ));
    }
    Ok(())
}

/// The host of an absolute `scheme://[userinfo@]host[:port][/…]` URI, brackets kept for IPv6;
/// `None` if `uri` is not of that form.
pub(crate) fn uri_host(uri: &str) -> Option<String> {
    let (scheme, rest) = uri.split_once("://")?;
    let mut chars = scheme.chars();
    let scheme_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !scheme_ok || uri.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, hp)| hp);
    let (host, port) = if host_port.starts_with('[') {
        let end = host_port.find(']')?;
        let (host, after) = host_port.split_at(end + 1);
        match after {
            "" => (host, None),
            _ => (host, Some(after.strip_prefix(':')?)),
        }
    } else {
        match host_port.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (host_port, None),
        }
    };
    if host.is_empty() || host.len() > 255 {
        return None;
    }
    if let Some(port) = port
        && (port.is_empty() || port.parse::<u16>().is_err())
    {
        return None;
    }
    Some(host.to_owned())
}

/// `localhost`, `127.0.0.0/8`, `::1` (also IPv4-mapped), with or without IPv6 brackets.
pub(crate) fn is_loopback_host(host: &str) -> bool {
    let bare = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    if bare.eq_ignore_ascii_case("localhost") {
        return true;
    }
    match bare.parse::<IpAddr>() {
        Ok(IpAddr::V4(v4)) => v4.is_loopback(),
        Ok(IpAddr::V6(v6)) => v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()),
        Err(_) => false,
    }
}

/// Parses `tools.enabled` / `tools.disabled` entries; unknown names become warnings.
fn tool_selectors(
    key: &str,
    list: Vec<Option<String>>,
    warnings: &mut Vec<String>,
) -> Result<Vec<ToolSelector>> {
    let mut out = Vec::new();
    for item in list {
        let Some(name) = item.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()) else {
            return Err(Error::invalid_argument(format!("{key} entries must not be blank.")));
        };
        let lower = name.to_ascii_lowercase();
        if let Some(group) = ToolGroup::parse(&lower) {
            out.push(ToolSelector::Group(group));
        } else if lower.starts_with("kb_")
            && lower.len() > 3
            && lower.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        {
            out.push(ToolSelector::Tool(lower));
        } else {
            // Control characters escaped: a warning is one line of the log and of kb_status.
            let name: String = name
                .chars()
                .map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() })
                .collect();
            warnings.push(format!(
                "{key} entry '{name}' is neither a tool name (kb_…) nor a group (read, edit, assets, export, catalog); it was ignored."
            ));
        }
    }
    Ok(out)
}

/// Whether a path is empty or only whitespace.
fn is_blank_path(path: &Path) -> bool {
    path.to_str().is_some_and(|s| s.trim().is_empty())
}

/// `path` made absolute against `base` and normalised.
fn resolve(base: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() { normalize(path) } else { normalize(&base.join(path)) }
}

/// Removes `.` components and folds `..` into its parent, without touching the file system
/// (like .NET `Path.GetFullPath`). `..` above the root stays at the root.
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                let last = out.components().next_back();
                match last {
                    Some(Component::Normal(_)) => {
                        out.pop();
                    }
                    Some(Component::RootDir | Component::Prefix(_)) => {}
                    _ => out.push(".."),
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}
