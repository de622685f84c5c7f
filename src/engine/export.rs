//! `kb_create_pdf_book` and `local-vector-search-mcp pdf`: one Markdown file to a PDF book.
//!
//! The engine reads the source and its local images through the workspace guard, hands them to
//! `export::render_pdf` and writes the result atomically. The Markdown, its images and the index
//! are never written; remote and absolute image URLs are never fetched or read.

use super::Engine;
use crate::error::{Error, ErrorCode, Result};
use crate::export::{PageFormat, PdfOptions, Profile, StyleName, render_pdf};
use crate::wire::{PdfBookRequest, PdfBookResponse};
use crate::workspace::{PathContext, RelPath};

/// The largest image file the export reads.
const MAX_IMAGE_BYTES: u64 = 64 * 1024 * 1024;

/// `WRITES_DISABLED` of the mutation tools, with the code the contract gives file writes
/// outside Markdown (`docs/reference/original-server.md` §11: image writes answer
/// `PERMISSION_DENIED`).
const EXPORT_DISABLED: &str =
    "Workspace writes are disabled. Set knowledgeBase.allowWrites to true to enable mutation tools.";

impl Engine {
    /// `kb_create_pdf_book`: needs `knowledgeBase.allowWrites`.
    pub fn create_pdf_book(&self, req: &PdfBookRequest) -> Result<PdfBookResponse> {
        if !self.config.knowledge_base.allow_writes {
            return Err(Error::new(ErrorCode::PermissionDenied, EXPORT_DISABLED));
        }
        let mut answer = self.export_pdf_book(req)?;
        let budget = self.config.tools.max_answer_bytes;
        super::paging::cap_warnings(&mut answer.warnings, budget, "the CLI `local-vector-search-mcp pdf`");
        Ok(answer)
    }

    /// The `pdf` subcommand: the same export, run by a person on purpose, so not gated by
    /// `allowWrites` (`docs/reference/catalog-spec.md` §1, as for the other export subcommands).
    pub fn export_pdf_book(&self, req: &PdfBookRequest) -> Result<PdfBookResponse> {
        let workspace = &self.core.workspace;
        let source = workspace.rel_path(&req.path, PathContext::Markdown)?;
        let output = match req.output_path.as_deref().map(str::trim).filter(|p| !p.is_empty()) {
            Some(out) => workspace.rel_path(out, PathContext::Any)?,
            None => {
                let name = source.as_str();
                workspace.rel_path(&format!("{}.pdf", &name[..name.len() - 3]), PathContext::Any)?
            }
        };
        if !output.file_name().to_ascii_lowercase().ends_with(".pdf") || output.file_name().len() <= 4 {
            return Err(Error::invalid_path(format!(
                "outputPath '{output}' is not a PDF file name; give a path ending in .pdf."
            )));
        }
        let options = PdfOptions {
            format: PageFormat::parse(req.page_format.as_deref())?,
            style: StyleName::parse(req.style.as_deref())?,
            profile: Profile::parse(req.profile.as_deref())?,
            fallback_title: source.file_name()[..source.file_name().len() - 3].to_owned(),
            toc: req.toc.unwrap_or(true),
        };
        let doc = workspace.read_markdown(&source)?;
        let mut load = |src: &str| -> std::result::Result<Vec<u8>, String> {
            let path = image_path(&source, src)?;
            workspace.read_bytes(&path, MAX_IMAGE_BYTES).map_err(|e| e.message)
        };
        let book = render_pdf(&doc.text, &options, &mut load)?;
        workspace.write_atomic(&output, &book.bytes, None, true)?;
        Ok(PdfBookResponse {
            path: output.as_str().to_owned(),
            bytes: book.bytes.len() as u64,
            warnings: book.warnings,
        })
    }
}

/// The root-relative path of an image URL written in `source`, or why it is not read: remote
/// and absolute URLs are never fetched, and a path must stay inside the root.
fn image_path(source: &RelPath, src: &str) -> std::result::Result<RelPath, String> {
    let src = src.trim();
    let lower = src.to_ascii_lowercase();
    let scheme = lower
        .find(':')
        .is_some_and(|i| i > 1 && lower[..i].chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)));
    if scheme || lower.starts_with("//") {
        return Err(
            "remote images are not fetched; save the image in the project and link it by a relative path"
                .to_owned(),
        );
    }
    if src.starts_with(['/', '\\']) || (src.len() > 1 && src.as_bytes()[1] == b':') {
        return Err(
            "absolute image paths are not read; link the image by a path relative to the Markdown file"
                .to_owned(),
        );
    }
    let path = src.split(['?', '#']).next().unwrap_or("");
    let path = percent_decode(path);
    let mut parts: Vec<String> =
        source.parent().map(|p| p.components().map(str::to_owned).collect()).unwrap_or_default();
    for part in path.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err("the image is outside the project root".to_owned());
                }
            }
            p => parts.push(p.to_owned()),
        }
    }
    if parts.is_empty() {
        return Err("the image path is empty".to_owned());
    }
    RelPath::new(&parts.join("/")).map_err(|e| e.message)
}

/// `%20` → space and the like (invalid escapes are kept as written).
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Ok(v) = u8::from_str_radix(std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("zz"), 16)
        {
            out.push(v);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
