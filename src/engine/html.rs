//! `kb_export_html` / `export-html` and `kb_build_site` / `build-site`
//! (`docs/reference/catalog-spec.md` §6.5, §6.6, §8.2, §8.3): Markdown to self-contained HTML.
//!
//! The engine resolves the settings, reads the documents and their images through the workspace
//! guard (as [`html::Files`]), hands them to the pure renderer in `crate::html` and writes the
//! page atomically. Nothing is written when a call fails; warnings never make it fail.

use super::Engine;
use crate::assets::{ImageFormat, MAX_ASSET_BYTES, SIGNATURE_BYTES};
use crate::catalog::{CatalogSettings, DocCache, HtmlLang, IndexRead, read_index};
use crate::error::{Error, ErrorCode, Result};
use crate::html::{self, FileKind, Files, ImageProblem, Language, SiteDoc};
use crate::messages::{Msg, msg};
use crate::wire::{BuildSiteRequest, BuildSiteResponse, ExportHtmlRequest, ExportHtmlResponse};
use crate::workspace::{GlobFilter, PathContext, RelPath, Workspace};

/// The settings of one call: `html.*`, `language`, `build` and the index file.
struct HtmlConfig {
    settings: html::Settings,
    build: Option<Build>,
    /// The catalog settings, for the index (titles and IDs of documents).
    catalog: CatalogSettings,
}

/// `build.*`, root-relative.
struct Build {
    include: Vec<String>,
    exclude: Vec<String>,
    out: String,
    title: String,
}

impl Engine {
    /// `kb_export_html`: needs `knowledgeBase.allowWrites`.
    pub fn export_html(&self, req: &ExportHtmlRequest) -> Result<ExportHtmlResponse> {
        self.html_writes_allowed("kb_export_html")?;
        let mut answer = self.export_html_file(req)?;
        let budget = self.config.tools.max_answer_bytes;
        super::paging::cap_warnings(
            &mut answer.warnings,
            budget,
            "the CLI `local-vector-search-mcp export-html`",
        );
        Ok(answer)
    }

    /// `kb_build_site`: needs `knowledgeBase.allowWrites`.
    pub fn build_site(&self, req: &BuildSiteRequest) -> Result<BuildSiteResponse> {
        self.html_writes_allowed("kb_build_site")?;
        let mut answer = self.build_html_site(req)?;
        let budget = self.config.tools.max_answer_bytes;
        super::paging::cap_warnings(
            &mut answer.warnings,
            budget,
            "the CLI `local-vector-search-mcp build-site`",
        );
        Ok(answer)
    }

    /// E19 (`docs/reference/catalog-spec.md` §2.4).
    fn html_writes_allowed(&self, tool: &str) -> Result<()> {
        if self.config.knowledge_base.allow_writes {
            return Ok(());
        }
        let language = self.html_config(None, false).map(|c| c.settings.language).unwrap_or_default();
        Err(Error::new(ErrorCode::PermissionDenied, msg!(language, WritesDisabled, tool)))
    }

    /// The `export-html` subcommand: the export, run by a person on purpose, so not gated by
    /// `allowWrites` (`docs/reference/catalog-spec.md` §1).
    pub fn export_html_file(&self, req: &ExportHtmlRequest) -> Result<ExportHtmlResponse> {
        let config = self.html_config(req.config.as_deref(), false)?;
        let lang = config.settings.language;
        let workspace = &self.core.workspace;
        let source = workspace.rel_path(&req.file, PathContext::Any)?;
        if !source.is_markdown() || source.file_name().len() <= 3 {
            return Err(not_a(lang, source.as_str(), Kind::Markdown));
        }
        let out = match req.out.as_deref().map(str::trim).filter(|o| !o.is_empty()) {
            Some(out) => workspace.rel_path(out, PathContext::Any)?,
            None => {
                let name = source.as_str();
                workspace.rel_path(&format!("{}.html", &name[..name.len() - 3]), PathContext::Any)?
            }
        };
        check_output(workspace, &out, lang)?;
        let doc = match workspace.read_markdown(&source) {
            Ok(doc) => doc,
            Err(e) if e.code == ErrorCode::NotFound => return Err(missing_source(lang, source.as_str())),
            Err(e) => return Err(e),
        };
        let entries = index_entries(workspace, &config.catalog, &self.catalog_docs);
        let entry = entries.iter().find(|e| e.path == source.as_str());
        let site_doc = SiteDoc {
            path: source.as_str(),
            text: &doc.text,
            index_title: entry.and_then(|e| e.title.as_deref()),
            id: entry.map(|e| e.id.as_str()),
        };
        let files = WorkspaceFiles { workspace };
        let page = html::export_page(&site_doc, out.as_str(), &config.settings, &files);
        write_page(workspace, &out, &page.html, lang)?;
        Ok(ExportHtmlResponse { out: out.as_str().to_owned(), warnings: page.warnings })
    }

