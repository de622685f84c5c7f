//! Book parts added around the laid-out body: the running header with the chapter title (book
//! styles), the 目次 (table of contents) pages in front, and what the PDF needs to link them.
//!
//! Works on the finished layout (pages of [`Draw`] ops and the heading outline), so the body's
//! layout does not change with them: the body keeps its page numbers 1, 2, …, and the 目次 pages
//! in front are numbered i, ii, … (the PDF's page labels say the same to a viewer).

use super::layout::{Draw, Face, Laid, Metrics};
use super::style::Style;

/// A link from an area of one page to a place in the book.
#[derive(Clone, Debug, PartialEq)]
pub struct InternalLink {
    /// The page the link is on (0-based, in the final PDF).
    pub page: usize,
    /// Left.
    pub x: f32,
    /// Bottom.
    pub y: f32,
    /// Width.
    pub w: f32,
    /// Height.
    pub h: f32,
    /// The page it opens (0-based, in the final PDF).
    pub target_page: usize,
    /// The top of the target, in PDF points.
    pub target_y: f32,
}

/// What the front matter added.
#[derive(Clone, Debug, Default)]
pub struct Front {
    /// Pages of 目次 in front of the body.
    pub pages: usize,
    /// Its entries' links.
    pub links: Vec<InternalLink>,
}

/// The title of the table of contents.
pub const TOC_TITLE: &str = "目次";

/// The fewest headings in the top two levels that make a 目次 worth a page.
pub const TOC_MIN_ENTRIES: usize = 3;

fn width(metrics: &dyn Metrics, face: Face, size: f32, text: &str) -> f32 {
    text.chars()
        .map(|c| metrics.advance(face, c).or_else(|| metrics.advance(Face::Sans, c)).unwrap_or(1.0) * size)
        .sum()
}

/// `text` cut with … to at most `max` points wide.
fn fit(metrics: &dyn Metrics, face: Face, size: f32, text: &str, max: f32) -> String {
    if width(metrics, face, size, text) <= max {
        return text.to_owned();
    }
    let ell = width(metrics, face, size, "…");
    let mut out = String::new();
    let mut w = 0.0;
    for c in text.chars() {
        let cw = width(metrics, face, size, &c.to_string());
        if w + cw + ell > max {
            break;
        }
        w += cw;
        out.push(c);
    }
    out.push('…');
    out
}

/// The highest heading level used in the outline.
fn top_level(laid: &Laid) -> u8 {
    laid.outline.iter().map(|e| e.level).min().unwrap_or(1)
}

/// Draws the current chapter's title at the head of every body page that does not open a
/// chapter, when the style has running headers.
pub fn running_headers(laid: &mut Laid, style: &Style, page: (f32, f32), metrics: &dyn Metrics, face: Face) {
    if !style.running_header || laid.outline.is_empty() {
        return;
    }
    let top = top_level(laid);
    let size = style.body * 0.78;
    let (left, right) = (style.margins[3], page.0 - style.margins[1]);
    let baseline = page.1 - style.margins[0] * 0.55;
    let chapters: Vec<(usize, &str)> =
        laid.outline.iter().filter(|e| e.level == top).map(|e| (e.page, e.title.as_str())).collect();
    for p in 0..laid.pages.len() {
        if chapters.iter().any(|(cp, _)| *cp == p) {
            continue;
        }
        let Some((_, title)) = chapters.iter().rev().find(|(cp, _)| *cp < p) else { continue };
        let shown = fit(metrics, face, size, title, (right - left) * 0.8);
        let w = width(metrics, face, size, &shown);
        let x = (left + right - w) / 2.0;
        let rule_y = baseline - size * 0.55;
        laid.pages[p].push(Draw::Text {
            x,
            y: baseline,
            face,
            size,
            color: style.rule,
            bold: false,
            italic: false,
            text: shown,
            spacing: 0.0,
        });
        laid.pages[p].push(Draw::Line {
            x1: left,
            y1: rule_y,
            x2: right,
            y2: rule_y,
            color: style.rule,
            width: 0.3,
        });
    }
}

