//! The log filter: what `RUST_LOG` turns on (`docs/reliability.md`, "Logs").
//!
//! Our own code never logs a document's text, a query, an API key, a URL's query string or a
//! vector, at any level. Some dependencies do at debug or trace: the MCP library logs every
//! request and response whole (tool arguments, patched Markdown, download URLs, read text),
//! HTTP clients log URLs with their query strings, the index library logs merge bookkeeping.
//! So `RUST_LOG` applies as given to our code, while each dependency in [`CAPPED`] is held at
//! `info` unless `RUST_LOG` names it itself (`RUST_LOG=trace,rmcp=trace` debugs the MCP
//! library, payloads and all: that is then the operator's explicit choice).
//!
//! Without `RUST_LOG` the level is `warn` (with the MCP library's per-request client mistakes at
//! `error`: [`crate::mcp::DEFAULT_LOG_FILTER`]), and the index library's warnings are dropped too:
//! with one commit per edit, a background merge often includes a tiny segment whose documents
//! the next edit of the same file deleted; the library drops such an empty segment at the
//! commit, then finds the merge's input gone, logs two warnings and abandons that merge (the
//! other inputs stay as they were and merge later). Nothing is lost and nothing is to be done,
//! so it is not an operator's warning.

/// Dependencies held at `info` unless `RUST_LOG` names them (target prefixes).
pub const CAPPED: &[&str] = &[
    "rmcp",
    "axum",
    "tower",
    "tower_http",
    "hyper",
    "hyper_util",
    "h2",
    "http",
    "reqwest",
    "rustls",
    "tokio",
    "mio",
    "tantivy",
    "lindera",
    "lindera_dictionary",
    "redb",
    "notify",
    "usearch",
];

/// The filter directives for `rust_log` (the value of `RUST_LOG`, if set and not blank).
pub fn directives(rust_log: Option<&str>) -> String {
    let Some(given) = rust_log.map(str::trim).filter(|s| !s.is_empty()) else {
        return format!("{},tantivy=error", crate::mcp::DEFAULT_LOG_FILTER);
    };
    // The cap only lowers: under a default of info or quieter (`RUST_LOG=warn`) the dependencies
    // already inherit it, and `krate=info` would raise them.
    let verbose = given.split(',').any(|d| {
        let d = d.trim().to_ascii_lowercase();
        !d.contains('=') && (d == "debug" || d == "trace")
    });
    if !verbose {
        return given.to_owned();
    }
    let named = |krate: &str| {
        given.split(',').any(|d| {
            let target = d.split(['=', '[']).next().unwrap_or("").trim();
            target == krate || target.starts_with(&format!("{krate}::"))
        })
    };
    let mut out = given.to_owned();
    for krate in CAPPED.iter().filter(|k| !named(k)) {
        out.push_str(&format!(",{krate}=info"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::directives;

    #[test]
    fn unset_means_warn_without_the_index_librarys_merge_warnings() {
        let unset = format!("{},tantivy=error", crate::mcp::DEFAULT_LOG_FILTER);
        assert_eq!(directives(None), unset);
        assert_eq!(directives(Some("  ")), unset);
    }

    #[test]
    fn trace_caps_every_dependency_at_info() {
        let d = directives(Some("trace"));
        assert!(d.starts_with("trace,"), "{d}");
        assert!(
            d.contains(",rmcp=info") && d.contains(",reqwest=info") && d.contains(",tantivy=info"),
            "{d}"
        );
    }

    #[test]
    fn a_quiet_default_is_not_raised_by_the_cap() {
        assert_eq!(directives(Some("warn")), "warn");
        assert_eq!(
            directives(Some("error,local_vector_search_mcp=debug")),
            "error,local_vector_search_mcp=debug"
        );
    }

    #[test]
    fn a_dependency_named_in_rust_log_is_not_capped() {
        let d = directives(Some("debug,rmcp=trace"));
        assert!(!d.contains("rmcp=info"), "{d}");
        assert!(d.contains(",reqwest=info"), "{d}");
        let d = directives(Some("debug,hyper::client=debug"));
        assert!(!d.contains("hyper=info") && d.contains(",tantivy=info"), "{d}");
        // `rmcp_extra` is another crate, not `rmcp`.
        assert!(directives(Some("debug,rmcp_extra=trace")).contains(",rmcp=info"));
    }
}