    /// The `build-site` subcommand: the site, not gated by `allowWrites`.
    pub fn build_html_site(&self, req: &BuildSiteRequest) -> Result<BuildSiteResponse> {
        let config = self.html_config(req.config.as_deref(), true)?;
        let lang = config.settings.language;
        let Some(build) = &config.build else {
            return Err(Error::not_found(Msg::NoBuildSection.text(lang)));
        };
        let workspace = &self.core.workspace;
        let out = workspace.rel_path(&build.out, PathContext::Any)?;
        check_output(workspace, &out, lang)?;
        let paths = build_documents(workspace, &build.include, &build.exclude)?;
        if paths.is_empty() {
            return Err(Error::not_found(Msg::BuildMatchesNothing.text(lang)));
        }
        let mut texts = Vec::with_capacity(paths.len());
        for path in &paths {
            texts.push(workspace.read_markdown(path)?.text);
        }
        let entries = index_entries(workspace, &config.catalog, &self.catalog_docs);
        let docs: Vec<SiteDoc<'_>> = paths
            .iter()
            .zip(&texts)
            .map(|(path, text)| {
                let entry = entries.iter().find(|e| e.path == path.as_str());
                SiteDoc {
                    path: path.as_str(),
                    text,
                    index_title: entry.and_then(|e| e.title.as_deref()),
                    id: entry.map(|e| e.id.as_str()),
                }
            })
            .collect();
        let files = WorkspaceFiles { workspace };
        let page = html::build_site(&docs, &build.title, out.as_str(), &config.settings, &files);
        write_page(workspace, &out, &page.html, lang)?;
        Ok(BuildSiteResponse {
            out: out.as_str().to_owned(),
            docs: docs.len() as u64,
            warnings: page.warnings,
        })
    }

    /// The settings for a call. `required`: a missing catalog configuration is an error
    /// (`kb_build_site`); otherwise the defaults apply (`kb_export_html`,
    /// `docs/reference/catalog-spec.md` §3.1).
    fn html_config(&self, config: Option<&str>, required: bool) -> Result<HtmlConfig> {
        let s = if required {
            self.catalog_settings(config)?
        } else {
            self.find_catalog_settings(config)?.unwrap_or_else(CatalogSettings::defaults)
        };
        let settings = html::Settings {
            lang: match &s.html.lang {
                HtmlLang::Auto => None,
                HtmlLang::Tag(tag) => Some(tag.clone()),
            },
            toc: s.html.toc,
            toc_depth: s.html.toc_depth,
            highlight: s.html.highlight,
            language: s.language,
        };
        let build = s.build.clone().map(|b| Build {
            include: b.include,
            exclude: b.exclude,
            out: b.out,
            title: b.title,
        });
        Ok(HtmlConfig { settings, build, catalog: s })
    }
}

/// Which file type a path must have.
enum Kind {
    Markdown,
    Html,
}

/// E26.
fn not_a(lang: Language, path: &str, kind: Kind) -> Error {
    let (expected, ext) = match kind {
        Kind::Markdown => ("Markdown", Msg::ExtMarkdown),
        Kind::Html => ("HTML", Msg::ExtHtml),
    };
    let ext = ext.text(lang);
    Error::new(ErrorCode::UnsupportedFormat, msg!(lang, NotOfKind, path, expected, ext))
}

/// E25.
fn missing_source(lang: Language, path: &str) -> Error {
    Error::not_found(msg!(lang, ExportSourceMissing, path))
}

/// The output must be an `.html`/`.htm` path that is not a folder (`docs/reference/catalog-spec.md`
/// §2.5).
fn check_output(workspace: &Workspace, out: &RelPath, lang: Language) -> Result<()> {
    let name = out.file_name().to_ascii_lowercase();
    let stem_len = name.rfind('.').unwrap_or(0);
    if !(name.ends_with(".html") || name.ends_with(".htm")) || stem_len == 0 {
        return Err(not_a(lang, out.as_str(), Kind::Html));
    }
    match workspace.file_metadata(out)? {
        Some(meta) if !meta.is_file() => Err(Error::invalid_path(msg!(lang, OutputNotAFile, path = out))),
        _ => Ok(()),
    }
}

