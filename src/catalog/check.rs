//! `kb_check` / `check` (`docs/reference/catalog-spec.md` §6.4): every issue kind of §6.4.3 with
//! its message (§9.5), in the phases and order of §6.4.4, over a [`CheckInput`] the edge loaded
//! once (`catalog::load::check_input`).
//!
//! Invariants:
//!
//! - Pure: no file, no `git`; everything comes from the [`CheckInput`]. Problems are issues,
//!   never failures (the failures of §6.4.6 happen while loading).
//! - Links are resolved with the `links` module (`links::resolve`), the rules `kb_links` uses.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::config::{CatalogSettings, SettingsProblem};
use super::docs::{DocInfo, FileProblem, IndexRead, index_missing_message};
use super::index::{DocEntry, Index, Resolved, TagEntry, Vocabulary, quoted_list};
use super::{Language, norm};
use crate::links::{Target, resolve};
use crate::messages::{Msg, msg};
use crate::wire::IssueKind;
use crate::workspace::{GlobFilter, nfc};

/// One issue (`docs/reference/catalog-spec.md` §6.4.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Issue {
    /// Root-relative file.
    pub file: String,
    /// Key path, 1-based line, or `""`.
    pub at: String,
    /// The kind.
    pub kind: IssueKind,
    /// One sentence.
    pub message: String,
}

/// Everything a check reads, loaded once per call.
#[derive(Debug, Default)]
pub struct CheckInput {
    /// The configuration file as shown in issues.
    pub config_file: String,
    /// The configuration's problems (phase 1).
    pub problems: Vec<SettingsProblem>,
    /// The settings, `None` when a problem made them unusable.
    pub settings: Option<CatalogSettings>,
    /// Every Markdown file below the root, root-relative (read when the settings are usable).
    pub markdown: Vec<String>,
    /// The index, when the settings name one.
    pub index: Option<IndexState>,
    /// Per-document data of every document whose entries or links are checked, and of the
    /// Markdown files links point to.
    pub docs: HashMap<String, Arc<DocInfo>>,
    /// Whether each local link target exists (a folder counts); see [`link_targets`].
    pub exists: HashMap<String, bool>,
    /// `base` and the files changed since its merge base with `HEAD`.
    pub changed: Option<(String, Vec<String>)>,
}

/// What reading the index gave.
#[derive(Debug)]
pub enum IndexState {
    /// Read (missing, not YAML, or parsed).
    Read(IndexRead),
    /// The `index` setting is refused by the path guard, with the guard's message.
    Refused(String),
}

impl CheckInput {
    /// The parsed index when it has no schema violation (phases 3–6 need one).
    pub fn valid_index(&self) -> Option<&Index> {
        match &self.index {
            Some(IndexState::Read(IndexRead::Parsed(file))) if file.validated.violations.is_empty() => {
                Some(&file.validated.index)
            }
            _ => None,
        }
    }
}

/// Runs the checks. `ignore` adds kinds to `check.ignore` (CLI `--ignore`).
pub fn run(input: &CheckInput, ignore: &[String]) -> Vec<Issue> {
    let mut issues: Vec<Issue> = input
        .problems
        .iter()
        .map(|p| Issue {
            file: input.config_file.clone(),
            at: p.key.clone(),
            kind: p.kind,
            message: p.message.clone(),
        })
        .collect();
    let mut ignored: Vec<String> = ignore.to_vec();
    if let Some(settings) = &input.settings {
        ignored.extend(settings.check_ignore.iter().cloned());
        unmatched_globs(input, settings, &mut issues);
        indexed_phases(input, settings, &mut issues);
    }
    issues.retain(|i| !ignored.iter().any(|k| k == i.kind.as_str()));
    issues
}

/// Phases 2–6, when the settings name an index.
fn indexed_phases(input: &CheckInput, settings: &CatalogSettings, issues: &mut Vec<Issue>) {
    let (Some(state), Some(index_path)) = (&input.index, settings.index.as_deref()) else { return };
    if !index_issues(input, state, settings, index_path, issues) {
        return;
    }
    let Some(index) = input.valid_index() else { return };
    let lang = settings.language;
    entries(input, index, index_path, lang, issues);
    unindexed(input, index, settings, index_path, lang, issues);
    for path in link_order(index, settings, &input.markdown) {
        links(input, &path, lang, issues);
    }
    if let Some((base, changed)) = &input.changed {
        missed_changes(index, index_path, changed, base, lang, issues);
    }
}

