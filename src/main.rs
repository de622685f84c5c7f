//! `local-vector-search-mcp`: the MCP server (default) and the CLI.

use std::process::ExitCode;

fn main() -> ExitCode {
    // Logs go to stderr only: stdout carries protocol frames or command output.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            // RUST_LOG applies to our code; dependencies that log payloads stay at info unless
            // RUST_LOG names them (`docs/reliability.md`, "Logs").
            tracing_subscriber::EnvFilter::try_new(lvs::cli::logging::directives(
                std::env::var("RUST_LOG").ok().as_deref(),
            ))
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(lvs::mcp::DEFAULT_LOG_FILTER)),
        )
        .with_target(false)
        .init();
    lvs::cli::main(std::env::args().collect())
}
