//! Markdown to self-contained HTML (`docs/reference/catalog-spec.md` §7): one page per document
//! ([`export_page`], `kb_export_html`) and one navigable page for a list of documents
//! ([`build_site`], `kb_build_site`).
//!
//! The renderer is pure: files are reached through the caller's [`Files`] (the engine backs it
//! with the workspace guard), so this module never touches the disk. The stylesheet is compiled
//! in (`page.css`); nothing depends on the project being served.
//!
//! Invariants:
//!
//! - Self-contained: every resource of the output is inline or a `data:` URI; the only URLs
//!   left are `<a href>` links, which make no request until clicked. A Content Security Policy
//!   meta element forbids everything else.
//! - Deterministic: the same inputs give the same bytes (no clock, no hash-map order).
//! - Heading ids follow the one slug rule of `links` ([`crate::links::heading_slugs`]), so a link
//!   that `kb_links` accepts lands on the heading here.
//! - Warnings never stop a render; they are `{file}:{line}: {sentence}` in source order.

mod highlight;
mod page;
mod render;
mod sanitize;
mod text;

#[cfg(test)]
mod tests;

pub use page::{SiteDoc, build_site, export_page};
pub use text::Language;

/// The `html.*` settings of the catalog configuration (`docs/reference/catalog-spec.md` §3.3) plus
/// the message language.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// `html.lang`: `None` = `auto` (`ja` when the Markdown holds kana or kanji, else `en`).
    pub lang: Option<String>,
    /// `html.toc`: a table of contents in single exports.
    pub toc: bool,
    /// `html.tocDepth` (2..6): deepest heading level in tables of contents and site navigation.
    pub toc_depth: u8,
    /// `html.highlight`: server-side highlighting of fenced code.
    pub highlight: bool,
    /// `language`: of warnings and labels.
    pub language: Language,
}

impl Default for Settings {
    fn default() -> Self {
        Settings { lang: None, toc: true, toc_depth: 3, highlight: false, language: Language::En }
    }
}

/// What is at a root-relative path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// Nothing (or something the path guard refuses).
    Missing,
    /// A regular file.
    File,
    /// A folder.
    Dir,
}

/// Why an image was not embedded (`docs/reference/catalog-spec.md` §7.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageProblem {
    /// No file there.
    Missing,
    /// Outside the root or refused by the path guard.
    Outside,
    /// Not PNG, JPEG, WebP, GIF, SVG or AVIF, or its signature does not match its type.
    Unsupported,
    /// Over 25 MiB.
    TooLarge,
    /// The operating system refused the read.
    Unreadable,
}

/// The files a render may look at, all by root-relative path. The engine implements it with
/// the workspace guard; tests with a map.
pub trait Files {
    /// What is at `path`.
    fn kind(&self, path: &str) -> FileKind;
    /// The text of the Markdown file at `path`, for its heading anchors; `None` when it cannot
    /// be read.
    fn markdown(&self, path: &str) -> Option<String>;
    /// The bytes of the image at `path` with its MIME type, checked against its signature.
    fn image(&self, path: &str) -> Result<(&'static str, Vec<u8>), ImageProblem>;
}

/// A rendered page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Page {
    /// The whole HTML file.
    pub html: String,
    /// `{file}:{line}: {sentence}` in source order (site: document order, then source order).
    pub warnings: Vec<String>,
}

/// The MIME type of an SVG or AVIF image from its bytes and file name (the formats the asset
/// tools do not handle): SVG is text whose first element is `<svg`, AVIF an ISO-BMFF file with
/// an `avif`/`avis` brand. `None` when neither.
pub fn sniff_svg_or_avif(name: &str, bytes: &[u8]) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    if lower.ends_with(".svg") {
        let head = String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]).to_ascii_lowercase();
        return head.contains("<svg").then_some("image/svg+xml");
    }
    if lower.ends_with(".avif") {
        let brand = bytes.get(4..12)?;
        return (brand == b"ftypavif" || brand == b"ftypavis").then_some("image/avif");
    }
    None
}

/// `html.lang: auto`: `ja` when any text holds Hiragana, Katakana or a CJK ideograph.
pub fn auto_lang<'a>(texts: impl IntoIterator<Item = &'a str>) -> &'static str {
    if texts.into_iter().any(crate::markdown::text_rules::has_japanese) { "ja" } else { "en" }
}
