//! The tool table: one entry per tool, from which everything else is derived.
//!
//! An entry ([`Tool`]) names the tool, describes it, gives its annotations, profile group and
//! argument style, its request and response types (`wire`) and its handler. `tools/list`, the
//! dispatch, the tool profiles (`tools.enabled` / `tools.disabled`), `schema/mcp-tools.json` and
//! the tool list in `docs/tools.md` all come from [`TABLE`], so a tool cannot have a schema
//! without a handler or be listed without being callable.
//!
//! Arguments are read in three steps: the size limit; [`schema::normalise`] (case-insensitive
//! names and enum values, unknown fields refused by name, as the original server read them);
//! serde with `deny_unknown_fields` through `serde_path_to_error`, whose failures name the field.

use std::sync::{Arc, LazyLock};

use rmcp::model::{JsonObject, Tool as McpTool, ToolAnnotations};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::reply::{Answer, Json, Reply};
use super::schema;
use crate::config::{ToolGroup, ToolsConfig};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::wire::{
    AssetPathRequest, BinaryReply, DeleteImageResponse, ListImagesRequest, ListImagesResponse,
    MoveImageRequest, MoveImageResponse, SaveImageRequest, SaveImageResponse,
};
use crate::wire::{BuildSiteRequest, BuildSiteResponse, ExportHtmlRequest, ExportHtmlResponse};
use crate::wire::{
    CatalogText, CheckRequest, CheckResponse, FindDocsRequest, ListTagsRequest, UpdateIndexRequest,
    UpdateIndexResponse,
};
use crate::wire::{
    CreateRequest, DeleteRequest, LinksRequest, LinksResponse, ListFilesRequest, ListFilesResponse,
    MarkdownSlice, MoveRequest, MutationResponse, OutlineRequest, OutlineResponse, PatchRequest,
    PdfBookRequest, PdfBookResponse, ReadGuideRequest, ReadRequest, ReindexRequest, ReindexStartResponse,
    SearchRequest, SearchResponse, StatusRequest, StatusResponse, TableEditRequest, TableEditResponse,
    TextBlocks,
};

/// Largest argument object accepted (bytes of JSON).
const MAX_ARGUMENT_BYTES: usize = 1024 * 1024;

/// What a handler may use.
pub(super) struct ToolContext<'a> {
    /// The engine every tool calls.
    pub engine: &'a Engine,
}

/// How a tool takes its arguments (`docs/reference/original-server.md` §7.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Arguments {
    /// The request object under one argument named `request`.
    Wrapped,
    /// The request object's fields are the arguments.
    Flat,
}

/// The MCP tool annotations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Hints {
    read_only: bool,
    destructive: bool,
    idempotent: bool,
    open_world: bool,
}

impl Hints {
    /// Reads only; calling it twice is calling it once.
    const READ_ONLY: Hints =
        Hints { read_only: true, destructive: false, idempotent: true, open_world: false };
    /// Writes without destroying anything that was there.
    const WRITE: Hints = Hints { read_only: false, destructive: false, idempotent: false, open_world: false };
    /// Writes and may remove or overwrite content.
    const DESTRUCTIVE: Hints = Hints { destructive: true, ..Hints::WRITE };
    /// Rebuilds derived data only: a second call changes nothing more.
    const REINDEX: Hints = Hints { idempotent: true, ..Hints::WRITE };
}

