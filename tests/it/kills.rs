//! The kill matrix (`docs/reference/product.md` §7, issue #19 part 1): SIGKILL lands inside every
//! writer at the moments that matter, on purpose and provably, and nothing is lost.
//!
//! A row is (writer, failpoint). The process (the stdio server, or the CLI for a reindex) runs
//! with `LVS_FAILPOINTS="<point>=pause"`; the test waits for `failpoint <point> reached` on its
//! stderr — so the kill lands inside the operation, at that point — then sends SIGKILL. After
//! each kill:
//!
//! 1. every user file holds exactly its bytes from before the call or those a completed call
//!    leaves (SHA-256 compared with both; "absent" is a state too) — the completed state comes
//!    from a reference run of the same call in a twin project;
//! 2. a call whose point lies before its answer was in flight: no answer was sent;
//! 3. for the points between a temp file and its rename, the temp file is there right after the
//!    kill (the kill landed in that window), and no temp file remains anywhere below the root
//!    after the next start's sweep;
//! 4. the next start repairs the index: a `kb_reindex` (changed) brings it level, and a lexical
//!    search for each marker word finds exactly the Markdown files that hold it, none stale;
//! 5. the server answers the next call, including a write (the killed process's OS locks, the
//!    writer `LOCK` and `MUTATION.lock`, are gone with it).
//!
//! One test per writer (`cargo test --test it kills::patch` runs the patch rows); adding a
//! writer is one [`Writer`] and one test line. Rows of a writer run in parallel threads.
//!
//! Also here: a `LOCK` file left by a killed process never blocks (not even for one wait), and a
//! kill of the writer while another process waits for it lets the waiting one finish.

#![cfg(unix)]

use std::collections::{BTreeMap, BTreeSet};
use std::io::BufRead;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use lvs::text::sha256_hex;
use lvs::workspace::TEMP_PREFIX;
use serde_json::{Value, json};

use crate::rpc::Rpc;
use crate::support::{Project, bin, copy_tree};

/// The index folder below the root (derived data, not the user's files).
const INDEX_DIR: &str = ".local-vector-search-mcp";
/// How long a process may take to reach a failpoint, or a reindex to finish.
const PATIENCE: Duration = Duration::from_secs(120);

/// The configuration every row uses (inside the root: it is a user file too, never changed);
/// embeddings on only with an `endpoint` (the fake server of [`crate::fake_embed`]).
fn config(endpoint: Option<&str>) -> String {
    let embedding = match endpoint {
        None => "embedding:\n  provider: none\n".to_owned(),
        Some(e) => format!(
            "embedding:\n  provider: openai-compatible\n  endpoint: {e}\n  apiKey: test-key\n  dimensions: {EMBED_DIMS}\n  batchSize: 2\n  timeoutSeconds: 10\n"
        ),
    };
    format!(
        "knowledgeBase:\n  root: .\n  allowWrites: true\n{embedding}catalog:\n  index: docs/index.yaml\n  scan: [\"docs/**/*.md\"]\n  build:\n    include: [\"docs/*.md\"]\n    out: dist/site.html\n    title: サイト\n"
    )
}
/// Dimensions of the fake embedding server's vectors.
const EMBED_DIMS: usize = 16;
const INDEX_YAML: &str = "version: 1\ndocs:\n  - id: a\n    path: a.md\n    title: 文書 A\n    tags: [設計]\ntags:\n  - name: 設計\n";

/// How a writer is driven.
enum Via {
    /// A tool call to the stdio server; the arguments may need the server (a pointer from `kb_read`).
    Tool(fn(&mut Rpc, &Path) -> Value),
    /// A CLI subcommand (`reindex` waits for its run; `kb_reindex` would answer at once).
    Cli(&'static [&'static str]),
    /// A test of this binary run as a child process, given the root in `LVS_KILL_CHILD_ROOT`
    /// (`kb_save_image` only downloads from a local test server in-process); it prints
    /// [`CHILD_DONE`] when its call returned.
    Child(&'static str),
}

/// What a [`Via::Child`] prints when its call has returned.
const CHILD_DONE: &str = "kill-child: call returned";

/// A writer of the matrix: how its project is made and how it is called.
struct Writer {
    /// Files of the project, written before the first index.
    files: &'static [(&'static str, &'static str)],
    /// Whether the project is indexed before the call (a full reindex starts without an index).
    indexed: bool,
    /// External edits made after the index and before the call (an incremental reindex's work).
    edits: &'static [(&'static str, Option<&'static str>)],
    via: Via,
    /// Words whose search results must agree with the files after the repair.
    markers: &'static [&'static str],
    /// Embeddings on (a fake endpoint): the reindex has a vector phase, and after the repair
    /// every chunk has its vector.
    embeddings: bool,
}

/// One failpoint of a writer.
struct Point {
    name: &'static str,
    /// The point lies before the call answers: no answer may have been sent when it is killed.
    in_call: bool,
    /// The point lies between writing a temp file beside the user's files and renaming it.
    temp_pending: bool,
}

const fn point(name: &'static str, in_call: bool, temp_pending: bool) -> Point {
    Point { name, in_call, temp_pending }
}

