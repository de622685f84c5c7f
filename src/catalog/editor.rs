//! The text-preserving index editor (`docs/reference/catalog-spec.md` §6.3.5): one entry of `docs`,
//! `terms` or `tags` is replaced, added or removed by splicing lines; every other byte stays.
//!
//! The file is read as lines. Top-level keys start at column 0; a list's block entries start
//! with `-` at the column of its first entry; an entry ends at its last line holding a token
//! (trailing comments and blank lines belong to what follows). Inside the edited entry, a key
//! segment runs from the comments directly above the key through its value, so a comment
//! travels with the key below it; keys whose value did not change are copied verbatim, and a
//! changed key keeps the comment lines above it (only comments inside its old value are lost).
//!
//! Invariants:
//!
//! - Lines outside the replaced or removed span are never changed (a key line `docs: []` or
//!   `terms:` becomes `docs:` when an entry is added to it, and `docs: []` when its last entry
//!   goes; a flow-style target list is re-emitted in block style).
//! - The caller re-parses the result and compares it with the intended data (fail closed);
//!   shapes this editor cannot handle are `UNSUPPORTED_FORMAT`, never a guess.

use yaml_serde::{Mapping, Value};

use super::Language;
use crate::error::{Error, ErrorCode, Result};
use crate::messages::{Msg, msg};

/// What to do to the target list.
#[derive(Clone, Debug)]
pub enum Splice<'a> {
    /// Replace entry `k` with `new` (`old` is its current value, for verbatim copies).
    Replace {
        /// Entry position.
        k: usize,
        /// The current entry.
        old: &'a Mapping,
        /// The new entry.
        new: &'a Mapping,
    },
    /// Append `new`.
    Add {
        /// The new entry.
        new: &'a Mapping,
    },
    /// Remove entry `k` (`last` when the list becomes empty).
    Remove {
        /// Entry position.
        k: usize,
    },
}

/// The canonical key order of each list (§6.3.5 step 3).
pub fn canonical_order(list: &str) -> &'static [&'static str] {
    match list {
        "docs" => &["id", "path", "title", "aliases", "description", "tags", "related"],
        "terms" => &["id", "term", "aliases", "definition", "see"],
        _ => &["name", "group", "description", "aliases", "deprecated"],
    }
}

/// One line of the file.
#[derive(Clone, Debug)]
struct Line {
    /// The text without its terminator.
    text: String,
    /// `\n`, `\r\n` or `` (last line without a break).
    end: &'static str,
}

impl Line {
    fn indent(&self) -> usize {
        self.text.len() - self.text.trim_start_matches(' ').len()
    }
    fn trimmed(&self) -> &str {
        self.text.trim()
    }
    fn is_blank(&self) -> bool {
        self.trimmed().is_empty()
    }
    fn is_comment(&self) -> bool {
        self.trimmed().starts_with('#')
    }
    fn is_content(&self) -> bool {
        !self.is_blank() && !self.is_comment()
    }
}

fn split_lines(text: &str) -> Vec<Line> {
    let mut out = Vec::new();
    for piece in text.split_inclusive('\n') {
        let (body, end) = if let Some(b) = piece.strip_suffix("\r\n") {
            (b, "\r\n")
        } else if let Some(b) = piece.strip_suffix('\n') {
            (b, "\n")
        } else {
            (piece, "")
        };
        out.push(Line { text: body.to_owned(), end });
    }
    out
}

/// A top-level key and the lines of its value.
#[derive(Clone, Debug)]
struct TopKey {
    name: String,
    line: usize,
    /// One past the last line holding a token of the key's value.
    end: usize,
}

/// The E24 error: `feature` (a `Feature…` message) at `at`.
pub fn unsupported(language: Language, feature: Msg, at: &str) -> Error {
    let message = msg!(language, NotEditable, feature = feature.text(language), where = at);
    Error::new(ErrorCode::UnsupportedFormat, message)
}

/// The key written at the start of `s` (plain or quoted) and the rest after `:`.
fn key_of(s: &str) -> Option<(String, &str)> {
    let s = s.trim_start();
    if let Some(q) = s.chars().next().filter(|c| *c == '"' || *c == '\'') {
        let close = s[1..].find(q)? + 1;
        let rest = s[close + 1..].trim_start().strip_prefix(':')?;
        return Some((s[1..close].to_owned(), rest));
    }
    let mut search = 0;
    while let Some(i) = s[search..].find(':') {
        let at = search + i;
        let after = &s[at + 1..];
        if after.is_empty() || after.starts_with(' ') || after.starts_with('\t') {
            let key = s[..at].trim_end();
            if key.is_empty() || key.contains(" #") || key.starts_with(['-', '[', '{', '#', '?']) {
                return None;
            }
            return Some((key.to_owned(), after));
        }
        search = at + 1;
    }
    None
}

