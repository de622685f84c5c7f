//! The document catalog tools (`docs/reference/catalog-spec.md` §6.1–§6.4): flat, snake_case
//! arguments kept from mdmark, results as specified there.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::values::{ValueSet, value_set_serde};

/// `kb_find_docs` arguments.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindDocsRequest {
    /// A word contained in the title, one of the aliases or the description (NFKC, case-insensitive; not split on spaces).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Keep documents that carry ALL of these tags (aliases resolve through the tag vocabulary).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// Keep documents that carry AT LEAST ONE of these tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub any_tags: Option<Vec<String>>,
    /// A document ID: keep the documents related to it (catalog relations, links, alias mentions) and add `relations` to each row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub related_to: Option<String>,
    /// Documents per page, 1 to 100 (default 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<i64>", range(min = 1, max = 100))]
    pub limit: Option<serde_json::Value>,
    /// The next_cursor of the previous call (same text, tags, any_tags and related_to).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Field set: brief (default: id, title, description, tags, chars), standard (+ path, aliases) or full (+ related, referenced_by).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["brief", "standard", "full"]))]
    pub view: Option<String>,
    /// Fields added to the view: path, aliases, related, referenced_by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include: Option<Vec<String>>,
    /// Fields removed from the view (after include): path, aliases, related, referenced_by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclude: Option<Vec<String>>,
    /// Most bytes per answer (Markdown text or JSON; default `tools.maxAnswerBytes`, 32768; at least 1024).
    #[serde(default, alias = "maxBytes", skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<i64>,
    /// Return only total, total_chars, tag_counts and warnings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count_only: Option<bool>,
    /// markdown (default: one Markdown text block) or json (structured content).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["markdown", "json"]))]
    pub format: Option<String>,
    /// Root-relative catalog configuration file to use instead of the server's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
}

/// `kb_list_tags` arguments.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListTagsRequest {
    /// Keep tags whose name, aliases or description contain this (NFKC, case-insensitive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// markdown (default) or json.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["markdown", "json"]))]
    pub format: Option<String>,
    /// The next_cursor of the previous page (same query and format).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Most bytes per answer (Markdown text or JSON; default `tools.maxAnswerBytes`, 32768; at least 1024).
    #[serde(default, alias = "maxBytes", skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<i64>,
    /// Root-relative catalog configuration file to use instead of the server's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
}

/// The answer of `kb_find_docs` / `kb_list_tags`: one text block, plus structured content for
/// `format: json` only (so no output schema is published).
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct CatalogText {
    /// The text block (Markdown, or the JSON serialised).
    pub text: String,
    /// The structured content (`format: json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured: Option<serde_json::Value>,
}

/// `kb_update_index` arguments.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateIndexRequest {
    /// doc, term or tag: which list (docs, terms or tags).
    #[schemars(extend("enum" = ["doc", "term", "tag"]))]
    pub kind: String,
    /// The document or term ID; for kind tag the tag's name.
    pub id: String,
    /// The whole new entry without its ID key (root-relative paths), or null to remove the entry.
    #[schemars(extend("type" = ["object", "null"]))]
    pub item: serde_json::Value,
    /// Root-relative catalog configuration file to use instead of the server's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
}

/// Result of `kb_update_index`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct UpdateIndexResponse {
    /// added, replaced or removed.
    pub action: String,
    /// Root-relative path of the index file.
    pub index: String,
}

/// `kb_check` arguments.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckRequest {
    /// Root-relative catalog configuration file to use instead of the server's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
    /// A git ref (branch, tag, commit): also report change_together partners that were not changed since its merge base with HEAD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// Most bytes of JSON per page of issues (default `tools.maxAnswerBytes`; at least 1024).
    #[serde(default, alias = "maxBytes", skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<i64>,
    /// The next_cursor of the previous page (same config and base).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// Result of `kb_check`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct CheckResponse {
    /// The problems found, in check order; empty when everything is consistent. One page of them
    /// when `next_cursor` is set.
    pub issues: Vec<CheckIssue>,
    /// Every problem found, on all pages (present when the answer is cut into pages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Pass as `cursor` for the next page of issues (absent on the last page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// True when more pages follow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
    /// Says which issues this page holds, when there are more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

