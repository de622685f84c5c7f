//! Raw HTML in Markdown (`docs/reference/catalog-spec.md` §7.6): a small tokenizer and the
//! allow-list.
//!
//! Raw HTML reaches the renderer in pieces (a block line by line, inline HTML tag by tag); the
//! tokenizer returns the complete tokens of a piece and the unfinished tail, which the renderer
//! prepends to the next piece. What to keep is decided here; rewriting `href`/`src` is the
//! renderer's job.

/// One piece of raw HTML.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Token<'a> {
    /// Text between tags (already HTML: entities stay as written).
    Text(&'a str),
    /// `<name attr="v" …>` with the name lowercased and attribute values entity-decoded.
    Start {
        /// Lowercased element name.
        name: String,
        /// Lowercased attribute names and decoded values.
        attrs: Vec<(String, Option<String>)>,
        /// Written `<…/>`.
        self_closing: bool,
    },
    /// `</name>`.
    End(String),
    /// A comment, doctype or processing instruction (never shown).
    Hidden,
}

/// What happens to an element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Kept, with safe attributes.
    Keep,
    /// The tags go, the content stays (a warning).
    DropTag,
    /// The tags and everything up to the end tag go (a warning).
    DropAll,
}

/// Elements kept (with [`keep_attribute`]'s attributes).
const KEPT: &[&str] = &[
    "a",
    "abbr",
    "b",
    "bdi",
    "bdo",
    "blockquote",
    "br",
    "caption",
    "center",
    "cite",
    "code",
    "col",
    "colgroup",
    "dd",
    "del",
    "details",
    "dfn",
    "div",
    "dl",
    "dt",
    "em",
    "figcaption",
    "figure",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "i",
    "img",
    "ins",
    "kbd",
    "li",
    "mark",
    "ol",
    "p",
    "pre",
    "q",
    "rp",
    "rt",
    "ruby",
    "s",
    "samp",
    "small",
    "span",
    "strike",
    "strong",
    "sub",
    "summary",
    "sup",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "time",
    "tr",
    "tt",
    "u",
    "ul",
    "var",
    "wbr",
];

/// Elements removed with their content.
const DROPPED_WITH_CONTENT: &[&str] = &[
    "script", "style", "iframe", "object", "template", "noscript", "title", "textarea", "select", "svg",
    "math",
];

/// Elements that never have an end tag.
pub const VOID: &[&str] = &["br", "col", "hr", "img", "wbr"];

/// The policy for element `name` (lowercase).
pub fn policy(name: &str) -> Policy {
    if KEPT.contains(&name) {
        Policy::Keep
    } else if DROPPED_WITH_CONTENT.contains(&name) {
        Policy::DropAll
    } else {
        Policy::DropTag
    }
}

/// Whether attribute `attr` (lowercase) of a kept element stays; `href` and `src` stay only
/// after the renderer rewrote them. `Err` names a removal worth a warning (event handlers,
/// `style`).
pub fn keep_attribute(attr: &str) -> Result<bool, ()> {
    if attr.starts_with("on") || attr == "style" || attr == "srcset" || attr == "formaction" {
        return Err(());
    }
    Ok(matches!(
        attr,
        "id" | "class"
            | "title"
            | "lang"
            | "dir"
            | "colspan"
            | "rowspan"
            | "align"
            | "alt"
            | "width"
            | "height"
            | "href"
            | "src"
            | "name"
            | "open"
            | "start"
            | "reversed"
            | "datetime"
            | "role"
    ) || attr.starts_with("aria-"))
}

/// Splits `s` into tokens; the second value is an unfinished tag or comment at the end.
pub fn tokenize(s: &str) -> (Vec<Token<'_>>, &str) {
    let mut tokens = Vec::new();
    let bytes = s.as_bytes();
    let mut text_start = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'<' {
            i += 1;
            continue;
        }
        match tag_at(s, i) {
            Scan::NotATag => {
                i += 1;
            }
            Scan::Unfinished => {
                if text_start < i {
                    tokens.push(Token::Text(&s[text_start..i]));
                }
                return (tokens, &s[i..]);
            }
            Scan::Tag(token, end) => {
                if text_start < i {
                    tokens.push(Token::Text(&s[text_start..i]));
                }
                tokens.push(token);
                i = end;
                text_start = end;
            }
        }
    }
    if text_start < s.len() {
        tokens.push(Token::Text(&s[text_start..]));
    }
    (tokens, "")
}

enum Scan<'a> {
    NotATag,
    Unfinished,
    Tag(Token<'a>, usize),
}

