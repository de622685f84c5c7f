//! `kb_find_docs` (§6.1) and `kb_list_tags` (§6.2): matching, relations (§5), order, pages and
//! cursors, views, and the Markdown and JSON results.
//!
//! Invariants:
//!
//! - Matching, `tag_counts` and `total_chars` always cover every match, never just the page.
//! - JSON keys come in the order of the specification (serde_json keeps insertion order).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use base64::Engine as _;
use serde_json::{Map, Value, json};

use super::docs::DocInfo;
use super::index::{DocEntry, Index, Resolved, Vocabulary, close_names, inverse, quoted_list};
use super::model::Model;
use super::{Language, norm};
use crate::error::{Error, Result};
use crate::links::{Target, html_stem, resolve};
use crate::messages::{Msg, msg};

/// The fields `include`/`exclude` may name, in the order of `omitted`.
pub const OPTIONAL_FIELDS: [&str; 4] = ["path", "aliases", "related", "referenced_by"];
/// The fields every view returns.
pub const BRIEF_FIELDS: [&str; 5] = ["id", "title", "description", "tags", "chars"];

/// A `kb_find_docs` call, validated.
#[derive(Clone, Debug, Default)]
pub struct FindQuery {
    /// `text` (already known to have a non-empty `norm`), or `None`.
    pub text: Option<String>,
    /// `tags`.
    pub tags: Vec<String>,
    /// `any_tags`.
    pub any_tags: Vec<String>,
    /// `related_to`.
    pub related_to: Option<String>,
    /// `limit`, 1..=100.
    pub limit: usize,
    /// `cursor`, as given.
    pub cursor: Option<String>,
    /// `view`: `brief`, `standard` or `full`.
    pub view: String,
    /// `include`.
    pub include: Vec<String>,
    /// `exclude`.
    pub exclude: Vec<String>,
    /// `count_only`.
    pub count_only: bool,
    /// `format: json`.
    pub json: bool,
    /// The answer budget, or `None` for an answer of any size (the CLI).
    pub budget: Option<Budget>,
}

/// The answer budget of a catalog call (`docs/tools.md`, "Bounded answers"): its bytes and the
/// engine's pager cut, which the catalog applies to its rows and tag counts.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Most bytes of the answer's text (Markdown, or the JSON serialised).
    pub bytes: usize,
    /// How many of the values, from the first, take at most the given bytes of JSON (at least one).
    pub fit: fn(&[Value], usize) -> usize,
}

/// Bytes kept, beyond the measured envelope, for the cursor, the notice and the table header.
const RESERVE_BYTES: usize = 768;

/// A result: the text block and, for JSON, the structured content.
pub struct Answer {
    /// The one text block.
    pub text: String,
    /// `structuredContent` (JSON format only).
    pub structured: Option<Value>,
}

/// Relations between the documents of an index (§5), computed once per call.
pub struct Relations {
    /// Per document, the documents its body refers to (links or alias mentions).
    body: Vec<HashSet<usize>>,
    /// First index of each ID.
    by_id: HashMap<String, usize>,
}

