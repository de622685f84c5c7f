//! Unit tests of the workspace: the path guard against the contract vectors, real links in temp
//! directories, exact source loading, globs, listings and atomic writes.

use std::fs;
use std::path::Path;

use proptest::prelude::*;
use serde_json::Value;

use super::*;
use crate::error::ErrorCode;

/// The path contract vectors (`tests/vectors/paths.json`).
fn vectors() -> Value {
    crate::testdata::vectors("paths.json")
}

/// A fresh root with the default internal directory name.
fn fixture() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().expect("temp dir");
    let ws = Workspace::new(dir.path().to_path_buf(), DEFAULT_INTERNAL_DIR).expect("workspace");
    (dir, ws)
}

/// Writes `bytes` at `rel` below `root`, creating parents.
fn put(root: &Path, rel: &str, bytes: &[u8]) {
    let path = root.join(rel);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).expect("parent dirs");
    }
    fs::write(path, bytes).expect("write fixture");
}

fn context(name: &str) -> PathContext {
    match name {
        "any" => PathContext::Any,
        "markdown" => PathContext::Markdown,
        "image" => PathContext::Image,
        other => panic!("unknown context {other}"),
    }
}

#[track_caller]
fn assert_err<T: std::fmt::Debug>(result: Result<T>, code: ErrorCode, prefix: &str) -> Error {
    let err = result.expect_err("expected an error");
    assert_eq!(err.code, code, "code of {:?}", err.message);
    assert!(err.message.starts_with(prefix), "message {:?} should start with {prefix:?}", err.message);
    err
}

fn rel(ws: &Workspace, input: &str) -> RelPath {
    ws.rel_path(input, PathContext::Any).expect("valid path")
}

fn names(paths: impl IntoIterator<Item = RelPath>) -> Vec<String> {
    paths.into_iter().map(|p| p.as_str().to_owned()).collect()
}

// ---------------------------------------------------------------------------------------------
// Path guard

#[test]
fn contract_vectors_accepted_paths_are_accepted_and_normalised() {
    let (_dir, ws) = fixture();
    let v = vectors();
    let cases = v["accepted"].as_array().expect("accepted[]");
    assert!(cases.len() >= 15);
    for case in cases {
        let input = case["path"].as_str().expect("path");
        let ctx = context(case["context"].as_str().expect("context"));
        let path = ws.rel_path(input, ctx).unwrap_or_else(|e| panic!("{input:?} refused: {}", e.message));
        let expected = case["normalized"].as_str().unwrap_or(input);
        assert_eq!(path.as_str(), expected, "{input:?}");
    }
}

#[test]
fn contract_vectors_rejected_paths_have_code_and_message() {
    let (_dir, ws) = fixture();
    let v = vectors();
    let cases = v["rejected"].as_array().expect("rejected[]");
    assert!(cases.len() >= 35);
    for case in cases {
        let input = case["path"].as_str().expect("path");
        let ctx = context(case["context"].as_str().expect("context"));
        let err = ws.rel_path(input, ctx).expect_err(input);
        // Cases without a code are the image-domain refusals; docs/reference/product.md §7 makes
        // them INVALID_PATH.
        assert_eq!(err.code.as_str(), case["code"].as_str().unwrap_or("INVALID_PATH"), "{input:?}");
        if let Some(message) = case["message"].as_str() {
            assert!(
                err.message.starts_with(message),
                "{input:?}: {:?} should start with {message:?}",
                err.message
            );
            assert!(err.message.len() > message.len(), "{input:?}: no fix-it clause in {:?}", err.message);
        }
    }
}

#[test]
fn contract_messages_are_the_guard_sentences() {
    let v = vectors();
    let m = &v["messages"];
    assert_eq!(m["relative"], path::MSG_RELATIVE);
    assert_eq!(m["component"], path::MSG_COMPONENT);
    assert_eq!(m["outsideRoot"], path::MSG_OUTSIDE);
    assert_eq!(m["reparsePoint"], path::MSG_REPARSE);
    assert_eq!(m["markdownOnly"], path::MSG_MARKDOWN_ONLY);
    assert_eq!(m["imageGit"], path::MSG_IMAGE_GIT);
    assert_eq!(m["imageIndex"], path::MSG_IMAGE_INDEX);
}

#[test]
fn drive_letters_and_unc_need_a_relative_path_but_colons_are_components() {
    let (_dir, ws) = fixture();
    for input in ["C:", "c:/kb/a.md", "C:\\x", "\\\\server\\share\\a.md", "//server/share/a.md", "/"] {
        assert_err(ws.rel_path(input, PathContext::Any), ErrorCode::InvalidPath, path::MSG_RELATIVE);
    }
    for input in ["a:b.md", "C:x.md", "docs/C:"] {
        assert_err(ws.rel_path(input, PathContext::Any), ErrorCode::InvalidPath, path::MSG_COMPONENT);
    }
}

/// 8.3 short names (NTFS aliases of long names) are refused on every platform, in any case and
/// at any depth; names that only look similar are not.
#[test]
fn windows_short_names_are_refused_and_look_alikes_are_not() {
    for name in ["PROGRA~1", "DOCUME~1.MD", "docume~1.md", "LOCAL-~1", "GIT~1", "AB12C~1", "A~123456.TXT"] {
        assert!(path::is_short_name(name), "{name} is a short name");
    }
    for name in [
        "a~b.md",
        "~1.md",
        "notes~.md",
        "ガイド~1.md",
        "LONGNAME~1.md",
        "A~1234567",
        "A~1.MDXX",
        "A~~1",
        "a.~1",
    ] {
        assert!(!path::is_short_name(name), "{name} is not a short name");
    }
    for input in ["PROGRA~1/a.md", "docs/DOCUME~1.MD", "LOCAL-~1/meta.redb", "GIT~1/config"] {
        let err = path::parse(input, PathContext::Any, Some(".local-vector-search-mcp")).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidPath, "{input}");
        assert!(err.message.contains("8.3 short name"), "{input}: {}", err.message);
        assert!(!err.message.contains('\n'), "one line: {}", err.message);
    }
    for input in ["docs/a~b.md", "docs/v1~draft.md", "ガイド~1.md"] {
        assert!(path::parse(input, PathContext::Any, None).is_ok(), "{input}");
    }
}

#[test]
fn trailing_slash_device_names_with_spaces_and_long_paths_are_refused() {
    let (_dir, ws) = fixture();
    for input in ["docs/", "docs/ ", "CON .md", "nul", "LPT9.tar.gz", "a/COM3/b.md"] {
        assert_err(ws.rel_path(input, PathContext::Any), ErrorCode::InvalidPath, path::MSG_COMPONENT);
    }
    let long = "a/".repeat(3000) + "b.md";
    let err = assert_err(ws.rel_path(&long, PathContext::Any), ErrorCode::InvalidPath, path::MSG_COMPONENT);
    assert!(err.message.len() < 200, "the input is not echoed: {}", err.message.len());
}

#[test]
fn absolute_paths_never_appear_in_messages() {
    let (dir, ws) = fixture();
    let root = dir.path().to_string_lossy().into_owned();
    let inputs = [format!("{root}/a.md"), format!("{root}\\a.md"), root.clone()];
    for input in &inputs {
        let err = ws.rel_path(input, PathContext::Markdown).expect_err("rooted");
        assert!(!err.message.contains(&root), "{}", err.message);
    }
    let missing = ws.read_markdown(&rel(&ws, "docs/missing.md")).expect_err("missing");
    assert!(!missing.message.contains(&root), "{}", missing.message);
}

