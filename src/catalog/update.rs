//! `kb_update_index` (`catalog.md` §6.3): replace, add or remove one entry, validate the whole
//! changed index, splice the text, check the round trip, write atomically.
//!
//! Invariants:
//!
//! - Nothing is written unless the whole changed index passes the schema and the produced text
//!   parses back to exactly the intended data (fail closed).
//! - The write replaces the file only if it still holds the bytes that were read; otherwise the
//!   edit is redone from the start, up to 3 attempts, then `CONFLICT`. Calls in this process are
//!   serialised, so two concurrent calls both land or one gets `CONFLICT`, never a lost update.

use serde_json::Value as Json;
use yaml_serde::{Mapping, Value};

use super::config::{CatalogSettings, scalar_string};
use super::docs::{index_missing_message, violation_message};
use super::editor::{Splice, is_flow, reemit_flow, splice};
use super::index::{MAX_INDEX_BYTES, PathBase, stored_path, validate};
use super::{Language, norm};
use crate::error::{Error, ErrorCode, Result};
use crate::text::sha256_hex;
use crate::workspace::{LockFile, PathContext, RelPath, Workspace};

/// Attempts before a concurrent external edit is reported.
const ATTEMPTS: usize = 3;

/// A validated request.
pub struct Update<'a> {
    /// `doc`, `term` or `tag`.
    pub kind: &'a str,
    /// The ID (or tag name).
    pub id: &'a str,
    /// The new entry without its ID key, or `None` to remove.
    pub item: Option<&'a serde_json::Map<String, Json>>,
}

/// What was done.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Updated {
    /// `added`, `replaced` or `removed`.
    pub action: &'static str,
    /// Root-relative index path.
    pub index: String,
}

/// Runs an update. `before_write` runs between the read and the write of every attempt (tests
/// use it to simulate an editor saving the file meanwhile); `write_lock` is held for the final
/// hash check and rename, so servers in other processes cannot interleave theirs (the engine's
/// `MUTATION.lock`; `None` where only this process writes). Calls on one index file are
/// serialised by the caller (the engine holds one lock per project for them).
pub fn update_index(
    ws: &Workspace,
    settings: &CatalogSettings,
    req: &Update<'_>,
    before_write: &dyn Fn(),
    write_lock: &dyn Fn() -> Result<Option<LockFile>>,
) -> Result<Updated> {
    let lang = settings.language;
    let (list, id_key) = match req.kind {
        "doc" => ("docs", "id"),
        "term" => ("terms", "id"),
        "tag" => ("tags", "name"),
        other => {
            return Err(Error::invalid_argument(lang.pick(
                format!("`{other}` is not a valid kind; use one of doc, term, tag."),
                format!("`{other}` は kind に使えません。doc・term・tag のどれかにしてください。"),
            )));
        }
    };
    if req.id.is_empty() || req.id.trim() != req.id {
        return Err(Error::invalid_argument(lang.pick(
            "id must not be empty or start or end with whitespace; pass the exact ID.",
            "id は空にも、前後に空白のある文字列にもできません。ID をそのまま渡してください。",
        )));
    }
    let index_path = settings.index_path()?.to_owned();
    let rel = ws.rel_path(&index_path, PathContext::Any)?;
    let dir = rel.parent().map(|p| p.as_str().to_owned()).unwrap_or_default();
    let new_entry = match req.item {
        None => None,
        Some(item) => Some(entry_value(item, list, id_key, req.id, &dir, lang)?),
    };
    for _ in 0..ATTEMPTS {
        let bytes = match ws.read_bytes(&rel, MAX_INDEX_BYTES) {
            Ok(b) => b,
            Err(e) if e.code == ErrorCode::NotFound => {
                return Err(Error::not_found(index_missing_message(lang, &index_path)));
            }
            Err(e) => return Err(e),
        };
        let Some(planned) =
            plan(ws, &bytes, &index_path, &dir, list, id_key, req.id, new_entry.as_ref(), lang)?
        else {
            return Ok(Updated { action: "replaced", index: index_path });
        };
        before_write();
        let _lock = write_lock()?;
        match ws.write_atomic(&rel, &planned.1, Some(&sha256_hex(&bytes)), false) {
            Ok(_) => return Ok(Updated { action: planned.0, index: index_path }),
            Err(e) if e.code == ErrorCode::Conflict => continue,
            Err(e) => return Err(e),
        }
    }
    Err(Error::new(
        ErrorCode::Conflict,
        lang.pick(
            "The index changed while it was being updated; call kb_update_index again.",
            "書き換えの間に索引が変わりました。kb_update_index をもう一度呼んでください。",
        ),
    ))
}