/// One tool, typed: built once in [`table`] and erased into a [`ToolEntry`]. The response type
/// decides the reply ([`Answer`]): [`Json`] for the contract's JSON, or [`TextBlocks`],
/// [`CatalogText`], [`BinaryReply`].
pub(super) struct Tool<Req, Resp> {
    name: &'static str,
    group: ToolGroup,
    arguments: Arguments,
    hints: Hints,
    description: &'static str,
    handler: fn(&ToolContext<'_>, &Req) -> Result<Resp>,
}

/// A handler taking JSON and returning its [`Reply`].
type Call = Box<dyn Fn(&ToolContext<'_>, Value) -> Result<Reply> + Send + Sync>;

/// A tool with its types erased: schemas generated, the handler wrapped to take JSON and return
/// its [`Reply`].
pub(super) struct ToolEntry {
    name: &'static str,
    group: ToolGroup,
    arguments: Arguments,
    hints: Hints,
    description: &'static str,
    input_schema: Value,
    /// The response type's JSON shape ([`Answer::shape`]).
    output_schema: Value,
    /// Whether `tools/list` publishes `output_schema` ([`Answer::PUBLISHED`]).
    publishes_output: bool,
    /// The tool's `_meta` (e.g. `openai/fileParams`).
    meta: Option<Value>,
    call: Call,
}

impl ToolEntry {
    /// The same entry with `_meta`.
    fn with_meta(mut self, meta: Value) -> ToolEntry {
        self.meta = Some(meta);
        self
    }
}

impl<Req, Resp> Tool<Req, Resp>
where
    Req: DeserializeOwned + JsonSchema + 'static,
    Resp: Answer + 'static,
{
    fn entry(self) -> ToolEntry {
        let Tool { name, group, arguments, hints, description, handler } = self;
        let input_schema = input_schema::<Req>(arguments);
        ToolEntry {
            name,
            group,
            arguments,
            hints,
            description,
            input_schema,
            output_schema: Resp::shape(),
            publishes_output: Resp::PUBLISHED,
            meta: None,
            call: Box::new(move |cx, args| {
                let request: Req = decode(name, arguments, args)?;
                handler(cx, &request)?.reply()
            }),
        }
    }
}

/// A request type's input schema in the tool's argument style.
fn input_schema<Req: JsonSchema>(arguments: Arguments) -> Value {
    match arguments {
        Arguments::Wrapped => schema::wrapped::<Req>(),
        Arguments::Flat => schema::flat::<Req>(),
    }
}

/// Every tool, sorted by name. Handlers are one call into the engine.
fn table() -> Vec<ToolEntry> {
    vec![
        Tool::<BuildSiteRequest, Json<BuildSiteResponse>> {
            name: "kb_build_site",
            group: ToolGroup::Export,
            arguments: Arguments::Flat,
            hints: Hints::DESTRUCTIVE,
            description: "Combine the documents listed by the catalog's build settings into one navigable, self-contained HTML \
file; broken references are returned as warnings. Requires knowledgeBase.allowWrites.",
            handler: |cx, r| cx.engine.build_site(r).map(Json),
        }
        .entry(),
        Tool::<CheckRequest, Json<CheckResponse>> {
            name: "kb_check",
            group: ToolGroup::Catalog,
            arguments: Arguments::Flat,
            hints: Hints::READ_ONLY,
            description: "Check the catalog configuration, the index and the documents (missing or unindexed files, duplicate IDs, \
unknown or deprecated tags, unknown relation targets, broken links and anchors); with base, also find change_together partners \
that were not changed.",
            handler: |cx, r| cx.engine.check(r).map(Json),
        }
        .entry(),
        Tool::<CreateRequest, Json<MutationResponse>> {
            name: "kb_create",
            group: ToolGroup::Edit,
            arguments: Arguments::Wrapped,
            hints: Hints::WRITE,
            description: "Creates a new Markdown file (UTF-8 without BOM; parent folders are created; never overwrites an existing \
file). Needs knowledgeBase.allowWrites. Returns the new sourceHash; indexSynchronized tells whether kb_search already sees it.",
            handler: |cx, r| cx.engine.create(r).map(Json),
        }
        .entry(),
        Tool::<PdfBookRequest, Json<PdfBookResponse>> {
            name: "kb_create_pdf_book",
            group: ToolGroup::Export,
            arguments: Arguments::Wrapped,
            hints: Hints::DESTRUCTIVE,
            description: "Renders one Markdown file as a PDF book with Japanese typesetting (embedded subset CJK font, kinsoku line \
breaking): headings with a bookmark outline, emphasis, code, lists and task lists, quotes, links, GFM tables, local images, page \
numbers. pageFormat a4|a5 (default)|a6|b5|letter; style compact (default)|classic|modern|technical|academic; profile \
screen|standard (default)|print sets image resolution. Writes outputPath (default: the source with .pdf), replacing an existing \
PDF atomically; the Markdown, images and index are not changed. Remote and absolute image URLs are never fetched: they and \
missing images become placeholder boxes listed in warnings. Needs knowledgeBase.allowWrites.",
            handler: |cx, r| cx.engine.create_pdf_book(r).map(Json),
        }
        .entry(),
        Tool::<DeleteRequest, Json<MutationResponse>> {
            name: "kb_delete",
            group: ToolGroup::Edit,
            arguments: Arguments::Wrapped,
            hints: Hints::DESTRUCTIVE,
            description: "Deletes a Markdown file if it still has the expectedSourceHash you read (else CONFLICT: read it again). \
Needs knowledgeBase.allowWrites. The file is removed from the index in the background.",
            handler: |cx, r| cx.engine.delete_document(r).map(Json),
        }
        .entry(),
        Tool::<AssetPathRequest, Json<DeleteImageResponse>> {
            name: "kb_delete_image",
            group: ToolGroup::Assets,
            arguments: Arguments::Flat,
            hints: Hints::DESTRUCTIVE,
            description: "Deletes one PNG/JPEG/WebP/GIF file anywhere under the root (root-relative path). Markdown that links to \
it is not checked or changed and folders stay. Needs knowledgeBase.allowWrites.",
            handler: |cx, r| cx.engine.delete_image(r).map(Json),
        }
        .entry(),
        Tool::<AssetPathRequest, BinaryReply> {
            name: "kb_download_file",
            group: ToolGroup::Assets,
            arguments: Arguments::Flat,
            hints: Hints::READ_ONLY,
            description: "Returns the original bytes of one file under the root (any regular file up to 25 MiB) as an embedded \
binary resource, then {path,mimeType,bytes,sha256} as text. .git, the index folder and paths through links are refused. For an \
image preview (GIF as PNG) use kb_load_image. Needs no write permission.",
            handler: |cx, r| cx.engine.download_file(r),
        }
        .entry(),
        Tool::<TableEditRequest, Json<TableEditResponse>> {
            name: "kb_edit_table",
            group: ToolGroup::Edit,
            arguments: Arguments::Flat,
            hints: Hints::WRITE,
            description: "Edits one GFM table with minimal source changes: update_cells, insert_row, delete_row, insert_column, \
delete_column, rename_column, set_alignment. pointer is the table's hashed anchor (tN~self~subtree) from kb_read; a stale \
anchor is CONFLICT. Rows by rowIndex or where {column|columnIndex, equals}; columns by column name or columnIndex. Values \
are literal text by default (escaped for you); valueFormat \"markdown\" writes inline Markdown verbatim. Cells cannot hold \
line breaks. Returns the table's new pointer for the next edit. Needs knowledgeBase.allowWrites.",
            handler: |cx, r| cx.engine.edit_table(r).map(Json),
        }
        .entry(),
        Tool::<ExportHtmlRequest, Json<ExportHtmlResponse>> {
            name: "kb_export_html",
            group: ToolGroup::Export,
            arguments: Arguments::Flat,
            hints: Hints::DESTRUCTIVE,
            description: "Export one Markdown file to a single self-contained HTML file (styles and images embedded, no external \
requests). Requires knowledgeBase.allowWrites.",
            handler: |cx, r| cx.engine.export_html(r).map(Json),
        }
        .entry(),
        Tool::<FindDocsRequest, CatalogText> {
            name: "kb_find_docs",
            group: ToolGroup::Catalog,
            arguments: Arguments::Flat,
            hints: Hints::READ_ONLY,
            description: "Find documents in the project's catalog index by text, tags (AND with tags, OR with any_tags) or relation \
to a document; returns a page of documents (default 20) with a cursor for the rest.",
            handler: |cx, r| cx.engine.find_docs(r),
        }
        .entry(),
        Tool::<LinksRequest, Json<LinksResponse>> {
            name: "kb_links",
            group: ToolGroup::Read,
            arguments: Arguments::Wrapped,
            hints: Hints::READ_ONLY,
            description: "Lists Markdown links from the index: direction outgoing (links written in path), incoming (links to \
path: \"what links here?\") or both (default), following them up to depth 1-5 files away without revisiting a file. Inline, \
reference-style, autolink and image links count; x.html resolves to a sibling x.md (mdBook). Each edge has from, fromAnchor \
(the v2 anchor of the element holding the link: kb_patch it to repair), to, toFragment, kind, broken and reason \
(missing_file, missing_anchor, outside_root, invalid_path), raw and line. Omit path with brokenOnly=true for the whole \
project's broken links, paged with limit and nextCursor. External URLs only with includeExternal (never fetched). After \
kb_move, links to the old path show up broken until you patch them.",
            handler: |cx, r| cx.engine.links(r).map(Json),
        }
        .entry(),
        Tool::<ListFilesRequest, Json<ListFilesResponse>> {
            name: "kb_list_files",
            group: ToolGroup::Read,
            arguments: Arguments::Wrapped,
            hints: Hints::READ_ONLY,
            description: "Lists Markdown and asset files under the project root (not limited by the index's include/exclude globs). \
Optional request.pathPrefix (a folder) and request.includeGlob (e.g. \"**/*.png\"). Needs no index.",
            handler: |cx, r| cx.engine.list_files(r).map(Json),
        }
        .entry(),
        Tool::<ListImagesRequest, Json<ListImagesResponse>> {
            name: "kb_list_images",
            group: ToolGroup::Assets,
            arguments: Arguments::Flat,
            hints: Hints::READ_ONLY,
            description: "Lists PNG/JPEG/WebP/GIF files anywhere under the root by extension, sorted case-insensitively, a page at a \
time: pageSize 1..200 (default 50); pass nextCursor as cursor for the next page (null on the last).",
            handler: |cx, r| cx.engine.list_images(r).map(Json),
        }
        .entry(),
        Tool::<ListTagsRequest, CatalogText> {
            name: "kb_list_tags",
            group: ToolGroup::Catalog,
            arguments: Arguments::Flat,
            hints: Hints::READ_ONLY,
            description: "List the catalog's tag vocabulary (name, group, description, aliases, replacement of deprecated tags) with \
the number of documents per tag; filter with query.",
            handler: |cx, r| cx.engine.list_tags(r),
        }
        .entry(),
        Tool::<AssetPathRequest, BinaryReply> {
            name: "kb_load_image",
            group: ToolGroup::Assets,
            arguments: Arguments::Flat,
            hints: Hints::READ_ONLY,
            description: "Shows an image under the root: an MCP image block first (a GIF as a PNG of its first frame), then \
{path,mimeType,bytes,sha256} of the original file as text. Checks extension, signature and the 25 MiB limit.",
            handler: |cx, r| cx.engine.load_image(r),
        }
        .entry(),
        Tool::<MoveRequest, Json<MutationResponse>> {
            name: "kb_move",
            group: ToolGroup::Edit,
            arguments: Arguments::Wrapped,
            hints: Hints::WRITE,
            description: "Moves or renames a Markdown file if it still has the expectedSourceHash you read; the target must not \
exist (folders are created). Needs knowledgeBase.allowWrites. Both paths are reindexed in the background.",
            handler: |cx, r| cx.engine.move_document(r).map(Json),
        }
        .entry(),
        Tool::<MoveImageRequest, Json<MoveImageResponse>> {
            name: "kb_move_image",
            group: ToolGroup::Assets,
            arguments: Arguments::Wrapped,
            hints: Hints::WRITE,
            description: "Moves or renames one image under the root without overwriting (the target must not exist; folders are \
created). Optional expectedSha256 (from kb_load_image or kb_save_image) guards against a changed file (CONFLICT). Markdown \
links are not updated: fix them with kb_read + kb_patch. Needs knowledgeBase.allowWrites.",
            handler: |cx, r| cx.engine.move_image(r).map(Json),
        }
        .entry(),
        Tool::<OutlineRequest, Json<OutlineResponse>> {
            name: "kb_outline",
            group: ToolGroup::Read,
            arguments: Arguments::Wrapped,
            hints: Hints::READ_ONLY,
            description: "Returns the heading tree of one Markdown file with each heading's anchor (logical~selfHash~subtreeHash). \
Reads the current source; needs no index.",
            handler: |cx, r| cx.engine.outline(r).map(Json),
        }
        .entry(),
        Tool::<PatchRequest, Json<MutationResponse>> {
            name: "kb_patch",
            group: ToolGroup::Edit,
            arguments: Arguments::Wrapped,
            hints: Hints::DESTRUCTIVE,
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
            handler: |cx, r| cx.engine.patch(r).map(Json),
        }
        .entry(),
        Tool::<ReadRequest, Json<MarkdownSlice>> {
            name: "kb_read",
            group: ToolGroup::Read,
            arguments: Arguments::Wrapped,
            hints: Hints::READ_ONLY,
            description: "Reads the current source of a Markdown file, a page of elements at a time, starting at a pointer or anchor \
(omit it or use \"document\" to start at the beginning). Independent of the index. Elements come back with v2 anchors \
logical~selfHash~subtreeHash (v1 logical~selfHash is still accepted for navigation); list items are liN nested in their parent liN; \
a block quote is one opaque qN; GFM tables are tN and addressing a table also returns a structured projection with display text \
(use the markdown field for the original markup). Pass nextPointer to continue; consecutive pages concatenate to the whole file.",
            handler: |cx, r| cx.engine.read(r).map(Json),
        }
        .entry(),
        Tool::<ReadGuideRequest, TextBlocks> {
            name: "kb_read_guide",
            group: ToolGroup::Read,
            arguments: Arguments::Flat,
            hints: Hints::READ_ONLY,
            description: "Read usage guides of this server by name (names are listed in the server instructions), e.g. \
{\"names\": [\"pointers\", \"patching\"]}.",
            handler: |cx, r| cx.engine.read_guide(r),
        }
        .entry(),
        Tool::<ReindexRequest, Json<ReindexStartResponse>> {
            name: "kb_reindex",
            group: ToolGroup::Read,
            arguments: Arguments::Wrapped,
            hints: Hints::REINDEX,
            description: "Starts reindexing the project's Markdown in the background and returns at once; only one reindex runs at a time \
(started=false returns the running one). scope \"changed\" (default) or \"all\"; force=true rebuilds an index that is incompatible \
with the configuration. Watch progress and the result with kb_status.",
            handler: |cx, r| cx.engine.start_reindex(r).map(Json),
        }
        .entry(),
        Tool::<SaveImageRequest, Json<SaveImageResponse>> {
            name: "kb_save_image",
            group: ToolGroup::Assets,
            arguments: Arguments::Flat,
            hints: Hints { open_world: true, ..Hints::WRITE },
            description: "Saves an image the user uploaded (OpenAI file parameter file: {download_url, file_id}; raw Base64 and \
data URIs are not accepted) as PNG/JPEG/WebP/GIF. Without targetPath it goes to images/ named after fileName or the upload's \
name (cover.png, cover-2.png on collision); targetPath is the exact destination and is never overwritten (ALREADY_EXISTS). \
HTTPS only, at most 25 MiB. Returns path, sha256 and a Markdown snippet (not inserted anywhere). Needs knowledgeBase.allowWrites.",
            handler: |cx, r| cx.engine.save_image(r).map(Json),
        }
        .entry()
        .with_meta(serde_json::json!({ "openai/fileParams": ["file"] })),
        Tool::<SearchRequest, Json<SearchResponse>> {
            name: "kb_search",
            group: ToolGroup::Read,
            arguments: Arguments::Wrapped,
            hints: Hints::READ_ONLY,
            description: "Searches the derived index of the project's Markdown (Japanese-aware BM25: 京都 does not match 東京都庁, API also finds its full-width \
form, サーバー finds サーバ). Every word is optional but chunks with all words rank first; \"quoted phrases\" match exactly. Each hit \
gives path, pointer, headingPath and a snippet of the sentences around the words (often the answer itself); stale=true when the \
file changed since it was indexed. Read on with kb_read {path, pointer}. includeGlobs/excludeGlobs limit the files, and topK counts \
within them. mode hybrid falls back to lexical when embeddings are unavailable (see warning). detail \"full\" adds the original's \
fields (fullPointer, score, searchMode, readHint, indexedSourceHash) to every hit.",
            handler: |cx, r| cx.engine.search(r).map(Json),
        }
        .entry(),
        Tool::<StatusRequest, Json<StatusResponse>> {
            name: "kb_status",
            group: ToolGroup::Read,
            arguments: Arguments::Flat,
            hints: Hints::READ_ONLY,
            description: "Shows the index: documents and chunks, versions, embedding mode, whether the index is compatible with the \
configuration, pending edits and the running or last reindex. Call with {}.",
            handler: |cx, _| Ok(Json(cx.engine.status_bounded())),
        }
        .entry(),
        Tool::<UpdateIndexRequest, Json<UpdateIndexResponse>> {
            name: "kb_update_index",
            group: ToolGroup::Catalog,
            arguments: Arguments::Flat,
            hints: Hints::DESTRUCTIVE,
            description: "Add, replace or remove one document, term or tag entry of the catalog index (item null removes); the whole \
index is validated before the file is written. Requires knowledgeBase.allowWrites.",
            handler: |cx, r| cx.engine.update_index(r).map(Json),
        }
        .entry(),
    ]
}

/// The tool table, built once.
static TABLE: LazyLock<Vec<ToolEntry>> = LazyLock::new(table);

fn object(v: &Value) -> Arc<JsonObject> {
    Arc::new(v.as_object().cloned().unwrap_or_default())
}

impl ToolEntry {
    fn to_mcp(&self) -> McpTool {
        let h = self.hints;
        let annotations = ToolAnnotations::new()
            .read_only(h.read_only)
            .destructive(h.destructive)
            .idempotent(h.idempotent)
            .open_world(h.open_world);
        let mut tool =
            McpTool::new_with_raw(self.name, Some(self.description.into()), object(&self.input_schema))
                .with_annotations(annotations);
        if self.publishes_output {
            tool = tool.with_raw_output_schema(object(&self.output_schema));
        }
        if let Some(meta) = &self.meta {
            tool = tool.with_meta(rmcp::model::MetaObject(meta.as_object().cloned().unwrap_or_default()));
        }
        tool
    }
}

/// Every tool as `tools/list` serves it with the default profile, sorted by name.
pub fn tool_catalog() -> Vec<McpTool> {
    tool_catalog_for(&ToolsConfig::default())
}

/// The tools a profile (`tools.enabled` / `tools.disabled`) lists, sorted by name.
pub fn tool_catalog_for(profile: &ToolsConfig) -> Vec<McpTool> {
    TABLE.iter().filter(|t| profile.is_enabled(t.name, t.group)).map(ToolEntry::to_mcp).collect()
}

/// The names of the tools a profile lists.
pub fn tool_names(profile: &ToolsConfig) -> Vec<&'static str> {
    TABLE.iter().filter(|t| profile.is_enabled(t.name, t.group)).map(|t| t.name).collect()
}

/// The tool list of `docs/tools.md` (a Markdown table), generated from the tool table.
pub fn tool_list_markdown() -> String {
    let mut out = String::from("| tool | group | arguments | annotations |\n|---|---|---|---|\n");
    for t in TABLE.iter() {
        let arguments = match t.arguments {
            Arguments::Wrapped => "`{\"request\": {…}}`",
            Arguments::Flat if t.input_schema["properties"].as_object().is_some_and(Map::is_empty) => "`{}`",
            Arguments::Flat => "flat",
        };
        let h = t.hints;
        let annotations = match (h.read_only, h.destructive, h.idempotent) {
            (true, _, _) => "read-only",
            (false, true, _) => "writes, destructive",
            (false, false, true) => "writes, idempotent",
            (false, false, false) => "writes",
        };
        out.push_str(&format!("| `{}` | {} | {arguments} | {annotations} |\n", t.name, t.group.as_str()));
    }
    out
}

/// Decodes the (normalised) arguments of `tool` into its request type, with a message that
/// names what is wrong.
fn decode<T: DeserializeOwned>(tool: &str, arguments: Arguments, args: Value) -> Result<T> {
    match arguments {
        Arguments::Flat => deserialize(tool, args),
        Arguments::Wrapped => {
            match args.get("request") {
                Some(v) if v.is_object() => {}
                Some(_) => {
                    return Err(Error::invalid_argument(format!("{tool}: 'request' must be an object.")));
                }
                None => {
                    return Err(Error::invalid_argument(format!(
                        "{tool} takes its arguments inside 'request', e.g. {{\"request\": {{\"path\": \"docs/a.md\"}}}}."
                    )));
                }
            }
            deserialize::<Wrapped<T>>(tool, args).map(|w| w.request)
        }
    }
}

/// `{"request": T}`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Wrapped<T> {
    request: T,
}

