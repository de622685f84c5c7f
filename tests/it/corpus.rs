//! Property test over the real Japanese corpora: paging is lossless and spans are sound.

use lvs::markdown::{Anchor, Document, ReadLimits, read_slice_from, split_continuation};

use crate::support::{markdown_files, shared_or_skip};

/// A small deterministic generator (xorshift), so failures reproduce.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
}

fn check_document(name: &str, text: &str, rng: &mut Rng) {
    let doc = Document::parse(text);
    let mut last_start = 0;
    for e in &doc.elements {
        assert!(e.range.start < e.range.end && e.range.end <= text.len(), "{name}: {} range", e.pointer);
        assert!(
            text.is_char_boundary(e.range.start) && text.is_char_boundary(e.range.end),
            "{name}: {}",
            e.pointer
        );
        assert!(e.subtree_range.end <= text.len() && text.is_char_boundary(e.subtree_range.end), "{name}");
        assert!(e.range.start >= last_start, "{name}: elements out of order at {}", e.pointer);
        last_start = e.range.start;
        assert!(Anchor::parse(&e.anchor()).is_ok(), "{name}: anchor {}", e.anchor());
        if e.kind != lvs::markdown::ElementKind::ListItem {
            assert_eq!(e.text, &text[e.range.clone()], "{name}: {}", e.pointer);
        }
    }
    // Pointers are unique, so every anchor resolves to its own element.
    let mut seen = std::collections::BTreeSet::new();
    for e in &doc.elements {
        assert!(seen.insert(e.pointer.as_str()), "{name}: duplicate pointer {}", e.pointer);
    }
    let limits = ReadLimits::clamped(Some(rng.range(1, 30) as i64), Some(rng.range(1, 20_000) as i64));
    let mut out = String::new();
    let mut anchor: Option<Anchor> = None;
    let mut offset = 0;
    let mut pages = 0;
    loop {
        let page = read_slice_from(text, &doc, name, anchor.as_ref(), offset, limits)
            .unwrap_or_else(|e| panic!("{name}: page {pages}: {e}"));
        assert!(!page.elements.is_empty() || doc.elements.is_empty(), "{name}: empty page");
        let page_text_empty = page.markdown.is_empty() && !text.is_empty();
        out.push_str(&page.markdown);
        pages += 1;
        match page.next_pointer {
            // A split element continues at `anchor@offset` (the engine follows it the same way).
            Some(next) => {
                let (pointer, at) = split_continuation(&next);
                anchor = Some(Anchor::parse(pointer).expect("emitted anchors parse"));
                offset = at.unwrap_or(0);
            }
            None => break,
        }
        // Each page ends at least one element or, inside a split element, one byte further.
        assert!(!page_text_empty, "{name}: page {pages} is empty");
        assert!(pages <= doc.elements.len() + text.len() + 1, "{name}: paging does not advance");
    }
    assert_eq!(out, text, "{name}: pages must concatenate to the source ({limits:?})");
}

#[test]
fn every_corpus_file_pages_losslessly() {
    let Some(corpora) = shared_or_skip("corpora") else { return };
    let files = markdown_files(&corpora);
    assert!(files.len() >= 6_000, "expected the three corpora, found {} files", files.len());
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        let Ok(text) = String::from_utf8(bytes) else { continue };
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let name = path.strip_prefix(&corpora).unwrap().to_string_lossy();
        check_document(&name, text, &mut rng);
    }
}

#[test]
fn synthetic_edge_cases_page_losslessly() {
    let mut rng = Rng(42);
    let cases = [
        "",
        "\n",
        "\u{3000}",
        "# 見出し",
        "- a\n- b\n  - c\n    - d\n",
        "> q\n>\n> > nested\n\n後\n",
        "```\nunclosed fence\n\n# not heading\n",
        "| a |\n|---|\n| 1 |\n| 2 |\n\n| b |\n|---|\n",
        "- - - x\n",
        "1. a\r\n2. b\r\n\r\n   para\r\n",
        "Title\n===\n\nSub\n---\n\n***\n\n<div>\n\nhtml\n\n</div>\n",
        "text\n    not code\n\n    code\n",
        "---\nfront: matter\n---\n# H\n",
        "- [ ] task\n- [x] done\n",
        "* a\n\n  ```rust\n  fn main() {}\n  ```\n\n  after\n* b\n",
    ];
    for (i, c) in cases.iter().enumerate() {
        for _ in 0..5 {
            check_document(&format!("case{i}"), c, &mut rng);
        }
    }
    let deep: String = (0..200).map(|d| format!("{}- level {d}\n", "  ".repeat(d))).collect();
    check_document("deep", &deep, &mut rng);
    let quotes: String = (0..200).map(|d| format!("{} q\n", ">".repeat(d + 1))).collect();
    check_document("deep quotes", &quotes, &mut rng);
}
