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
use super::index::{Index, Resolved, Vocabulary, close_names, inverse, quoted_list};
use super::{Language, norm};
use crate::error::{Error, Result};
use crate::links::{Target, html_stem, resolve};

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
}

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
        let mut out = Vec::new();
        let (rd, xd) = (&index.docs[r], &index.docs[x]);
        let outgoing: Vec<Value> = rd
            .related
            .iter()
            .filter(|rel| rel.to == xd.id)
            .map(|rel| json!({"direction": "outgoing", "type": rel.kind, "when": rel.when}))
            .collect();
        if outgoing.is_empty() {
            if self.body[r].contains(&x) {
                out.push(json!({"direction": "outgoing", "type": null, "when": null}));
            }
        } else {
            out.extend(outgoing);
        }
        let incoming: Vec<Value> = xd
            .related
            .iter()
            .filter(|rel| rel.to == rd.id)
            .map(|rel| {
                json!({"direction": "incoming", "type": rel.kind.as_deref().map(inverse), "when": rel.when})
            })
            .collect();
        if incoming.is_empty() {
            if self.body[x].contains(&r) {
                out.push(json!({"direction": "incoming", "type": null, "when": null}));
            }
        } else {
            out.extend(incoming);
        }
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

/// Whether `prose` (normalised) mentions `alias` (normalised), at ASCII word boundaries for
/// ASCII-alphanumeric aliases.
pub fn mentions(prose: &str, alias: &str) -> bool {
    if !alias.chars().all(|c| c.is_ascii_alphanumeric()) {
        return prose.contains(alias);
    }
    prose.match_indices(alias).any(|(at, _)| {
        let before = prose[..at].chars().next_back();
        let after = prose[at + alias.len()..].chars().next();
        !before.is_some_and(|c| c.is_ascii_alphanumeric())
            && !after.is_some_and(|c| c.is_ascii_alphanumeric())
    })
}