fn deserialize<T: DeserializeOwned>(tool: &str, args: Value) -> Result<T> {
    serde_path_to_error::deserialize(args).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        // A value outside a closed set: its own sentence names the field and the allowed values.
        if let Some(sentence) = crate::wire::refused(&inner) {
            return Error::invalid_argument(sentence);
        }
        if path.is_empty() || path == "." {
            Error::invalid_argument(format!("{tool}: invalid arguments: {inner}."))
        } else {
            Error::invalid_argument(format!("{tool}: invalid {path}: {inner}."))
        }
    })
}

/// The catalog tools that accept mdmark's hidden `project_dir` argument
/// (`docs/reference/catalog-spec.md` §2.1).
const PROJECT_DIR_TOOLS: &[&str] =
    &["kb_build_site", "kb_check", "kb_export_html", "kb_find_docs", "kb_list_tags", "kb_update_index"];

/// Removes `project_dir` when it names this server's project root; another folder is E38.
fn strip_project_dir(engine: &Engine, name: &str, args: &mut Value) -> Result<()> {
    if !PROJECT_DIR_TOOLS.contains(&name) {
        return Ok(());
    }
    let Some(given) = args.as_object_mut().and_then(|o| o.shift_remove("project_dir")) else { return Ok(()) };
    let root = &engine.config().project_root;
    let canonical = |p: &std::path::Path| std::fs::canonicalize(p).ok();
    let same = given.as_str().map(std::path::Path::new).is_some_and(|p| {
        p.is_absolute() && canonical(p).is_some_and(|c| p.is_dir() && Some(c) == canonical(root))
    });
    if same {
        return Ok(());
    }
    let shown = given.as_str().map_or_else(|| given.to_string(), str::to_owned);
    Err(Error::invalid_argument(format!(
        "This server serves `{}`, not `{shown}`; start a separate server for that project.",
        root.display()
    )))
}