#[test]
fn git_and_internal_directories_are_refused_at_any_depth_in_any_case() {
    let (_dir, ws) = fixture();
    for input in [
        ".git",
        ".GIT/config",
        "docs/.Git/HEAD",
        ".local-vector-search-mcp",
        "a/.Local-Vector-Search-MCP/meta.redb",
    ] {
        assert_err(ws.rel_path(input, PathContext::Any), ErrorCode::InvalidPath, path::MSG_COMPONENT);
    }
    assert_err(ws.rel_path(".GIT/x.png", PathContext::Image), ErrorCode::InvalidPath, path::MSG_IMAGE_GIT);
    // Lookalikes are ordinary names.
    for input in [".github/workflows/ci.yml", ".gitignore", "git/a.md", ".local-vector-search-mcp2/a.md"] {
        rel(&ws, input);
    }
}

#[test]
fn a_custom_internal_directory_is_refused_and_skipped() {
    let dir = tempfile::tempdir().expect("temp dir");
    let ws = Workspace::new(dir.path().to_path_buf(), "_index").expect("workspace");
    assert_eq!(ws.internal_dir_name(), "_index");
    assert_err(
        ws.rel_path("_INDEX/x.png", PathContext::Image),
        ErrorCode::InvalidPath,
        path::MSG_IMAGE_INDEX,
    );
    rel(&ws, ".local-vector-search-mcp/a.md");
    put(dir.path(), "_index/a.md", b"x");
    put(dir.path(), "b.md", b"x");
    let found = ws.scan_markdown(&GlobFilter::new(&[], &[]).expect("default")).expect("scan");
    assert_eq!(names(found.into_iter().map(|e| e.path)), ["b.md"]);
    // A `RelPath` built without the workspace still cannot reach the internal directory.
    let sneaky = RelPath::new("_index/a.md").expect("lexically fine");
    assert_err(ws.read_markdown(&sneaky), ErrorCode::InvalidPath, path::MSG_COMPONENT);
    assert_err(ws.write_atomic(&sneaky, b"y", None, false), ErrorCode::InvalidPath, path::MSG_COMPONENT);
    assert_eq!(fs::read(dir.path().join("_index/a.md")).expect("unchanged"), b"x");
}

#[test]
fn bad_workspace_roots_and_internal_names_are_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    assert_err(
        Workspace::new(dir.path().join("nope"), DEFAULT_INTERNAL_DIR),
        ErrorCode::NotFound,
        "The knowledge-base root",
    );
    put(dir.path(), "file", b"");
    assert_err(
        Workspace::new(dir.path().join("file"), DEFAULT_INTERNAL_DIR),
        ErrorCode::InvalidArgument,
        "The knowledge-base root",
    );
    for name in ["", "a/b", "..", "x:"] {
        assert_err(
            Workspace::new(dir.path().to_path_buf(), name),
            ErrorCode::InvalidArgument,
            "The internal index directory",
        );
    }
}

#[test]
fn markdown_contexts_require_md_case_insensitively() {
    let (_dir, ws) = fixture();
    for ctx in [PathContext::Markdown, PathContext::MarkdownWrite] {
        assert!(ws.rel_path("Docs/READ.MD", ctx).is_ok());
        let err = assert_err(ws.rel_path("notes.txt", ctx), ErrorCode::InvalidPath, path::MSG_MARKDOWN_ONLY);
        assert!(err.message.contains("notes.txt"));
        assert_err(ws.rel_path("a.md.bak", ctx), ErrorCode::InvalidPath, path::MSG_MARKDOWN_ONLY);
    }
    assert!(ws.rel_path("notes.txt", PathContext::Any).is_ok());
}

#[test]
fn rel_path_accessors() {
    let p = RelPath::new("docs\\guide\\Intro.MD").expect("valid");
    assert_eq!(p.as_str(), "docs/guide/Intro.MD");
    assert_eq!(p.to_string(), "docs/guide/Intro.MD");
    assert_eq!(p.file_name(), "Intro.MD");
    assert!(p.is_markdown());
    assert_eq!(p.components().collect::<Vec<_>>(), ["docs", "guide", "Intro.MD"]);
    let parent = p.parent().expect("parent");
    assert_eq!(parent.as_str(), "docs/guide");
    assert_eq!(parent.parent().and_then(|p| p.parent()), None);
    assert!(!parent.is_markdown());
    assert_eq!(parent.join("x/y.png").expect("join").as_str(), "docs/guide/x/y.png");
    assert_err(parent.join("../y.png"), ErrorCode::InvalidPath, path::MSG_COMPONENT);
    assert!(RelPath::new("a.md").expect("a") < RelPath::new("b.md").expect("b"));
}

#[test]
fn listing_order_is_ignore_case_then_ordinal() {
    let mut v = vec!["b.md", "a.md", "A.md", "C/x.md", "_.md", "ä.md", "Ä.md"];
    v.sort_by(|a, b| compare_paths(a, b));
    assert_eq!(v, ["A.md", "a.md", "b.md", "C/x.md", "_.md", "Ä.md", "ä.md"]);
}

// ---------------------------------------------------------------------------------------------
// Links (real symlinks in a temp dir)

#[cfg(unix)]
mod links {
    use std::os::unix::fs::symlink;

    use super::*;

    #[test]
    fn links_inside_outside_and_dangling_are_all_refused() {
        let (dir, ws) = fixture();
        let outside = tempfile::tempdir().expect("outside dir");
        put(outside.path(), "secret.md", b"secret");
        put(dir.path(), "real.md", b"# Real\n");
        symlink(dir.path().join("real.md"), dir.path().join("inside.md")).expect("link");
        symlink(outside.path(), dir.path().join("out")).expect("link");
        symlink(dir.path().join("gone.md"), dir.path().join("dangling.md")).expect("link");
        fs::create_dir(dir.path().join("docs")).expect("dir");
        symlink(dir.path().join("docs"), dir.path().join("docs-link")).expect("link");
        for input in ["inside.md", "out/secret.md", "out", "out/new.md", "dangling.md", "docs-link/a.md"] {
            let err =
                assert_err(ws.rel_path(input, PathContext::Any), ErrorCode::InvalidPath, path::MSG_REPARSE);
            assert!(!err.message.contains(&*outside.path().to_string_lossy()), "{}", err.message);
            assert!(!err.message.contains(&*dir.path().to_string_lossy()), "{}", err.message);
            let sneaky = RelPath::new(input).expect("lexically fine");
            assert_err(ws.read_markdown(&sneaky), ErrorCode::InvalidPath, "");
            assert_err(ws.stat(&sneaky), ErrorCode::InvalidPath, path::MSG_REPARSE);
            assert_err(ws.write_atomic(&sneaky, b"x", None, true), ErrorCode::InvalidPath, "");
        }
        assert_eq!(fs::read(outside.path().join("secret.md")).expect("secret"), b"secret");
        assert!(!outside.path().join("new.md").exists());
        assert!(!dir.path().join("gone.md").exists(), "a dangling link is not written through");
    }

    #[test]
    fn a_link_swapped_in_after_validation_is_refused_at_io_time() {
        let (dir, ws) = fixture();
        let outside = tempfile::tempdir().expect("outside dir");
        put(outside.path(), "a.md", b"outside");
        put(dir.path(), "docs/a.md", b"inside");
        let path = ws.rel_path("docs/a.md", PathContext::Markdown).expect("valid now");
        fs::remove_dir_all(dir.path().join("docs")).expect("rm");
        symlink(outside.path(), dir.path().join("docs")).expect("link");
        assert_err(ws.read_markdown(&path), ErrorCode::InvalidPath, path::MSG_REPARSE);
        assert_err(ws.write_atomic(&path, b"new", None, false), ErrorCode::InvalidPath, path::MSG_REPARSE);
        assert_eq!(fs::read(outside.path().join("a.md")).expect("outside"), b"outside");
    }