impl Relations {
    /// Computes the body relations from the documents' derived data.
    pub fn new(index: &Index, infos: &[Arc<DocInfo>]) -> Relations {
        let mut by_path: HashMap<&str, usize> = HashMap::new();
        let mut by_id = HashMap::new();
        for (i, d) in index.docs.iter().enumerate() {
            by_path.entry(d.path.as_str()).or_insert(i);
            by_id.entry(d.id.clone()).or_insert(i);
        }
        // Every alias of every document in one automaton; each document's prose is scanned once.
        let mut owners: Vec<(usize, bool)> = Vec::new();
        let mut patterns: Vec<String> = Vec::new();
        for (x, d) in index.docs.iter().enumerate() {
            for a in d.aliases.iter().map(|a| norm(a)).filter(|a| !a.is_empty()) {
                owners.push((x, a.chars().all(|c| c.is_ascii_alphanumeric())));
                patterns.push(a);
            }
        }
        let automaton = aho_corasick::AhoCorasick::new(&patterns).ok();
        let mut body = Vec::with_capacity(index.docs.len());
        for (i, d) in index.docs.iter().enumerate() {
            let mut set = HashSet::new();
            let info = &infos[i];
            for link in &info.links.links {
                if let Target::Local { path, .. } = resolve(&d.path, &link.raw) {
                    let target = by_path.get(path.as_str()).copied().or_else(|| {
                        html_stem(&path).and_then(|stem| by_path.get(format!("{stem}.md").as_str()).copied())
                    });
                    if let Some(t) = target.filter(|t| *t != i) {
                        set.insert(t);
                    }
                }
            }
            if let Some(ac) = automaton.as_ref().filter(|_| !info.prose.is_empty()) {
                let prose = info.prose.as_str();
                for m in ac.find_overlapping_iter(prose) {
                    let (x, word) = owners[m.pattern().as_usize()];
                    if x == i || set.contains(&x) {
                        continue;
                    }
                    let bounded = !word || {
                        let before = prose[..m.start()].chars().next_back();
                        let after = prose[m.end()..].chars().next();
                        !before.is_some_and(|c| c.is_ascii_alphanumeric())
                            && !after.is_some_and(|c| c.is_ascii_alphanumeric())
                    };
                    if bounded {
                        set.insert(x);
                    }
                }
            }
            body.push(set);
        }
        Relations { body, by_id }
    }

    /// The rows' relations between `r` and `x` (§6.1.6 `relations`), outgoing first.
    pub fn between(&self, index: &Index, r: usize, x: usize) -> Vec<Value> {
        let (rd, xd) = (&index.docs[r], &index.docs[x]);
        let outgoing =
            rd.related.iter().filter(|rel| rel.to == xd.id).map(|rel| (rel.kind.as_deref(), &rel.when));
        let incoming = xd
            .related
            .iter()
            .filter(|rel| rel.to == rd.id)
            .map(|rel| (rel.kind.as_deref().map(inverse), &rel.when));
        let mut out = side("outgoing", outgoing.collect(), self.body[r].contains(&x));
        out.extend(side("incoming", incoming.collect(), self.body[x].contains(&r)));
        out
    }

    /// §5.3: distinct documents with an outgoing relation to `y`.
    pub fn referenced_by(&self, index: &Index, y: usize) -> usize {
        let id = &index.docs[y].id;
        (0..index.docs.len())
            .filter(|&d| {
                d != y && (index.docs[d].related.iter().any(|r| &r.to == id) || self.body[d].contains(&y))
            })
            .count()
    }

    /// The first document with this ID.
    pub fn find(&self, id: &str) -> Option<usize> {
        self.by_id.get(id).copied()
    }
}

/// One direction of [`Relations::between`]: the recorded relations, or else one untyped body
/// relation when the body refers to the other document.
fn side(direction: &str, recorded: Vec<(Option<&str>, &Option<String>)>, body: bool) -> Vec<Value> {
    if recorded.is_empty() {
        return if body {
            vec![json!({"direction": direction, "type": null, "when": null})]
        } else {
            Vec::new()
        };
    }
    recorded
        .into_iter()
        .map(|(kind, when)| json!({"direction": direction, "type": kind, "when": when}))
        .collect()
}

/// E13.
fn bad_cursor(lang: Language) -> Error {
    Error::invalid_argument(Msg::CursorDamaged.text(lang))
}

/// Decodes a cursor into (offset, filter).
fn decode_cursor(cursor: &str, lang: Language) -> Result<(usize, String)> {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor.trim_end_matches('='))
        .map_err(|_| bad_cursor(lang))?;
    let v: Value = serde_json::from_slice(&bytes).map_err(|_| bad_cursor(lang))?;
    let o = v.as_object().ok_or_else(|| bad_cursor(lang))?;
    if o.get("v").and_then(Value::as_i64) != Some(1) {
        return Err(bad_cursor(lang));
    }
    let offset = o.get("offset").and_then(Value::as_u64).ok_or_else(|| bad_cursor(lang))?;
    let filter = o.get("filter").and_then(Value::as_str).ok_or_else(|| bad_cursor(lang))?;
    Ok((offset as usize, filter.to_owned()))
}