/// The new entry as YAML: the ID key first, `null` keys dropped, paths stored relative to the
/// index folder.
fn entry_value(
    item: &serde_json::Map<String, Json>,
    list: &str,
    id_key: &str,
    id: &str,
    dir: &str,
    lang: Language,
) -> Result<Mapping> {
    let mut item = item.clone();
    if let Some(given) = item.remove(id_key) {
        let same = match &given {
            Json::String(s) => s == id,
            Json::Number(n) => n.to_string() == id,
            _ => false,
        };
        if !same {
            return Err(Error::invalid_argument(lang.pick(
                format!("item.{id_key} differs from id; pass the new ID in id, or remove and add the entry to rename it."),
                format!("item の {id_key} が id と違います。新しい ID は id に渡すか、項目を消して足し直してください。"),
            )));
        }
    }
    item.retain(|_, v| !v.is_null());
    if list == "docs" {
        if let Some(Json::String(p)) = item.get("path") {
            let stored = stored_path(dir, &root_relative(p, lang)?);
            item.insert("path".into(), Json::String(stored));
        }
        if let Some(Json::Array(rel)) = item.get_mut("related") {
            for (i, r) in rel.iter_mut().enumerate() {
                let Json::Object(r) = r else {
                    return Err(Error::invalid_argument(format!(
                        "{}\nrelated[{i}]: {}",
                        lang.pick(
                            "The index would not match its schema, so it was not changed:",
                            "書き換えた後の索引がスキーマに合わないため、書き換えませんでした:",
                        ),
                        lang.pick(
                            "must be an object with to, type and when",
                            "to・type・when を持つオブジェクトにしてください"
                        ),
                    )));
                };
                if let Some(Json::Array(paths)) = r.get_mut("paths") {
                    for p in paths.iter_mut() {
                        if let Json::String(g) = p {
                            *g = stored_path(dir, &root_relative_glob(g, lang)?);
                        }
                    }
                }
            }
        }
    }
    let mut m = Mapping::new();
    m.insert(Value::String(id_key.to_owned()), Value::String(id.to_owned()));
    for (k, v) in item {
        let v = yaml_serde::to_value(&v)
            .map_err(|e| Error::internal(format!("could not convert the item: {e}")))?;
        m.insert(Value::String(k), v);
    }
    Ok(m)
}

fn path_error(p: &str, lang: Language) -> Error {
    Error::invalid_path(lang.pick(
        format!("`{p}` is not a root-relative path inside the project; use a root-relative path inside the project."),
        format!("`{p}` はプロジェクトの中の相対パスではありません。プロジェクトの中の相対パスにしてください。"),
    ))
}

fn root_relative(p: &str, lang: Language) -> Result<String> {
    RelPath::new(p).map(|r| r.as_str().to_owned()).map_err(|_| path_error(p, lang))
}

fn root_relative_glob(g: &str, lang: Language) -> Result<String> {
    let bad = g.is_empty()
        || g.starts_with('/')
        || g.contains('\\')
        || g.get(1..2) == Some(":")
        || g.split('/').any(|s| s == ".." || s.eq_ignore_ascii_case(".git"));
    if bad { Err(path_error(g, lang)) } else { Ok(g.trim_start_matches("./").to_owned()) }
}

