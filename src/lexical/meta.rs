//! Front-matter metadata filters: how a document's front-matter fields become index terms, and
//! how a search's conditions on them become one tantivy query.
//!
//! Every chunk of a file carries the terms of the file's front matter in the `meta` field
//! (indexed, not stored). A term is the normalised key, one separator byte and a payload:
//!
//! - `key␟value` for each scalar value and each item of a list (equality and membership);
//! - `key␞` once per key present (existence, also for an empty or null value);
//! - `key␝YYYY-MM-DD` for each value that holds a date ([`date_of`]: ISO 8601, `YYYY/M/D`,
//!   `YYYY年M月D日`, `M/D/YYYY`); date ranges compare these terms in byte order, which is date
//!   order.
//!
//! Keys and values are compared after NFKC, lower-casing and trimming, so `Draft`, `draft` and
//! `ｄｒａｆｔ` are one value and `タグ` is a key like any other. Nested mappings become dotted
//! keys (`author.name`). See `docs/design/index-format.md` and `guides/search.md`.

use std::ops::Bound;

use tantivy::Term;
use tantivy::query::{AllQuery, BooleanQuery, Occur, Query, RangeQuery, TermQuery};
use tantivy::schema::{Field, IndexRecordOption};
use unicode_normalization::UnicodeNormalization;

use crate::error::{Error, Result};

/// Separates a key from a value to compare for equality.
const SEP_VALUE: char = '\u{1f}';
/// Follows a key to say the document has it.
const SEP_EXISTS: char = '\u{1e}';
/// Separates a key from an ISO 8601 date.
const SEP_DATE: char = '\u{1d}';

/// Longer keys or values are not indexed (a term must stay well below tantivy's limit, and
/// nobody filters on a paragraph).
const MAX_PART_BYTES: usize = 512;
/// At most this many terms per document (a front matter of thousands of keys is not metadata).
const MAX_TERMS: usize = 2_000;
/// At most this many conditions per search.
pub const MAX_CONDITIONS: usize = 32;

/// How a [`MetaCondition`] compares a field with its value(s).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetaOp {
    /// The field (or one item of a list field) equals the value.
    Eq,
    /// Not [`MetaOp::Eq`]: documents without the field match too.
    Ne,
    /// The field (or one item of a list field) equals one of the values.
    In,
    /// A date of the field is after the value's date.
    Gt,
    /// A date of the field is on or after the value's date.
    Gte,
    /// A date of the field is before the value's date.
    Lt,
    /// A date of the field is on or before the value's date.
    Lte,
    /// The document's front matter has the field (any value).
    Exists,
}

impl MetaOp {
    /// The operator's wire name.
    pub fn name(self) -> &'static str {
        match self {
            MetaOp::Eq => "eq",
            MetaOp::Ne => "ne",
            MetaOp::In => "in",
            MetaOp::Gt => "gt",
            MetaOp::Gte => "gte",
            MetaOp::Lt => "lt",
            MetaOp::Lte => "lte",
            MetaOp::Exists => "exists",
        }
    }
}

/// One condition on a front-matter field, as the caller gave it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetaCondition {
    /// The front-matter key (dotted for nested mappings).
    pub field: String,
    /// The comparison.
    pub op: MetaOp,
    /// The value(s): one for `eq`, `ne` and the date comparisons, one or more for `in`, none
    /// for `exists`.
    pub values: Vec<String>,
}

/// Validated conditions, all of which a document must meet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetaFilter {
    conditions: Vec<Compiled>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Compiled {
    /// Any of these `key␟value` terms.
    AnyOf(Vec<String>),
    /// None of these `key␟value` terms.
    NoneOf(Vec<String>),
    /// The `key␞` term.
    Exists(String),
    /// `key␝` date terms between the bounds.
    Range(Bound<String>, Bound<String>),
}

/// The comparison form of a key or value: NFKC, lower case, trimmed.
pub fn normalize_meta(s: &str) -> String {
    let trimmed = s.trim();
    if trimmed.is_ascii() {
        return trimmed.to_ascii_lowercase();
    }
    trimmed.nfkc().collect::<String>().to_lowercase().trim().to_owned()
}