    #[test]
    fn listings_skip_links_without_following_them() {
        let (dir, ws) = fixture();
        let outside = tempfile::tempdir().expect("outside dir");
        put(outside.path(), "x.md", b"x");
        put(dir.path(), "a.md", b"a");
        symlink(outside.path(), dir.path().join("linked")).expect("link");
        symlink(dir.path().join("a.md"), dir.path().join("alias.md")).expect("link");
        symlink(dir.path(), dir.path().join("loop")).expect("link");
        let filter = GlobFilter::new(&[], &[]).expect("default");
        assert_eq!(names(ws.scan_markdown(&filter).expect("scan").into_iter().map(|e| e.path)), ["a.md"]);
        assert_eq!(names(ws.list_files(None, None).expect("list").into_iter().map(|f| f.path)), ["a.md"]);
    }

    #[test]
    fn a_linked_root_is_canonicalised_once() {
        let real = tempfile::tempdir().expect("real");
        let holder = tempfile::tempdir().expect("holder");
        put(real.path(), "a.md", b"# A\n");
        let link = holder.path().join("kb");
        symlink(real.path(), &link).expect("link");
        let ws = Workspace::new(link, DEFAULT_INTERNAL_DIR).expect("workspace");
        assert_eq!(ws.root(), fs::canonicalize(real.path()).expect("canonical"));
        assert_eq!(ws.read_markdown(&rel(&ws, "a.md")).expect("read").text, "# A\n");
    }
}

// ---------------------------------------------------------------------------------------------
// Source loading

#[test]
fn source_hash_matches_the_contract_example() {
    let (dir, ws) = fixture();
    put(dir.path(), "a.md", b"# Title\n\nBody.\n");
    let doc = ws.read_markdown(&rel(&ws, "a.md")).expect("read");
    assert_eq!(doc.source_hash, "22e4e5179a8a13b1b016a3bc9ab6e1c6e1c2eb9fc0215785ba75323fb5b4addc");
    assert_eq!(doc.text, "# Title\n\nBody.\n");
    assert!(!doc.has_bom);
    assert_eq!(doc.len, 15);
    assert_eq!(doc.path.as_str(), "a.md");
}

#[test]
fn bom_is_recorded_stripped_from_text_and_hashed() {
    let (dir, ws) = fixture();
    let bytes = b"\xEF\xBB\xBF# Title\n\nBody.\n";
    put(dir.path(), "bom.md", bytes);
    let doc = ws.read_markdown(&rel(&ws, "bom.md")).expect("read");
    assert!(doc.has_bom);
    assert_eq!(doc.text, "# Title\n\nBody.\n");
    assert_eq!(doc.source_hash, crate::text::sha256_hex(bytes));
    assert_ne!(doc.source_hash, "22e4e5179a8a13b1b016a3bc9ab6e1c6e1c2eb9fc0215785ba75323fb5b4addc");
    assert_eq!(doc.len, 18);
}

#[test]
fn line_endings_and_whitespace_are_kept_exactly() {
    let (dir, ws) = fixture();
    let text = "# 見出し\r\n\r\nline one  \nline two\r\n\ttab\rold-mac\n";
    put(dir.path(), "docs/mixed.MD", text.as_bytes());
    let doc = ws.read_markdown(&rel(&ws, "docs/mixed.MD")).expect("read");
    assert_eq!(doc.text, text);
    assert_eq!(doc.source_hash, crate::text::sha256_hex(text.as_bytes()));
}

#[test]
fn missing_documents_are_not_found_with_the_contract_message() {
    let (dir, ws) = fixture();
    let err = assert_err(ws.read_markdown(&rel(&ws, "docs/none.md")), ErrorCode::NotFound, "");
    assert_eq!(err.message, "Document 'docs/none.md' was not found.");
    put(dir.path(), "file.md", b"x");
    // A file where a directory is expected means the document cannot exist.
    assert_err(ws.read_markdown(&rel(&ws, "file.md/a.md")), ErrorCode::NotFound, "Document 'file.md/a.md'");
    assert_err(ws.stat(&rel(&ws, "docs/none.md")), ErrorCode::NotFound, "Document 'docs/none.md'");
}

#[test]
fn binary_and_non_utf8_sources_are_unsupported_with_an_offset() {
    let (dir, ws) = fixture();
    put(dir.path(), "latin1.md", b"# Caf\xE9\n");
    let err = assert_err(
        ws.read_markdown(&rel(&ws, "latin1.md")),
        ErrorCode::UnsupportedFormat,
        "'latin1.md' is not UTF-8 text",
    );
    assert!(err.message.contains("offset 5"), "{}", err.message);
    put(dir.path(), "bom-latin1.md", b"\xEF\xBB\xBF\xFF");
    let err = assert_err(ws.read_markdown(&rel(&ws, "bom-latin1.md")), ErrorCode::UnsupportedFormat, "");
    assert!(err.message.contains("offset 3"), "offsets count file bytes: {}", err.message);
    put(dir.path(), "binary.md", b"ab\0cd");
    let err = assert_err(
        ws.read_markdown(&rel(&ws, "binary.md")),
        ErrorCode::UnsupportedFormat,
        "'binary.md' contains a NUL byte",
    );
    assert!(err.message.contains("offset 2"), "{}", err.message);
}

#[test]
fn oversized_sources_are_unsupported_and_name_the_limit() {
    let (dir, ws) = fixture();
    let file = fs::File::create(dir.path().join("big.md")).expect("create");
    file.set_len(MAX_MARKDOWN_BYTES + 1).expect("sparse file");
    let err = assert_err(
        ws.read_markdown(&rel(&ws, "big.md")),
        ErrorCode::UnsupportedFormat,
        "'big.md' is 33554433 bytes",
    );
    assert!(err.message.contains("33554432") && err.message.contains("exclude glob"), "{}", err.message);
    assert_eq!(ws.stat(&rel(&ws, "big.md")).expect("stat").0, MAX_MARKDOWN_BYTES + 1);
}

#[test]
fn directories_and_non_markdown_paths_are_not_read_as_markdown() {
    let (dir, ws) = fixture();
    fs::create_dir(dir.path().join("dir.md")).expect("dir");
    assert_err(
        ws.read_markdown(&rel(&ws, "dir.md")),
        ErrorCode::UnsupportedFormat,
        "'dir.md' is a directory",
    );
    assert_err(ws.stat(&rel(&ws, "dir.md")), ErrorCode::UnsupportedFormat, "'dir.md' is a directory");
    put(dir.path(), "notes.txt", b"x");
    assert_err(ws.read_markdown(&rel(&ws, "notes.txt")), ErrorCode::InvalidPath, path::MSG_MARKDOWN_ONLY);
}

#[test]
fn stat_reports_size_and_modification_time() {
    let (dir, ws) = fixture();
    put(dir.path(), "a.md", b"12345");
    let (len, modified) = ws.stat(&rel(&ws, "a.md")).expect("stat");
    assert_eq!(len, 5);
    assert_eq!(modified, fs::metadata(dir.path().join("a.md")).and_then(|m| m.modified()).expect("mtime"));
    let doc = ws.read_markdown(&rel(&ws, "a.md")).expect("read");
    assert_eq!((doc.len, doc.modified), (len, modified));
}

// ---------------------------------------------------------------------------------------------
// Globs

fn filter(includes: &[&str], excludes: &[&str]) -> GlobFilter {
    let own = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    GlobFilter::new(&own(includes), &own(excludes)).expect("valid globs")
}

