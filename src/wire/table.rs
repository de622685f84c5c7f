//! `kb_edit_table` arguments (`docs/reference/original-server.md` §7.10, §10.2): flat, no `request`
//! wrapper.
//!
//! One struct holds `path`, `pointer`, `action` and every action's fields, so that
//! `deny_unknown_fields` can refuse a misspelled field (serde cannot combine it with `flatten`).
//! The planner (`table::plan_table_edit`) takes these types as they are.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Column alignment from the delimiter row (wire values `none`, `left`, `center`, `right`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Alignment {
    /// `---`
    None,
    /// `:---`
    Left,
    /// `:---:`
    Center,
    /// `---:`
    Right,
}

/// The seven `kb_edit_table` actions (wire values in snake case).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TableAction {
    // Short: each field's description names the actions that take it, and these texts are
    // folded into the `action` description a client's model reads (docs/design/clients.md).
    /// Change cells.
    UpdateCells,
    /// Add a data row.
    InsertRow,
    /// Remove a data row.
    DeleteRow,
    /// Add a column.
    InsertColumn,
    /// Remove a column (not the last one).
    DeleteColumn,
    /// Rename a column.
    RenameColumn,
    /// Change a column's alignment.
    SetAlignment,
}

/// How an updated cell value is written (§10.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ValueFormat {
    /// Literal text, escaped so it reads back verbatim.
    #[default]
    Text,
    /// Inline Markdown written as is (escape `|` as `\|`).
    Markdown,
}

/// The `where` row selector: the row whose cell in one column equals a value exactly.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RowFilter {
    /// Column by header name (exact, ordinal).
    pub column: Option<String>,
    /// Column by zero-based index.
    pub column_index: Option<i64>,
    /// The display text the cell must equal (exact, ordinal).
    pub equals: Option<String>,
}

/// One item of `updates` for `update_cells`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CellUpdate {
    /// The new value (required).
    pub value: Option<String>,
    /// Row by zero-based data-row index.
    pub row_index: Option<i64>,
    /// Row by cell value.
    #[serde(rename = "where")]
    pub r#where: Option<RowFilter>,
    /// Column by header name.
    pub column: Option<String>,
    /// Column by zero-based index.
    pub column_index: Option<i64>,
    /// How `value` is written (default `text`).
    pub value_format: Option<ValueFormat>,
}

/// `kb_edit_table` arguments (flat, no `request` wrapper). Only the fields of the chosen action
/// may be set (null counts as absent).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TableEditRequest {
    /// Root-relative path of the `.md` file.
    pub path: String,
    /// The table's hashed anchor (`tN~selfHash~subtreeHash`) from kb_read; after an edit use the
    /// returned pointer.
    pub pointer: String,
    /// What to do.
    pub action: TableAction,
    /// `update_cells`: the cells to change.
    pub updates: Option<Vec<CellUpdate>>,
    /// `insert_row`: one value per column, in column order.
    pub values: Option<Vec<String>>,
    /// `insert_row`: values by column name; missing columns get `""`.
    pub values_by_column: Option<BTreeMap<String, String>>,
    /// `insert_row`: insert before this existing data row; omitted = append.
    pub before_row_index: Option<i64>,
    /// `delete_row`: row by zero-based index.
    pub row_index: Option<i64>,
    /// `delete_row`: row by cell value.
    #[serde(rename = "where")]
    pub r#where: Option<RowFilter>,
    /// `insert_column`: the new header name.
    pub name: Option<String>,
    /// `insert_column`: the value of the new cell in every row (default `""`).
    pub default_value: Option<String>,
    /// `insert_column` / `set_alignment`: the column alignment.
    pub alignment: Option<Alignment>,
    /// `insert_column`: insert before the column with this name; omitted = append.
    pub before_column: Option<String>,
    /// `insert_column`: insert before the column with this index; omitted = append.
    pub before_column_index: Option<i64>,
    /// Column by header name (`delete_column`, `rename_column`, `set_alignment`).
    pub column: Option<String>,
    /// Column by zero-based index (`delete_column`, `rename_column`, `set_alignment`).
    pub column_index: Option<i64>,
    /// `rename_column`: the new header name.
    pub new_name: Option<String>,
}
