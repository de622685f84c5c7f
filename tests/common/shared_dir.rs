//! Where the product specification's checkout is, for tests that need its corpora or eval sets;
//! one file included by the unit tests (`src/lib.rs`) and the integration tests (`tests/it`).

use std::io::Write;
use std::path::PathBuf;

/// The product specification's checkout beside the repository (`../shared`: corpora, eval
/// sets, the original vectors), or `LVS_SHARED_DIR` when set (point it at a missing folder to
/// check that the tests needing it skip cleanly).
pub fn shared() -> PathBuf {
    match std::env::var_os("LVS_SHARED_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"),
    }
}

/// `shared()/<sub>` if it exists; otherwise reports the test as skipped ([`skip`]) and returns
/// `None` (the caller returns).
pub fn shared_or_skip(sub: &str) -> Option<PathBuf> {
    let dir = shared().join(sub);
    if dir.exists() {
        return Some(dir);
    }
    let shown = match std::env::var_os("LVS_SHARED_DIR") {
        Some(d) if !d.is_empty() => dir.display().to_string(),
        _ => format!("../shared/{sub}"),
    };
    skip(&format!("{shown} is absent (it needs the product spec checkout beside the repo)"));
    None
}

/// Prints `SKIP <test>: <why>` for a test that returns without checking anything because an
/// input is missing. Written straight to stderr, so it shows even when the test harness
/// captures output (and passes); `grep -c '^SKIP '` over a run's output counts the skips.
pub fn skip(why: &str) {
    let test = std::thread::current().name().unwrap_or("a test").to_owned();
    let _ = writeln!(std::io::stderr().lock(), "SKIP {test}: {why}");
}
