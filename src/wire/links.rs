//! `kb_links` and `kb_read_guide` shapes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which way `kb_links` follows links.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LinkDirection {
    /// Links written in the file.
    Outgoing,
    /// Links from other files to the file.
    Incoming,
    /// Both directions (the default).
    #[default]
    Both,
}

/// `kb_links` arguments.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LinksRequest {
    /// Root-relative path of an indexed `.md` file (or of a missing file that indexed files still
    /// link to). Omit it for the whole project's links (usually with brokenOnly: true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// `outgoing` (links written in the file), `incoming` (links to it) or `both` (default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<LinkDirection>,
    /// How many files away to follow links, 1–5 (default 1). Each file is visited once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<i64>,
    /// Only links whose target file or heading is missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broken_only: Option<bool>,
    /// Also list external URLs (default false; they are never fetched).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_external: Option<bool>,
    /// Most edges per page, 1–1000 (default 200).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    /// The nextCursor of the previous page, to continue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Most bytes of JSON per page (default `tools.maxAnswerBytes`, 32768; at least 1024).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<i64>,
}

/// One link.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LinkEdge {
    /// The linking file (root-relative).
    pub from: String,
    /// v2 anchor of the element holding the link (kb_read / kb_patch it to repair the link).
    pub from_anchor: String,
    /// The target: a root-relative path, or the URL of an external link.
    pub to: String,
    /// The heading fragment after `#` (percent-decoded), or null.
    pub to_fragment: Option<String>,
    /// `inline`, `reference`, `autolink`, `image` or `definition` (an unused reference definition).
    pub kind: String,
    /// Whether the target file or heading is missing.
    pub broken: bool,
    /// Why it is broken: `missing_file`, `missing_anchor`, `outside_root` or `invalid_path`; null
    /// when it is not.
    pub reason: Option<String>,
    /// The destination exactly as written (what a repair replaces).
    pub raw: String,
    /// 1-based line where the destination is written (reference-style links: the definition's
    /// line).
    pub line: usize,
    /// How many files away from `path` the link was found (1 = the file's own links or the links
    /// to it).
    pub depth: u8,
    /// An external URL.
    pub external: bool,
}

/// `kb_links` result.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LinksResponse {
    /// The path asked about, or null for the whole project.
    pub path: Option<String>,
    /// The links of this page, nearest first (whole project: by file and line).
    pub edges: Vec<LinkEdge>,
    /// Edges matching the request, over all pages.
    pub total: usize,
    /// Broken edges among them.
    pub broken: usize,
    /// Pass as cursor to get the next page; null on the last page.
    pub next_cursor: Option<String>,
    /// The index generation at which the link graph last changed (it follows edits once they
    /// are indexed).
    pub generation: u64,
    /// True when more edges follow on later pages; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
    /// One sentence when more edges follow (`limit` or the answer budget cut the page); absent
    /// on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

/// `kb_read_guide` arguments (flat, snake_case like the catalog tools).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadGuideRequest {
    /// Guide names to read, e.g. ["pointers", "patching"] (the names are in the server
    /// instructions).
    #[serde(default)]
    pub names: Vec<String>,
}

/// `kb_read_guide` result: one text block per guide, no structured content.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct TextBlocks {
    /// The text blocks, in order.
    pub blocks: Vec<String>,
}
