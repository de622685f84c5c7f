//! The publishing model: the block and inline events both exports render.
//!
//! A document is a flat stream of [`Node`]s — block and inline starts and ends around inline
//! content — in reading order, each with the source range it came from (for warnings). It is
//! what pulldown-cmark's events become once the publishing decisions are made: soft breaks
//! resolved by the one rule, `{#id}` taken off the heading text, alerts titled, task items
//! marked on their start, code blocks whole, and footnote definitions collected after the
//! body, numbered in the order of their first reference.

use std::ops::Range;

/// One event of the stream and the source bytes it came from.
pub type Node = (Event, Range<usize>);

/// A block or inline event.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// A block or an inline element opens.
    Start(Tag),
    /// The element opened by the matching `Start` (the same tag) closes.
    End(Tag),
    /// Text.
    Text(String),
    /// `` `inline code` ``.
    Code(String),
    /// A piece of a raw HTML block (inside `Tag::HtmlBlock`).
    Html(String),
    /// A raw HTML tag inside a paragraph.
    InlineHtml(String),
    /// The YAML front matter, as written.
    FrontMatter(String),
    /// A fenced or indented code block, whole.
    CodeBlock {
        /// The info string's first word (before white space, `,` or `{`).
        lang: String,
        /// The code as written (its final newline included).
        text: String,
    },
    /// `[^label]`: a reference to a footnote.
    FootnoteReference {
        /// The label as written.
        label: String,
        /// The footnote's number: the order of first references (then of definitions).
        number: usize,
        /// 1 for the label's first reference, 2 for the second, …
        nth: usize,
    },
    /// A soft line break the text rule keeps: a space (a line break in HTML). Breaks the rule
    /// joins (between Japanese characters, next to full-width punctuation) are not in the stream.
    SoftBreak,
    /// A hard line break.
    HardBreak,
    /// `---`.
    Rule,
    /// Where a task item's `[ ]`/`[x]` stood (its state is also on `Tag::Item`).
    TaskMarker(bool),
}

/// What a `Start`/`End` pair encloses.
#[derive(Clone, Debug, PartialEq)]
pub enum Tag {
    /// A paragraph.
    Paragraph,
    /// `#`…`######`.
    Heading {
        /// 1–6.
        level: u8,
        /// An explicit `{#id}` (removed from the text).
        id: Option<String>,
        /// `{.class}` attributes.
        classes: Vec<String>,
    },
    /// `> …`.
    Quote,
    /// A GitHub alert (`> [!NOTE]`, …): a quote with a title.
    Alert {
        /// Which alert.
        kind: AlertKind,
        /// Its title in the document's language (`Note`, `注記`, …).
        title: String,
    },
    /// A list.
    List {
        /// `Some(n)` for an ordered list starting at `n`.
        start: Option<u64>,
    },
    /// A list item.
    Item {
        /// `Some(done)` for a task item (`- [ ]` / `- [x]`).
        task: Option<bool>,
    },
    /// A GFM table.
    Table {
        /// One per column.
        aligns: Vec<Align>,
    },
    /// The header row of a table.
    TableHead,
    /// A body row.
    TableRow,
    /// A cell.
    TableCell,
    /// A raw HTML block (its pieces are `Event::Html`).
    HtmlBlock,
    /// The footnote definitions, after the body (only when one is defined).
    Footnotes,
    /// One footnote's body, inside `Footnotes`.
    FootnoteDefinition {
        /// The label as written.
        label: String,
        /// Its number (see `Event::FootnoteReference`).
        number: usize,
        /// Whether the text refers to it.
        referenced: bool,
    },
    /// `*emphasis*`.
    Emphasis,
    /// `**strong**`.
    Strong,
    /// `~~strike~~`.
    Strikethrough,
    /// `^sup^`.
    Superscript,
    /// `~sub~`.
    Subscript,
    /// A link.
    Link {
        /// The destination as written.
        dest: String,
        /// The title, or empty.
        title: String,
    },
    /// An image; its alternative text is the events up to the end.
    Image {
        /// The URL as written.
        dest: String,
        /// The title, or empty.
        title: String,
    },
}

/// The five GitHub alerts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AlertKind {
    /// `[!NOTE]`.
    Note,
    /// `[!TIP]`.
    Tip,
    /// `[!IMPORTANT]`.
    Important,
    /// `[!WARNING]`.
    Warning,
    /// `[!CAUTION]`.
    Caution,
}

impl AlertKind {
    /// The lower-case name (`note`, …): the HTML's class.
    pub fn name(self) -> &'static str {
        match self {
            AlertKind::Note => "note",
            AlertKind::Tip => "tip",
            AlertKind::Important => "important",
            AlertKind::Warning => "warning",
            AlertKind::Caution => "caution",
        }
    }
}

/// Column alignment of a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Not given.
    None,
    /// `:--`.
    Left,
    /// `:-:`.
    Center,
    /// `--:`.
    Right,
}
