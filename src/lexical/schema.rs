//! The index's schema: the field names, the [`Fields`] handles and the stored text of a hit.

use tantivy::TantivyDocument;
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions, Value,
};

use super::ANALYZER_NAME;

pub(super) const F_CHUNK_ID: &str = "chunk_id";
pub(super) const F_PATH: &str = "path";
pub(super) const F_TEXT: &str = "text";
pub(super) const F_HEADING_PATH: &str = "heading_path";
/// The chunk's own heading (the last part of the heading path), indexed only.
pub(super) const F_HEADING: &str = "heading";

/// How many fields a query's words are looked for in ([`Fields::searched`]).
pub(super) const SEARCHED: usize = 3;
pub(super) const F_ANCHOR: &str = "anchor";
pub(super) const F_SOURCE_HASH: &str = "source_hash";
/// The file's front-matter terms (`lexical/meta.rs`), indexed only.
pub(super) const F_META: &str = "meta";

/// The fields of the schema ([`schema`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct Fields {
    pub(super) chunk_id: Field,
    pub(super) path: Field,
    pub(super) text: Field,
    pub(super) heading_path: Field,
    pub(super) heading: Field,
    pub(super) anchor: Field,
    pub(super) source_hash: Field,
    pub(super) meta: Field,
}

impl Fields {
    /// The fields a query's words are looked for in: the text, the heading path and the
    /// chunk's own heading again (so that a section's own heading can weigh more than a title
    /// word every section of the file shares: `docs/design/retrieval.md`, "The own heading").
    pub(super) fn searched(&self) -> [Field; SEARCHED] {
        [self.text, self.heading_path, self.heading]
    }

    /// The chunk's own heading in its heading path: the last part (`"概要 > 手順"` →
    /// `"手順"`). A heading that itself holds `" > "` gives only its words after it.
    pub(super) fn own_heading(path: &str) -> &str {
        path.rsplit_once(" > ").map_or(path, |(_, own)| own)
    }
}

/// The stored text of a hit (all its pieces; borrowed when there is one).
pub(super) fn stored_text(doc: &TantivyDocument, field: Field) -> std::borrow::Cow<'_, str> {
    let mut values = doc.get_all(field).filter_map(|v| v.as_str());
    match (values.next(), values.next()) {
        (None, _) => "".into(),
        (Some(one), None) => one.into(),
        (Some(first), Some(second)) => [first, second].into_iter().chain(values).collect::<String>().into(),
    }
}

/// The index's schema: what is indexed, stored and kept in columns (`lexical/mod.rs`, "The
/// index").
pub(super) fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let indexed = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(ANALYZER_NAME)
            .set_index_option(IndexRecordOption::WithFreqsAndPositions),
    );
    let analyzed = indexed.clone().set_stored();
    let chunk_id = b.add_u64_field(F_CHUNK_ID, INDEXED | STORED | FAST);
    let path = b.add_text_field(F_PATH, STRING | STORED | FAST);
    let text = b.add_text_field(F_TEXT, analyzed.clone());
    let heading_path = b.add_text_field(F_HEADING_PATH, analyzed);
    let heading = b.add_text_field(F_HEADING, indexed);
    let anchor = b.add_text_field(F_ANCHOR, STORED);
    let source_hash = b.add_text_field(F_SOURCE_HASH, STORED);
    let meta = b.add_text_field(F_META, STRING);
    (b.build(), Fields { chunk_id, path, text, heading_path, heading, anchor, source_hash, meta })
}
