//! Tool schemas: generated from the `wire` types, cleaned to standard JSON Schema 2020-12, and
//! used to read arguments the way the original server did (case-insensitive names and enums).
//!
//! Invariants:
//!
//! - Every schema a client sees uses only the 2020-12 vocabulary and its standard `format`s:
//!   schemars' `uint64`, `int64`, `double`, … are dropped (unsigned integers keep
//!   `"minimum": 0`), because strict validators (ajv in the MCP Inspector, function-calling
//!   clients) reject unknown formats.
//! - [`normalise`] only rewrites spellings (object keys to the schema's property names, strings
//!   to the schema's enum values) when they match ignoring ASCII case; it never invents or drops
//!   data, and it refuses keys the schema forbids (`additionalProperties: false`) by name. serde's
//!   `deny_unknown_fields` on every request type stays the last word.

use schemars::JsonSchema;
use serde_json::{Map, Value, json};

/// The `format` values JSON Schema 2020-12 defines (§7.3 of the validation vocabulary).
pub const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Deepest schema or argument nesting [`normalise`] follows (recursive types end there).
const MAX_DEPTH: usize = 64;

fn generated<T: JsonSchema>() -> Value {
    let mut schema =
        serde_json::to_value(schemars::schema_for!(T)).unwrap_or_else(|_| json!({"type": "object"}));
    standardise(&mut schema);
    schema
}

/// A result type's schema (`outputSchema`).
pub fn output<T: JsonSchema>() -> Value {
    generated::<T>()
}

/// Flat arguments: the request type's own schema.
pub fn flat<T: JsonSchema>() -> Value {
    let mut schema = generated::<T>();
    if let Some(o) = schema.as_object_mut() {
        o.shift_remove("$schema");
        o.shift_remove("title");
    }
    schema
}

/// `{"request": T}`, as the original's DTO-wrapped tools take it (`contract.md` §7.1).
pub fn wrapped<T: JsonSchema>() -> Value {
    let mut inner = generated::<T>();
    let defs = inner.as_object_mut().and_then(|o| o.shift_remove("$defs"));
    if let Some(o) = inner.as_object_mut() {
        o.shift_remove("$schema");
    }
    let mut schema = json!({
        "type": "object",
        "properties": { "request": inner },
        "required": ["request"],
        "additionalProperties": false,
    });
    if let Some(defs) = defs {
        schema["$defs"] = defs;
    }
    schema
}

/// Keywords whose value is one subschema.
const ONE: &[&str] = &[
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
];
/// Keywords whose value is an array of subschemas.
const LIST: &[&str] = &["prefixItems", "allOf", "anyOf", "oneOf"];
/// Keywords whose value maps names to subschemas.
const MAP: &[&str] = &["properties", "patternProperties", "$defs", "dependentSchemas"];

/// Calls `f` on `schema` and every subschema in it (not on `enum`/`const`/`default` data).
fn each_schema(schema: &mut Value, f: &mut impl FnMut(&mut Map<String, Value>)) {
    let Some(o) = schema.as_object_mut() else {
        return; // `true` / `false`
    };
    f(o);
    for (key, value) in o.iter_mut() {
        let key = key.as_str();
        if ONE.contains(&key) {
            each_schema(value, f);
        } else if LIST.contains(&key) {
            value.as_array_mut().into_iter().flatten().for_each(|s| each_schema(s, f));
        } else if MAP.contains(&key) {
            value.as_object_mut().into_iter().flat_map(|m| m.values_mut()).for_each(|s| each_schema(s, f));
        }
    }
}

/// Drops non-standard `format`s; an unsigned integer keeps (or gets) `"minimum": 0`.
pub fn standardise(schema: &mut Value) {
    each_schema(schema, &mut |o| {
        let Some(format) = o.get("format").and_then(Value::as_str) else {
            return;
        };
        if STANDARD_FORMATS.contains(&format) {
            return;
        }
        let unsigned = format.starts_with("uint");
        o.shift_remove("format");
        if unsigned {
            o.entry("minimum").or_insert(json!(0));
        }
    });
}

/// The schema and, through `$ref` / `anyOf` / `oneOf` / `allOf`, every schema the value may be
/// checked against (an `Option<T>` is `anyOf [T, null]`, an enum `oneOf` its `const`s).
fn branches<'a>(schema: &'a Value, root: &'a Value, out: &mut Vec<&'a Map<String, Value>>, depth: usize) {
    let Some(o) = schema.as_object() else {
        return;
    };
    if depth > MAX_DEPTH {
        return;
    }
    out.push(o);
    if let Some(target) = o
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
        .and_then(|pointer| root.pointer(pointer))
    {
        branches(target, root, out, depth + 1);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        for s in o.get(key).and_then(Value::as_array).into_iter().flatten() {
            branches(s, root, out, depth + 1);
        }
    }
}