/// The moments of one atomic Markdown write (`Workspace::write_atomic`) and of the index update
/// a mutation schedules after it.
const BEFORE_TEMP: Point = point("workspace.write.before-temp", true, false);
const TEMP_WRITTEN: Point = point("workspace.write.temp-written", true, true);
const RENAMED: Point = point("workspace.write.renamed", true, false);
const BEFORE_INDEX: Point = point("mutate.before-index-update", true, false);
/// The background index commit after a mutation: the call may already have answered (it waits
/// for the index at most 500 ms), so only the failpoint line proves where the kill landed.
const INDEX_COMMIT: Point = point("indexer.between-store-and-lexical-commit", false, false);

const BASE: (&str, &str) = ("base.md", "# 基本\n\ncommonbase の段落。\n");

fn patch_args(rpc: &mut Rpc, _: &Path) -> Value {
    let pointer = pointer_of(rpc, "notes/patch.md", "kiwiold");
    json!({"name": "kb_patch", "arguments": {"request": {"path": "notes/patch.md", "operations": [
        {"kind": "replace_element", "pointer": pointer, "markdown": "mangonew の段落。"}]}}})
}

fn table_args(rpc: &mut Rpc, _: &Path) -> Value {
    let pointer = pointer_of(rpc, "notes/table.md", "kiwiold");
    json!({"name": "kb_edit_table", "arguments": {"path": "notes/table.md", "pointer": pointer,
        "action": "update_cells", "updates": [{"where": {"column": "項目", "equals": "色"}, "column": "値", "value": "mangonew"}]}})
}

fn create_args(_: &mut Rpc, _: &Path) -> Value {
    json!({"name": "kb_create", "arguments": {"request": {"path": "notes/new/created.md", "markdown": "# 作成\n\nmangonew の文書。\n"}}})
}

fn move_args(_: &mut Rpc, root: &Path) -> Value {
    let hash = sha256_hex(&std::fs::read(root.join("notes/from.md")).unwrap());
    json!({"name": "kb_move", "arguments": {"request": {"sourcePath": "notes/from.md", "targetPath": "archive/to.md", "expectedSourceHash": hash}}})
}

fn delete_args(_: &mut Rpc, root: &Path) -> Value {
    let hash = sha256_hex(&std::fs::read(root.join("notes/gone.md")).unwrap());
    json!({"name": "kb_delete", "arguments": {"request": {"path": "notes/gone.md", "expectedSourceHash": hash}}})
}

fn update_index_args(_: &mut Rpc, _: &Path) -> Value {
    json!({"name": "kb_update_index", "arguments": {"kind": "doc", "id": "b", "item": {"path": "docs/b.md", "title": "文書 B", "tags": ["設計"]}}})
}

fn export_html_args(_: &mut Rpc, _: &Path) -> Value {
    json!({"name": "kb_export_html", "arguments": {"file": "docs/a.md"}})
}

fn build_site_args(_: &mut Rpc, _: &Path) -> Value {
    json!({"name": "kb_build_site", "arguments": {}})
}

fn pdf_args(_: &mut Rpc, _: &Path) -> Value {
    json!({"name": "kb_create_pdf_book", "arguments": {"request": {"path": "book.md", "outputPath": "out/book.pdf"}}})
}

fn move_image_args(_: &mut Rpc, _: &Path) -> Value {
    json!({"name": "kb_move_image", "arguments": {"request": {"sourcePath": "images/a.gif", "targetPath": "pics/b.gif"}}})
}

fn delete_image_args(_: &mut Rpc, _: &Path) -> Value {
    json!({"name": "kb_delete_image", "arguments": {"path": "images/a.gif"}})
}

/// The files of the reindex rows: more than one file, so a kill after the first is mid-run.
const MANY: &[(&str, &str)] = &[
    BASE,
    ("r/one.md", "# 一\n\nkiwiold の一。\n"),
    ("r/two.md", "# 二\n\nkiwiold の二。\n"),
    ("r/three.md", "# 三\n\nkiwiold の三。\n"),
    ("r/four.md", "# 四\n\n四番目。\n"),
    ("r/five.md", "# 五\n\n五番目。\n"),
];

