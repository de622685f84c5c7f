//! The tool table: names, descriptions, schemas, annotations, and argument decoding.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::Coordinator;
use crate::config::{ToolGroup, ToolsConfig};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::wire::{
    CreateRequest, DeleteRequest, ListFilesRequest, ListFilesResponse, MarkdownSlice, MoveRequest,
    MutationResponse, OutlineRequest, OutlineResponse, PatchRequest, ReadRequest, ReindexRequest,
    ReindexStartResponse, SearchRequest, SearchResponse, StatusResponse, TableEditRequest, TableEditResponse,
};

/// Largest argument object accepted (bytes of JSON).
const MAX_ARGUMENT_BYTES: usize = 1024 * 1024;

struct Spec {
    name: &'static str,
    group: ToolGroup,
    description: &'static str,
    input: fn() -> Value,
    output: fn() -> Value,
    read_only: bool,
    destructive: bool,
    idempotent: bool,
}

fn schema_of<T: JsonSchema>() -> Value {
    serde_json::to_value(schemars::schema_for!(T)).unwrap_or_else(|_| json!({"type": "object"}))
}

/// `{"request": T}` as the original's DTO-wrapped tools take it.
fn wrapped<T: JsonSchema>() -> Value {
    let mut inner = schema_of::<T>();
    let defs = inner.as_object_mut().and_then(|o| o.remove("$defs"));
    if let Some(o) = inner.as_object_mut() {
        o.remove("$schema");
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

/// Flat arguments: the type's own schema.
fn flat<T: JsonSchema>() -> Value {
    let mut schema = schema_of::<T>();
    if let Some(o) = schema.as_object_mut() {
        o.remove("$schema");
        o.remove("title");
    }
    schema
}

fn no_arguments() -> Value {
    json!({"type": "object", "properties": {}, "additionalProperties": false})
}

fn specs() -> Vec<Spec> {
    vec![
        Spec {
            name: "kb_create",
            group: ToolGroup::Edit,
            description: "Creates a new Markdown file (UTF-8 without BOM; parent folders are created; never overwrites an existing \
file). Needs knowledgeBase.allowWrites. Returns the new sourceHash; indexSynchronized tells whether kb_search already sees it.",
            input: wrapped::<CreateRequest>,
            output: schema_of::<MutationResponse>,
            read_only: false,
            destructive: false,
            idempotent: false,
        },
        Spec {
            name: "kb_delete",
            group: ToolGroup::Edit,
            description: "Deletes a Markdown file if it still has the expectedSourceHash you read (else CONFLICT: read it again). \
Needs knowledgeBase.allowWrites. The file is removed from the index in the background.",
            input: wrapped::<DeleteRequest>,
            output: schema_of::<MutationResponse>,
            read_only: false,
            destructive: true,
            idempotent: false,
        },
        Spec {
            name: "kb_edit_table",
            group: ToolGroup::Edit,
            description: "Edits one GFM table with minimal source changes: update_cells, insert_row, delete_row, insert_column, \
delete_column, rename_column, set_alignment. pointer is the table's hashed anchor (tN~self~subtree) from kb_read; a stale \
anchor is CONFLICT. Rows by rowIndex or where {column|columnIndex, equals}; columns by column name or columnIndex. Values \
are literal text by default (escaped for you); valueFormat \"markdown\" writes inline Markdown verbatim. Cells cannot hold \
line breaks. Returns the table's new pointer for the next edit. Needs knowledgeBase.allowWrites.",
            input: flat::<TableEditRequest>,
            output: schema_of::<TableEditResponse>,
            read_only: false,
            destructive: false,
            idempotent: false,
        },
        Spec {
            name: "kb_list_files",
            group: ToolGroup::Read,
            description: "Lists Markdown and asset files under the project root (not limited by the index's include/exclude globs). \
Optional request.pathPrefix (a folder) and request.includeGlob (e.g. \"**/*.png\"). Needs no index.",
            input: wrapped::<ListFilesRequest>,
            output: schema_of::<ListFilesResponse>,
            read_only: true,
            destructive: false,
            idempotent: true,
        },
        Spec {
            name: "kb_move",
            group: ToolGroup::Edit,
            description: "Moves or renames a Markdown file if it still has the expectedSourceHash you read; the target must not \
exist (folders are created). Needs knowledgeBase.allowWrites. Both paths are reindexed in the background.",
            input: wrapped::<MoveRequest>,
            output: schema_of::<MutationResponse>,
            read_only: false,
            destructive: false,
            idempotent: false,
        },
        Spec {
            name: "kb_outline",
            group: ToolGroup::Read,
            description: "Returns the heading tree of one Markdown file with each heading's anchor (logical~selfHash~subtreeHash). \
Reads the current source; needs no index.",
            input: wrapped::<OutlineRequest>,
            output: schema_of::<OutlineResponse>,
            read_only: true,
            destructive: false,
            idempotent: true,
        },
        Spec {
            name: "kb_patch",
            group: ToolGroup::Edit,
            description: "Edits a Markdown file atomically by hashed anchors (v2 pointers logical~selfHash~subtreeHash with 16-char \
lowercase hashes from kb_read/kb_outline/kb_search); all operations apply to one revision or none do, and untouched bytes \
(BOM, CRLF, spacing) stay as they are. Kinds: replace_element edits exactly one element (for a list item only its own \
parent-owned prefix, nested items stay) and checks selfHash; replace is a deprecated alias of replace_element; \
replace_subtree replaces a list item with its whole subtree; delete removes one element (for a heading the section body is \
preserved; for a list item the whole item subtree); replace_section and delete_section cover the complete owned section \
subtree of a heading (through the next heading of the same or a higher level, or EOF) and validate subtreeHash; \
insert_before/insert_after add blocks next to an element (one sibling for list items) and check selfHash. Block quotes are \
opaque (edit them whole). subtree-scoped operations (replace_subtree, delete of a list item, replace_section, \
delete_section) need both hashes: legacy v1 anchors are rejected with an instruction to read again. The pointer \
\"document\" is unhashed and supports only insert_before/insert_after. An element that moved is relocated by kind and \
selfHash only; a changed or ambiguous one is CONFLICT (read again). Needs knowledgeBase.allowWrites. kb_read sees the \
change at once; indexSynchronized tells whether kb_search does yet.",
            input: wrapped::<PatchRequest>,
            output: schema_of::<MutationResponse>,
            read_only: false,
            destructive: true,
            idempotent: false,
        },
        Spec {
            name: "kb_read",
            group: ToolGroup::Read,
            description: "Reads the current source of a Markdown file, a page of elements at a time, starting at a pointer or anchor \
(omit it or use \"document\" to start at the beginning). Independent of the index. Elements come back with v2 anchors \
logical~selfHash~subtreeHash (v1 logical~selfHash is still accepted for navigation); list items are liN nested in their parent liN; \
a block quote is one opaque qN; GFM tables are tN and addressing a table also returns a structured projection with display text \
(use the markdown field for the original markup). Pass nextPointer to continue; consecutive pages concatenate to the whole file.",
            input: wrapped::<ReadRequest>,
            output: schema_of::<MarkdownSlice>,
            read_only: true,
            destructive: false,
            idempotent: true,
        },
        Spec {
            name: "kb_reindex",
            group: ToolGroup::Read,
            description: "Starts reindexing the project's Markdown in the background and returns at once; only one reindex runs at a time \
(started=false returns the running one). scope \"changed\" (default) or \"all\"; force=true rebuilds an index that is incompatible \
with the configuration. Watch progress and the result with kb_status.",
            input: wrapped::<ReindexRequest>,
            output: schema_of::<ReindexStartResponse>,
            read_only: false,
            destructive: false,
            idempotent: true,
        },
        Spec {
            name: "kb_search",
            group: ToolGroup::Read,
            description: "Searches the derived index of the project's Markdown (Japanese-aware BM25: 京都 does not match 東京都庁, API finds ＡＰＩ, \
サーバー finds サーバ). Every word is optional but chunks with all words rank first; \"quoted phrases\" match exactly. Results belong to \
an indexed revision (indexedSourceHash; stale=true when the file changed since) and point at the first element of a chunk: \
call kb_read with the readHint to see the current text. includeGlobs/excludeGlobs limit the files, and topK counts within them. \
mode hybrid falls back to lexical when embeddings are unavailable (see warning).",
            input: wrapped::<SearchRequest>,
            output: schema_of::<SearchResponse>,
            read_only: true,
            destructive: false,
            idempotent: true,
        },
        Spec {
            name: "kb_status",
            group: ToolGroup::Read,
            description: "Shows the index: documents and chunks, versions, embedding mode, whether the index is compatible with the \
configuration, pending edits and the running or last reindex. Call with {}.",
            input: no_arguments,
            output: schema_of::<StatusResponse>,
            read_only: true,
            destructive: false,
            idempotent: true,
        },
    ]
}

fn object(v: Value) -> Arc<JsonObject> {
    Arc::new(match v {
        Value::Object(o) => o,
        _ => Map::new(),
    })
}

/// Every tool as `tools/list` serves it with the default profile, sorted by name.
pub fn tool_catalog() -> Vec<Tool> {
    tool_catalog_for(&ToolsConfig::default())
}

/// The tools a profile (`tools.enabled` / `tools.disabled`) lists, sorted by name.
pub fn tool_catalog_for(profile: &ToolsConfig) -> Vec<Tool> {
    specs()
        .into_iter()
        .filter(|s| profile.is_enabled(s.name, s.group))
        .map(|s| {
            let annotations = ToolAnnotations::new()
                .read_only(s.read_only)
                .destructive(s.destructive)
                .idempotent(s.idempotent)
                .open_world(false);
            Tool::new_with_raw(s.name, Some(s.description.into()), object((s.input)()))
                .with_raw_output_schema(object((s.output)()))
                .with_annotations(annotations)
        })
        .collect()
}

/// The names of the tools a profile lists.
pub fn tool_names(profile: &ToolsConfig) -> Vec<&'static str> {
    specs().into_iter().filter(|s| profile.is_enabled(s.name, s.group)).map(|s| s.name).collect()
}

/// Decodes `{"request": {...}}` into `T` with a message that names what is wrong.
fn request<T: DeserializeOwned>(tool: &str, args: &Value) -> Result<T> {
    let inner = match args.get("request") {
        Some(v) if v.is_object() => v.clone(),
        Some(_) => return Err(Error::invalid_argument(format!("{tool}: 'request' must be an object."))),
        None => {
            return Err(Error::invalid_argument(format!(
                "{tool} takes its arguments inside 'request', e.g. {{\"request\": {{\"path\": \"docs/a.md\"}}}}."
            )));
        }
    };
    if let Some(extra) = args.as_object().and_then(|o| o.keys().find(|k| *k != "request")) {
        return Err(Error::invalid_argument(format!(
            "{tool}: unknown argument '{extra}'; only 'request' is accepted."
        )));
    }
    deserialize(tool, "request.", inner)
}

/// Decodes `args` into `T`, naming the field (under `prefix`) that is wrong or unknown.
fn deserialize<T: DeserializeOwned>(tool: &str, prefix: &str, args: Value) -> Result<T> {
    serde_path_to_error::deserialize(args).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path.is_empty() || path == "." {
            Error::invalid_argument(format!("{tool}: invalid arguments: {inner}."))
        } else {
            Error::invalid_argument(format!("{tool}: invalid {prefix}{path}: {inner}."))
        }
    })
}

