//! The command line (`docs/reference/product.md` §4, `docs/reference/original-server.md` §2.1).
//!
//! Global options keep the original's names and value forms and may stand before or after the
//! subcommand. Without a subcommand the stdio MCP server runs, unless one of the legacy
//! maintenance flags `--reindex [--force]` / `--status` asks for a one-shot command.
//!
//! Error texts follow the contract where it gives them (`<option> requires a value.`,
//! `Unknown option: <token>`, `Unexpected argument: <token>`); clap's own wording is replaced.
//! Values are taken as strings (hyphens allowed) and checked here, so a value that starts with
//! `--` is reported as a missing value, exactly like the original.

use std::path::PathBuf;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Args, Parser, Subcommand};

use super::{CliOverrides, EmbeddingProvider, SearchMode};
use crate::wire::{ExportHtmlRequest, PdfBookRequest};

/// Exit code of a usage error (`docs/reference/product.md` §4).
const USAGE_EXIT: i32 = 2;
/// The help heading of the global options.
const GLOBAL: &str = "Global options";

/// The whole command line, as clap sees it. Use [`parse_args`] to get checked values.
#[derive(Debug, Parser)]
#[command(
    name = "local-vector-search-mcp",
    version,
    about = "Local MCP server and CLI that makes a project's Markdown searchable (Japanese-aware) and safely editable.",
    long_about = None,
    args_override_self = true,
    after_help = "Without a subcommand, the MCP server runs on stdio."
)]
pub struct Cli {
    /// Options shared by every subcommand.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// The subcommand; `None` runs the stdio MCP server (or a legacy maintenance flag).
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The original's options (`docs/reference/original-server.md` §2.1), valid before or after a
/// subcommand.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// YAML configuration file (never loaded implicitly); relative to the working directory,
    /// or to --project-root when given.
    #[arg(long, global = true, help_heading = GLOBAL, value_name = "PATH", allow_hyphen_values = true)]
    pub config: Option<String>,
    /// Project root (an existing directory; a relative path is resolved against the working
    /// directory); default: $CLAUDE_PROJECT_DIR, else the working directory.
    #[arg(long, global = true, help_heading = GLOBAL, value_name = "DIR", allow_hyphen_values = true)]
    pub project_root: Option<String>,
    /// Knowledge-base root, relative to the project root (knowledgeBase.root).
    #[arg(long, global = true, help_heading = GLOBAL, value_name = "PATH", allow_hyphen_values = true)]
    pub root: Option<String>,
    /// Index directory, relative to the project root (storage.path); a path ending in .db
    /// means its directory.
    #[arg(long, global = true, help_heading = GLOBAL, value_name = "PATH", allow_hyphen_values = true)]
    pub storage_path: Option<String>,
    /// Embedding provider: openai-compatible or none (lexical only, offline).
    #[arg(long, global = true, help_heading = GLOBAL, value_name = "PROVIDER", allow_hyphen_values = true)]
    pub embedding_provider: Option<String>,
    /// Default search mode: lexical, semantic or hybrid (search.defaultMode).
    #[arg(long, global = true, help_heading = GLOBAL, value_name = "MODE", allow_hyphen_values = true)]
    pub search_mode: Option<String>,
    /// OpenAI-compatible embedding base URL (embedding.endpoint).
    #[arg(long, global = true, help_heading = GLOBAL, value_name = "URL", allow_hyphen_values = true)]
    pub embedding_endpoint: Option<String>,
    /// Embedding model (embedding.model).
    #[arg(long, global = true, help_heading = GLOBAL, value_name = "MODEL", allow_hyphen_values = true)]
    pub embedding_model: Option<String>,
    /// Glob of indexed files; repeatable; replaces knowledgeBase.include.
    #[arg(long, global = true, help_heading = GLOBAL, value_name = "GLOB", allow_hyphen_values = true)]
    pub include: Vec<String>,
    /// Glob of files left out; repeatable; replaces knowledgeBase.exclude.
    #[arg(long, global = true, help_heading = GLOBAL, value_name = "GLOB", allow_hyphen_values = true)]
    pub exclude: Vec<String>,
    /// Reindex when Markdown files change outside the server (knowledgeBase.watchFiles).
    #[arg(long, global = true, help_heading = GLOBAL, overrides_with = "no_watch_files")]
    pub watch_files: bool,
    /// Do not watch files, whatever the configuration says.
    #[arg(long, global = true, help_heading = GLOBAL, overrides_with = "watch_files")]
    pub no_watch_files: bool,
    /// Index files that .gitignore, .ignore or git's excludes name (knowledgeBase.respectIgnoreFiles: false).
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub no_ignore: bool,
    /// Legacy: reindex changed files, print the result as JSON and exit.
    #[arg(long, global = true, help_heading = "Maintenance (legacy)")]
    pub reindex: bool,
    /// With --reindex or `reindex`: allow a destructive rebuild of an incompatible index.
    #[arg(long, global = true, help_heading = "Maintenance (legacy)")]
    pub force: bool,
    /// Legacy: print the index status as JSON and exit.
    #[arg(long, global = true, help_heading = "Maintenance (legacy)")]
    pub status: bool,
}