/// The value text after `key:` without a trailing comment.
fn value_text(rest: &str) -> &str {
    let rest = rest.trim();
    if rest.starts_with('"') || rest.starts_with('\'') {
        return rest;
    }
    match rest.find(" #") {
        Some(i) => rest[..i].trim_end(),
        None if rest.starts_with('#') => "",
        None => rest,
    }
}

fn top_keys(lines: &[Line], lang: Language) -> Result<Vec<TopKey>> {
    let mut keys: Vec<TopKey> = Vec::new();
    let mut started = false;
    for (i, l) in lines.iter().enumerate() {
        if !l.is_content() {
            continue;
        }
        let t = l.trimmed();
        if !started && (t == "---" || t.starts_with('%')) {
            continue;
        }
        if t == "---" || t == "..." {
            return Err(unsupported(lang, Msg::FeatureManyDocuments, "---"));
        }
        if l.indent() == 0 && (t == "-" || t.starts_with("- ")) && !keys.is_empty() {
            // A block sequence written at column 0 under its key (`docs:` then `- id: a`).
            if let Some(k) = keys.last_mut() {
                k.end = i + 1;
            }
        } else if l.indent() == 0 {
            started = true;
            match key_of(&l.text) {
                Some((name, _)) if !t.starts_with('-') => {
                    keys.push(TopKey { name, line: i, end: i + 1 });
                }
                _ => {
                    return Err(unsupported(lang, Msg::FeatureTopNotMapping, &Msg::TopLevel.text(lang)));
                }
            }
        } else if let Some(k) = keys.last_mut() {
            k.end = i + 1;
        } else {
            return Err(unsupported(lang, Msg::FeatureTopNotMapping, &Msg::TopLevel.text(lang)));
        }
    }
    // Sequences written at column 0 under a key (`docs:` then `- id: a`).
    Ok(keys)
}

/// The shape of the target list's value.
#[derive(Debug)]
enum ListShape {
    /// Block entries: (start, end) line ranges and the `-` column.
    Block { entries: Vec<(usize, usize)> },
    /// `[]`, `null`, `~` or nothing.
    Empty,
    /// A flow sequence with content (re-emitted in block style).
    Flow,
}

/// Finds the block entries of the list under `key`.
fn list_shape(lines: &[Line], key: &TopKey, lang: Language) -> Result<ListShape> {
    let (_, rest) = key_of(&lines[key.line].text).unwrap_or_default();
    let v = value_text(rest);
    match v {
        "" => {}
        "[]" | "null" | "~" | "Null" | "NULL" => return Ok(ListShape::Empty),
        v if v.starts_with('[') => return Ok(ListShape::Flow),
        _ => {
            return Err(unsupported(lang, Msg::FeatureAnchorAliasTag, &key.name));
        }
    }
    let body: Vec<usize> = (key.line + 1..key.end).filter(|&i| lines[i].is_content()).collect();
    let Some(&first) = body.first() else { return Ok(ListShape::Empty) };
    let col = lines[first].indent();
    let starts: Vec<usize> = (key.line + 1..key.end)
        .filter(|&i| {
            let l = &lines[i];
            l.is_content() && l.indent() == col && (l.trimmed() == "-" || l.trimmed().starts_with("- "))
        })
        .collect();
    if starts.first() != Some(&first) {
        return Err(unsupported(lang, Msg::FeatureNotBlockList, &key.name));
    }
    let mut entries = Vec::new();
    for (n, &s) in starts.iter().enumerate() {
        let mut e = starts.get(n + 1).copied().unwrap_or(key.end);
        while e > s + 1 && !lines[e - 1].is_content() {
            e -= 1;
        }
        entries.push((s, e));
    }
    Ok(ListShape::Block { entries })
}

/// Whether the lines hold an anchor (`&x`) or an alias (`*x`) outside quotes.
fn has_anchor(lines: &[Line]) -> bool {
    lines.iter().filter(|l| l.is_content()).any(|l| {
        let mut quote: Option<char> = None;
        let mut prev = ' ';
        for c in l.text.chars() {
            match quote {
                Some(q) if c == q => quote = None,
                Some(_) => {}
                None if c == '"' || c == '\'' => quote = Some(c),
                None if c == '#' && prev == ' ' => return false,
                None if (c == '&' || c == '*') && matches!(prev, ' ' | '[' | '{' | ',' | '-' | ':') => {
                    return true;
                }
                None => {}
            }
            prev = c;
        }
        false
    })
}