#[test]
fn contract_glob_vectors() {
    let v = vectors();
    let globs = &v["globs"];
    for g in globs["valid"].as_array().expect("valid[]") {
        let g = g.as_str().expect("glob").to_owned();
        assert!(GlobFilter::new(std::slice::from_ref(&g), &[]).is_ok(), "{g:?}");
        assert!(GlobFilter::new(&[], std::slice::from_ref(&g)).is_ok(), "{g:?}");
    }
    let search = globs["messages"]["kb_search"].as_str().expect("kb_search message");
    let list = globs["messages"]["kb_list_files"].as_str().expect("kb_list_files message");
    assert_eq!(list, "includeGlob is invalid.");
    for case in globs["invalid"].as_array().expect("invalid[]") {
        let g = case["glob"].as_str().expect("glob").to_owned();
        assert_err(GlobFilter::new(std::slice::from_ref(&g), &[]), ErrorCode::InvalidArgument, search);
        assert_err(GlobFilter::new(&[], std::slice::from_ref(&g)), ErrorCode::InvalidArgument, search);
        let named = GlobFilter::with_names(std::slice::from_ref(&g), &[], "includeGlob", "excludeGlob");
        assert_err(named, ErrorCode::InvalidArgument, list);
        let named = GlobFilter::with_names(&[], std::slice::from_ref(&g), "includeGlobs", "excludeGlobs");
        assert_err(named, ErrorCode::InvalidArgument, "excludeGlobs is invalid.");
    }
    assert_eq!(globs["code"], "INVALID_ARGUMENT");
}

#[test]
fn malformed_glob_syntax_is_invalid_argument() {
    for g in ["docs/[a", "{a,b"] {
        assert_err(
            GlobFilter::new(&[g.to_owned()], &[]),
            ErrorCode::InvalidArgument,
            "One or more glob patterns are invalid.",
        );
    }
}

#[test]
fn star_stays_in_one_segment_and_double_star_spans_them() {
    let top = filter(&["*.md"], &[]);
    assert!(top.matches("a.md"));
    assert!(!top.matches("docs/a.md"), "*.md is top-level only");
    let any = filter(&["**/*.md"], &[]);
    assert!(any.matches("a.md") && any.matches("docs/deep/a.md"));
    let docs = filter(&["docs/**"], &[]);
    assert!(docs.matches("docs/a.md") && docs.matches("docs/x/y.png"));
    assert!(!docs.matches("docs2/a.md") && !docs.matches("a.md"));
    let one = filter(&["docs/?.md"], &[]);
    assert!(one.matches("docs/a.md") && !one.matches("docs/ab.md"));
}

#[test]
fn globs_are_case_insensitive_and_excludes_win() {
    let f = filter(&["Chapters/**"], &["**/DRAFT*"]);
    assert!(f.matches("chapters/one.md"));
    let two = RelPath::new("CHAPTERS/Two.MD").expect("path");
    assert!(f.matches(&two) && two.is_markdown());
    assert!(!f.matches("chapters/draft-3.md"));
    assert!(!f.matches("other/one.md"));
    let png = filter(&["**/*.png"], &[]);
    assert!(png.matches("images/A.PNG") && !png.matches("a.md"));
}

#[test]
fn default_include_is_every_markdown_file() {
    let f = filter(&[], &["drafts/**"]);
    assert!(f.matches("a.md") && f.matches("x/y/Z.MD"));
    assert!(!f.matches("a.txt"));
    assert!(!f.matches("drafts/a.md"));
}

#[test]
fn backslashes_leading_dot_slash_and_trailing_slash_are_normalised() {
    let f = filter(&["docs\\**"], &["./docs/old/"]);
    assert!(f.matches("docs/a.md") && f.matches("docs\\b.md"));
    assert!(!f.matches("docs/old/x.md"));
}

// ---------------------------------------------------------------------------------------------
// Scan and list

/// A tree with everything a scan must skip or keep.
fn tree() -> (tempfile::TempDir, Workspace) {
    let (dir, ws) = fixture();
    let r = dir.path();
    for p in [
        "b.md",
        "A.md",
        "a.md",
        "C/x.md",
        "docs/Guide.MD",
        "docs/deep/note.md",
        "docs/image.png",
        "drafts/wip.md",
        ".github/workflows/ci.yml",
        ".editorconfig",
        ".hidden/h.md",
        ".git/HEAD",
        ".git/notes.md",
        "sub/.GIT/x.md",
        ".git.md",
        ".local-vector-search-mcp/meta.redb",
        ".local-vector-search-mcp/x.md",
        "docs/.lvs-tmp-0123456789abcdef",
        "docs/.lvs-tmp-x.md",
        "trailing..md.",
        "notes.txt",
    ] {
        put(r, p, p.as_bytes());
    }
    #[cfg(unix)]
    put(r, "bad?name.md", b"unaddressable");
    fs::create_dir_all(r.join("empty/dir")).expect("empty dirs");
    (dir, ws)
}

#[test]
fn scan_finds_markdown_only_sorted_and_skips_internal_git_temp_and_bad_names() {
    let (dir, ws) = tree();
    let found = ws.scan_markdown(&filter(&[], &[])).expect("scan");
    assert_eq!(
        names(found.iter().map(|e| e.path.clone())),
        [
            ".git.md",
            ".hidden/h.md",
            "A.md",
            "a.md",
            "b.md",
            "C/x.md",
            "docs/deep/note.md",
            "docs/Guide.MD",
            "drafts/wip.md"
        ]
    );
    let guide = found.iter().find(|e| e.path.as_str() == "docs/Guide.MD").expect("guide");
    assert_eq!(guide.len, "docs/Guide.MD".len() as u64);
    assert_eq!(
        guide.modified,
        fs::metadata(dir.path().join("docs/Guide.MD")).and_then(|m| m.modified()).expect("mtime")
    );
    // Every scanned path is addressable and readable.
    for entry in &found {
        ws.rel_path(entry.path.as_str(), PathContext::Markdown).expect("addressable");
        ws.read_markdown(&entry.path).expect("readable");
    }
}

#[test]
fn scan_applies_include_and_exclude() {
    let (_dir, ws) = tree();
    let found = ws.scan_markdown(&filter(&["docs/**", "*.md"], &["**/deep/**"])).expect("scan");
    assert_eq!(
        names(found.into_iter().map(|e| e.path)),
        [".git.md", "A.md", "a.md", "b.md", "docs/Guide.MD"]
    );
}

#[cfg(unix)]
#[test]
fn an_unreadable_directory_is_permission_denied() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, ws) = fixture();
    put(dir.path(), "locked/a.md", b"x");
    let locked = dir.path().join("locked");
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).expect("chmod");
    let readable_anyway = fs::read_dir(&locked).is_ok(); // e.g. running as root
    let scanned = ws.scan_markdown(&filter(&[], &[]));
    let listed = ws.list_files(None, None);
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o755)).expect("chmod back");
    if readable_anyway {
        return;
    }
    let err = assert_err(scanned, ErrorCode::PermissionDenied, "Could not list directory 'locked'");
    assert!(!err.message.contains(&*dir.path().to_string_lossy()));
    assert_err(listed, ErrorCode::PermissionDenied, "Could not list directory 'locked'");
}

#[test]
fn a_vanished_root_is_reported() {
    let (dir, ws) = fixture();
    let root = dir.path().to_path_buf();
    drop(dir);
    assert!(!root.exists());
    assert_err(ws.scan_markdown(&filter(&[], &[])), ErrorCode::NotFound, "The knowledge-base root");
}

