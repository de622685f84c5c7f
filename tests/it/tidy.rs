//! Tidy checks: grep-level tests that keep the architecture and the house rules true, modelled on
//! rust-analyzer's `tidy.rs`. The layer table below *is* the architecture (`docs/architecture.md`,
//! "Code map"): changing it is a deliberate, reviewed act.
//!
//! These are heuristics over the source text (comment lines are skipped, strings are not), and
//! that is fine: a false alarm is fixed by rewording a line, a missed import by a review.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use May::{EverythingBelow, Only};

/// Which top-level modules each module of `src/` may import (`crate::x`, `super::…::x`), by
/// layer. Imports point down; a module may always use itself.
const LAYERS: &[(&str, &str, May)] = &[
    ("L0", "error", Only(&[])),
    ("L0", "text", Only(&[])),
    ("L0", "wire", Only(&[])),
    ("L0", "workspace", Only(&["error", "text"])),
    ("L0", "markdown", Only(&["error", "text"])),
    ("L1", "chunk", Only(&["markdown", "text", "error", "workspace"])),
    ("L1", "edit", Only(&["markdown", "text", "error", "wire", "table"])),
    ("L1", "table", Only(&["markdown", "text", "error", "wire"])),
    ("L1", "config", Only(&["workspace", "error", "wire"])),
    ("L1", "links", Only(&["markdown", "workspace", "text", "error"])),
    // The message catalogue (code → English/Japanese text) of the catalog and the HTML export.
    ("L1", "messages", Only(&["text"])),
    ("L2", "store", Only(&["chunk", "workspace", "text", "error"])),
    ("L2", "lexical", Only(&["chunk", "workspace", "text", "error"])),
    // `workspace` for the atomic replacement of the vector file (`workspace::replace_file_atomic`).
    ("L2", "vectors", Only(&["chunk", "config", "text", "error", "workspace"])),
    // The document catalog: settings, index, editor, queries, checks (`docs/design/catalog.md`).
    ("L2", "catalog", Only(&["markdown", "links", "messages", "workspace", "text", "error", "wire"])),
    // The publishing model both exports render (soft breaks, alerts, footnotes, heading ids).
    ("L2", "publish", Only(&["markdown", "messages", "text"])),
    // The ranking pipeline of `kb_search` and the order of a search (`search::run`); it reads
    // through its `Sources` trait, which the indexer implements, and never opens an index.
    ("L2", "search", Only(&["config", "lexical", "wire", "workspace", "text", "error"])),
    ("L3", "indexer", EverythingBelow),
    // Image formats, the HTTPS downloader; file access through `workspace`.
    ("L3", "assets", Only(&["workspace", "error", "text"])),
    ("L3", "export", Only(&["workspace", "markdown", "publish", "text", "error", "wire"])),
    // Markdown to self-contained HTML; files through the engine's `html::Files`.
    ("L3", "html", Only(&["markdown", "publish", "links", "messages", "text", "error"])),
    // The façade: no storage engine directly; searches go through `indexer` and `search`.
    (
        "L4",
        "engine",
        Only(&[
            "error",
            "text",
            "wire",
            "workspace",
            "markdown",
            "chunk",
            "edit",
            "table",
            "config",
            "links",
            "messages",
            "catalog",
            "search",
            "indexer",
            "assets",
            "export",
            "html",
        ]),
    ),
    ("L6", "mcp", Only(&["engine", "wire", "config", "error", "text"])),
    ("L6", "cli", Only(&["engine", "wire", "config", "mcp", "error"])),
];

/// A row's allowance.
enum May {
    /// These modules.
    Only(&'static [&'static str]),
    /// Every module of a lower layer.
    EverythingBelow,
}

/// The modules `module` (in `layer`) may import.
fn allowed(layer: &str, may: &May) -> Vec<&'static str> {
    match may {
        Only(list) => list.to_vec(),
        EverythingBelow => LAYERS.iter().filter(|(l, _, _)| *l < layer).map(|(_, m, _)| *m).collect(),
    }
}

/// Items of `lib.rs` reachable as `crate::X`: the module they stand for, or `None` for helpers
/// every module may use (`testdata` is `#[cfg(test)]` data loading).
const ROOT_ITEMS: &[(&str, Option<&str>)] = &[
    ("Error", Some("error")),
    ("ErrorCode", Some("error")),
    ("Result", Some("error")),
    ("testdata", None),
    ("failpoint", None),
];

