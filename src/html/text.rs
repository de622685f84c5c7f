//! Escaping, URL encoding, relative paths and the warning sentences
//! (`docs/reference/catalog-spec.md` §7.12, §9.6).

use crate::messages::{Msg, msg};
pub use crate::text::Language;

/// Text content: `&`, `<`, `>` escaped.
pub fn escape_text(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
}

/// An attribute value inside double quotes.
pub fn escape_attr(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// `docs/reference/catalog-spec.md` §7.3: in `href` values non-ASCII characters stay as they are;
/// only characters a URL cannot hold (space, `"`, `<`, `>`, ``
/// ` ``, `{`, `}`, `|`, `\`, `^`, controls and a `%` not followed by two hex digits) are
/// percent-encoded.
pub fn encode_url(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    for (i, c) in s.char_indices() {
        let bad = match c {
            ' ' | '"' | '<' | '>' | '`' | '{' | '}' | '|' | '\\' | '^' => true,
            '%' => !(is_hex(bytes.get(i + 1)) && is_hex(bytes.get(i + 2))),
            c => c.is_control(),
        };
        if bad {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn is_hex(b: Option<&u8>) -> bool {
    b.is_some_and(u8::is_ascii_hexdigit)
}

/// The path of root-relative `to` as seen from the folder of root-relative `from_file`.
pub fn relative(from_file: &str, to: &str) -> String {
    let mut from: Vec<&str> = from_file.split('/').collect();
    from.pop();
    let target: Vec<&str> = to.split('/').collect();
    let common = from.iter().zip(&target).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<&str> = vec![".."; from.len() - common];
    parts.extend(&target[common..]);
    parts.join("/")
}

/// What a warning is about.
pub enum Warning<'a> {
    /// A link to a local file that does not exist (`target` as written).
    MissingFile(&'a str),
    /// A link whose fragment names no heading (`link` as written).
    MissingAnchor(&'a str),
    /// A site link to Markdown outside the build.
    OutsideBuild(&'a str),
    /// A local image that was not embedded, with the reason.
    Image(&'a str, super::ImageProblem),
    /// A remote image shown as a link.
    RemoteImage(&'a str),
    /// Raw HTML that was removed (`<script>`, `onclick`, `javascript:` …).
    RawHtml(&'a str),
}

impl Warning<'_> {
    /// The sentence in `lang`, from the message catalogue (`src/messages.rs`).
    pub fn sentence(&self, lang: Language) -> String {
        use super::ImageProblem as P;
        match self {
            Warning::MissingFile(target) => msg!(lang, LinkMissingFile, target),
            Warning::MissingAnchor(link) => msg!(lang, LinkMissingAnchor, link),
            Warning::OutsideBuild(target) => msg!(lang, LinkOutsideBuild, target),
            Warning::Image(src, p) => {
                let reason = match p {
                    P::Missing => Msg::ImageMissing,
                    P::Outside => Msg::ImageOutside,
                    P::Unsupported => Msg::ImageUnsupported,
                    P::TooLarge => Msg::ImageTooLarge,
                    P::Unreadable => Msg::ImageUnreadable,
                }
                .text(lang);
                msg!(lang, ImageNotEmbedded, src, reason)
            }
            Warning::RemoteImage(src) => msg!(lang, RemoteImageLinked, src),
            Warning::RawHtml(tag) => msg!(lang, RawHtmlRemoved, tag),
        }
    }
}

/// Labels of the page.
pub struct Labels {
    /// `aria-label` of the table of contents.
    pub contents: &'static str,
    /// `aria-label` of the site navigation.
    pub documents: &'static str,
    /// The title of the footnote section.
    pub footnotes: &'static str,
    /// `aria-label` of a footnote back-link.
    pub back: &'static str,
}

/// Whether a page language tag is Japanese (`ja`, `ja-JP` …).
pub fn is_japanese(page_lang: &str) -> bool {
    let lower = page_lang.to_ascii_lowercase();
    lower == "ja" || lower.starts_with("ja-")
}

/// Labels in the page language (`ja` or anything else).
pub fn labels(page_lang: &str) -> Labels {
    let lang = page_language(page_lang);
    Labels {
        contents: Msg::LabelContents.template(lang),
        documents: Msg::LabelDocuments.template(lang),
        footnotes: Msg::LabelFootnotes.template(lang),
        back: Msg::LabelBack.template(lang),
    }
}

/// The language of a page's labels: Japanese for a Japanese page tag, else English.
pub fn page_language(page_lang: &str) -> Language {
    if is_japanese(page_lang) { Language::Ja } else { Language::En }
}
