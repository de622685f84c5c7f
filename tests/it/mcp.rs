//! Raw JSON-RPC abuse on stdio that no SDK would send. The client tests with the official MCP
//! Python SDK live in `tests/mcp/` and run as their own step of `.ci/run`.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

use serde_json::json;

use crate::support::{Project, bin};

/// The stdio server over `project`, not initialized: the test speaks raw JSON-RPC on its pipes.
fn raw_server(project: &Project) -> std::process::Child {
    bin()
        .arg("--project-root")
        .arg(project.root())
        .args(["--embedding-provider", "none"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn garbage_on_stdio_never_kills_the_server() {
    let project = Project::from_fixture("ja");
    let mut child = raw_server(&project);
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

/// The server over stdio on a copy of the `ja` fixture, logging at the default level (no
/// `RUST_LOG`) into a temporary file, returned with it.
fn quiet_server(project: &Project) -> (crate::rpc::Rpc, tempfile::NamedTempFile) {
    let log = tempfile::NamedTempFile::new().unwrap();
    let mut cmd = bin();
    cmd.env_remove("RUST_LOG")
        .arg("--project-root")
        .arg(project.root())
        .args(["--embedding-provider", "none"])
        .stderr(log.reopen().unwrap());
    (crate::rpc::Rpc::spawn(cmd), log)
}

/// The two content blocks of an error result: the plain `CODE: message` text and the
/// contract's `{"code","message"}` envelope.
fn error_blocks(frame: &serde_json::Value) -> (String, serde_json::Value) {
    let result = &frame["result"];
    assert_eq!(result["isError"], true, "expected an error result: {frame}");
    assert!(result.get("structuredContent").is_none(), "errors carry no structured content: {frame}");
    let first = result["content"][0]["text"].as_str().expect("a first text block").to_owned();
    let envelope = serde_json::from_str(result["content"][1]["text"].as_str().expect("a second text block"))
        .expect("the second block is the JSON envelope");
    (first, envelope)
}

#[test]
fn errors_lead_with_plain_text_and_keep_the_json_envelope_second() {
    let project = Project::from_fixture("ja");
    let (mut rpc, _) = quiet_server(&project);
    let frame = rpc.call_raw("kb_read", serde_json::json!({"request": {"path": "no-such-file.md"}}));
    let (text, envelope) = error_blocks(&frame);
    assert_eq!(envelope["code"], "NOT_FOUND", "{frame}");
    let message = envelope["message"].as_str().unwrap();
    assert_eq!(text, format!("NOT_FOUND: {message}"));
    // Not JSON: a client that parses a first JSON block into structured content (Gemini CLI)
    // leaves it alone and shows the model this text.
    assert!(serde_json::from_str::<serde_json::Value>(&text).is_err(), "{text}");
    let frame =
        rpc.call_raw("kb_read", serde_json::json!({"request": {"path": "kyoto.md", "maxElemnts": 2}}));
    let (text, envelope) = error_blocks(&frame);
    assert_eq!(envelope["code"], "INVALID_ARGUMENT");
    assert!(text.starts_with("INVALID_ARGUMENT: ") && text.contains("'maxElemnts'"), "{text}");
}

#[test]
fn client_injected_arguments_are_ignored_and_our_misspellings_refused() {
    let project = Project::from_fixture("ja");
    let (mut rpc, _) = quiet_server(&project);
    // Gemini CLI adds `wait_for_previous` to every tool and its model sets it.
    let read = rpc.call(
        "kb_read",
        serde_json::json!({"request": {"path": "kyoto.md", "maxElements": 1}, "wait_for_previous": true}),
    );
    assert_eq!(read["path"], "kyoto.md", "{read}");
    let status = rpc.call("kb_status", serde_json::json!({"wait_for_previous": false}));
    assert!(status.is_object(), "{status}");
    let frame = rpc.call_raw("kb_status", serde_json::json!({"wait_for_previus": true}));
    let (text, _) = error_blocks(&frame);
    assert!(text.contains("'wait_for_previus'"), "{text}");
    // Explicit nulls for optional fields are read as "not given" (the schemas say optional by
    // leaving a field out of `required`; a client may still send null).
    let read = rpc.call(
        "kb_read",
        serde_json::json!({"request": {"path": "kyoto.md", "pointer": null, "maxElements": null, "maxBytes": null}}),
    );
    assert_eq!(read["path"], "kyoto.md", "{read}");
    // Structured content leaves out null fields, as the output schema (no null types) says.
    fn has_null(v: &serde_json::Value) -> bool {
        match v {
            serde_json::Value::Null => true,
            serde_json::Value::Array(l) => l.iter().any(has_null),
            serde_json::Value::Object(m) => m.values().any(has_null),
            _ => false,
        }
    }
    assert!(!has_null(&read) && !has_null(&status), "{read}\n{status}");
}

#[test]
fn client_mistakes_log_no_warning_at_the_default_level() {
    let project = Project::from_fixture("ja");
    let (mut rpc, log) = quiet_server(&project);
    let _ = rpc.call_raw("kb_read", serde_json::json!({"request": {"path": "missing.md"}}));
    let _ = rpc.call_raw("kb_read", serde_json::json!({"request": {"path": 7}}));
    let _ = rpc.call_raw("no_such_tool", serde_json::json!({}));
    let _ = rpc.request("no/such/method", serde_json::json!({}));
    // Malformed params that reach the handler get a message about the method called. (Over
    // stdio rmcp itself answers params that are not an object, or a `_meta` that is not one, on
    // ping and tools/list with a bare -32600; over HTTP the guard answers them, see
    // tests/mcp/test_mcp_http.py.)
    for (method, params) in [
        ("initialize", serde_json::json!({"protocolVersion": 5})),
        ("tools/call", serde_json::json!({"name": 42})),
    ] {
        let frame = rpc.request(method, params);
        let message = frame["error"]["message"].as_str().unwrap_or_default().to_owned();
        assert!(
            message.contains(&format!("The params of '{method}' are malformed; {method} takes")),
            "{method}: {}",
            frame.to_string().chars().take(300).collect::<String>()
        );
    }
    rpc.send_raw(b"{not json");
    let _ = rpc.frames_until_ping(1000);
    drop(rpc);
    let stderr = std::fs::read_to_string(log.path()).unwrap();
    assert!(!stderr.contains("WARN"), "client mistakes logged a warning:\n{stderr}");
}

#[test]
fn a_first_reindex_prints_no_warning() {
    let project = Project::from_fixture("ja");
    let out = bin()
        .env_remove("RUST_LOG")
        .arg("--project-root")
        .arg(project.root())
        .args(["--embedding-provider", "none", "reindex"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("WARN"), "a first reindex warned:\n{stderr}");
}

/// Protocol edges over stdio (issue #44 item 5): a malformed `initialize` as the very first
/// message gets the fixed sentence (not rmcp's words about `_meta` fields) with its id, and the
/// server still takes a good `initialize`; a message that is not JSON-RPC 2.0 gets -32600 with
/// its id (the client would otherwise wait for an answer until it times out); a batch gets
/// -32600; 2025-03-26, whose servers must take batches, is not negotiated.
#[test]
fn stdio_protocol_edges_answer_with_the_id_and_the_fixed_text() {
    let project = Project::from_fixture("ja");
    let mut child = raw_server(&project);
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut exchange = |line: &str| -> serde_json::Value {
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
        let mut answer = String::new();
        assert!(stdout.read_line(&mut answer).unwrap() > 0, "no answer to {line}");
        serde_json::from_str(&answer).unwrap()
    };
    let bad_init =
        exchange(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":5}}"#);
    assert_eq!(
        (bad_init["id"].clone(), bad_init["error"]["code"].clone()),
        (json!(1), json!(-32602)),
        "{bad_init}"
    );
    let message = bad_init["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("The params of 'initialize' are malformed; initialize takes"), "{message}");
    assert!(!message.contains("_meta"), "{message}");
    let old = exchange(r#"{"jsonrpc":"1.0","id":"abc","method":"tools/list"}"#);
    assert_eq!((old["id"].clone(), old["error"]["code"].clone()), (json!("abc"), json!(-32600)), "{old}");
    let batch = exchange(r#"[{"jsonrpc":"2.0","id":3,"method":"ping"}]"#);
    assert_eq!(batch["error"]["code"], -32600, "{batch}");
    assert!(batch["error"]["message"].as_str().unwrap().contains("on its own line"), "{batch}");
    let init = exchange(
        r#"{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    );
    assert_eq!(init["id"], 4, "{init}");
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "2025-03-26 is not negotiated: {init}");
    // The notification has no answer: the next line is the answer to tools/list.
    let tools = exchange(
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\"}",
    );
    assert!(tools["result"]["tools"].as_array().is_some_and(|t| t.len() > 5), "{tools}");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}
