//! The index file (`docs/reference/catalog-spec.md` §4): reading, the schema (§4.3–§4.4, §4.8) with
//! every violation as `{where}: {text}`, the tag vocabulary (§4.5) and the path conversion at the
//! tool boundary (§4.7).
//!
//! Invariants:
//!
//! - Validation reports every violation in document order; [`Index`] is built only from a
//!   value without violations (callers check [`Validated::violations`] first).
//! - Stored paths become root-relative here and nowhere else; [`stored_path`] is the inverse.

use std::collections::HashMap;

use yaml_serde::{Mapping, Value};

use super::config::{kind_of, scalar_string};
use super::{Language, norm};
use crate::messages::{Msg, msg};
use crate::workspace::{GlobFilter, RelPath};

/// The largest index file read (`docs/reference/catalog-spec.md` §4.1).
pub const MAX_INDEX_BYTES: u64 = 16 * 1024 * 1024;

/// The relation types of §4.6 and their names seen from the target.
pub const RELATION_TYPES: &[(&str, &str)] = &[
    ("requires", "required_by"),
    ("references", "referenced_by"),
    ("replaces", "replaced_by"),
    ("part_of", "has_part"),
    ("change_together", "change_together"),
];

/// The inverse name of a relation type.
pub fn inverse(kind: &str) -> &'static str {
    RELATION_TYPES.iter().find(|(k, _)| *k == kind).map_or("", |(_, inv)| inv)
}

/// A parsed, valid index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Index {
    /// `docs`, in file order.
    pub docs: Vec<DocEntry>,
    /// `terms` (empty when absent or null).
    pub terms: Vec<TermEntry>,
    /// `tags`: `Some` when the vocabulary is declared (§4.5).
    pub tags: Option<Vec<TagEntry>>,
}

/// A document entry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DocEntry {
    /// `id`.
    pub id: String,
    /// `path`, root-relative.
    pub path: String,
    /// `title`.
    pub title: String,
    /// `aliases`.
    pub aliases: Vec<String>,
    /// `description`.
    pub description: Option<String>,
    /// `tags`, as written.
    pub tags: Vec<TagRef>,
    /// `related`, as written.
    pub related: Vec<Relation>,
}

/// A tag reference on a document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TagRef {
    /// The tag as written.
    pub name: String,
    /// `main: true`.
    pub main: bool,
}

/// A relation record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Relation {
    /// `to`.
    pub to: String,
    /// `type` (`None` for a string record).
    pub kind: Option<String>,
    /// `when` (`None` for a string record).
    pub when: Option<String>,
    /// `paths`, root-relative globs.
    pub paths: Vec<String>,
}

/// A term entry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TermEntry {
    /// `id`.
    pub id: String,
    /// `term`.
    pub term: String,
    /// `aliases`.
    pub aliases: Vec<String>,
    /// `definition`.
    pub definition: String,
    /// `see`.
    pub see: Vec<String>,
}

/// A vocabulary entry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TagEntry {
    /// `name`.
    pub name: String,
    /// `group`.
    pub group: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// `aliases`.
    pub aliases: Vec<String>,
    /// `deprecated`: the replacement's name.
    pub deprecated: Option<String>,
}

/// One schema violation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Key path, e.g. `docs[3].related[0].type`.
    pub at: String,
    /// One sentence (no final period, as in §4.8).
    pub text: String,
}

impl Violation {
    /// `{where}: {text}`.
    pub fn line(&self) -> String {
        if self.at.is_empty() { self.text.clone() } else { format!("{}: {}", self.at, self.text) }
    }
}

/// The result of validating an index value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Validated {
    /// The model (complete only when there are no violations).
    pub index: Index,
    /// Every violation, in document order.
    pub violations: Vec<Violation>,
}

/// The context of stored paths: the index folder and the internal directory name.
#[derive(Clone, Copy, Debug)]
pub struct PathBase<'a> {
    /// Root-relative folder of the index file (`""` at the root).
    pub dir: &'a str,
    /// The internal index directory name (refused like `.git`).
    pub internal: &'a str,
}

