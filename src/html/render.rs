//! One document's Markdown to the HTML of its `<article>` (`docs/reference/catalog-spec.md`
//! §7.1–§7.6, §7.9).
//!
//! Two passes over the publishing stream (`publish`, which also feeds the PDF): [`analyze`]
//! finds the headings (ids by the one slug rule of `links`), the front-matter title and the
//! first H1; [`render_article`] writes the HTML, rewriting links and embedding images through
//! the shared [`Context`].

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use base64::Engine as _;

use super::sanitize::{self, Policy, Token};
use super::text::{Warning, encode_url, escape_attr, escape_text, page_language, relative};
use super::{Files, ImageProblem, Settings, highlight};
use crate::links::{self, Target};
use crate::markdown::scan_links;
use crate::markdown::text_rules::{self, Emphasis};
use crate::publish::{self, Align, Event, Node, Tag};
use crate::text::{Language, LineIndex};

/// A heading of a document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Heading {
    /// 1–6.
    pub level: u8,
    /// Its id inside the document (explicit `{#id}`, else the slug).
    pub id: String,
    /// Its text content.
    pub text: String,
}

/// What the first pass learns about a document.
#[derive(Clone, Debug, Default)]
pub struct Analysis {
    /// Headings in document order.
    pub headings: Vec<Heading>,
    /// Front matter `title`, when a string.
    pub front_title: Option<String>,
    /// Every fragment that leads into the document.
    pub anchors: HashSet<String>,
}

impl Analysis {
    /// The text of the first H1.
    pub fn first_h1(&self) -> Option<&str> {
        self.headings.iter().find(|h| h.level == 1).map(|h| h.text.as_str())
    }
}

/// The first pass.
pub fn analyze(text: &str) -> Analysis {
    let mut raw: Vec<(u8, String, Option<String>)> = Vec::new();
    let mut current: Option<(u8, String, Option<String>)> = None;
    let mut front_title = None;
    for (event, _) in publish::publish(text, Language::En) {
        match event {
            Event::FrontMatter(t) if front_title.is_none() => {
                front_title = yaml_serde::from_str::<serde_json::Value>(&t)
                    .ok()
                    .and_then(|v| v.get("title").and_then(|t| t.as_str()).map(str::to_owned))
                    .filter(|t| !t.trim().is_empty());
            }
            Event::Start(Tag::Heading { level, id, .. }) => current = Some((level, String::new(), id)),
            Event::End(Tag::Heading { .. }) => raw.extend(current.take()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = current.as_mut() {
                    h.1.push_str(&t);
                }
            }
            // What the link scanner (without footnotes) sees as text.
            Event::FootnoteReference { label, .. } => {
                if let Some(h) = current.as_mut() {
                    h.1.push_str(&format!("[^{label}]"));
                }
            }
            _ => {}
        }
    }
    let slugs = links::heading_slugs(raw.iter().map(|(_, t, _)| t.as_str()));
    let mut anchors: HashSet<String> = links::anchors(&scan_links(text)).into_iter().collect();
    let headings: Vec<Heading> = raw
        .into_iter()
        .zip(slugs)
        .map(|((level, text, id), slug)| Heading { level, id: id.unwrap_or(slug), text })
        .collect();
    anchors.extend(headings.iter().map(|h| h.id.clone()));
    Analysis { headings, front_title, anchors }
}

/// A document of a site, as links into it see it.
pub struct SiteEntry {
    /// Its key (`id="{key}"`).
    pub key: String,
    /// Its fragments.
    pub anchors: HashSet<String>,
}

/// What every document of one render shares: the files, the settings, the output path, the
/// site's documents and caches of other files' anchors and of embedded images.
pub struct Context<'a> {
    /// The file access.
    pub files: &'a dyn Files,
    /// The settings.
    pub settings: &'a Settings,
    /// Root-relative path of the HTML file (links are written relative to its folder).
    pub out: &'a str,
    /// A site's documents by path; `None` for a single export.
    pub site: Option<BTreeMap<String, SiteEntry>>,
    /// The page's `lang` (labels follow it).
    pub lang: String,
    anchors: RefCell<HashMap<String, Option<HashSet<String>>>>,
    images: RefCell<HashMap<String, Result<String, ImageProblem>>>,
}

