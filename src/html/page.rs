//! Pages: the single export and the site (`docs/reference/catalog-spec.md` §7.2, §7.3, §7.7, §7.8,
//! §7.10, §7.11).

use std::collections::BTreeMap;

use super::render::{Analysis, Context, DocInput, SiteEntry, analyze, render_article};
use super::text::{encode_url, escape_attr, escape_text, labels};
use super::{Files, Page, Settings, auto_lang};

/// The stylesheet of every page (light and dark schemes, print), compiled in.
const STYLE: &str = include_str!("page.css");

/// The Content Security Policy of every page: nothing but inline styles and `data:` images.
const CSP: &str = "default-src 'none'; img-src data:; style-src 'unsafe-inline'";

/// A document to render.
#[derive(Clone, Copy, Debug)]
pub struct SiteDoc<'a> {
    /// Root-relative path of the Markdown file.
    pub path: &'a str,
    /// Its text (without BOM).
    pub text: &'a str,
    /// Its title in the catalog index, when it is a `docs` entry.
    pub index_title: Option<&'a str>,
    /// Its catalog ID, when it is a `docs` entry (the site key).
    pub id: Option<&'a str>,
}

/// The title (`docs/reference/catalog-spec.md` §7.2) and whether an H1 must be inserted for it.
fn title_of(doc: &SiteDoc<'_>, analysis: &Analysis) -> (String, bool) {
    let has_h1 = analysis.first_h1().is_some();
    if let Some(t) = doc.index_title.filter(|t| !t.trim().is_empty()) {
        return (t.to_owned(), !has_h1);
    }
    if let Some(t) = &analysis.front_title {
        return (t.clone(), !has_h1);
    }
    if let Some(h1) = analysis.first_h1() {
        return (h1.to_owned(), false);
    }
    let name = doc.path.rsplit('/').next().unwrap_or(doc.path);
    let stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
    (stem.to_owned(), false)
}

/// One Markdown document as a self-contained page written at `out` (root-relative).
pub fn export_page(doc: &SiteDoc<'_>, out: &str, settings: &Settings, files: &dyn Files) -> Page {
    let analysis = analyze(doc.text);
    let (title, insert) = title_of(doc, &analysis);
    let lang = settings.lang.clone().unwrap_or_else(|| auto_lang([doc.text]).to_owned());
    let cx = Context::new(files, settings, out, None, lang.clone());
    let input = DocInput {
        path: doc.path,
        text: doc.text,
        analysis: &analysis,
        key: None,
        inserted_title: insert.then_some(title.as_str()),
    };
    let (article, warnings) = render_article(&cx, &input);
    let labels = labels(&lang);
    let entries: Vec<(u8, String, String)> = analysis
        .headings
        .iter()
        .filter(|h| (2..=settings.toc_depth).contains(&h.level))
        .map(|h| (h.level, format!("#{}", encode_url(&h.id)), h.text.clone()))
        .collect();
    let toc = settings.toc && entries.len() >= 2;
    let mut html = head(&lang, &title, if toc { "page export with-toc" } else { "page export" });
    if toc {
        html.push_str(&format!(
            "<nav class=\"toc\" aria-label=\"{0}\">\n<p class=\"toc-title\">{0}</p>\n",
            labels.contents
        ));
        html.push_str(&nested_list(&entries));
        html.push_str("</nav>\n");
    }
    html.push_str("<main>\n<article>\n");
    html.push_str(&article);
    html.push_str("</article>\n</main>\n</body>\n</html>\n");
    Page { html, warnings }
}