const PATCH: Writer = Writer {
    files: &[BASE, ("notes/patch.md", "# パッチ\n\nkiwiold の段落。\n\n別の段落。\n")],
    indexed: true,
    edits: &[],
    via: Via::Tool(patch_args),
    markers: &["kiwiold", "mangonew", "commonbase"],
    embeddings: false,
};
const EDIT_TABLE: Writer = Writer {
    files: &[BASE, ("notes/table.md", "# 表\n\n| 項目 | 値 |\n|---|---|\n| 色 | kiwiold |\n| 形 | 丸 |\n")],
    indexed: true,
    edits: &[],
    via: Via::Tool(table_args),
    markers: &["kiwiold", "mangonew", "commonbase"],
    embeddings: false,
};
const CREATE: Writer = Writer {
    files: &[BASE],
    indexed: true,
    edits: &[],
    via: Via::Tool(create_args),
    markers: &["mangonew", "commonbase"],
    embeddings: false,
};
const MOVE: Writer = Writer {
    files: &[BASE, ("notes/from.md", "# 移動\n\nkiwiold の文書。\n")],
    indexed: true,
    edits: &[],
    via: Via::Tool(move_args),
    markers: &["kiwiold", "commonbase"],
    embeddings: false,
};
const DELETE: Writer = Writer {
    files: &[BASE, ("notes/gone.md", "# 削除\n\nkiwiold の文書。\n")],
    indexed: true,
    edits: &[],
    via: Via::Tool(delete_args),
    markers: &["kiwiold", "commonbase"],
    embeddings: false,
};
const CATALOG_FILES: &[(&str, &str)] = &[
    BASE,
    ("docs/index.yaml", INDEX_YAML),
    ("docs/a.md", "# 文書 A\n\nkiwiold の本文。[B](b.md)\n"),
    ("docs/b.md", "# 文書 B\n\n二つ目。\n"),
];
const UPDATE_INDEX: Writer = Writer {
    files: CATALOG_FILES,
    indexed: true,
    edits: &[],
    via: Via::Tool(update_index_args),
    markers: &["kiwiold", "commonbase"],
    embeddings: false,
};
const EXPORT_HTML: Writer = Writer {
    files: CATALOG_FILES,
    indexed: true,
    edits: &[],
    via: Via::Tool(export_html_args),
    markers: &["kiwiold", "commonbase"],
    embeddings: false,
};
const BUILD_SITE: Writer = Writer {
    files: CATALOG_FILES,
    indexed: true,
    edits: &[],
    via: Via::Tool(build_site_args),
    markers: &["kiwiold", "commonbase"],
    embeddings: false,
};
const PDF: Writer = Writer {
    files: &[BASE, ("book.md", "# 本\n\nkiwiold の章。\n\n## 二章\n\n本文。\n")],
    indexed: true,
    edits: &[],
    via: Via::Tool(pdf_args),
    markers: &["kiwiold", "commonbase"],
    embeddings: false,
};
const MOVE_IMAGE: Writer = Writer {
    // The image is written by `image_files`; the Markdown only checks the index.
    files: &[BASE],
    indexed: true,
    edits: &[],
    via: Via::Tool(move_image_args),
    markers: &["commonbase"],
    embeddings: false,
};
const DELETE_IMAGE: Writer = Writer {
    // The image is written by `make`; the Markdown only checks the index.
    files: &[BASE],
    indexed: true,
    edits: &[],
    via: Via::Tool(delete_image_args),
    markers: &["commonbase"],
    embeddings: false,
};
const REINDEX_FULL: Writer = Writer {
    files: MANY,
    indexed: false,
    edits: &[],
    via: Via::Cli(&["reindex", "--json"]),
    markers: &["kiwiold", "commonbase"],
    embeddings: false,
};
const REINDEX_CHANGED: Writer = Writer {
    files: MANY,
    indexed: true,
    edits: &[
        ("r/one.md", Some("# 一\n\nmangonew の一。\n")),
        ("r/three.md", None),
        ("r/six.md", Some("# 六\n\nmangonew の六。\n")),
    ],
    via: Via::Cli(&["reindex", "--json"]),
    markers: &["kiwiold", "mangonew", "commonbase"],
    embeddings: false,
};

const SAVE_IMAGE: Writer = Writer {
    files: &[BASE],
    indexed: true,
    edits: &[],
    via: Via::Child("kills::save_image_child"),
    markers: &["commonbase"],
    embeddings: false,
};

/// The call of the `kb_save_image` rows (does nothing unless run by [`kill_row`]): the engine's
/// `kb_save_image` downloads a GIF from a local HTTPS server into `pics/saved.gif`. Ignored, so
/// a plain test run neither runs nor counts it; [`child`] runs it with `--ignored`.
#[test]
#[ignore = "child-process helper of the kb_save_image kill rows; run only by them"]
fn save_image_child() {
    let Some(root) = std::env::var_os("LVS_KILL_CHILD_ROOT") else { return };
    let server = crate::assets::Server::start();
    let engine = crate::assets::engine(Path::new(&root), true);
    let mut req = crate::assets::save_req(server.url("/ok.gif"));
    req.target_path = Some("pics/saved.gif".to_owned());
    engine.save_image_with(&req, &server.downloader()).unwrap();
    println!("{CHILD_DONE}");
}

#[test]
fn save_image() {
    matrix(&SAVE_IMAGE, &[point("workspace.publish.before-rename", true, true)]);
}

const REINDEX_VECTORS: Writer = Writer {
    files: MANY,
    indexed: false,
    edits: &[],
    via: Via::Cli(&["reindex", "--json"]),
    markers: &["kiwiold", "commonbase"],
    embeddings: true,
};

#[test]
fn reindex_vectors() {
    let save = point("vectors.save.temp-written", true, false);
    matrix(&REINDEX_VECTORS, &[save, point("vectors.persist.file-saved", true, false)]);
}

#[test]
fn patch() {
    matrix(&PATCH, &[BEFORE_TEMP, TEMP_WRITTEN, RENAMED, BEFORE_INDEX, INDEX_COMMIT]);
}

#[test]
fn edit_table() {
    matrix(&EDIT_TABLE, &[TEMP_WRITTEN, RENAMED, BEFORE_INDEX, INDEX_COMMIT]);
}

#[test]
fn create() {
    let temp = point("workspace.create.temp-written", true, true);
    matrix(&CREATE, &[temp, BEFORE_INDEX, INDEX_COMMIT]);
}

#[test]
fn move_document() {
    matrix(&MOVE, &[point("workspace.move.before-rename", true, false), BEFORE_INDEX, INDEX_COMMIT]);
}

#[test]
fn delete() {
    matrix(&DELETE, &[point("workspace.delete.before-remove", true, false), BEFORE_INDEX, INDEX_COMMIT]);
}

#[test]
fn update_index() {
    matrix(&UPDATE_INDEX, &[TEMP_WRITTEN, RENAMED]);
}

