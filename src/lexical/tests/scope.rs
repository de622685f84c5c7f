//! The scope filter: top-k within scope, each chunk's own path, ties by chunk id.

use super::*;

#[test]
fn top_k_is_counted_within_scope() {
    let mut docs: Vec<LexicalDoc> =
        (0..99).map(|i| doc(i + 1, &format!("out/{i}.md"), "needle", "needle needle needle")).collect();
    docs.push(doc(
        1000,
        "in/only.md",
        "",
        "a long text where the needle appears once among many other words",
    ));
    let index = index_with(&docs);
    let in_scope = |p: &str| p.starts_with("in/");
    let hits = index.search("needle", 1, Some(&in_scope)).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!((hits[0].chunk_id, hits[0].path.as_str()), (1000, "in/only.md"));
    // without the filter the in-scope chunk is last
    let all = index.search("needle", 100, None).unwrap();
    assert_eq!(all.len(), 100);
    assert_eq!(all.last().unwrap().chunk_id, 1000);
    // nothing in scope
    let none = |_: &str| false;
    assert!(index.search("needle", 5, Some(&none)).unwrap().is_empty());
}

#[test]
fn scope_filter_sees_each_chunks_own_path() {
    let docs: Vec<LexicalDoc> = ["d.md", "a.md", "c.md", "b.md", "e/f.md"]
        .iter()
        .enumerate()
        .map(|(i, p)| doc(i as u64, p, "", "same words"))
        .collect();
    let index = index_with(&docs);
    for (wanted, id) in [("a.md", 1), ("b.md", 3), ("c.md", 2), ("d.md", 0), ("e/f.md", 4)] {
        let only = |p: &str| p == wanted;
        let hits = index.search("words", 10, Some(&only)).unwrap();
        assert_eq!(
            hits.iter().map(|h| (h.chunk_id, h.path.as_str())).collect::<Vec<_>>(),
            vec![(id, wanted)]
        );
    }
    // after more commits (new segments, deletions) the paths still line up
    let mut w = index.writer(WriterSize::Bulk(0)).unwrap();
    w.delete_path("c.md");
    w.add(&doc(9, "c.md", "", "same words again")).unwrap();
    w.commit(2).unwrap();
    let only_c = |p: &str| p == "c.md";
    assert_eq!(
        index.search("words", 10, Some(&only_c)).unwrap().iter().map(|h| h.chunk_id).collect::<Vec<_>>(),
        vec![9]
    );
}

#[test]
fn ties_are_broken_by_chunk_id() {
    let docs: Vec<LexicalDoc> = (1..=20).rev().map(|i| doc(i, &format!("{i}.md"), "", "same text")).collect();
    let index = index_with(&docs);
    assert_eq!(ids(&index, "same"), (1..=10).collect::<Vec<u64>>());
}