/// The calendar date `s` holds, as `YYYY-MM-DD`: ISO 8601 `YYYY-MM-DD` (then nothing, or a time
/// after `T` or a space), `YYYY/M/D`, `YYYY年M月D日`, or `M/D/YYYY` (month first, the form of
/// Microsoft Learn's `ms.date`). Month 1–12, day 1–31; anything else is not a date.
pub fn date_of(s: &str) -> Option<String> {
    let s = s.trim();
    let iso = |s: &str| -> Option<String> {
        let b = s.as_bytes();
        if b.len() < 10 || !b[..10].is_ascii() || !matches!(b.get(10), None | Some(b'T' | b't' | b' ')) {
            return None;
        }
        let (y, m, d) = (&s[..4], &s[5..7], &s[8..10]);
        (b[4] == b'-' && b[7] == b'-').then(|| ymd(y, m, d)).flatten()
    };
    if let Some(d) = iso(s) {
        return Some(d);
    }
    if let Some(rest) = s.strip_suffix('日') {
        let (y, rest) = rest.split_once('年')?;
        let (m, d) = rest.split_once('月')?;
        return ymd(y, m, d);
    }
    let parts: Vec<&str> = s.split('/').collect();
    match parts.as_slice() {
        [y, m, d] if y.len() == 4 => ymd(y, m, d),
        [m, d, y] if y.len() == 4 => ymd(y, m, d),
        _ => None,
    }
}

/// `YYYY-MM-DD` from a four-digit year and a one- or two-digit month and day, if valid.
fn ymd(y: &str, m: &str, d: &str) -> Option<String> {
    let digits = |s: &str, lo: usize, hi: usize| {
        (lo..=hi).contains(&s.len()) && s.bytes().all(|c| c.is_ascii_digit()) && s.parse::<u32>().is_ok()
    };
    if !(digits(y, 4, 4) && digits(m, 1, 2) && digits(d, 1, 2)) {
        return None;
    }
    let (month, day): (u32, u32) = (m.parse().ok()?, d.parse().ok()?);
    ((1..=12).contains(&month) && (1..=31).contains(&day)).then(|| format!("{y}-{month:02}-{day:02}"))
}

/// The index terms of a document's front-matter fields (`(key, value)`, `None` for a key
/// without a value), deduplicated, in a stable order.
pub fn meta_terms(fields: &[(String, Option<String>)]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (key, value) in fields {
        let key = normalize_meta(key);
        if key.is_empty() || key.len() > MAX_PART_BYTES {
            continue;
        }
        out.push(format!("{key}{SEP_EXISTS}"));
        let Some(value) = value else { continue };
        let v = normalize_meta(value);
        if v.len() > MAX_PART_BYTES {
            continue;
        }
        if let Some(date) = date_of(&v) {
            out.push(format!("{key}{SEP_DATE}{date}"));
        }
        out.push(format!("{key}{SEP_VALUE}{v}"));
    }
    out.sort_unstable();
    out.dedup();
    out.truncate(MAX_TERMS);
    out
}

