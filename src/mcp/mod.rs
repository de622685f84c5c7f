//! The MCP server (rmcp, stdio or Streamable HTTP in `http`): tool list, dispatch, error envelope.
//!
//! Invariants:
//!
//! - The only module that imports `rmcp`. In stdio mode nothing but protocol frames reaches
//!   stdout (logs go to stderr).
//! - Every tool call ends in a result: domain failures are `isError: true` results whose first
//!   text block is `CODE: message` and whose second is compact `{"code","message"}` JSON; wrong
//!   argument shapes are such results too
//!   (`INVALID_ARGUMENT` naming the field), and a panic inside a tool becomes `INTERNAL_ERROR`.
//!   The server keeps serving whatever a client sends.
//! - Successful results carry one text block with the contract's JSON (compact) and the same JSON
//!   minus its `null` fields as `structuredContent`,
//!   except the binary tools (`kb_load_image`, `kb_download_file`): an image block or embedded
//!   resource first, then the metadata JSON as text, and no `structuredContent`; and the text
//!   tools (`kb_read_guide`, the catalog's `kb_find_docs` / `kb_list_tags`). Which one a tool
//!   answers is its response type's [`reply::Answer`], fixed in the tool table.
//! - Engine calls run on blocking threads; background indexing belongs to the engine.
//! - Every thread has an owner that stops and joins it: the start-up sweep belongs to the
//!   [`Server`] (stopped and joined when the last handle goes, before the engine), the
//!   runtime is shut down when the transport ends, and the engine joins its own threads when
//!   dropped. A stdio server whose stdin closes exits with no thread left.

mod edge;
pub mod http;
mod reply;
mod schema;
mod stdio;
mod tools;

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest, CustomResult,
    Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

pub use tools::{tool_catalog, tool_catalog_for, tool_list_markdown, tool_names};

use crate::config::HttpServe;
use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};

/// What the server tells an agent at `initialize`, before the guide list.
const INSTRUCTIONS_HEAD: &str = "Search and edit this project's Markdown (Japanese-aware).\n\
1. kb_search finds chunks by words (Japanese, English, code identifiers; \"quoted phrases\"). Each hit has a readHint.\n\
2. kb_read reads the current source from a pointer; kb_outline lists headings. Pointers look like 1.2.p3~<selfHash>~<subtreeHash>: \
pass them back unchanged. Reads never need the index.\n\
3. kb_patch edits by those anchors (all operations or none); kb_links shows what links to a file and which links are broken.\n\
4. kb_list_files lists Markdown and asset files. kb_status shows the index; kb_reindex rebuilds it in the background.\n\
Errors start with their code (CODE: message); CONFLICT means the file changed: read again and retry.\n\n";

/// The `initialize` instructions: how to work (search → read → patch with anchors), then the
/// guide list of `docs/reference/catalog-spec.md` §6.7.5.
pub fn instructions() -> String {
    format!("{INSTRUCTIONS_HEAD}{}", crate::engine::guide_list())
}

/// The line the instructions gain when the project has a document catalog
/// (`docs/reference/catalog-spec.md` §6.7.5).
pub const CATALOG_LINE: &str = "This project has a document catalog: start with kb_list_tags and kb_find_docs to find documents by tag and relation.";

/// [`instructions`] for this server: with [`CATALOG_LINE`] before the guide list when the
/// catalog tools are listed and a catalog configuration exists.
pub fn instructions_for(engine: &Engine) -> String {
    let listed = engine.config().tools.is_enabled("kb_find_docs", crate::config::ToolGroup::Catalog);
    if listed && matches!(engine.find_catalog_settings(None), Ok(Some(_))) {
        format!("{INSTRUCTIONS_HEAD}{CATALOG_LINE}\n\n{}", crate::engine::guide_list())
    } else {
        instructions()
    }
}

/// The log filter when `RUST_LOG` is not set: WARN, except rmcp's per-request messages, which
/// are client mistakes (a malformed request, an unknown method, a header that does not match)
/// and are logged by this server at DEBUG instead. Only what an operator must act on is a WARN.
pub const DEFAULT_LOG_FILTER: &str = "warn,rmcp::service=error,rmcp::transport::streamable_http_server=error";

/// The tool handler shared by all sessions.
#[derive(Clone)]
pub struct Server {
    /// Declared before `engine`: the background thread is stopped and joined first.
    _background: Arc<Background>,
    engine: Arc<Engine>,
}

