//! `local-vector-search-mcp`: the MCP server (default) and the CLI.

use std::process::ExitCode;

fn main() -> ExitCode {
    tune_malloc();
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

/// Tunes glibc's malloc before any thread starts (`docs/reliability.md`, "RSS under the soak"):
///
/// - arenas capped at 2: with glibc's default (8 per core) each of the HTTP server's client
///   threads gets an arena of its own, and memory freed in one is not reused by another;
/// - blocks of 128 KiB and more always mapped on their own (`M_MMAP_THRESHOLD`): glibc raises
///   that threshold each time such a block is freed, after which large blocks such as the index
///   writer's arena pages come from the heap and are freed into it. Under the soak the heap
///   stayed lower with the fixed threshold but still grew: this narrows the fragmentation, it
///   does not end it (the measurements are in that section of `docs/reliability.md`).
///
/// A setting given in the environment (`MALLOC_ARENA_MAX`, `MALLOC_MMAP_THRESHOLD_`) is left
/// to glibc.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)] // the one `unsafe` of the crate: libc calls with no pointer arguments
fn tune_malloc() {
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: `mallopt` sets a tuning parameter of the allocator; it is called first thing
        // in `main`, before this process starts any other thread.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 2);
        }
    }
    if std::env::var_os("MALLOC_MMAP_THRESHOLD_").is_none() {
        // SAFETY: as above.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
        }
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn tune_malloc() {}