/// Why a stored path is unusable as text.
enum PathProblem {
    Outside,
    Reserved(String),
}

/// `normalise(D + "/" + p)` (§4.7), or why not.
fn to_root(base: PathBase<'_>, stored: &str) -> Result<String, PathProblem> {
    if stored.contains('\\') || stored.starts_with('/') || stored.get(1..2) == Some(":") {
        return Err(PathProblem::Outside);
    }
    let mut parts: Vec<&str> = base.dir.split('/').filter(|s| !s.is_empty()).collect();
    for seg in stored.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop().ok_or(PathProblem::Outside)?;
            }
            s => parts.push(s),
        }
    }
    if parts.is_empty() {
        return Err(PathProblem::Outside);
    }
    for p in &parts {
        if p.eq_ignore_ascii_case(".git") || p.eq_ignore_ascii_case(base.internal) {
            return Err(PathProblem::Reserved(if p.eq_ignore_ascii_case(".git") {
                ".git".to_owned()
            } else {
                base.internal.to_owned()
            }));
        }
    }
    Ok(parts.join("/"))
}

/// The stored form of a root-relative path for an index in `dir` (§4.7, writing).
pub fn stored_path(dir: &str, root_relative: &str) -> String {
    let from: Vec<&str> = dir.split('/').filter(|s| !s.is_empty()).collect();
    let to: Vec<&str> = root_relative.split('/').filter(|s| !s.is_empty()).collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    // Never strip the last component of `to` (the file itself).
    let common = common.min(to.len().saturating_sub(1));
    let mut out: Vec<&str> = vec![".."; from.len() - common];
    out.extend(&to[common..]);
    out.join("/")
}

/// Validates an index value and builds the model.
pub fn validate(value: &Value, base: PathBase<'_>, language: Language) -> Validated {
    let mut v = Checker { language, base, out: Vec::new() };
    let mut index = Index::default();
    let Value::Mapping(top) = value else {
        v.push("", Msg::IndexNotMapping.text(language));
        return Validated { index, violations: v.out };
    };
    let mut has_docs = false;
    for (k, val) in top {
        let Some(key) = key_str(k) else {
            v.unknown("", &format!("{k:?}"));
            continue;
        };
        match key.as_str() {
            "version" => {
                if !matches!(val, Value::Number(n) if n.as_u64() == Some(1)) {
                    let shown = scalar_string(val).unwrap_or_else(|| kind_of(val).text(Language::En));
                    v.push("version", msg!(language, VersionUnsupported, version = shown));
                }
            }
            "docs" => {
                has_docs = true;
                if let Some(items) = v.list(val, "docs", false) {
                    for (i, item) in items.iter().enumerate() {
                        index.docs.push(v.doc(item, &format!("docs[{i}]")));
                    }
                }
            }
            "terms" => {
                if let Some(items) = v.list(val, "terms", true) {
                    for (i, item) in items.iter().enumerate() {
                        index.terms.push(v.term(item, &format!("terms[{i}]")));
                    }
                }
            }
            "tags" => {
                if let Some(items) = v.list(val, "tags", true) {
                    let mut list = Vec::new();
                    for (i, item) in items.iter().enumerate() {
                        list.push(v.tag(item, &format!("tags[{i}]")));
                    }
                    if !val.is_null() {
                        index.tags = Some(list);
                    }
                }
            }
            k if k.starts_with("x-") => {}
            other => v.unknown("", other),
        }
    }
    if !has_docs {
        v.missing("docs");
    }
    Validated { index, violations: v.out }
}