#[test]
fn export_html() {
    matrix(&EXPORT_HTML, &[BEFORE_TEMP, TEMP_WRITTEN, RENAMED]);
}

#[test]
fn build_site() {
    matrix(&BUILD_SITE, &[TEMP_WRITTEN, RENAMED]);
}

#[test]
fn pdf_book() {
    matrix(&PDF, &[BEFORE_TEMP, TEMP_WRITTEN, RENAMED]);
}

#[test]
fn move_image() {
    matrix(&MOVE_IMAGE, &[point("workspace.rename-new.before-rename", true, false)]);
}

#[test]
fn delete_image() {
    // Under `MUTATION.lock`, checked and resolved, just before the `unlink`.
    matrix(&DELETE_IMAGE, &[point("workspace.remove.before-remove", true, false)]);
}

#[test]
fn reindex_full() {
    matrix(&REINDEX_FULL, &[point("indexer.reindex.file-done", true, false), INDEX_COMMIT_CLI]);
}

#[test]
fn reindex_changed() {
    matrix(&REINDEX_CHANGED, &[point("indexer.reindex.file-done", true, false), INDEX_COMMIT_CLI]);
}

/// The reindex's own commit: the CLI has not printed its result yet.
const INDEX_COMMIT_CLI: Point = point("indexer.between-store-and-lexical-commit", true, false);

/// Runs every point of `writer` (in parallel threads), panicking with every failure.
fn matrix(writer: &Writer, points: &[Point]) {
    let embed = writer.embeddings.then(|| crate::fake_embed::FakeEmbed::start(EMBED_DIMS));
    let template = Project::empty();
    make(writer, template.root(), embed.as_ref().map(|e| e.endpoint.as_str()));
    let before = user_files(template.root());
    let after = reference(writer, template.root());
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = points
            .iter()
            .map(|p| {
                let (template, before, after) = (template.root(), &before, &after);
                s.spawn(move || kill_row(writer, p, template, before, after))
            })
            .collect();
        handles
            .into_iter()
            .zip(points)
            .filter_map(|(h, p)| h.join().err().map(|e| format!("{}: {}", p.name, panic_text(&e))))
            .collect()
    });
    assert!(failures.is_empty(), "{} row(s) failed:\n{}", failures.len(), failures.join("\n"));
}

fn panic_text(e: &Box<dyn std::any::Any + Send>) -> String {
    e.downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_default()
}

/// Writes the writer's project into `root`, indexes it when asked and makes the external edits.
fn make(writer: &Writer, root: &Path, endpoint: Option<&str>) {
    let p = |rel: &str| root.join(rel);
    for (rel, text) in writer.files {
        std::fs::create_dir_all(p(rel).parent().unwrap()).unwrap();
        std::fs::write(p(rel), text).unwrap();
    }
    std::fs::write(p("lvsm.yaml"), config(endpoint)).unwrap();
    std::fs::create_dir_all(p("images")).unwrap();
    std::fs::write(p("images/a.gif"), crate::images::tiny_gif()).unwrap();
    if writer.indexed {
        let out = cli(root).args(["reindex", "--json"]).output().unwrap();
        assert!(out.status.success(), "the first index failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    for (rel, text) in writer.edits {
        match text {
            Some(t) => std::fs::write(p(rel), t).unwrap(),
            None => std::fs::remove_file(p(rel)).unwrap(),
        }
    }
}

/// The user's files after the call ran to its end, in a copy of the template.
fn reference(writer: &Writer, template: &Path) -> BTreeMap<String, String> {
    let twin = Project::empty();
    copy_tree(template, twin.root());
    match &writer.via {
        Via::Tool(args) => {
            let mut rpc = server(twin.root(), None);
            let call = args(&mut rpc, twin.root());
            let frame = rpc.request("tools/call", call);
            assert_eq!(frame["result"]["isError"], false, "the reference call failed: {frame}");
        }
        Via::Cli(args) => {
            let out = cli(twin.root()).args(*args).output().unwrap();
            assert!(
                out.status.success(),
                "the reference run failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Via::Child(test) => {
            let out = child(test, twin.root(), None).output().unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success() && stdout.contains(CHILD_DONE),
                "the reference run failed: {stdout}"
            );
        }
    }
    user_files(twin.root())
}

/// The test `test` of this binary as a child process on `root`.
fn child(test: &str, root: &Path, failpoints: Option<&str>) -> Command {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([test, "--exact", "--ignored", "--nocapture", "--test-threads", "1"])
        .env("LVS_KILL_CHILD_ROOT", root);
    match failpoints {
        Some(f) => cmd.env("LVS_FAILPOINTS", f),
        None => cmd.env_remove("LVS_FAILPOINTS"),
    };
    cmd
}

/// The CLI on `root` with its configuration.
fn cli(root: &Path) -> Command {
    let mut cmd = bin();
    cmd.arg("--project-root").arg(root).arg("--config").arg(root.join("lvsm.yaml"));
    cmd
}

/// The stdio server on `root`; with `failpoints`, its stderr lines go to the returned receiver.
fn server(root: &Path, failpoints: Option<&str>) -> Rpc {
    server_with_stderr(root, failpoints).0
}

fn server_with_stderr(root: &Path, failpoints: Option<&str>) -> (Rpc, Option<mpsc::Receiver<String>>) {
    let mut cmd = cli(root);
    match failpoints {
        Some(f) => {
            cmd.env("LVS_FAILPOINTS", f).stderr(Stdio::piped());
        }
        None => {
            cmd.stderr(Stdio::null());
        }
    }
    let mut rpc = Rpc::spawn(cmd);
    let lines = rpc.child().stderr.take().map(stderr_lines);
    (rpc, lines)
}

/// Forwards a child's stderr, line by line, to a channel (closed when the child's stderr is).
fn stderr_lines(stderr: std::process::ChildStderr) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Waits until the process prints `failpoint <name> reached`; panics when it ends first.
fn wait_for_point(lines: &mpsc::Receiver<String>, name: &str) {
    let want = format!("failpoint {name} reached");
    let deadline = Instant::now() + PATIENCE;
    let mut seen = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) if line.trim() == want => return,
            Ok(line) => seen.push(line),
            Err(e) => panic!("'{want}' never came ({e:?}); the kill would prove nothing. stderr: {seen:?}"),
        }
    }
}

