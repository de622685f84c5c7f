//! `kb_check` / `check` (`catalog.md` §6.4): every issue kind of §6.4.3 with its message
//! (§9.5), in the phases and order of §6.4.4.
//!
//! Invariants:
//!
//! - Never writes anything; problems are issues, never failures. The only failures are the
//!   ones of §6.4.6 (no configuration, an unreadable `config`, a bad `base`).
//! - Links are resolved with the `links` module (`links::resolve`, `links::extract`), the rules
//!   `kb_links` uses.

use std::collections::{HashMap, HashSet};

use super::config::{SettingsEnv, inspect_settings, no_configuration};
use super::docs::{DocCache, FileProblem, IndexRead, index_missing_message, read_index};
use super::index::{Index, Resolved, Vocabulary, quoted_list};
use super::{Language, git, norm};
use crate::error::{ErrorCode, Result};
use crate::links::{Target, resolve};
use crate::workspace::{GlobFilter, PathContext, Workspace, nfc};

/// One issue (`catalog.md` §6.4.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Issue {
    /// Root-relative file.
    pub file: String,
    /// Key path, 1-based line, or `""`.
    pub at: String,
    /// The kind.
    pub kind: &'static str,
    /// One sentence.
    pub message: String,
}

/// Runs the checks. `ignore` adds kinds to `check.ignore` (CLI `--ignore`).
pub fn run_check(
    env: &SettingsEnv<'_>,
    cache: &DocCache,
    config: Option<&str>,
    base: Option<&str>,
    ignore: &[String],
) -> Result<Vec<Issue>> {
    let ws = env.workspace;
    let Some(inspected) = inspect_settings(env, config)? else { return Err(no_configuration(env)) };
    let lang = inspected.settings.as_ref().map(|s| s.language).unwrap_or_default();
    let changed = match base {
        Some(b) => Some(git::changed_files(ws.root(), b, lang)?),
        None => None,
    };
    let mut issues = Vec::new();
    let cfg_file = inspected.file.clone();
    // Phase 1: configuration.
    for p in &inspected.problems {
        issues.push(Issue {
            file: cfg_file.clone(),
            at: p.key.clone(),
            kind: p.kind,
            message: p.message.clone(),
        });
    }
    let mut ignored: Vec<String> = ignore.to_vec();
    let Some(settings) = inspected.settings else { return Ok(filter(issues, &ignored)) };
    ignored.extend(settings.check_ignore.iter().cloned());
    let markdown = ws.scan_markdown(&GlobFilter::new(&["**/*.md".to_owned()], &[])?)?;
    let matching = |globs: &[String]| -> Vec<String> {
        match GlobFilter::new(globs, &[]) {
            Ok(f) if !globs.is_empty() => {
                markdown.iter().map(|e| e.path.as_str().to_owned()).filter(|p| f.matches(p)).collect()
            }
            _ => Vec::new(),
        }
    };
    let mut no_match = |key: &str, globs: &[String], fix: (&str, &str)| {
        if !globs.is_empty() && matching(globs).is_empty() {
            let key = settings.key(key);
            issues.push(Issue {
                file: cfg_file.clone(),
                at: key.clone(),
                kind: "config_error",
                message: lang.pick(
                    format!("Setting `{key}` matches no Markdown file; {}.", fix.0),
                    format!("設定の `{key}` に当たる文書が 0 件です。{}。", fix.1),
                ),
            });
        }
    };
    let scan_is_own = settings.build.as_ref().is_none_or(|b| b.include != settings.scan);
    if scan_is_own {
        no_match(
            "scan",
            &settings.scan,
            ("fix the patterns or remove scan", "パターンを直すか、scan を消してください"),
        );
    }
    if let Some(b) = &settings.build {
        no_match(
            "build.include",
            &b.include,
            ("fix the patterns or remove build", "パターンを直すか、build を消してください"),
        );
    }
    let Some(index_path) = settings.index.clone() else { return Ok(filter(issues, &ignored)) };

    // Phase 2: index syntax and schema.
    let file = match read_index(ws, &settings) {
        Ok(IndexRead::Missing(path)) => {
            issues.push(Issue {
                file: cfg_file,
                at: settings.key("index"),
                kind: "missing_index",
                message: index_missing_message(lang, &path),
            });
            return Ok(filter(issues, &ignored));
        }
        Ok(IndexRead::InvalidYaml { line, message }) => {
            issues.push(Issue { file: index_path, at: line.to_string(), kind: "invalid_yaml", message });
            return Ok(filter(issues, &ignored));
        }
        Ok(IndexRead::Parsed(file)) => file,
        Err(e) if e.code == ErrorCode::InvalidPath => {
            issues.push(Issue {
                file: cfg_file,
                at: settings.key("index"),
                kind: "config_error",
                message: e.message,
            });
            return Ok(filter(issues, &ignored));
        }
        Err(e) => return Err(e),
    };
    if !file.validated.violations.is_empty() {
        for v in &file.validated.violations {
            issues.push(Issue {
                file: index_path.clone(),
                at: v.at.clone(),
                kind: "schema_error",
                message: v.text.clone(),
            });
        }
        return Ok(filter(issues, &ignored));
    }
    let index = &file.validated.index;

    // Phase 3: entries.
    entries(ws, cache, index, &index_path, lang, &mut issues);

    // Phase 4: unindexed files.
    // Compared in NFC: an entry typed composed names a file macOS stored decomposed.
    let indexed: HashSet<std::borrow::Cow<'_, str>> = index.docs.iter().map(|d| nfc(&d.path)).collect();
    let out = settings.build.as_ref().map(|b| b.out.clone());
    let mut unindexed: Vec<String> = matching(&settings.scan)
        .into_iter()
        .filter(|p| !indexed.contains(&nfc(p)) && *p != index_path && Some(p) != out.as_ref())
        .collect();
    unindexed.sort();
    for path in unindexed {
        let message = lang.pick(
            format!("`{path}` is not in the index; add it with kb_update_index or leave it out of scan."),
            format!("`{path}` は索引にありません。kb_update_index で足すか、scan から外してください。"),
        );
        issues.push(Issue { file: path, at: String::new(), kind: "unindexed_doc", message });
    }

    // Phase 5: links.
    let mut checked: HashSet<String> = HashSet::new();
    let mut order: Vec<String> = Vec::new();
    for d in &index.docs {
        if checked.insert(d.path.clone()) {
            order.push(d.path.clone());
        }
    }
    if let Some(b) = &settings.build
        && let Ok(f) = GlobFilter::new(&b.include, &b.exclude)
    {
        for pattern in &b.include {
            let one =
                GlobFilter::new(std::slice::from_ref(pattern), &b.exclude).unwrap_or_else(|_| f.clone());
            let mut hits: Vec<String> =
                markdown.iter().map(|e| e.path.as_str().to_owned()).filter(|p| one.matches(p)).collect();
            hits.sort();
            for p in hits {
                if checked.insert(p.clone()) {
                    order.push(p);
                }
            }
        }
    }
    for path in &order {
        links(ws, cache, path, lang, &mut issues);
    }

    // Phase 6: missed changes.
    if let (Some(changed), Some(base)) = (changed, base) {
        missed_changes(index, &index_path, &changed, base, lang, &mut issues);
    }
    Ok(filter(issues, &ignored))
}

