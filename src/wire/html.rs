//! `kb_export_html` and `kb_build_site` (`docs/reference/catalog-spec.md` §6.5, §6.6): flat
//! snake_case arguments like every catalog tool, root-relative paths in and out.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `kb_export_html` arguments.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExportHtmlRequest {
    /// Root-relative path of the Markdown file to export; must end in `.md`, e.g.
    /// `docs/guide.md`.
    pub file: String,
    /// Root-relative path of the HTML file to write, ending in `.html` or `.htm` (default: `file`
    /// with `.html` instead of `.md`, in the same folder). Folders are created; an existing file
    /// is replaced atomically.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub out: Option<String>,
    /// Root-relative path of a catalog configuration to use (for `html.*` settings and the title
    /// from the index); default: the server's `catalog:` section or `mdmark.config.yaml`, and
    /// without either the defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
}

/// Result of `kb_export_html`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ExportHtmlResponse {
    /// Root-relative path of the HTML file written.
    pub out: String,
    /// Broken links, images that were not embedded, removed raw HTML: `{file}:{line}:
    /// {sentence}` in source order; `[]` when none.
    pub warnings: Vec<String>,
}

/// `kb_build_site` arguments.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BuildSiteRequest {
    /// Root-relative path of a catalog configuration to use; default: the server's `catalog:`
    /// section or `mdmark.config.yaml`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
}

/// Result of `kb_build_site`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BuildSiteResponse {
    /// Root-relative path of the HTML file written (`build.out`).
    pub out: String,
    /// Number of documents included.
    pub docs: u64,
    /// Broken references (missing files and anchors, Markdown outside the build) and the other
    /// warnings of the export, in document order, then source order.
    pub warnings: Vec<String>,
}
