//! local-vector-search-mcp: a project's Markdown, searchable (Japanese-aware) and safely editable.
//!
//! Modules in reading order, foundations first (see `docs/architecture.md`):
//! `error`, `text`, `wire`, `workspace`, `markdown` (L0); `chunk`, `edit`, `table`, `links`, `config`,
//! `messages` (L1); `store`, `lexical`, `vectors`, `catalog`, `publish`, `search` (L2); `indexer`, `assets`,
//! `export`, `html` (L3); `engine` (L4); `mcp`, `cli` (L6).

pub mod assets;
pub mod catalog;
pub mod chunk;
pub mod cli;
pub mod config;
pub mod edit;
pub mod engine;
pub mod error;
pub mod export;
pub mod html;
pub mod indexer;
pub mod lexical;
pub mod links;
pub mod markdown;
pub mod mcp;
pub mod messages;
pub mod publish;
pub mod search;
pub mod store;
pub mod table;
pub mod text;
pub mod vectors;
pub mod wire;
pub mod workspace;

pub use error::{Error, ErrorCode, Result};

/// A named crash or pause point for the reliability tests (`docs/reliability.md`, "Failpoints").
///
/// Compiled only with the `failpoints` feature, which the test build switches on (the crate is its
/// own dev-dependency in `Cargo.toml`); every shipped build gets the empty function below. With
/// `LVS_FAILPOINTS="name=action;other=action"` in the environment, reaching `name` first writes
/// `failpoint <name> reached` to stderr (so a test knows where the process is), then:
///
/// - `pause`: sleeps forever; the test kills the process, and the kill provably lands here;
/// - `abort`: aborts the process (a crash at exactly this point, no destructor runs);
/// - `sleep(MS)`: sleeps MS milliseconds and goes on (widens a window for a concurrent action).
#[cfg(feature = "failpoints")]
pub fn failpoint(name: &str) {
    use std::sync::OnceLock;
    static POINTS: OnceLock<Vec<(String, String)>> = OnceLock::new();
    let points = POINTS.get_or_init(|| {
        std::env::var("LVS_FAILPOINTS")
            .unwrap_or_default()
            .split(';')
            .filter_map(|p| p.split_once('='))
            .map(|(n, a)| (n.trim().to_owned(), a.trim().to_owned()))
            .collect()
    });
    let Some((_, action)) = points.iter().find(|(n, _)| n == name) else { return };
    eprintln!("failpoint {name} reached");
    match action.as_str() {
        "pause" => loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        },
        "abort" => std::process::abort(),
        other => {
            let ms =
                other.strip_prefix("sleep(").and_then(|r| r.strip_suffix(')')).and_then(|n| n.parse().ok());
            match ms {
                Some(ms) => std::thread::sleep(std::time::Duration::from_millis(ms)),
                None => {
                    panic!("LVS_FAILPOINTS: unknown action '{other}' for '{name}' (pause, abort, sleep(MS))")
                }
            }
        }
    }
}

/// Without the `failpoints` feature (every shipped build) a failpoint is nothing.
#[cfg(not(feature = "failpoints"))]
#[inline(always)]
pub fn failpoint(_name: &str) {}

/// Where the product specification's checkout is (one file with the integration tests).
#[cfg(test)]
#[path = "../tests/common/shared_dir.rs"]
mod shared_dir;

/// Test data shared by the unit tests of several modules.
#[cfg(test)]
pub(crate) mod testdata {
    use std::path::{Path, PathBuf};

    /// `tests/vectors/`: the contract vectors, copied byte for byte from the product
    /// specification's `shared/spec/vectors/` (see the README there).
    pub(crate) fn vectors_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors")
    }

    /// A contract vector file from `tests/vectors/`, parsed.
    pub(crate) fn vectors(name: &str) -> serde_json::Value {
        let path = vectors_dir().join(name);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    pub(crate) use super::shared_dir::shared_or_skip;

    #[test]
    fn vectors_are_copies_of_the_spec() {
        let Some(source) = shared_or_skip("spec/vectors") else { return };
        let mut names: Vec<_> = std::fs::read_dir(vectors_dir())
            .expect("tests/vectors")
            .map(|e| e.expect("entry").file_name().into_string().expect("UTF-8 name"))
            .filter(|n| n.ends_with(".json"))
            .collect();
        names.sort();
        assert!(names.len() >= 10, "tests/vectors holds only {names:?}");
        for name in &names {
            let copy = std::fs::read(vectors_dir().join(name)).expect("copy");
            let original = std::fs::read(source.join(name))
                .unwrap_or_else(|e| panic!("tests/vectors/{name} has no source in spec/vectors: {e}"));
            assert!(
                copy == original,
                "tests/vectors/{name} differs from shared/spec/vectors/{name}: copy it again (tests/vectors/README.md)"
            );
        }
    }
}
