//! Front-matter filters: equality and membership after folding, date ranges, top-k within
//! the files that pass, malformed filters, the indexed terms.

use super::*;

/// A chunk of `path` whose file has the front matter `fields` (as `key: value` pairs).
fn meta_doc(chunk_id: u64, path: &str, text: &str, fields: &[(&str, &str)]) -> LexicalDoc {
    let pairs: Vec<(String, Option<String>)> = fields
        .iter()
        .map(|(k, v)| ((*k).to_owned(), Some((*v).to_owned()).filter(|v| !v.is_empty())))
        .collect();
    LexicalDoc { meta: meta_terms(&pairs).into(), ..doc(chunk_id, path, "", text) }
}

fn cond(field: &str, op: MetaOp, values: &[&str]) -> MetaCondition {
    MetaCondition { field: field.to_owned(), op, values: values.iter().map(|v| (*v).to_owned()).collect() }
}

/// The sorted paths whose front matter meets all `conds`.
fn passing(index: &LexicalIndex, conds: &[MetaCondition]) -> Vec<String> {
    let filter = MetaFilter::new(conds, "filters").unwrap();
    let mut paths: Vec<String> = index.paths_matching(&filter).unwrap().into_iter().collect();
    paths.sort();
    paths
}

fn meta_index() -> LexicalIndex {
    index_with(&[
        meta_doc(
            1,
            "a.md",
            "設計 メモ",
            &[("status", "Draft"), ("tags", "api"), ("tags", "設計"), ("updated", "2024-01-15")],
        ),
        meta_doc(
            2,
            "a.md",
            "続き",
            &[("status", "Draft"), ("tags", "api"), ("tags", "設計"), ("updated", "2024-01-15")],
        ),
        meta_doc(
            3,
            "b.md",
            "設計 仕様",
            &[("status", "published"), ("tags", "guide"), ("updated", "2023-12-31T23:00:00+09:00")],
        ),
        meta_doc(4, "c.md", "設計 なし", &[]),
        meta_doc(5, "d.md", "設計 日本語", &[("タグ", "設計"), ("状態", "ｄｒａｆｔ"), ("reviewed", "")]),
    ])
}

#[test]
fn equality_and_list_membership_compare_after_nfkc_and_case_folding() {
    let index = meta_index();
    assert_eq!(passing(&index, &[cond("status", MetaOp::Eq, &["draft"])]), ["a.md"]);
    assert_eq!(passing(&index, &[cond("STATUS", MetaOp::Eq, &["ＤＲＡＦＴ"])]), ["a.md"]);
    // a list field matches when one of its items does
    assert_eq!(passing(&index, &[cond("tags", MetaOp::Eq, &["API"])]), ["a.md"]);
    assert_eq!(passing(&index, &[cond("tags", MetaOp::Eq, &["設計"])]), ["a.md"]);
    // Japanese keys and full-width values
    assert_eq!(passing(&index, &[cond("タグ", MetaOp::Eq, &["設計"])]), ["d.md"]);
    assert_eq!(passing(&index, &[cond("状態", MetaOp::Eq, &["Draft"])]), ["d.md"]);
    assert_eq!(passing(&index, &[cond("tags", MetaOp::In, &["guide", "api"])]), ["a.md", "b.md"]);
    // ne passes files without the field
    assert_eq!(passing(&index, &[cond("status", MetaOp::Ne, &["draft"])]), ["b.md", "c.md", "d.md"]);
    // exists, also for a key with an empty value
    assert_eq!(passing(&index, &[cond("reviewed", MetaOp::Exists, &[])]), ["d.md"]);
    assert_eq!(passing(&index, &[cond("updated", MetaOp::Exists, &[])]), ["a.md", "b.md"]);
    // conditions combine with AND
    assert_eq!(
        passing(&index, &[cond("tags", MetaOp::Eq, &["api"]), cond("status", MetaOp::Eq, &["published"])]),
        Vec::<String>::new()
    );
    assert!(passing(&index, &[cond("nope", MetaOp::Eq, &["x"])]).is_empty());
}

#[test]
fn date_ranges_compare_calendar_days() {
    let index = meta_index();
    let by = |op, d| passing(&index, &[cond("updated", op, &[d])]);
    assert_eq!(by(MetaOp::Gte, "2024-01-01"), ["a.md"]);
    assert_eq!(by(MetaOp::Gte, "2024-01-15"), ["a.md"]);
    assert!(by(MetaOp::Gt, "2024-01-15").is_empty());
    assert_eq!(by(MetaOp::Lt, "2024-01-15"), ["b.md"]);
    // the time of day is ignored: 2023-12-31T23:00 is on 2023-12-31
    assert_eq!(by(MetaOp::Lte, "2023-12-31"), ["b.md"]);
    assert!(by(MetaOp::Lt, "2023-12-31").is_empty());
    assert_eq!(
        passing(
            &index,
            &[cond("updated", MetaOp::Gte, &["2023-12-01"]), cond("updated", MetaOp::Lte, &["2024-12-31"])]
        ),
        ["a.md", "b.md"]
    );
    // files without a date are never in a range
    assert!(!by(MetaOp::Lte, "2999-01-01").contains(&"c.md".to_owned()));
}

