//! Escaping, URL encoding, relative paths and the warning sentences (`catalog.md` §7.12, §9.6).

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

/// `catalog.md` §7.3: in `href` values non-ASCII characters stay as they are; only characters a
/// URL cannot hold (space, `"`, `<`, `>`, `` ` ``, `{`, `}`, `|`, `\`, `^`, controls and a `%`
/// not followed by two hex digits) are percent-encoded.
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
    /// The sentence in `lang`.
    pub fn sentence(&self, lang: Language) -> String {
        use super::ImageProblem as P;
        match (lang, self) {
            (Language::En, Warning::MissingFile(t)) => {
                format!("link target `{t}` does not exist; fix the link or restore the file")
            }
            (Language::Ja, Warning::MissingFile(t)) => {
                format!("リンク先 `{t}` がありません。リンクを直すか、ファイルを戻してください")
            }
            (Language::En, Warning::MissingAnchor(l)) => {
                format!("link `{l}` points to a heading that does not exist; fix the anchor or the heading")
            }
            (Language::Ja, Warning::MissingAnchor(l)) => {
                format!("リンク `{l}` の見出しがありません。アンカーか見出しを直してください")
            }
            (Language::En, Warning::OutsideBuild(t)) => format!(
                "link target `{t}` is not part of the build; add it to build.include or link elsewhere"
            ),
            (Language::Ja, Warning::OutsideBuild(t)) => format!(
                "リンク先 `{t}` はまとめる文書に入っていません。build.include に足すか、リンクを変えてください"
            ),
            (Language::En, Warning::Image(src, p)) => {
                let reason = match p {
                    P::Missing => "the file does not exist",
                    P::Outside => "the path is outside the project or not allowed",
                    P::Unsupported => "not a PNG, JPEG, WebP, GIF, SVG or AVIF file",
                    P::TooLarge => "larger than 25 MiB",
                    P::Unreadable => "the file could not be read",
                };
                format!("image `{src}` was not embedded ({reason}); fix the path or the file")
            }
            (Language::Ja, Warning::Image(src, p)) => {
                let reason = match p {
                    P::Missing => "ファイルがありません",
                    P::Outside => "プロジェクトの外か、使えないパスです",
                    P::Unsupported => "PNG・JPEG・WebP・GIF・SVG・AVIF のどれでもありません",
                    P::TooLarge => "25 MiB を超えています",
                    P::Unreadable => "ファイルを読めません",
                };
                format!("画像 `{src}` を埋め込めませんでした（{reason}）。パスかファイルを直してください")
            }
            (Language::En, Warning::RemoteImage(src)) => format!(
                "remote image `{src}` was not fetched and is shown as a link; save it into the project to embed it"
            ),
            (Language::Ja, Warning::RemoteImage(src)) => format!(
                "外の画像 `{src}` は取りに行かず、リンクにしました。埋め込むにはプロジェクトに保存してください"
            ),
            (Language::En, Warning::RawHtml(tag)) => format!(
                "raw HTML `{tag}` was removed; exported HTML does not run scripts or load external resources"
            ),
            (Language::Ja, Warning::RawHtml(tag)) => {
                format!("HTML の `{tag}` を外しました。書き出す HTML はスクリプトも外の資源も使いません")
            }
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
    if is_japanese(page_lang) {
        Labels { contents: "目次", documents: "文書", footnotes: "脚注", back: "本文に戻る" }
    } else {
        Labels {
            contents: "Contents",
            documents: "Documents",
            footnotes: "Footnotes",
            back: "Back to the text",
        }
    }
}