fn encode_cursor(offset: usize, filter: &str) -> String {
    let json = json!({"v": 1, "offset": offset, "filter": filter}).to_string();
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json)
}

/// The tags a call asks for: per requested tag, the keys a document may carry (the tag's own
/// key first, then its replacements), and the warnings about them.
struct Requested {
    all: Vec<Vec<String>>,
    any: Vec<Vec<String>>,
    /// Every key of `all` and `any`.
    wanted: HashSet<String>,
    warnings: Vec<String>,
}

impl Requested {
    fn new(vocab: &Vocabulary<'_>, q: &FindQuery, lang: Language) -> Requested {
        let mut warned: HashSet<String> = HashSet::new();
        let mut warnings = Vec::new();
        let all = resolve_tags(vocab, &q.tags, lang, &mut warned, &mut warnings);
        let any = resolve_tags(vocab, &q.any_tags, lang, &mut warned, &mut warnings);
        let wanted = all.iter().chain(&any).flatten().cloned().collect();
        Requested { all, any, wanted, warnings }
    }

    /// The canonical filter of §6.1.4 as a hash: cursors carry it.
    fn filter_hash(&self, text: Option<&str>, related_to: Option<&String>) -> String {
        let canonical = |list: &[Vec<String>]| {
            let mut keys: Vec<String> = list.iter().map(|k| k[0].clone()).collect();
            keys.sort();
            keys.dedup();
            keys
        };
        let filter_json = json!({
            "text": text,
            "tags": canonical(&self.all),
            "any_tags": canonical(&self.any),
            "related_to": related_to,
        });
        crate::text::xxh64_hex(filter_json.to_string().as_bytes())
    }

    /// Whether a document with these tag keys passes `tags` and `any_tags`.
    fn carried_by(&self, keys: &[(String, bool)]) -> bool {
        let carries = |want: &Vec<String>| keys.iter().any(|(k, _)| want.contains(k));
        self.all.iter().all(carries) && (self.any.is_empty() || self.any.iter().any(carries))
    }

    /// Whether a document carries one of the requested tags as a main tag (it comes first).
    fn main_of(&self, keys: &[(String, bool)]) -> bool {
        !self.wanted.is_empty() && keys.iter().any(|(k, m)| *m && self.wanted.contains(k))
    }
}

/// The keys of `list`, deduplicated, with one warning per unknown or deprecated tag (once per
/// call: `warned` is shared by `tags` and `any_tags`).
fn resolve_tags(
    vocab: &Vocabulary<'_>,
    list: &[String],
    lang: Language,
    warned: &mut HashSet<String>,
    warnings: &mut Vec<String>,
) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    for t in list {
        let r = vocab.resolve(t);
        let keys = vocab.with_replacements(&r);
        if out.iter().any(|k| k[0] == keys[0]) {
            continue;
        }
        if vocab.declared()
            && warned.insert(keys[0].clone())
            && let Some(w) = tag_warning(vocab, t, &r, lang)
        {
            warnings.push(w);
        }
        out.push(keys);
    }
    out
}

/// The warning about a requested tag (`docs/reference/catalog-spec.md` §9.4), if any.
fn tag_warning(vocab: &Vocabulary<'_>, given: &str, r: &Resolved, lang: Language) -> Option<String> {
    match r {
        Resolved::Unknown(tag) => {
            let close = vocab.close(tag);
            Some(if close.is_empty() {
                msg!(lang, TagUnknownNoClose, tag)
            } else {
                msg!(lang, TagUnknownClose, tag, close = quoted_list(&close, lang))
            })
        }
        Resolved::Known(i) => {
            let new = vocab.entries()[*i].deprecated.as_deref()?;
            Some(msg!(lang, TagDeprecatedMatched, tag = given, new = vocab.canonical(new)))
        }
    }
}

/// The offset a cursor resumes at (0 without one); E13 or E14 for a cursor that does not fit.
fn page_offset(q: &FindQuery, filter: &str, lang: Language) -> Result<usize> {
    let Some(cursor) = q.cursor.as_deref() else { return Ok(0) };
    let (offset, f) = decode_cursor(cursor, lang)?;
    if f != filter {
        return Err(Error::invalid_argument(Msg::CursorOtherFilter.text(lang)));
    }
    Ok(offset)
}

