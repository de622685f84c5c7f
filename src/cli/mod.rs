//! The command line: subcommands, human and `--json` output, exit codes.
//!
//! Invariants:
//!
//! - The only module that prints to stdout (data: human text or `--json`); stderr carries
//!   logs, progress and error sentences.
//! - Exit codes are decided here: 0 success, 1 a controlled failure (one sentence on stderr),
//!   2 a usage error. A reader that closes standard output early (`search … | head -1`) is not
//!   a failure: the command stops writing and exits 0 without a sentence, as ripgrep does.
//! - `--json` output is exactly the corresponding tool's structured result.

pub mod logging;
mod render;

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use crate::config::{self, Command, ParsedArgs};
use crate::engine::{Engine, ReindexOptions};
use crate::error::{Error, Result};
use crate::wire::{LinksRequest, OutlineRequest, ReadRequest, ReindexProgress, SearchRequest};

/// Runs the program with `args` (including the program name) and returns the exit code.
pub fn main(args: Vec<String>) -> ExitCode {
    let parsed = match config::parse_args(args) {
        Ok(p) => p,
        Err(usage) => {
            if usage.is_info() {
                let _ = writeln!(std::io::stdout(), "{}", usage.message.trim_end());
            } else {
                let _ = writeln!(std::io::stderr(), "error: {}", usage.message.trim_end());
            }
            return ExitCode::from(u8::try_from(usage.exit_code).unwrap_or(2));
        }
    };
    match run(parsed) {
        // The reader of stdout went away: whatever it read was all it wanted.
        _ if STDOUT_CLOSED.load(std::sync::atomic::Ordering::Relaxed) => ExitCode::SUCCESS,
        // `check` found issues: reported on stdout, exit 1 (`docs/reference/catalog-spec.md` §8.1).
        Ok(()) if ISSUES_FOUND.load(std::sync::atomic::Ordering::Relaxed) => ExitCode::from(1),
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: {}", e.message);
            ExitCode::from(1)
        }
    }
}

fn open_engine(parsed: &ParsedArgs) -> Result<Engine> {
    let cwd = std::env::current_dir().map_err(|e| Error::io("the current directory", &e))?;
    let loaded = config::load(&parsed.overrides, &|k| std::env::var(k).ok(), &cwd)?;
    for w in &loaded.warnings {
        tracing::warn!("{w}");
    }
    Engine::open(loaded)
}

fn print_json<T: serde::Serialize>(value: &T) -> Result<()> {
    let text =
        serde_json::to_string_pretty(value).map_err(|e| Error::internal(format!("JSON output: {e}")))?;
    writeln!(Stdout::lock(), "{text}").map_err(|e| Error::io("standard output", &e))
}

fn print_text(text: &str) -> Result<()> {
    Stdout::lock().write_all(text.as_bytes()).map_err(|e| Error::io("standard output", &e))
}