/// Each storage or protocol crate and the only places (paths under the repository root) that may
/// name it.
const CRATE_OWNERS: &[(&str, &[&str])] = &[
    ("tantivy", &["src/lexical/"]),
    ("lindera", &["src/lexical/"]),
    ("lindera_dictionary", &["src/lexical/"]),
    ("redb", &["src/store/"]),
    ("usearch", &["src/vectors/"]),
    // The embedding client and the SSRF-safe image downloader (`docs/design/assets.md`).
    ("reqwest", &["src/vectors/", "src/assets/"]),
    // Image decoding for the asset tools and for PDF export (`docs/design/pdf.md`).
    ("image", &["src/assets/", "src/export/"]),
    ("rmcp", &["src/mcp/"]),
    ("tokio", &["src/mcp/"]),
    // `serve --http` (`src/mcp/http.rs`).
    ("axum", &["src/mcp/"]),
    ("tokio_util", &["src/mcp/"]),
    ("notify", &["src/indexer/"]),
    // Every Markdown parse goes through `markdown::syntax` (`docs/design/markdown-model.md`).
    ("pulldown_cmark", &["src/markdown/"]),
    ("printpdf", &["src/export/"]),
    ("lopdf", &["src/export/"]),
    ("fontdb", &["src/export/"]),
    ("resvg", &["src/export/"]),
    // `config/tests.rs` checks the clap definition (`CommandFactory::debug_assert`).
    ("clap", &["src/config/cli.rs", "src/config/tests.rs", "src/cli/"]),
];

#[test]
fn imports_point_down() {
    let modules = top_level_modules();
    let table: BTreeSet<&str> = LAYERS.iter().map(|(_, m, _)| *m).collect();
    let listed: BTreeSet<&str> = modules.keys().map(String::as_str).collect();
    assert_eq!(
        listed, table,
        "every top-level module of src/ needs exactly one row in LAYERS (tests/it/tidy.rs); see docs/architecture.md"
    );

    let names: BTreeSet<String> = modules.keys().cloned().collect();
    let mut problems = Vec::new();
    for (layer, module, may) in LAYERS {
        let allowed = allowed(layer, may);
        for file in &modules[*module] {
            if file.file_name().is_some_and(|n| n == "tests.rs") {
                continue; // `#[cfg(test)]` only
            }
            let text = read(file);
            for (line, used, snippet) in module_references(&text, &module_path(file), &names) {
                if used == *module || allowed.contains(&used.as_str()) {
                    continue;
                }
                problems.push(format!(
                    "{}:{line}: module `{module}` ({layer}) must not import `{used}` (found `{snippet}`); \
                     `{module}` may import only [{}]; see docs/architecture.md",
                    shown(file),
                    allowed.join(", "),
                ));
            }
        }
    }
    assert!(problems.is_empty(), "layer violations:\n{}", problems.join("\n"));
}

/// No import circle anywhere in `src/`: the files and folders of one folder (siblings) that name
/// each other through `super::…` or `crate::…` form no circle, at any depth (a circle of the
/// top-level modules would break the layer table too). A folder's `mod.rs` declaring and
/// re-exporting its children, and a child naming an item of its parent, are not sibling imports;
/// test-only files are left out. (`lexical/index.rs` and `lexical/infix.rs` once imported each
/// other, issue #43.)
#[test]
fn no_import_circles() {
    let files: Vec<PathBuf> =
        rust_files(&root().join("src")).into_iter().filter(|f| !is_test_file(f)).collect();
    let mut modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_path(f)).collect();
    modules.remove(&Vec::new()); // lib.rs, main.rs
    // sibling → sibling, with the first place each edge was seen
    let mut edges: BTreeMap<Vec<String>, BTreeMap<Vec<String>, String>> = BTreeMap::new();
    for file in &files {
        let from = module_path(file);
        for (line, path) in referenced_paths(&read(file), &from) {
            let Some(to) = (1..=path.len()).rev().map(|n| path[..n].to_vec()).find(|p| modules.contains(p))
            else {
                continue;
            };
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if common == from.len() || common == to.len() {
                continue; // the module itself, an ancestor or a descendant
            }
            let (a, b) = (from[..=common].to_vec(), to[..=common].to_vec());
            edges.entry(a).or_default().entry(b).or_insert_with(|| format!("{}:{line}", shown(file)));
        }
    }
    let mut circles = Vec::new();
    let mut done: BTreeSet<Vec<String>> = BTreeSet::new();
    for start in edges.keys() {
        let mut trail = vec![start.clone()];
        find_circles(&edges, &mut trail, &mut done, &mut circles);
    }
    assert!(
        circles.is_empty(),
        "import circles (each step: the importing module, then where it imports the next):\n{}",
        circles.join("\n")
    );
}