/// `config_error` for `scan` / `build.include` patterns that match no Markdown file.
fn unmatched_globs(input: &CheckInput, settings: &CatalogSettings, issues: &mut Vec<Issue>) {
    let lang = settings.language;
    let mut no_match = |key: &str, globs: &[String], fix: Msg| {
        if !globs.is_empty() && matching(&input.markdown, globs).is_empty() {
            let key = settings.key(key);
            let message = msg!(lang, NoMarkdownMatch, key, fix = fix.text(lang));
            issues.push(Issue {
                file: input.config_file.clone(),
                at: key,
                kind: IssueKind::ConfigError,
                message,
            });
        }
    };
    if settings.build.as_ref().is_none_or(|b| b.include != settings.scan) {
        no_match("scan", &settings.scan, Msg::FixScan);
    }
    if let Some(b) = &settings.build {
        no_match("build.include", &b.include, Msg::FixBuild);
    }
}

/// The Markdown files matching `globs` (none for no globs or a bad one).
fn matching(markdown: &[String], globs: &[String]) -> Vec<String> {
    match GlobFilter::new(globs, &[]) {
        Ok(f) if !globs.is_empty() => markdown.iter().filter(|p| f.matches(p)).cloned().collect(),
        _ => Vec::new(),
    }
}

/// Phase 2: the index's syntax and schema. `false` when the later phases cannot run.
fn index_issues(
    input: &CheckInput,
    state: &IndexState,
    settings: &CatalogSettings,
    index_path: &str,
    issues: &mut Vec<Issue>,
) -> bool {
    let lang = settings.language;
    let config_issue = |kind: IssueKind, message: String| Issue {
        file: input.config_file.clone(),
        at: settings.key("index"),
        kind,
        message,
    };
    match state {
        IndexState::Read(IndexRead::Missing(path)) => {
            issues.push(config_issue(IssueKind::MissingIndex, index_missing_message(lang, path)));
            false
        }
        IndexState::Read(IndexRead::InvalidYaml { line, message }) => {
            let at = line.to_string();
            issues.push(Issue {
                file: index_path.to_owned(),
                at,
                kind: IssueKind::InvalidYaml,
                message: message.clone(),
            });
            false
        }
        IndexState::Refused(message) => {
            issues.push(config_issue(IssueKind::ConfigError, message.clone()));
            false
        }
        IndexState::Read(IndexRead::Parsed(file)) => {
            for v in &file.validated.violations {
                let (at, message) = (v.at.clone(), v.text.clone());
                issues.push(Issue { file: index_path.to_owned(), at, kind: IssueKind::SchemaError, message });
            }
            file.validated.violations.is_empty()
        }
    }
}

/// Phase 4: Markdown files of `scan` that the index does not list.
fn unindexed(
    input: &CheckInput,
    index: &Index,
    settings: &CatalogSettings,
    index_path: &str,
    lang: Language,
    issues: &mut Vec<Issue>,
) {
    // Compared in NFC: an entry typed composed names a file macOS stored decomposed.
    let indexed: HashSet<std::borrow::Cow<'_, str>> = index.docs.iter().map(|d| nfc(&d.path)).collect();
    let out = settings.build.as_ref().map(|b| b.out.as_str());
    let mut paths: Vec<String> = matching(&input.markdown, &settings.scan)
        .into_iter()
        .filter(|p| !indexed.contains(&nfc(p)) && p != index_path && Some(p.as_str()) != out)
        .collect();
    paths.sort();
    for path in paths {
        let message = msg!(lang, UnindexedDoc, path);
        issues.push(Issue { file: path, at: String::new(), kind: IssueKind::UnindexedDoc, message });
    }
}

/// Phase 3 context: the index file, the language and the issues so far.
struct Entries<'a> {
    file: &'a str,
    lang: Language,
    out: &'a mut Vec<Issue>,
}

