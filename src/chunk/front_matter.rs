//! The fields of a document's YAML front matter, as plain `(key, value)` pairs for metadata
//! filters (`kb_search` `filters`; the lexical index turns them into terms).
//!
//! Scalars (strings, numbers, booleans) are values as written; every item of a list is a value
//! of the same key (`tags: [api, 設計]` gives `tags`=`api` and `tags`=`設計`); a nested mapping
//! gives dotted keys (`author: {name: x}` gives `author.name`=`x`); a null or empty value, or a
//! list of mappings, leaves only the key (it "exists"). Front matter that is not a YAML
//! mapping gives nothing: a document is never refused for its metadata.

use yaml_serde::Value;

use crate::markdown::{Document, ElementKind};

/// Nested mappings are followed this deep (`a.b.c.d`).
const MAX_DEPTH: usize = 4;
/// Front matter longer than this is not read for fields (it is still indexed as text).
const MAX_FRONT_MATTER_BYTES: usize = 256 * 1024;

/// The front-matter fields of `doc`, in document order (`None`: the key has no value).
pub fn front_matter_fields(doc: &Document) -> Vec<(String, Option<String>)> {
    let Some(fm) = doc.elements.iter().find(|e| e.kind == ElementKind::FrontMatter) else {
        return Vec::new();
    };
    fields_of_yaml(yaml_body(&fm.text))
}

/// The YAML between the `---` fences of a front matter block (fences optional).
fn yaml_body(text: &str) -> &str {
    let mut body = text.trim_end();
    if let Some(rest) = body.strip_prefix("---") {
        body = rest.split_once('\n').map_or("", |(_, r)| r);
    }
    match body.rfind('\n') {
        Some(i) if matches!(body[i + 1..].trim_end(), "---" | "...") => &body[..i],
        None if matches!(body.trim(), "---" | "...") => "",
        _ => body,
    }
}

/// The fields of a YAML mapping (empty when `yaml` is not one).
pub fn fields_of_yaml(yaml: &str) -> Vec<(String, Option<String>)> {
    if yaml.len() > MAX_FRONT_MATTER_BYTES || yaml.trim().is_empty() {
        return Vec::new();
    }
    let Ok(value) = yaml_serde::from_str::<Value>(yaml) else { return Vec::new() };
    let mut out = Vec::new();
    if let Value::Mapping(_) = value {
        walk("", &value, 0, &mut out);
    }
    out
}

fn walk(prefix: &str, value: &Value, depth: usize, out: &mut Vec<(String, Option<String>)>) {
    let Value::Mapping(map) = value else { return };
    for (k, v) in map {
        let Some(key) = scalar(k) else { continue };
        let key = if prefix.is_empty() { key } else { format!("{prefix}.{key}") };
        match v {
            Value::Sequence(items) => {
                let values: Vec<String> = items.iter().filter_map(scalar).collect();
                if values.is_empty() {
                    out.push((key.clone(), None));
                }
                out.extend(values.into_iter().map(|s| (key.clone(), Some(s))));
            }
            Value::Mapping(_) if depth + 1 < MAX_DEPTH => {
                out.push((key.clone(), None));
                walk(&key, v, depth + 1, out);
            }
            Value::Tagged(t) => out.push((key, scalar(&t.value))),
            other => out.push((key, scalar(other))),
        }
    }
}

/// The text of a scalar (`None` for null, an empty string, a list or a mapping).
fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Tagged(t) => scalar(&t.value),
        _ => None,
    }
}
