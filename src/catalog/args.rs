//! The arguments of the catalog tools, checked in the catalog's language
//! (`docs/reference/catalog-spec.md` §6.1.1, §6.2.1, §6.3.1): `kb_find_docs`'s become a
//! [`FindQuery`], `format` a flag.
//!
//! Invariants:
//!
//! - Every refusal is one sentence from the message catalogue (E11, E12, E15–E17).

use super::Language;
use super::find::{BRIEF_FIELDS, FindQuery, OPTIONAL_FIELDS};
use super::norm;
use crate::error::{Error, Result};
use crate::messages::{Msg, msg};
use crate::wire::FindDocsRequest;

/// Reads `format`: `true` for `json`, `false` for `markdown` or none.
pub fn format_is_json(format: Option<&str>, lang: Language) -> Result<bool> {
    match format {
        None | Some("markdown") => Ok(false),
        Some("json") => Ok(true),
        Some(other) => Err(not_valid(other, "format", &["markdown", "json"], lang)),
    }
}

/// E17.
fn not_valid(value: &str, argument: &str, list: &[&str], lang: Language) -> Error {
    Error::invalid_argument(msg!(lang, NotAValue, value, argument, list = list.join(lang.list_sep())))
}

/// `limit`: 1..=100, default 20 (E11 for another type, E12 out of range).
fn limit(value: Option<&serde_json::Value>, lang: Language) -> Result<usize> {
    match value {
        None | Some(serde_json::Value::Null) => Ok(20),
        Some(serde_json::Value::Number(n)) => match n.as_i64() {
            Some(l @ 1..=100) if n.is_i64() || n.is_u64() => Ok(l as usize),
            _ => Err(Error::invalid_argument(Msg::LimitRange.text(lang))),
        },
        Some(_) => Err(Error::invalid_argument(msg!(
            lang,
            ArgumentType,
            name = "limit",
            expected = Msg::ExpectInteger.text(lang),
            example = "20"
        ))),
    }
}

/// `include` and `exclude`: optional field names; brief fields cannot be excluded (E16).
fn field_lists(req: &FindDocsRequest, lang: Language) -> Result<(Vec<String>, Vec<String>)> {
    let include = req.include.clone().unwrap_or_default();
    let exclude = req.exclude.clone().unwrap_or_default();
    for (argument, list) in [("include", &include), ("exclude", &exclude)] {
        for f in list {
            if argument == "exclude" && BRIEF_FIELDS.contains(&f.as_str()) {
                return Err(Error::invalid_argument(msg!(lang, AlwaysReturned, field = f)));
            }
            if !OPTIONAL_FIELDS.contains(&f.as_str()) {
                return Err(not_valid(f, argument, &OPTIONAL_FIELDS, lang));
            }
        }
    }
    Ok((include, exclude))
}

/// Checks the arguments of `kb_find_docs` (§6.1.1).
pub fn find_query(req: &FindDocsRequest, lang: Language) -> Result<FindQuery> {
    let limit = limit(req.limit.as_ref(), lang)?;
    for (name, list) in [("tags", &req.tags), ("any_tags", &req.any_tags)] {
        if list.iter().flatten().any(|t| t.trim().is_empty()) {
            return Err(Error::invalid_argument(msg!(lang, EmptyTag, name)));
        }
    }
    let view = req.view.clone().unwrap_or_else(|| "brief".to_owned());
    if !["brief", "standard", "full"].contains(&view.as_str()) {
        return Err(not_valid(&view, "view", &["brief", "standard", "full"], lang));
    }
    let json = format_is_json(req.format.as_deref(), lang)?;
    let (include, exclude) = field_lists(req, lang)?;
    let count_only = req.count_only.unwrap_or(false);
    if count_only && req.cursor.is_some() {
        return Err(Error::invalid_argument(Msg::CountOnlyCursor.text(lang)));
    }
    Ok(FindQuery {
        text: req.text.clone().filter(|t| !norm(t).is_empty()),
        tags: req.tags.clone().unwrap_or_default(),
        any_tags: req.any_tags.clone().unwrap_or_default(),
        related_to: req.related_to.clone(),
        limit,
        cursor: req.cursor.clone(),
        view,
        include,
        exclude,
        count_only,
        json,
        budget: None,
    })
}

/// `item` of `kb_update_index`: an object, or `null` to remove the entry.
pub fn update_item(
    item: &serde_json::Value,
    lang: Language,
) -> Result<Option<&serde_json::Map<String, serde_json::Value>>> {
    match item {
        serde_json::Value::Null => Ok(None),
        serde_json::Value::Object(m) => Ok(Some(m)),
        _ => Err(Error::invalid_argument(Msg::ItemNotObject.text(lang))),
    }
}

/// E19 (in English: the write gate comes before the settings are read).
pub fn writes_disabled(tool: &str) -> String {
    msg!(Language::En, WritesDisabled, tool)
}
