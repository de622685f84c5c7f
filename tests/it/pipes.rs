//! A reader that closes our stdout early is not a failure: `search … | head -c1` and a stdio
//! client that goes away both end in exit code 0 and no error sentence, as ripgrep does
//! (`docs/reliability.md`, "A reader that goes away").

use std::io::Write;
use std::process::Stdio;
use std::time::Duration;

use serde_json::json;

use crate::support::{Project, bin, exit_within};

/// Generous: the commands take well under a second; a loaded CI machine may not.
const EXIT_WAIT: Duration = Duration::from_secs(60);

/// A pipe whose reading end is already closed: every write to the other end is a broken pipe.
fn closed_pipe() -> std::io::PipeWriter {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    writer
}

#[test]
fn cli_output_into_a_closed_pipe_exits_zero_without_an_error() {
    let project = Project::from_fixture("ja");
    project.ok(&["reindex"]);
    for args in [
        &["search", "京都", "--mode", "lexical"][..],
        &["search", "京都", "--mode", "lexical", "--json"],
        &["status"],
        &["outline", "kyoto.md", "--json"],
        &["export-chunks"],
    ] {
        let child = bin()
            .arg("--project-root")
            .arg(project.root())
            .args(["--embedding-provider", "none"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(closed_pipe())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (status, log) = exit_within(child, EXIT_WAIT);
        assert_eq!(status.code(), Some(0), "{args:?}: {status:?}; stderr:\n{log}");
        assert!(!log.contains("error"), "{args:?}: stderr:\n{log}");
    }
    // Other failures still fail: the same command with a bad argument exits 1 with its sentence.
    let out = project.run(&["outline", "missing.md"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("error: "));
}

#[test]
fn a_stdio_server_whose_client_closed_stdout_exits_zero() {
    let project = Project::from_fixture("ja");
    let mut child = bin()
        .arg("--project-root")
        .arg(project.root())
        .args(["--embedding-provider", "none"])
        .stdin(Stdio::piped())
        .stdout(closed_pipe())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let init = json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}});
    let frame = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init});
    // The server may already be gone when the write lands; that is what is tested.
    let _ = stdin.write_all(format!("{frame}\n").as_bytes()).and_then(|()| stdin.flush());
    let (status, log) = exit_within(child, EXIT_WAIT);
    drop(stdin);
    assert_eq!(status.code(), Some(0), "{status:?}; stderr:\n{log}");
    assert!(!log.contains("ERROR") && !log.contains("error:"), "stderr:\n{log}");
}