impl MetaFilter {
    /// Validates `conditions` (`where_` names them in messages, e.g. `filters`). Errors are
    /// `INVALID_ARGUMENT` with one sentence naming the condition and the fix.
    pub fn new(conditions: &[MetaCondition], where_: &str) -> Result<MetaFilter> {
        if conditions.len() > MAX_CONDITIONS {
            return Err(Error::invalid_argument(format!(
                "{where_} has {} conditions; give at most {MAX_CONDITIONS}.",
                conditions.len()
            )));
        }
        let mut compiled = Vec::with_capacity(conditions.len());
        for (i, c) in conditions.iter().enumerate() {
            let at = format!("{where_}[{i}]");
            let key = normalize_meta(&c.field);
            if key.is_empty() {
                return Err(Error::invalid_argument(format!(
                    "{at}.field is empty; name a front-matter key such as status or tags."
                )));
            }
            let op = c.op.name();
            let one = || -> Result<String> {
                match c.values.as_slice() {
                    [v] => Ok(normalize_meta(v)),
                    [] => Err(Error::invalid_argument(format!(
                        "{at} ({} {op}) needs a value; add \"value\": \"…\".",
                        c.field
                    ))),
                    _ => Err(Error::invalid_argument(format!(
                        "{at} ({} {op}) takes one value, not a list; use op \"in\" for several values.",
                        c.field
                    ))),
                }
            };
            let date = |v: &str| -> Result<String> {
                date_of(v).ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "{at} ({} {op}) compares dates, and '{v}' is not an ISO 8601 date; write it as YYYY-MM-DD, e.g. 2024-01-31.",
                        c.field
                    ))
                })
            };
            let term = |v: &str| format!("{key}{SEP_VALUE}{v}");
            let dated = |d: &str| format!("{key}{SEP_DATE}{d}");
            // Every date term of this key lies strictly between these two.
            let (floor, ceiling) = (format!("{key}{SEP_DATE}"), format!("{key}{SEP_EXISTS}"));
            compiled.push(match c.op {
                MetaOp::Eq => Compiled::AnyOf(vec![term(&one()?)]),
                MetaOp::Ne => Compiled::NoneOf(vec![term(&one()?)]),
                MetaOp::In => {
                    if c.values.is_empty() {
                        return Err(Error::invalid_argument(format!(
                            "{at} ({} in) needs at least one value; add \"values\": [\"…\"].",
                            c.field
                        )));
                    }
                    Compiled::AnyOf(c.values.iter().map(|v| term(&normalize_meta(v))).collect())
                }
                MetaOp::Exists => Compiled::Exists(format!("{key}{SEP_EXISTS}")),
                MetaOp::Gte => {
                    Compiled::Range(Bound::Included(dated(&date(&one()?)?)), Bound::Excluded(ceiling))
                }
                MetaOp::Gt => {
                    Compiled::Range(Bound::Excluded(dated(&date(&one()?)?)), Bound::Excluded(ceiling))
                }
                MetaOp::Lte => {
                    Compiled::Range(Bound::Excluded(floor), Bound::Included(dated(&date(&one()?)?)))
                }
                MetaOp::Lt => {
                    Compiled::Range(Bound::Excluded(floor), Bound::Excluded(dated(&date(&one()?)?)))
                }
            });
        }
        Ok(MetaFilter { conditions: compiled })
    }

    /// Whether there is nothing to test (no conditions).
    pub fn is_empty(&self) -> bool {
        self.conditions.is_empty()
    }

    /// The tantivy query matching the chunks whose documents meet every condition.
    pub(crate) fn query(&self, field: Field) -> Box<dyn Query> {
        let term = |t: &str| Term::from_field_text(field, t);
        let term_query =
            |t: &str| -> Box<dyn Query> { Box::new(TermQuery::new(term(t), IndexRecordOption::Basic)) };
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = vec![(Occur::Must, Box::new(AllQuery))];
        for c in &self.conditions {
            match c {
                Compiled::AnyOf(terms) => {
                    let any = terms.iter().map(|t| (Occur::Should, term_query(t))).collect();
                    clauses.push((Occur::Must, Box::new(BooleanQuery::new(any))));
                }
                Compiled::NoneOf(terms) => {
                    clauses.extend(terms.iter().map(|t| (Occur::MustNot, term_query(t))));
                }
                Compiled::Exists(t) => clauses.push((Occur::Must, term_query(t))),
                Compiled::Range(lo, hi) => {
                    let bound = |b: &Bound<String>| match b {
                        Bound::Included(s) => Bound::Included(term(s)),
                        Bound::Excluded(s) => Bound::Excluded(term(s)),
                        Bound::Unbounded => Bound::Unbounded,
                    };
                    clauses.push((Occur::Must, Box::new(RangeQuery::new(bound(lo), bound(hi)))));
                }
            }
        }
        Box::new(BooleanQuery::new(clauses))
    }
}