/// Writes the page atomically; an OS refusal is E30.
fn write_page(workspace: &Workspace, out: &RelPath, html: &str, lang: Language) -> Result<()> {
    match workspace.write_atomic(out, html.as_bytes(), None, true) {
        Ok(_) => Ok(()),
        Err(e) if e.code == ErrorCode::PermissionDenied => {
            let reason = Msg::ReasonPermissionDenied.text(lang);
            Err(Error::new(ErrorCode::PermissionDenied, msg!(lang, OutputNotWritable, path = out, reason)))
        }
        Err(e) => Err(e),
    }
}

/// The documents of `build` (`docs/reference/catalog-spec.md` §3.3): the Markdown files of each
/// include pattern in path order (by code points), patterns in the order written, each file once,
/// minus the excluded ones.
fn build_documents(workspace: &Workspace, include: &[String], exclude: &[String]) -> Result<Vec<RelPath>> {
    let all = workspace.scan_markdown(&GlobFilter::new(&["**/*".to_owned()], exclude)?)?;
    let mut paths: Vec<RelPath> = Vec::new();
    for pattern in include {
        let filter = GlobFilter::new(std::slice::from_ref(pattern), exclude)?;
        let mut matched: Vec<&RelPath> =
            all.iter().map(|e| &e.path).filter(|p| filter.matches(p.as_str())).collect();
        matched.sort_by(|a, b| a.as_str().cmp(b.as_str()));
        for path in matched {
            if !paths.contains(path) {
                paths.push(path.clone());
            }
        }
    }
    Ok(paths)
}

/// One `docs` entry of the catalog index.
struct IndexEntry {
    id: String,
    /// Root-relative.
    path: String,
    title: Option<String>,
}

/// The `docs` entries of the catalog index (titles and site keys), read by the catalog's own
/// reader. A missing or unreadable index gives no entries: the render falls back to §7.2's other
/// title sources, and `kb_check` is where index problems are reported.
fn index_entries(workspace: &Workspace, settings: &CatalogSettings, cache: &DocCache) -> Vec<IndexEntry> {
    if settings.index.is_none() {
        return Vec::new();
    }
    match read_index(workspace, settings, cache) {
        Ok(IndexRead::Parsed(file)) => file
            .validated
            .index
            .docs
            .iter()
            .map(|d| IndexEntry {
                id: d.id.clone(),
                path: d.path.clone(),
                title: Some(d.title.clone()).filter(|t| !t.trim().is_empty()),
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// [`html::Files`] over the workspace guard.
struct WorkspaceFiles<'a> {
    workspace: &'a Workspace,
}

impl WorkspaceFiles<'_> {
    fn path(&self, path: &str) -> Option<RelPath> {
        self.workspace.rel_path(path, PathContext::Any).ok()
    }
}

impl Files for WorkspaceFiles<'_> {
    fn kind(&self, path: &str) -> FileKind {
        match self.path(path).map(|p| self.workspace.file_metadata(&p)) {
            Some(Ok(Some(meta))) if meta.is_dir() => FileKind::Dir,
            Some(Ok(Some(meta))) if meta.is_file() => FileKind::File,
            _ => FileKind::Missing,
        }
    }

    fn markdown(&self, path: &str) -> Option<String> {
        self.workspace.read_markdown(&self.path(path)?).ok().map(|d| d.text)
    }

    fn image(&self, path: &str) -> std::result::Result<(&'static str, Vec<u8>), ImageProblem> {
        let rel = self.path(path).ok_or(ImageProblem::Outside)?;
        match self.workspace.file_metadata(&rel) {
            Ok(Some(meta)) if meta.is_file() => {
                if meta.len() > MAX_ASSET_BYTES {
                    return Err(ImageProblem::TooLarge);
                }
            }
            Ok(_) => return Err(ImageProblem::Missing),
            Err(_) => return Err(ImageProblem::Outside),
        }
        let bytes = self.workspace.read_bytes(&rel, MAX_ASSET_BYTES).map_err(|e| match e.code {
            ErrorCode::NotFound => ImageProblem::Missing,
            ErrorCode::UnsupportedFormat => ImageProblem::TooLarge,
            ErrorCode::InvalidPath => ImageProblem::Outside,
            _ => ImageProblem::Unreadable,
        })?;
        let name = rel.file_name();
        let declared = ImageFormat::from_file_name(name);
        match (declared, ImageFormat::detect(&bytes[..bytes.len().min(SIGNATURE_BYTES)])) {
            (Some(declared), Some(found)) if declared == found => Ok((found.mime(), bytes)),
            (Some(_), _) => Err(ImageProblem::Unsupported),
            (None, _) => html::sniff_svg_or_avif(name, &bytes)
                .map(|mime| (mime, bytes))
                .ok_or(ImageProblem::Unsupported),
        }
    }
}