/// SIGKILL, and proof that the signal (not an exit) ended the process.
fn sigkill(child: &mut Child) {
    child.kill().unwrap(); // SIGKILL on Unix
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(9), "killed by SIGKILL, not exited: {status:?}");
}

/// One row: the kill at `point`, then the checks of the module comment.
fn kill_row(
    writer: &Writer,
    point: &Point,
    template: &Path,
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
) {
    let _slot = Slot::take();
    let project = Project::empty();
    let root = project.root();
    copy_tree(template, root);
    let failpoints = format!("{}=pause", point.name);
    match &writer.via {
        Via::Tool(args) => {
            let (mut rpc, lines) = server_with_stderr(root, Some(&failpoints));
            let call = args(&mut rpc, root);
            let id = rpc.send_request("tools/call", call);
            wait_for_point(lines.as_ref().unwrap(), point.name);
            sigkill(rpc.child());
            let answered = rpc.remaining_frames().into_iter().any(|f| f["id"] == id);
            assert!(!(point.in_call && answered), "the call answered before the kill: it was not in flight");
        }
        Via::Cli(args) => {
            let mut child = cli(root)
                .args(*args)
                .env("LVS_FAILPOINTS", &failpoints)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let lines = stderr_lines(child.stderr.take().unwrap());
            wait_for_point(&lines, point.name);
            sigkill(&mut child);
            let mut out = String::new();
            std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut out).unwrap();
            assert!(out.is_empty(), "the killed run printed its result: {out}");
        }
        Via::Child(test) => {
            let mut process = child(test, root, Some(&failpoints))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let lines = stderr_lines(process.stderr.take().unwrap());
            wait_for_point(&lines, point.name);
            sigkill(&mut process);
            let mut out = String::new();
            std::io::Read::read_to_string(process.stdout.as_mut().unwrap(), &mut out).unwrap();
            assert!(!out.contains(CHILD_DONE), "the call returned before the kill: {out}");
        }
    }

    // 1. Old or new bytes, file by file.
    let now = user_files(root);
    let paths: BTreeSet<&String> = before.keys().chain(after.keys()).chain(now.keys()).collect();
    for path in paths {
        let state = now.get(path);
        assert!(
            state == before.get(path) || state == after.get(path),
            "{path}: neither the old nor the new bytes (now {state:?}, old {:?}, new {:?})",
            before.get(path),
            after.get(path)
        );
    }
    // 3. The kill landed between the temp file and the rename.
    if point.temp_pending {
        assert!(!temp_files(root).is_empty(), "no temp file at the kill: it did not land before the rename");
    }

    // 4. The next start sweeps and repairs by itself (its catch-up reindex, no `kb_reindex`
    // call); 5. it answers, also a write.
    let mut rpc = server(root, None);
    let watchdog = Watchdog::new(rpc.child().id());
    wait_reindexed(&mut rpc);
    assert_eq!(temp_files(root), Vec::<String>::new(), "temp files left after the sweep");
    for marker in writer.markers {
        let found = search_paths(&mut rpc, marker);
        let holding: BTreeSet<String> = user_files(root)
            .keys()
            .filter(|p| p.ends_with(".md"))
            .filter(|p| {
                std::fs::read(root.join(p)).unwrap().windows(marker.len()).any(|w| w == marker.as_bytes())
            })
            .cloned()
            .collect();
        assert_eq!(found, holding, "search for '{marker}' disagrees with the files");
    }
    if writer.embeddings {
        let status = rpc.call("kb_status", json!({}));
        let vectors = &status["vectors"];
        assert_eq!(vectors["vectors"], status["project"]["chunks"], "a chunk without its vector: {status}");
        assert_eq!(vectors["pending"], 0, "{status}");
        assert_eq!(vectors["compatibility"]["isCompatible"], true, "{status}");
    }
    let created = rpc.call(
        "kb_create",
        json!({"request": {"path": "after-kill.md", "markdown": "# 後\n\nafterkill の文書。\n"}}),
    );
    // The call waits at most 500 ms for the index; on a loaded machine the edit may come later.
    if let Err(status) = rpc.synchronized_by(Instant::now() + PATIENCE) {
        panic!("the edit after the kill never reached the index: {created}; {status}");
    }
    assert_eq!(search_paths(&mut rpc, "afterkill"), BTreeSet::from(["after-kill.md".to_owned()]));
    drop(watchdog);
}

/// Rows running at once, over all writers' tests: each row starts two or three processes, and
/// the machine's other tests (some watch the clock) share the cores.
const ROWS_AT_ONCE: usize = 4;