impl<'a> Context<'a> {
    /// A context for writing `out`.
    pub fn new(
        files: &'a dyn Files,
        settings: &'a Settings,
        out: &'a str,
        site: Option<BTreeMap<String, SiteEntry>>,
        lang: String,
    ) -> Self {
        Context { files, settings, out, site, lang, anchors: RefCell::default(), images: RefCell::default() }
    }

    /// Whether the Markdown file `path` has the anchor `fragment` (`None`: it cannot be read).
    fn has_anchor(&self, path: &str, fragment: &str) -> Option<bool> {
        if let Some(entry) = self.site.as_ref().and_then(|s| s.get(path)) {
            return Some(entry.anchors.contains(fragment));
        }
        let mut cache = self.anchors.borrow_mut();
        let set = cache.entry(path.to_owned()).or_insert_with(|| {
            self.files.markdown(path).map(|text| links::anchors(&scan_links(&text)).into_iter().collect())
        });
        set.as_ref().map(|s| s.contains(fragment))
    }

    /// The `data:` URI of the image at `path`.
    fn image(&self, path: &str) -> Result<String, ImageProblem> {
        let mut cache = self.images.borrow_mut();
        cache
            .entry(path.to_owned())
            .or_insert_with(|| {
                self.files.image(path).map(|(mime, bytes)| {
                    format!("data:{mime};base64,{}", base64::engine::general_purpose::STANDARD.encode(bytes))
                })
            })
            .clone()
    }
}

/// One document to render.
pub struct DocInput<'a> {
    /// Root-relative path of the Markdown file.
    pub path: &'a str,
    /// Its text (without BOM).
    pub text: &'a str,
    /// Its first pass.
    pub analysis: &'a Analysis,
    /// A site key (ids become `{key}--{id}`); `None` for a single export.
    pub key: Option<&'a str>,
    /// An H1 to insert at the top (the title came from the index or the front matter and the
    /// document has none).
    pub inserted_title: Option<&'a str>,
}

/// The article's inner HTML and the warnings, in source order.
pub fn render_article(cx: &Context<'_>, doc: &DocInput<'_>) -> (String, Vec<String>) {
    let nodes = publish::publish(doc.text, page_language(&cx.lang));
    let mut r = Renderer {
        cx,
        doc,
        lines: LineIndex::new(doc.text),
        out: String::with_capacity(doc.text.len() * 2),
        warnings: Vec::new(),
        raw_warned: BTreeSet::new(),
        next_heading: 0,
        image: None,
        aligns: Vec::new(),
        cell: 0,
        in_head: false,
        saved: Vec::new(),
        html_tail: String::new(),
        skipping: None,
        links: Vec::new(),
    };
    if let Some(title) = doc.inserted_title {
        r.out.push_str("<h1>");
        escape_text(title, &mut r.out);
        r.out.push_str("</h1>\n");
    }
    for i in 0..nodes.len() {
        r.event(&nodes, i);
    }
    let warnings = r.warnings;
    (r.out, warnings)
}

/// The text of the inline element that starts at `nodes[i]`, up to its end tag.
fn inline_text(nodes: &[Node], i: usize) -> String {
    let mut depth = 0usize;
    let mut text = String::new();
    for (event, _) in &nodes[i..] {
        match event {
            Event::Start(_) => depth += 1,
            Event::End(_) => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    break;
                }
            }
            Event::Text(t) | Event::Code(t) => text.push_str(t),
            _ => {}
        }
    }
    text
}

/// An image being read: its alt text collects until the end tag.
struct ImageState {
    dest: String,
    title: String,
    alt: String,
    offset: usize,
    depth: usize,
}

struct Renderer<'c, 'a> {
    cx: &'c Context<'a>,
    doc: &'c DocInput<'c>,
    lines: LineIndex,
    out: String,
    warnings: Vec<String>,
    raw_warned: BTreeSet<String>,
    next_heading: usize,
    image: Option<ImageState>,
    aligns: Vec<Align>,
    cell: usize,
    in_head: bool,
    /// Outputs set aside while a footnote definition renders.
    saved: Vec<String>,
    html_tail: String,
    skipping: Option<String>,
    /// Whether each open link wrote an `<a>`.
    links: Vec<bool>,
}

