//! The edge of the catalog: everything a call reads from files and `git`, loaded once per call
//! into the in-memory model the queries and checks work on (`check::CheckInput`, the index and
//! its documents' data).
//!
//! Invariants:
//!
//! - The only module of the catalog's queries that touches files or runs `git` (besides the
//!   settings loader, the index reader and the cache of `docs.rs` it uses, and the update
//!   transaction); `find.rs` and `check.rs` are pure.
//! - Each document's data is read once per call (through the per-document cache).

use std::collections::HashMap;
use std::sync::Arc;

use super::check::{self, CheckInput, IndexState, Issue};
use super::config::{SettingsEnv, inspect_settings, no_configuration};
use super::docs::{DocCache, DocInfo, read_index};
use super::git;
use crate::error::{ErrorCode, Result};
use crate::workspace::{GlobFilter, PathContext, Workspace};

/// Runs `kb_check`: loads its input, then checks it. `ignore` adds kinds to `check.ignore`.
pub fn run_check(
    env: &SettingsEnv<'_>,
    cache: &DocCache,
    config: Option<&str>,
    base: Option<&str>,
    ignore: &[String],
) -> Result<Vec<Issue>> {
    let input = check_input(env, cache, config, base)?;
    Ok(check::run(&input, ignore))
}

/// Everything `kb_check` reads: the settings and their problems, the `base` comparison, the
/// Markdown files, the index, and the data of every document whose entries or links are checked
/// and of every local link target. Fails only as §6.4.6 says (no configuration, an unreadable
/// `config`, a bad `base`) or when a file cannot be listed.
pub fn check_input(
    env: &SettingsEnv<'_>,
    cache: &DocCache,
    config: Option<&str>,
    base: Option<&str>,
) -> Result<CheckInput> {
    let ws = env.workspace;
    let Some(inspected) = inspect_settings(env, config)? else { return Err(no_configuration(env)) };
    let lang = inspected.settings.as_ref().map(|s| s.language).unwrap_or_default();
    let changed = match base {
        Some(b) => Some((b.to_owned(), git::changed_files(ws.root(), b, lang)?)),
        None => None,
    };
    let mut input = CheckInput {
        config_file: inspected.file,
        problems: inspected.problems,
        settings: None,
        changed,
        ..CheckInput::default()
    };
    let Some(settings) = inspected.settings else { return Ok(input) };
    let all_markdown = GlobFilter::new(&["**/*.md".to_owned()], &[])?;
    input.markdown =
        ws.scan_markdown(&all_markdown)?.into_iter().map(|e| e.path.as_str().to_owned()).collect();
    if settings.index.is_some() {
        input.index = Some(match read_index(ws, &settings, cache) {
            Ok(read) => IndexState::Read(read),
            Err(e) if e.code == ErrorCode::InvalidPath => IndexState::Refused(e.message),
            Err(e) => return Err(e),
        });
    }
    input.settings = Some(settings);
    load_documents(ws, cache, &mut input);
    Ok(input)
}

/// The documents of phases 3 and 5 and their link targets, when the index is valid.
fn load_documents(ws: &Workspace, cache: &DocCache, input: &mut CheckInput) {
    let (Some(index), Some(settings)) = (input.valid_index(), input.settings.as_ref()) else { return };
    let order = check::link_order(index, settings, &input.markdown);
    let paths: Vec<&str> = order.iter().map(String::as_str).collect();
    let infos = cache.get_all(ws, &paths);
    let targets = check::link_targets(&infos, &order);
    let mut docs: HashMap<String, Arc<DocInfo>> = order.into_iter().zip(infos).collect();
    let mut exists = HashMap::new();
    for target in targets {
        let there = file_exists(ws, &target);
        if there && target.to_ascii_lowercase().ends_with(".md") && !docs.contains_key(&target) {
            docs.insert(target.clone(), cache.get(ws, &target));
        }
        exists.insert(target, there);
    }
    input.docs = docs;
    input.exists = exists;
}

/// Whether `path` exists below the root (a folder counts; a path the guard refuses does not).
fn file_exists(ws: &Workspace, path: &str) -> bool {
    match ws.rel_path(path, PathContext::Any).and_then(|r| ws.stat(&r)) {
        Ok(_) => true,
        Err(e) => e.code == ErrorCode::UnsupportedFormat,
    }
}

/// The index of a query tool (E5–E8 are errors; its `validated.index` and `model()` are what
/// the queries read) and the data of its documents, in order.
pub fn query_input(
    ws: &Workspace,
    cache: &DocCache,
    settings: &super::CatalogSettings,
) -> Result<(Arc<super::docs::IndexFile>, Vec<Arc<DocInfo>>)> {
    let file = super::docs::load_valid_index(ws, settings, cache)?;
    let paths: Vec<&str> = file.validated.index.docs.iter().map(|d| d.path.as_str()).collect();
    let infos = cache.get_all(ws, &paths);
    Ok((file, infos))
}