/// A place among the [`ROWS_AT_ONCE`] rows that may run; freed on drop.
struct Slot;

static SLOTS: (std::sync::Mutex<usize>, std::sync::Condvar) =
    (std::sync::Mutex::new(0), std::sync::Condvar::new());

impl Slot {
    fn take() -> Slot {
        let mut running = SLOTS.0.lock().unwrap_or_else(|p| p.into_inner());
        while *running >= ROWS_AT_ONCE {
            running = SLOTS.1.wait(running).unwrap_or_else(|p| p.into_inner());
        }
        *running += 1;
        Slot
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        *SLOTS.0.lock().unwrap_or_else(|p| p.into_inner()) -= 1;
        SLOTS.1.notify_one();
    }
}

/// Polls `kb_status` until no reindex runs and one has finished in this process.
fn wait_reindexed(rpc: &mut Rpc) {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let status = rpc.call("kb_status", json!({}));
        let indexing = &status["indexing"];
        if indexing["isRunning"] == false && !indexing["last"].is_null() {
            return;
        }
        assert!(Instant::now() < deadline, "the reindex did not finish: {status}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The distinct paths a lexical search finds; every hit must be current (not stale).
fn search_paths(rpc: &mut Rpc, query: &str) -> BTreeSet<String> {
    let r = rpc.call("kb_search", json!({"request": {"query": query, "mode": "lexical", "topK": 50}}));
    let hits = r["results"].as_array().unwrap();
    for h in hits {
        // A compact hit says `stale` only when it is true.
        assert!(h.get("stale").is_none(), "'{query}': a stale hit after the repair: {h}");
    }
    hits.iter().map(|h| h["path"].as_str().unwrap().to_owned()).collect()
}

/// The pointer of the first element of `path` whose text contains `needle` (through `kb_read`).
fn pointer_of(rpc: &mut Rpc, path: &str, needle: &str) -> String {
    let r = rpc.call("kb_read", json!({"request": {"path": path}}));
    let el = r["elements"].as_array().unwrap().iter().find(|e| e["text"].as_str().unwrap().contains(needle));
    el.unwrap_or_else(|| panic!("no element with '{needle}' in {r}"))["pointer"].as_str().unwrap().to_owned()
}

/// Every entry below `root` except the index folder, as `ls -a` would show it: `read_dir`
/// returns dotfiles (temp files start with a dot), and nothing goes through a tool that might
/// hide them. Files map to their SHA-256.
fn walk(root: &Path, mut visit: impl FnMut(String, &Path)) {
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let e = e.unwrap();
            let path = e.path();
            let rel = path.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if rel == INDEX_DIR {
                continue;
            }
            if e.file_type().unwrap().is_dir() {
                stack.push(path.clone());
            }
            visit(rel, &path);
        }
    }
}

/// The user's files (everything outside the index folder) and their SHA-256.
fn user_files(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    walk(root, |rel, path| {
        if path.is_file() && !is_temp(&rel) {
            out.insert(rel, sha256_hex(&std::fs::read(path).unwrap()));
        }
    });
    out
}

fn is_temp(rel: &str) -> bool {
    rel.rsplit('/').next().is_some_and(|name| name.starts_with(TEMP_PREFIX))
}

/// The temp files beside the user's files (any folder below the root but the index's).
fn temp_files(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    walk(root, |rel, _| {
        if is_temp(&rel) {
            out.push(rel);
        }
    });
    out
}

