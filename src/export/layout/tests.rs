//! The layout's typesetting, checked on a grid font: justification, punctuation spacing,
//! emphasis, soft breaks.

use super::text::{justification, tighten_punctuation};
use super::*;
use crate::export::blocks::parse;
use crate::export::linebreak::is_cjk;
use crate::export::style::{PageFormat, StyleName};

/// CJK characters 1 em, everything else half.
struct Grid;

impl Metrics for Grid {
    fn advance(&self, _face: Face, ch: char) -> Option<f32> {
        Some(if is_cjk(ch) { 1.0 } else { 0.5 })
    }
}

fn lay(md: &str, style: StyleName) -> (Style, Laid) {
    let style = Style::new(style, PageFormat::A5);
    let laid = lay_out(&parse(md), &style, (400.0, 600.0), &Grid, &mut |_| Err("none".into()), true);
    (style, laid)
}

/// One text operation: x, right end, text.
type Run = (f32, f32, String);

/// Text operations per baseline: (y, runs).
fn lines(laid: &Laid) -> Vec<(f32, Vec<Run>)> {
    let mut out: Vec<(f32, Vec<Run>)> = Vec::new();
    for d in &laid.pages[0] {
        let Draw::Text { x, y, size, text, spacing, .. } = d else { continue };
        let w: f32 = text.chars().map(|c| Grid.advance(Face::Sans, c).unwrap() * size).sum::<f32>()
            + spacing * (text.chars().count() as f32 - 1.0);
        match out.iter_mut().find(|(ly, _)| (ly - y).abs() < 0.01) {
            Some((_, runs)) => runs.push((*x, x + w, text.clone())),
            None => out.push((*y, vec![(*x, x + w, text.clone())])),
        }
    }
    out
}

#[test]
fn every_line_of_a_paragraph_but_the_last_ends_at_the_right_edge() {
    let para =
        "日本語の本文は両端揃えで組みます。英単語 configuration と数字 2026 が混じる行も、右端をそろえます。"
            .repeat(3);
    for name in [StyleName::Classic, StyleName::Modern] {
        let (style, laid) = lay(&format!("{para}\n"), name);
        let right = 400.0 - style.margins[1];
        let lines = lines(&laid);
        let body: Vec<_> =
            lines.iter().filter(|(_, runs)| runs.iter().any(|r| r.2.chars().any(is_cjk))).collect();
        assert!(body.len() >= 4, "{name:?}: {lines:?}");
        for (y, runs) in &body[..body.len() - 1] {
            let end = runs.iter().map(|r| r.1).fold(f32::MIN, f32::max);
            let last = runs.last().unwrap().2.chars().last().unwrap();
            let hangs = matches!(last, '、' | '。');
            assert!(
                (end - right).abs() < 0.05 || (hangs && end > right),
                "{name:?}: the line at {y} ends at {end}, not {right}: {runs:?}"
            );
        }
        let (_, final_runs) = body.last().unwrap();
        assert!(
            final_runs.iter().map(|r| r.1).fold(f32::MIN, f32::max) < right - 1.0,
            "the last line is not stretched"
        );
    }
}

#[test]
fn latin_words_are_not_letter_spaced_only_the_gaps_between_them() {
    let para = "漢字 configuration and synchronization are long words that wrap somewhere in this line of text, 漢字。\n";
    let (_, laid) = lay(para, StyleName::Modern);
    let texts: Vec<String> = laid.pages[0]
        .iter()
        .filter_map(|d| if let Draw::Text { text, .. } = d { Some(text.clone()) } else { None })
        .collect();
    assert!(texts.iter().any(|t| t.contains("configuration")), "{texts:?}");
    assert!(texts.iter().any(|t| t.contains("synchronization")), "{texts:?}");
}

fn shaped(text: &str) -> Shaped {
    let mut shaped = Shaped::default();
    shaped.looks.push(Look::plain(Face::Sans, 10.0, Rgb::BLACK));
    for ch in text.chars() {
        shaped.pieces.push(Piece { ch, width: if is_cjk(ch) { 10.0 } else { 5.0 } });
        shaped.look_of.push(0);
    }
    shaped
}