/// Edits `text` (no BOM). `list` is `docs`, `terms` or `tags`.
pub fn splice(text: &str, list: &str, change: &Splice<'_>, lang: Language) -> Result<String> {
    let crlf = text.contains("\r\n") && !text.replace("\r\n", "").contains('\n');
    let work = if crlf { text.replace("\r\n", "\n") } else { text.to_owned() };
    let mut lines = split_lines(&work);
    let keys = top_keys(&lines, lang)?;
    let step = detect_step(&lines, &keys);
    let Some(key) = keys.iter().find(|k| k.name == list).cloned() else {
        return append_list(work, list, change, step).map(|out| finish(out, crlf));
    };
    let target = Target { list, step, lang };
    match (list_shape(&lines, &key, lang)?, change) {
        (ListShape::Block { entries }, change) => target.splice_block(&mut lines, &key, &entries, change)?,
        (ListShape::Empty, Splice::Add { new }) => target.add_to_empty(&mut lines, &key, new),
        (ListShape::Flow, _) => {
            // The caller re-emits flow lists in block style (`reemit_flow`).
            return Err(Error::internal("a flow-style list reached splice"));
        }
        (ListShape::Empty, _) => return Err(Error::internal("no entry to change in an empty list")),
    }
    Ok(finish(join_lines(&lines), crlf))
}

/// The list is not in the text yet: a new key at the end with the added entry.
fn append_list(mut out: String, list: &str, change: &Splice<'_>, step: usize) -> Result<String> {
    let Splice::Add { new } = change else {
        return Err(Error::internal("the edited list is missing from the index text"));
    };
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&format!("{list}:\n"));
    for l in emit_entry(new, list, step, step + 2, step) {
        out.push_str(&l);
        out.push('\n');
    }
    Ok(out)
}

/// The lines joined with their own line ends.
fn join_lines(lines: &[Line]) -> String {
    let mut out = String::new();
    for l in lines {
        out.push_str(&l.text);
        out.push_str(l.end);
    }
    out
}

/// The list being edited and the file's indentation step.
struct Target<'a> {
    list: &'a str,
    step: usize,
    lang: Language,
}

impl Target<'_> {
    /// A change to a list of block entries.
    fn splice_block(
        &self,
        lines: &mut Vec<Line>,
        key: &TopKey,
        entries: &[(usize, usize)],
        change: &Splice<'_>,
    ) -> Result<()> {
        match change {
            Splice::Replace { k, old, new } => {
                let (s, e) = self.editable_entry(lines, entries, *k)?;
                let (col, kcol) = self.entry_col(lines, entries);
                let replaced = replace_entry(&lines[s..e], old, new, self.list, col, kcol, self.step);
                lines.splice(s..e, replaced);
            }
            Splice::Add { new } => {
                let (col, kcol) = self.entry_col(lines, entries);
                let at = entries.last().map_or(key.line + 1, |&(_, e)| e);
                ensure_break(lines, at);
                lines.splice(at..at, self.new_lines(new, col, kcol));
            }
            Splice::Remove { k } => {
                let (s, e) = self.editable_entry(lines, entries, *k)?;
                if entries.len() > 1 {
                    lines.drain(s..e);
                } else if self.list == "tags" {
                    // Keep the break of the line before if the tags key was the last thing.
                    lines.drain(key.line..key.end.max(e));
                } else {
                    lines.drain(s..e);
                    let (_, rest) = key_of(&lines[key.line].text).unwrap_or_default();
                    let comment = rest.trim().strip_prefix('#').map(|c| format!(" #{c}")).unwrap_or_default();
                    lines[key.line].text =
                        format!("{}: []{comment}", quote_key(&key.name, &lines[key.line].text));
                }
            }
        }
        Ok(())
    }

    /// The first entry to an empty list (`docs: []` becomes `docs:`, its comment kept).
    fn add_to_empty(&self, lines: &mut Vec<Line>, key: &TopKey, new: &Mapping) {
        let (_, rest) = key_of(&lines[key.line].text).unwrap_or_default();
        let comment = match rest.find(" #").or_else(|| rest.trim_start().starts_with('#').then_some(0)) {
            Some(i) => format!(" {}", rest[i..].trim()),
            None => String::new(),
        };
        lines[key.line].text = format!("{}:{comment}", quote_key(&key.name, &lines[key.line].text));
        if lines[key.line].end.is_empty() {
            lines[key.line].end = "\n";
        }
        let at = key.line + 1;
        lines.splice(at..at, self.new_lines(new, self.step, self.step + 2));
    }

    /// The `-` column and the key column of the list's entries.
    fn entry_col(&self, lines: &[Line], entries: &[(usize, usize)]) -> (usize, usize) {
        entries
            .first()
            .map(|&(s, _)| {
                let l = &lines[s];
                let after = l.text[l.indent() + 1..].len() - l.text[l.indent() + 1..].trim_start().len();
                (l.indent(), l.indent() + 1 + after.max(1))
            })
            .unwrap_or((self.step, self.step + 2))
    }

    /// The lines of entry `k`; an entry with YAML anchors or aliases is not edited.
    fn editable_entry(&self, lines: &[Line], entries: &[(usize, usize)], k: usize) -> Result<(usize, usize)> {
        let &(s, e) = entries.get(k).ok_or_else(|| Error::internal("entry position out of range"))?;
        if has_anchor(&lines[s..e]) {
            return Err(unsupported(self.lang, Msg::FeatureAnchorAlias, &format!("{}[{k}]", self.list)));
        }
        Ok((s, e))
    }

    fn new_lines(&self, m: &Mapping, col: usize, kcol: usize) -> Vec<Line> {
        emit_entry(m, self.list, col, kcol, self.step)
            .into_iter()
            .map(|text| Line { text, end: "\n" })
            .collect()
    }
}