impl Server {
    /// A server over an opened engine.
    pub fn new(engine: Engine) -> Self {
        Server { _background: Arc::new(Background::default()), engine: Arc::new(engine) }
    }
}

/// The server's own background thread (the start-up sweep and catch-up). Dropping it stops
/// the thread (before it starts its work, if it has not yet) and joins it.
#[derive(Default)]
struct Background {
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Background {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// How long a stopping stdio server lets tool calls in flight finish before the runtime is
/// shut down under them.
const SHUTDOWN_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Logs (DEBUG) the threads still running besides the calling one after the server stopped;
/// it waits up to a second for threads that were told to stop but cannot be joined (the
/// OS watcher's event loop). Linux only (it reads the process's task list).
fn log_threads_left() {
    #[cfg(target_os = "linux")]
    {
        let others = || -> Vec<String> {
            let me = std::process::id().to_string();
            let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return Vec::new() };
            tasks
                .flatten()
                .filter(|t| t.file_name().to_str() != Some(me.as_str()))
                .map(|t| std::fs::read_to_string(t.path().join("comm")).unwrap_or_default().trim().to_owned())
                .collect()
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
        let mut left = others();
        while !left.is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
            left = others();
        }
        tracing::debug!("server stopped; threads still running: {}", left.len());
        if !left.is_empty() {
            tracing::debug!("still running: {}", left.join(", "));
        }
    }
}

/// Runs the server on stdio until the client disconnects, or on Streamable HTTP (`serve --http`)
/// until SIGINT/SIGTERM.
pub fn serve(engine: Engine, http: Option<HttpServe>) -> Result<()> {
    if let Some(opts) = http {
        return http::serve(engine, &opts);
    }
    let runtime = runtime()?;
    let outcome = runtime.block_on(async move {
        let server = start(engine);
        let (transport, answers) = stdio::transport();
        let running = match server.serve(transport).await {
            Ok(running) => running,
            // The client closed our stdout before the handshake's answer (the pipe to stdout
            // then refuses rmcp's write): it has gone, which ends a stdio server as a closed
            // stdin does (exit 0).
            Err(e) if handshake_lost_its_reader(&e) => {
                tracing::debug!("the client closed the connection during the handshake: {e}");
                return Ok(());
            }
            Err(e) => return Err(Error::internal(format!("MCP initialisation failed: {e}"))),
        };
        running.waiting().await.map_err(|e| Error::internal(format!("MCP server stopped: {e}")))?;
        // rmcp has stopped: its last answers are still on their way to stdout.
        let _ = tokio::time::timeout(SHUTDOWN_WAIT, answers).await;
        Ok(())
    });
    // The last server handles (in calls still running) go with the runtime: the background
    // thread and the engine's threads are joined here.
    runtime.shutdown_timeout(SHUTDOWN_WAIT);
    log_threads_left();
    outcome
}

/// Whether the handshake failed because the client closed our stdout (rmcp does not chain a
/// transport error as the source of the initialisation error, so its own is looked at).
fn handshake_lost_its_reader(error: &rmcp::service::ServerInitializeError) -> bool {
    match error {
        rmcp::service::ServerInitializeError::TransportError { error, .. } => is_broken_pipe(error),
        other => is_broken_pipe(other),
    }
}

/// Whether `error` or one of its causes is a broken pipe (the reader of our output has gone).
fn is_broken_pipe(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(error);
    while let Some(e) = next {
        if e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) {
            return true;
        }
        next = e.source();
    }
    false
}

/// The async runtime of both transports: engine calls run on its blocking pool.
fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Error::internal(format!("could not start the async runtime: {e}")))
}

/// The handler over `engine`, with the file watcher (`watchFiles`) and the temp-file sweep
/// started; the same for both transports.
fn start(engine: Engine) -> Server {
    if engine.config().knowledge_base.watch_files
        && let Err(e) = engine.start_watching()
    {
        tracing::warn!("{}", e.message);
    }
    engine.auto_index_on_start();
    // Temp files of writes killed in an earlier run are swept, then the index catches up with
    // edits made while no server ran: a moment after the start, off the request path, so neither
    // walk delays `initialize`. A server stopped within that moment skips both.
    let engine = Arc::new(engine);
    let sweeper = Arc::clone(&engine);
    let (stop, stopped) = std::sync::mpsc::channel::<()>();
    let thread = std::thread::Builder::new()
        .name("sweep".into())
        .spawn(move || {
            if stopped.recv_timeout(std::time::Duration::from_secs(1))
                == Err(std::sync::mpsc::RecvTimeoutError::Timeout)
            {
                sweeper.sweep_temp_files();
                sweeper.catch_up_on_start();
            }
        })
        .map_err(|e| tracing::warn!("could not start the start-up sweep: {e}"))
        .ok();
    Server { _background: Arc::new(Background { stop: Some(stop), thread }), engine }
}