#[test]
fn the_slack_is_shared_equally_outside_latin_words() {
    // Six CJK characters (60), "is" and "Rust" (30), three spaces (15): 105 points.
    let s = shaped("所有権 is Rust の機能");
    let text: Vec<char> = "所有権 is Rust の機能".chars().collect();
    let extra = justification(&s, 0..s.pieces.len(), 112.0);
    // Stretch: 所|有, 有|権, the three spaces, の|機, 機|能 — seven gaps, 1 point each.
    for (k, e) in extra.iter().enumerate() {
        let inside_latin = text[k].is_ascii_alphabetic() && text[k + 1].is_ascii_alphabetic();
        let before_space = text[k + 1] == ' ';
        let expected = if inside_latin || before_space { 0.0 } else { 1.0 };
        assert!((e - expected).abs() < 1e-4, "gap after {:?}: {e}", text[k]);
    }
    // Too loose (more than an em per gap): ragged.
    assert!(justification(&s, 0..s.pieces.len(), 200.0).is_empty());
}

#[test]
fn a_justified_cjk_run_is_one_text_operation_with_character_spacing() {
    let para =
        "日本語の本文は両端揃えで組みます。英単語 configuration と数字 2026 が混じる行も、右端をそろえます。"
            .repeat(3);
    let (_, laid) = lay(&format!("{para}\n"), StyleName::Modern);
    let texts: Vec<(String, f32)> = laid.pages[0]
        .iter()
        .filter_map(|d| {
            if let Draw::Text { text, spacing, .. } = d { Some((text.clone(), *spacing)) } else { None }
        })
        .collect();
    assert!(
        texts.iter().any(|(t, s)| t.chars().count() > 5 && t.chars().all(is_cjk) && *s > 0.0),
        "{texts:?}"
    );
    assert!(texts.iter().all(|(t, s)| !t.contains("configuration") || *s == 0.0), "{texts:?}");
}

#[test]
fn inline_code_and_latin_sit_on_the_baseline_of_the_japanese_text() {
    let (_, laid) = lay("本文の `let x = 1;` と Latin words と**太字**です。\n", StyleName::Technical);
    let baselines: Vec<f32> = laid.pages[0]
        .iter()
        .filter_map(|d| match d {
            Draw::Text { y, text, .. } if !text.chars().all(|c| c.is_ascii_digit() || " /".contains(c)) => {
                Some(*y)
            }
            _ => None,
        })
        .collect();
    assert!(baselines.len() >= 3, "{baselines:?}");
    assert!(baselines.iter().all(|y| (y - baselines[0]).abs() < 1e-4), "{baselines:?}");
}

#[test]
fn consecutive_punctuation_is_set_half_width() {
    let mut shaped = Shaped::default();
    let look = Look::plain(Face::Sans, 10.0, Rgb::BLACK);
    shaped.looks.push(look);
    for ch in "です。」「（注）".chars() {
        shaped.pieces.push(Piece { ch, width: 10.0 });
        shaped.look_of.push(0);
    }
    tighten_punctuation(&mut shaped);
    let widths: Vec<f32> = shaped.pieces.iter().map(|p| p.width).collect();
    // 。 before 」 and 」 before 「 keep half; （ after 「 loses its empty left half.
    assert_eq!(widths, [10.0, 10.0, 5.0, 5.0, 10.0, 5.0, 10.0, 10.0]);
    assert_eq!(shaped.shift[5], -5.0);
    assert_eq!(shaped.natural[5], 10.0);
}

#[test]
fn japanese_emphasis_is_gothic_never_slanted() {
    let (_, laid) = lay("本文の*強調*と**所有権**と*emphasis*です。\n", StyleName::Classic);
    let mut seen = 0;
    for d in &laid.pages[0] {
        let Draw::Text { face, italic, bold, text, .. } = d else { continue };
        assert!(!italic, "nothing is slanted in a Japanese document: {d:?}");
        if text.contains("強") || text.contains("調") {
            assert_eq!(*face, Face::Sans, "emphasis in a mincho body is gothic: {d:?}");
            seen += 1;
        }
        if text.contains("所有権") {
            assert!(bold, "{d:?}");
        }
    }
    assert!(seen > 0);
    // A document without Japanese keeps slanted Latin emphasis.
    let (_, laid) = lay("Plain *emphasis* here.\n", StyleName::Classic);
    assert!(laid.pages[0].iter().any(|d| matches!(d, Draw::Text { italic: true, .. })));
}

#[test]
fn soft_breaks_follow_the_shared_text_rule() {
    let book = parse("かかるほど\n深い、\n定期的\n*強調*。The borrow\nchecker\n`code`\n");
    let Block::Paragraph(spans) = &book.blocks[0] else { panic!("{book:?}") };
    assert_eq!(plain(spans), "かかるほど深い、定期的強調。The borrow checker code");
}
