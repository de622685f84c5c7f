//! Export: one Markdown document (and its local images) to a PDF book.
//!
//! `render_pdf` is a function of the Markdown text, the options and an image loader to bytes: it
//! reads and writes no file itself (the engine reads through the workspace guard and writes the
//! result atomically). The pipeline:
//!
//! ```text
//! Markdown ─blocks─▶ Book ─layout (linebreak, style, font metrics)─▶ pages of Draw ops
//!          ─pdf (printpdf: text, shapes, links; lopdf: images, outline tree)─▶ bytes
//! ```
//!
//! Fonts (`fonts.rs`, `docs/design/pdf.md`): a Japanese gothic face, an optional mincho face
//! (body of the classic and academic styles) and a monospaced face for code, each from its
//! `LVS_PDF_*FONT` variable, else the first installed of a list of platform families, else the
//! copy built into the binary (IPAexGothic, IPAGothic). Every font is embedded as a subset.
//!
//! Book parts (`book.rs`): a 目次 page in front (unless turned off), running headers in the book
//! styles; the PDF carries the title, the language `ja` and the front matter's `date`.
//!
//! Invariants:
//!
//! - Nothing from outside the process is fetched: remote and absolute image URLs are reported,
//!   never opened (the loader is only asked for relative paths).
//! - The output is deterministic for the same input (no clock time: the only date is the
//!   source's own; no random ids in the layout).
//! - `printpdf`, `lopdf`, `image`, `fontdb` and `resvg` are used only in this module.

mod blocks;
mod book;
mod fonts;
mod images;
mod layout;
mod linebreak;
mod pdf;
mod style;

#[cfg(test)]
mod tests;

pub use fonts::{FONT_ENV, MONO_FONT_ENV, SERIF_FONT_ENV};
pub use style::{PageFormat, Profile, StyleName};

use crate::error::Result;

/// What to render and how.
#[derive(Clone, Debug)]
pub struct PdfOptions {
    /// Paper size.
    pub format: PageFormat,
    /// Look.
    pub style: StyleName,
    /// Image resolution and quality.
    pub profile: Profile,
    /// The document title when the front matter has none (the file name, say).
    pub fallback_title: String,
    /// A 目次 (table of contents) page in front when the document has several chapters or
    /// sections.
    pub toc: bool,
}

/// A rendered book.
#[derive(Clone, Debug)]
pub struct PdfBook {
    /// The PDF file.
    pub bytes: Vec<u8>,
    /// Pages.
    pub pages: usize,
    /// What could not be rendered as written.
    pub warnings: Vec<String>,
}

/// Loads the bytes of an image by the URL written in the Markdown, or says why it cannot.
pub type ImageLoader<'a> = dyn FnMut(&str) -> std::result::Result<Vec<u8>, String> + 'a;

/// Renders `markdown` as a PDF book.
pub fn render_pdf(markdown: &str, options: &PdfOptions, load: &mut ImageLoader<'_>) -> Result<PdfBook> {
    let fonts = fonts::Fonts::get()?;
    let book = blocks::parse(markdown);
    let style = style::Style::new(options.style, options.format);
    let (w_mm, h_mm) = options.format.size_mm();
    let page = (w_mm * style::PT_PER_MM, h_mm * style::PT_PER_MM);
    let mut store = images::ImageStore::new(options.profile);
    let mut warnings = Vec::new();
    let mut resolve = |src: &str| -> layout::ImageAnswer {
        let answer = store.add(src, load);
        if let Err(reason) = &answer {
            let note = format!("image '{src}': {reason}");
            if !warnings.contains(&note) {
                warnings.push(note);
            }
        }
        answer
    };
    let mut laid = layout::lay_out(&book, &style, page, fonts, &mut resolve, fonts.has_serif());
    warnings.extend(laid.warnings.iter().cloned());
    let face = if style.serif && fonts.has_serif() { layout::Face::Serif } else { layout::Face::Sans };
    book::running_headers(&mut laid, &style, page, fonts, face);
    let front = if options.toc {
        book::table_of_contents(&mut laid, &style, page, fonts, face)
    } else {
        book::Front::default()
    };
    let title = book.title.clone().unwrap_or_else(|| {
        book.blocks
            .iter()
            .find_map(|b| match b {
                blocks::Block::Heading { level: 1, spans, .. } => Some(blocks::plain(spans)),
                _ => None,
            })
            .unwrap_or_else(|| options.fallback_title.clone())
    });
    let meta = pdf::Meta { title, date: front_matter_date(markdown), front };
    let bytes = pdf::write(&laid, page, &meta, fonts, &store)?;
    Ok(PdfBook { bytes, pages: laid.pages.len(), warnings })
}

/// The `date:` (or `created:`) of the YAML front matter as `YYYYMMDD` digits, if it starts
/// with a `YYYY-MM-DD` date.
fn front_matter_date(markdown: &str) -> Option<String> {
    let rest = markdown.strip_prefix('\u{feff}').unwrap_or(markdown);
    let mut lines = rest.lines();
    if lines.next()?.trim_end() != "---" {
        return None;
    }
    for line in lines {
        let line = line.trim_end();
        if line == "---" || line == "..." {
            break;
        }
        let Some((key, value)) = line.split_once(':') else { continue };
        if !matches!(key.trim(), "date" | "created") {
            continue;
        }
        let value = value.trim().trim_matches(['"', '\'']);
        let b = value.as_bytes();
        let ok = b.len() >= 10
            && b[..4].iter().all(u8::is_ascii_digit)
            && b[4] == b'-'
            && b[5..7].iter().all(u8::is_ascii_digit)
            && b[7] == b'-'
            && b[8..10].iter().all(u8::is_ascii_digit);
        if ok {
            return Some(format!("{}{}{}", &value[..4], &value[5..7], &value[8..10]));
        }
    }
    None
}

#[cfg(test)]
mod date_tests {
    use super::front_matter_date;

    #[test]
    fn the_pdf_date_comes_from_the_front_matter_only() {
        assert_eq!(front_matter_date("---\ntitle: 本\ndate: 2024-05-06\n---\n# 本"), Some("20240506".into()));
        assert_eq!(front_matter_date("---\ncreated: \"2023-01-02T10:00\"\n---\n"), Some("20230102".into()));
        assert_eq!(front_matter_date("---\ndate: yesterday\n---\n"), None);
        assert_eq!(front_matter_date("# 本\n\ndate: 2024-05-06\n"), None);
        assert_eq!(front_matter_date("---\ntitle: 本\n---\ndate: 2024-05-06\n"), None);
    }
}
