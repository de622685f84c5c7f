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