/// Reads the tag starting at `s[at] == '<'`.
fn tag_at(s: &str, at: usize) -> Scan<'static> {
    let rest = &s[at..];
    let b = rest.as_bytes();
    if let Some(comment) = rest.strip_prefix("<!--") {
        return match comment.find("-->") {
            Some(end) => Scan::Tag(Token::Hidden, at + 4 + end + 3),
            None => Scan::Unfinished,
        };
    }
    if b.len() < 2 {
        return Scan::Unfinished;
    }
    if b[1] == b'!' || b[1] == b'?' {
        return match rest.find('>') {
            Some(end) => Scan::Tag(Token::Hidden, at + end + 1),
            None => Scan::Unfinished,
        };
    }
    let closing = b[1] == b'/';
    let name_start = if closing { 2 } else { 1 };
    if !b.get(name_start).is_some_and(u8::is_ascii_alphabetic) {
        return if b.len() <= name_start { Scan::Unfinished } else { Scan::NotATag };
    }
    let mut i = name_start;
    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'-' || b[i] == b':') {
        i += 1;
    }
    let name = rest[name_start..i].to_ascii_lowercase();
    if closing {
        return match rest[i..].find('>') {
            Some(end) => Scan::Tag(Token::End(name), at + i + end + 1),
            None => Scan::Unfinished,
        };
    }
    let mut attrs = Vec::new();
    loop {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= b.len() {
            return Scan::Unfinished;
        }
        if b[i] == b'>' {
            return Scan::Tag(Token::Start { name, attrs, self_closing: false }, at + i + 1);
        }
        if b[i] == b'/' {
            if b.get(i + 1) == Some(&b'>') {
                return Scan::Tag(Token::Start { name, attrs, self_closing: true }, at + i + 2);
            }
            i += 1;
            continue;
        }
        let attr_start = i;
        while i < b.len() && !b[i].is_ascii_whitespace() && !matches!(b[i], b'=' | b'>' | b'/') {
            i += 1;
        }
        let attr = rest[attr_start..i].to_ascii_lowercase();
        let mut j = i;
        while j < b.len() && b[j].is_ascii_whitespace() {
            j += 1;
        }
        if j < b.len() && b[j] == b'=' {
            let Some((value, next)) = attribute_value(rest, j + 1) else { return Scan::Unfinished };
            i = next;
            attrs.push((attr, Some(decode_entities(value))));
        } else if !attr.is_empty() {
            attrs.push((attr, None));
        } else {
            i += 1;
        }
    }
}

/// The attribute value from `rest[j..]` (after its `=`; leading blanks skipped, quoted or bare)
/// and the index after it; `None` when the input ends first.
fn attribute_value(rest: &str, mut j: usize) -> Option<(&str, usize)> {
    let b = rest.as_bytes();
    while j < b.len() && b[j].is_ascii_whitespace() {
        j += 1;
    }
    if j >= b.len() {
        return None;
    }
    if b[j] == b'"' || b[j] == b'\'' {
        let quote = b[j] as char;
        let end = rest[j + 1..].find(quote)?;
        return Some((&rest[j + 1..j + 1 + end], j + 1 + end + 1));
    }
    let start = j;
    while j < b.len() && !b[j].is_ascii_whitespace() && b[j] != b'>' {
        j += 1;
    }
    Some((&rest[start..j], j))
}

/// Decodes the character references an attribute value commonly holds.
pub fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let Some(semi) = rest.char_indices().take(12).find(|(_, c)| *c == ';').map(|(i, _)| i) else {
            out.push('&');
            rest = &rest[1..];
            continue;
        };
        let entity = &rest[1..semi];
        let decoded = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            "nbsp" => Some('\u{a0}'),
            e if e.starts_with("#x") || e.starts_with("#X") => {
                u32::from_str_radix(&e[2..], 16).ok().and_then(char::from_u32)
            }
            e if e.starts_with('#') => e[1..].parse::<u32>().ok().and_then(char::from_u32),
            _ => None,
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &rest[semi + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Whether a URL would run code or smuggle content (`javascript:`, `vbscript:`, `data:` in a
/// link), ignoring case, whitespace and control characters as browsers do.
pub fn is_dangerous_url(url: &str) -> bool {
    let cleaned: String = url
        .chars()
        .filter(|c| !c.is_whitespace() && !c.is_control())
        .collect::<String>()
        .to_ascii_lowercase();
    cleaned.starts_with("javascript:") || cleaned.starts_with("vbscript:") || cleaned.starts_with("data:")
}
