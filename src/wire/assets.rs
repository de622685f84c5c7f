//! Image and file-asset tools (`docs/reference/original-server.md` §7.12, §11; `kb_download_file`
//! from the product description): requests, responses and the binary reply that the MCP layer turns
//! into image or embedded-resource content blocks.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The OpenAI file parameter of `kb_save_image` (`_meta` `openai/fileParams`). Field names are
/// snake_case as the connector sends them.
// `download_url` and `file_id` are required in the schema but optional for serde, so that a
// missing one gets the contract's message (`The file parameter does not contain download_url.`).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = require_download_fields)]
pub struct FileParam {
    /// HTTPS URL the client uploaded the image to (required; raw Base64 and data URIs are not accepted).
    #[serde(default)]
    pub download_url: Option<String>,
    /// The client's file id (required).
    #[serde(default)]
    pub file_id: Option<String>,
    /// Declared MIME type; checked against the image signature when it names an image type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Original file name; used only as a naming hint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_name: Option<String>,
}

/// Marks `download_url` and `file_id` of [`FileParam`] required, as strings without a default.
fn require_download_fields(schema: &mut schemars::Schema) {
    const REQUIRED: [&str; 2] = ["download_url", "file_id"];
    if let Some(props) = schema.get_mut("properties").and_then(|p| p.as_object_mut()) {
        for name in REQUIRED {
            if let Some(prop) = props.get_mut(name).and_then(|p| p.as_object_mut()) {
                prop.remove("default");
                prop.insert("type".into(), "string".into());
            }
        }
    }
    schema.insert("required".into(), REQUIRED.iter().map(|&n| serde_json::Value::from(n)).collect());
}

/// `kb_save_image` arguments (flat).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SaveImageRequest {
    /// The uploaded image (an OpenAI file parameter: `download_url`, `file_id`, optional `mime_type`, `file_name`).
    pub file: FileParam,
    /// File name to save under in `images/` (an extension is added if missing; `-2`, `-3`… on collision). Not with targetPath.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_name: Option<String>,
    /// Alt text for the returned Markdown snippet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alt_text: Option<String>,
    /// Exact root-relative destination with extension, e.g. `docs/img/cover.png`; never overwritten (ALREADY_EXISTS). Not with fileName.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_path: Option<String>,
}

/// `kb_save_image` result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SaveImageResponse {
    /// Root-relative path of the saved image.
    pub path: String,
    /// Detected MIME type.
    pub mime_type: String,
    /// Size in bytes.
    pub bytes: u64,
    /// SHA-256 of the file, lowercase hex.
    pub sha256: String,
    /// `![alt](path)` with the root-relative path; the server never inserts it anywhere.
    pub markdown: String,
}

/// `kb_list_images` arguments (flat).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListImagesRequest {
    /// nextCursor of the previous page; omit for the first page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Images per page, 1..200 (default 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_size: Option<i64>,
    /// Most bytes of JSON per page (default `tools.maxAnswerBytes`, 32768; at least 1024).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<i64>,
}

/// One listed image.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageItem {
    /// Root-relative path.
    pub path: String,
    /// MIME type from the extension.
    pub mime_type: String,
    /// Size in bytes.
    pub bytes: u64,
    /// Last modification (UTC, RFC 3339).
    pub last_write_time_utc: String,
}

/// `kb_list_images` result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListImagesResponse {
    /// Images sorted case-insensitively, then ordinally.
    pub images: Vec<ImageItem>,
    /// Pass as cursor for the next page; null on the last page.
    pub next_cursor: Option<String>,
    /// True when more images follow on later pages; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
    /// One sentence saying that more images follow and how to read on; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

/// `kb_load_image`, `kb_delete_image` and `kb_download_file` arguments (flat).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AssetPathRequest {
    /// Root-relative path, e.g. `images/cover.png`.
    pub path: String,
}

/// Describes a file's original bytes (the text block after a binary block).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AssetFileInfo {
    /// Root-relative path.
    pub path: String,
    /// MIME type of the original file.
    pub mime_type: String,
    /// Size in bytes.
    pub bytes: u64,
    /// SHA-256 of the file, lowercase hex.
    pub sha256: String,
}

/// `kb_delete_image` result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeleteImageResponse {
    /// The deleted image.
    pub path: String,
    /// Always true.
    pub deleted: bool,
}

/// `kb_move_image` arguments (under `request`).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MoveImageRequest {
    /// Root-relative path of the image to move.
    pub source_path: String,
    /// Root-relative destination with a matching image extension; must not exist (folders are created).
    pub target_path: String,
    /// Optional SHA-256 (64 hex) the source must still have; else CONFLICT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_sha256: Option<String>,
}

/// `kb_move_image` result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MoveImageResponse {
    /// Where the image was.
    pub previous_path: String,
    /// Where it is now.
    pub path: String,
    /// SHA-256 of the moved file, lowercase hex.
    pub sha256: String,
}

/// How the binary part of a [`BinaryReply`] is shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BinaryKind {
    /// An MCP image content block.
    Image,
    /// An MCP embedded resource (blob) with this URI.
    Resource {
        /// The resource URI, e.g. `file:///docs/a.pdf` (root-relative, never an absolute path).
        uri: String,
    },
}

/// A tool result made of a binary block and a JSON text block (no structuredContent):
/// `kb_load_image`, `kb_download_file`.
#[derive(Clone, Debug, PartialEq)]
pub struct BinaryReply {
    /// Image block or embedded resource.
    pub kind: BinaryKind,
    /// MIME type of `data` (for a GIF preview `image/png`, while `info` still says `image/gif`).
    pub mime_type: String,
    /// The bytes to send.
    pub data: Vec<u8>,
    /// The metadata text block.
    pub info: AssetFileInfo,
}
