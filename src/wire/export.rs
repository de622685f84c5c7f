//! `kb_create_pdf_book`: request and result.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `kb_create_pdf_book` arguments.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PdfBookRequest {
    /// Root-relative path of the `.md` file to render, e.g. `docs/manual.md`.
    pub path: String,
    /// Root-relative path of the PDF to write (default: `path` with `.pdf` instead of `.md`).
    /// Folders are created; an existing file there is replaced atomically. Never inside `.git`
    /// or the index folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_path: Option<String>,
    /// Paper: `a4`, `a5` (default), `a6`, `b5` (JIS, 182 × 257 mm) or `letter`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["a4", "a5", "a6", "b5", "letter", null]))]
    pub page_format: Option<String>,
    /// Look: `compact` (default), `classic`, `modern`, `technical` or `academic`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["compact", "classic", "modern", "technical", "academic", null]))]
    pub style: Option<String>,
    /// Images: `screen` (96 DPI, JPEG quality 65), `standard` (150 DPI / 82, default) or `print`
    /// (300 DPI / 95).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["screen", "standard", "print", null]))]
    pub profile: Option<String>,
    /// A 目次 (table of contents) page in front, with page numbers and links, when the document
    /// has at least three headings in its top two levels (default `true`; `false` turns it off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toc: Option<bool>,
}

/// Result of `kb_create_pdf_book`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PdfBookResponse {
    /// Root-relative path of the PDF written.
    pub path: String,
    /// Size of the PDF in bytes.
    pub bytes: u64,
    /// What could not be rendered as written: missing, remote or unsupported images (shown as a
    /// placeholder box), characters the font lacks (shown as 〓).
    pub warnings: Vec<String>,
}
