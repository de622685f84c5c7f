//! `serve --http`: the same MCP server over Streamable HTTP (rmcp's stateless service on axum,
//! at `/mcp`), behind a guard that answers every refusal with a 4xx and a `{"code","message"}`
//! JSON body. See `docs/design/http.md`.
//!
//! Invariants:
//!
//! - Binds `127.0.0.1:${MDMARK_PORT:-8782}` unless an address is given. Any address other than
//!   127.0.0.1, ::1 or `localhost` counts as explicit: it logs a warning and refuses to start
//!   without a bearer token (`--token`, `LVS_HTTP_TOKEN`, `server.httpToken`, in that order).
//! - Every request passes, in order: the `Host` allow-list (DNS rebinding), the `Origin`
//!   allow-list (browsers; a request without `Origin` passes), the bearer token (compared as
//!   SHA-256 digests in constant time), then the body size limit. No CORS header is ever sent.
//! - Stateless: no session id is issued or required; every request gets a clone of the one
//!   [`Server`], so all clients share one engine (one index service, one reader).
//! - SIGINT/SIGTERM stop accepting, let in-flight calls finish, then drop the engine, whose
//!   index service finishes its current step and releases the writer.

use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::serve::ListenerExt;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::Value;
use subtle::ConstantTimeEq;
use tokio_util::sync::CancellationToken;

use super::Server;
use super::edge::{Refused, Transport};
use crate::config::HttpServe;
use crate::engine::Engine;
use crate::error::{Error, Result};

/// The port when neither the address nor `MDMARK_PORT` gives one (mdmark's plugin used it).
pub const DEFAULT_PORT: u16 = 8782;
/// The environment variable that moves the default port (`docs/reference/catalog-spec.md` §8.5).
pub const PORT_ENV: &str = "MDMARK_PORT";
/// The environment variable that gives the bearer token.
pub const TOKEN_ENV: &str = "LVS_HTTP_TOKEN";
/// Largest request body accepted (JSON-RPC requests are small; images travel by URL).
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// The MCP endpoint's path.
pub const MCP_PATH: &str = "/mcp";

/// What `serve --http` will do, decided before anything is bound.
#[derive(Clone, PartialEq, Eq)]
pub struct Plan {
    /// The address to bind.
    pub addr: SocketAddr,
    /// `false` for the loopback defaults (127.0.0.1, ::1, localhost), `true` otherwise.
    pub explicit: bool,
    /// The bearer token every request must carry, if any.
    pub token: Option<String>,
    /// Host names (lower case, IPv6 without brackets) accepted in the `Host` header.
    pub hosts: Vec<String>,
    /// Extra origins (`--allow-origin`), normalised; the server's own origins are added once
    /// the port is known.
    pub origins: Vec<String>,
}

impl std::fmt::Debug for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plan")
            .field("addr", &self.addr)
            .field("explicit", &self.explicit)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("hosts", &self.hosts)
            .field("origins", &self.origins)
            .finish()
    }
}

