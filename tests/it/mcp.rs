//! Raw JSON-RPC abuse on stdio that no SDK would send. The client tests with the official MCP
//! Python SDK live in `tests/mcp/` and run as their own step of `.ci/run`.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

use crate::support::{Project, bin};

#[test]
fn garbage_on_stdio_never_kills_the_server() {
    let project = Project::from_fixture("ja");
    let mut child = bin()
        .arg("--project-root")
        .arg(project.root())
        .args(["--embedding-provider", "none"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |line: &str| {
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    };
    send(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#,
    );
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let init: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(init["id"], 1);
    assert!(init["result"]["instructions"].as_str().unwrap().contains("kb_read"));
    send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    for garbage in [
        "this is not json",
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"kb_read\",\"arguments\":[1,2]}}",
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"no/such/method\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":42}}",
        "[]",
        "{\"id\":5}",
    ] {
        send(garbage);
    }
    send(
        r#"{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"kb_read","arguments":{"request":{"path":"kyoto.md","maxElements":1}}}}"#,
    );
    let mut answered = false;
    for _ in 0..20 {
        line.clear();
        if stdout.read_line(&mut line).unwrap() == 0 {
            break;
        }
        let v: serde_json::Value = serde_json::from_str(&line).expect("stdout carries only JSON-RPC frames");
        if v["id"] == 99 {
            assert_eq!(v["result"]["isError"], false, "{v}");
            answered = true;
            break;
        }
    }
    assert!(answered, "the server stopped answering after malformed input");
    drop(stdin);
    let _ = child.wait();
}