/// Depth-first search from the last module of `trail`; every circle found is pushed to `out`.
fn find_circles(
    edges: &BTreeMap<Vec<String>, BTreeMap<Vec<String>, String>>,
    trail: &mut Vec<Vec<String>>,
    done: &mut BTreeSet<Vec<String>>,
    out: &mut Vec<String>,
) {
    let here = trail.last().cloned().unwrap_or_default();
    if done.contains(&here) {
        return;
    }
    for next in edges.get(&here).into_iter().flat_map(BTreeMap::keys) {
        if let Some(i) = trail.iter().position(|m| m == next) {
            let mut steps: Vec<String> = Vec::new();
            let circle: Vec<&Vec<String>> = trail[i..].iter().chain(std::iter::once(next)).collect();
            for pair in circle.windows(2) {
                steps.push(format!("{} ({})", pair[0].join("::"), edges[pair[0]][pair[1]]));
            }
            out.push(format!("{} → {}", steps.join(" → "), next.join("::")));
            continue;
        }
        trail.push(next.clone());
        find_circles(edges, trail, done, out);
        trail.pop();
    }
    done.insert(here);
}

/// Whether `file` is compiled for tests only (`tests.rs`, or a file under a `tests/` folder).
fn is_test_file(file: &Path) -> bool {
    let rel = file.strip_prefix(root().join("src")).unwrap_or(file);
    rel.file_name().is_some_and(|n| n == "tests.rs")
        || rel.components().rev().skip(1).any(|c| c.as_os_str() == "tests")
}

/// The crate paths `text` (the file of module `path`) names through `crate::…` and `super::…`,
/// as `(line, segments)`; `crate::Result` and the like stand for their module (`ROOT_ITEMS`).
fn referenced_paths(text: &str, path: &[String]) -> Vec<(usize, Vec<String>)> {
    let code: String = text
        .lines()
        .map(|l| if l.trim_start().starts_with("//") { "" } else { l })
        .collect::<Vec<_>>()
        .join("\n");
    let line_of = |pos: usize| code[..pos].matches('\n').count() + 1;
    let segments = |snippet: &str| -> Vec<String> {
        snippet
            .split("::")
            .map(str::trim)
            .take_while(|s| !s.is_empty() && s.chars().all(is_ident_char))
            .map(str::to_owned)
            .collect()
    };
    let mut out = Vec::new();
    for (start, _) in code.match_indices("crate::") {
        if code[..start].ends_with(|c: char| is_ident_char(c) || c == ':') {
            continue;
        }
        for (name, snippet) in path_heads(&code[start + "crate::".len()..]) {
            let mut segs = segments(&snippet);
            if let Some((_, module)) = ROOT_ITEMS.iter().find(|(item, _)| *item == name) {
                let Some(module) = module else { continue };
                segs = vec![(*module).to_owned()];
            }
            out.push((line_of(start), segs));
        }
    }
    for (start, _) in code.match_indices("super::") {
        if code[..start].ends_with(|c: char| is_ident_char(c) || c == ':') {
            continue;
        }
        let mut rest = &code[start..];
        let mut climbs = 0;
        while let Some(r) = rest.strip_prefix("super::") {
            climbs += 1;
            rest = r;
        }
        let Some(base) = path.len().checked_sub(climbs) else { continue };
        for (_, snippet) in path_heads(rest) {
            let mut segs = path[..base].to_vec();
            segs.extend(segments(&snippet));
            out.push((line_of(start), segs));
        }
    }
    out
}