/// Puts 目次 pages in front of the body when the top two heading levels hold at least
/// [`TOC_MIN_ENTRIES`] headings; moves the outline's pages behind them.
pub fn table_of_contents(
    laid: &mut Laid,
    style: &Style,
    page: (f32, f32),
    metrics: &dyn Metrics,
    face: Face,
) -> Front {
    let top = top_level(laid);
    let entries: Vec<_> = laid.outline.iter().filter(|e| e.level <= top + 1).cloned().collect();
    if entries.len() < TOC_MIN_ENTRIES {
        return Front::default();
    }
    let (left, right) = (style.margins[3], page.0 - style.margins[1]);
    let (ceiling, floor) = (page.1 - style.margins[0], style.margins[2]);
    let line = style.body * style.leading * 1.15;
    let mut pages: Vec<Vec<Draw>> = vec![Vec::new()];
    let mut links = Vec::new();
    // The title.
    let title_size = style.body * 1.7;
    let tw = width(metrics, face, title_size, TOC_TITLE);
    pages[0].push(Draw::Text {
        x: (left + right - tw) / 2.0,
        y: ceiling - title_size,
        face,
        size: title_size,
        color: style.accent,
        bold: true,
        italic: false,
        text: TOC_TITLE.to_owned(),
        spacing: 0.0,
    });
    let mut y = ceiling - title_size * 1.3 - line * 1.5;
    for (i, e) in entries.iter().enumerate() {
        let chapter = e.level == top;
        let size = if chapter { style.body } else { style.body * 0.95 };
        let gap = if chapter && i > 0 { line * 0.4 } else { 0.0 };
        if y - gap - line < floor {
            pages.push(Vec::new());
            y = ceiling;
        } else {
            y -= gap;
        }
        let baseline = y - line + (line - size) / 2.0 + size * 0.12;
        let indent = if chapter { 0.0 } else { style.body * 1.5 };
        let number = (e.page + 1).to_string();
        let nw = width(metrics, face, size, &number);
        let x = left + indent;
        let room = right - nw - style.body * 2.0 - x;
        let shown = fit(metrics, face, size, &e.title, room);
        let sw = width(metrics, face, size, &shown);
        let ops = &mut pages.last_mut().expect("one page at least");
        ops.push(Draw::Text {
            x,
            y: baseline,
            face,
            size,
            color: style.text,
            bold: chapter,
            italic: false,
            text: shown,
            spacing: 0.0,
        });
        // A leader of dots from the title to the page number.
        let dot = width(metrics, face, size, "・").max(size * 0.3);
        let (from, to) = (x + sw + size * 0.5, right - nw - size * 0.5);
        let dots = ((to - from) / dot).floor().max(0.0) as usize;
        if dots >= 2 {
            ops.push(Draw::Text {
                x: to - dots as f32 * dot,
                y: baseline,
                face,
                size,
                color: style.rule,
                bold: false,
                italic: false,
                text: "・".repeat(dots),
                spacing: 0.0,
            });
        }
        ops.push(Draw::Text {
            x: right - nw,
            y: baseline,
            face,
            size,
            color: style.text,
            bold: chapter,
            italic: false,
            text: number,
            spacing: 0.0,
        });
        links.push((pages.len() - 1, x, y - line, right - x, line, e.page, e.y));
        y -= line;
    }
    let count = pages.len();
    for e in &mut laid.outline {
        e.page += count;
    }
    let front: Vec<Vec<Draw>> = pages;
    laid.pages.splice(0..0, front);
    Front {
        pages: count,
        links: links
            .into_iter()
            .map(|(page, x, y, w, h, target, target_y)| InternalLink {
                page,
                x,
                y,
                w,
                h,
                target_page: target + count,
                target_y,
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::layout::OutlineEntry;
    use crate::export::style::{PageFormat, StyleName};

    struct Fixed;

    impl Metrics for Fixed {
        fn advance(&self, _face: Face, ch: char) -> Option<f32> {
            Some(if ch.is_ascii() { 0.5 } else { 1.0 })
        }
    }

    fn laid(entries: &[(u8, &str, usize)], pages: usize) -> Laid {
        Laid {
            pages: vec![Vec::new(); pages],
            outline: entries
                .iter()
                .map(|(level, title, page)| OutlineEntry {
                    level: *level,
                    title: (*title).to_owned(),
                    page: *page,
                    y: 500.0,
                    id: None,
                })
                .collect(),
            warnings: Vec::new(),
        }
    }

    fn texts(ops: &[Draw]) -> Vec<String> {
        ops.iter()
            .filter_map(|d| match d {
                Draw::Text { text, .. } => Some(text.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_toc_goes_in_front_numbers_body_pages_and_links_each_entry() {
        let style = Style::new(StyleName::Classic, PageFormat::A5);
        let page = (419.53, 595.28);
        let mut book = laid(&[(1, "第1章", 0), (2, "節", 1), (1, "第2章", 3), (3, "小節", 3)], 5);
        let front = table_of_contents(&mut book, &style, page, &Fixed, Face::Sans);
        assert_eq!(front.pages, 1);
        assert_eq!(book.pages.len(), 6);
        let shown = texts(&book.pages[0]);
        assert_eq!(shown[0], TOC_TITLE);
        // Level 3 is left out; the numbers are the body's (1-based), not the PDF's.
        for (title, number) in [("第1章", "1"), ("節", "2"), ("第2章", "4")] {
            let at = shown.iter().position(|t| t == title).unwrap_or_else(|| panic!("{title}: {shown:?}"));
            assert!(shown[at + 1..].iter().take(2).any(|t| t == number), "{title} → {number}: {shown:?}");
        }
        assert!(!shown.iter().any(|t| t == "小節"));
        let targets: Vec<usize> = front.links.iter().map(|l| l.target_page).collect();
        assert_eq!(targets, [1, 2, 4]);
        assert!(front.links.iter().all(|l| l.page == 0 && l.w > 0.0 && l.h > 0.0));
        // The outline moved behind the 目次.
        assert_eq!(book.outline.iter().map(|e| e.page).collect::<Vec<_>>(), [1, 2, 4, 4]);
    }

    #[test]
    fn a_document_with_few_headings_has_no_toc() {
        let style = Style::new(StyleName::Compact, PageFormat::A5);
        let mut book = laid(&[(1, "題", 0), (2, "節", 0)], 1);
        let front = table_of_contents(&mut book, &style, (419.53, 595.28), &Fixed, Face::Sans);
        assert_eq!(front.pages, 0);
        assert_eq!(book.pages.len(), 1);
    }

    #[test]
    fn running_headers_name_the_chapter_except_where_it_opens() {
        let style = Style::new(StyleName::Classic, PageFormat::A5);
        let mut book = laid(&[(1, "第1章", 0), (2, "節", 1), (1, "第2章", 2)], 4);
        running_headers(&mut book, &style, (419.53, 595.28), &Fixed, Face::Serif);
        let heads: Vec<Vec<String>> = book.pages.iter().map(|p| texts(p)).collect();
        assert_eq!(heads, [vec![], vec!["第1章".to_owned()], vec![], vec!["第2章".to_owned()]]);
        // Not in the styles without running headers.
        let compact = Style::new(StyleName::Compact, PageFormat::A5);
        let mut plain = laid(&[(1, "第1章", 0), (1, "第2章", 2)], 4);
        running_headers(&mut plain, &compact, (419.53, 595.28), &Fixed, Face::Sans);
        assert!(plain.pages.iter().all(Vec::is_empty));
    }
}