impl Renderer<'_, '_> {
    fn warn(&mut self, offset: usize, warning: Warning<'_>) {
        let line = self.lines.line(offset);
        let sentence = warning.sentence(self.cx.settings.language);
        self.warnings.push(format!("{}:{line}: {sentence}", self.doc.path));
    }

    /// An id inside this document as written in the page.
    fn page_id(&self, id: &str) -> String {
        match self.doc.key {
            Some(key) => format!("{key}--{id}"),
            None => id.to_owned(),
        }
    }

    fn event(&mut self, nodes: &[Node], i: usize) {
        let (event, range) = &nodes[i];
        // Inside an image only the alt text counts.
        if let Some(img) = self.image.as_mut() {
            match event {
                Event::Start(Tag::Image { .. }) => img.depth += 1,
                Event::End(Tag::Image { .. }) if img.depth > 0 => img.depth -= 1,
                Event::End(Tag::Image { .. }) => {
                    let img = self.image.take().expect("image");
                    let html = self.image_html(&img.dest, &img.alt, &img.title, img.offset);
                    self.out.push_str(&html);
                }
                Event::Text(t) | Event::Code(t) => img.alt.push_str(t),
                Event::SoftBreak | Event::HardBreak => img.alt.push(' '),
                _ => {}
            }
            return;
        }
        match event {
            Event::Start(tag) => self.start(tag, nodes, i, range.start),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => {
                if self.skipping.is_none() {
                    escape_text(t, &mut self.out);
                }
            }
            Event::Code(t) => {
                self.out.push_str("<code>");
                escape_text(t, &mut self.out);
                self.out.push_str("</code>");
            }
            Event::CodeBlock { lang, text } => self.code_block(lang, text),
            Event::FrontMatter(_) => {}
            Event::Html(t) => self.raw_html(t, range.start, true),
            Event::InlineHtml(t) => self.raw_html(t, range.start, false),
            Event::FootnoteReference { number, nth, .. } => self.footnote_reference(*number, *nth),
            // The soft breaks the text rule keeps (publish::breaks): a line break of the source.
            Event::SoftBreak => self.out.push('\n'),
            Event::HardBreak => self.out.push_str("<br>\n"),
            Event::Rule => self.out.push_str("<hr>\n"),
            Event::TaskMarker(done) => {
                self.out.push_str(if *done {
                    "<input type=\"checkbox\" disabled checked> "
                } else {
                    "<input type=\"checkbox\" disabled> "
                });
            }
        }
    }

    fn start(&mut self, tag: &Tag, nodes: &[Node], i: usize, offset: usize) {
        match tag {
            Tag::Paragraph => self.out.push_str("<p>"),
            Tag::Heading { level, classes, .. } => self.start_heading(*level, classes),
            Tag::Quote => self.out.push_str("<blockquote>\n"),
            Tag::Alert { kind, title } => {
                self.out.push_str(&format!(
                    "<blockquote class=\"alert alert-{}\">\n<p class=\"alert-title\">",
                    kind.name()
                ));
                escape_text(title, &mut self.out);
                self.out.push_str("</p>\n");
            }
            Tag::HtmlBlock => {}
            Tag::List { start: Some(1) } => self.out.push_str("<ol>\n"),
            Tag::List { start: Some(n) } => self.out.push_str(&format!("<ol start=\"{n}\">\n")),
            Tag::List { start: None } => self.out.push_str("<ul>\n"),
            Tag::Item { task } => {
                self.out.push_str(if task.is_some() { "<li class=\"task\">" } else { "<li>" })
            }
            Tag::Footnotes => {
                let labels = super::text::labels(&self.cx.lang);
                self.out.push_str(&format!(
                    "<section class=\"footnotes\" aria-label=\"{}\">\n<ol>\n",
                    labels.footnotes
                ));
            }
            Tag::FootnoteDefinition { .. } => {
                let outer = std::mem::take(&mut self.out);
                self.saved.push(outer);
            }
            Tag::Table { aligns } => {
                self.aligns = aligns.clone();
                self.out.push_str("<div class=\"table-wrap\"><table>\n");
            }
            Tag::TableHead => {
                self.in_head = true;
                self.cell = 0;
                self.out.push_str("<thead>\n<tr>");
            }
            Tag::TableRow => {
                self.cell = 0;
                self.out.push_str("<tr>");
            }
            Tag::TableCell => self.start_cell(),
            Tag::Emphasis => {
                // Japanese pages set every `<em>` upright and heavier (page.css); elsewhere a
                // run holding Japanese gets the same look through its class (the shared rule).
                let japanese_page = super::text::is_japanese(&self.cx.lang);
                let gothic = text_rules::emphasis(japanese_page, &inline_text(nodes, i)) == Emphasis::Gothic;
                self.out.push_str(if gothic && !japanese_page { "<em class=\"ja\">" } else { "<em>" });
            }
            Tag::Strong => self.out.push_str("<strong>"),
            Tag::Strikethrough => self.out.push_str("<del>"),
            Tag::Superscript => self.out.push_str("<sup>"),
            Tag::Subscript => self.out.push_str("<sub>"),
            Tag::Link { dest, title } => self.start_link(dest, title, offset),
            Tag::Image { dest, title } => {
                self.image = Some(ImageState {
                    dest: dest.clone(),
                    title: title.clone(),
                    alt: String::new(),
                    offset,
                    depth: 0,
                });
            }
        }
    }