#[test]
fn a_front_matter_filter_counts_top_k_within_the_files_that_pass() {
    // 60 strong matches without the tag, 3 weak ones with it: top 2 of the filtered are found.
    let mut docs: Vec<LexicalDoc> = (0..60)
        .map(|i| meta_doc(i + 1, &format!("x/{i}.md"), "needle needle needle", &[("tags", "other")]))
        .collect();
    for i in 0..3 {
        docs.push(meta_doc(
            100 + i,
            &format!("y/{i}.md"),
            "a long text where the needle appears once among many other words",
            &[("tags", "wanted")],
        ));
    }
    let index = index_with(&docs);
    let filter = MetaFilter::new(&[cond("tags", MetaOp::Eq, &["wanted"])], "filters").unwrap();
    let allowed = index.paths_matching(&filter).unwrap();
    let scope = |p: &str| allowed.contains(p);
    let hits = index.search("needle", 2, Some(&scope)).unwrap();
    assert_eq!(hits.len(), 2);
    assert!(hits.iter().all(|h| h.path.starts_with("y/")), "{hits:?}");
    assert_eq!(sorted(index.chunk_ids_in_scope(&scope).unwrap()), [100, 101, 102]);
}

#[test]
fn a_malformed_filter_is_one_sentence_naming_the_condition() {
    let err = |conds: &[MetaCondition]| {
        let e = MetaFilter::new(conds, "filters").unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert!(!e.message.contains('\n'), "{}", e.message);
        assert!(e.message.ends_with('.'), "{}", e.message);
        e.message
    };
    let m = err(&[cond("status", MetaOp::Eq, &["x"]), cond("updated", MetaOp::Gte, &["last week"])]);
    assert!(
        m.starts_with("filters[1] (updated gte) compares dates, and 'last week' is not an ISO 8601 date"),
        "{m}"
    );
    assert!(err(&[cond("updated", MetaOp::Lt, &["2024-13-01"])]).contains("YYYY-MM-DD"));
    assert!(err(&[cond(" ", MetaOp::Eq, &["x"])]).starts_with("filters[0].field is empty"));
    assert!(err(&[cond("status", MetaOp::Eq, &[])]).contains("needs a value"));
    assert!(err(&[cond("status", MetaOp::Eq, &["a", "b"])]).contains("use op \"in\""));
    assert!(err(&[cond("tags", MetaOp::In, &[])]).contains("at least one value"));
}

#[test]
fn meta_terms_cover_values_dates_and_keys() {
    let pairs = |v: &[(&str, Option<&str>)]| -> Vec<(String, Option<String>)> {
        v.iter().map(|(k, v)| ((*k).to_owned(), v.map(str::to_owned))).collect()
    };
    let terms = meta_terms(&pairs(&[
        ("Updated", Some("2024-02-03 10:00")),
        ("draft", None),
        ("Tags", Some(" API ")),
    ]));
    assert_eq!(
        terms,
        [
            "draft\u{1e}",
            "tags\u{1e}",
            "tags\u{1f}api",
            "updated\u{1d}2024-02-03",
            "updated\u{1e}",
            "updated\u{1f}2024-02-03 10:00",
        ]
    );
    let ms = meta_terms(&pairs(&[("ms.date", Some("11/09/2020")), ("改訂日", Some("２０２４年１月５日"))]));
    assert!(ms.contains(&"ms.date\u{1d}2020-11-09".to_owned()), "{ms:?}");
    assert!(ms.contains(&"改訂日\u{1d}2024-01-05".to_owned()), "full-width digits after NFKC: {ms:?}");
    let date = |s: &str| date_of(s);
    assert_eq!(date("2024-02-30").as_deref(), Some("2024-02-30"), "day-of-month is checked loosely");
    assert_eq!(date("2024-02-03T10:00:00Z").as_deref(), Some("2024-02-03"));
    assert_eq!(date("2024/2/3").as_deref(), Some("2024-02-03"));
    assert_eq!(date("2024年2月3日").as_deref(), Some("2024-02-03"));
    // Microsoft Learn's ms.date: month first
    assert_eq!(date("11/09/2020").as_deref(), Some("2020-11-09"));
    for not_a_date in [
        "2024-2-3",
        "2024-02-03x",
        "13/01/2020",
        "2024/00/10",
        "v1.2",
        "2024",
        "",
        "１１/09/2020",
        "api 草案",
        "2024-01-0日",
        "2024/01/01/01",
        "年月日",
        "2024年13月1日",
    ] {
        assert_eq!(date(not_a_date), None, "{not_a_date}");
    }
    assert_eq!(normalize_meta("  ＡＰＩ "), "api");
}
