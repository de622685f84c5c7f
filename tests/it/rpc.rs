//! A minimal MCP client over stdio (newline-delimited JSON-RPC) for tests that must control
//! timing or send what an SDK would not: starts the real binary, initializes, calls tools.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

use crate::support::bin;

/// A running server and its pipes; the server is killed when this is dropped.
pub struct Rpc {
    child: Child,
    /// `None` once [`Rpc::close`] hung up.
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Rpc {
    /// Starts the binary with `args` (no subcommand: the stdio server) and initializes.
    pub fn start(args: &[&std::ffi::OsStr]) -> Rpc {
        let mut cmd = bin();
        cmd.args(args).stderr(Stdio::null());
        Rpc::spawn(cmd)
    }

    /// Starts the server from `cmd` (arguments, environment and stderr set by the caller; stdin
    /// and stdout become pipes) and initializes.
    pub fn spawn(mut cmd: Command) -> Rpc {
        let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut rpc = Rpc { child, stdin: Some(stdin), stdout, next_id: 0 };
        let init = rpc.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "rpc", "version": "0"}}),
        );
        assert!(init["result"]["serverInfo"].is_object(), "{init}");
        rpc.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        rpc
    }

    /// The server process.
    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Sends a request without waiting for its answer; returns its id.
    pub fn send_request(&mut self, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// The frames left on stdout until the server closes it (call after the server died).
    pub fn remaining_frames(&mut self) -> Vec<Value> {
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(&mut self.stdout, &mut rest);
        rest.lines().filter(|l| !l.trim().is_empty()).filter_map(|l| serde_json::from_str(l).ok()).collect()
    }

    /// The server's process id (for `/proc/<pid>/status`).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Writes `bytes` and a newline as they are: garbage a client library would never send.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends `ping` with `id` and returns every frame that arrived before its answer, so a test
    /// sees what the server said to garbage sent just before (and that it still answers).
    pub fn frames_until_ping(&mut self, id: u64) -> Vec<Value> {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}));
        let mut frames = self.frames_until(|f| f["id"] == id && f.get("result").is_some());
        frames.pop();
        frames
    }

    /// Reads frames up to and including the first one `done` accepts.
    pub fn frames_until(&mut self, done: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut frames = Vec::new();
        let mut line = String::new();
        loop {
            line.clear();
            assert!(self.stdout.read_line(&mut line).unwrap() > 0, "the server closed stdout");
            let frame: Value = serde_json::from_str(&line).expect("stdout carries only JSON-RPC frames");
            let last = done(&frame);
            frames.push(frame);
            if last {
                return frames;
            }
        }
    }

    /// Calls a tool and returns the whole response frame, error or not.
    pub fn call_raw(&mut self, tool: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": arguments}))
    }

    fn send(&mut self, frame: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(frame.to_string().as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request and returns its response frame (skipping notifications).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params);
        let mut line = String::new();
        loop {
            line.clear();
            assert!(self.stdout.read_line(&mut line).unwrap() > 0, "the server closed stdout");
            let frame: Value = serde_json::from_str(&line).expect("stdout carries only JSON-RPC frames");
            if frame["id"] == id {
                return frame;
            }
        }
    }

    /// Calls a tool and returns its structured result; panics on an error result.
    pub fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let frame = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        let result = &frame["result"];
        assert_eq!(result["isError"], false, "{tool} failed: {frame}");
        result["structuredContent"].clone()
    }

    /// Polls `kb_status` until nothing is pending: `Ok` with that status, or `Err` with the last
    /// status once `deadline` passed.
    pub fn synchronized_by(&mut self, deadline: std::time::Instant) -> Result<Value, Value> {
        loop {
            let status = self.call("kb_status", json!({}));
            if status["synchronization"]["pendingFiles"] == 0 {
                return Ok(status);
            }
            if std::time::Instant::now() >= deadline {
                return Err(status);
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Hangs up like a client that goes away (closes the server's stdin) and waits up to 30 s
    /// for the server to exit on its own; `None` if it did not.
    pub fn close(&mut self) -> Option<std::process::ExitStatus> {
        self.stdin = None;
        for _ in 0..300 {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        None
    }
}

impl Drop for Rpc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The contract's `{"code","message"}` of an error result frame: the second content block. The
/// first block must be the same error as plain `CODE: message` text (`docs/design/clients.md`).
pub fn error_envelope(frame: &Value) -> Value {
    let result = &frame["result"];
    assert_eq!(result["isError"], true, "expected an error result: {frame}");
    let text = |i: usize| {
        result["content"][i]["text"].as_str().unwrap_or_else(|| panic!("no text block {i}: {frame}"))
    };
    let envelope: Value = serde_json::from_str(text(1)).expect("the second block is the JSON envelope");
    let plain = format!("{}: {}", envelope["code"].as_str().unwrap(), envelope["message"].as_str().unwrap());
    assert_eq!(text(0), plain, "the first block is CODE: message");
    envelope
}
