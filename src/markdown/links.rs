//! The raw links, headings and explicit anchors of a Markdown source, for the link graph.
//!
//! This is the pulldown-cmark half of link extraction: what is written where. Resolving a
//! destination to a file and a heading fragment is the `links` module's job.
//!
//! Invariants:
//!
//! - Links count when pulldown-cmark sees them as links: inline `[t](d)`, reference-style
//!   `[t][label]` / `[t][]` / `[t]` (through their definitions), autolinks `<https://…>` /
//!   `<a@b.c>` and images `![a](d)`. Links in code, raw HTML (`<a href>`) and bare URLs in text
//!   are not links. Definitions no link uses are reported once each (kind `Definition`).
//! - Offsets are byte offsets into the source; nothing here fails.

use super::syntax::{Event, HeadingLevel, LinkType, Purpose, Source, Tag, TagEnd};

/// How a link is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RawLinkKind {
    /// `[text](dest)`.
    Inline,
    /// `[text][label]`, `[text][]`, `[text]` with a definition `[label]: dest`.
    Reference,
    /// `<https://…>` or `<name@example.com>`.
    Autolink,
    /// `![alt](dest)` (inline or reference-style).
    Image,
    /// A definition `[label]: dest` that no link of the document uses.
    Definition,
}

impl RawLinkKind {
    /// The wire name (`inline`, `reference`, `autolink`, `image`, `definition`).
    pub fn as_str(self) -> &'static str {
        match self {
            RawLinkKind::Inline => "inline",
            RawLinkKind::Reference => "reference",
            RawLinkKind::Autolink => "autolink",
            RawLinkKind::Image => "image",
            RawLinkKind::Definition => "definition",
        }
    }
}

/// One link as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawLink {
    /// How it is written.
    pub kind: RawLinkKind,
    /// The destination as CommonMark reads it (entities and backslash escapes resolved, no
    /// percent-decoding); `mailto:` is added to e-mail autolinks.
    pub dest: String,
    /// Byte offset of the link (for a definition: of the definition).
    pub offset: usize,
    /// Byte offset of the text that holds the destination: the link itself, or the
    /// definition a reference-style link uses.
    pub dest_offset: usize,
}

/// A heading anywhere in the document (also inside lists and quotes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScannedHeading {
    /// Level 1–6.
    pub level: u8,
    /// The text content: inline markup and HTML tags removed, code spans' text kept.
    pub text: String,
    /// An explicit `{#id}` attribute.
    pub id: Option<String>,
}

/// What [`scan_links`] finds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkScan {
    /// Links in source order (unused definitions last, in source order).
    pub links: Vec<RawLink>,
    /// Headings in source order.
    pub headings: Vec<ScannedHeading>,
    /// `id="…"` and `name="…"` values of raw HTML (`<a name="x"></a>` anchors).
    pub html_ids: Vec<String>,
}

/// Scans `text` (without BOM) for links, headings and HTML anchors.
pub fn scan_links(text: &str) -> LinkScan {
    let mut scan = LinkScan::default();
    let mut used_labels: Vec<String> = Vec::new();
    let mut heading: Option<ScannedHeading> = None;
    // A lone CR ends a line (a CR-only file must not read as one heading): `Source` reads the
    // same-offset LF view.
    let source = Source::new(text, Purpose::Links);
    let mut iter = source.events();
    let mut defs: Vec<(String, String, usize)> =
        iter.reference_definitions().into_iter().map(|d| (d.label, d.dest, d.span.start)).collect();
    for (event, range) in iter.by_ref() {
        match event {
            Event::Start(Tag::Heading { level, id, .. }) => {
                heading = Some(ScannedHeading {
                    level: heading_level(level),
                    text: String::new(),
                    id: id.map(|s| s.to_string()),
                });
            }
            Event::End(TagEnd::Heading(_)) => scan.headings.extend(heading.take()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.text.push_str(&t);
                }
            }
            Event::Html(t) | Event::InlineHtml(t) => html_ids(&t, &mut scan.html_ids),
            Event::Start(Tag::Link { link_type, dest_url, id, .. })
            | Event::Start(Tag::Image { link_type, dest_url, id, .. }) => {
                let image = text[range.start..].starts_with('!');
                let (kind, reference) = match link_type {
                    _ if image => (RawLinkKind::Image, is_reference(link_type)),
                    LinkType::Autolink | LinkType::Email => (RawLinkKind::Autolink, false),
                    t if is_reference(t) => (RawLinkKind::Reference, true),
                    _ => (RawLinkKind::Inline, false),
                };
                let mut dest_offset = range.start;
                if reference {
                    let label = id.to_lowercase();
                    if let Some((_, _, at)) = defs.iter().find(|(l, _, _)| *l == label) {
                        dest_offset = *at;
                    }
                    used_labels.push(label);
                }
                let dest = if link_type == LinkType::Email && !dest_url.starts_with("mailto:") {
                    format!("mailto:{dest_url}")
                } else {
                    dest_url.to_string()
                };
                scan.links.push(RawLink { kind, dest, offset: range.start, dest_offset });
            }
            _ => {}
        }
    }
    defs.sort_by_key(|(_, _, at)| *at);
    for (label, dest, at) in defs {
        if !used_labels.contains(&label) {
            scan.links.push(RawLink { kind: RawLinkKind::Definition, dest, offset: at, dest_offset: at });
        }
    }
    scan
}

fn is_reference(t: LinkType) -> bool {
    matches!(t, LinkType::Reference | LinkType::Collapsed | LinkType::Shortcut)
}

/// A heading's level as a number (1–6).
pub fn heading_level(level: HeadingLevel) -> u8 {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

/// Collects `id="…"` / `name="…"` attribute values (double or single quotes) of raw HTML.
fn html_ids(html: &str, out: &mut Vec<String>) {
    let lower = html.to_ascii_lowercase();
    for attr in ["id=", "name="] {
        let mut from = 0;
        while let Some(i) = lower[from..].find(attr) {
            let at = from + i;
            from = at + attr.len();
            // An attribute starts after whitespace (`data-id=` is not `id=`).
            if at == 0 || !lower.as_bytes()[at - 1].is_ascii_whitespace() {
                continue;
            }
            let rest = &html[from..];
            let Some(quote) = rest.chars().next().filter(|c| *c == '"' || *c == '\'') else { continue };
            if let Some(end) = rest[1..].find(quote) {
                let value = &rest[1..1 + end];
                if !value.is_empty() {
                    out.push(value.to_owned());
                }
            }
        }
    }
}

/// The prose of `text` for word mentions (`docs/reference/catalog-spec.md` §5.2): the text of
/// paragraphs, headings, lists, tables and quotes, with front matter, fenced and indented code,
/// inline code, link destinations, HTML comments and raw HTML tags left out. Blocks are separated
/// by `\n`.
pub fn prose_text(text: &str) -> String {
    let mut out = String::new();
    let mut skip = 0usize;
    let source = Source::new(text, Purpose::Links);
    for (event, _) in source.events() {
        match event {
            Event::Start(Tag::CodeBlock(_) | Tag::MetadataBlock(_)) => skip += 1,
            Event::End(TagEnd::CodeBlock | TagEnd::MetadataBlock(_)) => skip = skip.saturating_sub(1),
            Event::Text(t) if skip == 0 => out.push_str(&t),
            Event::SoftBreak
            | Event::HardBreak
            | Event::End(TagEnd::Paragraph | TagEnd::Heading(_) | TagEnd::TableCell | TagEnd::Item) => {
                out.push('\n')
            }
            _ => {}
        }
    }
    out
}
