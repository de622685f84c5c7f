//! Extraction, resolution, slugs and traversal of the link graph.

use super::*;
use crate::markdown::Document;

fn doc_links(text: &str) -> DocLinks {
    extract(text, &Document::parse(text))
}

/// The fixture: every link kind, relative and `..` paths, a Japanese heading, duplicates,
/// `.html` → `.md`, an encoded path, a missing file and fragment, an external URL, a cycle.
fn fixture() -> LinkGraph {
    let files: &[(&str, &str)] = &[
        (
            "docs/a.md",
            "# A\n\n## 概要\n\n## 概要\n\nSee [b](b.md), [概要](#概要), [second](#概要-1), [guide](../guide/c.html).\n\n\
- [encoded](%E3%81%82.md) and ![img](img/p.png)\n- [ref][r] and <https://example.com/x>\n\n\
[gone](missing.md) [bad anchor](b.md#nowhere) [up](../../x.md)\n\n[r]: ../guide/c.md#設定-mcp\n[unused]: b.md\n",
        ),
        ("docs/b.md", "# B\n\nBack to [a](a.md#a) and on to [c](/guide/c.md).\n"),
        ("guide/c.md", "# C\n\n## 設定 (MCP)\n\nLoop: [a](../docs/a.md).\n"),
        ("docs/あ.md", "# あ\n\nNo links.\n"),
    ];
    let mut g = LinkGraph::new(7);
    for (path, text) in files {
        g.docs.insert((*path).to_owned(), doc_links(text));
    }
    g
}

fn no_files(_: &str) -> bool {
    false
}

#[test]
fn slugs_follow_github() {
    assert_eq!(slug("Hello, World!"), "hello-world");
    assert_eq!(slug("ツールの一覧（MCP）"), "ツールの一覧mcp");
    assert_eq!(slug("設定 (MCP)"), "設定-mcp");
    assert_eq!(slug("`kb_links` の使い方"), "kb_links-の使い方");
    assert_eq!(slug("ＡＢＣ　全角"), "ａｂｃ全角");
    assert_eq!(
        heading_slugs(["概要", "概要", "概要", "!!"].into_iter()),
        ["概要", "概要-1", "概要-2", "section"]
    );
}

#[test]
fn resolution_rules() {
    let local =
        |p: &str, f: Option<&str>| Target::Local { path: p.to_owned(), fragment: f.map(str::to_owned) };
    assert_eq!(resolve("docs/a.md", "b.md"), local("docs/b.md", None));
    assert_eq!(resolve("docs/a.md", "./sub/../b.md?x=1#Part"), local("docs/b.md", Some("Part")));
    assert_eq!(resolve("docs/a.md", "../guide/c.md#%E6%A6%82%E8%A6%81"), local("guide/c.md", Some("概要")));
    assert_eq!(resolve("docs/a.md", "/guide/c.md"), local("guide/c.md", None));
    assert_eq!(resolve("docs/a.md", "#top"), local("docs/a.md", Some("top")));
    assert_eq!(resolve("docs/a.md", "%E3%81%82.md"), local("docs/あ.md", None));
    assert_eq!(
        resolve("a.md", "https://example.com/a.md"),
        Target::External("https://example.com/a.md".into())
    );
    assert_eq!(resolve("a.md", "mailto:x@y.z"), Target::External("mailto:x@y.z".into()));
    assert_eq!(resolve("a.md", "//cdn.example.com/x.js"), Target::External("//cdn.example.com/x.js".into()));
    assert!(matches!(resolve("docs/a.md", "../../x.md"), Target::Invalid { reason: "outside_root", .. }));
    assert!(matches!(resolve("a.md", ".git/config"), Target::Invalid { reason: "invalid_path", .. }));
}

#[test]
fn extraction_finds_every_kind_with_anchors_and_lines() {
    let g = fixture();
    let a = &g.docs["docs/a.md"];
    let kinds: Vec<(&str, &str)> = a.links.iter().map(|l| (l.kind.as_str(), l.raw.as_str())).collect();
    assert_eq!(
        kinds,
        [
            ("inline", "b.md"),
            ("inline", "#概要"),
            ("inline", "#概要-1"),
            ("inline", "../guide/c.html"),
            ("inline", "%E3%81%82.md"),
            ("image", "img/p.png"),
            ("reference", "../guide/c.md#設定-mcp"),
            ("autolink", "https://example.com/x"),
            ("inline", "missing.md"),
            ("inline", "b.md#nowhere"),
            ("inline", "../../x.md"),
            ("definition", "b.md"),
        ]
    );
    assert_eq!(a.anchors, ["a", "概要", "概要-1"]);
    let doc = Document::parse(
        "# A\n\n## 概要\n\n## 概要\n\nSee [b](b.md), [概要](#概要), [second](#概要-1), [guide](../guide/c.html).\n\n\
- [encoded](%E3%81%82.md) and ![img](img/p.png)\n- [ref][r] and <https://example.com/x>\n\n\
[gone](missing.md) [bad anchor](b.md#nowhere) [up](../../x.md)\n\n[r]: ../guide/c.md#設定-mcp\n[unused]: b.md\n",
    );
    let p = doc.elements.iter().find(|e| e.pointer.as_str() == "1.2.p1").unwrap();
    assert_eq!(a.links[0].anchor, p.anchor());
    assert_eq!(a.links[0].line, 7);
    let li2 = doc.elements.iter().find(|e| e.pointer.as_str() == "1.2.li2").unwrap();
    assert_eq!(a.links[6].anchor, li2.anchor(), "a reference link belongs to where it is used");
    assert_eq!(a.links[6].line, 14, "its line is the definition's");
    assert!(a.links[11].anchor.starts_with("1.2~"), "an unused definition belongs to its section");
}

