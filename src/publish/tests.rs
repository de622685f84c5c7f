//! The publishing stream's decisions, checked on small documents.

use super::*;

fn events(text: &str) -> Vec<Event> {
    publish(text, Language::En).into_iter().map(|(e, _)| e).collect()
}

fn text_of(events: &[Event]) -> String {
    let mut out = String::new();
    for e in events {
        match e {
            Event::Text(t) | Event::Code(t) => out.push_str(t),
            Event::SoftBreak => out.push(' '),
            _ => {}
        }
    }
    out
}

#[test]
fn soft_breaks_follow_the_one_text_rule() {
    let e = events("所有権はかかるほど\n*深い*理由、\n定期的。The borrow\nchecker\n");
    assert_eq!(text_of(&e), "所有権はかかるほど深い理由、定期的。The borrow checker");
    assert_eq!(e.iter().filter(|e| **e == Event::SoftBreak).count(), 1);
}

#[test]
fn a_heading_id_leaves_the_text_and_becomes_the_id() {
    let e = events("## 設計 {#design .wide}\n");
    assert_eq!(
        e[0],
        Event::Start(Tag::Heading { level: 2, id: Some("design".into()), classes: vec!["wide".into()] })
    );
    assert_eq!(text_of(&e), "設計");
}

#[test]
fn an_alert_is_a_titled_block_in_the_document_language() {
    let text = "> [!WARNING]\n> Mind the gap.\n";
    let e = events(text);
    assert_eq!(e[0], Event::Start(Tag::Alert { kind: AlertKind::Warning, title: "Warning".into() }));
    assert_eq!(text_of(&e), "Mind the gap.");
    let ja: Vec<Event> = publish(text, Language::Ja).into_iter().map(|(e, _)| e).collect();
    assert_eq!(ja[0], Event::Start(Tag::Alert { kind: AlertKind::Warning, title: "警告".into() }));
}

#[test]
fn task_items_know_their_state_on_their_start() {
    let e = events("- [x] done\n- [ ] open\n- plain\n");
    let tasks: Vec<Option<bool>> = e
        .iter()
        .filter_map(|e| match e {
            Event::Start(Tag::Item { task }) => Some(*task),
            _ => None,
        })
        .collect();
    assert_eq!(tasks, [Some(true), Some(false), None]);
}

#[test]
fn footnotes_are_numbered_by_first_reference_and_collected_after_the_body() {
    let e = events("[^b]: Body of b.\n\nFirst[^a], second[^b], again[^a].\n\n[^a]: Body of a.\n\nAfter.\n");
    let refs: Vec<(usize, usize)> = e
        .iter()
        .filter_map(|e| match e {
            Event::FootnoteReference { number, nth, .. } => Some((*number, *nth)),
            _ => None,
        })
        .collect();
    // `b` was defined first, so it is 1; `a` is 2.
    assert_eq!(refs, [(2, 1), (1, 1), (2, 2)]);
    let at = e.iter().position(|e| *e == Event::Start(Tag::Footnotes)).expect("footnotes");
    assert_eq!(text_of(&e[..at]), "First, second, again.After.");
    let defs: Vec<usize> = e[at..]
        .iter()
        .filter_map(|e| match e {
            Event::Start(Tag::FootnoteDefinition { number, referenced: true, .. }) => Some(*number),
            _ => None,
        })
        .collect();
    assert_eq!(defs, [1, 2]);
    assert_eq!(text_of(&e[at..]), "Body of b.Body of a.");
}

#[test]
fn code_blocks_and_front_matter_are_whole() {
    let e = events("---\ntitle: T\n---\n\n```rust,ignore\nfn main() {}\n```\n");
    assert_eq!(e[0], Event::FrontMatter("title: T\n".into()));
    assert_eq!(e[1], Event::CodeBlock { lang: "rust".into(), text: "fn main() {}\n".into() });
}

#[test]
fn a_soft_break_keeps_its_space_next_to_what_is_not_text() {
    // A raw inline tag keeps the text before it (the HTML export's rule) …
    assert_eq!(text_of(&events("<b>所有権</b>\n深い\n")), "所有権深い");
    // … but after it the side is unknown, as after a footnote reference or inside an image.
    assert_eq!(text_of(&events("所有権\n<b>深い</b>\n")), "所有権 深い");
    assert_eq!(text_of(&events("所有権[^1]\n深い\n\n[^1]: 注。\n")), "所有権 深い注。");
    assert_eq!(text_of(&events("![所有\n権](a.png)\n")), "所有 権");
}
