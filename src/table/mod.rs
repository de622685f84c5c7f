//! GFM pipe tables: the physical line model and the read projection
//! (`docs/reference/original-server.md` §10.1, §7.6).
//!
//! A table element's text is split into physical lines (header, delimiter, rows), each line into
//! cells at unescaped `|`. The projection shows *display text*: what a reader sees, with inline
//! Markdown removed (`**Chicken**` → `Chicken`, `[Site](url)` → `Site`, `a\|b` → `a|b`).
//!
//! Edits (`kb_edit_table`, §10.2–§10.4) are planned by [`plan_table_edit`] in `edit.rs`: a pure
//! function from (document text, the `kb_edit_table` request from `wire`, with its hashed `tN`
//! anchor) to the new text and the table's new anchor, re-parsed and checked before it is returned.
//!
//! Invariants: parsing never fails on a table the Markdown model produced; ranges index the
//! table text exactly, so edits replace single cells without touching other bytes.

mod edit;

use std::ops::Range;

use crate::markdown::syntax::{Event, Purpose, Source};

use crate::wire::Alignment;

pub use edit::{
    COLUMN_SELECTOR_MESSAGE, CONTROL_CHARACTER_MESSAGE, EXTRA_CELLS_MESSAGE, MARKDOWN_PIPE_MESSAGE,
    NOT_A_TABLE_MESSAGE, ROW_SELECTOR_MESSAGE, UNHASHED_POINTER_MESSAGE, delimiter_cell, encode_text,
    encode_value, plan_table_edit,
};

impl Alignment {
    /// Wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            Alignment::None => "none",
            Alignment::Left => "left",
            Alignment::Center => "center",
            Alignment::Right => "right",
        }
    }
}

/// One physical line of a table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableLine {
    /// The line's range in the table text, without its line ending.
    pub range: Range<usize>,
    /// Each cell's content range (trimmed of spaces and tabs) in the table text.
    pub cells: Vec<Range<usize>>,
    /// The line starts with a pipe.
    pub leading_pipe: bool,
    /// The line ends with a pipe.
    pub trailing_pipe: bool,
    /// The line ending after this line (`""`, `"\n"` or `"\r\n"`).
    pub eol: String,
}

/// A parsed table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    /// Header, delimiter and data lines in order.
    pub lines: Vec<TableLine>,
    /// Alignment per declared column.
    pub alignments: Vec<Alignment>,
}

/// The projection returned by `kb_read` for a table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Projection {
    /// Number of header cells.
    pub column_count: usize,
    /// Number of data rows.
    pub row_count: usize,
    /// `(name, alignment)` per column.
    pub columns: Vec<(String, Alignment)>,
    /// Display text of every data cell (missing cells are `""`, extra cells dropped).
    pub rows: Vec<Vec<String>>,
    /// Some data row has more cells than the header declares.
    pub has_extra_cells: bool,
}

fn split_cells(text: &str, range: Range<usize>) -> (Vec<Range<usize>>, bool, bool) {
    let bytes = text.as_bytes();
    let mut start = range.start;
    while start < range.end && matches!(bytes[start], b' ' | b'\t') {
        start += 1;
    }
    let mut end = range.end;
    while end > start && matches!(bytes[end - 1], b' ' | b'\t') {
        end -= 1;
    }
    let leading = start < end && bytes[start] == b'|';
    // Pipe positions that are not escaped.
    let mut pipes = Vec::new();
    let mut i = start;
    while i < end {
        match bytes[i] {
            b'\\' => i += 2,
            b'|' => {
                pipes.push(i);
                i += 1;
            }
            _ => i += 1,
        }
    }
    let trailing = pipes.last().is_some_and(|&p| p + 1 == end) && !(leading && pipes.len() == 1);
    let mut bounds = Vec::new();
    let first = if leading { start + 1 } else { start };
    let mut cell_start = first;
    for &p in pipes.iter().filter(|&&p| !(leading && p == start)) {
        bounds.push(cell_start..p);
        cell_start = p + 1;
    }
    if !trailing {
        bounds.push(cell_start..end);
    }
    let cells = bounds
        .into_iter()
        .map(|r| {
            let (mut s, mut e) = (r.start, r.end);
            while s < e && matches!(bytes[s], b' ' | b'\t') {
                s += 1;
            }
            while e > s && matches!(bytes[e - 1], b' ' | b'\t') {
                e -= 1;
            }
            s..e
        })
        .collect();
    (cells, leading, trailing)
}