#[test]
fn html_anchors_and_heading_ids_count() {
    let d = doc_links("# <a name=\"intro-id\"></a>はじめに\n\n## Title {#custom}\n\n<div id='box'></div>\n");
    assert_eq!(d.anchors, ["はじめに", "title", "custom", "intro-id", "box"]);
}

fn summary(edges: &[Edge]) -> Vec<String> {
    edges
        .iter()
        .map(|e| {
            let frag = e.to_fragment.as_deref().map(|f| format!("#{f}")).unwrap_or_default();
            let reason = e.reason.map(|r| format!(" {}", r.as_str())).unwrap_or_default();
            format!("{}:{} {} {}{frag}{reason}", e.depth, e.from, e.kind, e.to)
        })
        .collect()
}

#[test]
fn outgoing_resolves_and_reports_broken_links() {
    let index = LinkIndex::new(fixture());
    let edges = index.traverse("docs/a.md", Direction::Outgoing, 1, &mut no_files);
    assert_eq!(
        summary(&edges),
        [
            "1:docs/a.md inline docs/b.md",
            "1:docs/a.md inline docs/a.md#概要",
            "1:docs/a.md inline docs/a.md#概要-1",
            "1:docs/a.md inline guide/c.md",
            "1:docs/a.md inline docs/あ.md",
            "1:docs/a.md image docs/img/p.png missing_file",
            "1:docs/a.md reference guide/c.md#設定-mcp",
            "1:docs/a.md autolink https://example.com/x",
            "1:docs/a.md inline docs/missing.md missing_file",
            "1:docs/a.md inline docs/b.md#nowhere missing_anchor",
            "1:docs/a.md inline ../../x.md outside_root",
            "1:docs/a.md definition docs/b.md",
        ]
    );
    // A file that exists but is not indexed is not broken.
    let edges = index.traverse("docs/a.md", Direction::Outgoing, 1, &mut |p| p == "docs/img/p.png");
    assert!(edges[5].reason.is_none());
}

#[test]
fn incoming_and_both() {
    let index = LinkIndex::new(fixture());
    let incoming = index.traverse("guide/c.md", Direction::Incoming, 1, &mut no_files);
    assert_eq!(
        summary(&incoming),
        [
            "1:docs/a.md inline guide/c.md",
            "1:docs/a.md reference guide/c.md#設定-mcp",
            "1:docs/b.md inline guide/c.md"
        ]
    );
    let both = index.traverse("docs/b.md", Direction::Both, 1, &mut no_files);
    assert_eq!(
        summary(&both),
        [
            "1:docs/b.md inline docs/a.md#a",
            "1:docs/b.md inline guide/c.md",
            "1:docs/a.md inline docs/b.md",
            "1:docs/a.md inline docs/b.md#nowhere missing_anchor",
            "1:docs/a.md definition docs/b.md",
        ]
    );
    assert!(index.has_incoming("docs/missing.md") && !index.is_document("docs/missing.md"));
}

#[test]
fn depth_follows_a_cycle_without_revisiting() {
    let index = LinkIndex::new(fixture());
    let two = index.traverse("docs/b.md", Direction::Outgoing, 2, &mut no_files);
    let s = summary(&two);
    assert_eq!(&s[..2], ["1:docs/b.md inline docs/a.md#a", "1:docs/b.md inline guide/c.md"]);
    // Depth 2: a's and c's own links; c → a closes the cycle but a is not walked twice.
    assert_eq!(s.iter().filter(|l| l.starts_with("2:docs/a.md")).count(), 12);
    assert_eq!(s.iter().filter(|l| l.starts_with("2:guide/c.md")).count(), 1);
    assert_eq!(s.len(), 15);
    let three = index.traverse("docs/b.md", Direction::Outgoing, 3, &mut no_files);
    // Depth 3 adds あ.md (reached from a at depth 2), which has no links: nothing new.
    assert_eq!(summary(&three), s);
    let both3 = index.traverse("guide/c.md", Direction::Both, 3, &mut no_files);
    let mut keys: Vec<(String, String, usize)> =
        both3.iter().map(|e| (e.from.clone(), e.raw.clone(), e.line)).collect();
    let n = keys.len();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), n, "each link once");
    assert_eq!(n, 12 + 2 + 1, "every link of the three connected files");
}