/// One problem found by `kb_check`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct CheckIssue {
    /// Root-relative path of the file with the problem.
    pub file: String,
    /// A key path in a YAML file (docs[1].path), a 1-based line number in a Markdown file, or "".
    #[serde(rename = "where")]
    pub at: String,
    /// The issue kind (missing_doc, unknown_tag, broken_link, …).
    #[schemars(with = "String")]
    pub kind: IssueKind,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// The issue kinds of `kb_check` (`docs/reference/catalog-spec.md` §6.4.3), in the order of that
/// table. The output schema keeps the field a plain string, as the specification publishes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IssueKind {
    /// `config_error`
    ConfigError,
    /// `missing_index`
    MissingIndex,
    /// `invalid_yaml`
    InvalidYaml,
    /// `schema_error`
    SchemaError,
    /// `invalid_path`
    InvalidPath,
    /// `missing_doc`
    MissingDoc,
    /// `duplicate_id`
    DuplicateId,
    /// `duplicate_alias`
    DuplicateAlias,
    /// `unknown_tag`
    UnknownTag,
    /// `deprecated_tag`
    DeprecatedTag,
    /// `invalid_deprecation`
    InvalidDeprecation,
    /// `unknown_relation_target`
    UnknownRelationTarget,
    /// `self_relation`
    SelfRelation,
    /// `duplicate_relation`
    DuplicateRelation,
    /// `asymmetric_change_together`
    AsymmetricChangeTogether,
    /// `unindexed_doc`
    UnindexedDoc,
    /// `broken_link`
    BrokenLink,
    /// `missing_anchor`
    MissingAnchor,
    /// `missed_change_together`
    MissedChangeTogether,
}

impl ValueSet for IssueKind {
    const ALL: &'static [Self] = &[
        IssueKind::ConfigError,
        IssueKind::MissingIndex,
        IssueKind::InvalidYaml,
        IssueKind::SchemaError,
        IssueKind::InvalidPath,
        IssueKind::MissingDoc,
        IssueKind::DuplicateId,
        IssueKind::DuplicateAlias,
        IssueKind::UnknownTag,
        IssueKind::DeprecatedTag,
        IssueKind::InvalidDeprecation,
        IssueKind::UnknownRelationTarget,
        IssueKind::SelfRelation,
        IssueKind::DuplicateRelation,
        IssueKind::AsymmetricChangeTogether,
        IssueKind::UnindexedDoc,
        IssueKind::BrokenLink,
        IssueKind::MissingAnchor,
        IssueKind::MissedChangeTogether,
    ];

    fn as_str(self) -> &'static str {
        match self {
            IssueKind::ConfigError => "config_error",
            IssueKind::MissingIndex => "missing_index",
            IssueKind::InvalidYaml => "invalid_yaml",
            IssueKind::SchemaError => "schema_error",
            IssueKind::InvalidPath => "invalid_path",
            IssueKind::MissingDoc => "missing_doc",
            IssueKind::DuplicateId => "duplicate_id",
            IssueKind::DuplicateAlias => "duplicate_alias",
            IssueKind::UnknownTag => "unknown_tag",
            IssueKind::DeprecatedTag => "deprecated_tag",
            IssueKind::InvalidDeprecation => "invalid_deprecation",
            IssueKind::UnknownRelationTarget => "unknown_relation_target",
            IssueKind::SelfRelation => "self_relation",
            IssueKind::DuplicateRelation => "duplicate_relation",
            IssueKind::AsymmetricChangeTogether => "asymmetric_change_together",
            IssueKind::UnindexedDoc => "unindexed_doc",
            IssueKind::BrokenLink => "broken_link",
            IssueKind::MissingAnchor => "missing_anchor",
            IssueKind::MissedChangeTogether => "missed_change_together",
        }
    }

    fn refusal(given: &str) -> String {
        format!("Unknown issue kind '{given}'. Valid kinds: {}.", Self::spellings().join(", "))
    }

    /// Exact spellings only: `check.ignore` compares them as written.
    fn find(given: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|k| k.as_str() == given)
    }
}

value_set_serde!(IssueKind);

impl IssueKind {
    /// The wire spelling (`broken_link`, …).
    pub fn as_str(self) -> &'static str {
        ValueSet::as_str(self)
    }
}

impl std::fmt::Display for IssueKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}