/// Resolves the address, the token and the allow-lists. `env` reads environment variables.
pub fn plan(
    opts: &HttpServe,
    env: &dyn Fn(&str) -> Option<String>,
    config_token: Option<&str>,
) -> Result<Plan> {
    let default_port = match env(PORT_ENV).filter(|p| !p.trim().is_empty()) {
        None => DEFAULT_PORT,
        Some(p) => p.trim().parse::<u16>().ok().filter(|p| *p != 0).ok_or_else(|| {
            Error::invalid_argument(format!("{PORT_ENV} must be a port number from 1 to 65535, not '{p}'."))
        })?,
    };
    let (addr, named_localhost) = parse_addr(opts.addr.as_deref(), default_port)?;
    let default_loopback =
        addr.ip() == IpAddr::V4(Ipv4Addr::LOCALHOST) || addr.ip() == IpAddr::V6(Ipv6Addr::LOCALHOST);
    let explicit = !(named_localhost || default_loopback);
    let token = opts
        .token
        .clone()
        .or_else(|| env(TOKEN_ENV))
        .or_else(|| config_token.map(str::to_owned))
        .filter(|t| !t.is_empty());
    if explicit && token.is_none() {
        return Err(Error::invalid_argument(format!(
            "serve --http {addr}: an address other than 127.0.0.1, ::1 or localhost needs a bearer token; pass --token, set {TOKEN_ENV} or server.httpToken (or bind 127.0.0.1)."
        )));
    }
    let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
    if !addr.ip().is_unspecified() {
        hosts.push(addr.ip().to_string());
    }
    for h in &opts.allow_hosts {
        let h = host_name(h);
        if h.is_empty() {
            return Err(Error::invalid_argument("--allow-host needs a host name, e.g. docs.example.lan."));
        }
        hosts.push(h);
    }
    hosts.dedup();
    let origins = opts
        .allow_origins
        .iter()
        .map(|o| {
            normalize_origin(o).ok_or_else(|| {
                Error::invalid_argument(format!(
                    "--allow-origin '{o}' is not an origin; write scheme://host[:port], e.g. http://localhost:6274."
                ))
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Plan { addr, explicit, token, hosts, origins })
}

/// `ADDR` forms: none (the default), `PORT`, `:PORT`, `HOST` (default port), `HOST:PORT`,
/// `[V6]:PORT`, where HOST is an IP address or `localhost`. Returns the address and whether it
/// was named `localhost`.
fn parse_addr(given: Option<&str>, default_port: u16) -> Result<(SocketAddr, bool)> {
    let loopback = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let Some(text) = given.map(str::trim).filter(|t| !t.is_empty()) else {
        return Ok((SocketAddr::new(loopback, default_port), false));
    };
    let bad = || {
        Error::invalid_argument(format!(
            "--http '{text}' is not an address; use HOST:PORT with an IP address or localhost, e.g. 127.0.0.1:{DEFAULT_PORT}."
        ))
    };
    let port = |p: &str| p.parse::<u16>().map_err(|_| bad());
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok((addr, false));
    }
    if let Ok(ip) = text.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>() {
        return Ok((SocketAddr::new(ip, default_port), false));
    }
    if let Some(p) = text.strip_prefix(':') {
        return Ok((SocketAddr::new(loopback, port(p)?), false));
    }
    if text.bytes().all(|b| b.is_ascii_digit()) {
        return Ok((SocketAddr::new(loopback, port(text)?), false));
    }
    let (host, p) = text.rsplit_once(':').map_or((text, None), |(h, p)| (h, Some(p)));
    if host.eq_ignore_ascii_case("localhost") {
        let p = p.map(port).transpose()?.unwrap_or(default_port);
        return Ok((SocketAddr::new(loopback, p), true));
    }
    Err(bad())
}

/// The host part of a `Host` header value or an allow-list entry: lower case, no port, IPv6
/// without brackets.
pub(super) fn host_name(value: &str) -> String {
    let v = value.trim().to_ascii_lowercase();
    if let Some(rest) = v.strip_prefix('[') {
        return rest.split(']').next().unwrap_or("").to_owned();
    }
    match v.rsplit_once(':') {
        // One colon: host:port. More than one: a bare IPv6 address.
        Some((h, p)) if !h.contains(':') && p.bytes().all(|b| b.is_ascii_digit()) => h.to_owned(),
        _ => v,
    }
}

/// `scheme://host:port` in lower case with the default port made explicit; `None` for
/// anything else (including `null`).
pub(super) fn normalize_origin(value: &str) -> Option<String> {
    let v = value.trim().trim_end_matches('/').to_ascii_lowercase();
    let (scheme, rest) = v.split_once("://")?;
    let default_port = match scheme {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    if rest.is_empty() || rest.contains(['/', '?', '#', '@']) {
        return None;
    }
    let host = host_name(rest);
    let port = if let Some(after) = rest.strip_prefix('[') {
        after.split_once("]:").map(|(_, p)| p)
    } else {
        rest.rsplit_once(':').filter(|(h, _)| !h.contains(':')).map(|(_, p)| p)
    };
    let port: u16 = match port {
        Some(p) => p.parse().ok()?,
        None => default_port,
    };
    let host = if host.contains(':') { format!("[{host}]") } else { host };
    Some(format!("{scheme}://{host}:{port}"))
}

/// The checks every request passes before rmcp sees it.
pub struct Guard {
    hosts: Vec<String>,
    origins: Vec<String>,
    token_digest: Option<String>,
    max_body: usize,
}

impl Guard {
    /// The guard of a plan, once the bound port is known: the server's own origins
    /// (`http://<allowed host>:<port>`) plus `--allow-origin`.
    pub fn new(plan: &Plan, port: u16) -> Guard {
        let mut origins: Vec<String> = plan
            .hosts
            .iter()
            .filter_map(|h| {
                let h = if h.contains(':') { format!("[{h}]") } else { h.clone() };
                normalize_origin(&format!("http://{h}:{port}"))
            })
            .collect();
        origins.extend(plan.origins.iter().cloned());
        Guard {
            hosts: plan.hosts.clone(),
            origins,
            token_digest: plan.token.as_deref().map(|t| crate::text::sha256_hex(t.as_bytes())),
            max_body: MAX_BODY_BYTES,
        }
    }

    /// The refusal for these headers, if any (everything but the body size).
    pub fn check_headers(&self, headers: &axum::http::HeaderMap) -> Option<Response> {
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).map(host_name);
        match host {
            None => {
                return Some(refuse(
                    StatusCode::BAD_REQUEST,
                    "HOST_REQUIRED",
                    "The request has no Host header.",
                ));
            }
            Some(h) if !self.hosts.contains(&h) => {
                return Some(refuse(
                    StatusCode::FORBIDDEN,
                    "HOST_NOT_ALLOWED",
                    "The Host header names a host this server does not answer for (DNS-rebinding protection); connect to 127.0.0.1 or localhost, or start the server with --allow-host.",
                ));
            }
            Some(_) => {}
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let allowed =
                origin.to_str().ok().and_then(normalize_origin).is_some_and(|o| self.origins.contains(&o));
            if !allowed {
                return Some(refuse(
                    StatusCode::FORBIDDEN,
                    "ORIGIN_NOT_ALLOWED",
                    "Requests from this browser origin are refused; start the server with --allow-origin to allow it.",
                ));
            }
        }
        if let Some(expected) = &self.token_digest {
            let given = headers
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.split_once(' '))
                .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
                .map(|(_, token)| crate::text::sha256_hex(token.trim().as_bytes()));
            let ok = given.is_some_and(|g| bool::from(g.as_bytes().ct_eq(expected.as_bytes())));
            if !ok {
                let mut response = refuse(
                    StatusCode::UNAUTHORIZED,
                    "UNAUTHORIZED",
                    "A valid bearer token is required: send the header Authorization: Bearer <token>.",
                );
                response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
                return Some(response);
            }
        }
        None
    }

    fn too_large(&self) -> Response {
        refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            "PAYLOAD_TOO_LARGE",
            &format!("The request body is larger than {} MiB.", self.max_body / (1024 * 1024)),
        )
    }
}

