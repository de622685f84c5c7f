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
//! - Every schema a client sees is also in the portable subset of [`portable`]: one `type` string
//!   per schema, optional means "not in `required`" (never a null type), closed value sets are
//!   `enum`s, and nothing is behind `$ref` (`docs/design/clients.md` says which client needs what).

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
    portable(&mut schema);
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

/// `{"request": T}`, as the original's DTO-wrapped tools take it
/// (`docs/reference/original-server.md` §7.1).
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

/// Rewrites a generated schema into the subset the strictest mainstream clients take
/// (Gemini function declarations, OpenAI function calling; `docs/design/clients.md`):
///
/// - every `$ref` is replaced by its definition and `$defs` goes away; a type that contains
///   itself (an outline node's children) is inlined once, and below that its place is an object
///   described as the same shape;
/// - `Option<T>` (`type: [T, "null"]`, `anyOf: [T, {type: null}]`, `null` in an `enum`, a `null`
///   default) becomes plain `T`: optional means "not in `required`". Requests still accept an
///   explicit `null` (serde reads it as absent), and structured results leave null fields out;
/// - a `oneOf` of `const`s (a unit Rust enum with documented variants) becomes one `enum`, the
///   variants' descriptions folded into the schema's; a lone `const` becomes a one-value `enum`.
pub fn portable(schema: &mut Value) {
    let defs = schema.as_object_mut().and_then(|o| o.shift_remove("$defs")).unwrap_or(Value::Null);
    inline(schema, &defs, &mut Vec::new());
    each_schema(schema, &mut simplify);
}

/// Replaces every `$ref` into `defs` with the definition (keywords beside the `$ref`, such as a
/// field's own description, win).
fn inline(schema: &mut Value, defs: &Value, inside: &mut Vec<String>) {
    let Some(o) = schema.as_object_mut() else {
        return;
    };
    let target =
        o.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/$defs/")).map(str::to_owned);
    if let Some(name) = target {
        o.shift_remove("$ref");
        let Some(Value::Object(def)) = defs.get(&name) else {
            return;
        };
        if inside.contains(&name) {
            o.entry("type").or_insert(json!("object"));
            if !o.contains_key("description") {
                let about = def.get("description").and_then(Value::as_str).unwrap_or("An object");
                o.insert("description".into(), json!(format!("{about} (the same shape as its parent).")));
            }
            return;
        }
        for (key, value) in def {
            if !o.contains_key(key) {
                o.insert(key.clone(), value.clone());
            }
        }
        inside.push(name);
        inline_children(o, defs, inside);
        inside.pop();
        return;
    }
    inline_children(o, defs, inside);
}

fn inline_children(o: &mut Map<String, Value>, defs: &Value, inside: &mut Vec<String>) {
    for (key, value) in o.iter_mut() {
        let key = key.as_str();
        if ONE.contains(&key) {
            inline(value, defs, inside);
        } else if LIST.contains(&key) {
            value.as_array_mut().into_iter().flatten().for_each(|s| inline(s, defs, inside));
        } else if MAP.contains(&key) {
            value
                .as_object_mut()
                .into_iter()
                .flat_map(|m| m.values_mut())
                .for_each(|s| inline(s, defs, inside));
        }
    }
}

/// Whether a subschema only says "null".
fn is_null_schema(s: &Value) -> bool {
    s.get("type") == Some(&json!("null")) && s.get("properties").is_none()
}

/// One schema (not its subschemas) into the portable subset; see [`portable`].
fn simplify(o: &mut Map<String, Value>) {
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(mut branches)) = o.shift_remove(key) else {
            continue;
        };
        branches.retain(|b| !is_null_schema(b));
        let consts: Option<Vec<(Value, Option<String>)>> = branches
            .iter()
            .map(|b| {
                let value = b.get("const").cloned().or_else(|| match b.get("enum") {
                    Some(Value::Array(one)) if one.len() == 1 => one.first().cloned(),
                    _ => None,
                })?;
                Some((value, b.get("description").and_then(Value::as_str).map(str::to_owned)))
            })
            .collect();
        match (branches.len(), consts) {
            (1, _) => {
                if let Some(Value::Object(only)) = branches.pop() {
                    for (k, v) in only {
                        if !o.contains_key(&k) {
                            o.insert(k, v);
                        }
                    }
                }
            }
            (n, Some(consts)) if n > 1 && consts.iter().all(|(v, _)| v.is_string()) => {
                let notes: Vec<String> = consts
                    .iter()
                    .filter_map(|(v, d)| {
                        Some(format!("{}: {}", v.as_str()?, d.as_deref()?.trim_end_matches('.')))
                    })
                    .collect();
                if !notes.is_empty() {
                    let head = o
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .trim_end()
                        .to_owned();
                    let list = notes.join("; ");
                    let text = match head.strip_suffix('.') {
                        _ if head.is_empty() => format!("{list}."),
                        Some(sentence) => format!("{sentence}: {list}."),
                        None => format!("{head}: {list}."),
                    };
                    o.insert("description".into(), json!(text));
                }
                o.insert("type".into(), json!("string"));
                o.insert("enum".into(), Value::Array(consts.into_iter().map(|(v, _)| v).collect()));
            }
            _ => {
                o.insert(key.into(), Value::Array(branches));
            }
        }
    }
    if let Some(Value::Array(types)) = o.get_mut("type") {
        types.retain(|t| t != "null");
        if let [only] = &types[..] {
            let only = only.clone();
            o.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(values)) = o.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    if let Some(value) = o.shift_remove("const") {
        if !o.contains_key("type") {
            let kind = match &value {
                Value::String(_) => "string",
                Value::Bool(_) => "boolean",
                Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
                Value::Number(_) => "number",
                _ => "object",
            };
            o.insert("type".into(), json!(kind));
        }
        o.insert("enum".into(), json!([value]));
    }
    if o.get("default").is_some_and(Value::is_null) {
        o.shift_remove("default");
    }
}

/// `value` without the object fields that are `null`, at every depth: the structured result
/// of a tool whose output schema says "optional" by leaving a field out of `required`.
pub fn without_nulls(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k, without_nulls(v))).collect(),
        ),
        Value::Array(list) => Value::Array(list.into_iter().map(without_nulls).collect()),
        other => other,
    }
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
        // A value outside the enum is left as it is, for decoding to refuse with its own sentence.
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