/// E13.
fn bad_cursor(lang: Language) -> Error {
    Error::invalid_argument(lang.pick(
        "The cursor was not returned by kb_find_docs or is damaged; omit cursor to start again from the first page.",
        "cursor を読めません。cursor を省いて先頭から引き直してください。",
    ))
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

/// The per-document canonical tag keys and whether each is a main tag.
fn doc_keys(vocab: &Vocabulary<'_>, doc: &super::index::DocEntry) -> Vec<(String, bool)> {
    doc.tags.iter().map(|t| (vocab.key(&vocab.resolve(&t.name)), t.main)).collect()
}

/// Runs `kb_find_docs` over a valid index; `infos[i]` is the data of `index.docs[i]`.
pub fn find_docs(index: &Index, infos: &[Arc<DocInfo>], q: &FindQuery, lang: Language) -> Result<Answer> {
    let vocab = Vocabulary::new(index);
    let mut warnings: Vec<String> = Vec::new();
    let mut warned: HashSet<String> = HashSet::new();
    // Requested tags: the keys a document may carry for each, deduplicated.
    let mut resolve_list = |list: &[String], warnings: &mut Vec<String>| -> Vec<Vec<String>> {
        let mut out: Vec<Vec<String>> = Vec::new();
        for t in list {
            let r = vocab.resolve(t);
            let keys = vocab.with_replacements(&r);
            if out.iter().any(|k| k[0] == keys[0]) {
                continue;
            }
            if vocab.declared() && warned.insert(keys[0].clone()) {
                match &r {
                    Resolved::Unknown(tag) => {
                        let close = vocab.close(tag);
                        warnings.push(if close.is_empty() {
                            lang.pick(
                                format!("Tag `{tag}` is not in the tag vocabulary and no tag is close to it; see kb_list_tags (the tag was still matched as given)."),
                                format!("タグ `{tag}` は語彙になく、近いタグもありません。kb_list_tags で語彙を確かめてください（渡したタグのまま引きました）。"),
                            )
                        } else {
                            let close = quoted_list(&close, lang);
                            lang.pick(
                                format!("Tag `{tag}` is not in the tag vocabulary; close tags: {close} (the tag was still matched as given)."),
                                format!("タグ `{tag}` は語彙にありません。近いタグ: {close}（渡したタグのまま引きました）。"),
                            )
                        });
                    }
                    Resolved::Known(i) => {
                        if let Some(new) = vocab.entries()[*i].deprecated.as_deref() {
                            let new = vocab.canonical(new);
                            warnings.push(lang.pick(
                                format!("Tag `{t}` is deprecated in favour of `{new}`; documents with either tag were matched — use `{new}` from now on."),
                                format!("タグ `{t}` はやめたタグで、振り替え先は `{new}` です。両方のタグの文書を引きました。今後は `{new}` を使ってください。"),
                            ));
                        }
                    }
                }
            }
            out.push(keys);
        }
        out
    };
    let all = resolve_list(&q.tags, &mut warnings);
    let any = resolve_list(&q.any_tags, &mut warnings);

    // The canonical filter and its hash.
    let mut tag_keys: Vec<String> = all.iter().map(|k| k[0].clone()).collect();
    let mut any_keys: Vec<String> = any.iter().map(|k| k[0].clone()).collect();
    tag_keys.sort();
    tag_keys.dedup();
    any_keys.sort();
    any_keys.dedup();
    let text = q.text.as_deref().map(norm).filter(|t| !t.is_empty());
    let filter_json =
        json!({"text": text, "tags": tag_keys, "any_tags": any_keys, "related_to": q.related_to}).to_string();
    let filter = crate::text::xxh64_hex(filter_json.as_bytes());
    let offset = match q.cursor.as_deref() {
        None => 0,
        Some(c) => {
            let (offset, f) = decode_cursor(c, lang)?;
            if f != filter {
                return Err(Error::invalid_argument(lang.pick(
                    "The cursor belongs to a call with different text, tags, any_tags or related_to; omit cursor to start again from the first page.",
                    "絞り込みの条件が next_cursor を返した呼び出しと違います。cursor を省いて先頭から引き直してください。",
                )));
            }
            offset
        }
    };

    let needs_relations =
        q.related_to.is_some() || (!q.count_only && field_set(q).iter().any(|f| f == "referenced_by"));
    let relations = needs_relations.then(|| Relations::new(index, infos));
    let related_to = match (&q.related_to, &relations) {
        (Some(id), Some(rel)) => match rel.find(id) {
            Some(i) => Some(i),
            None => {
                let ids: Vec<&str> = index.docs.iter().map(|d| d.id.as_str()).collect();
                let mut close: Vec<String> = Vec::new();
                for i in close_names(id, &ids, usize::MAX) {
                    if !close.contains(&ids[i].to_owned()) {
                        close.push(ids[i].to_owned());
                    }
                }
                close.truncate(3);
                let close = quoted_list(&close, lang);
                return Err(Error::not_found(lang.pick(
                    format!("Document ID `{id}` is not in the index; close IDs: {close} — call kb_find_docs without related_to to list IDs."),
                    format!("文書の ID `{id}` は索引にありません。近い ID: {close}。related_to を省いた kb_find_docs で ID を確かめてください。"),
                )));
            }
        },
        _ => None,
    };

    // Matching.
    let requested: HashSet<&String> = all.iter().chain(&any).flatten().collect();
    let mut main_first = Vec::new();
    let mut rest = Vec::new();
    let mut row_relations: HashMap<usize, Vec<Value>> = HashMap::new();
    for (i, d) in index.docs.iter().enumerate() {
        let keys = doc_keys(&vocab, d);
        let carries = |want: &Vec<String>| keys.iter().any(|(k, _)| want.contains(k));
        if let Some(t) = &text {
            let hit = norm(&d.title).contains(t.as_str())
                || d.aliases.iter().any(|a| norm(a).contains(t.as_str()))
                || d.description.as_deref().is_some_and(|s| norm(s).contains(t.as_str()));
            if !hit {
                continue;
            }
        }
        if !all.iter().all(carries) {
            continue;
        }
        if !any.is_empty() && !any.iter().any(carries) {
            continue;
        }
        if let (Some(r), Some(rel)) = (related_to, &relations) {
            if r == i {
                continue;
            }
            let between = rel.between(index, r, i);
            if between.is_empty() {
                continue;
            }
            row_relations.insert(i, between);
        }
        let main = !requested.is_empty() && keys.iter().any(|(k, m)| *m && requested.contains(k));
        if main { main_first.push(i) } else { rest.push(i) }
    }
    main_first.extend(rest);
    let matches = main_first;
    let total = matches.len();
    let total_chars: usize = matches.iter().filter_map(|&i| infos[i].chars).sum();
    let tag_counts = tag_counts(index, &vocab, &matches);

    if q.count_only {
        let structured = json!({"total": total, "total_chars": total_chars, "tag_counts": tag_counts, "warnings": warnings});
        let mut text = lang.pick(
            format!("Total {total} · total chars {total_chars}"),
            format!("総件数 {total} 件・合計文字数 {total_chars}"),
        );
        let mut trailing = Vec::new();
        if !tag_counts.is_empty() {
            trailing.push(tag_counts_line(&tag_counts, lang));
        }
        trailing.extend(warnings.iter().cloned());
        finish(&mut text, None, &trailing);
        return Ok(answer(text, structured, q.json));
    }

    let fields = field_set(q);
    let page: Vec<usize> = matches.iter().copied().skip(offset).take(q.limit).collect();
    let end = offset.saturating_add(page.len());
    let next_cursor = (end < total && !page.is_empty()).then(|| encode_cursor(end, &filter));
    let hint = next_cursor.as_ref().map(|_| {
        lang.pick(
            "More documents match; narrow the results with tags, any_tags or text, or pass count_only to get just the counts.",
            "続きがあります。tags・any_tags・text で絞るか、count_only で件数だけを確かめてください。",
        )
        .to_owned()
    });
    let omitted: Vec<Value> = OPTIONAL_FIELDS
        .iter()
        .filter(|f| !fields.iter().any(|x| x == *f))
        .map(|f| json!({"field": f, "how": format!("include: [\"{f}\"]")}))
        .collect();
    let mut rows: Vec<Value> = Vec::new();
    for &i in &page {
        let d = &index.docs[i];
        let mut row = Map::new();
        row.insert("id".into(), json!(d.id));
        row.insert("title".into(), json!(d.title));
        row.insert("description".into(), json!(d.description));
        row.insert(
            "tags".into(),
            Value::Array(d.tags.iter().map(|t| json!({"name": t.name, "main": t.main})).collect()),
        );
        row.insert("chars".into(), json!(infos[i].chars));
        for f in OPTIONAL_FIELDS {
            if !fields.iter().any(|x| x == f) {
                continue;
            }
            let value = match f {
                "path" => json!(d.path),
                "aliases" => json!(d.aliases),
                "related" => Value::Array(
                    d.related
                        .iter()
                        .map(|r| {
                            let mut o = Map::new();
                            o.insert("to".into(), json!(r.to));
                            o.insert("type".into(), json!(r.kind));
                            o.insert("when".into(), json!(r.when));
                            if !r.paths.is_empty() {
                                o.insert("paths".into(), json!(r.paths));
                            }
                            Value::Object(o)
                        })
                        .collect(),
                ),
                _ => json!(relations.as_ref().map_or(0, |rel| rel.referenced_by(index, i))),
            };
            row.insert(f.into(), value);
        }
        if let Some(rel) = row_relations.remove(&i) {
            row.insert("relations".into(), Value::Array(rel));
        }
        rows.push(Value::Object(row));
    }
    let returned = rows.len();
    let structured = json!({
        "total": total,
        "returned": returned,
        "total_chars": total_chars,
        "next_cursor": next_cursor,
        "hint": hint,
        "tag_counts": tag_counts,
        "warnings": warnings,
        "omitted": omitted,
        "docs": rows,
    });
    if q.json {
        return Ok(answer(String::new(), structured, true));
    }
    // Markdown.
    let mut text = lang.pick(
        format!(
            "Total {total} · returned {returned} · total chars {total_chars} · next_cursor: {}",
            next_cursor.as_deref().unwrap_or("null")
        ),
        format!(
            "総件数 {total} 件・返した件数 {returned} 件・合計文字数 {total_chars}・next_cursor: {}",
            next_cursor.as_deref().unwrap_or("null")
        ),
    );
    let table =
        (returned > 0).then(|| docs_table(&structured["docs"], &fields, q.related_to.is_some(), lang));
    let mut trailing = Vec::new();
    if total > 0 {
        if !tag_counts.is_empty() {
            trailing.push(tag_counts_line(&tag_counts, lang));
        }
        if !omitted.is_empty() && table.is_some() {
            let items: Vec<String> = omitted
                .iter()
                .map(|o| {
                    let (f, h) = (o["field"].as_str().unwrap_or(""), o["how"].as_str().unwrap_or(""));
                    lang.pick(format!("{f} ({h})"), format!("{f}（{h}）"))
                })
                .collect();
            trailing.push(format!(
                "{}{}",
                lang.pick("Omitted: ", "省いた項目: "),
                items.join(lang.list_sep())
            ));
        }
    }
    trailing.extend(warnings.iter().cloned());
    if total > 0
        && let Some(h) = &hint
    {
        trailing.push(h.clone());
    }
    finish(&mut text, table, &trailing);
    Ok(answer(text, structured, false))
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

fn tag_counts(index: &Index, vocab: &Vocabulary<'_>, matches: &[usize]) -> Vec<Value> {
    // key → (count, display name, vocabulary position)
    let mut counts: HashMap<String, (usize, String, Option<usize>)> = HashMap::new();
    let mut first_spelling: HashMap<String, String> = HashMap::new();
    for d in &index.docs {
        for t in &d.tags {
            if let Resolved::Unknown(s) = vocab.resolve(&t.name) {
                first_spelling.entry(norm(&s)).or_insert(s);
            }
        }
    }
    for &i in matches {
        let mut seen = HashSet::new();
        for t in &index.docs[i].tags {
            let r = vocab.resolve(&t.name);
            let key = vocab.key(&r);
            if !seen.insert(key.clone()) {
                continue;
            }
            let (name, pos) = match r {
                Resolved::Known(p) => (vocab.entries()[p].name.clone(), Some(p)),
                Resolved::Unknown(s) => (first_spelling.get(&key).cloned().unwrap_or(s), None),
            };
            counts.entry(key).or_insert((0, name, pos)).0 += 1;
        }
    }
    let mut list: Vec<(usize, String, Option<usize>)> = counts.into_values().collect();
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
    format!("{}{}", lang.pick("Tag counts: ", "タグごとの件数: "), items.join(lang.list_sep()))
}

/// A cell: `|` escaped, CR/LF/tab as spaces.
pub fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\r', '\n', '\t'], " ")
}

/// `| a | b |`.
pub fn row(cells: &[String]) -> String {
    format!("| {} |", cells.join(" | "))
}

fn docs_table(docs: &Value, fields: &[String], relations: bool, lang: Language) -> String {
    let mut columns: Vec<(&str, &str, &str)> = vec![
        ("id", "ID", "ID"),
        ("title", "Title", "題"),
        ("description", "Description", "概要"),
        ("tags", "Tags", "タグ"),
        ("chars", "Chars", "文字数"),
    ];
    for (f, en, ja) in [
        ("path", "Path", "パス"),
        ("aliases", "Aliases", "別名"),
        ("related", "Related", "関連"),
        ("referenced_by", "Referenced by", "被参照"),
    ] {
        if fields.iter().any(|x| x == f) {
            columns.push((f, en, ja));
        }
    }
    if relations {
        columns.push(("relations", "Relations", "関係"));
    }
    let sep = lang.list_sep();
    let mut out = vec![
        row(&columns.iter().map(|(_, en, ja)| lang.pick(*en, *ja).to_owned()).collect::<Vec<_>>()),
        row(&vec!["---".to_owned(); columns.len()]),
    ];
    for d in docs.as_array().into_iter().flatten() {
        let cells: Vec<String> = columns
            .iter()
            .map(|(f, _, _)| {
                let v = &d[*f];
                let text = match *f {
                    "tags" => v
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|t| {
                            let name = t["name"].as_str().unwrap_or("");
                            if t["main"].as_bool() == Some(true) {
                                lang.pick(format!("{name} (main)"), format!("{name}（主題）"))
                            } else {
                                name.to_owned()
                            }
                        })
                        .collect::<Vec<_>>()
                        .join(sep),
                    "aliases" => v
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(sep),
                    "related" => v
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|r| {
                            let to = r["to"].as_str().unwrap_or("");
                            match r["type"].as_str() {
                                Some(t) => lang.pick(format!("{to} ({t})"), format!("{to}（{t}）")),
                                None => to.to_owned(),
                            }
                        })
                        .collect::<Vec<_>>()
                        .join(sep),
                    "relations" => v
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|r| {
                            let dir = r["direction"].as_str().unwrap_or("");
                            match r["type"].as_str() {
                                Some(t) => format!("{dir} {t}"),
                                None => dir.to_owned(),
                            }
                        })
                        .collect::<Vec<_>>()
                        .join(sep),
                    _ => match v {
                        Value::String(s) => s.clone(),
                        Value::Number(n) => n.to_string(),
                        _ => String::new(),
                    },
                };
                cell(&text)
            })
            .collect();
        out.push(row(&cells));
    }
    out.join("\n")
}