/// Rewrites `args` to the spellings of `schema` (property names, enum values) where they match
/// ignoring ASCII case. Fails, naming the keys, when two keys mean the same property or when a
/// key is not allowed at all.
pub fn normalise(args: &mut Value, schema: &Value) -> Result<(), String> {
    walk(args, schema, schema, &mut Vec::new(), 0)
}

/// Where a key or value is, for messages: `request.operations[0]`; empty at the top.
fn place(path: &[String]) -> String {
    let mut out = String::new();
    for part in path {
        if !part.starts_with('[') && !out.is_empty() {
            out.push('.');
        }
        out.push_str(part);
    }
    out
}

fn walk(
    value: &mut Value,
    schema: &Value,
    root: &Value,
    path: &mut Vec<String>,
    depth: usize,
) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Ok(());
    }
    let mut schemas = Vec::new();
    branches(schema, root, &mut schemas, 0);
    match value {
        Value::Object(map) => {
            let properties: Vec<(&String, &Value)> = schemas
                .iter()
                .filter_map(|s| s.get("properties").and_then(Value::as_object))
                .flat_map(|p| p.iter())
                .collect();
            let closed = schemas.iter().any(|s| s.get("additionalProperties") == Some(&Value::Bool(false)));
            let additional =
                schemas.iter().find_map(|s| s.get("additionalProperties").filter(|a| a.is_object()));
            if !properties.is_empty() || closed {
                rename_keys(map, &properties, closed, path)?;
            }
            for (key, item) in map.iter_mut() {
                let sub = properties.iter().find(|(name, _)| *name == key).map(|(_, s)| *s).or(additional);
                if let Some(sub) = sub {
                    path.push(key.clone());
                    walk(item, sub, root, path, depth + 1)?;
                    path.pop();
                }
            }
        }
        Value::Array(list) => {
            if let Some(sub) = schemas.iter().find_map(|s| s.get("items")) {
                for (i, item) in list.iter_mut().enumerate() {
                    path.push(format!("[{i}]"));
                    walk(item, sub, root, path, depth + 1)?;
                    path.pop();
                }
            }
        }
        Value::String(s) => {
            let allowed: Vec<&str> = schemas
                .iter()
                .flat_map(|o| {
                    let listed = o.get("enum").and_then(Value::as_array).into_iter().flatten();
                    listed.chain(o.get("const")).filter_map(Value::as_str)
                })
                .collect();
            if !allowed.contains(&s.as_str()) {
                let mut matches: Vec<&str> =
                    allowed.into_iter().filter(|a| a.eq_ignore_ascii_case(s)).collect();
                matches.sort_unstable();
                matches.dedup();
                if let [only] = matches[..] {
                    *s = only.to_owned();
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// Renames the keys of one object to the schema's property names (keeping their order).
fn rename_keys(
    map: &mut Map<String, Value>,
    properties: &[(&String, &Value)],
    closed: bool,
    path: &[String],
) -> Result<(), String> {
    let at = place(path);
    let within = if at.is_empty() { "the arguments".to_owned() } else { format!("'{at}'") };
    let mut out = Map::with_capacity(map.len());
    let mut origin: Vec<(String, String)> = Vec::new();
    for (key, value) in std::mem::take(map) {
        let name = if properties.iter().any(|(p, _)| **p == key) {
            key.clone()
        } else {
            let mut matches: Vec<&String> =
                properties.iter().map(|(p, _)| *p).filter(|p| p.eq_ignore_ascii_case(&key)).collect();
            matches.sort_unstable();
            matches.dedup();
            match matches[..] {
                [only] => only.clone(),
                _ if closed => return Err(unknown_field(&key, &within, properties)),
                _ => key.clone(),
            }
        };
        if let Some((_, first)) = origin.iter().find(|(n, _)| *n == name) {
            return Err(format!(
                "'{first}' and '{key}' in {within} both mean the field '{name}' (names are case-insensitive); send it once."
            ));
        }
        origin.push((name.clone(), key));
        out.insert(name, value);
    }
    *map = out;
    Ok(())
}

fn unknown_field(key: &str, within: &str, properties: &[(&String, &Value)]) -> String {
    if properties.is_empty() {
        return format!("unknown field '{key}' in {within}: there are none, send {{}}.");
    }
    let closest = properties
        .iter()
        .map(|(p, _)| (distance(&key.to_ascii_lowercase(), &p.to_ascii_lowercase()), *p))
        .min()
        .filter(|(d, p)| *d <= 2usize.max(p.len() / 4));
    match closest {
        Some((_, p)) => format!("unknown field '{key}' in {within}; did you mean '{p}'?"),
        None => {
            let names: Vec<&str> = properties.iter().map(|(p, _)| p.as_str()).collect();
            format!("unknown field '{key}' in {within}; expected one of: {}.", names.join(", "))
        }
    }
}

/// Levenshtein distance over chars.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1).min(row[j] + 1).min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::wire::{PatchRequest, ReadRequest, SearchRequest, StatusRequest, TableEditRequest};

    fn normalised(schema: &Value, mut args: Value) -> Result<Value, String> {
        normalise(&mut args, schema).map(|()| args)
    }

    #[test]
    fn names_match_ignoring_case_at_every_level() {
        let read = wrapped::<ReadRequest>();
        assert_eq!(
            normalised(&read, json!({"Request": {"PATH": "a.md", "maxelements": 3}})).unwrap(),
            json!({"request": {"path": "a.md", "maxElements": 3}})
        );
        let patch = wrapped::<PatchRequest>();
        assert_eq!(
            normalised(&patch, json!({"request": {"path": "a.md", "Operations": [{"KIND": "Replace_Element", "pointer": "1", "Markdown": "x"}]}}))
                .unwrap(),
            json!({"request": {"path": "a.md", "operations": [{"kind": "replace_element", "pointer": "1", "markdown": "x"}]}})
        );
    }

    #[test]
    fn enum_values_match_ignoring_case() {
        let search = wrapped::<SearchRequest>();
        assert_eq!(
            normalised(&search, json!({"request": {"query": "q", "mode": "HYBRID"}})).unwrap(),
            json!({"request": {"query": "q", "mode": "hybrid"}})
        );
        // A value outside the enum is left for the engine to refuse with its own message.
        assert_eq!(
            normalised(&search, json!({"request": {"query": "HYBRID", "mode": "fuzzy"}})).unwrap(),
            json!({"request": {"query": "HYBRID", "mode": "fuzzy"}})
        );
        let table = flat::<TableEditRequest>();
        let args = json!({"Path": "a.md", "pointer": "t1", "Action": "Update_Cells",
            "updates": [{"where": {"COLUMN": "Name", "equals": "MIXED Case"}, "column": "X", "value": "LEFT", "valueFormat": "Markdown"}],
            "alignment": "Center", "valuesByColumn": {"Path": "kept", "left": "as is"}});
        assert_eq!(
            normalised(&table, args).unwrap(),
            json!({"path": "a.md", "pointer": "t1", "action": "update_cells",
                "updates": [{"where": {"column": "Name", "equals": "MIXED Case"}, "column": "X", "value": "LEFT", "valueFormat": "markdown"}],
                "alignment": "center", "valuesByColumn": {"Path": "kept", "left": "as is"}})
        );
    }

    #[test]
    fn colliding_or_unknown_keys_are_refused_by_name() {
        let read = wrapped::<ReadRequest>();
        let e = normalised(&read, json!({"request": {"path": "a.md", "Path": "b.md"}})).unwrap_err();
        assert!(e.contains("'path' and 'Path'") && e.contains("'request'"), "{e}");
        let table = flat::<TableEditRequest>();
        let e = normalised(
            &table,
            json!({"path": "a.md", "pointer": "t1", "action": "insert_row", "beforeRowIndx": 0}),
        )
        .unwrap_err();
        assert_eq!(e, "unknown field 'beforeRowIndx' in the arguments; did you mean 'beforeRowIndex'?");
        let e =
            normalised(&table, json!({"path": "a.md", "updates": [{"value": "v", "zzz": 1}]})).unwrap_err();
        assert!(
            e.starts_with("unknown field 'zzz' in 'updates[0]'; expected one of: value, rowIndex"),
            "{e}"
        );
        let e = normalised(&flat::<StatusRequest>(), json!({"unexpected": true})).unwrap_err();
        assert!(e.contains("'unexpected'") && e.contains("send {}"), "{e}");
    }

    #[test]
    fn schemas_use_only_standard_formats() {
        let mut schema = json!({"type": "object", "properties": {
            "a": {"type": "integer", "format": "uint64", "minimum": 0},
            "b": {"type": ["integer", "null"], "format": "uint32"},
            "c": {"type": "number", "format": "double"},
            "d": {"type": "string", "format": "date-time"},
            "format": {"type": "string", "enum": ["x"]},
        }, "$defs": {"E": {"anyOf": [{"type": "integer", "format": "int64"}]}}});
        standardise(&mut schema);
        assert_eq!(
            schema,
            json!({"type": "object", "properties": {
                "a": {"type": "integer", "minimum": 0},
                "b": {"type": ["integer", "null"], "minimum": 0},
                "c": {"type": "number"},
                "d": {"type": "string", "format": "date-time"},
                "format": {"type": "string", "enum": ["x"]},
            }, "$defs": {"E": {"anyOf": [{"type": "integer"}]}}})
        );
    }

    #[test]
    fn distance_counts_edits() {
        assert_eq!(distance("beforerowindx", "beforerowindex"), 1);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("kitten", "sitting"), 3);
    }
}
