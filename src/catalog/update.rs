//! `kb_update_index` (`docs/reference/catalog-spec.md` §6.3): replace, add or remove one entry,
//! validate the whole changed index, splice the text, check the round trip, write atomically.
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
use super::editor::{Splice, is_flow, reemit_flow, splice, unsupported};
use super::index::{MAX_INDEX_BYTES, PathBase, stored_path, validate};
use super::{Language, norm};
use crate::error::{Error, ErrorCode, Result};
use crate::messages::{Msg, msg};
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
        other => return Err(Error::invalid_argument(msg!(lang, BadKind, kind = other))),
    };
    if req.id.is_empty() || req.id.trim() != req.id {
        return Err(Error::invalid_argument(Msg::BadId.text(lang)));
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
        let edit = Edit {
            index_path: &index_path,
            dir: &dir,
            internal: ws.internal_dir_name(),
            list,
            id_key,
            id: req.id,
            new_entry: new_entry.as_ref(),
            lang,
        };
        let Some(planned) = edit.plan(&bytes)? else {
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
    Err(Error::new(ErrorCode::Conflict, Msg::ConcurrentChange.text(lang)))
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
            return Err(Error::invalid_argument(msg!(lang, ItemIdDiffers, key = id_key)));
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
                        Msg::IndexSchemaUpdate.text(lang),
                        Msg::RelatedNotObject.text(lang),
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
    Error::invalid_path(msg!(lang, NotRootRelative, path = p))
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

/// One planned edit of the index: which list and entry, the new entry, where the index lies.
struct Edit<'a> {
    /// Root-relative index path (for messages).
    index_path: &'a str,
    /// Root-relative folder of the index.
    dir: &'a str,
    /// The internal index directory name (refused in stored paths like `.git`).
    internal: &'a str,
    /// `docs`, `terms` or `tags`.
    list: &'a str,
    /// `id` or `name`.
    id_key: &'a str,
    /// The entry's ID.
    id: &'a str,
    /// The new entry, or `None` to remove.
    new_entry: Option<&'a Mapping>,
    lang: Language,
}

impl Edit<'_> {
    /// Plans one attempt: `None` when the replace changes nothing, else the action and new bytes.
    fn plan(&self, bytes: &[u8]) -> Result<Option<(&'static str, Vec<u8>)>> {
        let bom = bytes.starts_with(b"\xEF\xBB\xBF");
        let text = self.text(if bom { &bytes[3..] } else { bytes })?;
        let value = self.parse(text)?;
        let Value::Mapping(top) = &value else {
            return Err(unsupported(self.lang, Msg::FeatureTopNotMapping, &Msg::TopLevel.text(self.lang)));
        };
        let entries: Vec<Value> = match top.get(self.list) {
            Some(Value::Sequence(s)) => s.clone(),
            _ => Vec::new(),
        };
        let found = self.target(&entries)?;
        let Some((action, change, new_list)) = self.change(&entries, found)? else { return Ok(None) };
        let intended = self.intended(top, new_list.clone());
        let base = PathBase { dir: self.dir, internal: self.internal };
        let validated = validate(&intended, base, self.lang);
        if !validated.violations.is_empty() {
            let message = violation_message(Msg::IndexSchemaUpdate, &validated.violations, self.lang);
            return Err(Error::invalid_argument(message));
        }
        let produced = if is_flow(text, self.list, self.lang)? {
            let maps: Vec<Mapping> = new_list.iter().filter_map(|v| v.as_mapping().cloned()).collect();
            reemit_flow(text, self.list, &maps, self.lang)?
        } else {
            splice(text, self.list, &change, self.lang)?
        };
        self.check_round_trip(&produced, &intended)?;
        let mut out = Vec::with_capacity(produced.len() + 3);
        if bom {
            out.extend_from_slice(b"\xEF\xBB\xBF");
        }
        out.extend_from_slice(produced.as_bytes());
        Ok(Some((action, out)))
    }

    fn text<'b>(&self, body: &'b [u8]) -> Result<&'b str> {
        std::str::from_utf8(body).map_err(|_| {
            Error::new(ErrorCode::UnsupportedFormat, msg!(self.lang, IndexNotUtf8, path = self.index_path))
        })
    }

    /// The YAML value; more than one document is E24, other syntax errors E7.
    fn parse(&self, text: &str) -> Result<Value> {
        yaml_serde::from_str(text).map_err(|e| {
            let line = e.location().map_or(1, |l| l.line());
            let detail = super::config::yaml_detail(&e);
            if detail.contains("more than one document") {
                return unsupported(self.lang, Msg::FeatureManyDocuments, "---");
            }
            Error::invalid_argument(msg!(self.lang, IndexNotYaml, path = self.index_path, line, detail))
        })
    }

    /// The position of the entry with this ID: E22 when it appears twice, E40 when a new tag
    /// would differ from an existing one only in `norm`.
    fn target(&self, entries: &[Value]) -> Result<Option<usize>> {
        let key_of = |e: &Value| e.as_mapping().and_then(|m| m.get(self.id_key)).and_then(scalar_string);
        let hits: Vec<usize> = entries
            .iter()
            .enumerate()
            .filter(|(_, e)| key_of(e).as_deref() == Some(self.id))
            .map(|(i, _)| i)
            .collect();
        let (id, list, lang) = (self.id, self.list, self.lang);
        if hits.len() > 1 {
            return Err(Error::new(
                ErrorCode::Conflict,
                msg!(lang, DuplicateTarget, id, n = hits.len(), list),
            ));
        }
        let found = hits.first().copied();
        if list == "tags"
            && found.is_none()
            && self.new_entry.is_some()
            && let Some(existing) = entries.iter().filter_map(key_of).find(|n| norm(n) == norm(id))
        {
            return Err(Error::new(ErrorCode::Conflict, msg!(lang, NearDuplicateTag, name = id, existing)));
        }
        Ok(found)
    }

    /// The action, the splice and the new list; `None` when a replace changes nothing.
    #[allow(clippy::type_complexity)]
    fn change<'e>(
        &'e self,
        entries: &'e [Value],
        found: Option<usize>,
    ) -> Result<Option<(&'static str, Splice<'e>, Vec<Value>)>> {
        let mut new_list = entries.to_vec();
        let (action, change) = match (found, self.new_entry) {
            (Some(k), Some(new)) => {
                let Some(old) = entries[k].as_mapping() else {
                    let at = format!("{}[{k}]", self.list);
                    return Err(unsupported(self.lang, Msg::FeatureEntryNotMapping, &at));
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
                return Err(Error::not_found(msg!(
                    self.lang,
                    NothingToRemove,
                    id = self.id,
                    list = self.list
                )));
            }
        };
        Ok(Some((action, change, new_list)))
    }

    /// The whole index as it should read after the edit (an emptied `tags` list goes).
    fn intended(&self, top: &Mapping, new_list: Vec<Value>) -> Value {
        let mut intended = top.clone();
        if self.list == "tags" && new_list.is_empty() {
            intended.remove("tags");
        } else {
            intended.insert(Value::String(self.list.to_owned()), Value::Sequence(new_list));
        }
        Value::Mapping(intended)
    }

    /// Fail closed: the produced text must read back as exactly the intended data.
    fn check_round_trip(&self, produced: &str, intended: &Value) -> Result<()> {
        let reread: std::result::Result<Value, _> = yaml_serde::from_str(produced);
        if reread.as_ref().ok() == Some(intended) {
            return Ok(());
        }
        tracing::error!(
            "kb_update_index: the edited text of {} does not read back as the intended data; nothing was written",
            self.index_path
        );
        Err(Error::internal(Msg::Unexpected.text(self.lang)))
    }
}