impl Table {
    /// Splits a table element's text. `None` when it lacks a header and delimiter row.
    pub fn parse(text: &str) -> Option<Table> {
        let mut lines = Vec::new();
        let mut pos = 0;
        while pos <= text.len() {
            let nl = text[pos..].find('\n').map(|i| pos + i);
            let (content_end, eol, next) = match nl {
                Some(n) if n > pos && text.as_bytes()[n - 1] == b'\r' => (n - 1, "\r\n", n + 1),
                Some(n) => (n, "\n", n + 1),
                None => (text.len(), "", text.len() + 1),
            };
            let (cells, leading_pipe, trailing_pipe) = split_cells(text, pos..content_end);
            lines.push(TableLine {
                range: pos..content_end,
                cells,
                leading_pipe,
                trailing_pipe,
                eol: eol.to_owned(),
            });
            pos = next;
        }
        if lines.len() < 2 {
            return None;
        }
        let alignments = lines[1]
            .cells
            .iter()
            .map(|r| {
                let d = text[r.clone()].trim();
                match (d.starts_with(':'), d.ends_with(':') && d.len() > 1) {
                    (true, true) => Alignment::Center,
                    (true, false) => Alignment::Left,
                    (false, true) => Alignment::Right,
                    (false, false) => Alignment::None,
                }
            })
            .collect();
        Some(Table { lines, alignments })
    }

    /// The read projection of the table whose text is `text`.
    pub fn projection(&self, text: &str) -> Projection {
        let header = &self.lines[0];
        let column_count = header.cells.len();
        let columns = header
            .cells
            .iter()
            .enumerate()
            .map(|(i, r)| {
                (display_text(&text[r.clone()]), self.alignments.get(i).copied().unwrap_or(Alignment::None))
            })
            .collect();
        let mut has_extra_cells = false;
        let rows: Vec<Vec<String>> = self.lines[2..]
            .iter()
            .map(|line| {
                has_extra_cells |= line.cells.len() > column_count;
                (0..column_count)
                    .map(|i| line.cells.get(i).map_or_else(String::new, |r| display_text(&text[r.clone()])))
                    .collect()
            })
            .collect();
        Projection { column_count, row_count: rows.len(), columns, rows, has_extra_cells }
    }
}

impl Projection {
    /// `kb_read`'s `table` field.
    pub fn into_wire(self) -> crate::wire::TableProjection {
        use crate::wire::{TableColumn, TableProjection, TableRow};
        TableProjection {
            column_count: self.column_count,
            row_count: self.row_count,
            columns: self
                .columns
                .into_iter()
                .enumerate()
                .map(|(index, (name, alignment))| TableColumn {
                    index,
                    name,
                    alignment: alignment.as_str().to_owned(),
                })
                .collect(),
            rows: self.rows.into_iter().enumerate().map(|(index, cells)| TableRow { index, cells }).collect(),
        }
    }
}

/// Display text of one cell's inline Markdown.
pub fn display_text(cell: &str) -> String {
    // A zero-width space in front keeps the cell inline: `# x` or `1. x` must not become blocks.
    let guarded = format!("\u{200B}{cell}");
    let mut out = String::new();
    let source = Source::new(&guarded, Purpose::TableCell);
    for (event, _) in source.events() {
        match event {
            Event::Text(t) | Event::Code(t) => out.push_str(&t),
            Event::SoftBreak | Event::HardBreak => out.push(' '),
            _ => {}
        }
    }
    // Only spaces and tabs are trimmed, as GFM does for cells: U+3000 (full-width space) stays.
    let out = out.strip_prefix('\u{200B}').unwrap_or(&out);
    out.trim_matches([' ', '\t']).to_owned()
}

#[cfg(test)]
mod tests;