fn key_str(k: &Value) -> Option<String> {
    match k {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

struct Checker<'a> {
    language: Language,
    base: PathBase<'a>,
    out: Vec<Violation>,
}

impl Checker<'_> {
    fn push(&mut self, at: &str, text: String) {
        self.out.push(Violation { at: at.to_owned(), text });
    }

    fn join(prefix: &str, key: &str) -> String {
        if prefix.is_empty() { key.to_owned() } else { format!("{prefix}.{key}") }
    }

    fn unknown(&mut self, prefix: &str, key: &str) {
        let text = msg!(self.language, UnknownKey, key);
        self.push(&Self::join(prefix, key), text);
    }

    fn missing(&mut self, at: &str) {
        let key = at.rsplit('.').next().unwrap_or(at);
        let text = msg!(self.language, MissingKey, key);
        self.push(at, text);
    }

    fn wrong(&mut self, at: &str, expected: Expected, found: &Value) {
        let (expected, fix) = match expected {
            Expected::String => (Msg::ExpectString, Msg::FixString),
            Expected::List => (Msg::ExpectList, Msg::FixList),
            Expected::Mapping => (Msg::ExpectMapping, Msg::FixMapping),
            Expected::Bool => (Msg::ExpectBool, Msg::FixBool),
            Expected::Relation => (Msg::ExpectRelation, Msg::FixRelation),
            Expected::TagRef => (Msg::ExpectTagRef, Msg::FixTagRef),
        };
        let lang = self.language;
        let (expected, found, fix) = (expected.text(lang), kind_of(found).text(lang), fix.text(lang));
        self.push(at, msg!(lang, WrongType, expected, found, fix));
    }

    fn empty(&mut self, at: &str) {
        let text = Msg::EmptyValue.text(self.language);
        self.push(at, text);
    }

    /// A list value; `nullable` allows `null` (→ empty).
    fn list<'v>(&mut self, val: &'v Value, at: &str, nullable: bool) -> Option<&'v Vec<Value>> {
        match val {
            Value::Sequence(s) => Some(s),
            Value::Null if nullable => None,
            other => {
                self.wrong(at, Expected::List, other);
                None
            }
        }
    }

    /// A string; `required_non_empty` rejects `""`.
    fn string(&mut self, val: &Value, at: &str, non_empty: bool) -> Option<String> {
        match scalar_string(val) {
            Some(s) if non_empty && s.trim().is_empty() => {
                self.empty(at);
                None
            }
            Some(s) => Some(s),
            None => {
                self.wrong(at, Expected::String, val);
                None
            }
        }
    }

    /// A string or null.
    fn opt_string(&mut self, val: &Value, at: &str) -> Option<String> {
        if val.is_null() { None } else { self.string(val, at, false) }
    }

    fn strings(&mut self, val: &Value, at: &str) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(items) = self.list(val, at, true) {
            for (i, item) in items.iter().enumerate() {
                if let Some(s) = self.string(item, &format!("{at}[{i}]"), true) {
                    out.push(s);
                }
            }
        }
        out
    }

    fn id(&mut self, val: &Value, at: &str) -> Option<String> {
        let id = self.string(val, at, true)?;
        if id.chars().any(|c| c.is_whitespace() || c.is_control()) {
            let text = msg!(self.language, IdWhitespace, id);
            self.push(at, text);
        } else if id.chars().count() > 200 {
            let text = Msg::IdTooLong.text(self.language);
            self.push(at, text);
        }
        Some(id)
    }

    fn path(&mut self, val: &Value, at: &str) -> Option<String> {
        let stored = self.string(val, at, true)?;
        let root = self.checked_path(&stored, at)?;
        if !RelPath::new(&root).is_ok_and(|p| p.is_markdown()) {
            if RelPath::new(&root).is_err() {
                self.outside(&stored, at);
            } else {
                let text = msg!(self.language, NotMarkdownPath, path = stored);
                self.push(at, text);
            }
            return None;
        }
        Some(root)
    }

    fn outside(&mut self, stored: &str, at: &str) {
        let text = msg!(self.language, StoredOutside, path = stored);
        self.push(at, text);
    }

    fn checked_path(&mut self, stored: &str, at: &str) -> Option<String> {
        match to_root(self.base, stored) {
            Ok(p) => Some(p),
            Err(PathProblem::Outside) => {
                self.outside(stored, at);
                None
            }
            Err(PathProblem::Reserved(dir)) => {
                let text = msg!(self.language, StoredReserved, path = stored, dir);
                self.push(at, text);
                None
            }
        }
    }

    fn glob(&mut self, val: &Value, at: &str) -> Option<String> {
        let stored = self.string(val, at, true)?;
        let root = self.checked_path(&stored, at)?;
        if GlobFilter::new(std::slice::from_ref(&root), &[]).is_err() {
            let text = msg!(self.language, NotAGlob, pattern = stored);
            self.push(at, text);
            return None;
        }
        Some(root)
    }

    fn mapping<'v>(&mut self, val: &'v Value, at: &str) -> Option<&'v Mapping> {
        match val {
            Value::Mapping(m) => Some(m),
            other => {
                self.wrong(at, Expected::Mapping, other);
                None
            }
        }
    }

    fn doc(&mut self, val: &Value, at: &str) -> DocEntry {
        let mut d = DocEntry::default();
        let Some(m) = self.mapping(val, at) else { return d };
        let mut seen = Vec::new();
        for (k, v) in m {
            let key = key_str(k).unwrap_or_default();
            let here = Self::join(at, &key);
            seen.push(key.clone());
            match key.as_str() {
                "id" => d.id = self.id(v, &here).unwrap_or_default(),
                "path" => d.path = self.path(v, &here).unwrap_or_default(),
                "title" => d.title = self.string(v, &here, true).unwrap_or_default(),
                "aliases" => d.aliases = self.strings(v, &here),
                "description" => d.description = self.opt_string(v, &here),
                "tags" => {
                    if let Some(items) = self.list(v, &here, true) {
                        for (i, item) in items.iter().enumerate() {
                            if let Some(t) = self.tag_ref(item, &format!("{here}[{i}]")) {
                                d.tags.push(t);
                            }
                        }
                    }
                }
                "related" => {
                    if let Some(items) = self.list(v, &here, true) {
                        for (i, item) in items.iter().enumerate() {
                            if let Some(r) = self.relation(item, &format!("{here}[{i}]")) {
                                d.related.push(r);
                            }
                        }
                    }
                }
                k if k.starts_with("x-") => {}
                other => self.unknown(at, other),
            }
        }
        for required in ["id", "path", "title"] {
            if !seen.iter().any(|s| s == required) {
                self.missing(&Self::join(at, required));
            }
        }
        d
    }

    fn tag_ref(&mut self, val: &Value, at: &str) -> Option<TagRef> {
        match val {
            Value::Mapping(m) => {
                let mut name = None;
                let mut main = false;
                for (k, v) in m {
                    let key = key_str(k).unwrap_or_default();
                    let here = Self::join(at, &key);
                    match key.as_str() {
                        "name" => name = self.string(v, &here, true),
                        "main" => match v {
                            Value::Bool(b) => main = *b,
                            Value::Null => {}
                            other => self.wrong(&here, Expected::Bool, other),
                        },
                        k if k.starts_with("x-") => {}
                        other => self.unknown(at, other),
                    }
                }
                if !m.contains_key("name") {
                    self.missing(&Self::join(at, "name"));
                }
                name.map(|name| TagRef { name, main })
            }
            Value::String(_) | Value::Number(_) => {
                self.string(val, at, true).map(|name| TagRef { name, main: false })
            }
            other => {
                self.wrong(at, Expected::TagRef, other);
                None
            }
        }
    }

    fn relation(&mut self, val: &Value, at: &str) -> Option<Relation> {
        match val {
            Value::Mapping(m) => {
                let mut r = Relation { to: String::new(), kind: None, when: None, paths: Vec::new() };
                for (k, v) in m {
                    let key = key_str(k).unwrap_or_default();
                    let here = Self::join(at, &key);
                    match key.as_str() {
                        "to" => r.to = self.string(v, &here, true).unwrap_or_default(),
                        "type" => {
                            if let Some(t) = self.string(v, &here, true) {
                                if RELATION_TYPES.iter().any(|(k, _)| *k == t) {
                                    r.kind = Some(t);
                                } else {
                                    let text = msg!(self.language, NotARelationType, type = t);
                                    self.push(&here, text);
                                }
                            }
                        }
                        "when" => r.when = self.string(v, &here, true),
                        "paths" => {
                            if let Some(items) = self.list(v, &here, true) {
                                for (i, item) in items.iter().enumerate() {
                                    if let Some(g) = self.glob(item, &format!("{here}[{i}]")) {
                                        r.paths.push(g);
                                    }
                                }
                            }
                        }
                        k if k.starts_with("x-") => {}
                        other => self.unknown(at, other),
                    }
                }
                for required in ["to", "type", "when"] {
                    if !m.contains_key(required) {
                        self.missing(&Self::join(at, required));
                    }
                }
                Some(r)
            }
            Value::String(_) | Value::Number(_) => self.string(val, at, true).map(|to| Relation {
                to,
                kind: None,
                when: None,
                paths: Vec::new(),
            }),
            other => {
                self.wrong(at, Expected::Relation, other);
                None
            }
        }
    }

    fn term(&mut self, val: &Value, at: &str) -> TermEntry {
        let mut t = TermEntry::default();
        let Some(m) = self.mapping(val, at) else { return t };
        for (k, v) in m {
            let key = key_str(k).unwrap_or_default();
            let here = Self::join(at, &key);
            match key.as_str() {
                "id" => t.id = self.id(v, &here).unwrap_or_default(),
                "term" => t.term = self.string(v, &here, true).unwrap_or_default(),
                "aliases" => t.aliases = self.strings(v, &here),
                "definition" => t.definition = self.string(v, &here, true).unwrap_or_default(),
                "see" => t.see = self.strings(v, &here),
                k if k.starts_with("x-") => {}
                other => self.unknown(at, other),
            }
        }
        for required in ["id", "term", "definition"] {
            if !m.contains_key(required) {
                self.missing(&Self::join(at, required));
            }
        }
        t
    }

    fn tag(&mut self, val: &Value, at: &str) -> TagEntry {
        let mut t = TagEntry::default();
        let Some(m) = self.mapping(val, at) else { return t };
        for (k, v) in m {
            let key = key_str(k).unwrap_or_default();
            let here = Self::join(at, &key);
            match key.as_str() {
                "name" => t.name = self.string(v, &here, true).unwrap_or_default(),
                "group" => t.group = self.opt_string(v, &here),
                "description" => t.description = self.opt_string(v, &here),
                "aliases" => t.aliases = self.strings(v, &here),
                "deprecated" => t.deprecated = self.opt_string(v, &here),
                k if k.starts_with("x-") => {}
                other => self.unknown(at, other),
            }
        }
        if !m.contains_key("name") {
            self.missing(&Self::join(at, "name"));
        }
        t
    }
}