    /// `<hN id=… class=…>`: the id of the next heading of the analysis, made unique in the page.
    fn start_heading(&mut self, n: u8, classes: &[String]) {
        let id = self.doc.analysis.headings.get(self.next_heading).map(|h| h.id.clone());
        self.next_heading += 1;
        self.out.push_str(&format!("<h{n}"));
        if let Some(id) = id {
            self.out.push_str(&format!(" id=\"{}\"", escape_attr(&self.page_id(&id))));
        }
        if !classes.is_empty() {
            self.out.push_str(&format!(" class=\"{}\"", escape_attr(&classes.join(" "))));
        }
        self.out.push('>');
    }

    /// `<th>`/`<td>` with the column's alignment class.
    fn start_cell(&mut self) {
        let element = if self.in_head { "th" } else { "td" };
        let class = match self.aligns.get(self.cell) {
            Some(Align::Left) => " class=\"left\"",
            Some(Align::Center) => " class=\"center\"",
            Some(Align::Right) => " class=\"right\"",
            _ => "",
        };
        self.out.push_str(&format!("<{element}{class}>"));
    }

    /// `<a href=… title=…>` for a link the page can keep; a dropped link leaves its text only.
    fn start_link(&mut self, dest_url: &str, title: &str, offset: usize) {
        match self.link_href(dest_url, offset) {
            Some(href) => {
                self.out.push_str(&format!("<a href=\"{}\"", escape_attr(&href)));
                if !title.is_empty() {
                    self.out.push_str(&format!(" title=\"{}\"", escape_attr(title)));
                }
                self.out.push('>');
                self.links.push(true);
            }
            None => self.links.push(false),
        }
    }

    fn end(&mut self, tag: &Tag) {
        match tag {
            Tag::Paragraph => {
                self.skipping = None;
                self.out.push_str("</p>\n");
            }
            Tag::Heading { level, .. } => {
                self.skipping = None;
                if let Some(h) = self.doc.analysis.headings.get(self.next_heading.wrapping_sub(1)) {
                    let id = self.page_id(&h.id);
                    self.out.push_str(&format!(
                        "<a class=\"anchor\" href=\"#{}\" aria-hidden=\"true\">#</a>",
                        escape_attr(&encode_url(&id))
                    ));
                }
                self.out.push_str(&format!("</h{level}>\n"));
            }
            Tag::Quote | Tag::Alert { .. } => self.out.push_str("</blockquote>\n"),
            Tag::HtmlBlock => {
                self.skipping = None;
                let tail = std::mem::take(&mut self.html_tail);
                escape_text(&tail, &mut self.out);
            }
            Tag::List { start: Some(_) } => self.out.push_str("</ol>\n"),
            Tag::List { start: None } => self.out.push_str("</ul>\n"),
            Tag::Item { .. } => self.out.push_str("</li>\n"),
            Tag::Footnotes => self.out.push_str("</ol>\n</section>\n"),
            Tag::FootnoteDefinition { number, referenced, .. } => self.end_footnote(*number, *referenced),
            Tag::Table { .. } => self.out.push_str("</tbody>\n</table></div>\n"),
            Tag::TableHead => {
                self.in_head = false;
                self.out.push_str("</tr>\n</thead>\n<tbody>\n");
            }
            Tag::TableRow => self.out.push_str("</tr>\n"),
            Tag::TableCell => {
                self.skipping = None;
                self.out.push_str(if self.in_head { "</th>" } else { "</td>" });
                self.cell += 1;
            }
            Tag::Emphasis => self.out.push_str("</em>"),
            Tag::Strong => self.out.push_str("</strong>"),
            Tag::Strikethrough => self.out.push_str("</del>"),
            Tag::Superscript => self.out.push_str("</sup>"),
            Tag::Subscript => self.out.push_str("</sub>"),
            Tag::Link { .. } => {
                if self.links.pop().unwrap_or(false) {
                    self.out.push_str("</a>");
                }
            }
            Tag::Image { .. } => {}
        }
    }

