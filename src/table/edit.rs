//! The planning engine behind `kb_edit_table` (`docs/reference/original-server.md` §10.2–§10.4,
//! §7.10).
//!
//! [`plan_table_edit`] is a pure function: from a document's text and a [`TableEditRequest`]
//! (the `kb_edit_table` arguments, from `wire`, with the table's hashed `tN` anchor) it computes
//! the new document text and the table's new anchor, or fails and returns no text at all. It validates the request (§10.2), encodes values (§10.3), plans
//! minimal source edits (§10.4) and re-parses the result before handing it back (fail-closed).
//! Writing the file, hash retries and index reconciliation are the caller's job.
//!
//! Invariants:
//!
//! - Bytes outside the table's physical range never change.
//! - Only lines whose cells change are rewritten. Inside a line only the changed cell contents
//!   are replaced (padding, pipes and line endings stay) unless the line cannot keep its shape
//!   that way (missing cells, an empty edge cell without a pipe); then that one line is
//!   re-rendered as `| a | b |` in the line's own pipe style. One-column results always get both
//!   pipes so they cannot turn into setext headings. If the result still does not read back as
//!   planned (a pipe-less line that now starts like `1. ` or `# `), the plan is made once more
//!   with explicit leading and trailing pipes on every touched line, and verified again.
//! - A plan is returned only if the edited document still has a table at the same offset with
//!   exactly the expected columns, alignments, rows and visible cell values (cells written with
//!   `valueFormat: markdown` are exempt from the value check).
//! - Nothing panics on any input; every refusal is an [`Error`] with the contract's message.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use super::{Projection, Table, TableLine, split_cells};
use crate::error::{ConflictReason, Error, ErrorCode, Result};
use crate::markdown::{Anchor, Document, ElementKind};
use crate::wire::{Alignment, CellUpdate, RowFilter, TableAction, TableEditRequest, ValueFormat};

/// Refusal for tables whose rows hold more cells than the header declares (§10.1).
pub const EXTRA_CELLS_MESSAGE: &str = "The table contains extra physical cells beyond its declared columns; edit rejected to preserve hidden source data.";
/// Refusal for anchors that do not name a table (§10.1).
pub const NOT_A_TABLE_MESSAGE: &str = "The target pointer must refer to a Markdown table.";
/// Refusal for values with CR, LF, NUL or another control character (§10.3).
pub const CONTROL_CHARACTER_MESSAGE: &str =
    "A table cell cannot contain line breaks, NUL or control characters.";
/// Refusal for `valueFormat: markdown` values with an unescaped `|` (§10.3).
pub const MARKDOWN_PIPE_MESSAGE: &str = "Inline Markdown values must escape pipe characters as \\|.";
/// Refusal when a row is selected by both or neither of `rowIndex` and `where` (§10.2).
pub const ROW_SELECTOR_MESSAGE: &str = "Select a row using exactly one of rowIndex or where.";
/// Refusal when a column is selected by both or neither of `column` and `columnIndex` (§10.2).
pub const COLUMN_SELECTOR_MESSAGE: &str = "Select a column using exactly one of column or columnIndex.";
/// Refusal for an anchor without hashes: table edits must prove which table they saw.
pub const UNHASHED_POINTER_MESSAGE: &str = "kb_edit_table needs a hashed table anchor (tN~selfHash~subtreeHash); read the table with kb_read or kb_outline to get it.";

impl TableAction {
    /// Every action, in contract order.
    pub const ALL: [TableAction; 7] = [
        TableAction::UpdateCells,
        TableAction::InsertRow,
        TableAction::DeleteRow,
        TableAction::InsertColumn,
        TableAction::DeleteColumn,
        TableAction::RenameColumn,
        TableAction::SetAlignment,
    ];

    /// The wire value, e.g. `update_cells`.
    pub fn as_str(self) -> &'static str {
        match self {
            TableAction::UpdateCells => "update_cells",
            TableAction::InsertRow => "insert_row",
            TableAction::DeleteRow => "delete_row",
            TableAction::InsertColumn => "insert_column",
            TableAction::DeleteColumn => "delete_column",
            TableAction::RenameColumn => "rename_column",
            TableAction::SetAlignment => "set_alignment",
        }
    }

    /// The request fields (wire names) the action accepts (§10.2).
    pub fn allowed_fields(self) -> &'static [&'static str] {
        match self {
            TableAction::UpdateCells => &["updates"],
            TableAction::InsertRow => &["values", "valuesByColumn", "beforeRowIndex"],
            TableAction::DeleteRow => &["rowIndex", "where"],
            TableAction::InsertColumn => {
                &["name", "defaultValue", "alignment", "beforeColumn", "beforeColumnIndex"]
            }
            TableAction::DeleteColumn => &["column", "columnIndex"],
            TableAction::RenameColumn => &["column", "columnIndex", "newName"],
            TableAction::SetAlignment => &["column", "columnIndex", "alignment"],
        }
    }
}