impl Entries<'_> {
    fn push(&mut self, at: String, kind: IssueKind, message: String) {
        self.out.push(Issue { file: self.file.to_owned(), at, kind, message });
    }

    /// `duplicate_id` and `duplicate_alias` of entry `i` of `list`.
    fn duplicates(
        &mut self,
        seen: &mut FirstSeen,
        list: &str,
        i: usize,
        id: (&str, &str),
        names: (&str, &[String]),
    ) {
        let (lang, at) = (self.lang, format!("{list}[{i}]"));
        let (shown_id, key) = id;
        if let Some(j) = seen.id(&norm_if(list, shown_id), i) {
            self.push(
                format!("{at}.{key}"),
                IssueKind::DuplicateId,
                msg!(lang, DuplicateId, id = shown_id, list, j),
            );
        }
        for (k, j) in seen.names(names.0, names.1, i) {
            let alias = &names.1[k];
            self.push(
                format!("{at}.aliases[{k}]"),
                IssueKind::DuplicateAlias,
                msg!(lang, DuplicateAlias, alias, list, j),
            );
        }
    }
}

/// Tags are unique by `norm(name)`; documents and terms by their exact ID.
fn norm_if(list: &str, id: &str) -> String {
    if list == "tags" { norm(id) } else { id.to_owned() }
}

/// The first entry of each ID and of each normalised name or alias of one list.
#[derive(Default)]
struct FirstSeen {
    ids: HashMap<String, usize>,
    names: HashMap<String, usize>,
}

impl FirstSeen {
    /// The earlier entry with this ID; otherwise `i` becomes its first.
    fn id(&mut self, id: &str, i: usize) -> Option<usize> {
        match self.ids.get(id) {
            Some(&j) => Some(j),
            None => {
                self.ids.insert(id.to_owned(), i);
                None
            }
        }
    }

    /// The aliases (by position) an earlier entry already uses, with that entry; then records
    /// `name` and the aliases for the entries after `i`.
    fn names(&mut self, name: &str, aliases: &[String], i: usize) -> Vec<(usize, usize)> {
        let normed: Vec<String> = aliases.iter().map(|a| norm(a)).collect();
        let taken =
            normed.iter().enumerate().filter_map(|(k, n)| self.names.get(n).map(|&j| (k, j))).collect();
        self.names.entry(norm(name)).or_insert(i);
        for n in normed {
            self.names.entry(n).or_insert(i);
        }
        taken
    }
}

/// Phase 3: the entries of `docs`, `terms` and `tags`.
fn entries(input: &CheckInput, index: &Index, file: &str, lang: Language, out: &mut Vec<Issue>) {
    let vocab = Vocabulary::new(index);
    let ids: HashSet<&str> = index.docs.iter().map(|d| d.id.as_str()).collect();
    // (from, to) of every `change_together` record.
    let together: HashSet<(&str, &str)> = index
        .docs
        .iter()
        .flat_map(|d| d.related.iter().map(move |r| (d, r)))
        .filter(|(_, r)| r.kind.as_deref() == Some("change_together"))
        .map(|(d, r)| (d.id.as_str(), r.to.as_str()))
        .collect();
    let mut e = Entries { file, lang, out };
    let mut seen = FirstSeen::default();
    for (i, d) in index.docs.iter().enumerate() {
        doc_file(&mut e, input.docs.get(&d.path).and_then(|info| info.problem), &d.path, i);
        e.duplicates(&mut seen, "docs", i, (&d.id, "id"), (&d.title, &d.aliases));
        doc_tags(&mut e, &vocab, d, i);
        doc_relations(&mut e, &ids, &together, d, i);
    }
    let mut seen = FirstSeen::default();
    for (i, t) in index.terms.iter().enumerate() {
        e.duplicates(&mut seen, "terms", i, (&t.id, "id"), (&t.term, &t.aliases));
        for (k, to) in t.see.iter().enumerate().filter(|(_, to)| !ids.contains(to.as_str())) {
            e.push(
                format!("terms[{i}].see[{k}]"),
                IssueKind::UnknownRelationTarget,
                msg!(lang, UnknownRelationTarget, to),
            );
        }
    }
    let mut seen = FirstSeen::default();
    for (i, t) in vocab.entries().iter().enumerate() {
        e.duplicates(&mut seen, "tags", i, (&t.name, "name"), (&t.name, &t.aliases));
        deprecation(&mut e, &vocab, t, i);
    }
}

