//! Shared helpers for the integration tests.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output};
use std::time::{Duration, Instant};

pub use crate::shared_dir::shared_or_skip;

/// A contract vector file from `tests/vectors/` (copies of the spec's, see the README there).
pub fn vectors(name: &str) -> serde_json::Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vectors").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `tests/fixtures/<name>`.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// Every `.md` file under `dir`, sorted.
pub fn markdown_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                stack.push(p);
            } else if ft.is_file() && p.extension().is_some_and(|x| x.eq_ignore_ascii_case("md")) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Copies a directory tree (files only, byte for byte).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// A temporary project holding a copy of a fixture workspace.
pub struct Project {
    pub dir: tempfile::TempDir,
}

impl Project {
    pub fn from_fixture(name: &str) -> Project {
        let dir = tempfile::tempdir().unwrap();
        copy_tree(&fixture(name), dir.path());
        Project { dir }
    }

    pub fn empty() -> Project {
        Project { dir: tempfile::tempdir().unwrap() }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn write(&self, rel: &str, text: &str) {
        let p = self.root().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// Runs the binary with `--project-root <root> --embedding-provider none` and `args`.
    pub fn run(&self, args: &[&str]) -> Output {
        bin()
            .arg("--project-root")
            .arg(self.root())
            .args(["--embedding-provider", "none"])
            .args(args)
            .output()
            .unwrap()
    }

    /// Runs and expects success; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        expect_success(self.run(args), args)
    }

    /// `search --json` parsed.
    pub fn search(&self, query: &str, extra: &[&str]) -> serde_json::Value {
        let mut args = vec!["search", query, "--json", "--mode", "lexical", "--top-k", "50"];
        args.extend_from_slice(extra);
        serde_json::from_str(&self.ok(&args)).unwrap()
    }

    /// The distinct paths of a search, in rank order.
    pub fn search_paths(&self, query: &str) -> Vec<String> {
        let mut seen = Vec::new();
        for r in self.search(query, &[])["results"].as_array().unwrap() {
            let p = r["path"].as_str().unwrap().to_owned();
            if !seen.contains(&p) {
                seen.push(p);
            }
        }
        seen
    }
}

/// Asserts that a run of `args` succeeded (showing its stderr if not); returns its stdout.
pub fn expect_success(out: Output, args: &[&str]) -> String {
    assert!(
        out.status.success(),
        "{args:?} failed ({:?}): {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Waits for `child` to exit on its own, killing it and failing the test after `limit`;
/// returns its status and its stderr (piped).
pub fn exit_within(mut child: Child, limit: Duration) -> (ExitStatus, String) {
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("the process did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut log = String::new();
    child.stderr.take().unwrap().read_to_string(&mut log).unwrap();
    (status, log)
}

/// The binary under test.
pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_local-vector-search-mcp"));
    c.env_remove("CLAUDE_PROJECT_DIR").env("RUST_LOG", "warn");
    c
}