fn to_value<T: serde::Serialize>(v: &T) -> Result<Value> {
    serde_json::to_value(v).map_err(|e| Error::internal(format!("could not encode the result: {e}")))
}

/// Runs one tool call (on a blocking thread).
pub(super) fn dispatch(engine: &Engine, coordinator: &Coordinator, name: &str, args: Value) -> Result<Value> {
    if args.to_string().len() > MAX_ARGUMENT_BYTES {
        return Err(Error::invalid_argument(format!(
            "{name}: the arguments are larger than {MAX_ARGUMENT_BYTES} bytes; send a smaller request."
        )));
    }
    match name {
        "kb_status" => {
            if args.as_object().is_some_and(|o| !o.is_empty()) {
                return Err(Error::invalid_argument("kb_status takes no arguments; call it with {}."));
            }
            to_value(&engine.status(coordinator.indexing(), coordinator.synchronization()))
        }
        "kb_reindex" => to_value(&coordinator.start(&request::<ReindexRequest>(name, &args)?)?),
        "kb_search" => {
            coordinator.check_searchable()?;
            to_value(&engine.search(&request::<SearchRequest>(name, &args)?)?)
        }
        "kb_read" => to_value(&engine.read(&request::<ReadRequest>(name, &args)?)?),
        "kb_outline" => to_value(&engine.outline(&request::<OutlineRequest>(name, &args)?)?),
        "kb_list_files" => to_value(&engine.list_files(&request::<ListFilesRequest>(name, &args)?)?),
        "kb_patch" => to_value(&engine.patch(&request::<PatchRequest>(name, &args)?)?),
        "kb_create" => to_value(&engine.create(&request::<CreateRequest>(name, &args)?)?),
        "kb_move" => to_value(&engine.move_document(&request::<MoveRequest>(name, &args)?)?),
        "kb_delete" => to_value(&engine.delete_document(&request::<DeleteRequest>(name, &args)?)?),
        "kb_edit_table" => to_value(&engine.edit_table(&deserialize::<TableEditRequest>(name, "", args)?)?),
        other => Err(Error::invalid_argument(format!("Unknown tool '{other}'."))),
    }
}
