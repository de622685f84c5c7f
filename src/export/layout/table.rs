//! Tables: column widths from the cells' text, a header row repeated on every page.

use super::{Draw, Look, Shaped};
use crate::export::blocks::{Align, Span};
use crate::export::linebreak::{Mode, Piece, break_lines, can_break};
use crate::export::style::{Rgb, TableLook};

impl super::Layout<'_> {
    pub(super) fn table(&mut self, aligns: &[Align], header: &[Vec<Span>], rows: &[Vec<Vec<Span>>]) {
        let style = self.style;
        let size = style.body * 0.92;
        let lh = size * 1.45;
        let (hpad, vpad) = (size * 0.45, size * 0.3);
        let columns = header.len().max(rows.iter().map(Vec::len).max().unwrap_or(0)).max(1);
        let avail = self.width();
        let header_look = {
            let mut l = self.text_look(self.body_face, size);
            l.bold = true;
            if style.table == TableLook::Banded {
                l.color = Rgb::WHITE;
            }
            l
        };
        let body_look = Look { color: style.text, ..self.text_look(self.body_face, size) };
        let shape_row = |this: &mut Self, cells: &[Vec<Span>], look: &Look| -> Vec<Shaped> {
            (0..columns)
                .map(|c| {
                    let mut s = Shaped::default();
                    if let Some(cell) = cells.get(c) {
                        this.shape(cell, look, &mut s);
                    }
                    s
                })
                .collect()
        };
        let head = shape_row(self, header, &header_look);
        let body: Vec<Vec<Shaped>> = rows.iter().map(|r| shape_row(self, r, &body_look)).collect();

        let cols = column_widths(&head, &body, size, avail - 2.0 * hpad * columns as f32, avail);
        let col_w: Vec<f32> = cols.iter().map(|w| w + 2.0 * hpad).collect();
        let table_w: f32 = col_w.iter().sum();
        let x0 = self.left;

        let lines_of = |row: &[Shaped]| -> Vec<Vec<std::ops::Range<usize>>> {
            row.iter().zip(&cols).map(|(s, w)| break_lines(&s.pieces, *w + 0.5, Mode::Prose)).collect()
        };
        let head_lines = lines_of(&head);
        let head_h = head_lines.iter().map(Vec::len).max().unwrap_or(1) as f32 * lh + 2.0 * vpad;

        // The whole header plus the first row should start on one page.
        let first_h = body
            .first()
            .map_or(0.0, |r| lines_of(r).iter().map(Vec::len).max().unwrap_or(1) as f32 * lh + 2.0 * vpad);
        self.ensure(head_h + first_h.min(lh * 3.0 + 2.0 * vpad));
        let rule_top = |this: &mut Self, width: f32| {
            let y = this.pdf_y(this.y);
            this.push(Draw::Line { x1: x0, y1: y, x2: x0 + table_w, y2: y, color: style.rule, width });
        };
        let draw_header = |this: &mut Self| {
            if style.table == TableLook::Booktabs {
                rule_top(this, 1.0);
            }
            this.row(&head, &head_lines, 0, &col_w, aligns, (hpad, vpad, lh, size), true);
            if style.table == TableLook::Booktabs {
                rule_top(this, 0.5);
            }
        };
        draw_header(self);
        for row in &body {
            let lines = lines_of(row);
            let count = lines.iter().map(Vec::len).max().unwrap_or(1);
            let mut from = 0;
            loop {
                let left = count - from;
                let need = left as f32 * lh + 2.0 * vpad;
                let room = self.bottom() - self.y;
                if need <= room + 0.01 {
                    self.row(row, &lines, from, &col_w, aligns, (hpad, vpad, lh, size), false);
                    break;
                }
                let fit = ((room - 2.0 * vpad) / lh).floor().max(0.0) as usize;
                let page_body = self.bottom() - self.top() - head_h;
                if fit == 0 || (from == 0 && need <= page_body) {
                    // Move the row to the next page (it fits there), or nothing fits here.
                    if style.table == TableLook::Booktabs {
                        rule_top(self, 1.0);
                    }
                    self.new_page();
                    draw_header(self);
                    continue;
                }
                let mut part = lines.clone();
                for cell in &mut part {
                    cell.truncate(from + fit);
                }
                self.row(row, &part, from, &col_w, aligns, (hpad, vpad, lh, size), false);
                from += fit;
                if style.table == TableLook::Booktabs {
                    rule_top(self, 1.0);
                }
                self.new_page();
                draw_header(self);
            }
        }
        if style.table == TableLook::Booktabs {
            rule_top(self, 1.0);
        }
    }

    /// Draws lines `from..` of one table row at the cursor and moves below it.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn row(
        &mut self,
        cells: &[Shaped],
        lines: &[Vec<std::ops::Range<usize>>],
        from: usize,
        col_w: &[f32],
        aligns: &[Align],
        (hpad, vpad, lh, size): (f32, f32, f32, f32),
        header: bool,
    ) {
        let style = self.style;
        let count = lines.iter().map(|l| l.len().saturating_sub(from)).max().unwrap_or(0).max(1);
        let h = count as f32 * lh + 2.0 * vpad;
        let top = self.y;
        let y = self.pdf_y(top + h);
        let mut x = self.left;
        for (c, w) in col_w.iter().enumerate() {
            let (fill, stroke) = match (style.table, header) {
                (TableLook::Grid, true) => (Some(style.tint), Some((style.rule, 0.5))),
                (TableLook::Grid, false) => (None, Some((style.rule, 0.5))),
                (TableLook::Banded, true) => (Some(style.accent), None),
                _ => (None, None),
            };
            if fill.is_some() || stroke.is_some() {
                self.push(Draw::Rect { x, y, w: *w, h, fill, stroke });
            }
            if let (Some(cell), Some(cell_lines)) = (cells.get(c), lines.get(c)) {
                let align = aligns.get(c).copied().unwrap_or(Align::Left);
                for (k, r) in cell_lines.iter().skip(from).enumerate() {
                    let lw: f32 = r.clone().map(|i| cell.pieces[i].width).sum();
                    let inner = w - 2.0 * hpad;
                    let lx = match align {
                        Align::Left => x + hpad,
                        Align::Center => x + hpad + (inner - lw).max(0.0) / 2.0,
                        Align::Right => x + hpad + (inner - lw).max(0.0),
                    };
                    let baseline = self.pdf_y(top + vpad + k as f32 * lh + (lh - size) / 2.0 + size * 0.86);
                    self.runs(cell, r.clone(), lx, baseline);
                }
            }
            x += w;
        }
        if style.table == TableLook::Banded {
            let table_w: f32 = col_w.iter().sum();
            self.push(Draw::Line {
                x1: self.left,
                y1: y,
                x2: self.left + table_w,
                y2: y,
                color: style.rule,
                width: 0.5,
            });
        }
        self.advance(h);
    }
}