/// The position of `related_to`, or E18 naming up to three close IDs.
fn related_position(
    index: &Index,
    q: &FindQuery,
    relations: Option<&Relations>,
    lang: Language,
) -> Result<Option<usize>> {
    let (Some(id), Some(rel)) = (&q.related_to, relations) else { return Ok(None) };
    if let Some(i) = rel.find(id) {
        return Ok(Some(i));
    }
    let ids: Vec<&str> = index.docs.iter().map(|d| d.id.as_str()).collect();
    let mut close: Vec<String> = Vec::new();
    for i in close_names(id, &ids, usize::MAX) {
        if !close.contains(&ids[i].to_owned()) {
            close.push(ids[i].to_owned());
        }
    }
    close.truncate(3);
    Err(Error::not_found(msg!(lang, UnknownRelatedTo, id, close = quoted_list(&close, lang))))
}

/// The matching documents in result order (main-tag carriers first) and, with `related_to`,
/// each row's relations.
fn matching(
    index: &Index,
    model: &Model,
    req: &Requested,
    text: Option<&str>,
    related: Option<(usize, &Relations)>,
) -> (Vec<usize>, HashMap<usize, Vec<Value>>) {
    let mut main_first = Vec::new();
    let mut rest = Vec::new();
    let mut row_relations: HashMap<usize, Vec<Value>> = HashMap::new();
    for i in 0..index.docs.len() {
        let keys = &model.keys[i];
        if !text.is_none_or(|t| model.text[i].iter().any(|s| s.contains(t))) || !req.carried_by(keys) {
            continue;
        }
        if let Some((r, rel)) = related {
            let between = if r == i { Vec::new() } else { rel.between(index, r, i) };
            if between.is_empty() {
                continue;
            }
            row_relations.insert(i, between);
        }
        if req.main_of(keys) { main_first.push(i) } else { rest.push(i) }
    }
    main_first.extend(rest);
    (main_first, row_relations)
}

/// Runs `kb_find_docs` over a valid index and its [`Model`]; `infos[i]` is the data of
/// `index.docs[i]`.
pub fn find_docs(
    index: &Index,
    model: &Model,
    infos: &[Arc<DocInfo>],
    q: &FindQuery,
    lang: Language,
) -> Result<Answer> {
    let vocab = Vocabulary::new(index);
    let req = Requested::new(&vocab, q, lang);
    let text = q.text.as_deref().map(norm).filter(|t| !t.is_empty());
    let filter = req.filter_hash(text.as_deref(), q.related_to.as_ref());
    let offset = page_offset(q, &filter, lang)?;
    let needs_relations =
        q.related_to.is_some() || (!q.count_only && field_set(q).iter().any(|f| f == "referenced_by"));
    let relations = needs_relations.then(|| Relations::new(index, infos));
    let related = related_position(index, q, relations.as_ref(), lang)?.zip(relations.as_ref());
    let (matches, mut row_relations) = matching(index, model, &req, text.as_deref(), related);
    let mut totals = Totals {
        total: matches.len(),
        chars: matches.iter().filter_map(|&i| infos[i].chars).sum(),
        tag_counts: tag_counts(model, &matches),
        tags_counted: 0,
    };
    totals.tags_counted = totals.tag_counts.len();
    if let Some(b) = q.budget {
        cut_tag_counts(&mut totals.tag_counts, b);
    }
    if q.count_only {
        return Ok(count_answer(&totals, req.warnings, q.json, lang));
    }
    let fields = field_set(q);
    let page: Vec<usize> = matches.iter().copied().skip(offset).take(q.limit).collect();
    let referenced_by = |i: usize| relations.as_ref().map_or(0, |rel| rel.referenced_by(index, i));
    let mut rows: Vec<Value> = page
        .iter()
        .map(|&i| {
            doc_row(&index.docs[i], infos[i].chars, &fields, referenced_by(i), row_relations.remove(&i))
        })
        .collect();
    let whole = rows.len();
    if let Some(b) = q.budget {
        let envelope =
            page_answer(&totals, Page::empty(&fields), req.warnings.clone(), true, lang).text.len();
        rows.truncate((b.fit)(&rows, b.bytes.saturating_sub(envelope + RESERVE_BYTES)));
    }
    let end = offset.saturating_add(rows.len());
    let next_cursor = (end < totals.total && !rows.is_empty()).then(|| encode_cursor(end, &filter));
    let cut = (rows.len() < whole).then_some((q.budget.map_or(0, |b| b.bytes), offset + 1));
    let page = Page { rows, next_cursor, fields, related_to: q.related_to.is_some(), cut };
    Ok(page_answer(&totals, page, req.warnings, q.json, lang))
}