#[test]
fn list_files_keeps_assets_and_dot_files_but_not_git_internal_or_temp() {
    let (_dir, ws) = tree();
    let files = ws.list_files(None, None).expect("list");
    let listed: Vec<(String, &str)> = files.iter().map(|f| (f.path.to_string(), f.kind.as_str())).collect();
    let expected = [
        (".editorconfig", "asset"),
        (".git.md", "markdown"),
        (".github/workflows/ci.yml", "asset"),
        (".hidden/h.md", "markdown"),
        ("A.md", "markdown"),
        ("a.md", "markdown"),
        ("b.md", "markdown"),
        ("C/x.md", "markdown"),
        ("docs/deep/note.md", "markdown"),
        ("docs/Guide.MD", "markdown"),
        ("docs/image.png", "asset"),
        ("drafts/wip.md", "markdown"),
        ("notes.txt", "asset"),
    ];
    let expected: Vec<(String, &str)> = expected.iter().map(|(p, k)| ((*p).to_owned(), *k)).collect();
    assert_eq!(listed, expected);
    let png = files.iter().find(|f| f.path.as_str() == "docs/image.png").expect("png");
    assert_eq!(png.size, "docs/image.png".len() as u64);
}

#[test]
fn list_files_prefix_is_case_insensitive_on_whole_segments() {
    let (dir, ws) = tree();
    put(dir.path(), "docs2/other.md", b"x");
    put(dir.path(), "docsx.md", b"x");
    let under = |prefix: &str| {
        let prefix = ws.rel_path(prefix, PathContext::Any).expect("prefix");
        names(ws.list_files(Some(&prefix), None).expect("list").into_iter().map(|f| f.path))
    };
    assert_eq!(under("DOCS"), ["docs/deep/note.md", "docs/Guide.MD", "docs/image.png"]);
    assert_eq!(under("docs/Deep"), ["docs/deep/note.md"]);
    assert_eq!(under("docs/deep/note.md"), ["docs/deep/note.md"]);
    assert_eq!(under("doc"), Vec::<String>::new());
    assert_eq!(under("missing"), Vec::<String>::new());
}

#[test]
fn list_files_glob_filters_any_kind() {
    let (_dir, ws) = tree();
    let png =
        GlobFilter::with_names(&["**/*.PNG".to_owned()], &[], "includeGlob", "excludeGlob").expect("glob");
    let files = ws.list_files(None, Some(&png)).expect("list");
    assert_eq!(names(files.into_iter().map(|f| f.path)), ["docs/image.png"]);
    let prefix = rel(&ws, "drafts");
    let all = filter(&["**/*"], &[]);
    let files = ws.list_files(Some(&prefix), Some(&all)).expect("list");
    assert_eq!(names(files.into_iter().map(|f| f.path)), ["drafts/wip.md"]);
}

// ---------------------------------------------------------------------------------------------
// Atomic writes

/// Names in `dir` that look like leftover temp files.
fn temp_files(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .expect("read dir")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with(TEMP_PREFIX))
        .collect()
}

#[test]
fn write_creates_and_replaces_with_the_exact_bytes() {
    let (dir, ws) = fixture();
    let path = ws.rel_path("new.md", PathContext::MarkdownWrite).expect("path");
    let hash = ws.write_atomic(&path, b"# Title\n\nBody.\n", None, false).expect("create");
    assert_eq!(hash, "22e4e5179a8a13b1b016a3bc9ab6e1c6e1c2eb9fc0215785ba75323fb5b4addc");
    let doc = ws.read_markdown(&path).expect("read");
    assert_eq!(doc.source_hash, hash);
    let bytes = b"\xEF\xBB\xBF# Title\r\n\r\nNew body.  \r\n";
    let upper = hash.to_uppercase();
    let new_hash = ws.write_atomic(&path, bytes, Some(upper.as_str()), false).expect("replace");
    assert_eq!(fs::read(dir.path().join("new.md")).expect("read back"), bytes);
    assert_eq!(new_hash, crate::text::sha256_hex(bytes));
    let doc = ws.read_markdown(&path).expect("read");
    assert!(doc.has_bom);
    assert_eq!(doc.text, "# Title\r\n\r\nNew body.  \r\n");
    assert!(temp_files(dir.path()).is_empty());
}

#[test]
fn a_stale_hash_is_a_conflict_and_changes_nothing() {
    let (dir, ws) = fixture();
    put(dir.path(), "docs/a.md", b"old\n");
    let path = rel(&ws, "docs/a.md");
    let stale = crate::text::sha256_hex(b"something else");
    let err =
        assert_err(ws.write_atomic(&path, b"new\n", Some(stale.as_str()), false), ErrorCode::Conflict, "");
    assert_eq!(err.message, "Source content changed; reread before retrying.");
    assert_eq!(fs::read(dir.path().join("docs/a.md")).expect("unchanged"), b"old\n");
    assert!(temp_files(&dir.path().join("docs")).is_empty());
    // An expected hash for a file that is gone is a conflict too, and creates no folders.
    let gone = rel(&ws, "x/y/gone.md");
    assert_err(
        ws.write_atomic(&gone, b"z", Some(stale.as_str()), true),
        ErrorCode::Conflict,
        "Source content changed",
    );
    assert!(!dir.path().join("x").exists());
}

#[test]
fn parent_directories_are_created_only_when_asked() {
    let (dir, ws) = fixture();
    let path = ws.rel_path("chapters/one/intro.md", PathContext::MarkdownWrite).expect("path");
    let err = assert_err(
        ws.write_atomic(&path, b"# Intro\n", None, false),
        ErrorCode::NotFound,
        "Directory 'chapters/one'",
    );
    assert!(!err.message.contains(&*dir.path().to_string_lossy()));
    assert!(!dir.path().join("chapters").exists());
    ws.write_atomic(&path, b"# Intro\n", None, true).expect("create with dirs");
    assert_eq!(fs::read(dir.path().join("chapters/one/intro.md")).expect("written"), b"# Intro\n");
    put(dir.path(), "file", b"");
    let under_file = rel(&ws, "file/a.md");
    assert_err(ws.write_atomic(&under_file, b"x", None, true), ErrorCode::InvalidPath, "'file' is a file");
}

#[test]
fn writing_over_a_directory_is_refused() {
    let (dir, ws) = fixture();
    fs::create_dir(dir.path().join("d.md")).expect("dir");
    assert_err(
        ws.write_atomic(&rel(&ws, "d.md"), b"x", None, false),
        ErrorCode::UnsupportedFormat,
        "'d.md' is a directory",
    );
}

#[cfg(unix)]
#[test]
fn replacing_keeps_the_file_mode() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, ws) = fixture();
    put(dir.path(), "private.md", b"x");
    fs::set_permissions(dir.path().join("private.md"), fs::Permissions::from_mode(0o600)).expect("chmod");
    ws.write_atomic(&rel(&ws, "private.md"), b"y", None, false).expect("write");
    let mode = fs::metadata(dir.path().join("private.md")).expect("meta").permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn concurrent_writers_with_the_same_hash_exactly_one_wins() {
    let (dir, ws) = fixture();
    put(dir.path(), "race.md", b"base\n");
    let path = rel(&ws, "race.md");
    let base = crate::text::sha256_hex(b"base\n");
    let results: Vec<Result<String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let (ws, path, base) = (&ws, &path, &base);
                s.spawn(move || {
                    ws.write_atomic(path, format!("writer {i}\n").as_bytes(), Some(base.as_str()), false)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("no panic")).collect()
    });
    let winners: Vec<&String> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    assert_eq!(winners.len(), 1, "{results:?}");
    assert!(results.iter().filter_map(|r| r.as_ref().err()).all(|e| e.code == ErrorCode::Conflict));
    let now = fs::read(dir.path().join("race.md")).expect("read");
    assert_eq!(&crate::text::sha256_hex(&now), winners[0]);
    assert!(temp_files(dir.path()).is_empty());
}