/// A refusal: the status and a `{"code","message"}` JSON body.
fn refuse(status: StatusCode, code: &str, message: &str) -> Response {
    let body = serde_json::json!({ "code": code, "message": message }).to_string();
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// The axum middleware: headers, then the body size (read whole, it is a JSON-RPC message).
async fn guard(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    if let Some(refusal) = guard.check_headers(request.headers()) {
        return refusal;
    }
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > guard.max_body as u64) {
        return guard.too_large();
    }
    let (mut parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, guard.max_body).await {
        Ok(bytes) => bytes,
        Err(_) => return guard.too_large(),
    };
    if parts.method == axum::http::Method::POST {
        if let Some(refusal) = check_message(&parts.headers, &bytes) {
            return refusal;
        }
        accept_any(&mut parts.headers);
    }
    next.run(Request::from_parts(parts, Body::from(bytes))).await
}

/// The revision that dropped `initialize` (its clients call `server/discover`).
const DISCOVER_REVISION: &str = "2026-07-28";

/// A JSON-RPC error answer: `status` and `{"jsonrpc":"2.0","id":…,"error":{"code","message"}}`.
fn jsonrpc_error(status: StatusCode, id: Value, code: i32, message: &str) -> Response {
    let body =
        serde_json::json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } });
    (status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

/// The refusal for a POST body rmcp would answer badly (`docs/design/http.md`, Edge cases): not
/// JSON (400, -32700), what `edge::refusal` answers (a batch or a message that is not JSON-RPC
/// 2.0: 400, -32600; malformed params: 200, -32602), or `initialize` sent as the 2026-07-28
/// revision, which has no such method (404, -32601, like its other removed methods).
/// A body whose Content-Type is not JSON is left to rmcp (415).
fn check_message(headers: &axum::http::HeaderMap, bytes: &[u8]) -> Option<Response> {
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("application/json"));
    if !json {
        return None;
    }
    let message: Value = match serde_json::from_slice(bytes) {
        Ok(message) => message,
        Err(e) => {
            tracing::debug!("refused a POST body that is not JSON: {e}");
            return Some(jsonrpc_error(
                StatusCode::BAD_REQUEST,
                Value::Null,
                -32700,
                &format!("Parse error: the body is not JSON ({e}); send one JSON-RPC message as the body."),
            ));
        }
    };
    if let Some(refused) = super::edge::refusal(&message, Transport::Http) {
        tracing::debug!("refused a POST body: {}", refused.message);
        // A batch or a message that is not JSON-RPC 2.0 is a bad request; malformed params get
        // 200, as every JSON-RPC error of the revisions with `initialize`.
        let status = match refused.kind {
            Refused::Batch | Refused::NotJsonRpc => StatusCode::BAD_REQUEST,
            Refused::Params => StatusCode::OK,
        };
        return Some(jsonrpc_error(status, refused.id, refused.code, &refused.message));
    }
    let revision = headers.get("mcp-protocol-version").and_then(|v| v.to_str().ok()).unwrap_or_default();
    if message["method"] == "initialize" && revision >= DISCOVER_REVISION {
        tracing::debug!("refused initialize under MCP-Protocol-Version {revision}");
        return Some(jsonrpc_error(
            StatusCode::NOT_FOUND,
            message.get("id").cloned().unwrap_or(Value::Null),
            -32601,
            &format!(
                "Method not found: initialize is not part of the {DISCOVER_REVISION} revision (MCP-Protocol-Version {revision}); call server/discover, or send initialize without that header."
            ),
        ));
    }
    None
}