#[derive(Clone, Copy)]
enum Expected {
    String,
    List,
    Mapping,
    Bool,
    Relation,
    TagRef,
}

/// The tag vocabulary with resolution (§4.5), indexed by `norm` so a lookup is one hash.
pub struct Vocabulary<'a> {
    tags: Option<&'a [TagEntry]>,
    /// `norm(name)` of each entry.
    names: Vec<String>,
    /// `norm(name)` → first entry with that name.
    by_name: HashMap<String, usize>,
    /// `norm(alias)` → first entry with that alias.
    by_alias: HashMap<String, usize>,
}

/// A resolved tag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resolved {
    /// A vocabulary entry (index into `tags`).
    Known(usize),
    /// Not in the vocabulary (or no vocabulary): the tag as given.
    Unknown(String),
}

impl<'a> Vocabulary<'a> {
    /// The vocabulary of `index`.
    pub fn new(index: &'a Index) -> Vocabulary<'a> {
        let entries = index.tags.as_deref().unwrap_or(&[]);
        let names: Vec<String> = entries.iter().map(|e| norm(&e.name)).collect();
        let mut by_name = HashMap::new();
        let mut by_alias = HashMap::new();
        for (i, e) in entries.iter().enumerate() {
            by_name.entry(names[i].clone()).or_insert(i);
            for a in &e.aliases {
                by_alias.entry(norm(a)).or_insert(i);
            }
        }
        Vocabulary { tags: index.tags.as_deref(), names, by_name, by_alias }
    }

    /// Whether the vocabulary is declared.
    pub fn declared(&self) -> bool {
        self.tags.is_some()
    }

    /// The entries.
    pub fn entries(&self) -> &'a [TagEntry] {
        self.tags.unwrap_or(&[])
    }