#[test]
fn writes_to_git_or_internal_paths_are_refused() {
    let (dir, ws) = fixture();
    for p in [".git/config", ".local-vector-search-mcp/meta.redb"] {
        let sneaky = RelPath::new(p);
        if let Ok(sneaky) = sneaky {
            assert_err(
                ws.write_atomic(&sneaky, b"x", None, true),
                ErrorCode::InvalidPath,
                path::MSG_COMPONENT,
            );
        }
        assert!(!dir.path().join(p).exists());
    }
}

// ---------------------------------------------------------------------------------------------
// Properties

proptest! {
    #[test]
    fn the_guard_never_panics_and_accepted_paths_are_normal(input in "\\PC{0,40}|[a-zA-Z0-9 ./\\\\:_-]{0,30}") {
        let (_dir, ws) = fixture();
        for ctx in [PathContext::Any, PathContext::Markdown, PathContext::MarkdownWrite, PathContext::Image] {
            match ws.rel_path(&input, ctx) {
                Ok(p) => {
                    prop_assert!(!p.as_str().is_empty());
                    prop_assert!(!p.as_str().contains('\\'));
                    prop_assert!(!p.as_str().starts_with('/'));
                    prop_assert!(p.components().all(|c| !c.is_empty() && c != "." && c != ".."));
                    prop_assert_eq!(RelPath::new(p.as_str()).ok(), Some(p.clone()));
                }
                Err(e) => prop_assert_eq!(e.code, ErrorCode::InvalidPath),
            }
        }
    }

    #[test]
    fn glob_compilation_never_panics(pattern in "\\PC{0,30}", path in "[a-zA-Z/._*]{0,20}") {
        if let Ok(f) = GlobFilter::new(std::slice::from_ref(&pattern), std::slice::from_ref(&pattern)) {
            prop_assert!(!f.matches(&path), "a pattern that includes also excludes");
        }
    }

    #[test]
    fn listing_order_is_a_total_order(a in "\\PC{0,8}", b in "\\PC{0,8}") {
        prop_assert_eq!(compare_paths(&a, &b), compare_paths(&b, &a).reverse());
        prop_assert_eq!(compare_paths(&a, &b).is_eq(), a == b);
    }
}

#[test]
fn glob_semantics_follow_the_original() {
    let s = |v: &[&str]| v.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
    let f = GlobFilter::new(&s(&["**/*.md"]), &s(&["drafts", "**/private/**", "Old/*.md"])).unwrap();
    assert!(f.matches("a.md"));
    assert!(f.matches("docs/guide/A.MD"));
    assert!(!f.matches("docs/a.txt"));
    assert!(!f.matches("drafts/a.md"), "a matched folder excludes its content");
    assert!(!f.matches("Drafts/deep/a.md"), "case-insensitive");
    assert!(f.matches("docs/drafts.md"));
    assert!(!f.matches("x/private/y.md"));
    assert!(!f.matches("old/a.md"));
    assert!(f.matches("old/sub/a.md"), "* stays within a segment");
    let f = GlobFilter::new(&s(&["docs/*.md", "./top.md"]), &[]).unwrap();
    assert!(f.matches("docs/a.md"));
    assert!(!f.matches("docs/sub/a.md"));
    assert!(f.matches("top.md"));
    assert!(!f.matches("other/top.md"));
}

#[test]
fn a_held_lock_file_refuses_try_acquire_with_writer_busy_until_dropped() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("index").join("LOCK");
    let busy = "Someone else is writing; retry.";
    let first = LockFile::try_acquire(&path, "the lock file", busy).expect("free lock");
    let err = LockFile::try_acquire(&path, "the lock file", busy).expect_err("held lock");
    assert!(err.is(crate::error::ErrorDetail::WriterBusy), "{err:?}");
    assert_eq!((err.code, err.message.as_str()), (ErrorCode::IndexNotReady, busy));
    drop(first);
    let blocking = LockFile::acquire(&path, "the lock file").expect("released lock");
    drop(blocking);
    LockFile::try_acquire(&path, "the lock file", busy).expect("released again");
}

#[test]
fn derived_files_are_replaced_whole_and_failed_fills_leave_no_temp_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let target = dir.path().join("status.json");
    write_file_atomic(&target, b"one", "the status file").expect("first write");
    write_file_atomic(&target, b"two", "the status file").expect("second write");
    assert_eq!(fs::read(&target).expect("target"), b"two");

    let failed = replace_file_atomic(&target, "the status file", |temp| {
        fs::write(temp, b"half").expect("temp file");
        Err(Error::internal("the writer gave up"))
    });
    assert_eq!(failed.expect_err("fill failed").message, "the writer gave up");
    assert_eq!(fs::read(&target).expect("target"), b"two", "a failed fill keeps the old file");
    let names: Vec<String> = fs::read_dir(dir.path())
        .expect("dir")
        .map(|e| e.expect("entry").file_name().into_string().expect("utf-8"))
        .collect();
    assert_eq!(names, ["status.json"]);
}

/// The names in `dir`, dotfiles included (a temp file is `.lvs-tmp-…`), sorted.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .expect("dir")
        .map(|e| e.expect("entry").file_name().into_string().expect("utf-8"))
        .collect();
    names.sort();
    names
}

/// `init` appends its `catalog:` section with this: the original text (comments included) must
/// survive byte for byte, the mode too, and no temp file may stay behind.
#[test]
fn appending_keeps_the_original_bytes_and_mode_and_leaves_no_temp_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let target = dir.path().join("lvsm.yaml");
    let original = b"# my settings\r\nknowledgeBase:\n  root: docs  # trailing comment\n";
    fs::write(&target, original).expect("config");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&target, fs::Permissions::from_mode(0o600)).expect("chmod");
    }
    append_file_atomic(&target, b"catalog:\n  index: index.yaml\n", "`lvsm.yaml`").expect("append");
    let mut expected = original.to_vec();
    expected.extend_from_slice(b"catalog:\n  index: index.yaml\n");
    assert_eq!(fs::read(&target).expect("target"), expected);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(&target).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the file's mode is kept");
    }
    assert_eq!(names_in(dir.path()), ["lvsm.yaml"]);

    // A missing file is created.
    let fresh = dir.path().join("new.yaml");
    append_file_atomic(&fresh, b"a: 1\n", "`new.yaml`").expect("create");
    assert_eq!(fs::read(&fresh).expect("created"), b"a: 1\n");
    assert_eq!(names_in(dir.path()), ["lvsm.yaml", "new.yaml"]);
}

/// A write that loses the race keeps the other writer's bytes and cleans up its temp file.
#[test]
fn appending_never_overwrites_a_change_made_meanwhile() {
    let dir = tempfile::tempdir().expect("temp dir");
    let target = dir.path().join("lvsm.yaml");
    fs::write(&target, b"a: 1\n").expect("config");
    let err = atomic::append_between(&target, b"b: 2\n", "`lvsm.yaml`", |t| {
        fs::write(t, b"edited: meanwhile\n").expect("edit")
    })
    .expect_err("changed meanwhile");
    assert_eq!(err.code, ErrorCode::Conflict, "{err:?}");
    assert_eq!(fs::read(&target).expect("target"), b"edited: meanwhile\n");
    assert_eq!(names_in(dir.path()), ["lvsm.yaml"]);

    // A file created meanwhile where none was is not replaced either.
    let fresh = dir.path().join("mdmark.config.yaml");
    atomic::append_between(&fresh, b"index: index.yaml\n", "`mdmark.config.yaml`", |t| {
        fs::write(t, b"theirs\n").expect("create")
    })
    .expect_err("created meanwhile");
    assert_eq!(fs::read(&fresh).expect("theirs"), b"theirs\n");
    assert_eq!(names_in(dir.path()), ["lvsm.yaml", "mdmark.config.yaml"]);
}