/// `Accept: */*` (or `application/*`, or no Accept at all) takes any answer, so it is read as
/// the `application/json, text/event-stream` rmcp asks for instead of being refused with 406.
fn accept_any(headers: &mut axum::http::HeaderMap) {
    let wildcard = match headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) {
        None => true,
        Some(accept) => accept.split(',').any(|part| {
            let media = part.split(';').next().unwrap_or_default().trim();
            media == "*/*" || media.eq_ignore_ascii_case("application/*")
        }),
    };
    if wildcard {
        headers.insert(header::ACCEPT, HeaderValue::from_static("application/json, text/event-stream"));
    }
}

async fn not_found() -> Response {
    refuse(StatusCode::NOT_FOUND, "NOT_FOUND", "The MCP endpoint is /mcp.")
}

/// Runs the server on HTTP until SIGINT or SIGTERM.
pub fn serve(engine: Engine, opts: &HttpServe) -> Result<()> {
    let plan = plan(opts, &|k| std::env::var(k).ok(), engine.config().server.http_token.as_deref())?;
    if plan.explicit {
        tracing::warn!(
            "serving on {}, not on 127.0.0.1: anyone who can reach it and knows the token can read{} this project's Markdown",
            plan.addr,
            if engine.config().knowledge_base.allow_writes { " and change" } else { "" }
        );
    }
    let runtime = super::runtime()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(plan.addr).await.map_err(|e| {
            Error::invalid_argument(format!(
                "could not listen on {}: {e}; is another server running there? Pass another address with --http ADDR or set {PORT_ENV}.",
                plan.addr
            ))
        })?;
        let bound = listener.local_addr().map_err(|e| Error::io("the listening socket", &e))?;
        // Small JSON-RPC answers: send them at once (no Nagle delay against the client's
        // delayed ACK).
        let listener = listener.tap_io(|tcp| {
            if let Err(e) = tcp.set_nodelay(true) {
                tracing::debug!("TCP_NODELAY: {e}");
            }
        });
        let server = super::start(engine);
        let stop = CancellationToken::new();
        let finished = CancellationToken::new();
        let config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_sse_keep_alive(None)
            .with_allowed_hosts(plan.hosts.iter().cloned())
            .with_max_request_body_bytes(MAX_BODY_BYTES)
            // Not `stop`: cancelling rmcp's token aborts calls in flight (a 500), so it is
            // cancelled only once axum has let them finish.
            .with_cancellation_token(finished.clone());
        let handler = server.clone();
        let service: StreamableHttpService<Server, NeverSessionManager> =
            StreamableHttpService::new(move || Ok(handler.clone()), Arc::default(), config);
        let guard_state = Arc::new(Guard::new(&plan, bound.port()));
        let app = axum::Router::new()
            .route_service(MCP_PATH, service)
            .fallback(not_found)
            .layer(axum::middleware::from_fn_with_state(guard_state, guard));
        watch_signals(&stop);
        let _ = writeln!(
            std::io::stderr(),
            "local-vector-search-mcp: serving MCP over Streamable HTTP at http://{bound}{MCP_PATH}"
        );
        let shutdown = stop.clone();
        axum::serve(listener, app)
            .with_graceful_shutdown(async move { shutdown.cancelled_owned().await })
            .await
            .map_err(|e| Error::internal(format!("the HTTP server stopped: {e}")))?;
        finished.cancel();
        tracing::info!("HTTP server stopped; in-flight calls finished");
        drop(server);
        Ok(())
    })
}

/// Cancels `stop` on Ctrl-C (SIGINT) or SIGTERM.
fn watch_signals(stop: &CancellationToken) {
    let on_int = stop.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_int.cancel();
        }
    });
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                let on_term = stop.clone();
                tokio::spawn(async move {
                    if term.recv().await.is_some() {
                        on_term.cancel();
                    }
                });
            }
            Err(e) => tracing::warn!("SIGTERM will not stop the server gracefully: {e}"),
        }
    }
}
