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

/// Largest `inputSchema` (compact JSON bytes) a tool may have: Codex strips every description of
/// a tool whose schema is larger than about 4,000 bytes.
const MAX_INPUT_SCHEMA_BYTES: usize = 4000;

/// Every way `schema` (an `inputSchema` or `outputSchema` as `tools/list` serves it) breaks the
/// portable subset, as `<path>: <rule> (<who>)`. The rules and where they come from are in
/// `docs/design/clients.md`:
///
/// - Gemini function declarations: one `type` string on every schema, never `null`; no `const`;
///   no `$ref`/`$defs`; `enum` only on strings and without `null`; no `anyOf`/`oneOf`/`allOf`
///   (Gemini takes `anyOf`, but ours would only ever be "or null"); property and item schemas
///   are objects, not `true`/`false`.
/// - OpenAI strict function calling (where it applies to a client-chosen schema): every input
///   object with properties is closed (`additionalProperties: false`).
/// - JSON Schema itself: `required` names only declared properties.
fn portability_problems(schema: &Value, path: &str, input: bool, out: &mut Vec<String>) {
    let Some(o) = schema.as_object() else {
        out.push(format!("{path}: a boolean schema, not an object (Gemini)"));
        return;
    };
    match o.get("type") {
        Some(Value::String(t)) if t == "null" => out.push(format!("{path}: type null (Gemini)")),
        Some(Value::String(_)) => {}
        Some(other) => out.push(format!("{path}: type {other} is not one string (Gemini)")),
        None => out.push(format!("{path}: no type (Gemini)")),
    }
    for key in ["const", "$ref", "$defs", "anyOf", "oneOf", "allOf"] {
        if o.contains_key(key) {
            out.push(format!("{path}: {key} (Gemini)"));
        }
    }
    if let Some(values) = o.get("enum") {
        let strings = values.as_array().is_some_and(|v| v.iter().all(Value::is_string));
        if !strings || o.get("type") != Some(&json!("string")) {
            out.push(format!("{path}: enum {values} is not a string enum (Gemini)"));
        }
    }
    if o.get("default").is_some_and(Value::is_null) {
        out.push(format!("{path}: default null (Gemini)"));
    }
    let properties = o.get("properties").and_then(Value::as_object);
    if let Some(required) = o.get("required").and_then(Value::as_array) {
        for name in required.iter().filter_map(Value::as_str) {
            if !properties.is_some_and(|p| p.contains_key(name)) {
                out.push(format!("{path}: required '{name}' is not a property (JSON Schema)"));
            }
        }
    }
    if input && properties.is_some() && o.get("additionalProperties") != Some(&json!(false)) {
        out.push(format!("{path}: an object with properties that is not closed (OpenAI strict)"));
    }
    for (name, p) in properties.into_iter().flatten() {
        portability_problems(p, &format!("{path}/{name}"), input, out);
    }
    if let Some(items) = o.get("items") {
        portability_problems(items, &format!("{path}/items"), input, out);
    }
    match o.get("additionalProperties") {
        None | Some(Value::Bool(false)) => {}
        Some(Value::Bool(true)) => out.push(format!("{path}: additionalProperties true (Gemini)")),
        Some(more) => portability_problems(more, &format!("{path}/additionalProperties"), input, out),
    }
}

/// `tools/list` as the real binary serves it over stdio.
fn served_tools() -> Vec<Value> {
    let project = crate::support::Project::from_fixture("ja");
    let mut rpc = crate::rpc::Rpc::start(&[
        "--project-root".as_ref(),
        project.root().as_os_str(),
        "--embedding-provider".as_ref(),
        "none".as_ref(),
    ]);
    let frame = rpc.request("tools/list", json!({}));
    frame["result"]["tools"].as_array().cloned().unwrap_or_else(|| panic!("no tools: {frame}"))
}

#[test]
fn served_schemas_are_portable_to_gemini_and_openai() {
    let tools = served_tools();
    assert!(tools.len() >= 20, "{} tools", tools.len());
    let mut problems = Vec::new();
    for tool in &tools {
        let name = tool["name"].as_str().unwrap();
        portability_problems(&tool["inputSchema"], &format!("{name}.inputSchema"), true, &mut problems);
        if let Some(output) = tool.get("outputSchema") {
            portability_problems(output, &format!("{name}.outputSchema"), false, &mut problems);
        }
        let bytes = tool["inputSchema"].to_string().len();
        if bytes > MAX_INPUT_SCHEMA_BYTES {
            problems.push(format!(
                "{name}.inputSchema: {bytes} bytes, more than {MAX_INPUT_SCHEMA_BYTES} (Codex strips its descriptions)"
            ));
        }
    }
    assert!(problems.is_empty(), "schemas that a strict client rejects:\n{}", problems.join("\n"));
    // The walk refuses what `Option<T>` used to produce, so a regression cannot pass unseen.
    for regressed in [
        json!({"type": ["string", "null"]}),
        json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
        json!({"type": "string", "enum": ["a", null]}),
        json!({"type": "string", "const": "a"}),
        json!({"$ref": "#/$defs/A"}),
        json!(true),
    ] {
        let schema = json!({"type": "object", "properties": {"a": regressed}, "additionalProperties": false});
        let mut found = Vec::new();
        portability_problems(&schema, "t", true, &mut found);
        assert!(!found.is_empty(), "not refused: {schema}");
    }
    // The served list is the generated file (stdio and schema/ cannot drift apart).
    let mut sorted = tools.clone();
    sorted.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    assert_eq!(json!({ "tools": sorted }), tools_json(), "tools/list differs from schema/mcp-tools.json");
}

/// The defaults the config schema documents for `search.*` are the ones the code applies (the
/// schema's are annotations written by hand beside each key).
#[test]
fn the_config_schema_documents_the_search_defaults_the_code_applies() {
    let schema = lvs::config::json_schema();
    let props = &schema["$defs"]["SearchFile"]["properties"];
    let d = lvs::config::SearchConfig::default();
    let r = d.ranking;
    let want: &[(&str, f64)] = &[
        ("semanticCandidatePoolSize", d.semantic_candidate_pool_size as f64),
        ("lexicalCandidatePoolSize", d.lexical_candidate_pool_size as f64),
        ("maxResults", d.max_results as f64),
        ("rrfK", f64::from(d.rrf_k)),
        ("lexicalWeight", d.lexical_weight),
        ("semanticFloor", d.semantic_floor),
        ("maxPerFile", d.max_per_file.unwrap_or(0) as f64),
        ("headingWeight", r.heading_weight),
        ("ownHeadingWeight", r.own_heading_weight),
        ("proximityWeight", r.proximity_weight),
        ("proximitySlop", f64::from(r.proximity_slop)),
        ("proximityReach", f64::from(r.proximity_reach)),
        ("contentWordWeight", r.content_word_weight),
        ("looseWeight", r.loose_weight),
        ("coordinationWeight", r.coordination_weight),
        ("rerankWeight", r.rerank_weight),
        ("rerankDepth", r.rerank_depth as f64),
    ];
    for (key, value) in want {
        let documented = props[key]["default"].as_f64();
        assert_eq!(documented, Some(*value), "search.{key}: schema default {documented:?}, code {value}");
    }
}