/// Arguments a mainstream client adds to every tool call on its own, whatever the tool's schema
/// says: Gemini CLI gives every tool a `wait_for_previous` boolean (its own scheduling hint) and
/// tells the model to set it. They are dropped before the arguments are read, so a call carrying
/// one succeeds, while a misspelled field of ours is still refused by name.
pub(super) const CLIENT_ARGUMENTS: &[&str] = &["wait_for_previous"];

/// Removes the top-level [`CLIENT_ARGUMENTS`] (none of our tools has a field of that name).
fn strip_client_arguments(name: &str, args: &mut Value) {
    let Some(map) = args.as_object_mut() else { return };
    for key in CLIENT_ARGUMENTS {
        if map.shift_remove(*key).is_some() {
            tracing::debug!("{name}: ignored the client's own argument '{key}'");
        }
    }
}

/// The top-level argument names and the `config` of a catalog or HTML tool's call (E10 needs
/// them after `schema::normalise` has consumed the arguments); empty for the other tools.
fn catalog_argument_names(name: &str, args: &Value) -> (Vec<String>, Option<String>) {
    match args.as_object().filter(|_| PROJECT_DIR_TOOLS.contains(&name)) {
        Some(o) => (o.keys().cloned().collect(), o.get("config").and_then(Value::as_str).map(str::to_owned)),
        None => (Vec::new(), None),
    }
}