/// Keeps the most frequent tag counts that fit in a quarter of the budget: the rest of the
/// answer is the page of documents.
fn cut_tag_counts(counts: &mut Vec<Value>, b: Budget) {
    if serde_json::to_vec(&*counts).map_or(0, |v| v.len()) > b.bytes / 4 {
        let keep = (b.fit)(counts, b.bytes / 4);
        counts.truncate(keep);
    }
}

/// The notice of an answer the budget cut (rows or tag counts), or `None`.
fn cut_notice(t: &Totals, page: Option<&Page>, lang: Language) -> Option<String> {
    let mut parts = Vec::new();
    if let Some((Some((budget, first)), returned)) = page.map(|p| (p.cut, p.rows.len())) {
        let last = first + returned - 1;
        parts.push(msg!(lang, DocsPageCut, budget, first, last, total = t.total));
    }
    if t.tag_counts.len() < t.tags_counted {
        parts.push(msg!(lang, TagCountsCut, shown = t.tag_counts.len(), total = t.tags_counted));
    }
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// What every answer counts: over all matches, never just the page.
struct Totals {
    total: usize,
    chars: usize,
    tag_counts: Vec<Value>,
    /// Tags counted before the budget cut `tag_counts`.
    tags_counted: usize,
}

/// One page of rows.
struct Page {
    rows: Vec<Value>,
    next_cursor: Option<String>,
    fields: Vec<String>,
    related_to: bool,
    /// `(budget, first row's 1-based position)` when the budget cut the page short.
    cut: Option<(usize, usize)>,
}

impl Page {
    /// A page without rows, to measure what surrounds them.
    fn empty(fields: &[String]) -> Page {
        Page { rows: Vec::new(), next_cursor: None, fields: fields.to_vec(), related_to: false, cut: None }
    }
}

/// The `count_only` answer (§6.1.7).
fn count_answer(t: &Totals, warnings: Vec<String>, json_format: bool, lang: Language) -> Answer {
    let mut structured =
        json!({"total": t.total, "total_chars": t.chars, "tag_counts": t.tag_counts, "warnings": warnings});
    let notice = cut_notice(t, None, lang);
    mark_truncated(&mut structured, notice.as_deref());
    let mut text = msg!(lang, CountOnlySummary, total = t.total, chars = t.chars);
    let mut trailing = Vec::new();
    if !t.tag_counts.is_empty() {
        trailing.push(tag_counts_line(&t.tag_counts, lang));
    }
    trailing.extend(warnings);
    trailing.extend(notice);
    finish(&mut text, None, &trailing);
    answer(text, structured, json_format)
}

/// One result row: the brief fields, the requested optional ones, and `relations`.
fn doc_row(
    d: &DocEntry,
    chars: Option<usize>,
    fields: &[String],
    referenced_by: usize,
    relations: Option<Vec<Value>>,
) -> Value {
    let mut row = Map::new();
    row.insert("id".into(), json!(d.id));
    row.insert("title".into(), json!(d.title));
    row.insert("description".into(), json!(d.description));
    row.insert(
        "tags".into(),
        Value::Array(d.tags.iter().map(|t| json!({"name": t.name, "main": t.main})).collect()),
    );
    row.insert("chars".into(), json!(chars));
    for f in OPTIONAL_FIELDS.iter().filter(|f| fields.iter().any(|x| x == *f)) {
        let value = match *f {
            "path" => json!(d.path),
            "aliases" => json!(d.aliases),
            "related" => Value::Array(d.related.iter().map(relation_record).collect()),
            _ => json!(referenced_by),
        };
        row.insert((*f).into(), value);
    }
    if let Some(rel) = relations {
        row.insert("relations".into(), Value::Array(rel));
    }
    Value::Object(row)
}

/// A recorded relation as JSON (`paths` only when it has some).
fn relation_record(r: &super::index::Relation) -> Value {
    let mut o = Map::new();
    o.insert("to".into(), json!(r.to));
    o.insert("type".into(), json!(r.kind));
    o.insert("when".into(), json!(r.when));
    if !r.paths.is_empty() {
        o.insert("paths".into(), json!(r.paths));
    }
    Value::Object(o)
}

/// The answer for a page (§6.1.6 JSON, §6.1.9 Markdown).
fn page_answer(t: &Totals, page: Page, warnings: Vec<String>, json_format: bool, lang: Language) -> Answer {
    let hint = page.next_cursor.as_ref().map(|_| Msg::MoreDocuments.text(lang));
    let omitted: Vec<Value> = OPTIONAL_FIELDS
        .iter()
        .filter(|f| !page.fields.iter().any(|x| x == *f))
        .map(|f| json!({"field": f, "how": format!("include: [\"{f}\"]")}))
        .collect();
    let returned = page.rows.len();
    let notice = cut_notice(t, Some(&page), lang);
    let mut structured = json!({
        "total": t.total,
        "returned": returned,
        "total_chars": t.chars,
        "next_cursor": page.next_cursor,
        "hint": hint,
        "tag_counts": t.tag_counts,
        "warnings": warnings,
        "omitted": omitted,
        "docs": page.rows,
    });
    mark_truncated(&mut structured, notice.as_deref());
    if json_format {
        return answer(String::new(), structured, true);
    }
    let cursor = page.next_cursor.as_deref().unwrap_or("null");
    let mut text = msg!(lang, PageSummary, total = t.total, returned, chars = t.chars, cursor);
    let table = (returned > 0).then(|| docs_table(&structured["docs"], &page.fields, page.related_to, lang));
    let mut trailing = Vec::new();
    if t.total > 0 {
        if !t.tag_counts.is_empty() {
            trailing.push(tag_counts_line(&t.tag_counts, lang));
        }
        if !omitted.is_empty() && table.is_some() {
            trailing.push(omitted_line(&omitted, lang));
        }
    }
    trailing.extend(warnings);
    if t.total > 0
        && let Some(h) = hint
    {
        trailing.push(h);
    }
    trailing.extend(notice);
    finish(&mut text, table, &trailing);
    answer(text, Value::Null, false)
}

/// Adds `truncated` and `notice` to the JSON of an answer the budget cut (absent otherwise, so
/// an uncut answer keeps exactly the specified keys).
fn mark_truncated(structured: &mut Value, notice: Option<&str>) {
    if let (Some(n), Some(o)) = (notice, structured.as_object_mut()) {
        o.insert("truncated".into(), json!(true));
        o.insert("notice".into(), json!(n));
    }
}

/// `Omitted: path (include: ["path"]), …`.
fn omitted_line(omitted: &[Value], lang: Language) -> String {
    let items: Vec<String> = omitted
        .iter()
        .map(|o| {
            let (field, how) = (o["field"].as_str().unwrap_or(""), o["how"].as_str().unwrap_or(""));
            msg!(lang, OmittedField, field, how)
        })
        .collect();
    msg!(lang, OmittedLine, items = items.join(lang.list_sep()))
}

/// Joins the blocks with one empty line and ends with LF.
fn finish(text: &mut String, table: Option<String>, trailing: &[String]) {
    if let Some(t) = table {
        text.push_str("\n\n");
        text.push_str(t.trim_end_matches('\n'));
    }
    if !trailing.is_empty() {
        text.push_str("\n\n");
        text.push_str(&trailing.join("\n"));
    }
    text.push('\n');
}

fn answer(text: String, structured: Value, json: bool) -> Answer {
    if json {
        Answer { text: structured.to_string(), structured: Some(structured) }
    } else {
        Answer { text, structured: None }
    }
}

/// The field set: view fields ∪ include − exclude (brief fields always).
fn field_set(q: &FindQuery) -> Vec<String> {
    let mut fields: Vec<String> = match q.view.as_str() {
        "standard" => vec!["path".into(), "aliases".into()],
        "full" => OPTIONAL_FIELDS.iter().map(|s| (*s).to_owned()).collect(),
        _ => Vec::new(),
    };
    for f in &q.include {
        if !fields.contains(f) {
            fields.push(f.clone());
        }
    }
    fields.retain(|f| !q.exclude.contains(f));
    fields
}

/// The tags of the matches with how many matches carry each (§6.1.6 `tag_counts`): most
/// frequent first, then vocabulary order, then unknown tags by name.
fn tag_counts(model: &Model, matches: &[usize]) -> Vec<Value> {
    // key id → (count, count entry of the first match that carried it)
    let mut counts: Vec<(usize, usize)> = vec![(0, 0); model.key_count];
    for &i in matches {
        for &(key, entry) in &model.counted[i] {
            let c = &mut counts[key];
            if c.0 == 0 {
                c.1 = entry;
            }
            c.0 += 1;
        }
    }
    let mut list: Vec<(usize, String, Option<usize>)> = counts
        .into_iter()
        .filter(|c| c.0 > 0)
        .map(|(n, entry)| (n, model.entries[entry].0.clone(), model.entries[entry].1))
        .collect();
    list.sort_by(|a, b| {
        b.0.cmp(&a.0).then_with(|| match (a.2, b.2) {
            (Some(x), Some(y)) => x.cmp(&y),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => a.1.cmp(&b.1),
        })
    });
    list.into_iter().map(|(count, name, _)| json!({"name": name, "count": count})).collect()
}

fn tag_counts_line(counts: &[Value], lang: Language) -> String {
    let items: Vec<String> =
        counts.iter().map(|c| format!("{} {}", c["name"].as_str().unwrap_or(""), c["count"])).collect();
    msg!(lang, TagCountsLine, items = items.join(lang.list_sep()))
}

/// A cell: `|` escaped, CR/LF/tab as spaces.
pub fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\r', '\n', '\t'], " ")
}