    /// Resolves a tag string (by name, then by alias, else unknown).
    pub fn resolve(&self, tag: &str) -> Resolved {
        let n = norm(tag);
        match self.by_name.get(&n).or_else(|| self.by_alias.get(&n)) {
            Some(&i) => Resolved::Known(i),
            None => Resolved::Unknown(tag.to_owned()),
        }
    }

    /// The canonical key of a resolved tag (`norm` of the canonical name).
    pub fn key(&self, r: &Resolved) -> String {
        match r {
            Resolved::Known(i) => self.names[*i].clone(),
            Resolved::Unknown(t) => norm(t),
        }
    }

    /// The canonical name of a tag string.
    pub fn canonical(&self, tag: &str) -> String {
        match self.resolve(tag) {
            Resolved::Known(i) => self.entries()[i].name.clone(),
            Resolved::Unknown(t) => t,
        }
    }

    /// The replacement chain of a deprecated entry: the keys of the entry and every
    /// replacement, following at most as many steps as there are entries.
    pub fn with_replacements(&self, r: &Resolved) -> Vec<String> {
        let mut keys = vec![self.key(r)];
        let Resolved::Known(mut i) = *r else { return keys };
        for _ in 0..self.entries().len() {
            let Some(next) = self.entries()[i].deprecated.as_deref() else { break };
            match self.resolve(next) {
                Resolved::Known(j) if !keys.contains(&norm(&self.entries()[j].name)) => {
                    keys.push(norm(&self.entries()[j].name));
                    i = j;
                }
                _ => break,
            }
        }
        keys
    }