/// E10 in the catalog's language for a catalog or HTML tool given an argument it does not take
/// (`docs/design/catalog.md`, "Messages"); `None` when no top-level name is unknown.
fn unknown_catalog_argument(
    engine: &Engine,
    tool: &ToolEntry,
    given: &(Vec<String>, Option<String>),
) -> Option<Error> {
    let properties = tool.input_schema["properties"].as_object()?;
    let unknown = given.0.iter().find(|k| !properties.keys().any(|p| p.eq_ignore_ascii_case(k)))?;
    let accepted: Vec<&str> = properties.keys().map(String::as_str).collect();
    Some(engine.unknown_catalog_argument(unknown, &accepted, given.1.as_deref()))
}

/// E11 in the catalog's language for a catalog or HTML tool given an argument of the wrong JSON
/// type (serde's own sentence is English); `None` when every argument has a type its schema
/// allows.
fn catalog_wrong_type(
    engine: &Engine,
    tool: &ToolEntry,
    args: &Value,
    config: Option<&str>,
) -> Option<Error> {
    if !PROJECT_DIR_TOOLS.contains(&tool.name) {
        return None;
    }
    let properties = tool.input_schema["properties"].as_object()?;
    for (name, value) in args.as_object()? {
        let Some(schema) = properties.get(name) else { continue };
        let mut types: Vec<&str> = match &schema["type"] {
            Value::String(t) => vec![t.as_str()],
            Value::Array(list) => list.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        types.retain(|t| *t != "null");
        let fits = |t: &&str| match *t {
            "string" => value.is_string(),
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            "boolean" => value.is_boolean(),
            "array" => value.is_array(),
            "object" => value.is_object(),
            _ => true,
        };
        if value.is_null() || types.is_empty() || types.iter().any(fits) {
            continue;
        }
        return Some(engine.catalog_argument_type(name, types[0], config));
    }
    None
}

/// Runs one tool call (on a blocking thread).
pub(super) fn dispatch(engine: &Engine, name: &str, args: Value) -> Result<Reply> {
    if args.to_string().len() > MAX_ARGUMENT_BYTES {
        return Err(Error::invalid_argument(format!(
            "{name}: the arguments are larger than {MAX_ARGUMENT_BYTES} bytes; send a smaller request."
        )));
    }
    let Some(tool) = TABLE.iter().find(|t| t.name == name) else {
        return Err(Error::invalid_argument(format!("Unknown tool '{name}'.")));
    };
    let mut args = args;
    strip_client_arguments(name, &mut args);
    strip_project_dir(engine, name, &mut args)?;
    let given = catalog_argument_names(name, &args);
    schema::normalise(&mut args, &tool.input_schema).map_err(|m| {
        unknown_catalog_argument(engine, tool, &given)
            .unwrap_or_else(|| Error::invalid_argument(format!("{name}: {m}")))
    })?;
    if let Some(wrong) = catalog_wrong_type(engine, tool, &args, given.1.as_deref()) {
        return Err(wrong);
    }
    (tool.call)(&ToolContext { engine }, args)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn the_table_has_one_entry_per_name_in_order() {
        let names: Vec<&str> = TABLE.iter().map(|t| t.name).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(names, sorted);
        for t in TABLE.iter() {
            assert_eq!(t.input_schema["type"], "object", "{}", t.name);
            assert_eq!(t.output_schema["type"], "object", "{}", t.name);
            if t.arguments == Arguments::Wrapped {
                assert_eq!(t.input_schema["required"], json!(["request"]), "{}", t.name);
            }
        }
        let status = TABLE.iter().find(|t| t.name == "kb_status").unwrap();
        assert_eq!(
            status.input_schema,
            json!({"type": "object", "properties": {}, "additionalProperties": false})
        );
    }

    #[test]
    fn serde_refuses_unknown_fields_by_name_even_without_normalising() {
        let args = json!({"path": "a.md", "pointer": "t1", "action": "insert_row", "beforeRowIndx": 0});
        let e = decode::<TableEditRequest>("kb_edit_table", Arguments::Flat, args).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert!(
            e.message.starts_with("kb_edit_table: ") && e.message.contains("`beforeRowIndx`"),
            "{}",
            e.message
        );
        let args = json!({"request": {"path": "a.md", "operations": [{"kind": "delete", "pointer": "1", "extra": 1}]}});
        let e = decode::<PatchRequest>("kb_patch", Arguments::Wrapped, args).unwrap_err();
        assert!(e.message.contains("`extra`"), "{}", e.message);
        let e = decode::<ReadRequest>("kb_read", Arguments::Wrapped, json!({"request": {"path": 1}}))
            .unwrap_err();
        assert!(e.message.starts_with("kb_read: invalid request.path: invalid type"), "{}", e.message);
        let e = decode::<ReadRequest>("kb_read", Arguments::Wrapped, json!({"path": "a.md"})).unwrap_err();
        assert!(e.message.contains("inside 'request'"), "{}", e.message);
        let e = decode::<StatusRequest>("kb_status", Arguments::Flat, json!({"x": 1})).unwrap_err();
        assert!(e.message.contains("`x`"), "{}", e.message);
    }

    /// `kb_search.mode` and `kb_patch`'s operation kinds are typed at the edge, and a value outside
    /// their set is refused with the sentence the engine used to write, with no field path
    /// before it (moved here from `search::plan` and `PatchKind::parse`).
    #[test]
    fn values_outside_a_closed_set_are_refused_with_their_own_sentence() {
        let search = |mode: &str| {
            decode::<SearchRequest>(
                "kb_search",
                Arguments::Wrapped,
                json!({"request": {"query": "q", "mode": mode}}),
            )
        };
        let e = search("fuzzy").unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (ErrorCode::InvalidArgument, "mode 'fuzzy' is not valid; use lexical, semantic or hybrid.")
        );
        // Case and surrounding spaces are forgiven, as `search.defaultMode` forgives them.
        assert_eq!(search(" Semantic ").unwrap().mode, Some(crate::config::SearchMode::Semantic));
        let patch = |kind: &str| {
            let args = json!({"request": {"path": "a.md", "operations": [{"kind": kind, "pointer": "1"}]}});
            decode::<PatchRequest>("kb_patch", Arguments::Wrapped, args)
        };
        let e = patch("replace_fragment").unwrap_err();
        assert_eq!(
            e.message,
            "Unknown patch operation kind 'replace_fragment'. Valid kinds: replace, replace_element, replace_subtree, \
replace_section, delete_section, insert_before, insert_after, delete."
        );
        assert_eq!(
            patch("DELETE_SECTION").unwrap().operations[0].kind,
            crate::wire::PatchKind::DeleteSection
        );
        // Not a string at all: serde's message, with the field path.
        let args = json!({"request": {"path": "a.md", "operations": [{"kind": 3, "pointer": "1"}]}});
        let e = decode::<PatchRequest>("kb_patch", Arguments::Wrapped, args).unwrap_err();
        assert!(
            e.message.starts_with("kb_patch: invalid request.operations[0].kind: invalid type"),
            "{}",
            e.message
        );
    }

    /// Claude Code folds full-width ASCII (ＡＰＩ) and half-width katakana to their usual forms
    /// before a model sees a description, so no description may depend on them.
    #[test]
    fn descriptions_survive_width_folding() {
        let folded =
            |c: char| ('\u{FF01}'..='\u{FF5E}').contains(&c) || ('\u{FF61}'..='\u{FF9F}').contains(&c);
        let mut texts: Vec<(String, String)> = Vec::new();
        fn collect(v: &Value, at: String, out: &mut Vec<(String, String)>) {
            match v {
                Value::String(s) => out.push((at, s.clone())),
                Value::Object(m) => m.iter().for_each(|(k, x)| collect(x, format!("{at}/{k}"), out)),
                Value::Array(l) => {
                    l.iter().enumerate().for_each(|(i, x)| collect(x, format!("{at}[{i}]"), out))
                }
                _ => {}
            }
        }
        for t in TABLE.iter() {
            texts.push((t.name.to_owned(), t.description.to_owned()));
            collect(&t.input_schema, format!("{}.inputSchema", t.name), &mut texts);
            collect(&t.output_schema, format!("{}.outputSchema", t.name), &mut texts);
        }
        let bad: Vec<&(String, String)> = texts.iter().filter(|(_, s)| s.chars().any(folded)).collect();
        assert!(bad.is_empty(), "width-dependent text: {bad:?}");
    }

    #[test]
    fn client_arguments_are_dropped_and_never_a_field_of_ours() {
        let mut args = json!({"path": "a.md", "wait_for_previous": true, "wait_for_previus": true});
        strip_client_arguments("kb_read", &mut args);
        assert_eq!(args, json!({"path": "a.md", "wait_for_previus": true}));
        for t in TABLE.iter() {
            let props = t.input_schema["properties"].as_object().unwrap();
            for key in CLIENT_ARGUMENTS {
                assert!(!props.contains_key(*key), "{} has a field named like a client argument", t.name);
            }
        }
    }

    #[test]
    fn the_docs_list_names_every_tool() {
        let list = tool_list_markdown();
        for t in TABLE.iter() {
            assert!(list.contains(&format!("| `{}` |", t.name)), "{}", t.name);
        }
        assert!(list.contains("| `kb_status` | read | `{}` | read-only |"), "{list}");
        assert!(
            list.contains("| `kb_patch` | edit | `{\"request\": {…}}` | writes, destructive |"),
            "{list}"
        );
    }
}