/// The message for a known method whose params rmcp could not read (it then hands the request
/// over as a custom one): what that method takes, so the client can fix its request.
pub(crate) fn malformed_params(method: &str) -> Option<String> {
    let takes = match method {
        "initialize" => {
            "{\"protocolVersion\": string, \"capabilities\": object, \"clientInfo\": {\"name\": string, \"version\": string}}"
        }
        "ping" => "no params (or {})",
        "tools/list" => "no params, or {\"cursor\": string}",
        "tools/call" => "{\"name\": string, \"arguments\": object}",
        _ => return None,
    };
    Some(format!("The params of '{method}' are malformed; {method} takes {takes}."))
}

/// The `isError` result for a failure: first `CODE: message` as plain text, which every client
/// shows its model as it is, then the contract's compact `{"code","message"}` JSON. The JSON is
/// not first because Gemini CLI parses a first text block that is JSON into structured content
/// and checks it against the tool's output schema, hiding the error (`docs/design/clients.md`).
pub fn error_result(err: &Error) -> CallToolResult {
    let message = bounded(&err.message);
    let text = format!("{}: {message}", err.code.as_str());
    let body = serde_json::json!({ "code": err.code.as_str(), "message": message });
    CallToolResult::error(vec![ContentBlock::text(text), ContentBlock::text(body.to_string())])
}

/// Longest error message sent (characters): a message that quotes a hostile argument (a
/// 300 KB pointer or path) keeps its start and its actionable end, not the whole argument.
const MAX_MESSAGE_CHARS: usize = 1000;

fn bounded(message: &str) -> String {
    let count = message.chars().count();
    if count <= MAX_MESSAGE_CHARS {
        return message.to_owned();
    }
    let head: String = message.chars().take(600).collect();
    let tail: String = message.chars().skip(count - 300).collect();
    format!("{head} … ({} characters left out) … {tail}", count - 900)
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("local-vector-search-mcp", env!("CARGO_PKG_VERSION")))
            .with_instructions(instructions_for(&self.engine))
    }

    /// Every revision rmcp knows but 2025-03-26 (`edge::SUPPORTED_REVISIONS`): its servers must
    /// accept JSON-RPC batches, which this server does not.
    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [rmcp::model::ProtocolVersion]> {
        std::borrow::Cow::Borrowed(edge::SUPPORTED_REVISIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tool_catalog_for(&self.engine.config().tools)))
    }

    /// A request rmcp could not read as a known method: `tools/call` or `tools/list` with
    /// malformed params arrives here too, so say what is wrong instead of "method not found".
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<CustomResult, ErrorData> {
        let method = request.method;
        let shown: String = method.chars().take(100).collect();
        let error = match malformed_params(&method) {
            Some(message) => ErrorData::invalid_params(message, None),
            None => ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                format!(
                    "Unknown method '{shown}'; this server answers initialize, ping, tools/list and tools/call."
                ),
                None,
            ),
        };
        tracing::debug!("refused a request for '{shown}': {}", error.message);
        Err(error)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        if !tool_names(&self.engine.config().tools).contains(&name.as_str()) {
            tracing::debug!("refused a call of the unknown tool '{name}'");
            return Err(ErrorData::invalid_params(
                format!("Unknown tool '{name}'; call tools/list for the available tools."),
                None,
            ));
        }
        let args = Value::Object(request.arguments.unwrap_or_default());
        let server = self.clone();
        let outcome = tokio::task::spawn_blocking(move || tools::dispatch(&server.engine, &name, args)).await;
        let result = match outcome {
            Ok(Ok(reply)) => reply.into_result(),
            Ok(Err(err)) => error_result(&err),
            Err(join) => {
                tracing::error!("tool call panicked: {join}");
                error_result(&Error::new(
                    ErrorCode::InternalError,
                    "The operation failed unexpectedly; the server is still running. Please report this with the request that caused it.",
                ))
            }
        };
        Ok(CallToolResponse::Complete(result))
    }
}

#[cfg(test)]
mod tests;
