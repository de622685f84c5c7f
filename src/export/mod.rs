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
//! Fonts: a Japanese gothic face is loaded at run time (see `docs/design/pdf.md` for why) from
//! `LVS_PDF_FONT` or the usual system locations of IPAexGothic; `LVS_PDF_SERIF_FONT` or
//! IPAexMincho, when present, sets the body of the classic and academic styles. Code uses the
//! PDF core font Courier for ASCII. Glyphs are subset into the PDF.
//!
//! Invariants:
//!
//! - Nothing from outside the process is fetched: remote and absolute image URLs are reported,
//!   never opened (the loader is only asked for relative paths).
//! - The output is deterministic for the same input (no dates, no random ids in the layout).
//! - `printpdf`, `lopdf` and `image` are used only in this module.

mod blocks;
mod fonts;
mod images;
mod layout;
mod linebreak;
mod pdf;
mod style;

#[cfg(test)]
mod tests;

pub use fonts::{FONT_ENV, SERIF_FONT_ENV};
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
    let laid = layout::lay_out(&book, &style, page, fonts, &mut resolve, fonts.has_serif());
    warnings.extend(laid.warnings.iter().cloned());
    let title = book.title.clone().unwrap_or_else(|| {
        book.blocks
            .iter()
            .find_map(|b| match b {
                blocks::Block::Heading { level: 1, spans } => Some(blocks::plain(spans)),
                _ => None,
            })
            .unwrap_or_else(|| options.fallback_title.clone())
    });
    let bytes = pdf::write(&laid, page, &title, fonts, &store)?;
    Ok(PdfBook { bytes, pages: laid.pages.len(), warnings })
}