/// Re-emits a flow-style list (`tags: [{name: a}]`) in block style with the given entries.
pub fn reemit_flow(text: &str, list: &str, entries: &[Mapping], lang: Language) -> Result<String> {
    let crlf = text.contains("\r\n") && !text.replace("\r\n", "").contains('\n');
    let work = if crlf { text.replace("\r\n", "\n") } else { text.to_owned() };
    let mut lines = split_lines(&work);
    let keys = top_keys(&lines, lang)?;
    let step = detect_step(&lines, &keys);
    let key = keys.iter().find(|k| k.name == list).ok_or_else(|| Error::internal("list key missing"))?;
    let mut new: Vec<Line> = Vec::new();
    if entries.is_empty() {
        if list == "tags" {
            lines.drain(key.line..key.end);
        } else {
            new.push(Line { text: format!("{list}: []"), end: "\n" });
        }
    } else {
        new.push(Line { text: format!("{list}:"), end: "\n" });
        for m in entries {
            for text in emit_entry(m, list, step, step + 2, step) {
                new.push(Line { text, end: "\n" });
            }
        }
    }
    if !new.is_empty() {
        let end = key.end;
        let last_end = lines[end - 1].end;
        if let Some(l) = new.last_mut() {
            l.end = if last_end.is_empty() { "" } else { "\n" };
        }
        lines.splice(key.line..end, new);
    }
    Ok(finish(join_lines(&lines), crlf))
}

/// Whether `list` is written in flow style with content.
pub fn is_flow(text: &str, list: &str, lang: Language) -> Result<bool> {
    let lines = split_lines(text);
    let keys = top_keys(&lines, lang)?;
    match keys.iter().find(|k| k.name == list) {
        Some(k) => Ok(matches!(list_shape(&lines, k, lang)?, ListShape::Flow)),
        None => Ok(false),
    }
}

fn finish(out: String, crlf: bool) -> String {
    if crlf { out.replace('\n', "\r\n") } else { out }
}

/// Gives line `at - 1` a line break before lines are inserted at `at`.
fn ensure_break(lines: &mut [Line], at: usize) {
    if at > 0 && lines[at - 1].end.is_empty() {
        lines[at - 1].end = "\n";
    }
}

/// The key as written on its line (keeps quotes).
fn quote_key(name: &str, line: &str) -> String {
    let t = line.trim_start();
    if t.starts_with('"') || t.starts_with('\'') {
        let q = &t[..1];
        format!("{q}{name}{q}")
    } else {
        name.to_owned()
    }
}

/// The indentation step of the file: the indentation of the first indented line under a
/// top-level key, else 2.
fn detect_step(lines: &[Line], keys: &[TopKey]) -> usize {
    for k in keys {
        if let Some(l) = lines[k.line + 1..k.end].iter().find(|l| l.is_content())
            && l.indent() > 0
        {
            return l.indent();
        }
    }
    2
}