/// The text width of each column (cell padding excluded): the natural widths (every cell on one
/// line) when they fit in `inner`, else each column between its minimum (its longest unbreakable
/// part, a short word, at most 30% of `avail`) and its natural width, in proportion.
fn column_widths(head: &[Shaped], body: &[Vec<Shaped>], size: f32, inner: f32, avail: f32) -> Vec<f32> {
    let columns = head.len();
    let mut natural = vec![size; columns];
    let mut minimum = vec![size; columns];
    for row in std::iter::once(head).chain(body.iter().map(Vec::as_slice)) {
        for (c, cell) in row.iter().enumerate() {
            let (nat, min) = widths(&cell.pieces);
            natural[c] = natural[c].max(nat);
            // Short words (up to four characters) are not broken either.
            minimum[c] = minimum[c].max(min.max(nat.min(size * 4.0)).min(avail * 0.3));
        }
    }
    let total_nat: f32 = natural.iter().sum();
    let total_min: f32 = minimum.iter().sum();
    if total_nat <= inner {
        natural
    } else if total_min >= inner {
        minimum.iter().map(|m| m * inner / total_min).collect()
    } else {
        let spare = inner - total_min;
        let stretch: f32 = natural.iter().zip(&minimum).map(|(n, m)| n - m).sum::<f32>().max(0.01);
        natural.iter().zip(&minimum).map(|(n, m)| m + (n - m) * spare / stretch).collect()
    }
}

/// The natural (one-line) width and the widest unbreakable part of `pieces`.
fn widths(pieces: &[Piece]) -> (f32, f32) {
    let (mut line, mut natural) = (0.0_f32, 0.0_f32);
    let (mut part, mut widest) = (0.0_f32, 0.0_f32);
    for (i, p) in pieces.iter().enumerate() {
        if p.ch == '\n' {
            natural = natural.max(line);
            line = 0.0;
            widest = widest.max(part);
            part = 0.0;
            continue;
        }
        if i > 0 && can_break(pieces[i - 1].ch, p.ch) {
            widest = widest.max(part);
            part = 0.0;
        }
        line += p.width;
        if p.ch != ' ' {
            part += p.width;
        }
    }
    (natural.max(line), widest.max(part))
}
