//! `schema/` is generated from the code; these tests fail when it drifts.
//! Regenerate with `UPDATE_SCHEMA=1 cargo test --test it schema`.

use std::path::PathBuf;

use serde_json::{Value, json};

fn schema_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("schema")
}

fn tools_json() -> Value {
    let mut tools: Vec<Value> =
        lvs::mcp::tool_catalog().iter().map(|t| serde_json::to_value(t).unwrap()).collect();
    tools.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    json!({ "tools": tools })
}

fn error_codes_json() -> Value {
    let codes: Vec<Value> = lvs::ErrorCode::ALL
        .iter()
        .map(|c| json!({ "code": c.as_str(), "description": c.description() }))
        .collect();
    json!({ "errorCodes": codes })
}

fn check(file: &str, value: &Value) {
    let path = schema_dir().join(file);
    let text = serde_json::to_string_pretty(value).unwrap() + "\n";
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::create_dir_all(schema_dir()).unwrap();
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        current == text,
        "schema/{file} is out of date with the code; run `UPDATE_SCHEMA=1 cargo test --test it schema` and review the diff"
    );
}

#[test]
fn schema_files_match_the_code() {
    check("mcp-tools.json", &tools_json());
    check("config.schema.json", &lvs::config::json_schema());
    check("error-codes.json", &error_codes_json());
}

/// Every property of every object schema, with its path, for the description check.
fn properties<'a>(
    schema: &'a Value,
    defs: &'a Value,
    path: String,
    out: &mut Vec<(String, &'a Value)>,
    depth: usize,
) {
    if depth > 8 {
        return;
    }
    let resolved = match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => r.rsplit('/').next().and_then(|name| defs.get(name)).unwrap_or(schema),
        None => schema,
    };
    if let Some(props) = resolved.get("properties").and_then(Value::as_object) {
        for (name, p) in props {
            out.push((format!("{path}.{name}"), p));
            properties(p, defs, format!("{path}.{name}"), out, depth + 1);
        }
    }
    for key in ["items", "anyOf", "oneOf", "allOf"] {
        match resolved.get(key) {
            Some(Value::Array(list)) => {
                list.iter().for_each(|s| properties(s, defs, path.clone(), out, depth + 1))
            }
            Some(s @ Value::Object(_)) => properties(s, defs, path.clone(), out, depth + 1),
            _ => {}
        }
    }
}

#[test]
fn every_tool_and_field_is_described() {
    for tool in tools_json()["tools"].as_array().unwrap() {
        let name = tool["name"].as_str().unwrap();
        assert!(tool["description"].as_str().is_some_and(|d| d.len() > 20), "{name} has no description");
        for which in ["inputSchema", "outputSchema"] {
            let schema = &tool[which];
            let defs = schema.get("$defs").cloned().unwrap_or(Value::Null);
            let mut props = Vec::new();
            properties(schema, &defs, format!("{name}.{which}"), &mut props, 0);
            for (path, p) in props {
                // A `request` wrapper or a `$ref` carries its description on the referenced type.
                let described =
                    p.get("description").is_some() || p.get("$ref").is_some() || path.ends_with(".request");
                assert!(described, "{path} has no description");
            }
        }
    }
}