    /// Up to three vocabulary names close to `q` (§2.7), by canonical name.
    pub fn close(&self, q: &str) -> Vec<String> {
        let mut candidates: Vec<(&str, usize)> = Vec::new();
        for (i, e) in self.entries().iter().enumerate() {
            candidates.push((&e.name, i));
            for a in &e.aliases {
                candidates.push((a, i));
            }
        }
        let names: Vec<&str> = candidates.iter().map(|(c, _)| *c).collect();
        let mut out: Vec<String> = Vec::new();
        for c in close_names(q, &names, usize::MAX) {
            let (_, i) = candidates[c];
            let name = self.entries()[i].name.clone();
            if !out.contains(&name) {
                out.push(name);
            }
        }
        out.truncate(3);
        out
    }
}

/// Indices into `candidates` close to `query` (§2.7), nearest first, then in list order. Besides
/// the rules of §2.7, a candidate whose beginning is within the distance limit is close too
/// (scenario 24 names `api-en` for `apix`; `docs/design/catalog.md`).
pub fn close_names(query: &str, candidates: &[&str], max: usize) -> Vec<usize> {
    let q = norm(query);
    let limit = (q.chars().count() / 3).max(1);
    let qc: Vec<char> = q.chars().collect();
    let mut scored: Vec<(usize, usize)> = candidates
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let n = norm(c);
            let nc: Vec<char> = n.chars().collect();
            // The distance to the whole candidate, or to its beginning as long as the query
            // (`apix` is close to `api-en`: `api-` is one edit away), whichever is smaller.
            let d = levenshtein(&qc, &nc).min(levenshtein(&qc, &nc[..nc.len().min(qc.len())]));
            (!n.is_empty() && (n.contains(&q) || q.contains(&n) || d <= limit)).then_some((d, i))
        })
        .collect();
    scored.sort();
    scored.into_iter().take(max).map(|(_, i)| i).collect()
}