/// `kb_list_tags` (§6.2).
pub fn list_tags(index: &Index, query: Option<&str>, json_format: bool, lang: Language) -> Answer {
    let vocab = Vocabulary::new(index);
    let q = query.map(norm).filter(|q| !q.is_empty());
    let mut seen: HashSet<String> = HashSet::new();
    let mut tags: Vec<Value> = Vec::new();
    // Per document, the entries whose name or an alias equals one of its tag references.
    let mut spellings: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, e) in vocab.entries().iter().enumerate() {
        for n in std::iter::once(&e.name).chain(&e.aliases) {
            let list = spellings.entry(norm(n)).or_default();
            if !list.contains(&i) {
                list.push(i);
            }
        }
    }
    let doc_sets: Vec<HashSet<usize>> = index
        .docs
        .iter()
        .map(|d| d.tags.iter().filter_map(|t| spellings.get(&norm(&t.name))).flatten().copied().collect())
        .collect();
    let mut counts = vec![0usize; vocab.entries().len()];
    for set in &doc_sets {
        for &e in set {
            counts[e] += 1;
        }
    }
    for (i, e) in vocab.entries().iter().enumerate() {
        if !seen.insert(norm(&e.name)) {
            continue;
        }
        if let Some(q) = &q {
            let hit = norm(&e.name).contains(q.as_str())
                || e.aliases.iter().any(|a| norm(a).contains(q.as_str()))
                || e.description.as_deref().is_some_and(|d| norm(d).contains(q.as_str()));
            if !hit {
                continue;
            }
        }
        let docs = counts[i];
        tags.push(json!({
            "name": e.name,
            "group": e.group,
            "description": e.description,
            "aliases": e.aliases,
            "deprecated": e.deprecated,
            "docs": docs,
        }));
    }
    let structured = json!({ "tags": tags });
    if json_format {
        return answer(String::new(), structured, true);
    }
    let sep = lang.list_sep();
    let headers: Vec<String> = lang
        .pick(
            ["Name", "Group", "Description", "Aliases", "Replaced by", "Docs"],
            ["名前", "グループ", "説明", "別名", "振り替え先", "文書数"],
        )
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    let mut out = vec![row(&headers), row(&vec!["---".to_owned(); 6])];
    for t in &tags {
        let s = |k: &str| t[k].as_str().map(cell).unwrap_or_default();
        let aliases: Vec<&str> =
            t["aliases"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        out.push(row(&[
            s("name"),
            s("group"),
            s("description"),
            cell(&aliases.join(sep)),
            s("deprecated"),
            t["docs"].to_string(),
        ]));
    }
    Answer { text: out.join("\n") + "\n", structured: None }
}