/// `invalid_path` / `missing_doc` of `docs[i]`.
fn doc_file(e: &mut Entries<'_>, problem: Option<FileProblem>, path: &str, i: usize) {
    let lang = e.lang;
    let rule = match problem {
        Some(FileProblem::Refused) => Msg::RuleSymlink,
        Some(FileProblem::NotRegular) => Msg::RuleNotRegular,
        Some(FileProblem::Missing) => {
            e.push(format!("docs[{i}].path"), IssueKind::MissingDoc, msg!(lang, MissingDoc, path, i));
            return;
        }
        Some(FileProblem::Unreadable) | None => return,
    };
    let message = msg!(lang, InvalidDocPath, path, rule = rule.text(lang), i);
    e.push(format!("docs[{i}].path"), IssueKind::InvalidPath, message);
}

/// `unknown_tag` and `deprecated_tag` of `docs[i]`.
fn doc_tags(e: &mut Entries<'_>, vocab: &Vocabulary<'_>, d: &DocEntry, i: usize) {
    let lang = e.lang;
    if vocab.declared() {
        for (k, t) in d.tags.iter().enumerate() {
            if let Resolved::Unknown(tag) = vocab.resolve(&t.name) {
                let close = quoted_list(&vocab.close(&tag), lang);
                e.push(
                    format!("docs[{i}].tags[{k}]"),
                    IssueKind::UnknownTag,
                    msg!(lang, UnknownTag, tag, close),
                );
            }
        }
    }
    for (k, t) in d.tags.iter().enumerate() {
        if let Resolved::Known(x) = vocab.resolve(&t.name)
            && let Some(new) = vocab.entries()[x].deprecated.as_deref()
        {
            let message = msg!(lang, DeprecatedTag, tag = t.name, new = vocab.canonical(new));
            e.push(format!("docs[{i}].tags[{k}]"), IssueKind::DeprecatedTag, message);
        }
    }
}

/// The relation issues of `docs[i]`, kind by kind as §6.4.4 orders them.
fn doc_relations(
    e: &mut Entries<'_>,
    ids: &HashSet<&str>,
    together: &HashSet<(&str, &str)>,
    d: &DocEntry,
    i: usize,
) {
    let lang = e.lang;
    let at = |k: usize| format!("docs[{i}].related[{k}]");
    for (k, r) in d.related.iter().enumerate().filter(|(_, r)| !ids.contains(r.to.as_str())) {
        e.push(at(k), IssueKind::UnknownRelationTarget, msg!(lang, UnknownRelationTarget, to = r.to));
    }
    for (k, _) in d.related.iter().enumerate().filter(|(_, r)| r.to == d.id) {
        e.push(at(k), IssueKind::SelfRelation, msg!(lang, SelfRelation, id = d.id));
    }
    for (k, r) in d.related.iter().enumerate() {
        if let Some(j) = d.related[..k].iter().position(|o| o.to == r.to && o.kind == r.kind) {
            let kind = r.kind.clone().unwrap_or_else(|| Msg::Untyped.text(lang));
            e.push(
                at(k),
                IssueKind::DuplicateRelation,
                msg!(lang, DuplicateRelation, type = kind, to = r.to, k = j),
            );
        }
    }
    for (k, r) in d.related.iter().enumerate() {
        let together_kind = r.kind.as_deref() == Some("change_together") && r.to != d.id;
        if together_kind && ids.contains(r.to.as_str()) && !together.contains(&(r.to.as_str(), d.id.as_str()))
        {
            let message = msg!(lang, AsymmetricChangeTogether, a = d.id, b = r.to);
            e.push(at(k), IssueKind::AsymmetricChangeTogether, message);
        }
    }
}

/// `invalid_deprecation` of `tags[i]`.
fn deprecation(e: &mut Entries<'_>, vocab: &Vocabulary<'_>, t: &TagEntry, i: usize) {
    let Some(new) = &t.deprecated else { return };
    let tags = vocab.entries();
    let problem = match vocab.resolve(new) {
        Resolved::Unknown(_) => Msg::DeprecationUnknown,
        Resolved::Known(j) if norm(&tags[j].name) == norm(&t.name) => Msg::DeprecationItself,
        Resolved::Known(j) if tags[j].deprecated.is_some() => Msg::DeprecationDeprecated,
        Resolved::Known(_) => return,
    };
    let lang = e.lang;
    let message = msg!(lang, InvalidDeprecation, name = t.name, new, problem = problem.text(lang));
    e.push(format!("tags[{i}].deprecated"), IssueKind::InvalidDeprecation, message);
}