impl TableEditRequest {
    /// The wire names of the fields that are set (non-null), in contract order.
    pub fn present_fields(&self) -> Vec<&'static str> {
        [
            ("updates", self.updates.is_some()),
            ("values", self.values.is_some()),
            ("valuesByColumn", self.values_by_column.is_some()),
            ("beforeRowIndex", self.before_row_index.is_some()),
            ("rowIndex", self.row_index.is_some()),
            ("where", self.r#where.is_some()),
            ("name", self.name.is_some()),
            ("defaultValue", self.default_value.is_some()),
            ("alignment", self.alignment.is_some()),
            ("beforeColumn", self.before_column.is_some()),
            ("beforeColumnIndex", self.before_column_index.is_some()),
            ("column", self.column.is_some()),
            ("columnIndex", self.column_index.is_some()),
            ("newName", self.new_name.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, set)| set.then_some(name))
        .collect()
    }
}

/// Escapes `value` so that it reads back as exactly `value` (§10.3 `text` format): `&`, `<`,
/// `>` become entities and `\ | * _ ` [ ] ! ~ #` get a backslash.
pub fn encode_text(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 8);
    for ch in value.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\\' | '|' | '*' | '_' | '`' | '[' | ']' | '!' | '~' | '#' => {
                out.push('\\');
                out.push(ch);
            }
            _ => out.push(ch),
        }
    }
    out
}

/// Validates and encodes one cell value (§10.3): control characters are refused in both
/// formats; `text` is escaped with [`encode_text`]; `markdown` is kept verbatim but must not
/// contain an unescaped `|`.
pub fn encode_value(value: &str, format: ValueFormat) -> Result<String> {
    if value.chars().any(char::is_control) {
        return Err(Error::invalid_argument(CONTROL_CHARACTER_MESSAGE));
    }
    match format {
        ValueFormat::Text => Ok(encode_text(value)),
        ValueFormat::Markdown if has_unescaped_pipe(value) => {
            Err(Error::invalid_argument(MARKDOWN_PIPE_MESSAGE))
        }
        ValueFormat::Markdown => Ok(value.to_owned()),
    }
}

fn has_unescaped_pipe(value: &str) -> bool {
    let bytes = value.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'|' => return true,
            _ => i += 1,
        }
    }
    false
}

/// The delimiter cell for an alignment with `dashes` dashes (`:---`, `:---:`, `---:`, `---`).
pub fn delimiter_cell(alignment: Alignment, dashes: usize) -> String {
    let d = "-".repeat(dashes);
    match alignment {
        Alignment::None => d,
        Alignment::Left => format!(":{d}"),
        Alignment::Center => format!(":{d}:"),
        Alignment::Right => format!("{d}:"),
    }
}

/// Plans one `kb_edit_table` request against the document `text` (without BOM); the request's
/// `path` is the caller's business.
///
/// `request.pointer` must be a hashed `tN` anchor; it is relocated by kind and self hash, and a stale
/// anchor is a `CONFLICT`. Returns the new document text and the table's new v2 anchor. When
/// every planned change is a no-op, returns `text` unchanged and the table's current anchor.
pub fn plan_table_edit(text: &str, request: &TableEditRequest) -> Result<(String, String)> {
    let anchor = Anchor::parse(&request.pointer)?;
    if anchor.pointer.kind() != ElementKind::Table {
        return Err(Error::invalid_argument(NOT_A_TABLE_MESSAGE));
    }
    if anchor.self_hash.is_none() {
        return Err(Error::invalid_argument(UNHASHED_POINTER_MESSAGE));
    }
    check_fields(request)?;

    let doc = Document::parse(text);
    let index =
        doc.resolve(&anchor, "The table pointer no longer names a table; read the document again.")?;
    let element = doc.elements.get(index).ok_or_else(|| Error::internal("Resolved table is missing."))?;
    if element.kind != ElementKind::Table {
        return Err(Error::invalid_argument(NOT_A_TABLE_MESSAGE));
    }
    if anchor.subtree_hash.as_ref().is_some_and(|h| h != &element.subtree_hash) {
        return Err(Error::conflict(
            ConflictReason::SubtreeHashMismatch,
            "Pointer fingerprint does not match the current element.",
        ));
    }
    let range = element.range.clone();
    let src =
        text.get(range.clone()).ok_or_else(|| Error::internal("Table range is outside the document."))?;
    let mut ctx = Ctx::new(src)?;
    let mut first_failure = None;
    // Attempt 1 keeps every line's pipe style. If the result does not read back as planned (a
    // pipe-less line that now starts like a list item or heading, say), attempt 2 renders every
    // touched line with explicit leading and trailing pipes. Both attempts are verified.
    for force_pipes in [false, true] {
        ctx.force_pipes = force_pipes;
        let plan = ctx.plan(request)?;
        let edits: Vec<Edit> =
            plan.edits.into_iter().filter(|e| src.get(e.range.clone()) != Some(e.text.as_str())).collect();
        if edits.is_empty() {
            if force_pipes {
                break; // Attempt 1 changed something; "nothing to change" now would be a lie.
            }
            return Ok((text.to_owned(), element.anchor()));
        }
        let new_table = apply(src, edits)?;
        let mut new_text = String::with_capacity(text.len() + new_table.len());
        new_text.push_str(&text[..range.start]);
        new_text.push_str(&new_table);
        new_text.push_str(&text[range.end..]);
        match verify(&new_text, range.start..range.start + new_table.len(), &plan.expected) {
            Ok(new_anchor) => return Ok((new_text, new_anchor)),
            Err(e) => {
                first_failure.get_or_insert(e);
            }
        }
    }
    Err(first_failure.unwrap_or_else(shape_error))
}

fn check_fields(request: &TableEditRequest) -> Result<()> {
    let allowed = request.action.allowed_fields();
    match request.present_fields().into_iter().find(|f| !allowed.contains(f)) {
        Some(field) => Err(Error::invalid_argument(format!(
            "Field '{field}' is not valid for action '{}'.",
            request.action.as_str()
        ))),
        None => Ok(()),
    }
}

/// An ambiguity the caller must resolve by index: `CONFLICT` (§7.2), with its own message.
fn ambiguous(message: String) -> Error {
    Error::new(ErrorCode::Conflict, message)
}

fn shape_error() -> Error {
    Error::invalid_argument(
        "The edited table would no longer parse with the expected shape; edit rejected and the file left unchanged.",
    )
}

/// One replacement in the table text.
#[derive(Debug)]
struct Edit {
    range: Range<usize>,
    text: String,
}

/// The projection the edited table must have. `None` cells (markdown values) are not compared.
struct Expected {
    names: Vec<String>,
    alignments: Vec<Alignment>,
    rows: Vec<Vec<Option<String>>>,
}

struct Plan {
    edits: Vec<Edit>,
    expected: Expected,
}

/// The table being edited: its text, line model and current projection.
struct Ctx<'a> {
    src: &'a str,
    table: Table,
    proj: Projection,
    /// Render every touched line as `| a | b |`, whatever its original pipe style.
    force_pipes: bool,
}

impl<'a> Ctx<'a> {
    fn new(src: &'a str) -> Result<Self> {
        let table = Table::parse(src).ok_or_else(|| Error::invalid_argument(NOT_A_TABLE_MESSAGE))?;
        if table.lines[1].cells.len() != table.lines[0].cells.len() {
            return Err(Error::invalid_argument(
                "The table's header and delimiter rows have different cell counts; edit rejected.",
            ));
        }
        let proj = table.projection(src);
        if proj.has_extra_cells {
            return Err(Error::invalid_argument(EXTRA_CELLS_MESSAGE));
        }
        Ok(Ctx { src, table, proj, force_pipes: false })
    }

    fn plan(&self, request: &TableEditRequest) -> Result<Plan> {
        match request.action {
            TableAction::UpdateCells => self.update_cells(request.updates.as_deref().unwrap_or_default()),
            TableAction::InsertRow => self.insert_row(request),
            TableAction::DeleteRow => self.delete_row(request),
            TableAction::InsertColumn => self.insert_column(request),
            TableAction::DeleteColumn => self.delete_column(request),
            TableAction::RenameColumn => self.rename_column(request),
            TableAction::SetAlignment => self.set_alignment(request),
        }
    }

    fn columns(&self) -> usize {
        self.proj.column_count
    }

    fn rows(&self) -> usize {
        self.proj.row_count
    }

    fn expected(&self) -> Expected {
        Expected {
            names: self.proj.columns.iter().map(|(n, _)| n.clone()).collect(),
            alignments: self.proj.columns.iter().map(|(_, a)| *a).collect(),
            rows: self.proj.rows.iter().map(|r| r.iter().cloned().map(Some).collect()).collect(),
        }
    }

    fn line(&self, i: usize) -> &TableLine {
        &self.table.lines[i]
    }

    /// Raw (source) contents of a line's physical cells.
    fn raw_cells(&self, line: &TableLine) -> Vec<String> {
        line.cells.iter().map(|r| self.src[r.clone()].to_owned()).collect()
    }

    /// Raw cells padded with `""` to the column count.
    fn padded_cells(&self, line: &TableLine) -> Vec<String> {
        let mut cells = self.raw_cells(line);
        if cells.len() < self.columns() {
            cells.resize(self.columns(), String::new());
        }
        cells
    }

    fn indent(&self, line: &TableLine) -> &'a str {
        let s = &self.src[line.range.clone()];
        &s[..s.len() - s.trim_start_matches([' ', '\t']).len()]
    }

    /// Whether the line puts spaces around its pipes (`| a | b |` vs `|a|b|`).
    fn padded(&self, line: &TableLine) -> bool {
        let mut pos = line.range.start + self.indent(line).len();
        for cell in line.cells.iter().chain(std::iter::once(&(line.range.end..line.range.end))) {
            if self.src[pos..cell.start.max(pos)].contains([' ', '\t']) {
                return true;
            }
            pos = pos.max(cell.end);
        }
        false
    }

    /// The line ending for new lines: the first non-empty one of rows, delimiter, header.
    fn eol(&self) -> &str {
        let lines = &self.table.lines;
        lines[2..]
            .iter()
            .chain([&lines[1], &lines[0]])
            .map(|l| l.eol.as_str())
            .find(|e| !e.is_empty())
            .unwrap_or("\n")
    }

    /// The position of the unescaped pipe in the gap `range` between two cell contents.
    fn pipe_in(&self, range: Range<usize>) -> Option<usize> {
        let gap = self.src.get(range.clone())?;
        gap.rfind('|').map(|i| range.start + i)
    }

    /// The line with `replacements` (table-relative ranges inside the line) applied.
    fn splice(&self, line: &TableLine, mut replacements: Vec<(Range<usize>, String)>) -> Option<String> {
        replacements.sort_by_key(|(r, _)| (r.start, r.end));
        let mut out = String::new();
        let mut pos = line.range.start;
        for (r, text) in replacements {
            if r.start < pos || r.end > line.range.end {
                return None;
            }
            out.push_str(self.src.get(pos..r.start)?);
            out.push_str(&text);
            pos = r.end;
        }
        out.push_str(self.src.get(pos..line.range.end)?);
        Some(out)
    }

    /// Rewrites line `i` so that it holds `intended` cells: the spliced `candidate` when it
    /// reads back as exactly those cells, else the line re-rendered in its own pipe style.
    fn rewrite_line(&self, i: usize, intended: &[String], candidate: Option<String>) -> Edit {
        let line = self.line(i);
        let text = candidate.filter(|c| !self.force_pipes && reads_as(c, intended)).unwrap_or_else(|| {
            let (leading, trailing) =
                (line.leading_pipe || self.force_pipes, line.trailing_pipe || self.force_pipes);
            render_line(self.indent(line), intended, leading, trailing)
        });
        Edit { range: line.range.clone(), text }
    }

    fn column_label(&self, c: usize) -> String {
        match self.proj.columns.get(c) {
            Some((name, _)) if !name.is_empty() => name.clone(),
            _ => c.to_string(),
        }
    }

    /// Column by exact header name; `use_instead` names the alternative for empty/ambiguous names.
    fn column_by_name(&self, name: &str, use_instead: &str) -> Result<usize> {
        if name.is_empty() {
            return Err(Error::invalid_argument(format!(
                "An empty column name cannot select a column; use {use_instead}."
            )));
        }
        let matches: Vec<usize> =
            self.proj.columns.iter().enumerate().filter(|(_, (n, _))| n == name).map(|(i, _)| i).collect();
        match matches.as_slice() {
            [one] => Ok(*one),
            [] => Err(Error::invalid_argument(format!("Column '{}' was not found.", shown(name)))),
            _ => Err(ambiguous(format!("Column '{}' has multiple matches; use {use_instead}.", shown(name)))),
        }
    }

    fn column_index(&self, index: i64, field: &str) -> Result<usize> {
        usize::try_from(index).ok().filter(|&i| i < self.columns()).ok_or_else(|| {
            let range = match self.columns() {
                1 => "1 column (index 0)".to_owned(),
                n => format!("{n} columns (0 to {})", n.saturating_sub(1)),
            };
            Error::invalid_argument(format!("{field} {index} is out of range; the table has {range}."))
        })
    }

    fn select_column(&self, name: Option<&str>, index: Option<i64>) -> Result<usize> {
        match (name, index) {
            (Some(name), None) => self.column_by_name(name, "columnIndex"),
            (None, Some(index)) => self.column_index(index, "columnIndex"),
            _ => Err(Error::invalid_argument(COLUMN_SELECTOR_MESSAGE)),
        }
    }

    fn row_index(&self, index: i64, field: &str) -> Result<usize> {
        usize::try_from(index).ok().filter(|&i| i < self.rows()).ok_or_else(|| {
            let range = match self.rows() {
                0 => "no data rows".to_owned(),
                1 => "1 data row (index 0)".to_owned(),
                n => format!("{n} data rows (0 to {})", n - 1),
            };
            Error::invalid_argument(format!("{field} {index} is out of range; the table has {range}."))
        })
    }

    fn select_row(&self, index: Option<i64>, filter: Option<&RowFilter>) -> Result<usize> {
        match (index, filter) {
            (Some(index), None) => self.row_index(index, "rowIndex"),
            (None, Some(filter)) => {
                let c = self.select_column(filter.column.as_deref(), filter.column_index)?;
                let equals = filter.equals.as_deref().ok_or_else(|| {
                    Error::invalid_argument(
                        "The where selector needs 'equals': the exact cell value to match.",
                    )
                })?;
                let matches: Vec<usize> = self
                    .proj
                    .rows
                    .iter()
                    .enumerate()
                    .filter(|(_, row)| row.get(c).is_some_and(|v| v == equals))
                    .map(|(i, _)| i)
                    .collect();
                let label = self.column_label(c);
                let equals = shown(equals);
                match matches.as_slice() {
                    [one] => Ok(*one),
                    [] => Err(Error::invalid_argument(format!(
                        "No row has value '{equals}' in column {label}."
                    ))),
                    many => Err(ambiguous(format!(
                        "Found {} rows with value '{equals}' in column {label}; use rowIndex.",
                        many.len()
                    ))),
                }
            }
            _ => Err(Error::invalid_argument(ROW_SELECTOR_MESSAGE)),
        }
    }

    fn update_cells(&self, updates: &[CellUpdate]) -> Result<Plan> {
        if updates.is_empty() {
            return Err(Error::invalid_argument(
                "update_cells needs a non-empty updates array: {value, rowIndex | where, column | columnIndex}.",
            ));
        }
        let mut expected = self.expected();
        let mut seen = BTreeSet::new();
        let mut by_row: BTreeMap<usize, Vec<(usize, String)>> = BTreeMap::new();
        for update in updates {
            let value = update
                .value
                .as_deref()
                .ok_or_else(|| Error::invalid_argument("Every item of updates needs a value."))?;
            let r = self.select_row(update.row_index, update.r#where.as_ref())?;
            let c = self.select_column(update.column.as_deref(), update.column_index)?;
            if !seen.insert((r, c)) {
                return Err(Error::invalid_argument(format!(
                    "Cell at rowIndex={r}, columnIndex={c} is repeated in updates."
                )));
            }
            let format = update.value_format.unwrap_or_default();
            let encoded = encode_value(value, format)?;
            expected.rows[r][c] = (format == ValueFormat::Text).then(|| value.to_owned());
            by_row.entry(r).or_default().push((c, encoded));
        }
        let mut edits = Vec::new();
        for (r, cells) in by_row {
            let i = r + 2;
            let line = self.line(i);
            let all_present = cells.iter().all(|(c, _)| *c < line.cells.len());
            let mut intended = if all_present { self.raw_cells(line) } else { self.padded_cells(line) };
            let candidate = if all_present {
                let reps = cells.iter().map(|(c, v)| (line.cells[*c].clone(), v.clone())).collect();
                self.splice(line, reps)
            } else {
                None
            };
            for (c, v) in cells {
                intended[c] = v;
            }
            edits.push(self.rewrite_line(i, &intended, candidate));
        }
        Ok(Plan { edits, expected })
    }

    fn insert_row(&self, request: &TableEditRequest) -> Result<Plan> {
        let n = self.columns();
        let values: Vec<String> = match (&request.values, &request.values_by_column) {
            (Some(values), None) => {
                if values.len() != n {
                    return Err(Error::invalid_argument(format!(
                        "values has {} item(s) but the table has {n} column(s); give one value per column or use valuesByColumn.",
                        values.len()
                    )));
                }
                values.clone()
            }
            (None, Some(by_column)) => {
                let mut values = vec![String::new(); n];
                for (name, value) in by_column {
                    let c = self.column_by_name(name, "values instead of valuesByColumn")?;
                    values[c] = value.clone();
                }
                values
            }
            _ => return Err(Error::invalid_argument("Provide exactly one of values or valuesByColumn.")),
        };
        let encoded =
            values.iter().map(|v| encode_value(v, ValueFormat::Text)).collect::<Result<Vec<String>>>()?;
        let before = request
            .before_row_index
            .map(|i| {
                self.row_index(i, "beforeRowIndex").map_err(|e| {
                    Error::invalid_argument(format!("{} Omit beforeRowIndex to append the row.", e.message))
                })
            })
            .transpose()?;
        let lines = &self.table.lines;
        let exemplar = lines.get(2).unwrap_or(&lines[0]);
        let (leading, trailing) =
            (exemplar.leading_pipe || self.force_pipes, exemplar.trailing_pipe || self.force_pipes);
        let rendered = render_line(self.indent(exemplar), &encoded, leading, trailing);
        let eol = self.eol();
        let edit = match before {
            Some(r) => {
                let at = lines[r + 2].range.start;
                Edit { range: at..at, text: format!("{rendered}{eol}") }
            }
            None => {
                let end = self.src.len();
                let last_eol = lines.last().map_or("", |l| l.eol.as_str());
                let text =
                    if last_eol.is_empty() { format!("{eol}{rendered}") } else { format!("{rendered}{eol}") };
                Edit { range: end..end, text }
            }
        };
        let mut expected = self.expected();
        expected.rows.insert(before.unwrap_or(self.rows()), values.into_iter().map(Some).collect());
        Ok(Plan { edits: vec![edit], expected })
    }

    fn delete_row(&self, request: &TableEditRequest) -> Result<Plan> {
        let r = self.select_row(request.row_index, request.r#where.as_ref())?;
        let i = r + 2;
        let line = self.line(i);
        let range = if line.eol.is_empty() {
            let previous = self.line(i - 1);
            previous.range.end..line.range.end
        } else {
            line.range.start..line.range.end + line.eol.len()
        };
        let mut expected = self.expected();
        expected.rows.remove(r);
        Ok(Plan { edits: vec![Edit { range, text: String::new() }], expected })
    }

    fn insert_column(&self, request: &TableEditRequest) -> Result<Plan> {
        let n = self.columns();
        let name = request
            .name
            .as_deref()
            .filter(|s| !s.trim().is_empty())
            .ok_or_else(|| Error::invalid_argument("insert_column needs a non-blank name."))?;
        let encoded_name = encode_value(name, ValueFormat::Text)?;
        let default = request.default_value.as_deref().unwrap_or("");
        let encoded_default = encode_value(default, ValueFormat::Text)?;
        let alignment = request.alignment.unwrap_or(Alignment::None);
        let k = match (&request.before_column, request.before_column_index) {
            (None, None) => n,
            (Some(column), None) => self.column_by_name(column, "beforeColumnIndex")?,
            (None, Some(index)) => self.column_index(index, "beforeColumnIndex").map_err(|e| {
                Error::invalid_argument(format!("{} Omit it to append the column.", e.message))
            })?,
            (Some(_), Some(_)) => {
                return Err(Error::invalid_argument("Use at most one of beforeColumn or beforeColumnIndex."));
            }
        };
        let delimiter = delimiter_cell(alignment, 3);
        let mut edits = Vec::new();
        for (i, line) in self.table.lines.iter().enumerate() {
            let new_cell = match i {
                0 => &encoded_name,
                1 => &delimiter,
                _ => &encoded_default,
            };
            let mut intended = self.padded_cells(line);
            let candidate = (line.cells.len() == n).then(|| self.insert_cell(line, k, new_cell)).flatten();
            intended.insert(k, new_cell.clone());
            edits.push(self.rewrite_line(i, &intended, candidate));
        }
        let mut expected = self.expected();
        expected.names.insert(k, name.to_owned());
        expected.alignments.insert(k, alignment);
        for row in &mut expected.rows {
            row.insert(k, Some(default.to_owned()));
        }
        Ok(Plan { edits, expected })
    }

    /// `line` (with all `n` cells) with `cell` spliced in before cell `k` (`k == n`: appended).
    fn insert_cell(&self, line: &TableLine, k: usize, cell: &str) -> Option<String> {
        let padded = self.padded(line);
        let (at, text) = if let Some(next) = line.cells.get(k) {
            (next.start, if padded { format!("{cell} | ") } else { format!("{cell}|") })
        } else {
            let last = line.cells.last()?;
            if line.trailing_pipe {
                let pipe = self.pipe_in(last.end..line.range.end)?;
                (pipe + 1, if padded { format!(" {cell} |") } else { format!("{cell}|") })
            } else {
                (last.end, if padded { format!(" | {cell}") } else { format!("|{cell}") })
            }
        };
        self.splice(line, vec![(at..at, text)])
    }

    fn delete_column(&self, request: &TableEditRequest) -> Result<Plan> {
        let k = self.select_column(request.column.as_deref(), request.column_index)?;
        let n = self.columns();
        if n == 1 {
            return Err(Error::invalid_argument(
                "The table's only column cannot be deleted; delete the whole table with kb_patch instead.",
            ));
        }
        let mut edits = Vec::new();
        for (i, line) in self.table.lines.iter().enumerate() {
            if n == 2 {
                // One column left: every line gets explicit pipes (`| Name |`).
                let mut cells = self.padded_cells(line);
                cells.remove(k);
                edits.push(self.rewrite_line(i, &cells, None));
                continue;
            }
            if k >= line.cells.len() {
                continue; // A missing cell: nothing to remove.
            }
            let mut intended = self.raw_cells(line);
            intended.remove(k);
            if intended.is_empty() {
                intended.push(String::new());
            }
            let candidate = self.remove_cell(line, k);
            edits.push(self.rewrite_line(i, &intended, candidate));
        }
        let mut expected = self.expected();
        expected.names.remove(k);
        expected.alignments.remove(k);
        for row in &mut expected.rows {
            row.remove(k);
        }
        Ok(Plan { edits, expected })
    }

    /// `line` without physical cell `k` and one adjacent pipe.
    fn remove_cell(&self, line: &TableLine, k: usize) -> Option<String> {
        let cells = &line.cells;
        if cells.len() < 2 {
            return None;
        }
        let range = if let Some(next) = cells.get(k + 1) {
            cells.get(k)?.start..next.start
        } else {
            let (previous, cell) = (cells.get(k.checked_sub(1)?)?, cells.get(k)?);
            if line.trailing_pipe {
                let before = self.pipe_in(previous.end..cell.start)?;
                let trailing = self.pipe_in(cell.end..line.range.end)?;
                before + 1..trailing + 1
            } else {
                previous.end..cell.end
            }
        };
        self.splice(line, vec![(range, String::new())])
    }

    fn rename_column(&self, request: &TableEditRequest) -> Result<Plan> {
        let k = self.select_column(request.column.as_deref(), request.column_index)?;
        let new_name = request
            .new_name
            .as_deref()
            .filter(|s| !s.trim().is_empty())
            .ok_or_else(|| Error::invalid_argument("rename_column needs a non-blank newName."))?;
        let encoded = encode_value(new_name, ValueFormat::Text)?;
        let edit = self.replace_cell(0, k, encoded);
        let mut expected = self.expected();
        expected.names[k] = new_name.to_owned();
        Ok(Plan { edits: vec![edit], expected })
    }

    fn set_alignment(&self, request: &TableEditRequest) -> Result<Plan> {
        let k = self.select_column(request.column.as_deref(), request.column_index)?;
        let alignment = request.alignment.ok_or_else(|| {
            Error::invalid_argument("set_alignment needs alignment: none, left, center or right.")
        })?;
        let existing = &self.src[self.line(1).cells[k].clone()];
        let dashes = existing.bytes().filter(|&b| b == b'-').count().max(3);
        let edit = self.replace_cell(1, k, delimiter_cell(alignment, dashes));
        let mut expected = self.expected();
        expected.alignments[k] = alignment;
        Ok(Plan { edits: vec![edit], expected })
    }

    /// Line `i` with the content of cell `k` (which exists on header and delimiter) replaced.
    fn replace_cell(&self, i: usize, k: usize, text: String) -> Edit {
        let line = self.line(i);
        let mut intended = self.padded_cells(line);
        let candidate = line.cells.get(k).and_then(|r| self.splice(line, vec![(r.clone(), text.clone())]));
        intended[k] = text;
        self.rewrite_line(i, &intended, candidate)
    }
}

/// Whether `line` splits into exactly the `intended` cell contents and keeps at least one pipe.
fn reads_as(line: &str, intended: &[String]) -> bool {
    let (cells, leading, trailing) = split_cells(line, 0..line.len());
    (leading || trailing || cells.len() > 1)
        && cells.len() == intended.len()
        && cells
            .iter()
            .zip(intended)
            .all(|(r, want)| line.get(r.clone()) == Some(want.trim_matches([' ', '\t'])))
}

/// A line `| a | b |` (cells joined by ` | `). Pipes follow `leading`/`trailing`, but are forced
/// for one-cell lines and next to an empty edge cell so the line keeps its cells.
fn render_line(indent: &str, cells: &[String], leading: bool, trailing: bool) -> String {
    let single = cells.len() <= 1;
    let leading = leading || single || cells.first().is_some_and(String::is_empty);
    let trailing = trailing || single || cells.last().is_some_and(String::is_empty);
    let mut out = String::from(indent);
    if leading {
        out.push_str("| ");
    }
    out.push_str(&cells.join(" | "));
    if trailing {
        out.push_str(" |");
    }
    out
}

fn apply(src: &str, mut edits: Vec<Edit>) -> Result<String> {
    edits.sort_by_key(|e| (e.range.start, e.range.end));
    let broken = || Error::internal("Table edit planning produced overlapping edits.");
    let mut out = String::with_capacity(src.len() + 64);
    let mut pos = 0;
    for edit in edits {
        if edit.range.start < pos {
            return Err(broken());
        }
        out.push_str(src.get(pos..edit.range.start).ok_or_else(broken)?);
        out.push_str(&edit.text);
        pos = edit.range.end;
    }
    out.push_str(src.get(pos..).ok_or_else(broken)?);
    Ok(out)
}

/// Re-parses the edited document and checks the table at `range` against `expected`.
/// Returns the table's new anchor.
fn verify(new_text: &str, range: Range<usize>, expected: &Expected) -> Result<String> {
    let doc = Document::parse(new_text);
    let element = doc
        .elements
        .iter()
        .find(|e| e.kind == ElementKind::Table && e.range == range)
        .ok_or_else(shape_error)?;
    let table = Table::parse(&element.text).ok_or_else(shape_error)?;
    let p = table.projection(&element.text);
    if p.has_extra_cells
        || table.lines[1].cells.len() != p.column_count
        || p.column_count != expected.names.len()
        || p.row_count != expected.rows.len()
    {
        return Err(shape_error());
    }
    for (c, ((name, alignment), (want_name, want_alignment))) in
        p.columns.iter().zip(expected.names.iter().zip(&expected.alignments)).enumerate()
    {
        if name != want_name {
            return Err(Error::invalid_argument(format!(
                "Column at columnIndex={c} did not preserve its expected name."
            )));
        }
        if alignment != want_alignment {
            return Err(Error::invalid_argument(format!(
                "Column at columnIndex={c} did not preserve its expected alignment."
            )));
        }
    }
    for (r, (got, want)) in p.rows.iter().zip(&expected.rows).enumerate() {
        for (c, (got, want)) in got.iter().zip(want).enumerate() {
            if want.as_ref().is_some_and(|w| w != got) {
                return Err(Error::invalid_argument(format!(
                    "Cell at rowIndex={r}, columnIndex={c} did not preserve its expected visible value."
                )));
            }
        }
    }
    Ok(element.anchor())
}

/// A value the caller sent, as quoted in a message: control characters (a line break in a cell
/// value, say) escaped, so every message stays one line.
fn shown(value: &str) -> String {
    value
        .chars()
        .map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() })
        .collect()
}