/// Plans one attempt: `None` when the replace changes nothing, else the action and new bytes.
#[allow(clippy::too_many_arguments)]
fn plan(
    ws: &Workspace,
    bytes: &[u8],
    index_path: &str,
    dir: &str,
    list: &str,
    id_key: &str,
    id: &str,
    new_entry: Option<&Mapping>,
    lang: Language,
) -> Result<Option<(&'static str, Vec<u8>)>> {
    let bom = bytes.starts_with(b"\xEF\xBB\xBF");
    let body = if bom { &bytes[3..] } else { bytes };
    let text = std::str::from_utf8(body).map_err(|_| {
        Error::new(
            ErrorCode::UnsupportedFormat,
            lang.pick(
                format!("Index file `{index_path}` is not valid UTF-8; save it as UTF-8."),
                format!("索引のファイル `{index_path}` が UTF-8 ではありません。UTF-8 で保存してください。"),
            ),
        )
    })?;
    let value: Value = yaml_serde::from_str(text).map_err(|e| {
        let line = e.location().map_or(1, |l| l.line());
        let detail = super::config::yaml_detail(&e);
        if detail.contains("more than one document") {
            return super::editor::unsupported(lang, lang.pick("more than one YAML document", "複数の YAML 文書"), "---");
        }
        Error::invalid_argument(lang.pick(
            format!("Index file `{index_path}` is not valid YAML at line {line} ({detail}); fix the syntax."),
            format!("索引のファイル `{index_path}` の {line} 行目を YAML として読めません（{detail}）。書き方を直してください。"),
        ))
    })?;
    let Value::Mapping(top) = &value else {
        return Err(super::editor::unsupported(
            lang,
            lang.pick("a top level that is not a block mapping", "ブロックのマッピングでない最上位"),
            lang.pick("(top level)", "（最上位）"),
        ));
    };
    let entries: Vec<Value> = match top.get(list) {
        Some(Value::Sequence(s)) => s.clone(),
        _ => Vec::new(),
    };
    let key_of = |e: &Value| e.as_mapping().and_then(|m| m.get(id_key)).and_then(scalar_string);
    let hits: Vec<usize> = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| key_of(e).as_deref() == Some(id))
        .map(|(i, _)| i)
        .collect();
    if hits.len() > 1 {
        let n = hits.len();
        return Err(Error::new(
            ErrorCode::Conflict,
            lang.pick(
                format!("ID `{id}` appears {n} times in {list}; remove the duplicates first (kb_check lists them)."),
                format!("ID `{id}` が {list} に {n} 個あります。先に重なりを消してください（kb_check で確かめられます）。"),
            ),
        ));
    }
    let found = hits.first().copied();
    if list == "tags"
        && found.is_none()
        && new_entry.is_some()
        && let Some(existing) = entries.iter().filter_map(key_of).find(|n| norm(n) == norm(id))
    {
        return Err(Error::new(
            ErrorCode::Conflict,
            lang.pick(
                format!("Tag `{id}` would duplicate the existing tag `{existing}`; pass `{existing}` as id to replace it."),
                format!("タグ `{id}` は既にあるタグ `{existing}` と重なります。置き換えるなら id に `{existing}` を渡してください。"),
            ),
        ));
    }
    let mut new_list = entries.clone();
    let (action, change) = match (found, new_entry) {
        (Some(k), Some(new)) => {
            let Some(old) = entries[k].as_mapping() else {
                return Err(super::editor::unsupported(
                    lang,
                    lang.pick("an entry that is not a mapping", "マッピングでない項目"),
                    &format!("{list}[{k}]"),
                ));
            };
            if old == new {
                return Ok(None);
            }
            new_list[k] = Value::Mapping(new.clone());
            ("replaced", Splice::Replace { k, old, new })
        }
        (None, Some(new)) => {
            new_list.push(Value::Mapping(new.clone()));
            ("added", Splice::Add { new })
        }
        (Some(k), None) => {
            new_list.remove(k);
            ("removed", Splice::Remove { k })
        }
        (None, None) => {
            return Err(Error::not_found(lang.pick(
                format!("`{id}` is not in {list}; nothing was removed."),
                format!("`{id}` は {list} にありません。何も消していません。"),
            )));
        }
    };
    // The intended data.
    let mut intended = top.clone();
    if list == "tags" && new_list.is_empty() {
        intended.remove("tags");
    } else {
        intended.insert(Value::String(list.to_owned()), Value::Sequence(new_list.clone()));
    }
    let intended = Value::Mapping(intended);
    let validated = validate(&intended, PathBase { dir, internal: ws.internal_dir_name() }, lang);
    if !validated.violations.is_empty() {
        return Err(Error::invalid_argument(violation_message(
            lang.pick(
                "The index would not match its schema, so it was not changed:",
                "書き換えた後の索引がスキーマに合わないため、書き換えませんでした:",
            ),
            &validated.violations,
            lang,
        )));
    }
    let produced = if is_flow(text, list, lang)? {
        let maps: Vec<Mapping> = new_list.iter().filter_map(|v| v.as_mapping().cloned()).collect();
        reemit_flow(text, list, &maps, lang)?
    } else {
        splice(text, list, &change, lang)?
    };
    let reread: std::result::Result<Value, _> = yaml_serde::from_str(&produced);
    if reread.as_ref().ok() != Some(&intended) {
        tracing::error!(
            "kb_update_index: the edited text of {index_path} does not read back as the intended data; nothing was written"
        );
        return Err(Error::internal(lang.pick(
            "The operation failed unexpectedly; see the server log on stderr and retry.",
            "思わぬ理由で失敗しました。サーバーのログ（標準エラー）を確かめて、もう一度試してください。",
        )));
    }
    let mut out = Vec::with_capacity(produced.len() + 3);
    if bom {
        out.extend_from_slice(b"\xEF\xBB\xBF");
    }
    out.extend_from_slice(produced.as_bytes());
    Ok(Some((action, out)))
}