    fn code_block(&mut self, lang: &str, code: &str) {
        if lang.is_empty() {
            self.out.push_str("<pre><code>");
        } else {
            self.out.push_str(&format!("<pre><code class=\"language-{}\">", escape_attr(lang)));
        }
        match self.cx.settings.highlight.then(|| highlight::highlight(lang, code)).flatten() {
            Some(html) => self.out.push_str(&html),
            None => escape_text(code, &mut self.out),
        }
        self.out.push_str("</code></pre>\n");
    }

    fn footnote_reference(&mut self, number: usize, nth: usize) {
        let ref_id = if nth == 1 {
            self.page_id(&format!("fnref-{number}"))
        } else {
            self.page_id(&format!("fnref-{number}-{nth}"))
        };
        let def_id = self.page_id(&format!("fn-{number}"));
        self.out.push_str(&format!(
            "<sup class=\"footnote-ref\"><a href=\"#{}\" id=\"{}\">{number}</a></sup>",
            escape_attr(&encode_url(&def_id)),
            escape_attr(&ref_id)
        ));
    }

    /// One footnote of the closing section: its body with a link back to the first reference.
    fn end_footnote(&mut self, number: usize, referenced: bool) {
        let outer = self.saved.pop().unwrap_or_default();
        let body = std::mem::replace(&mut self.out, outer);
        let labels = super::text::labels(&self.cx.lang);
        let back = if referenced {
            format!(
                " <a class=\"footnote-back\" href=\"#{}\" aria-label=\"{}\">↩</a>",
                escape_attr(&encode_url(&self.page_id(&format!("fnref-{number}")))),
                labels.back
            )
        } else {
            String::new()
        };
        let id = self.page_id(&format!("fn-{number}"));
        let body = match body.strip_suffix("</p>\n") {
            Some(head) => format!("{head}{back}</p>\n"),
            None => format!("{body}{back}"),
        };
        self.out.push_str(&format!("<li id=\"{}\">{body}</li>\n", escape_attr(&id)));
    }