fn levenshtein(a: &[char], b: &[char]) -> usize {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// `` `a`, `b` `` (or `` `a`・`b` ``), or "none"/「なし」.
pub fn quoted_list(names: &[String], language: Language) -> String {
    if names.is_empty() {
        return Msg::NoneClose.text(language);
    }
    names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(language.list_sep())
}

/// The JSON Schema of the index file (`schema/catalog.schema.json`,
/// `docs/reference/catalog-spec.md` §4.1), for editors. Validation in the server is [`validate`];
/// this is its description.
pub fn json_schema() -> serde_json::Value {
    use serde_json::json;
    let text = json!({"type": "string", "minLength": 1});
    let texts = json!({"type": "array", "items": text});
    let id = json!({"type": "string", "minLength": 1, "maxLength": 200, "pattern": "^\\S+$",
        "description": "Unique within its list; no whitespace or control characters."});
    let notes = json!({"^x-": {"description": "Ignored: keep your own notes here."}});
    let types: Vec<&str> = RELATION_TYPES.iter().map(|(t, _)| *t).collect();
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "local-vector-search-mcp catalog index (mdmark compatible)",
        "type": "object",
        "required": ["docs"],
        "properties": {
            "version": {"const": 1, "description": "Format version; this server reads 1."},
            "docs": {"type": "array", "items": {"$ref": "#/$defs/doc"}},
            "terms": {"type": ["array", "null"], "items": {"$ref": "#/$defs/term"}},
            "tags": {"type": ["array", "null"], "items": {"$ref": "#/$defs/tag"},
                "description": "The tag vocabulary; when present, document tags should resolve to it."}
        },
        "patternProperties": notes,
        "additionalProperties": false,
        "$defs": {
            "doc": {
                "type": "object",
                "required": ["id", "path", "title"],
                "properties": {
                    "id": id,
                    "path": {"type": "string", "pattern": "\\.[mM][dD]$",
                        "description": "The document, relative to the index file's folder."},
                    "title": text,
                    "aliases": texts,
                    "description": {"type": ["string", "null"]},
                    "tags": {"type": "array", "items": {"anyOf": [
                        text,
                        {"type": "object", "required": ["name"], "properties": {"name": text, "main": {"type": "boolean"}},
                            "patternProperties": notes, "additionalProperties": false}
                    ]}},
                    "related": {"type": "array", "items": {"anyOf": [
                        {"type": "string", "minLength": 1, "description": "A relation without type and when (read, never written)."},
                        {"type": "object", "required": ["to", "type", "when"], "properties": {
                            "to": text,
                            "type": {"enum": types},
                            "when": text,
                            "paths": texts
                        }, "patternProperties": notes, "additionalProperties": false}
                    ]}}
                },
                "patternProperties": notes,
                "additionalProperties": false
            },
            "term": {
                "type": "object",
                "required": ["id", "term", "definition"],
                "properties": {"id": id, "term": text, "aliases": texts, "definition": text, "see": texts},
                "patternProperties": notes,
                "additionalProperties": false
            },
            "tag": {
                "type": "object",
                "required": ["name"],
                "properties": {
                    "name": text,
                    "group": {"type": ["string", "null"]},
                    "description": {"type": ["string", "null"]},
                    "aliases": texts,
                    "deprecated": {"type": ["string", "null"], "description": "The name of the tag that replaces this one."}
                },
                "patternProperties": notes,
                "additionalProperties": false
            }
        }
    })
}
