//! What a tool call answers: one [`Reply`] per handler, chosen by the handler's response type
//! ([`Answer`]), and the MCP result each kind of reply becomes.
//!
//! The kind of a reply is a property of the response type, fixed at compile time: a tool table
//! entry names its response type, and that type's [`Answer`] impl says whether `tools/list`
//! publishes an `outputSchema` and which [`Reply`] the value becomes. Nothing looks at the tool's
//! name or at run-time type ids to decide it.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::schema;
use crate::error::{Error, Result};
use crate::wire::{AssetFileInfo, BinaryKind, BinaryReply, CatalogText, TextBlocks};

/// What a tool call produced.
#[derive(Debug)]
pub(super) enum Reply {
    /// The contract's JSON: one compact text block plus the same JSON without its `null` fields
    /// as `structuredContent` (checked by clients against the published `outputSchema`).
    Json(Value),
    /// Plain text blocks, no structured content (`kb_read_guide`).
    Text(Vec<String>),
    /// The catalog's answer: one text block (Markdown or JSON); `structuredContent` only for
    /// `format: json`, as the catalog contract writes it (`docs/reference/catalog-spec.md` §2.2).
    Catalog {
        /// The text block.
        text: String,
        /// The structured content, nulls included.
        structured: Option<Value>,
    },
    /// A binary block (image or embedded resource) then the metadata JSON as text; no
    /// `structuredContent` (`docs/reference/original-server.md` §11.4).
    Binary(BinaryReply),
}

/// A response type a tool handler returns: how it is published and how it becomes a [`Reply`].
pub(super) trait Answer: Sized {
    /// Whether `tools/list` publishes [`Answer::shape`] as the tool's `outputSchema`. MCP requires
    /// `structuredContent` whenever an output schema is declared, so only [`Reply::Json`]
    /// answers publish one.
    const PUBLISHED: bool;
    /// The JSON shape of the answer: the published `outputSchema`, or for the other kinds the
    /// shape of their JSON (kept for the table's own checks, never served).
    fn shape() -> Value;
    /// The reply.
    fn reply(self) -> Result<Reply>;
}

/// A response sent as the contract's JSON ([`Reply::Json`]), with its `outputSchema` published.
pub(super) struct Json<T>(pub T);

impl<T: Serialize + JsonSchema> Answer for Json<T> {
    const PUBLISHED: bool = true;
    fn shape() -> Value {
        schema::output::<T>()
    }
    fn reply(self) -> Result<Reply> {
        serde_json::to_value(&self.0)
            .map(Reply::Json)
            .map_err(|e| Error::internal(format!("could not encode the result: {e}")))
    }
}

impl Answer for TextBlocks {
    const PUBLISHED: bool = false;
    fn shape() -> Value {
        schema::output::<TextBlocks>()
    }
    fn reply(self) -> Result<Reply> {
        Ok(Reply::Text(self.blocks))
    }
}

impl Answer for CatalogText {
    const PUBLISHED: bool = false;
    fn shape() -> Value {
        schema::output::<CatalogText>()
    }
    fn reply(self) -> Result<Reply> {
        Ok(Reply::Catalog { text: self.text, structured: self.structured })
    }
}

impl Answer for BinaryReply {
    const PUBLISHED: bool = false;
    /// The shape of the metadata text block.
    fn shape() -> Value {
        schema::output::<AssetFileInfo>()
    }
    fn reply(self) -> Result<Reply> {
        Ok(Reply::Binary(self))
    }
}

impl Reply {
    /// The MCP result of a successful call.
    pub(super) fn into_result(self) -> CallToolResult {
        match self {
            Reply::Json(value) => json(value),
            Reply::Text(blocks) => {
                CallToolResult::success(blocks.into_iter().map(ContentBlock::text).collect())
            }
            Reply::Catalog { text, structured } => {
                let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
                // No output schema is published for these, so nothing checks them against one:
                // the JSON stays as the catalog contract writes it, nulls included.
                result.structured_content = structured;
                result
            }
            Reply::Binary(reply) => binary(reply),
        }
    }
}

/// A [`Reply::Json`] result: the contract's JSON, compact, as text (pretty JSON would cost an
/// agent about a fifth more tokens for nothing), and the same JSON without its `null` fields as
/// `structuredContent`: the output schemas say "optional" by leaving a field out of `required`,
/// never with a null type, and clients check structured content against them.
fn json(value: Value) -> CallToolResult {
    let text = value.to_string();
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(schema::without_nulls(value));
    result
}

/// A [`Reply::Binary`] result: the image block or embedded resource first, then the metadata
/// JSON as text.
fn binary(reply: BinaryReply) -> CallToolResult {
    use base64::Engine as _;
    let data = base64::engine::general_purpose::STANDARD.encode(&reply.data);
    let first = match reply.kind {
        BinaryKind::Image => ContentBlock::image(data, reply.mime_type),
        BinaryKind::Resource { uri } => {
            ContentBlock::resource(ResourceContents::blob(data, uri).with_mime_type(reply.mime_type))
        }
    };
    let info = serde_json::to_string(&reply.info).unwrap_or_default();
    CallToolResult::success(vec![first, ContentBlock::text(info)])
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Each kind of reply becomes its own result shape; a catalog text keeps its nulls, JSON
    /// loses them in `structuredContent` only.
    #[test]
    fn each_reply_kind_has_its_result_shape() {
        let r = Json(json!({"a": 1, "b": null})).reply().unwrap().into_result();
        assert_eq!(r.content.len(), 1);
        assert_eq!(r.content[0].as_text().unwrap().text, r#"{"a":1,"b":null}"#);
        assert_eq!(r.structured_content, Some(json!({"a": 1})));
        let r = TextBlocks { blocks: vec!["x".into(), "y".into()] }.reply().unwrap().into_result();
        let texts: Vec<&str> = r.content.iter().map(|c| c.as_text().unwrap().text.as_str()).collect();
        assert_eq!((texts, r.structured_content), (vec!["x", "y"], None));
        let catalog = CatalogText { text: "{}".into(), structured: Some(json!({"next_cursor": null})) };
        let r = catalog.reply().unwrap().into_result();
        assert_eq!(r.content.len(), 1);
        assert_eq!(r.structured_content, Some(json!({"next_cursor": null})));
        let r = CatalogText { text: "# tags".into(), structured: None }.reply().unwrap().into_result();
        assert_eq!((r.content[0].as_text().unwrap().text.as_str(), r.structured_content), ("# tags", None));
        const { assert!(Json::<TextBlocks>::PUBLISHED && !TextBlocks::PUBLISHED) };
        const { assert!(!CatalogText::PUBLISHED && !BinaryReply::PUBLISHED) };
    }
}
