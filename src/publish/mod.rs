//! The publishing model: one Markdown document as the block and inline stream both exports
//! render (`docs/design/markdown-model.md`, "Text rules"; `docs/design/pdf.md`).
//!
//! [`publish`] reads the source once through `markdown::syntax` (the one parser) and makes
//! every decision the HTML page and the PDF book must agree on, so neither walks the parser's
//! events itself:
//!
//! - soft line breaks by the one rule of `markdown::text_rules` ([`breaks`]);
//! - headings carry their explicit `{#id}` (taken off the text) and classes;
//! - GitHub alerts (`> [!NOTE]`) are their own block with the title in the document's
//!   language (the message catalogue's `Note`/`注記`, …);
//! - list items know their task state on their start;
//! - footnote references are numbered by first reference, and the definitions come after the
//!   body, in number order ([`Tag::Footnotes`]);
//! - code blocks and the front matter are single events.
//!
//! The model is the stream in [`model`]; the exports keep only what is theirs (HTML escaping and
//! link rewriting, the PDF's block tree and layout).

mod breaks;
mod build;
mod model;

pub use model::{AlertKind, Align, Event, Node, Tag};

use crate::text::Language;

/// The publishing stream of `text` (without BOM); alert titles in `language`.
pub fn publish(text: &str, language: Language) -> Vec<Node> {
    breaks::resolve(build::build(text, language))
}

#[cfg(test)]
mod tests;