fn filter(issues: Vec<Issue>, ignored: &[String]) -> Vec<Issue> {
    issues.into_iter().filter(|i| !ignored.iter().any(|k| k == i.kind)).collect()
}

fn entries(
    ws: &Workspace,
    cache: &DocCache,
    index: &Index,
    file: &str,
    lang: Language,
    out: &mut Vec<Issue>,
) {
    let vocab = Vocabulary::new(index);
    let mut push = |at: String, kind: &'static str, message: String| {
        out.push(Issue { file: file.to_owned(), at, kind, message });
    };
    let ids: HashSet<&str> = index.docs.iter().map(|d| d.id.as_str()).collect();
    // First entry of each ID, and of each normalised title or alias (for the later entries).
    let mut first_id: HashMap<&str, usize> = HashMap::new();
    let mut first_name: HashMap<String, usize> = HashMap::new();
    let mut change_together: HashSet<(&str, &str)> = HashSet::new();
    for d in &index.docs {
        for r in d.related.iter().filter(|r| r.kind.as_deref() == Some("change_together")) {
            change_together.insert((d.id.as_str(), r.to.as_str()));
        }
    }
    for (i, d) in index.docs.iter().enumerate() {
        let at = format!("docs[{i}]");
        match cache.get(ws, &d.path).problem {
            Some(FileProblem::Invalid) => {
                let rule = match ws.rel_path(&d.path, PathContext::Any) {
                    Err(_) => lang.pick("passes through a symbolic link", "シンボリックリンクを通っています"),
                    Ok(_) => lang.pick("is not a regular file", "通常のファイルではありません"),
                };
                let path = &d.path;
                push(
                    format!("{at}.path"),
                    "invalid_path",
                    lang.pick(
                        format!("`{path}` {rule}; point docs[{i}].path to a Markdown file inside the root."),
                        format!("`{path}` は{rule}。docs[{i}].path をルートの中の Markdown のファイルにしてください。"),
                    ),
                );
            }
            Some(FileProblem::Missing) => {
                let path = &d.path;
                push(
                    format!("{at}.path"),
                    "missing_doc",
                    lang.pick(
                        format!("`{path}` was not found; restore the document or remove `docs[{i}]` from the index."),
                        format!("`{path}` が見つかりません。文書を戻すか、索引の `docs[{i}]` を消してください。"),
                    ),
                );
            }
            _ => {}
        }
        match first_id.get(d.id.as_str()) {
            Some(&j) => push(format!("{at}.id"), "duplicate_id", duplicate_id(&d.id, "docs", j, lang)),
            None => {
                first_id.insert(&d.id, i);
            }
        }
        let names: Vec<String> = d.aliases.iter().map(|a| norm(a)).collect();
        for (k, alias) in d.aliases.iter().enumerate() {
            if let Some(&j) = first_name.get(&names[k]) {
                push(
                    format!("{at}.aliases[{k}]"),
                    "duplicate_alias",
                    duplicate_alias(alias, "docs", j, lang),
                );
            }
        }
        first_name.entry(norm(&d.title)).or_insert(i);
        for n in names {
            first_name.entry(n).or_insert(i);
        }
        if vocab.declared() {
            for (k, t) in d.tags.iter().enumerate() {
                if let Resolved::Unknown(tag) = vocab.resolve(&t.name) {
                    let close = quoted_list(&vocab.close(&tag), lang);
                    push(
                        format!("{at}.tags[{k}]"),
                        "unknown_tag",
                        lang.pick(
                            format!("Tag `{tag}` is not in the tag vocabulary; use a vocabulary tag (close: {close}) or add it to tags."),
                            format!("タグ `{tag}` は語彙にありません。語彙のタグ（近いもの: {close}）を使うか、tags に足してください。"),
                        ),
                    );
                }
            }
        }
        for (k, t) in d.tags.iter().enumerate() {
            if let Resolved::Known(e) = vocab.resolve(&t.name)
                && let Some(new) = vocab.entries()[e].deprecated.as_deref()
            {
                let (tag, new) = (&t.name, vocab.canonical(new));
                push(
                    format!("{at}.tags[{k}]"),
                    "deprecated_tag",
                    lang.pick(
                        format!("Tag `{tag}` is deprecated; replace it with `{new}`."),
                        format!("タグ `{tag}` はやめたタグです。`{new}` に付け替えてください。"),
                    ),
                );
            }
        }
        for (k, r) in d.related.iter().enumerate() {
            if !ids.contains(r.to.as_str()) {
                push(format!("{at}.related[{k}]"), "unknown_relation_target", unknown_target(&r.to, lang));
            }
        }
        for (k, r) in d.related.iter().enumerate() {
            if r.to == d.id {
                let id = &d.id;
                push(
                    format!("{at}.related[{k}]"),
                    "self_relation",
                    lang.pick(
                        format!("`{id}` is related to itself; remove this relation."),
                        format!("`{id}` が自分自身に関連しています。この関連を消してください。"),
                    ),
                );
            }
        }
        for (k, r) in d.related.iter().enumerate() {
            if let Some(j) = d.related[..k].iter().position(|o| o.to == r.to && o.kind == r.kind) {
                let ty = r.kind.clone().unwrap_or_else(|| lang.pick("untyped", "種類なし").to_owned());
                let to = &r.to;
                push(
                    format!("{at}.related[{k}]"),
                    "duplicate_relation",
                    lang.pick(
                        format!(
                            "This repeats the {ty} relation to `{to}` of `related[{j}]`; remove one of them."
                        ),
                        format!(
                            "`related[{j}]` と同じ `{to}` への {ty} の関連です。どちらかを消してください。"
                        ),
                    ),
                );
            }
        }
        for (k, r) in d.related.iter().enumerate() {
            if r.kind.as_deref() != Some("change_together") || r.to == d.id {
                continue;
            }
            if !ids.contains(r.to.as_str()) {
                continue;
            }
            if !change_together.contains(&(r.to.as_str(), d.id.as_str())) {
                let (a, b) = (&d.id, &r.to);
                push(
                    format!("{at}.related[{k}]"),
                    "asymmetric_change_together",
                    lang.pick(
                        format!("`{a}` lists `{b}` as change_together but `{b}` does not list `{a}`; add the same relation to `{b}`."),
                        format!("`{a}` は `{b}` を change_together にしていますが、`{b}` には `{a}` がありません。`{b}` にも書いてください。"),
                    ),
                );
            }
        }
    }
    let mut term_ids: HashMap<&str, usize> = HashMap::new();
    let mut term_names: HashMap<String, usize> = HashMap::new();
    for (i, t) in index.terms.iter().enumerate() {
        let at = format!("terms[{i}]");
        match term_ids.get(t.id.as_str()) {
            Some(&j) => push(format!("{at}.id"), "duplicate_id", duplicate_id(&t.id, "terms", j, lang)),
            None => {
                term_ids.insert(&t.id, i);
            }
        }
        let spellings: Vec<String> = t.aliases.iter().map(|a| norm(a)).collect();
        for (k, alias) in t.aliases.iter().enumerate() {
            if let Some(&j) = term_names.get(&spellings[k]) {
                push(
                    format!("{at}.aliases[{k}]"),
                    "duplicate_alias",
                    duplicate_alias(alias, "terms", j, lang),
                );
            }
        }
        term_names.entry(norm(&t.term)).or_insert(i);
        for a in spellings {
            term_names.entry(a).or_insert(i);
        }
        for (k, to) in t.see.iter().enumerate() {
            if !ids.contains(to.as_str()) {
                push(format!("{at}.see[{k}]"), "unknown_relation_target", unknown_target(to, lang));
            }
        }
    }
    let tags = vocab.entries();
    let mut first_tag: HashMap<String, usize> = HashMap::new();
    let mut first_spelling: HashMap<String, usize> = HashMap::new();
    for (i, t) in tags.iter().enumerate() {
        let at = format!("tags[{i}]");
        let n = norm(&t.name);
        match first_tag.get(&n) {
            Some(&j) => push(format!("{at}.name"), "duplicate_id", duplicate_id(&t.name, "tags", j, lang)),
            None => {
                first_tag.insert(n.clone(), i);
            }
        }
        let spellings: Vec<String> = t.aliases.iter().map(|a| norm(a)).collect();
        for (k, alias) in t.aliases.iter().enumerate() {
            if let Some(&j) = first_spelling.get(&spellings[k]) {
                push(
                    format!("{at}.aliases[{k}]"),
                    "duplicate_alias",
                    duplicate_alias(alias, "tags", j, lang),
                );
            }
        }
        first_spelling.entry(n.clone()).or_insert(i);
        for a in spellings {
            first_spelling.entry(a).or_insert(i);
        }
        if let Some(new) = &t.deprecated {
            let problem = match vocab.resolve(new) {
                Resolved::Unknown(_) => Some(lang.pick("not in the vocabulary", "語彙にありません")),
                Resolved::Known(j) if norm(&tags[j].name) == n => {
                    Some(lang.pick("the tag itself", "自分自身です"))
                }
                Resolved::Known(j) if tags[j].deprecated.is_some() => {
                    Some(lang.pick("deprecated as well", "それ自体がやめたタグです"))
                }
                Resolved::Known(_) => None,
            };
            if let Some(problem) = problem {
                let name = &t.name;
                push(
                    format!("{at}.deprecated"),
                    "invalid_deprecation",
                    lang.pick(
                        format!("Tag `{name}` is deprecated in favour of `{new}`, which is {problem}; point deprecated to a current tag of the vocabulary."),
                        format!("タグ `{name}` の振り替え先 `{new}` は{problem}。語彙の、やめていないタグにしてください。"),
                    ),
                );
            }
        }
    }
}