/// `--config` may name a link (to a dotfiles checkout, say): the target grows, the link stays.
#[cfg(unix)]
#[test]
fn appending_through_a_link_keeps_the_link() {
    let dir = tempfile::tempdir().expect("temp dir");
    fs::create_dir(dir.path().join("dotfiles")).expect("dir");
    let real = dir.path().join("dotfiles/lvsm.yaml");
    fs::write(&real, b"a: 1\n").expect("config");
    let link = dir.path().join("lvsm.yaml");
    std::os::unix::fs::symlink(&real, &link).expect("link");
    append_file_atomic(&link, b"b: 2\n", "`lvsm.yaml`").expect("append");
    assert!(fs::symlink_metadata(&link).expect("link").file_type().is_symlink());
    assert_eq!(fs::read(&real).expect("target"), b"a: 1\nb: 2\n");
    assert_eq!(names_in(&dir.path().join("dotfiles")), ["lvsm.yaml"]);
}

#[test]
fn sweeping_removes_temp_files_of_dead_processes_only() {
    let (dir, ws) = tree();
    let dead = format!(".lvs-tmp-{:x}-00ff", i32::MAX); // no such process
    let own = format!(".lvs-tmp-{:x}-00ff", std::process::id()); // a write of this process
    let live = ".lvs-tmp-1-00ff"; // pid 1 always runs: another server's write in flight
    for name in [dead.as_str(), own.as_str(), live] {
        std::fs::write(dir.path().join(name), b"half a write").unwrap();
    }
    std::fs::write(dir.path().join("docs").join(&dead), b"half a write").unwrap();
    std::fs::create_dir_all(dir.path().join(".git")).unwrap();
    std::fs::write(dir.path().join(".git").join(&dead), b"not ours to touch").unwrap();
    let mut removed = ws.sweep_temp_files().expect("sweep");
    removed.sort();
    assert_eq!(removed, vec![dead.clone(), format!("docs/{dead}")]);
    // `ls -a`, not a listing that hides temp files.
    let ls = |d: &str| {
        let out = std::process::Command::new("ls").arg("-a").arg(dir.path().join(d)).output().unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let (root, docs) = (ls(""), ls("docs"));
    assert!(!root.contains(&dead) && !docs.contains(&dead), "{root}{docs}");
    assert!(root.contains(&own) && root.contains(live), "writes in flight stay: {root}");
    // Names without a process id (older builds) are removed only once they are old.
    assert!(docs.contains(".lvs-tmp-0123456789abcdef"), "{docs}");
    assert!(ls(".git").contains(&dead));
    assert!(dir.path().join("docs/Guide.MD").is_file(), "real files stay");
    assert_eq!(ws.sweep_temp_files().unwrap(), Vec::<String>::new());
}

// ---------------------------------------------------------------------------------------------
// File names in one normal form (NFC)

/// `ガイド.md` composed (NFC) and decomposed (NFD, as macOS writes it).
const GUIDE_NFC: &str = "\u{30ac}\u{30a4}\u{30c9}.md";
const GUIDE_NFD: &str = "\u{30ab}\u{3099}\u{30a4}\u{30c8}\u{3099}.md";

#[test]
fn a_decomposed_name_on_disk_is_found_by_its_composed_form_and_answered_as_on_disk() {
    let (dir, ws) = fixture();
    put(dir.path(), &format!("資料/{GUIDE_NFD}"), b"# x\n");
    for typed in [format!("資料/{GUIDE_NFC}"), format!("資料/{GUIDE_NFD}")] {
        let p = ws.rel_path(&typed, PathContext::Markdown).expect("found");
        assert_eq!(p.as_str(), format!("資料/{GUIDE_NFD}"), "typed {typed:?}");
        assert_eq!(ws.read_markdown(&p).expect("read").text, "# x\n");
    }
}

#[test]
fn a_composed_name_on_disk_is_found_by_its_decomposed_form_directories_included() {
    let (dir, ws) = fixture();
    let folder_nfc = "\u{30d0}\u{30c3}\u{30af}"; // バック
    let folder_nfd = "\u{30cf}\u{3099}\u{30c3}\u{30af}";
    put(dir.path(), &format!("{folder_nfc}/{GUIDE_NFC}"), b"text\n");
    let p = ws.rel_path(&format!("{folder_nfd}/{GUIDE_NFD}"), PathContext::Any).expect("found");
    assert_eq!(p.as_str(), format!("{folder_nfc}/{GUIDE_NFC}"));
    assert!(ws.stat(&p).is_ok());
    // a new name keeps the form it was given
    let new = ws.rel_path(&format!("{folder_nfd}/新しい{GUIDE_NFD}"), PathContext::Any).expect("new");
    assert_eq!(new.as_str(), format!("{folder_nfc}/新しい{GUIDE_NFD}"));
}

#[test]
fn when_both_forms_exist_each_is_its_own_file() {
    let (dir, ws) = fixture();
    put(dir.path(), GUIDE_NFC, b"composed\n");
    put(dir.path(), GUIDE_NFD, b"decomposed\n");
    if fs::read_dir(dir.path()).unwrap().count() < 2 {
        eprintln!("skip: this file system stores one form only");
        return;
    }
    assert_eq!(ws.read_markdown(&rel(&ws, GUIDE_NFC)).unwrap().text, "composed\n");
    assert_eq!(ws.read_markdown(&rel(&ws, GUIDE_NFD)).unwrap().text, "decomposed\n");
}

#[test]
fn globs_match_names_in_either_form() {
    let composed = GlobFilter::new(&[format!("**/{GUIDE_NFC}")], &[]).unwrap();
    let decomposed = GlobFilter::new(&["docs/*\u{30a4}\u{30c8}\u{3099}.md".to_owned()], &[]).unwrap();
    assert!(composed.matches(format!("docs/{GUIDE_NFD}")));
    assert!(composed.matches(format!("docs/{GUIDE_NFC}")));
    assert!(decomposed.matches(format!("docs/{GUIDE_NFC}")));
    let excluded = GlobFilter::new(&[], &[GUIDE_NFC.to_owned()]).unwrap();
    assert!(!excluded.matches(GUIDE_NFD));
    assert!(form_sensitive(GUIDE_NFC) && form_sensitive(GUIDE_NFD));
    assert!(!form_sensitive("設計メモ.md") && !form_sensitive("guide.md"));
    assert_eq!(nfc(GUIDE_NFD), GUIDE_NFC);
}

// ---------------------------------------------------------------------------------------------
// Guard walks and cached listings (issue #28)

#[cfg(unix)]
#[test]
fn a_guard_walk_refuses_and_finds_what_rel_path_and_stat_do() {
    use std::os::unix::fs::symlink;
    let (dir, ws) = fixture();
    put(dir.path(), "d/a.md", b"12345");
    put(dir.path(), "d/b.md", b"x");
    fs::create_dir(dir.path().join("real")).expect("dir");
    symlink(dir.path().join("real"), dir.path().join("linked")).expect("link");
    symlink(dir.path().join("d/a.md"), dir.path().join("d/alias.md")).expect("link");
    let walk = ws.guard_walk();
    for _ in 0..2 {
        // The second round answers the folder checks from the walk's memory: same answers.
        let (path, meta) = walk.check("d/a.md", PathContext::Any).expect("a.md");
        assert_eq!((path.as_str(), meta.map(|m| m.len())), ("d/a.md", Some(5)));
        assert!(walk.check("d/missing.md", PathContext::Any).expect("missing").1.is_none());
        assert!(walk.check("nowhere/x.md", PathContext::Any).expect("no folder").1.is_none());
        assert!(walk.check("d/a.md/x.md", PathContext::Any).expect("below a file").1.is_none());
        for input in ["linked/x.md", "d/alias.md"] {
            let ours = walk.check(input, PathContext::Any).expect_err("a link on the way");
            let single = ws.rel_path(input, PathContext::Any).expect_err("a link on the way");
            assert_eq!((ours.code, &ours.message), (single.code, &single.message), "{input}");
        }
        let bad = walk.check("../x.md", PathContext::Any).expect_err("dot-dot");
        assert_eq!(bad.code, ErrorCode::InvalidPath);
        assert!(walk.check("d", PathContext::Any).expect("folder").1.is_some_and(|m| m.is_dir()));
    }
}

#[cfg(unix)]
#[test]
fn current_hash_shares_one_walk_between_files_and_refuses_a_folder_that_became_a_link() {
    use std::os::unix::fs::symlink;
    let (dir, ws) = fixture();
    put(dir.path(), "d/a.md", b"# A\n");
    put(dir.path(), "d/b.md", b"# B\n");
    let path = |s: &str| RelPath::new(s).expect("path");
    let (a, b) = (ws.read_markdown(&path("d/a.md")).unwrap(), ws.read_markdown(&path("d/b.md")).unwrap());
    let walk = ws.guard_walk();
    assert_eq!(walk.current_hash(&path("d/a.md")), Some(a.source_hash.clone()));
    assert_eq!(walk.current_hash(&path("d/b.md")), Some(b.source_hash.clone()));
    assert_eq!(walk.current_hash(&path("d/gone.md")), None, "a missing file has no hash");
    // The folder is swapped for a link to a copy with the same bytes: the next call's walk
    // refuses the path (no hash, so a search flags its hits stale) instead of following it.
    fs::rename(dir.path().join("d"), dir.path().join("real")).expect("move");
    symlink(dir.path().join("real"), dir.path().join("d")).expect("link");
    assert_eq!(ws.guard_walk().current_hash(&path("d/a.md")), None);
    assert_eq!(ws.guard_walk().current_hash(&path("real/a.md")), Some(a.source_hash));
}

#[cfg(unix)]
#[test]
fn the_cached_listing_follows_new_removed_rewritten_and_linked_files() {
    use std::io::Write as _;
    use std::os::unix::fs::symlink;
    let (dir, ws) = fixture();
    let png = |name: &str| name.ends_with(".png");
    let list = |ws: &Workspace| {
        ws.list_files_cached("png", png)
            .expect("listing")
            .into_iter()
            .map(|f| (f.path.as_str().to_owned(), f.size))
            .collect::<Vec<_>>()
    };
    put(dir.path(), "b/2.png", b"22");
    put(dir.path(), "B/1.png", b"1");
    put(dir.path(), "a.png", b"a");
    put(dir.path(), "notes.md", b"# n");
    put(dir.path(), ".git/x.png", b"g");
    let expected = |v: &[(&str, u64)]| v.iter().map(|(p, n)| ((*p).to_owned(), *n)).collect::<Vec<_>>();
    assert_eq!(list(&ws), expected(&[("a.png", 1), ("B/1.png", 1), ("b/2.png", 2)]));
    // Older than the racy window: the next calls reuse the walk.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    assert_eq!(list(&ws), expected(&[("a.png", 1), ("B/1.png", 1), ("b/2.png", 2)]));
    // Rewritten in place (no directory changes): the new size shows.
    fs::OpenOptions::new()
        .append(true)
        .open(dir.path().join("b/2.png"))
        .expect("open")
        .write_all(b"22")
        .expect("append");
    assert_eq!(list(&ws), expected(&[("a.png", 1), ("B/1.png", 1), ("b/2.png", 4)]));
    // A new file in a sub-folder, a removed one, a folder swapped for a link.
    put(dir.path(), "b/3.png", b"333");
    fs::remove_file(dir.path().join("a.png")).expect("remove");
    assert_eq!(list(&ws), expected(&[("B/1.png", 1), ("b/2.png", 4), ("b/3.png", 3)]));
    let outside = tempfile::tempdir().expect("outside");
    put(outside.path(), "o.png", b"o");
    fs::remove_dir_all(dir.path().join("B")).expect("remove B");
    symlink(outside.path(), dir.path().join("B")).expect("link");
    assert_eq!(list(&ws), expected(&[("b/2.png", 4), ("b/3.png", 3)]));
    // The same files as the uncached listing, filtered.
    let plain: Vec<_> = ws
        .list_files(None, None)
        .expect("list")
        .into_iter()
        .filter(|f| png(f.path.file_name()))
        .map(|f| (f.path.as_str().to_owned(), f.size))
        .collect();
    assert_eq!(list(&ws), plain);
}

#[cfg(unix)]
#[test]
fn a_case_only_rename_is_told_from_a_move_onto_another_file() {
    // On a case-insensitive file system (Windows, macOS) `Kyoto.md` resolves to `kyoto.md`, so a
    // case-only `kb_move` found its own source "already existing" (issue #47; the smoke suite
    // runs the real rename under Wine, tests/mcp/test_windows.py). Here a link stands in for the
    // case-insensitive lookup: both names lead to one file, which is what the check looks for.
    let (dir, _ws) = fixture();
    let root = dir.path();
    put(root, "kyoto.md", b"# k\n");
    put(root, "other.md", b"# o\n");
    std::os::unix::fs::symlink(root.join("kyoto.md"), root.join("Kyoto.md")).unwrap();
    let rel = |s: &str| RelPath::new(s).unwrap();
    let same = |from: &str, to: &str| {
        write::same_file_in_other_case(&rel(from), &rel(to), &root.join(from), &root.join(to))
    };
    assert!(same("kyoto.md", "Kyoto.md"), "one file, names differing in case");
    assert!(!same("kyoto.md", "kyoto.md"), "the same name is no rename");
    assert!(!same("other.md", "Kyoto.md"), "another file of a name differing in more than case");
    fs::remove_file(root.join("Kyoto.md")).unwrap();
    put(root, "Kyoto.md", b"# K\n");
    assert!(!same("kyoto.md", "Kyoto.md"), "two files (a case-sensitive file system)");
    assert!(!same("kyoto.md", "Missing.md"));
}

#[cfg(unix)]
#[test]
fn paths_in_other_letter_case_are_spelled_as_on_disk() {
    // On Windows `Workspace::on_disk` spells `KYOTO.md` as the `kyoto.md` on disk, so an edit
    // through it keeps one index key (issue #47; tests/mcp/test_windows.py runs it under Wine).
    // Here links stand in for the case-insensitive lookup: canonicalizing gives the stored name.
    let (dir, ws) = fixture();
    let root = ws.root().to_path_buf();
    put(&root, "docs/kyoto.md", b"# k\n");
    put(&root, "other.md", b"# o\n");
    std::os::unix::fs::symlink(root.join("docs"), root.join("DOCS")).unwrap();
    std::os::unix::fs::symlink(root.join("docs/kyoto.md"), root.join("docs/KYOTO.md")).unwrap();
    std::os::unix::fs::symlink(root.join("other.md"), root.join("docs/Other.md")).unwrap();
    let spelled = |p: &str| case_on_disk(&root, &RelPath::new(p).unwrap()).map(|r| r.as_str().to_owned());
    assert_eq!(spelled("docs/KYOTO.md").as_deref(), Some("docs/kyoto.md"));
    assert_eq!(spelled("DOCS/KYOTO.md").as_deref(), Some("docs/kyoto.md"));
    assert_eq!(spelled("DOCS/New.md").as_deref(), Some("docs/New.md"), "a new file keeps its name");
    assert_eq!(spelled("docs/kyoto.md"), None, "already as on disk");
    assert_eq!(spelled("docs/Other.md"), None, "another file, not a case variant");
    assert_eq!(spelled("missing/new.md"), None);
    drop(dir);
}
