//! Unit tests of the chunker: section boundaries, limits, heading paths and the contract's
//! embedding-text vectors.

use super::*;

fn texts(src: &str, opts: &ChunkOptions) -> Vec<(String, String)> {
    chunk(&Document::parse(src), opts).into_iter().map(|c| (c.pointer.to_string(), c.text)).collect()
}

#[test]
fn chunks_never_cross_sections_and_skip_headings() {
    let src = "---\ntitle: t\n---\nLead.\n\n# A\n\nOne.\n\nTwo.\n\n## B\n\nThree.\n";
    let got = texts(src, &ChunkOptions::default());
    assert_eq!(
        got,
        [
            ("frontmatter".into(), "---\ntitle: t\n---".into()),
            ("p1".into(), "Lead.".into()),
            ("1.p1".into(), "One.\n\nTwo.".into()),
            ("1.1.p1".into(), "Three.".into()),
        ]
    );
    let no_fm = ChunkOptions { include_front_matter: false, ..ChunkOptions::default() };
    assert_eq!(texts(src, &no_fm)[0].0, "p1");
}

#[test]
fn limits_close_chunks_without_splitting_elements() {
    let src = "# A\n\none\n\ntwo\n\nthree\n";
    let by_count = ChunkOptions { max_elements: 2, ..ChunkOptions::default() };
    assert_eq!(
        texts(src, &by_count).iter().map(|c| c.1.as_str()).collect::<Vec<_>>(),
        ["one\n\ntwo", "three"]
    );
    // "one\n\ntwo" is 8 bytes: a 7-byte limit closes after "one"; an oversized element stands alone.
    let by_bytes = ChunkOptions { max_chunk_bytes: 7, ..ChunkOptions::default() };
    assert_eq!(
        texts(src, &by_bytes).iter().map(|c| c.1.as_str()).collect::<Vec<_>>(),
        ["one", "two", "three"]
    );
    let tiny = ChunkOptions { max_chunk_bytes: 1, ..ChunkOptions::default() };
    assert_eq!(texts(src, &tiny).len(), 3);
}

#[test]
fn heading_path_is_the_last_elements_and_lists_contribute_own_text() {
    let src = "# 概要\n\n- 親\n  - 子\n";
    let chunks = chunk(&Document::parse(src), &ChunkOptions::default());
    assert_eq!(chunks.len(), 1);
    assert_eq!(chunks[0].text, "- 親\n\n- 子");
    assert_eq!(chunks[0].heading_path.as_deref(), Some("概要"));
}

#[test]
fn embedding_text_vectors() {
    let v = crate::testdata::vectors("hashes.json");
    for c in v["embeddingText"].as_array().unwrap() {
        let text = embedding_text(
            c["path"].as_str().unwrap(),
            c["headingPath"].as_str(),
            c["chunkText"].as_str().unwrap(),
            c["includeHeadingContext"].as_bool().unwrap(),
        );
        assert_eq!(text, c["embeddingText"].as_str().unwrap());
        assert_eq!(embedding_text_hash(&text), c["sha256"].as_str().unwrap());
    }
}

// ---------------------------------------------------------------- front-matter fields

fn fields(src: &str) -> Vec<(String, Option<String>)> {
    front_matter_fields(&Document::parse(src))
}

fn pair(k: &str, v: Option<&str>) -> (String, Option<String>) {
    (k.to_owned(), v.map(str::to_owned))
}

#[test]
fn front_matter_fields_flatten_lists_and_nested_keys() {
    let src = "---\ntitle: 設計メモ\ntags: [api, 設計]\nタグ:\n  - 設計\nstatus: draft\nupdated: 2024-01-15\nversion: 2\npublished: true\nreviewed:\nauthor:\n  name: 山田\n---\n\n# 本文\n\nテキスト\n";
    assert_eq!(
        fields(src),
        [
            pair("title", Some("設計メモ")),
            pair("tags", Some("api")),
            pair("tags", Some("設計")),
            pair("タグ", Some("設計")),
            pair("status", Some("draft")),
            pair("updated", Some("2024-01-15")),
            pair("version", Some("2")),
            pair("published", Some("true")),
            pair("reviewed", None),
            pair("author", None),
            pair("author.name", Some("山田")),
        ]
    );
}

#[test]
fn documents_without_usable_front_matter_have_no_fields() {
    assert!(fields("# Title\n\nstatus: draft\n").is_empty());
    assert!(fields("---\n- just\n- a list\n---\n\ntext\n").is_empty());
    assert!(fields("---\nstatus: [unclosed\n---\n\ntext\n").is_empty(), "invalid YAML is not an error");
    assert_eq!(fields("---\nstatus: draft\n---\n"), [pair("status", Some("draft"))]);
}

proptest::proptest! {
    /// Any front matter, YAML or not: fields come out or nothing does, never a panic, and every
    /// key is non-empty.
    #[test]
    fn front_matter_fields_never_panic(body in "[a-zタグ:\\-\\[\\]{}&*!|>'\" \\n0-9,.#]{0,80}") {
        let src = format!("---\n{body}\n---\n\ntext\n");
        for (key, _) in front_matter_fields(&Document::parse(&src)) {
            proptest::prop_assert!(!key.is_empty());
        }
    }
}