fn duplicate_id(id: &str, list: &str, j: usize, lang: Language) -> String {
    lang.pick(
        format!("ID `{id}` is already used by `{list}[{j}]`; give this entry a unique ID."),
        format!("ID `{id}` は `{list}[{j}]` と重なっています。この項目に別の ID を付けてください。"),
    )
}

fn duplicate_alias(alias: &str, list: &str, j: usize, lang: Language) -> String {
    lang.pick(
        format!("Alias `{alias}` is also used by `{list}[{j}]`; keep it on one entry only."),
        format!("別名 `{alias}` は `{list}[{j}]` でも使われています。どちらか 1 つにだけ残してください。"),
    )
}

fn unknown_target(to: &str, lang: Language) -> String {
    lang.pick(
        format!("`{to}` is not a document ID in the index; fix the ID or add the document."),
        format!("`{to}` は索引の文書の ID にありません。ID を直すか、文書を索引に足してください。"),
    )
}

/// `broken_link` and `missing_anchor` of one document, by line.
fn links(ws: &Workspace, cache: &DocCache, path: &str, lang: Language, out: &mut Vec<Issue>) {
    let info = cache.get(ws, path);
    if info.problem.is_some() {
        return;
    }
    let mut records: Vec<&crate::links::LinkRecord> = info.links.links.iter().collect();
    records.sort_by_key(|l| l.line);
    for link in records {
        let broken = |target: &str| {
            lang.pick(
                format!("Link target `{target}` does not exist; fix the link or restore the file."),
                format!("リンク先 `{target}` がありません。リンクを直すか、ファイルを戻してください。"),
            )
        };
        match resolve(path, &link.raw) {
            Target::External(_) => {}
            Target::Invalid { .. } => out.push(Issue {
                file: path.to_owned(),
                at: link.line.to_string(),
                kind: "broken_link",
                message: broken(&link.raw),
            }),
            Target::Local { path: target, fragment } => {
                let mut target = target;
                let mut exists = file_exists(ws, &target);
                if !exists {
                    let lower = target.to_ascii_lowercase();
                    let stem = lower
                        .strip_suffix(".html")
                        .or_else(|| lower.strip_suffix(".htm"))
                        .map(|s| target[..s.len()].to_owned());
                    if let Some(md) = stem.map(|s| format!("{s}.md"))
                        && file_exists(ws, &md)
                    {
                        target = md;
                        exists = true;
                    }
                }
                if !exists {
                    out.push(Issue {
                        file: path.to_owned(),
                        at: link.line.to_string(),
                        kind: "broken_link",
                        message: broken(&target),
                    });
                    continue;
                }
                let Some(fragment) = fragment.filter(|f| !f.is_empty()) else { continue };
                if !target.to_ascii_lowercase().ends_with(".md") {
                    continue;
                }
                let anchors = &cache.get(ws, &target).links.anchors;
                let lower = fragment.to_lowercase();
                if !anchors.iter().any(|a| *a == fragment || a.to_lowercase() == lower) {
                    out.push(Issue {
                        file: path.to_owned(),
                        at: link.line.to_string(),
                        kind: "missing_anchor",
                        message: lang.pick(
                            format!("`{target}` has no heading or anchor `#{fragment}`; fix the link or the heading."),
                            format!("`{target}` に見出しかアンカー `#{fragment}` がありません。リンクか見出しを直してください。"),
                        ),
                    });
                }
            }
        }
    }
}