#[test]
fn broken_links_of_the_whole_project() {
    let index = LinkIndex::new(fixture());
    let broken: Vec<Edge> = index.all(&mut no_files).into_iter().filter(|e| e.reason.is_some()).collect();
    assert_eq!(
        summary(&broken),
        [
            "1:docs/a.md image docs/img/p.png missing_file",
            "1:docs/a.md inline docs/missing.md missing_file",
            "1:docs/a.md inline docs/b.md#nowhere missing_anchor",
            "1:docs/a.md inline ../../x.md outside_root",
        ]
    );
}

#[test]
fn the_snapshot_round_trips_and_tells_its_generation() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("links.bin");
    let g = fixture();
    g.write(&path).unwrap();
    assert_eq!(LinkGraph::read_generation(&path), Some(7));
    assert_eq!(LinkGraph::read(&path).unwrap(), g);
    assert_eq!(LinkGraph::read_generation(&dir.path().join("none.json")), None);
}

#[test]
fn an_html_link_to_a_moved_page_is_still_incoming_to_the_old_md() {
    let mut g = fixture();
    let c = g.docs.remove("guide/c.md").unwrap();
    g.docs.insert("guide/c2.md".to_owned(), c);
    let index = LinkIndex::new(g);
    let old = index.traverse("guide/c.md", Direction::Incoming, 1, &mut no_files);
    assert_eq!(
        summary(&old),
        [
            "1:docs/a.md inline guide/c.html missing_file",
            "1:docs/a.md reference guide/c.md#設定-mcp missing_file",
            "1:docs/b.md inline guide/c.md missing_file",
        ]
    );
    assert!(!index.is_document("guide/c.md") && index.has_incoming("guide/c.md"));
}

#[test]
fn the_snapshot_round_trips_compactly_and_refuses_damage() {
    let mut g = fixture();
    // Holder anchors that are not plain v2 anchors of a leaf: different hashes, and free text.
    g.docs.get_mut("docs/b.md").unwrap().links.push(LinkRecord {
        anchor: "2.p1~0123456789abcdef~fedcba9876543210".to_owned(),
        kind: "inline".to_owned(),
        raw: "a.md".to_owned(),
        line: 9,
    });
    g.docs.get_mut("docs/b.md").unwrap().links.push(LinkRecord {
        anchor: "document".to_owned(),
        kind: "definition".to_owned(),
        raw: "x~y.md".to_owned(),
        line: 10,
    });
    let bytes = g.encode();
    assert_eq!(LinkGraph::decode(&bytes).unwrap(), g);
    let json: usize = g.docs.values().map(|d| serde_json::to_vec(d).unwrap().len()).sum();
    assert!(bytes.len() * 2 < json, "not compact: {} bytes, JSON {json}", bytes.len());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("links.bin");
    g.write(&path).unwrap();
    assert_eq!(LinkGraph::read_generation(&path), Some(7));
    assert_eq!(LinkGraph::read(&path).unwrap(), g);
    // Every truncation, trailing bytes, another file: refused with what to run, never misread.
    for n in 0..bytes.len() {
        let e = LinkGraph::decode(&bytes[..n]).expect_err("a truncated snapshot was read");
        assert!(e.message.contains("kb_reindex"), "{}", e.message);
    }
    assert!(LinkGraph::decode(&[bytes.as_slice(), &[0]].concat()).is_err());
    assert!(LinkGraph::decode(br#"{"version":"1","generation":7,"docs":{}}"#).is_err());
    assert_eq!(LinkGraph::read_generation(&dir.path().join("missing")), None);
}

#[test]
fn a_link_typed_in_one_normal_form_reaches_the_document_named_in_the_other() {
    // `ガイド` composed (NFC) and decomposed (NFD, as macOS stores names).
    let (composed, decomposed) = ("\u{30AC}\u{30A4}\u{30C9}", "\u{30AB}\u{3099}\u{30A4}\u{30C8}\u{3099}");
    assert_ne!(composed, decomposed);
    let mut g = LinkGraph::new(1);
    g.docs.insert(format!("docs/{decomposed}.md"), doc_links("# G\n\n## 手順\n"));
    g.docs.insert(format!("docs/{composed}2.md"), doc_links("# G2\n"));
    g.docs.insert(
        "docs/a.md".to_owned(),
        doc_links(&format!(
            "# A\n\n[nfc]({composed}.md#手順) [html]({composed}.html) [nfd]({decomposed}2.md) [gone]({composed}3.md)\n"
        )),
    );
    let index = LinkIndex::new(g);
    let edges = index.traverse("docs/a.md", Direction::Outgoing, 1, &mut no_files);
    assert_eq!(
        summary(&edges),
        [
            format!("1:docs/a.md inline docs/{decomposed}.md#手順"),
            format!("1:docs/a.md inline docs/{decomposed}.md"),
            format!("1:docs/a.md inline docs/{composed}2.md"),
            format!("1:docs/a.md inline docs/{composed}3.md missing_file"),
        ],
        "targets carry the name as indexed (on disk); only a file that exists in neither form is broken"
    );
    // Incoming links are found from the document's own name.
    let incoming = index.traverse(&format!("docs/{decomposed}.md"), Direction::Incoming, 1, &mut no_files);
    assert_eq!(incoming.len(), 2);
}