#[test]
fn storage_and_protocol_crates_stay_in_their_module() {
    let mut problems = Vec::new();
    for file in rust_files(&root().join("src")) {
        let shown = shown(&file);
        let text = read(&file);
        for (krate, owners) in CRATE_OWNERS {
            if owners.iter().any(|o| shown.starts_with(o)) {
                continue;
            }
            let needle = format!("{krate}::");
            for (n, line) in code_lines(&text) {
                if find_word(line, &needle).is_some() {
                    problems.push(format!(
                        "{shown}:{n}: `{krate}` may be used only in {}, found `{}`; see docs/architecture.md",
                        owners.join(", "),
                        line.trim()
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "crates outside their owning module:\n{}", problems.join("\n"));
}

#[test]
fn every_source_file_opens_with_a_module_comment() {
    let missing: Vec<String> = rust_files(&root().join("src"))
        .into_iter()
        .filter(|f| !read(f).starts_with("//!"))
        .map(|f| shown(&f))
        .collect();
    assert!(
        missing.is_empty(),
        "these files do not start with a `//!` comment saying what they are:\n{}",
        missing.join("\n")
    );
}

/// The catalog's queries and checks are pure: what a call reads from files or `git` is loaded
/// once by the edge (`src/catalog/load.rs`), never inside `find.rs` or `check.rs`
/// (`docs/design/catalog.md`, "The edge and the pure core").
#[test]
fn catalog_queries_and_checks_read_no_files() {
    let io = ["Workspace", "DocCache", "std::fs", "std::process", "git::", "read_index"];
    let mut found = Vec::new();
    for name in ["find.rs", "check.rs"] {
        let path = root().join("src/catalog").join(name);
        for (n, line) in code_lines(&read(&path)) {
            if let Some(word) = io.iter().find(|w| line.contains(*w)) {
                found.push(format!("{}:{n}: `{word}` in `{}`", shown(&path), line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "file or git access in the catalog's pure core:\n{}", found.join("\n"));
}

/// Every file the catalog opens goes through `workspace` (its guard for the documents and the
/// index, `workspace::outside` and `workspace::append_file_atomic` for the configuration files);
/// the one thing it runs itself is `git`, in `src/catalog/git.rs` (`docs/design/catalog.md`,
/// "Files and `git`"). Catches a file opened, probed or written past the workspace's rules (a
/// link followed, a non-atomic write such as `init`'s old append).
#[test]
fn the_catalog_opens_no_file_itself() {
    let file_access =
        ["std::fs", "fs::", "File::", "OpenOptions", ".exists()", ".canonicalize()", ".read_dir()"];
    let processes = ["std::process", "Command::"];
    let mut found = Vec::new();
    for path in rust_files(&root().join("src/catalog")) {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_owned();
        if name == "tests.rs" {
            continue; // `#[cfg(test)]` fixtures write their files directly
        }
        let forbidden: Vec<&str> = if name == "git.rs" {
            file_access.to_vec()
        } else {
            file_access.iter().chain(&processes).copied().collect()
        };
        for (n, line) in code_lines(&read(&path)) {
            // A path (`fs::`, `File::`) must start a word (`IndexFile::` is not `File::`); a
            // method call (`.exists()`) follows anything.
            let hit = |w: &str| {
                if w.starts_with(char::is_alphabetic) {
                    find_word(line, w).is_some()
                } else {
                    line.contains(w)
                }
            };
            if let Some(word) = forbidden.iter().find(|w| hit(w)) {
                found.push(format!("{}:{n}: `{word}` in `{}`", shown(&path), line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "the catalog reaches files or runs programs itself (use `workspace`; only git.rs runs git):\n{}",
        found.join("\n")
    );
}

/// `docs/architecture.md` shows the layer table twice, as the "Code map" block (`L3  indexer
/// search …  description`) and as the module table (`| `search` | L3 | `config`, … |`); both must
/// say what `LAYERS` enforces: the same modules, each in the same layer, with the same imports.
/// Catches a row added to or changed in `LAYERS` without the documentation, or the reverse.
#[test]
fn the_architecture_doc_shows_the_enforced_layers() {
    let doc = read(&root().join("docs/architecture.md"));
    let modules: BTreeSet<String> = top_level_modules().keys().cloned().collect();
    let code_map = doc_code_map(&doc, &modules);
    let table = doc_module_table(&doc);
    let enforced: BTreeMap<&str, (&str, BTreeSet<&str>)> =
        LAYERS.iter().map(|(l, m, may)| (*m, (*l, allowed(l, may).into_iter().collect()))).collect();

    let mut problems = Vec::new();
    for (module, (layer, imports)) in &enforced {
        match code_map.get(*module) {
            None => problems.push(format!("Code map block: `{module}` is missing (LAYERS: {layer})")),
            Some(l) if l != layer => {
                problems.push(format!("Code map block: `{module}` is in {l}, LAYERS says {layer}"))
            }
            Some(_) => {}
        }
        let Some((l, may)) = table.get(*module) else {
            problems.push(format!("module table: no row for `{module}` (LAYERS: {layer})"));
            continue;
        };
        if l != layer {
            problems.push(format!("module table: `{module}` is in {l}, LAYERS says {layer}"));
        }
        let documented: BTreeSet<&str> = match may {
            DocMay::Below(top) => table
                .iter()
                .filter(|(_, (l, _))| l.as_str() <= top.as_str())
                .map(|(m, _)| m.as_str())
                .collect(),
            DocMay::Only(list) => list.iter().map(String::as_str).collect(),
        };
        if &documented != imports {
            let extra: Vec<_> = documented.difference(imports).collect();
            let missing: Vec<_> = imports.difference(&documented).collect();
            problems.push(format!(
                "module table: `{module}` may import differs from LAYERS: documented but not enforced {extra:?}, \
                 enforced but not documented {missing:?}"
            ));
        }
    }
    for module in code_map.keys().filter(|m| !enforced.contains_key(m.as_str())) {
        problems.push(format!("Code map block: `{module}` has no row in LAYERS"));
    }
    for module in table.keys().filter(|m| !enforced.contains_key(m.as_str())) {
        problems.push(format!("module table: `{module}` has no row in LAYERS"));
    }
    assert!(
        problems.is_empty(),
        "docs/architecture.md and the LAYERS of tests/it/tidy.rs disagree (change both together):\n{}",
        problems.join("\n")
    );
}

/// `src/lib.rs` opens with the modules in reading order and their layers (`` `a`, `b` (L0); …``):
/// the same modules in the same layers as `LAYERS`. Catches a module added without its place in
/// the crate's front page (`catalog`, `messages` and `search` were once missing).
#[test]
fn lib_rs_lists_every_module_in_its_layer() {
    let text = read(&root().join("src/lib.rs"));
    let header: Vec<&str> =
        text.lines().take_while(|l| l.starts_with("//!")).map(|l| l.trim_start_matches("//!")).collect();
    let header = header.join(" ");
    let list =
        header.split_once("reading order").and_then(|(_, rest)| rest.split_once("):")).map_or("", |(_, l)| l);
    let mut listed: BTreeMap<String, String> = BTreeMap::new();
    for group in list.split(';') {
        let Some((names, layer)) = group.split_once("(L") else { continue };
        let layer = format!("L{}", layer.chars().take_while(char::is_ascii_digit).collect::<String>());
        for name in backticked(names) {
            listed.insert(name, layer.clone());
        }
    }
    let enforced: BTreeMap<String, String> =
        LAYERS.iter().map(|(l, m, _)| ((*m).to_owned(), (*l).to_owned())).collect();
    assert_eq!(
        listed, enforced,
        "src/lib.rs's module list (left) differs from LAYERS in tests/it/tidy.rs (right)"
    );
}

/// A module table row's "May import" column.
enum DocMay {
    /// "everything in L0–L<n>": every module of layers up to this one.
    Below(String),
    /// The modules named in backticks (parenthesised remarks left out).
    Only(Vec<String>),
}

/// The "Code map" block of the architecture doc: each `L<n>` line's leading module names.
fn doc_code_map(doc: &str, modules: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let Some(start) = doc.find("## Code map") else { return out };
    let mut lines = doc[start..].lines().skip_while(|l| !l.starts_with("```")).skip(1);
    for line in lines.by_ref().take_while(|l| !l.starts_with("```")) {
        let mut words = line.split_whitespace();
        let Some(layer) = words.next().filter(|w| w.starts_with('L')) else { continue };
        for word in words.take_while(|w| modules.contains(*w)) {
            out.insert(word.to_owned(), layer.to_owned());
        }
    }
    out
}

/// The module table of the architecture doc: module → (layer, may import).
fn doc_module_table(doc: &str) -> BTreeMap<String, (String, DocMay)> {
    let mut out = BTreeMap::new();
    let mut in_table = false;
    for line in doc.lines() {
        if line.starts_with("| Module | Layer |") {
            in_table = true;
            continue;
        }
        if !in_table {
            continue;
        }
        if !line.starts_with('|') {
            break;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (Some(module), Some(layer), Some(may)) = (cells.get(1), cells.get(2), cells.get(3)) else {
            continue;
        };
        let Some(module) = module.strip_prefix('`').and_then(|m| m.strip_suffix('`')) else { continue };
        let may = match may.strip_prefix("everything in L0–") {
            Some(top) => DocMay::Below(top.split_whitespace().next().unwrap_or_default().to_owned()),
            None => DocMay::Only(backticked(&without_parentheses(may))),
        };
        out.insert(module.to_owned(), ((*layer).to_owned(), may));
    }
    out
}

/// `text` without its parenthesised parts.
fn without_parentheses(text: &str) -> String {
    let mut depth = 0usize;
    text.chars()
        .filter(|c| {
            match c {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                _ => return depth == 0,
            }
            false
        })
        .collect()
}

/// The words written in backticks in `text`.
fn backticked(text: &str) -> Vec<String> {
    text.split('`').skip(1).step_by(2).map(str::to_owned).collect()
}

#[test]
fn no_should_panic() {
    // Spelled in two pieces so this file does not match itself.
    let attribute = concat!("#[should", "_panic");
    let mut found = Vec::new();
    for dir in ["src", "tests", "benches"] {
        for file in rust_files(&root().join(dir)) {
            for (n, line) in read(&file).lines().enumerate() {
                if line.contains(attribute) {
                    found.push(format!("{}:{}", shown(&file), n + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "`{attribute}]` hides which panic happened; return a Result and assert on the error instead:\n{}",
        found.join("\n")
    );
}

#[test]
fn no_machine_paths_in_tracked_files() {
    // Spelled in pieces so this file does not match itself.
    let machine = [concat!("/wo", "rk/"), concat!("/ro", "ot/"), concat!("/ho", "me/")];
    // The documentation's placeholder user (`docs/tools.md` shows a status result).
    let placeholders = [concat!("/ho", "me/me/")];
    let mut found = Vec::new();
    for file in tracked_files(&["src", "tests", "docs", "benches"]) {
        let Ok(bytes) = std::fs::read(root().join(&file)) else { continue };
        let text = String::from_utf8_lossy(&bytes);
        for (n, line) in text.lines().enumerate() {
            let mut rest = line.to_owned();
            for p in placeholders {
                rest = rest.replace(p, "");
            }
            if let Some(p) = machine.iter().find(|p| rest.contains(*p)) {
                found.push(format!("{file}:{}: `{p}`", n + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "absolute machine paths in tracked files (use paths relative to the checkout or \
         CARGO_MANIFEST_DIR):\n{}",
        found.join("\n")
    );
}

// ---- helpers ----

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `path` relative to the repository root, with `/` separators.
fn shown(path: &Path) -> String {
    let rel = path.strip_prefix(root()).unwrap_or(path);
    rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() && path.extension().is_some_and(|x| x == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The top-level modules of `src/` (`src/x.rs` and `src/x/`), each with its files.
fn top_level_modules() -> BTreeMap<String, Vec<PathBuf>> {
    let src = root().join("src");
    let mut modules: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for entry in std::fs::read_dir(&src).expect("src/ is readable").flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            modules.entry(name).or_default().extend(rust_files(&path));
        } else if let Some(stem) = name.strip_suffix(".rs")
            && stem != "lib"
            && stem != "main"
        {
            modules.entry(stem.to_owned()).or_default().push(path);
        }
    }
    modules
}

/// The module path of a file below `src/`, e.g. `src/vectors/index.rs` → `[vectors, index]`.
fn module_path(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(root().join("src")).expect("a file below src/");
    let mut parts: Vec<String> =
        rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    if let Some(last) = parts.pop() {
        let stem = last.trim_end_matches(".rs");
        if stem != "mod" {
            parts.push(stem.to_owned());
        }
    }
    parts
}

/// Lines that are not comments, numbered from 1.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().map(|(i, l)| (i + 1, l)).filter(|(_, l)| !l.trim_start().starts_with("//"))
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The first position of `needle` in `line` not preceded by an identifier character or `:`.
fn find_word(line: &str, needle: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = line[from..].find(needle).map(|i| i + from) {
        if !line[..i].ends_with(|c: char| is_ident_char(c) || c == ':') {
            return Some(i);
        }
        from = i + needle.len();
    }
    None
}

/// The top-level modules `text` refers to, as `(line, module, snippet)`: `crate::x…`,
/// `crate::{x, y}` and `super::…` chains that climb out of the file's module (`path`); `modules`
/// are the top-level module names.
fn module_references(
    text: &str,
    path: &[String],
    modules: &BTreeSet<String>,
) -> Vec<(usize, String, String)> {
    let resolve = |name: &str| -> Option<String> {
        if modules.contains(name) {
            return Some(name.to_owned());
        }
        ROOT_ITEMS.iter().find(|(item, _)| *item == name).and_then(|(_, m)| m.map(str::to_owned))
    };
    // Comment lines blanked, line structure kept (grouped imports span lines).
    let code: String = text
        .lines()
        .map(|l| if l.trim_start().starts_with("//") { "" } else { l })
        .collect::<Vec<_>>()
        .join("\n");
    let line_of = |pos: usize| code[..pos].matches('\n').count() + 1;
    let mut out = Vec::new();
    for (start, _) in code.match_indices("crate::") {
        if code[..start].ends_with(|c: char| is_ident_char(c) || c == ':') {
            continue;
        }
        let rest = &code[start + "crate::".len()..];
        for (name, snippet) in path_heads(rest) {
            if let Some(module) = resolve(&name) {
                out.push((line_of(start), module, format!("crate::{snippet}")));
            }
        }
    }
    for (start, _) in code.match_indices("super::") {
        if code[..start].ends_with(|c: char| is_ident_char(c) || c == ':') {
            continue;
        }
        let mut rest = &code[start..];
        let mut climbs = 0;
        while let Some(r) = rest.strip_prefix("super::") {
            climbs += 1;
            rest = r;
        }
        // Still inside this module: not a dependency. (Inline `mod` blocks are not modelled, so
        // only names that are real top-level modules count.)
        if climbs < path.len() {
            continue;
        }
        for (name, snippet) in path_heads(rest) {
            if modules.contains(&name) {
                out.push((line_of(start), name, format!("{}{snippet}", "super::".repeat(climbs))));
            }
        }
    }
    out
}

/// The first segment of the path(s) at the start of `rest` (after `crate::`): `x::y` → `x`,
/// `{x, y::z}` → `x`, `y`; each with the text it came from.
fn path_heads(rest: &str) -> Vec<(String, String)> {
    if let Some(group) = rest.strip_prefix('{') {
        let mut depth = 0;
        let mut end = group.len();
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    end = i;
                    break;
                }
                '}' => depth -= 1,
                _ => {}
            }
        }
        let inner = &group[..end];
        let mut heads = Vec::new();
        let mut depth = 0;
        let mut item_start = 0;
        for (i, c) in inner.char_indices().chain(std::iter::once((inner.len(), ','))) {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    let item = inner[item_start..i].trim();
                    let name: String = item.chars().take_while(|c| is_ident_char(*c)).collect();
                    if !name.is_empty() {
                        heads.push((name, item.split_whitespace().collect::<Vec<_>>().join(" ")));
                    }
                    item_start = i + 1;
                }
                _ => {}
            }
        }
        heads
    } else {
        let name: String = rest.chars().take_while(|c| is_ident_char(*c)).collect();
        let snippet: String = rest.chars().take_while(|c| is_ident_char(*c) || *c == ':').collect();
        if name.is_empty() { Vec::new() } else { vec![(name, snippet.trim_end_matches(':').to_owned())] }
    }
}

/// Files git tracks under `dirs` (relative, `/`-separated); without git, every file there except
/// build and cache folders.
fn tracked_files(dirs: &[&str]) -> Vec<String> {
    let listed = std::process::Command::new("git")
        .arg("-C")
        .arg(root())
        .args(["ls-files", "-z", "--"])
        .args(dirs)
        .output()
        .ok()
        .filter(|o| o.status.success() && !o.stdout.is_empty());
    if let Some(out) = listed {
        return String::from_utf8_lossy(&out.stdout)
            .split('\0')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
    }
    let mut files = Vec::new();
    let mut stack: Vec<PathBuf> = dirs.iter().map(|d| root().join(d)).collect();
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() && !name.starts_with('.') && name != "__pycache__" && name != "target" {
                stack.push(path);
            } else if kind.is_file() {
                files.push(shown(&path));
            }
        }
    }
    files.sort();
    files
}
