//! local-vector-search-mcp: a project's Markdown, searchable (Japanese-aware) and safely editable.
//!
//! Modules in reading order, foundations first (see `docs/architecture.md`):
//! `error`, `text`, `wire`, `workspace`, `markdown` (L0); `chunk`, `edit`, `table`, `config` (L1);
//! `store`, `lexical`, `vectors` (L2); `indexer` (L3); `engine` (L4); `mcp`, `cli` (L6).

pub mod chunk;
pub mod cli;
pub mod config;
pub mod edit;
pub mod engine;
pub mod error;
pub mod export;
pub mod indexer;
pub mod lexical;
pub mod markdown;
pub mod mcp;
pub mod store;
pub mod table;
pub mod text;
pub mod vectors;
pub mod wire;
pub mod workspace;

pub use error::{Error, ErrorCode, Result};

/// Test data shared by the unit tests of several modules.
#[cfg(test)]
pub(crate) mod testdata {
    use std::io::Write;
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

    /// The product specification's checkout beside the repository (`../shared`: corpora, eval
    /// sets, the original vectors), or `LVS_SHARED_DIR` when set (point it at a missing folder to
    /// check that the tests needing it skip cleanly).
    pub(crate) fn shared() -> PathBuf {
        match std::env::var_os("LVS_SHARED_DIR") {
            Some(dir) if !dir.is_empty() => PathBuf::from(dir),
            _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"),
        }
    }

    /// `shared()/<sub>` if it exists; otherwise prints one line saying the test was skipped and
    /// returns `None` (the caller returns). Written straight to stderr, so it shows even when
    /// the test harness captures output.
    pub(crate) fn shared_or_skip(sub: &str) -> Option<PathBuf> {
        let dir = shared().join(sub);
        if dir.exists() {
            return Some(dir);
        }
        let shown = match std::env::var_os("LVS_SHARED_DIR") {
            Some(d) if !d.is_empty() => dir.display().to_string(),
            _ => format!("../shared/{sub}"),
        };
        let test = std::thread::current().name().unwrap_or("a test").to_owned();
        let _ = writeln!(
            std::io::stderr().lock(),
            "skipped {test}: {shown} is absent (it needs the product spec checkout beside the repo)"
        );
        None
    }

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