#[test]
fn error_codes_are_the_contract_table() {
    let wire = crate::support::vectors("wire.json");
    let ours: Vec<&str> = lvs::ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
    let theirs: Vec<&str> =
        wire["errorCodes"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    assert_eq!(ours, theirs);
}

/// The JSON Schema 2020-12 vocabularies (core, applicator, unevaluated, validation, meta-data,
/// format-annotation, content): anything else in a tool schema is a dialect strict clients reject.
#[rustfmt::skip]
const KEYWORDS_2020_12: &[&str] = &[
    // core
    "$schema", "$id", "$ref", "$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary", "$comment", "$defs",
    // applicator
    "prefixItems", "items", "contains", "additionalProperties", "properties", "patternProperties",
    "dependentSchemas", "propertyNames", "if", "then", "else", "allOf", "anyOf", "oneOf", "not",
    // unevaluated
    "unevaluatedItems", "unevaluatedProperties",
    // validation
    "type", "const", "enum", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
    "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "maxContains", "minContains",
    "maxProperties", "minProperties", "required", "dependentRequired",
    // meta-data, format-annotation, content
    "title", "description", "default", "deprecated", "readOnly", "writeOnly", "examples",
    "format", "contentEncoding", "contentMediaType", "contentSchema",
];

/// The `format` values 2020-12 defines.
#[rustfmt::skip]
const FORMATS_2020_12: &[&str] = &[
    "date-time", "date", "time", "duration", "email", "idn-email", "hostname", "idn-hostname", "ipv4", "ipv6",
    "uri", "uri-reference", "iri", "iri-reference", "uuid", "uri-template", "json-pointer",
    "relative-json-pointer", "regex",
];

/// Every problem in one schema (and its subschemas), as `<path>: <problem>`.
fn vocabulary_problems(schema: &Value, path: &str, out: &mut Vec<String>) {
    let Some(o) = schema.as_object() else {
        if !schema.is_boolean() {
            out.push(format!("{path}: a schema must be an object or a boolean"));
        }
        return;
    };
    for (key, value) in o {
        let at = format!("{path}/{key}");
        if !KEYWORDS_2020_12.contains(&key.as_str()) {
            out.push(format!("{at}: not a JSON Schema 2020-12 keyword"));
        }
        match key.as_str() {
            "format" if !value.as_str().is_some_and(|f| FORMATS_2020_12.contains(&f)) => {
                out.push(format!("{at}: non-standard format {value}"));
            }
            "items"
            | "additionalProperties"
            | "not"
            | "if"
            | "then"
            | "else"
            | "contains"
            | "propertyNames"
            | "unevaluatedItems"
            | "unevaluatedProperties"
            | "contentSchema" => vocabulary_problems(value, &at, out),
            "prefixItems" | "allOf" | "anyOf" | "oneOf" => {
                for (i, s) in value.as_array().into_iter().flatten().enumerate() {
                    vocabulary_problems(s, &format!("{at}/{i}"), out);
                }
            }
            "properties" | "patternProperties" | "$defs" | "dependentSchemas" => {
                for (name, s) in value.as_object().into_iter().flatten() {
                    vocabulary_problems(s, &format!("{at}/{name}"), out);
                }
            }
            _ => {}
        }
    }
}

#[test]
fn every_tool_schema_is_standard_json_schema_2020_12() {
    let mut problems = Vec::new();
    for tool in tools_json()["tools"].as_array().unwrap() {
        let name = tool["name"].as_str().unwrap();
        for which in ["inputSchema", "outputSchema"] {
            if which == "outputSchema" && tool.get(which).is_none() {
                continue; // Binary tools (kb_load_image, kb_download_file) and kb_read_guide publish none.
            }
            vocabulary_problems(&tool[which], &format!("{name}.{which}"), &mut problems);
        }
    }
    assert!(problems.is_empty(), "non-standard schema content:\n{}", problems.join("\n"));
    // The walk itself finds what it must refuse.
    let mut found = Vec::new();
    vocabulary_problems(
        &json!({"properties": {"n": {"type": "integer", "format": "uint64", "nullable": true}}}),
        "",
        &mut found,
    );
    assert_eq!(found.len(), 2, "{found:?}");
}

/// The generated part of `docs/tools.md`: between these two lines.
const LIST_BEGIN: &str = "<!-- tool list: generated from the tool table (src/mcp/tools.rs) by `UPDATE_SCHEMA=1 cargo test --test it schema` -->\n";
const LIST_END: &str = "<!-- end of tool list -->\n";

#[test]
fn docs_list_exactly_the_tools_of_the_table() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/tools.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let (begin, end) =
        (doc.find(LIST_BEGIN).expect("docs/tools.md has the tool list markers"), doc.find(LIST_END).unwrap());
    let list = lvs::mcp::tool_list_markdown();
    let fresh = format!("{}{LIST_BEGIN}{list}{}", &doc[..begin], &doc[end..]);
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &fresh).unwrap();
    } else {
        assert!(
            doc == fresh,
            "the tool list in docs/tools.md is out of date; run `UPDATE_SCHEMA=1 cargo test --test it schema`"
        );
    }
    // Every tool has a section, and every section is a tool.
    let names: Vec<String> = lvs::mcp::tool_catalog().iter().map(|t| t.name.to_string()).collect();
    let mut documented: Vec<String> = doc
        .lines()
        .filter(|l| l.starts_with("## ") || l.starts_with("### "))
        .flat_map(|l| l.split('`').skip(1).step_by(2).filter(|w| w.starts_with("kb_")).map(str::to_owned))
        .collect();
    documented.sort();
    assert_eq!(documented, names, "docs/tools.md sections vs the tool table");
}
