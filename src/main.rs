//! `local-vector-search-mcp`: the MCP server (default) and the CLI.

use std::process::ExitCode;

fn main() -> ExitCode {
    // Logs go to stderr only: stdout carries protocol frames or command output.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                // rmcp logs every JSON-RPC error a client causes at WARN; those are client
                // mistakes (the client gets the error), not something an operator must act on.
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(lvs::mcp::DEFAULT_LOG_FILTER)),
        )
        .with_target(false)
        .init();
    lvs::cli::main(std::env::args().collect())
}