/// The subcommands (`docs/reference/product.md` §4): the one definition of their grammar. Values
/// are checked while parsing (the `value_parser`s below), so a parsed [`Command`] is ready to run.
#[derive(Clone, Debug, PartialEq, Eq, Subcommand)]
pub enum Command {
    /// Run the MCP server (stdio unless --http is given).
    Serve {
        /// `serve --http [ADDR]` and its options; `None` = stdio (also the default without a
        /// subcommand).
        #[command(flatten)]
        http: Option<HttpServe>,
    },
    /// Reindex now and wait for the result (--force allows a destructive rebuild).
    Reindex {
        /// `--force` (a global option): allow a destructive rebuild of an incompatible index.
        #[arg(skip)]
        force: bool,
        /// Reindex every file, not only the changed ones.
        #[arg(long)]
        all: bool,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Search the index (built first if it does not exist yet).
    Search {
        /// What to look for.
        #[arg(value_name = "QUERY")]
        query: String,
        /// Search mode: lexical, semantic or hybrid; default search.defaultMode.
        #[arg(long, value_name = "MODE", allow_hyphen_values = true, value_parser = mode("--mode"))]
        mode: Option<SearchMode>,
        /// Number of results (at most 50); default search.maxResults.
        #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = count("--top-k"))]
        top_k: Option<usize>,
        /// At most N hits per file; default search.maxPerFile; 0: no limit.
        #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = whole("--max-per-file"))]
        max_per_file: Option<usize>,
        /// Only documents matching this glob; repeatable.
        #[arg(long = "include-glob", value_name = "GLOB", allow_hyphen_values = true, value_parser = text("--include-glob"))]
        include_globs: Vec<String>,
        /// Leave out documents matching this glob; repeatable.
        #[arg(long = "exclude-glob", value_name = "GLOB", allow_hyphen_values = true, value_parser = text("--exclude-glob"))]
        exclude_globs: Vec<String>,
        /// Only documents whose front matter meets this condition: FIELD=VALUE, FIELD!=VALUE,
        /// FIELD>=DATE, FIELD<=DATE, FIELD>DATE, FIELD<DATE or FIELD? (has it); repeatable (all
        /// must hold).
        #[arg(long = "filter", value_name = "CONDITION", allow_hyphen_values = true, value_parser = filter)]
        filters: Vec<crate::wire::SearchFilter>,
        /// Show each hit's lexical rank, vector rank and fused score.
        #[arg(long)]
        explain: bool,
        /// Print the kb_search result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show the index status (the kb_status object).
    Status {
        /// Print the status as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Read a Markdown file or one element of it (like kb_read).
    Read {
        /// Root-relative path of the Markdown file.
        #[arg(value_name = "PATH")]
        path: String,
        /// Pointer or anchor of an element, e.g. 1.2.p1.
        #[arg(value_name = "POINTER")]
        pointer: Option<String>,
        /// Print the kb_read result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show the heading outline of a Markdown file (like kb_outline).
    Outline {
        /// Root-relative path of the Markdown file.
        #[arg(value_name = "PATH")]
        path: String,
        /// Print the kb_outline result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show links to and from a file, or the whole project's broken links (like kb_links).
    Links {
        /// Root-relative path of a Markdown file; omit it for the whole project.
        #[arg(value_name = "PATH")]
        path: Option<String>,
        /// Only broken links (missing file or heading).
        #[arg(long)]
        broken: bool,
        /// outgoing, incoming or both (default both).
        #[arg(long, value_name = "D", allow_hyphen_values = true, value_parser = direction)]
        direction: Option<crate::wire::LinkDirection>,
        /// Follow links this many files away, 1 to 5 (default 1).
        #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = count("--depth"))]
        depth: Option<usize>,
        /// Also list external URLs.
        #[arg(long)]
        external: bool,
        /// Print the kb_links result (all pages) as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Export a Markdown file as one self-contained HTML file (like kb_export_html).
    ExportHtml {
        /// The `kb_export_html` arguments, paths as typed (relative to the working directory).
        #[command(flatten)]
        request: ExportHtmlArgs,
    },
    /// Combine the documents of the catalog's build settings into one HTML file (like kb_build_site).
    BuildSite {
        /// Catalog configuration to use.
        #[arg(long, value_name = "PATH", allow_hyphen_values = true, value_parser = text("--catalog-config"))]
        catalog_config: Option<String>,
    },
    /// Render a Markdown file as a PDF book (like kb_create_pdf_book).
    Pdf {
        /// The `kb_create_pdf_book` arguments.
        #[command(flatten)]
        request: PdfArgs,
        /// Print the kb_create_pdf_book result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Check the document catalog (like kb_check); exit 1 when issues are found.
    Check {
        /// Also report change_together partners not changed since this git ref's merge base.
        #[arg(long, value_name = "REF", allow_hyphen_values = true)]
        base: Option<String>,
        /// Catalog configuration file (relative to the working directory).
        #[arg(long, value_name = "PATH", value_parser = text("--catalog-config"))]
        catalog_config: Option<String>,
        /// Leave out this issue kind; repeatable (adds to check.ignore).
        #[arg(long, value_name = "KIND", value_parser = text("--ignore"))]
        ignore: Vec<String>,
        /// Print the kb_check result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Write the project's chunks (what the index holds) to stdout as NDJSON, one JSON object per
    /// chunk, for a distributed search engine to ingest.
    ExportChunks,
    /// Create a catalog configuration (mdmark.config.yaml, or a catalog section in --config) and an index.
    Init {
        /// The index file to create (default index.yaml in the root).
        #[arg(long, value_name = "PATH", value_parser = text("--index"))]
        index: Option<String>,
        /// Markdown files to list in the index and to check with scan; repeatable.
        #[arg(long, value_name = "GLOB", value_parser = text("--scan"))]
        scan: Vec<String>,
    },
}

/// `export-html`'s arguments.
#[derive(Clone, Debug, PartialEq, Eq, Args)]
pub struct ExportHtmlArgs {
    /// The Markdown file (relative to the working directory, inside the root).
    #[arg(value_name = "FILE")]
    pub file: String,
    /// The HTML file to write (default: FILE with .html).
    #[arg(long, value_name = "PATH", allow_hyphen_values = true, value_parser = text("--out"))]
    pub out: Option<String>,
    /// Catalog configuration to use (for html.* and index titles).
    #[arg(long, value_name = "PATH", allow_hyphen_values = true, value_parser = text("--catalog-config"))]
    pub catalog_config: Option<String>,
}

impl ExportHtmlArgs {
    /// The `kb_export_html` request, paths as typed.
    pub fn request(&self) -> ExportHtmlRequest {
        ExportHtmlRequest {
            file: self.file.clone(),
            out: self.out.clone(),
            config: self.catalog_config.clone(),
        }
    }
}

/// `pdf`'s arguments.
#[derive(Clone, Debug, PartialEq, Eq, Args)]
pub struct PdfArgs {
    /// Root-relative path of the Markdown file.
    #[arg(value_name = "FILE")]
    pub path: String,
    /// Root-relative path of the PDF (default: FILE with .pdf).
    #[arg(long, value_name = "PATH", allow_hyphen_values = true, value_parser = text("--out"))]
    pub out: Option<String>,
    /// a4, a5 (default), a6, b5 or letter.
    #[arg(long, value_name = "F", allow_hyphen_values = true, value_parser = text("--page-format"))]
    pub page_format: Option<String>,
    /// compact (default), classic, modern, technical or academic.
    #[arg(long, value_name = "S", allow_hyphen_values = true, value_parser = text("--style"))]
    pub style: Option<String>,
    /// Images: screen, standard (default) or print.
    #[arg(long, value_name = "P", allow_hyphen_values = true, value_parser = text("--profile"))]
    pub profile: Option<String>,
    /// No 目次 (table of contents) page in front.
    #[arg(long)]
    pub no_toc: bool,
}

impl PdfArgs {
    /// The `kb_create_pdf_book` request.
    pub fn request(&self) -> PdfBookRequest {
        PdfBookRequest {
            path: self.path.clone(),
            output_path: self.out.clone(),
            page_format: self.page_format.clone(),
            style: self.style.clone(),
            profile: self.profile.clone(),
            toc: self.no_toc.then_some(false),
        }
    }
}

/// `serve --http [ADDR]`: the Streamable HTTP transport's command-line settings.
#[derive(Clone, PartialEq, Eq, Default, Args)]
pub struct HttpServe {
    /// Serve Streamable HTTP at /mcp on this address; default 127.0.0.1:8782
    /// (127.0.0.1:$MDMARK_PORT when that is set). Any other address needs a token.
    #[arg(long = "http", value_name = "ADDR", num_args = 0..=1, default_missing_value = "")]
    pub addr: Option<String>,
    /// With --http: the bearer token clients must send (also $LVS_HTTP_TOKEN or
    /// server.httpToken); required unless the address is 127.0.0.1, ::1 or localhost.
    #[arg(long, value_name = "TOKEN", allow_hyphen_values = true, value_parser = text("--token"))]
    pub token: Option<String>,
    /// With --http: another host name clients may use in the Host header; repeatable.
    #[arg(long = "allow-host", value_name = "HOST", allow_hyphen_values = true, value_parser = text("--allow-host"))]
    pub allow_hosts: Vec<String>,
    /// With --http: another browser origin allowed to call, e.g. http://localhost:6274;
    /// repeatable.
    #[arg(long = "allow-origin", value_name = "ORIGIN", allow_hyphen_values = true, value_parser = text("--allow-origin"))]
    pub allow_origins: Vec<String>,
}

impl std::fmt::Debug for HttpServe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServe")
            .field("addr", &self.addr)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("allow_hosts", &self.allow_hosts)
            .field("allow_origins", &self.allow_origins)
            .finish()
    }
}

/// A checked command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedArgs {
    /// The configuration overrides, for [`super::load`].
    pub overrides: CliOverrides,
    /// What to run.
    pub command: Command,
}

/// A command line that does not lead to a run: a usage error (stderr, exit 2) or the output of
/// `--help` / `--version` (stdout, exit 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsageError {
    /// The text to print: one sentence for errors, the whole help or version text otherwise.
    pub message: String,
    /// The process exit code: 2 for usage errors, 0 for help and version.
    pub exit_code: i32,
    /// `true` for help and version (print to stdout), `false` for errors (stderr).
    pub to_stdout: bool,
}

impl UsageError {
    /// A usage error with exit code 2.
    fn usage(message: impl Into<String>) -> Self {
        UsageError { message: message.into(), exit_code: USAGE_EXIT, to_stdout: false }
    }

    /// Whether this is help or version output rather than an error.
    pub fn is_info(&self) -> bool {
        self.to_stdout
    }

    /// Maps a clap error to the contract's texts.
    fn from_clap(err: &clap::Error) -> Self {
        let context = |kind: ContextKind| match err.get(kind) {
            Some(ContextValue::String(s)) => Some(s.clone()),
            Some(ContextValue::Strings(list)) => Some(list.join(", ")),
            Some(ContextValue::StyledStr(s)) => Some(s.to_string()),
            _ => None,
        };
        match err.kind() {
            ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                UsageError { message: err.render().to_string(), exit_code: 0, to_stdout: true }
            }
            ErrorKind::InvalidValue if context(ContextKind::InvalidValue).unwrap_or_default().is_empty() => {
                match context(ContextKind::InvalidArg) {
                    Some(arg) => Self::usage(format!("{} requires a value.", option_name(&arg))),
                    None => Self::fallback(err),
                }
            }
            // A value parser of ours said what is wrong (`text`, `mode`, `count`, `direction`).
            ErrorKind::ValueValidation => match std::error::Error::source(err) {
                Some(reason) => Self::usage(reason.to_string()),
                None => Self::fallback(err),
            },
            ErrorKind::UnknownArgument => match context(ContextKind::InvalidArg) {
                Some(token) => Self::usage(unknown_token(&token)),
                None => Self::fallback(err),
            },
            ErrorKind::InvalidSubcommand => match context(ContextKind::InvalidSubcommand) {
                Some(token) => Self::usage(unknown_token(&token)),
                None => Self::fallback(err),
            },
            ErrorKind::TooManyValues | ErrorKind::NoEquals => match context(ContextKind::InvalidArg) {
                Some(arg) if arg.starts_with('-') => {
                    Self::usage(format!("{} does not take a value.", option_name(&arg)))
                }
                Some(arg) => Self::usage(format!("Unexpected argument: {arg}")),
                None => Self::fallback(err),
            },
            ErrorKind::MissingRequiredArgument => {
                let missing = context(ContextKind::InvalidArg).unwrap_or_default();
                let usage = context(ContextKind::Usage).unwrap_or_default();
                let usage = usage.trim().trim_start_matches("Usage:").trim();
                Self::usage(format!("Missing argument {missing}; usage: {usage}"))
            }
            _ => Self::fallback(err),
        }
    }

    /// clap's own first line, without its `error: ` prefix.
    fn fallback(err: &clap::Error) -> Self {
        let text = err.render().to_string();
        let first = text.lines().next().unwrap_or_default();
        let first = first.strip_prefix("error: ").unwrap_or(first).trim();
        Self::usage(if first.is_empty() {
            "The command line is not valid; see --help.".to_owned()
        } else {
            first.to_owned()
        })
    }
}

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for UsageError {}

/// `--root` from clap's `--root <PATH>`.
fn option_name(arg: &str) -> &str {
    arg.split([' ', '=', '<']).next().unwrap_or(arg)
}

/// `Unknown option: <token>` for option-like tokens, `Unexpected argument: <token>` otherwise.
fn unknown_token(token: &str) -> String {
    if token.starts_with('-') && token != "-" {
        format!("Unknown option: {token}")
    } else {
        format!("Unexpected argument: {token}")
    }
}

/// Parses and checks a command line. The first item is the program name, as in
/// `std::env::args()`.
pub fn parse_args(args: impl IntoIterator<Item = String>) -> Result<ParsedArgs, UsageError> {
    let cli = Cli::try_parse_from(args).map_err(|e| UsageError::from_clap(&e))?;
    cli.into_parsed()
}

impl Cli {
    /// Checks the values and splits them into configuration overrides and the command.
    pub fn into_parsed(self) -> Result<ParsedArgs, UsageError> {
        let g = self.global;
        let overrides = CliOverrides {
            config: value("--config", g.config)?.map(PathBuf::from),
            project_root: value("--project-root", g.project_root)?.map(PathBuf::from),
            root: value("--root", g.root)?.map(PathBuf::from),
            storage_path: value("--storage-path", g.storage_path)?.map(PathBuf::from),
            embedding_provider: value("--embedding-provider", g.embedding_provider)?
                .map(|v| {
                    EmbeddingProvider::parse(&v).ok_or_else(|| {
                        UsageError::usage(format!(
                            "--embedding-provider must be openai-compatible or none, not '{v}'."
                        ))
                    })
                })
                .transpose()?,
            search_mode: search_mode("--search-mode", g.search_mode)?,
            watch_files: match (g.watch_files, g.no_watch_files) {
                (true, _) => Some(true),
                (_, true) => Some(false),
                _ => None,
            },
            respect_ignore_files: g.no_ignore.then_some(false),
            embedding_endpoint: value("--embedding-endpoint", g.embedding_endpoint)?,
            embedding_model: value("--embedding-model", g.embedding_model)?,
            include: list("--include", g.include)?,
            exclude: list("--exclude", g.exclude)?,
        };

        let legacy = if g.reindex {
            Some(("--reindex", "reindex"))
        } else if g.status {
            Some(("--status", "status"))
        } else {
            None
        };
        if let (Some((flag, instead)), Some(_)) = (legacy, &self.command) {
            return Err(UsageError::usage(format!(
                "{flag} cannot be combined with a subcommand; run `local-vector-search-mcp {instead}` instead."
            )));
        }

        let command = match self.command {
            None if g.reindex => Command::Reindex { force: g.force, all: false, json: true },
            None if g.status => Command::Status { json: true },
            None => Command::Serve { http: None },
            Some(Command::Serve { http: Some(http) }) => Command::Serve { http: Some(http_serve(http)?) },
            Some(Command::Reindex { all, json, .. }) => Command::Reindex { force: g.force, all, json },
            Some(command) => command,
        };
        Ok(ParsedArgs { overrides, command })
    }
}

/// An option value; one that starts with `--` means the value is missing
/// (`docs/reference/original-server.md` §2.1).
fn value(option: &str, v: Option<String>) -> Result<Option<String>, UsageError> {
    match v {
        Some(v) if v.starts_with("--") => Err(UsageError::usage(format!("{option} requires a value."))),
        other => Ok(other),
    }
}

/// A repeatable option: `None` when never given.
fn list(option: &str, values: Vec<String>) -> Result<Option<Vec<String>>, UsageError> {
    if values.iter().any(|v| v.starts_with("--")) {
        return Err(UsageError::usage(format!("{option} requires a value.")));
    }
    Ok(if values.is_empty() { None } else { Some(values) })
}

/// A `--filter` condition: `FIELD=VALUE`, `FIELD!=VALUE`, `FIELD>=DATE`, `FIELD<=DATE`,
/// `FIELD>DATE`, `FIELD<DATE` or `FIELD?`.
pub fn search_filter(text: &str) -> Result<crate::wire::SearchFilter, UsageError> {
    use crate::wire::{FilterOp, SearchFilter};
    let filter = |field: &str, op, value: Option<&str>| SearchFilter {
        field: field.trim().to_owned(),
        op,
        value: value.map(|v| v.trim().to_owned()),
        values: None,
    };
    if let Some(field) = text.strip_suffix('?').filter(|f| !f.contains(['=', '<', '>'])) {
        return Ok(filter(field, FilterOp::Exists, None));
    }
    let Some(at) = text.find(['=', '!', '<', '>']) else {
        return Err(UsageError::usage(format!(
            "--filter '{text}' has no operator; write FIELD=VALUE, FIELD!=VALUE, FIELD>=DATE, FIELD<=DATE, FIELD>DATE, FIELD<DATE or FIELD? (has the field)."
        )));
    };
    let (field, rest) = text.split_at(at);
    let (op, value) = [
        ("!=", FilterOp::Ne),
        (">=", FilterOp::Gte),
        ("<=", FilterOp::Lte),
        ("=", FilterOp::Eq),
        (">", FilterOp::Gt),
        ("<", FilterOp::Lt),
    ]
    .into_iter()
    .find_map(|(sign, op)| rest.strip_prefix(sign).map(|v| (op, v)))
    .ok_or_else(|| {
        UsageError::usage(format!(
            "--filter '{text}' has an unknown operator; use =, !=, >=, <=, > or < between the field and the value."
        ))
    })?;
    if field.trim().is_empty() {
        return Err(UsageError::usage(format!(
            "--filter '{text}' names no field; write FIELD=VALUE, e.g. status=draft."
        )));
    }
    Ok(filter(field, op, Some(value)))
}

/// A search mode value, case-insensitive.
fn search_mode(option: &str, v: Option<String>) -> Result<Option<SearchMode>, UsageError> {
    value(option, v)?.map(|v| parse_mode(option, &v).map_err(UsageError::usage)).transpose()
}

fn parse_mode(option: &str, v: &str) -> Result<SearchMode, String> {
    SearchMode::parse(v).ok_or_else(|| format!("{option} must be lexical, semantic or hybrid, not '{v}'."))
}

/// `serve --http` options: `--http` itself is required for the others; `--http` without an
/// address means the default one.
fn http_serve(http: HttpServe) -> Result<HttpServe, UsageError> {
    match http.addr {
        Some(addr) => Ok(HttpServe { addr: Some(addr).filter(|a| !a.is_empty()), ..http }),
        None => Err(UsageError::usage(
            "--token, --allow-host and --allow-origin only apply with --http; add --http [ADDR].",
        )),
    }
}

/// The parser of a text option: a value that starts with `--` means the value is missing
/// (`docs/reference/original-server.md` §2.1).
/// `--filter`'s value parser: [`search_filter`] with its sentence.
fn filter(v: &str) -> Result<crate::wire::SearchFilter, String> {
    search_filter(v).map_err(|e| e.message)
}

fn text(option: &'static str) -> impl Fn(&str) -> Result<String, String> + Clone + Send + Sync + 'static {
    move |v: &str| {
        if v.starts_with("--") { Err(format!("{option} requires a value.")) } else { Ok(v.to_owned()) }
    }
}

/// The parser of a search mode option, case-insensitive.
fn mode(option: &'static str) -> impl Fn(&str) -> Result<SearchMode, String> + Clone + Send + Sync + 'static {
    move |v: &str| parse_mode(option, &text(option)(v)?)
}

/// The parser of a positive whole number option.
fn count(option: &'static str) -> impl Fn(&str) -> Result<usize, String> + Clone + Send + Sync + 'static {
    move |v: &str| {
        let v = text(option)(v)?;
        match v.trim().parse::<usize>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!("{option} must be a whole number greater than 0, not '{v}'.")),
        }
    }
}

/// The parser of a whole number option (0 allowed).
fn whole(option: &'static str) -> impl Fn(&str) -> Result<usize, String> + Clone + Send + Sync + 'static {
    move |v: &str| {
        let v = text(option)(v)?;
        v.trim()
            .parse::<usize>()
            .map_err(|_| format!("{option} must be a whole number (0 or more), not '{v}'."))
    }
}

/// `--direction`: `outgoing`, `incoming` or `both`, case-insensitive.
fn direction(v: &str) -> Result<crate::wire::LinkDirection, String> {
    use crate::wire::LinkDirection;
    let v = text("--direction")(v)?;
    match v.trim().to_ascii_lowercase().as_str() {
        "outgoing" => Ok(LinkDirection::Outgoing),
        "incoming" => Ok(LinkDirection::Incoming),
        "both" => Ok(LinkDirection::Both),
        _ => Err(format!("--direction must be outgoing, incoming or both, not '{v}'.")),
    }
}