/// The documents as one navigable page written at `out`, titled `title`.
pub fn build_site(
    docs: &[SiteDoc<'_>],
    title: &str,
    out: &str,
    settings: &Settings,
    files: &dyn Files,
) -> Page {
    let analyses: Vec<Analysis> = docs.iter().map(|d| analyze(d.text)).collect();
    let keys = site_keys(docs);
    let site: BTreeMap<String, SiteEntry> = docs
        .iter()
        .zip(&keys)
        .zip(&analyses)
        .map(|((d, key), a)| (d.path.to_owned(), SiteEntry { key: key.clone(), anchors: a.anchors.clone() }))
        .collect();
    let lang = settings.lang.clone().unwrap_or_else(|| auto_lang(docs.iter().map(|d| d.text)).to_owned());
    let cx = Context::new(files, settings, out, Some(site), lang.clone());
    let labels = labels(&lang);
    let mut articles = String::new();
    let mut nav = String::new();
    let mut warnings = Vec::new();
    for ((doc, key), analysis) in docs.iter().zip(&keys).zip(&analyses) {
        let (doc_title, insert) = title_of(doc, analysis);
        let input = DocInput {
            path: doc.path,
            text: doc.text,
            analysis,
            key: Some(key),
            inserted_title: insert.then_some(doc_title.as_str()),
        };
        let (article, doc_warnings) = render_article(&cx, &input);
        warnings.extend(doc_warnings);
        articles.push_str(&format!("<article id=\"{}\">\n{article}</article>\n", escape_attr(key)));
        let entries: Vec<(u8, String, String)> = analysis
            .headings
            .iter()
            .filter(|h| (2..=settings.toc_depth).contains(&h.level))
            .map(|h| (h.level, format!("#{}", encode_url(&format!("{key}--{}", h.id))), h.text.clone()))
            .collect();
        let mut link = format!("<a href=\"#{}\">", escape_attr(&encode_url(key)));
        escape_text(&doc_title, &mut link);
        link.push_str("</a>");
        if entries.is_empty() {
            nav.push_str(&format!("<li>{link}</li>\n"));
        } else {
            nav.push_str(&format!(
                "<li><details><summary>{link}</summary>\n{}</details></li>\n",
                nested_list(&entries)
            ));
        }
    }
    let mut html = head(&lang, title, "page site");
    html.push_str(&format!("<nav class=\"site-nav\" aria-label=\"{}\">\n", labels.documents));
    html.push_str("<input type=\"checkbox\" id=\"site-nav-toggle\" class=\"nav-toggle\">\n");
    html.push_str("<label for=\"site-nav-toggle\" class=\"nav-title\">");
    escape_text(title, &mut html);
    html.push_str("</label>\n<ol class=\"nav-docs\">\n");
    html.push_str(&nav);
    html.push_str("</ol>\n</nav>\n<main>\n");
    html.push_str(&articles);
    html.push_str("</main>\n</body>\n</html>\n");
    Page { html, warnings }
}

/// Site keys (`docs/reference/catalog-spec.md` §7.3): the catalog ID, else the path without `.md`
/// with `/` as `--`; a key used twice gets `-2`, `-3`.
fn site_keys(docs: &[SiteDoc<'_>]) -> Vec<String> {
    let mut used = std::collections::HashSet::new();
    docs.iter()
        .map(|d| {
            let base = match d.id.filter(|id| !id.trim().is_empty()) {
                Some(id) => id.to_owned(),
                None => {
                    let p = d.path;
                    let stem = if p.to_ascii_lowercase().ends_with(".md") { &p[..p.len() - 3] } else { p };
                    stem.replace('/', "--")
                }
            };
            let mut key = base.clone();
            let mut n = 1;
            while !used.insert(key.clone()) {
                n += 1;
                key = format!("{base}-{n}");
            }
            key
        })
        .collect()
}

/// `<!doctype html>` up to the opening `<body>`.
fn head(lang: &str, title: &str, body_class: &str) -> String {
    let mut html = String::with_capacity(STYLE.len() + 1024);
    html.push_str("<!doctype html>\n");
    html.push_str(&format!("<html lang=\"{}\">\n<head>\n", escape_attr(lang)));
    html.push_str("<meta charset=\"utf-8\">\n");
    html.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    html.push_str(&format!("<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n"));
    html.push_str(&format!(
        "<meta name=\"generator\" content=\"local-vector-search-mcp {}\">\n",
        env!("CARGO_PKG_VERSION")
    ));
    html.push_str("<title>");
    escape_text(title, &mut html);
    html.push_str("</title>\n<style>\n");
    html.push_str(STYLE);
    html.push_str("</style>\n</head>\n");
    html.push_str(&format!("<body class=\"{body_class}\">\n"));
    html
}

/// Nested `<ul>` lists of `(level, href, text)` entries.
fn nested_list(entries: &[(u8, String, String)]) -> String {
    let mut out = String::new();
    let mut stack: Vec<u8> = Vec::new();
    for (level, href, text) in entries {
        match stack.last() {
            None => {
                out.push_str("<ul>\n<li>");
                stack.push(*level);
            }
            Some(top) if level > top => {
                out.push_str("\n<ul>\n<li>");
                stack.push(*level);
            }
            Some(_) => {
                while stack.len() > 1 && stack.last().is_some_and(|top| level < top) {
                    out.push_str("</li>\n</ul>\n");
                    stack.pop();
                }
                out.push_str("</li>\n<li>");
            }
        }
        out.push_str(&format!("<a href=\"{}\">", escape_attr(href)));
        escape_text(text, &mut out);
        out.push_str("</a>");
    }
    for _ in stack {
        out.push_str("</li>\n</ul>\n");
    }
    out
}