/// A key of an entry and its segment.
struct Segment {
    key: String,
    /// Line range in the entry.
    start: usize,
    end: usize,
    /// The key's own line.
    line: usize,
}

/// Key segments of an entry (`lines` is the entry span). Empty for a flow-mapping entry.
fn segments(lines: &[Line]) -> Vec<Segment> {
    let first = &lines[0];
    let after_dash = &first.text[first.indent() + 1..];
    let kcol = first.indent() + 1 + (after_dash.len() - after_dash.trim_start().len());
    if after_dash.trim_start().starts_with('{') {
        return Vec::new();
    }
    let mut key_lines: Vec<(usize, String)> = Vec::new();
    if let Some((k, _)) = key_of(after_dash) {
        key_lines.push((0, k));
    }
    for (i, l) in lines.iter().enumerate().skip(1) {
        if l.is_content()
            && l.indent() == kcol
            && !l.trimmed().starts_with("- ")
            && l.trimmed() != "-"
            && let Some((k, _)) = key_of(&l.text)
        {
            key_lines.push((i, k));
        }
    }
    let mut out: Vec<Segment> = Vec::new();
    for (n, (line, key)) in key_lines.iter().enumerate() {
        let mut start = *line;
        if n > 0 {
            let floor = key_lines[n - 1].0 + 1;
            while start > floor && !lines[start - 1].is_content() {
                start -= 1;
            }
        }
        if let Some(prev) = out.last_mut() {
            prev.end = start;
        }
        out.push(Segment { key: key.clone(), start, end: lines.len(), line: *line });
    }
    out
}

/// The replacement lines for an entry.
fn replace_entry(
    span: &[Line],
    old: &Mapping,
    new: &Mapping,
    list: &str,
    col: usize,
    kcol: usize,
    step: usize,
) -> Vec<Line> {
    let segs = segments(span);
    let order = key_order(Some(old), new, list);
    let mut out: Vec<Line> = Vec::new();
    for (n, key) in order.iter().enumerate() {
        let value = &new[key.as_str()];
        let prefix = if n == 0 { format!("{}- ", " ".repeat(col)) } else { " ".repeat(kcol) };
        let same = old.get(key.as_str()) == Some(value);
        match segs.iter().find(|s| &s.key == key).filter(|_| same) {
            Some(seg) => {
                for (i, l) in span[seg.start..seg.end].iter().enumerate() {
                    let mut line = l.clone();
                    if seg.start + i == seg.line {
                        let t = l.text.trim_start();
                        let t =
                            if seg.line == 0 { t.strip_prefix('-').map_or(t, str::trim_start) } else { t };
                        line.text = format!("{prefix}{t}");
                    }
                    out.push(line);
                }
            }
            None => {
                // The comments directly above a changed key stay with it; its old value goes.
                if let Some(seg) = segs.iter().find(|s| &s.key == key) {
                    out.extend(span[seg.start..seg.line].iter().cloned());
                }
                for (i, text) in emit_key(key, value, kcol, step).into_iter().enumerate() {
                    let text = if i == 0 { format!("{prefix}{}", text.trim_start()) } else { text };
                    out.push(Line { text, end: "\n" });
                }
            }
        }
    }
    // The entry's last line keeps the break the old span ended with.
    if let (Some(last), Some(old_last)) = (out.last_mut(), span.last()) {
        last.end = if old_last.end.is_empty() { "" } else { "\n" };
    }
    out
}

/// Old keys in their order, then new ones in canonical order, then any others.
fn key_order(old: Option<&Mapping>, new: &Mapping, list: &str) -> Vec<String> {
    let mut order: Vec<String> = Vec::new();
    if let Some(old) = old {
        for k in old.keys().filter_map(Value::as_str) {
            if new.contains_key(k) {
                order.push(k.to_owned());
            }
        }
    }
    for k in canonical_order(list) {
        if new.contains_key(*k) && !order.iter().any(|o| o == k) {
            order.push((*k).to_owned());
        }
    }
    for k in new.keys().filter_map(Value::as_str) {
        if !order.iter().any(|o| o == k) {
            order.push(k.to_owned());
        }
    }
    order
}