    /// The `href` of a link written `raw` (`docs/reference/catalog-spec.md` §7.4); `None` drops it.
    fn link_href(&mut self, raw: &str, offset: usize) -> Option<String> {
        let raw = raw.trim();
        if sanitize::is_dangerous_url(raw) {
            let scheme = raw.split(':').next().unwrap_or("").trim().to_ascii_lowercase();
            self.raw_removed(offset, &format!("{scheme}:"));
            return None;
        }
        if raw.is_empty() {
            return Some(String::new());
        }
        let written_path = raw.split('#').next().unwrap_or("");
        match links::resolve(self.doc.path, raw) {
            Target::External(url) => Some(encode_url(&url)),
            Target::Invalid { .. } => {
                self.warn(offset, Warning::MissingFile(written_path));
                Some(encode_url(raw))
            }
            Target::Local { path, fragment } => {
                let fragment = fragment.filter(|f| !f.is_empty());
                let path = self.md_sibling(path);
                if path == self.doc.path {
                    if let Some(f) = &fragment
                        && !self.doc.analysis.anchors.contains(f)
                    {
                        self.warn(offset, Warning::MissingAnchor(raw));
                    }
                    return Some(match (self.doc.key, &fragment) {
                        (Some(key), Some(f)) => format!("#{}", encode_url(&format!("{key}--{f}"))),
                        (Some(key), None) => format!("#{}", encode_url(key)),
                        (None, Some(f)) => format!("#{}", encode_url(f)),
                        (None, None) => "#".to_owned(),
                    });
                }
                let frag_suffix =
                    fragment.as_ref().map(|f| format!("#{}", encode_url(f))).unwrap_or_default();
                let in_site = self.cx.site.as_ref().is_some_and(|s| s.contains_key(&path));
                let kind = if in_site { super::FileKind::File } else { self.cx.files.kind(&path) };
                match kind {
                    super::FileKind::Missing => {
                        self.warn(offset, Warning::MissingFile(written_path));
                        Some(encode_url(raw))
                    }
                    super::FileKind::Dir => Some(encode_url(&relative(self.cx.out, &path)) + &frag_suffix),
                    super::FileKind::File if path.to_ascii_lowercase().ends_with(".md") => {
                        if let Some(f) = &fragment
                            && self.cx.has_anchor(&path, f) == Some(false)
                        {
                            self.warn(offset, Warning::MissingAnchor(raw));
                        }
                        if let Some(site) = &self.cx.site {
                            if let Some(entry) = site.get(&path) {
                                let id = match &fragment {
                                    Some(f) => format!("{}--{f}", entry.key),
                                    None => entry.key.clone(),
                                };
                                return Some(format!("#{}", encode_url(&id)));
                            }
                            self.warn(offset, Warning::OutsideBuild(written_path));
                            return Some(encode_url(&relative(self.cx.out, &path)) + &frag_suffix);
                        }
                        let html = format!("{}.html", &path[..path.len() - 3]);
                        Some(encode_url(&relative(self.cx.out, &html)) + &frag_suffix)
                    }
                    super::FileKind::File => Some(encode_url(&relative(self.cx.out, &path)) + &frag_suffix),
                }
            }
        }
    }

    /// mdBook links `x.html` meaning `x.md`: when `x.html` is neither a file nor a document of
    /// the site and `x.md` is, the link is to `x.md` (as `kb_links` reads it).
    fn md_sibling(&self, path: String) -> String {
        let lower = path.to_ascii_lowercase();
        let stem = if lower.ends_with(".html") {
            &path[..path.len() - 5]
        } else if lower.ends_with(".htm") {
            &path[..path.len() - 4]
        } else {
            return path;
        };
        let md = format!("{stem}.md");
        let in_site = |p: &str| self.cx.site.as_ref().is_some_and(|s| s.contains_key(p));
        if in_site(&path) || self.cx.files.kind(&path) != super::FileKind::Missing {
            return path;
        }
        if md == self.doc.path || in_site(&md) || self.cx.files.kind(&md) == super::FileKind::File {
            md
        } else {
            path
        }
    }

    /// An image (`docs/reference/catalog-spec.md` §7.5): a `data:` URI, a link for a remote image,
    /// or a placeholder.
    fn image_html(&mut self, raw: &str, alt: &str, title: &str, offset: usize) -> String {
        let raw = raw.trim();
        let title_attr =
            if title.is_empty() { String::new() } else { format!(" title=\"{}\"", escape_attr(title)) };
        let lower = raw.to_ascii_lowercase();
        if lower.starts_with("data:image/") {
            return format!("<img src=\"{}\" alt=\"{}\"{title_attr}>", escape_attr(raw), escape_attr(alt));
        }
        let placeholder = |alt: &str| {
            let mut html = format!("<span class=\"missing-image\" title=\"{}\">", escape_attr(raw));
            escape_text(if alt.is_empty() { raw } else { alt }, &mut html);
            html.push_str("</span>");
            html
        };
        let target =
            if sanitize::is_dangerous_url(raw) { None } else { Some(links::resolve(self.doc.path, raw)) };
        match target {
            Some(Target::External(url)) => {
                self.warn(offset, Warning::RemoteImage(raw));
                let mut html =
                    format!("<a class=\"remote-image\" href=\"{}\">", escape_attr(&encode_url(&url)));
                escape_text(if alt.is_empty() { raw } else { alt }, &mut html);
                html.push_str("</a>");
                html
            }
            Some(Target::Local { path, .. }) => match self.cx.image(&path) {
                Ok(data) => format!("<img src=\"{data}\" alt=\"{}\"{title_attr}>", escape_attr(alt)),
                Err(problem) => {
                    self.warn(offset, Warning::Image(raw, problem));
                    placeholder(alt)
                }
            },
            Some(Target::Invalid { .. }) | None => {
                self.warn(offset, Warning::Image(raw, ImageProblem::Outside));
                placeholder(alt)
            }
        }
    }