/// `| a | b |`.
pub fn row(cells: &[String]) -> String {
    format!("| {} |", cells.join(" | "))
}

/// The columns of the documents table: the brief fields, the requested optional ones, and
/// `relations` with `related_to`.
fn doc_columns(fields: &[String], relations: bool) -> Vec<(&'static str, Msg)> {
    let mut columns = vec![
        ("id", Msg::ColId),
        ("title", Msg::ColTitle),
        ("description", Msg::ColDescription),
        ("tags", Msg::ColTags),
        ("chars", Msg::ColChars),
    ];
    for (f, header) in [
        ("path", Msg::ColPath),
        ("aliases", Msg::ColAliases),
        ("related", Msg::ColRelated),
        ("referenced_by", Msg::ColReferencedBy),
    ] {
        if fields.iter().any(|x| x == f) {
            columns.push((f, header));
        }
    }
    if relations {
        columns.push(("relations", Msg::ColRelations));
    }
    columns
}

fn docs_table(docs: &Value, fields: &[String], relations: bool, lang: Language) -> String {
    let columns = doc_columns(fields, relations);
    let mut out = vec![
        row(&columns.iter().map(|(_, header)| header.text(lang)).collect::<Vec<_>>()),
        row(&vec!["---".to_owned(); columns.len()]),
    ];
    for d in docs.as_array().into_iter().flatten() {
        let cells: Vec<String> = columns.iter().map(|(f, _)| cell(&cell_text(f, &d[*f], lang))).collect();
        out.push(row(&cells));
    }
    out.join("\n")
}