/// Set when a write to stdout found its reader gone (a broken pipe); the program then exits 0.
static STDOUT_CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Standard output, noting a broken pipe in [`STDOUT_CLOSED`]. Every command's output goes
/// through it.
struct Stdout(std::io::StdoutLock<'static>);

impl Stdout {
    fn lock() -> Stdout {
        Stdout(std::io::stdout().lock())
    }

    fn note<T>(result: std::io::Result<T>) -> std::io::Result<T> {
        if let Err(e) = &result
            && e.kind() == std::io::ErrorKind::BrokenPipe
        {
            STDOUT_CLOSED.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        result
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        Self::note(self.0.write(buf))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Self::note(self.0.flush())
    }
}

/// Set by `check` when it reported issues (exit code 1 without an error sentence).
static ISSUES_FOUND: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Runs one parsed command.
pub fn run(parsed: ParsedArgs) -> Result<()> {
    if let Command::Init { index, scan } = &parsed.command {
        return init(&parsed, index.as_deref(), scan);
    }
    if let Command::Serve { http } = &parsed.command {
        let engine = open_engine(&parsed)?;
        tracing::info!("project root: {}", engine.config().project_root.display());
        return crate::mcp::serve(engine, http.clone());
    }
    let engine = open_engine(&parsed)?;
    let color = std::io::stdout().is_terminal();
    match parsed.command {
        Command::Serve { .. } => Ok(()),
        Command::Reindex { force, all, json } => {
            let result = reindex_with_progress(&engine, ReindexOptions { all, force })?;
            if json { print_json(&result) } else { print_text(&render::reindex(&result)) }
        }
        Command::Search {
            query,
            mode,
            top_k,
            max_per_file,
            include_globs,
            exclude_globs,
            filters,
            explain,
            json,
        } => {
            if !engine.index_exists() {
                tracing::info!("no index yet; building it first");
                reindex_with_progress(&engine, ReindexOptions::default())?;
            } else if let Some(problem) = engine.index_problem() {
                // The writer's own line says what it found and rebuilds; this names the trigger.
                tracing::debug!("{problem}; repairing the index before searching");
                reindex_with_progress(&engine, ReindexOptions::default())?;
            }
            let request = SearchRequest {
                query,
                mode,
                top_k: top_k.map(|k| k as i64),
                include_globs: (!include_globs.is_empty()).then_some(include_globs),
                exclude_globs: (!exclude_globs.is_empty()).then_some(exclude_globs),
                filters: (!filters.is_empty()).then_some(filters),
                explain: explain.then_some(true),
                max_per_file: max_per_file.map(|n| n as i64),
                // Scripts read `search --json`: the original's full shape, whatever the server's
                // default for agents (`search.hitDetail`).
                detail: Some(crate::wire::HitDetail::Full),
            };
            let response = engine.search(&request)?;
            if json { print_json(&response) } else { print_text(&render::search(&response, color)) }
        }
        Command::Status { json } => {
            let status = engine.status();
            if json { print_json(&status) } else { print_text(&render::status(&status)) }
        }
        Command::Read { path, pointer, json } => {
            let slice = engine.read(&ReadRequest { path, pointer, max_elements: None, max_bytes: None })?;
            if json { print_json(&slice) } else { print_text(&render::read(&slice)) }
        }
        Command::Outline { path, json } => {
            // One page: the CLI prints the whole outline (a terminal has no answer budget).
            let request = OutlineRequest { path, max_bytes: Some(i64::MAX), ..OutlineRequest::default() };
            let outline = engine.outline(&request)?;
            if json { print_json(&outline) } else { print_text(&render::outline(&outline)) }
        }
        Command::Links { path, broken, direction, depth, external, json } => {
            if !engine.index_exists() {
                tracing::info!("no index yet; building it first");
                reindex_with_progress(&engine, ReindexOptions::default())?;
            } else if let Some(problem) = engine.index_problem() {
                tracing::debug!("{problem}; repairing the index before listing links");
                reindex_with_progress(&engine, ReindexOptions::default())?;
            }
            let mut request = LinksRequest {
                path,
                direction,
                depth: depth.map(|d| d as i64),
                broken_only: broken.then_some(true),
                include_external: external.then_some(true),
                limit: Some(1000),
                cursor: None,
                max_bytes: None,
            };
            // Every page: the CLI prints the whole answer.
            let mut all = engine.links(&request)?;
            while let Some(cursor) = all.next_cursor.take() {
                request.cursor = Some(cursor);
                let page = engine.links(&request)?;
                all.edges.extend(page.edges);
                all.next_cursor = page.next_cursor;
            }
            all.notice = None;
            if json { print_json(&all) } else { print_text(&render::links(&all)) }
        }
        Command::ExportHtml { request } => {
            let mut request = request.request();
            request.file = root_relative(&engine, &request.file)?;
            request.out = request.out.map(|o| root_relative(&engine, &o)).transpose()?;
            request.config = request.config.map(|c| root_relative(&engine, &c)).transpose()?;
            let result = engine.export_html_file(&request)?;
            print_warnings(&result.warnings);
            print_text(&format!("{}\n", result.out))
        }
        Command::BuildSite { catalog_config } => {
            let config = catalog_config.map(|c| root_relative(&engine, &c)).transpose()?;
            let request = crate::wire::BuildSiteRequest { config };
            let result = engine.build_html_site(&request)?;
            print_warnings(&result.warnings);
            print_text(&format!("{} ({} documents)\n", result.out, result.docs))
        }
        Command::Pdf { request, json } => {
            let result = engine.export_pdf_book(&request.request())?;
            if json {
                return print_json(&result);
            }
            for warning in &result.warnings {
                tracing::warn!("{warning}");
            }
            print_text(&format!("wrote {} ({} bytes)\n", result.path, result.bytes))
        }
        Command::ExportChunks => {
            let mut out = std::io::BufWriter::new(Stdout::lock());
            let done = engine.export_chunks(&mut out)?;
            for skipped in &done.skipped {
                tracing::warn!("not exported: {skipped}");
            }
            tracing::info!("exported {} chunk(s) of {} file(s)", done.chunks, done.files);
            Ok(())
        }
        Command::Check { base, catalog_config, ignore, json } => {
            let config = catalog_config.map(|c| root_relative(&engine, &c)).transpose()?;
            let result = engine
                .check_ignoring(&crate::wire::CheckRequest { config, base, ..Default::default() }, &ignore)?;
            if json {
                print_json(&result)?;
            } else {
                let mut text = String::new();
                for i in &result.issues {
                    if i.at.is_empty() {
                        text.push_str(&format!("{}: {}: {}\n", i.file, i.kind, i.message));
                    } else {
                        text.push_str(&format!("{}:{}: {}: {}\n", i.file, i.at, i.kind, i.message));
                    }
                }
                print_text(&text)?;
            }
            let n = result.issues.len();
            let _ = if n == 0 {
                writeln!(std::io::stderr(), "check: no issues")
            } else {
                writeln!(std::io::stderr(), "check: {n} issues")
            };
            ISSUES_FOUND.store(n > 0, std::sync::atomic::Ordering::Relaxed);
            Ok(())
        }
        Command::Init { .. } => Ok(()),
    }
}

/// `warning: {warning}` lines on stderr (`docs/reference/catalog-spec.md` §8.2, §8.3).
fn print_warnings(warnings: &[String]) {
    let mut err = std::io::stderr().lock();
    for warning in warnings {
        let _ = writeln!(err, "warning: {warning}");
    }
}

/// A command-line path (relative to the working directory) as a root-relative path; a path
/// outside the root is passed on as given, for the path guard to refuse.
fn root_relative(engine: &Engine, given: &str) -> Result<String> {
    let cwd = std::env::current_dir().map_err(|e| Error::io("the current directory", &e))?;
    let abs = lexical(&cwd.join(given));
    let root = engine.workspace().root();
    let cwd_canon = std::fs::canonicalize(&cwd).unwrap_or(cwd);
    let abs_canon = lexical(&cwd_canon.join(given));
    for candidate in [&abs_canon, &abs] {
        if let Ok(rel) = candidate.strip_prefix(root) {
            let parts: Vec<String> =
                rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
            return Ok(parts.join("/"));
        }
    }
    Ok(given.to_owned())
}

/// `.` and `..` removed without touching the file system.
fn lexical(path: &std::path::Path) -> std::path::PathBuf {
    let mut out = std::path::PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// `init`: works without an existing `--config` file (it creates one).
fn init(parsed: &ParsedArgs, index: Option<&str>, scan: &[String]) -> Result<()> {
    let cwd = std::env::current_dir().map_err(|e| Error::io("the current directory", &e))?;
    let env = |k: &str| std::env::var(k).ok();
    let mut plain = parsed.overrides.clone();
    plain.config = None;
    let first = config::load(&plain, &env, &cwd)?;
    let config_path = parsed.overrides.config.as_ref().map(|c| {
        if c.is_absolute() {
            c.clone()
        } else if parsed.overrides.project_root.is_some() {
            first.config.project_root.join(c)
        } else {
            cwd.join(c)
        }
    });
    let loaded = match &config_path {
        Some(p) if p.exists() => config::load(&parsed.overrides, &env, &cwd)?,
        _ => first,
    };
    let engine = Engine::open(loaded)?;
    let index = index.map(|i| lexical(&cwd.join(i)));
    let lines = engine.init_catalog(config_path.as_deref(), index.as_deref(), scan)?;
    print_text(&lines.iter().map(|l| format!("{l}\n")).collect::<String>())
}

/// A synchronous reindex with a progress bar on stderr when it is a terminal.
fn reindex_with_progress(engine: &Engine, opts: ReindexOptions) -> Result<crate::wire::ReindexResult> {
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{spinner} indexing [{bar:30}] {pos}/{len} {wide_msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        bar
    });
    let mut on_progress = |p: &ReindexProgress| {
        if let Some(bar) = &bar {
            if let Some(total) = p.total_files {
                bar.set_length(total);
            }
            bar.set_position(p.processed_files);
            if let Some(e) = &p.embedding {
                bar.set_message(format!("embedding {}/{} chunks", e.embedded_chunks, e.total_chunks));
            } else if let Some(path) = &p.current_path {
                bar.set_message(path.clone());
            }
        }
    };
    let result = engine.reindex(opts, &mut on_progress);
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    result
}
