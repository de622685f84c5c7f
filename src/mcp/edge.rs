//! The messages both transports answer before rmcp sees them (`docs/design/http.md`, "Edge
//! cases"): what rmcp would answer badly, or not at all with the request's id.
//!
//! - A batch (a JSON array): -32600. Batches exist only in the 2025-03-26 revision, which this
//!   server does not negotiate ([`SUPPORTED_REVISIONS`]).
//! - An object that is not a JSON-RPC 2.0 message (`"jsonrpc": "1.0"`, none at all): -32600
//!   with the request's id when it has a usable one, so the client does not wait for an answer
//!   that never comes.
//! - `initialize`, `ping` or `tools/list` whose params are malformed: -32602 with the fixed
//!   sentence of [`super::malformed_params`], which names what the method takes (rmcp would
//!   answer a bare "Invalid request", or for `initialize` a sentence about `_meta` fields of a
//!   revision the client never asked for).
//!
//! Lines that are not JSON at all, and ids rmcp refuses itself (fractions, objects, integers
//! beyond 64 bits), are left to rmcp.

use rmcp::model::{InitializeRequestParams, ProtocolVersion};
use serde_json::Value;

/// The revisions this server negotiates: every one rmcp knows but 2025-03-26, whose servers
/// must accept JSON-RPC batches (the revisions before and after it have none). A client asking
/// for 2025-03-26 is offered the newest revision with `initialize`, as the specification's
/// version negotiation says.
pub(crate) const SUPPORTED_REVISIONS: &[ProtocolVersion] = &[
    ProtocolVersion::V_2024_11_05,
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_11_25,
    ProtocolVersion::V_2026_07_28,
];

/// Which transport a refusal is written for (the sentence says how to send messages on it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Transport {
    /// One message per line on stdin.
    Stdio,
    /// One message per POST.
    Http,
}

/// What kind of refusal: the HTTP status depends on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// A JSON-RPC batch.
    Batch,
    /// Not a JSON-RPC 2.0 message.
    NotJsonRpc,
    /// Malformed params of a method that takes few.
    Params,
}

/// A JSON-RPC error answer to send instead of handing the message to rmcp.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Refusal {
    pub kind: Refused,
    pub id: Value,
    pub code: i32,
    pub message: String,
}

impl Refusal {
    /// The answer's JSON text: `{"jsonrpc":"2.0","id":…,"error":{"code","message"}}`.
    pub fn to_json(&self) -> String {
        serde_json::json!({
            "jsonrpc": "2.0",
            "id": self.id,
            "error": { "code": self.code, "message": self.message },
        })
        .to_string()
    }
}

/// The answer to `message` when it is one this module refuses, else `None` (rmcp answers it).
/// Over stdio a message of the wrong version without a usable id is left to rmcp, whose answer
/// (a null id) is right then; over HTTP rmcp would answer 415 plain text, so it is refused here.
pub(crate) fn refusal(message: &Value, transport: Transport) -> Option<Refusal> {
    let how = match transport {
        Transport::Stdio => "send each message on its own line",
        Transport::Http => "send each request in its own POST",
    };
    let Some(object) = message.as_object() else {
        return Some(if message.is_array() {
            Refusal {
                kind: Refused::Batch,
                id: Value::Null,
                code: -32600,
                message: format!(
                    "JSON-RPC batches are not supported (MCP has them only in the 2025-03-26 revision, which this server does not negotiate); {how}."
                ),
            }
        } else {
            Refusal {
                kind: Refused::NotJsonRpc,
                id: Value::Null,
                code: -32600,
                message: format!("Invalid Request: a JSON-RPC message is a JSON object; {how}."),
            }
        });
    };
    let id = object.get("id").filter(|id| usable_id(id)).cloned();
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        let shown = match object.get("jsonrpc") {
            None => "missing".to_owned(),
            Some(v) => v.to_string().chars().take(40).collect(),
        };
        // Stdio: rmcp answers this too, but without the id; with no usable id its answer is right.
        if transport == Transport::Stdio && id.is_none() {
            return None;
        }
        return Some(Refusal {
            kind: Refused::NotJsonRpc,
            id: id.unwrap_or(Value::Null),
            code: -32600,
            message: format!(
                "Invalid Request: \"jsonrpc\" must be \"2.0\" (it is {shown}); this server speaks JSON-RPC 2.0."
            ),
        });
    }
    let method = object.get("method").and_then(Value::as_str)?;
    let id = id?;
    malformed(method, object.get("params")).then(|| Refusal {
        kind: Refused::Params,
        id,
        code: -32602,
        message: super::malformed_params(method).unwrap_or_default(),
    })
}

/// Whether `params` of `method` are malformed: not an object (or absent, for `initialize`), a
/// `_meta` that is not an object, or `initialize` params rmcp cannot read.
fn malformed(method: &str, params: Option<&Value>) -> bool {
    if !["initialize", "ping", "tools/list"].contains(&method) {
        return false;
    }
    let shape = params.is_some_and(|p| !p.is_object() && !p.is_null())
        || params.and_then(|p| p.get("_meta")).is_some_and(|m| !m.is_object() && !m.is_null());
    shape
        || (method == "initialize"
            && params.is_none_or(|p| serde_json::from_value::<InitializeRequestParams>(p.clone()).is_err()))
}

/// A request id rmcp accepts and echoes: a string, or an integer that fits 64 bits.
fn usable_id(id: &Value) -> bool {
    id.is_string() || id.is_i64() || id.is_u64()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn refusals_keep_the_id_and_say_what_to_send() {
        let r =
            refusal(&json!({"jsonrpc": "1.0", "id": 11, "method": "tools/list"}), Transport::Stdio).unwrap();
        assert_eq!((r.kind, r.code, r.id.clone()), (Refused::NotJsonRpc, -32600, json!(11)));
        assert!(r.message.contains("\"2.0\""), "{}", r.message);
        // Without a usable id, stdio leaves it to rmcp; HTTP answers it (rmcp would say 415).
        assert_eq!(refusal(&json!({"jsonrpc": "1.0", "method": "x"}), Transport::Stdio), None);
        assert_eq!(
            refusal(&json!({"jsonrpc": "1.0", "method": "x"}), Transport::Http).unwrap().id,
            Value::Null
        );
        let batch =
            refusal(&json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]), Transport::Http).unwrap();
        assert_eq!((batch.kind, batch.code), (Refused::Batch, -32600));
        assert!(batch.message.ends_with("send each request in its own POST."), "{}", batch.message);
        let init =
            json!({"jsonrpc": "2.0", "id": "a", "method": "initialize", "params": {"protocolVersion": 5}});
        let r = refusal(&init, Transport::Stdio).unwrap();
        assert_eq!((r.kind, r.code, r.id.clone()), (Refused::Params, -32602, json!("a")));
        assert!(
            r.message.starts_with("The params of 'initialize' are malformed; initialize takes"),
            "{}",
            r.message
        );
        let ok = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}});
        assert_eq!(refusal(&ok, Transport::Stdio), None);
        assert_eq!(
            refusal(
                &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": 1}),
                Transport::Stdio
            ),
            None
        );
        assert_eq!(refusal(&json!({"jsonrpc": "2.0", "id": 3, "result": {}}), Transport::Stdio), None);
    }
}