fn file_exists(ws: &Workspace, path: &str) -> bool {
    match ws.rel_path(path, PathContext::Any).and_then(|r| ws.stat(&r)) {
        Ok(_) => true,
        // A folder exists too.
        Err(e) => e.code == ErrorCode::UnsupportedFormat,
    }
}

/// Phase 6 (§6.4.5).
fn missed_changes(
    index: &Index,
    file: &str,
    changed: &[String],
    base: &str,
    lang: Language,
    out: &mut Vec<Issue>,
) {
    let ids: Vec<&str> = index.docs.iter().map(|d| d.id.as_str()).collect();
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for (a, d) in index.docs.iter().enumerate() {
        for r in &d.related {
            if r.kind.as_deref() != Some("change_together") {
                continue;
            }
            let Some(b) = ids.iter().position(|id| *id == r.to) else { continue };
            if a == b {
                continue;
            }
            let pair = (a.min(b), a.max(b));
            if !pairs.contains(&pair) {
                pairs.push(pair);
            }
        }
    }
    pairs.sort();
    // The records of `x` to `y` (indices into `x.related`).
    let records = |x: usize, y: usize| -> Vec<usize> {
        index.docs[x]
            .related
            .iter()
            .enumerate()
            .filter(|(_, r)| r.kind.as_deref() == Some("change_together") && r.to == index.docs[y].id)
            .map(|(k, _)| k)
            .collect()
    };
    let side_changed = |x: usize, y: usize| -> bool {
        let doc = &index.docs[x];
        if changed.contains(&doc.path) {
            return true;
        }
        let globs: Vec<String> =
            records(x, y).iter().flat_map(|&k| doc.related[k].paths.iter().cloned()).collect();
        !globs.is_empty() && GlobFilter::new(&globs, &[]).is_ok_and(|f| changed.iter().any(|c| f.matches(c)))
    };
    for (a, b) in pairs {
        let (ca, cb) = (side_changed(a, b), side_changed(b, a));
        if ca == cb {
            continue;
        }
        let (changed_doc, other) = if ca { (a, b) } else { (b, a) };
        let (holder, k) = match records(changed_doc, other).first() {
            Some(&k) => (changed_doc, k),
            None => (other, records(other, changed_doc).first().copied().unwrap_or(0)),
        };
        let when = index.docs[holder]
            .related
            .get(k)
            .and_then(|r| r.when.clone())
            .unwrap_or_else(|| lang.pick("no condition recorded", "条件の記載なし").to_owned());
        let (c, u) = (&index.docs[changed_doc].path, &index.docs[other].path);
        out.push(Issue {
            file: file.to_owned(),
            at: format!("docs[{holder}].related[{k}]"),
            kind: "missed_change_together",
            message: lang.pick(
                format!("`{c}` changed since `{base}` but `{u}`, which must change together with it ({when}), did not; update `{u}` or undo the change."),
                format!("`{base}` から `{c}` は変わりましたが、一緒に直す `{u}`（{when}）は変わっていません。`{u}` も直すか、変更を戻してください。"),
            ),
        });
    }
}