/// The text of one cell of the documents table.
fn cell_text(field: &str, v: &Value, lang: Language) -> String {
    let items = || v.as_array().into_iter().flatten();
    let joined = |parts: Vec<String>| parts.join(lang.list_sep());
    match field {
        "tags" => joined(
            items()
                .map(|t| {
                    let name = t["name"].as_str().unwrap_or("");
                    if t["main"].as_bool() == Some(true) {
                        msg!(lang, MainTag, name)
                    } else {
                        name.to_owned()
                    }
                })
                .collect(),
        ),
        "aliases" => joined(items().filter_map(Value::as_str).map(str::to_owned).collect()),
        "related" => joined(
            items()
                .map(|r| {
                    let to = r["to"].as_str().unwrap_or("");
                    match r["type"].as_str() {
                        Some(t) => msg!(lang, TypedRelation, to, type = t),
                        None => to.to_owned(),
                    }
                })
                .collect(),
        ),
        "relations" => joined(
            items()
                .map(|r| {
                    let dir = r["direction"].as_str().unwrap_or("");
                    match r["type"].as_str() {
                        Some(t) => format!("{dir} {t}"),
                        None => dir.to_owned(),
                    }
                })
                .collect(),
        ),
        _ => match v {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            _ => String::new(),
        },
    }
}