/// A new entry's lines: `- first: …` at `col`, other keys at `kcol`.
fn emit_entry(m: &Mapping, list: &str, col: usize, kcol: usize, step: usize) -> Vec<String> {
    let mut out = Vec::new();
    for (n, key) in key_order(None, m, list).iter().enumerate() {
        for (i, text) in emit_key(key, &m[key.as_str()], kcol, step).into_iter().enumerate() {
            if n == 0 && i == 0 {
                out.push(format!("{}- {}", " ".repeat(col), text.trim_start()));
            } else {
                out.push(text);
            }
        }
    }
    out
}

/// `key: value` lines at `indent`.
fn emit_key(key: &str, value: &Value, indent: usize, step: usize) -> Vec<String> {
    let pad = " ".repeat(indent);
    let k = scalar(key, false);
    match value {
        Value::String(s) if s.contains('\n') => match literal_block(s, indent + step) {
            Some(mut lines) => {
                lines[0] = format!("{pad}{k}: {}", lines[0]);
                lines
            }
            None => vec![format!("{pad}{k}: {}", json_quote(s))],
        },
        Value::Sequence(items) if key == "related" && !items.is_empty() => {
            let mut out = vec![format!("{pad}{k}:")];
            let item_col = indent + step;
            for item in items {
                match item {
                    Value::Mapping(m) => {
                        let mut first = true;
                        for (ik, iv) in m {
                            let ik = ik.as_str().unwrap_or_default();
                            for (i, text) in emit_key(ik, iv, item_col + 2, step).into_iter().enumerate() {
                                if first && i == 0 {
                                    out.push(format!("{}- {}", " ".repeat(item_col), text.trim_start()));
                                } else {
                                    out.push(text);
                                }
                            }
                            first = false;
                        }
                    }
                    other => out.push(format!("{}- {}", " ".repeat(item_col), flow(other))),
                }
            }
            out
        }
        other => vec![format!("{pad}{k}: {}", flow(other))],
    }
}

/// A literal block scalar (`|`, `|-`, `|+`) with content at `indent`, when it round-trips.
fn literal_block(s: &str, indent: usize) -> Option<Vec<String>> {
    let body = s.trim_end_matches('\n');
    let trailing = s.len() - body.len();
    let chomp = match trailing {
        0 => "|-",
        1 => "|",
        _ => "|+",
    };
    if body.is_empty()
        || body.starts_with([' ', '\t'])
        || body.chars().any(|c| c.is_control() && c != '\n' && c != '\t')
        || body.contains('\r')
    {
        return None;
    }
    let pad = " ".repeat(indent);
    let mut lines = vec![chomp.to_owned()];
    for l in body.split('\n') {
        lines.push(if l.is_empty() { String::new() } else { format!("{pad}{l}") });
    }
    for _ in 1..trailing {
        lines.push(String::new());
    }
    Some(lines)
}

/// A value in flow style.
fn flow(v: &Value) -> String {
    match v {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => scalar(s, true),
        Value::Sequence(items) => format!("[{}]", items.iter().map(flow).collect::<Vec<_>>().join(", ")),
        Value::Mapping(m) => format!(
            "{{{}}}",
            m.iter().map(|(k, v)| format!("{}: {}", flow(k), flow(v))).collect::<Vec<_>>().join(", ")
        ),
        Value::Tagged(t) => flow(&t.value),
    }
}

/// A string scalar: plain when YAML reads it back as the same string, else double-quoted.
fn scalar(s: &str, in_flow: bool) -> String {
    if plain_ok(s, in_flow) { s.to_owned() } else { json_quote(s) }
}

fn json_quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

fn plain_ok(s: &str, in_flow: bool) -> bool {
    if s.is_empty()
        || s != s.trim()
        || s.contains(": ")
        || s.contains(" #")
        || s.ends_with(':')
        || s.chars().any(|c| c.is_control())
        || s.starts_with([
            '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`',
        ])
        || (in_flow && s.contains([',', '[', ']', '{', '}']))
    {
        return false;
    }
    let probe = if in_flow { format!("k: [{s}]") } else { format!("k: {s}") };
    let Ok(Value::Mapping(m)) = yaml_serde::from_str::<Value>(&probe) else { return false };
    let got = m.get("k");
    if in_flow {
        matches!(got, Some(Value::Sequence(v)) if v.len() == 1 && v[0] == Value::String(s.to_owned()))
    } else {
        got == Some(&Value::String(s.to_owned()))
    }
}

/// The lines of a new entry of `list` in the usual layout (`  - id: …`, keys at column 4).
pub fn new_entry_lines(m: &Mapping, list: &str) -> Vec<String> {
    emit_entry(m, list, 2, 4, 2)
}