/// Phase 5's documents, in order: the index's, then each `build.include` pattern's matches
/// (code-point order, minus `build.exclude`), each once.
pub fn link_order(index: &Index, settings: &CatalogSettings, markdown: &[String]) -> Vec<String> {
    let mut checked: HashSet<String> = HashSet::new();
    let mut order: Vec<String> = Vec::new();
    for d in &index.docs {
        if checked.insert(d.path.clone()) {
            order.push(d.path.clone());
        }
    }
    let Some(b) = &settings.build else { return order };
    let Ok(all) = GlobFilter::new(&b.include, &b.exclude) else { return order };
    for pattern in &b.include {
        let one = GlobFilter::new(std::slice::from_ref(pattern), &b.exclude).unwrap_or_else(|_| all.clone());
        let mut hits: Vec<String> = markdown.iter().filter(|p| one.matches(p)).cloned().collect();
        hits.sort();
        for p in hits {
            if checked.insert(p.clone()) {
                order.push(p);
            }
        }
    }
    order
}

/// The local paths the links of `docs` point to, each once: the target, and for an `.html` or
/// `.htm` target also its `.md` twin (a link to the exported page of a document).
pub fn link_targets(docs: &[Arc<DocInfo>], paths: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    for (info, path) in docs.iter().zip(paths) {
        for link in &info.links.links {
            let Target::Local { path: target, .. } = resolve(path, &link.raw) else { continue };
            for p in std::iter::once(target.clone()).chain(html_twin(&target)) {
                if seen.insert(p.clone()) {
                    out.push(p);
                }
            }
        }
    }
    out
}

/// `a/b.md` for `a/b.html` or `a/b.htm` (any case).
fn html_twin(target: &str) -> Option<String> {
    let lower = target.to_ascii_lowercase();
    let stem = lower.strip_suffix(".html").or_else(|| lower.strip_suffix(".htm"))?;
    Some(format!("{}.md", &target[..stem.len()]))
}

/// `broken_link` and `missing_anchor` of one document, by line.
fn links(input: &CheckInput, path: &str, lang: Language, out: &mut Vec<Issue>) {
    let Some(info) = input.docs.get(path).filter(|i| i.problem.is_none()) else { return };
    let mut records: Vec<&crate::links::LinkRecord> = info.links.links.iter().collect();
    records.sort_by_key(|l| l.line);
    let exists = |p: &str| input.exists.get(p).copied().unwrap_or(false);
    for link in records {
        let mut issue = |kind: IssueKind, message: String| {
            out.push(Issue { file: path.to_owned(), at: link.line.to_string(), kind, message });
        };
        let (target, fragment) = match resolve(path, &link.raw) {
            Target::External(_) => continue,
            Target::Invalid { .. } => {
                issue(IssueKind::BrokenLink, msg!(lang, BrokenLink, target = link.raw));
                continue;
            }
            Target::Local { path: target, fragment } => (target, fragment),
        };
        let target = match html_twin(&target).filter(|twin| !exists(&target) && exists(twin)) {
            Some(twin) => twin,
            None if exists(&target) => target,
            None => {
                issue(IssueKind::BrokenLink, msg!(lang, BrokenLink, target));
                continue;
            }
        };
        let Some(fragment) = fragment.filter(|f| !f.is_empty()) else { continue };
        if !target.to_ascii_lowercase().ends_with(".md") {
            continue;
        }
        let anchors = input.docs.get(&target).map(|i| i.links.anchors.as_slice()).unwrap_or_default();
        let lower = fragment.to_lowercase();
        if !anchors.iter().any(|a| *a == fragment || a.to_lowercase() == lower) {
            issue(IssueKind::MissingAnchor, msg!(lang, MissingAnchor, target, fragment));
        }
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
        for r in d.related.iter().filter(|r| r.kind.as_deref() == Some("change_together")) {
            let Some(b) = ids.iter().position(|id| *id == r.to) else { continue };
            let pair = (a.min(b), a.max(b));
            if a != b && !pairs.contains(&pair) {
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
            .unwrap_or_else(|| Msg::NoCondition.text(lang));
        let (c, u) = (&index.docs[changed_doc].path, &index.docs[other].path);
        out.push(Issue {
            file: file.to_owned(),
            at: format!("docs[{holder}].related[{k}]"),
            kind: IssueKind::MissedChangeTogether,
            message: msg!(lang, MissedChangeTogether, changed = c, unchanged = u, when, base),
        });
    }
}