/// One page of `kb_list_tags`, as the engine's pager cut it.
pub struct TagsPage {
    /// The tags of this page.
    pub tags: Vec<Value>,
    /// The cursor of the next page; `None` on the last page.
    pub next_cursor: Option<String>,
    /// 1-based position of the first tag of the page.
    pub first: usize,
    /// Tags over all pages.
    pub total: usize,
}

/// The answer of `kb_list_tags` for one page: the table (or the JSON), and on a cut page the
/// notice and `next_cursor` (JSON: `truncated`, `next_cursor`, `notice`).
pub fn tags_answer(page: TagsPage, json_format: bool, lang: Language) -> Answer {
    let notice = page.next_cursor.as_ref().map(|_| {
        let last = page.first + page.tags.len() - 1;
        msg!(lang, TagsPageCut, first = page.first, last, total = page.total)
    });
    let mut structured = json!({ "tags": page.tags });
    if let (Some(n), Some(c), Some(o)) = (&notice, &page.next_cursor, structured.as_object_mut()) {
        o.insert("truncated".into(), json!(true));
        o.insert("next_cursor".into(), json!(c));
        o.insert("notice".into(), json!(n));
    }
    if json_format {
        return answer(String::new(), structured, true);
    }
    let mut text = tags_table(&page.tags, lang);
    if let (Some(n), Some(c)) = (notice, page.next_cursor) {
        text.push('\n');
        text.push_str(&n);
        text.push_str(&format!("\nnext_cursor: {c}\n"));
    }
    Answer { text, structured: None }
}

/// The vocabulary entries `query` keeps, as `kb_list_tags` rows, in vocabulary order.
pub fn tag_rows(index: &Index, model: &Model, query: Option<&str>) -> Vec<Value> {
    let q = query.map(norm).filter(|q| !q.is_empty());
    let counts = &model.tag_docs;
    let mut tags: Vec<Value> = Vec::new();
    for (i, e) in index.tags.as_deref().unwrap_or(&[]).iter().enumerate() {
        if !model.tag_listed[i]
            || !q.as_deref().is_none_or(|q| model.tag_text[i].iter().any(|s| s.contains(q)))
        {
            continue;
        }
        tags.push(json!({
            "name": e.name,
            "group": e.group,
            "description": e.description,
            "aliases": e.aliases,
            "deprecated": e.deprecated,
            "docs": counts[i],
        }));
    }
    tags
}

/// The Markdown table of `kb_list_tags`.
fn tags_table(tags: &[Value], lang: Language) -> String {
    let headers = [
        Msg::ColName,
        Msg::ColGroup,
        Msg::ColTagDescription,
        Msg::ColAliases,
        Msg::ColReplacedBy,
        Msg::ColDocs,
    ];
    let headers: Vec<String> = headers.iter().map(|m| m.text(lang)).collect();
    let mut out = vec![row(&headers), row(&vec!["---".to_owned(); 6])];
    for t in tags {
        let s = |k: &str| t[k].as_str().map(cell).unwrap_or_default();
        let aliases: Vec<&str> =
            t["aliases"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        let docs = t["docs"].to_string();
        out.push(row(&[
            s("name"),
            s("group"),
            s("description"),
            cell(&aliases.join(lang.list_sep())),
            s("deprecated"),
            docs,
        ]));
    }
    out.join("\n") + "\n"
}