/// Kills a server that does not answer within [`PATIENCE`], so that a wedged server (a lock
/// that is never released) fails the test instead of hanging it.
struct Watchdog(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Watchdog {
    fn new(pid: u32) -> Watchdog {
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = std::sync::Arc::clone(&done);
        std::thread::spawn(move || {
            let deadline = Instant::now() + PATIENCE;
            while Instant::now() < deadline {
                if flag.load(std::sync::atomic::Ordering::SeqCst) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            if !flag.load(std::sync::atomic::Ordering::SeqCst) {
                let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            }
        });
        Watchdog(done)
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Starts `reindex --json` on `root` with `failpoints`; its stderr lines come on the receiver.
fn cli_reindex(root: &Path, failpoints: &str) -> (Child, mpsc::Receiver<String>) {
    let mut child = cli(root)
        .args(["reindex", "--json"])
        .env("LVS_FAILPOINTS", failpoints)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = stderr_lines(child.stderr.take().unwrap());
    (child, lines)
}

/// A project of [`MANY`] with its index, then a writer killed while it holds the `LOCK`.
fn killed_holding_the_writer() -> Project {
    let project = Project::empty();
    make(&REINDEX_CHANGED, project.root(), None);
    let (mut holder, lines) = cli_reindex(project.root(), "indexer.reindex.file-done=pause");
    wait_for_point(&lines, "indexer.reindex.file-done");
    sigkill(&mut holder);
    project
}

/// A `LOCK` file left by a killed writer (and one with foreign content) never blocks: the next
/// writer never finds the writer busy, not even for one 50 ms wait — `indexer.writer-busy=abort`
/// would crash it.
#[test]
fn a_stale_lock_from_a_dead_process_does_not_block() {
    let project = killed_holding_the_writer();
    let lock = project.root().join(INDEX_DIR).join("LOCK");
    assert!(lock.is_file(), "the killed writer left its LOCK file");
    for round in ["left by the killed process", "holding a dead process id"] {
        if round != "left by the killed process" {
            std::fs::write(&lock, "4194304\nstale\n").unwrap();
        }
        let (mut child, _lines) = cli_reindex(project.root(), "indexer.writer-busy=abort");
        let status = child.wait().unwrap();
        assert!(status.success(), "{round}: reindex with a stale LOCK ended with {status:?}");
    }
    let mut rpc = server(project.root(), None);
    for (marker, want) in [("mangonew", vec!["r/one.md", "r/six.md"]), ("kiwiold", vec!["r/two.md"])] {
        let want: BTreeSet<String> = want.into_iter().map(str::to_owned).collect();
        assert_eq!(search_paths(&mut rpc, marker), want, "{marker}");
    }
}

/// Two kills in a row: a reindex killed between its store and lexical commits, then the next
/// writer killed while it repairs that (before the repair's commit); the third run repairs both.
#[test]
fn a_kill_during_the_repair_of_a_kill() {
    let project = Project::empty();
    let root = project.root();
    make(&REINDEX_CHANGED, root, None);
    for point in ["indexer.between-store-and-lexical-commit", "indexer.repair.before-commit"] {
        let (mut child, lines) = cli_reindex(root, &format!("{point}=pause"));
        wait_for_point(&lines, point);
        sigkill(&mut child);
    }
    let out = cli(root).args(["reindex", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut rpc = server(root, None);
    for (marker, want) in [("mangonew", vec!["r/one.md", "r/six.md"]), ("kiwiold", vec!["r/two.md"])] {
        let want: BTreeSet<String> = want.into_iter().map(str::to_owned).collect();
        assert_eq!(search_paths(&mut rpc, marker), want, "{marker}");
    }
    let status = rpc.call("kb_status", json!({}));
    assert_eq!(status["project"]["documents"], 6, "{status}");
}

/// Process B waits for the writer that process A holds; A is killed; B takes the writer and
/// finishes, and the index agrees with the files.
#[test]
fn a_kill_while_another_process_waits_for_the_writer() {
    let project = Project::empty();
    make(&REINDEX_CHANGED, project.root(), None);
    let (mut holder, lines) = cli_reindex(project.root(), "indexer.reindex.file-done=pause");
    wait_for_point(&lines, "indexer.reindex.file-done");
    // `sleep(0)`: B only reports each wait, so we know it is waiting for A's lock.
    let (waiter, waiter_lines) = cli_reindex(project.root(), "indexer.writer-busy=sleep(0)");
    wait_for_point(&waiter_lines, "indexer.writer-busy");
    sigkill(&mut holder);
    let out = waiter.wait_with_output().unwrap();
    assert!(out.status.success(), "the waiting reindex failed: {out:?}");
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["scannedFiles"], 6, "{result}");
    let mut rpc = server(project.root(), None);
    for (marker, want) in [("mangonew", vec!["r/one.md", "r/six.md"]), ("kiwiold", vec!["r/two.md"])] {
        let want: BTreeSet<String> = want.into_iter().map(str::to_owned).collect();
        assert_eq!(search_paths(&mut rpc, marker), want, "{marker}");
    }
}

/// Two servers on one project: A holds `MUTATION.lock` in the middle of a patch (its temp file
/// written, not yet renamed), B's patch of another paragraph of the same file waits for that
/// lock (B reports the wait: `workspace.lock.wait`). A is killed; B takes the lock, its hash
/// check sees the old bytes (A never renamed) and its patch lands on them: the file is the old
/// bytes plus B's edit, never A's half. A's temp file goes with the next sweep.
#[test]
fn a_kill_while_another_server_waits_for_the_mutation_lock() {
    let project = Project::empty();
    let root = project.root();
    make(&PATCH, root, None);
    let old = std::fs::read_to_string(root.join("notes/patch.md")).unwrap();
    let (mut holder, holder_lines) = server_with_stderr(root, Some("workspace.write.temp-written=pause"));
    let (mut waiter, waiter_lines) = server_with_stderr(root, Some("workspace.lock.wait=sleep(0)"));
    let other = pointer_of(&mut waiter, "notes/patch.md", "別の段落");
    let call = patch_args(&mut holder, root);
    holder.send_request("tools/call", call);
    wait_for_point(holder_lines.as_ref().unwrap(), "workspace.write.temp-written");
    assert_eq!(temp_files(root).len(), 1, "A holds the lock with its temp file written");
    let id = waiter.send_request(
        "tools/call",
        json!({"name": "kb_patch", "arguments": {"request": {"path": "notes/patch.md", "operations": [
            {"kind": "replace_element", "pointer": other, "markdown": "plumwaiter の段落。"}]}}}),
    );
    wait_for_point(waiter_lines.as_ref().unwrap(), "workspace.lock.wait");
    sigkill(holder.child());
    let watchdog = Watchdog::new(waiter.child().id());
    let frame = waiter.frames_until(|f| f["id"] == id).pop().unwrap();
    assert_eq!(frame["result"]["isError"], false, "the waiting patch failed after the kill: {frame}");
    let now = std::fs::read_to_string(root.join("notes/patch.md")).unwrap();
    assert_eq!(now, old.replace("別の段落。", "plumwaiter の段落。"), "old bytes plus B's edit only");
    let started = waiter.call("kb_reindex", json!({"request": {}}));
    assert!(started.is_object());
    wait_reindexed(&mut waiter);
    assert_eq!(temp_files(root), Vec::<String>::new(), "A's temp file was swept");
    for (marker, want) in [("plumwaiter", vec!["notes/patch.md"]), ("kiwiold", vec!["notes/patch.md"])] {
        let want: BTreeSet<String> = want.into_iter().map(str::to_owned).collect();
        assert_eq!(search_paths(&mut waiter, marker), want, "{marker}");
    }
    assert_eq!(search_paths(&mut waiter, "mangonew"), BTreeSet::new(), "A's edit never landed");
    drop(watchdog);
}

/// The stdio server on `root` whose wait for another process's writer runs out after `ms`
/// (`LVS_WRITER_WAIT_MS`, test builds only; 60 s otherwise).
fn server_with_writer_wait(root: &Path, ms: u64) -> Rpc {
    let mut cmd = cli(root);
    cmd.env("LVS_WRITER_WAIT_MS", ms.to_string()).env_remove("LVS_FAILPOINTS").stderr(Stdio::null());
    Rpc::spawn(cmd)
}

/// An edit made while another process holds the writer for longer than the wait is not left
/// pending until the next edit: once the writer is free, it is indexed without another call.
/// Process A (a reindex paused while it holds the writer) outlasts B's 300 ms wait; B's
/// `kb_status` shows the edit pending with the busy writer as the reason; A is killed; B indexes
/// the edit by itself.
#[test]
fn an_edit_that_outwaits_another_process_writer_is_retried_when_the_writer_frees_up() {
    let project = Project::empty();
    let root = project.root();
    make(&REINDEX_CHANGED, root, None);
    let (mut holder, lines) = cli_reindex(root, "indexer.reindex.file-done=pause");
    wait_for_point(&lines, "indexer.reindex.file-done");
    let mut rpc = server_with_writer_wait(root, 300);
    let watchdog = Watchdog::new(rpc.child().id());
    rpc.call(
        "kb_create",
        json!({"request": {"path": "late.md", "markdown": "# 遅\n\nlatecomer の文書。\n"}}),
    );
    let deadline = Instant::now() + PATIENCE;
    loop {
        let sync = rpc.call("kb_status", json!({}))["synchronization"].clone();
        let pending = sync["paths"].as_array().unwrap().iter().any(|p| p == "late.md");
        if pending && sync["lastError"].is_string() {
            break; // the wait ran out at least once, with the busy writer as the reason
        }
        assert!(Instant::now() < deadline, "the edit never reported the busy writer: {sync}");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(700)); // more than two waits: still pending, not dropped
    let sync = rpc.call("kb_status", json!({}))["synchronization"].clone();
    assert!(sync["paths"].as_array().unwrap().iter().any(|p| p == "late.md"), "{sync}");
    sigkill(&mut holder);
    // No further edit, no kb_reindex: only kb_status polls.
    let sync = match rpc.synchronized_by(deadline) {
        Ok(status) => status["synchronization"].clone(),
        Err(status) => panic!("the pending edit was not retried after the writer freed up: {status}"),
    };
    assert!(sync["lastError"].is_null(), "{sync}");
    assert_eq!(search_paths(&mut rpc, "latecomer"), BTreeSet::from(["late.md".to_owned()]));
    drop(watchdog);
}

/// Two reindexes from two processes: B's `kb_reindex` while A's CLI reindex runs waits for A's
/// writer and meanwhile shows A's run in `kb_status` (A's files processed, A's current path, read
/// from A's progress file); it keeps waiting past its own wait (1.5 s here, A takes longer) as
/// long as A moves on, then finishes as a short catch-up. The progress file is gone afterwards.
#[test]
fn a_reindex_in_a_second_process_shows_the_running_one_and_finishes_after_it() {
    let project = Project::empty();
    let root = project.root();
    make(&REINDEX_FULL, root, None);
    // A: every file held 600 ms, 6 files: about 3.6 s in all.
    let (mut a, a_lines) = cli_reindex(root, "indexer.reindex.file-done=sleep(600)");
    wait_for_point(&a_lines, "indexer.reindex.file-done");
    let mut rpc = server_with_writer_wait(root, 1500);
    let watchdog = Watchdog::new(rpc.child().id());
    let started = rpc.call("kb_reindex", json!({"request": {}}));
    assert!(started.is_object(), "{started}");
    let deadline = Instant::now() + PATIENCE;
    let mut seen_other = None;
    loop {
        let indexing = rpc.call("kb_status", json!({}))["indexing"].clone();
        let a_running = a.try_wait().unwrap().is_none();
        if a_running
            && indexing["isRunning"] == true
            && indexing["current"]["processedFiles"].as_u64() > Some(0)
        {
            seen_other = Some(indexing["current"].clone());
        }
        if indexing["isRunning"] == false && !indexing["last"].is_null() && !a_running {
            assert_eq!(indexing["last"]["outcome"], "succeeded", "B's reindex: {indexing}");
            break;
        }
        assert!(Instant::now() < deadline, "B's reindex did not end: {indexing}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let seen = seen_other.expect("B's kb_status never showed A's run while B waited");
    assert_eq!(seen["totalFiles"], 6, "{seen}");
    let out = a.wait_with_output().unwrap();
    assert!(out.status.success(), "A failed: {out:?}");
    assert!(!root.join(INDEX_DIR).join("reindex-progress.json").exists(), "the progress file stays");
    let want: BTreeSet<String> = ["r/one.md", "r/three.md", "r/two.md"].map(str::to_owned).into();
    assert_eq!(search_paths(&mut rpc, "kiwiold"), want);
    drop(watchdog);
}