    fn raw_removed(&mut self, offset: usize, what: &str) {
        if self.raw_warned.insert(what.to_owned()) {
            self.warn(offset, Warning::RawHtml(what));
        }
    }

    /// A piece of raw HTML through the allow-list (`docs/reference/catalog-spec.md` §7.6).
    fn raw_html(&mut self, piece: &str, offset: usize, block: bool) {
        let mut input = std::mem::take(&mut self.html_tail);
        input.push_str(piece);
        let (tokens, tail) = sanitize::tokenize(&input);
        let tokens: Vec<Token<'_>> = tokens;
        let tail = tail.to_owned();
        for token in tokens {
            match token {
                Token::Text(t) => {
                    if self.skipping.is_none() {
                        self.out.push_str(&t.replace('<', "&lt;"));
                    }
                }
                Token::Hidden => {}
                Token::Start { name, attrs, self_closing } => {
                    if self.skipping.is_some() {
                        continue;
                    }
                    match sanitize::policy(&name) {
                        Policy::DropAll => {
                            self.raw_removed(offset, &format!("<{name}>"));
                            if !self_closing {
                                self.skipping = Some(name);
                            }
                        }
                        Policy::DropTag => self.raw_removed(offset, &format!("<{name}>")),
                        Policy::Keep if name == "img" => self.raw_img(&attrs, offset),
                        Policy::Keep => {
                            let mut html = format!("<{name}");
                            for (attr, value) in &attrs {
                                match sanitize::keep_attribute(attr) {
                                    Err(()) => self.raw_removed(offset, attr),
                                    Ok(false) => {}
                                    Ok(true) if attr == "src" => {}
                                    Ok(true) => {
                                        let value = value.clone().unwrap_or_default();
                                        let value = match attr.as_str() {
                                            "href" => match self.link_href(&value, offset) {
                                                Some(v) => v,
                                                None => continue,
                                            },
                                            "id" | "name" => self.page_id(&value),
                                            _ => value,
                                        };
                                        html.push_str(&format!(" {attr}=\"{}\"", escape_attr(&value)));
                                    }
                                }
                            }
                            html.push('>');
                            self.out.push_str(&html);
                        }
                    }
                }
                Token::End(name) => {
                    if let Some(skip) = &self.skipping {
                        if *skip == name {
                            self.skipping = None;
                        }
                        continue;
                    }
                    if sanitize::policy(&name) == Policy::Keep && !sanitize::VOID.contains(&name.as_str()) {
                        self.out.push_str(&format!("</{name}>"));
                    }
                }
            }
        }
        if block {
            self.html_tail = tail;
        } else {
            escape_text(&tail, &mut self.out);
        }
    }

    /// `<img>` in raw HTML: its `src` embedded like a Markdown image; `width`, `height`,
    /// `class` and `title` kept.
    fn raw_img(&mut self, attrs: &[(String, Option<String>)], offset: usize) {
        let get = |name: &str| attrs.iter().find(|(a, _)| a == name).and_then(|(_, v)| v.clone());
        for (attr, _) in attrs {
            if sanitize::keep_attribute(attr).is_err() {
                self.raw_removed(offset, attr);
            }
        }
        let src = get("src").unwrap_or_default();
        let alt = get("alt").unwrap_or_default();
        let html = self.image_html(&src, &alt, &get("title").unwrap_or_default(), offset);
        match html.strip_prefix("<img ") {
            Some(rest) => {
                let mut extra = String::new();
                for name in ["width", "height", "class"] {
                    if let Some(v) = get(name) {
                        extra.push_str(&format!("{name}=\"{}\" ", escape_attr(&v)));
                    }
                }
                self.out.push_str(&format!("<img {extra}{rest}"));
            }
            None => self.out.push_str(&html),
        }
    }
}
