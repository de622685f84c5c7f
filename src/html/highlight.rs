//! Server-side highlighting of fenced code (`docs/reference/catalog-spec.md` §7.9,
//! `html.highlight`): a small lexer per language family that marks comments, strings, numbers and
//! keywords with `<span class="hl-…">`; the inline stylesheet colours them. No script runs in the
//! page. Unknown languages return `None` and stay plain.

use super::text::escape_text;

/// How a language family writes its tokens.
struct Syntax {
    /// Line comment starts.
    line_comments: &'static [&'static str],
    /// Block comment delimiters.
    block_comment: Option<(&'static str, &'static str)>,
    /// String quotes.
    quotes: &'static [char],
    /// Keywords (and literals such as `true`).
    keywords: &'static [&'static str],
}

const RUST: Syntax = Syntax {
    line_comments: &["//"],
    block_comment: Some(("/*", "*/")),
    quotes: &['"'],
    keywords: &[
        "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "false", "fn",
        "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return",
        "self", "Self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where",
        "while",
    ],
};

const C_LIKE: Syntax = Syntax {
    line_comments: &["//"],
    block_comment: Some(("/*", "*/")),
    quotes: &['"', '\'', '`'],
    keywords: &[
        "async",
        "await",
        "break",
        "case",
        "catch",
        "class",
        "const",
        "continue",
        "default",
        "do",
        "else",
        "enum",
        "export",
        "extends",
        "false",
        "final",
        "for",
        "func",
        "function",
        "go",
        "if",
        "import",
        "interface",
        "let",
        "new",
        "null",
        "package",
        "private",
        "protected",
        "public",
        "return",
        "static",
        "struct",
        "switch",
        "this",
        "throw",
        "true",
        "try",
        "type",
        "typeof",
        "var",
        "void",
        "while",
        "yield",
        "int",
        "char",
        "long",
        "double",
        "float",
        "bool",
        "boolean",
        "string",
        "nil",
        "undefined",
    ],
};

const PYTHON: Syntax = Syntax {
    line_comments: &["#"],
    block_comment: None,
    quotes: &['"', '\''],
    keywords: &[
        "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif", "else",
        "except", "False", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "None",
        "nonlocal", "not", "or", "pass", "raise", "return", "True", "try", "while", "with", "yield",
    ],
};

const SHELL: Syntax = Syntax {
    line_comments: &["#"],
    block_comment: None,
    quotes: &['"', '\''],
    keywords: &[
        "case", "do", "done", "elif", "else", "esac", "export", "fi", "for", "function", "if", "in", "local",
        "return", "then", "while",
    ],
};

const DATA: Syntax = Syntax {
    line_comments: &["#"],
    block_comment: None,
    quotes: &['"', '\''],
    keywords: &["true", "false", "null", "yes", "no", "on", "off"],
};

const JSON: Syntax =
    Syntax { line_comments: &[], block_comment: None, quotes: &['"'], keywords: &["true", "false", "null"] };

const SQL: Syntax = Syntax {
    line_comments: &["--"],
    block_comment: Some(("/*", "*/")),
    quotes: &['\''],
    keywords: &[
        "select", "from", "where", "insert", "into", "values", "update", "set", "delete", "create", "table",
        "drop", "join", "left", "right", "inner", "outer", "on", "group", "by", "order", "having", "limit",
        "and", "or", "not", "null", "as", "SELECT", "FROM", "WHERE", "INSERT", "INTO", "VALUES", "UPDATE",
        "SET", "DELETE", "CREATE", "TABLE", "DROP", "JOIN", "LEFT", "RIGHT", "INNER", "OUTER", "ON", "GROUP",
        "BY", "ORDER", "HAVING", "LIMIT", "AND", "OR", "NOT", "NULL", "AS",
    ],
};

fn syntax(lang: &str) -> Option<&'static Syntax> {
    Some(match lang.to_ascii_lowercase().as_str() {
        "rust" | "rs" => &RUST,
        "c" | "h" | "cpp" | "c++" | "cc" | "java" | "js" | "javascript" | "ts" | "typescript" | "jsx"
        | "tsx" | "go" | "golang" | "kotlin" | "kt" | "swift" | "cs" | "csharp" | "c#" | "scala" | "dart" => {
            &C_LIKE
        }
        "python" | "py" => &PYTHON,
        "sh" | "bash" | "shell" | "zsh" | "console" => &SHELL,
        "yaml" | "yml" | "toml" | "ini" => &DATA,
        "json" | "jsonc" => &JSON,
        "sql" => &SQL,
        _ => return None,
    })
}

/// The highlighted, escaped HTML of `code`, or `None` for an unknown language.
pub fn highlight(lang: &str, code: &str) -> Option<String> {
    let syntax = syntax(lang)?;
    let mut out = String::with_capacity(code.len() * 2);
    let chars: Vec<(usize, char)> = code.char_indices().collect();
    let mut i = 0;
    let span = |out: &mut String, class: &str, text: &str| {
        out.push_str(&format!("<span class=\"hl-{class}\">"));
        escape_text(text, out);
        out.push_str("</span>");
    };
    while i < chars.len() {
        let (at, c) = chars[i];
        let rest = &code[at..];
        if let Some(start) = syntax.line_comments.iter().find(|s| rest.starts_with(**s)) {
            // `#` starts a comment only at a word boundary (not `a#b`, not `#[attr]` in shells).
            let boundary = i == 0 || chars[i - 1].1.is_whitespace();
            if *start != "#" || boundary {
                let end = rest.find('\n').unwrap_or(rest.len());
                span(&mut out, "comment", &rest[..end]);
                i = advance(&chars, at + end);
                continue;
            }
        }
        if let Some((open, close)) = syntax.block_comment
            && rest.starts_with(open)
        {
            let end = rest[open.len()..].find(close).map_or(rest.len(), |e| open.len() + e + close.len());
            span(&mut out, "comment", &rest[..end]);
            i = advance(&chars, at + end);
            continue;
        }
        if syntax.quotes.contains(&c) {
            let mut j = i + 1;
            while j < chars.len() && chars[j].1 != c && chars[j].1 != '\n' {
                if chars[j].1 == '\\' {
                    j += 1;
                }
                j += 1;
            }
            let end = if j < chars.len() { chars[j].0 + chars[j].1.len_utf8() } else { code.len() };
            span(&mut out, "string", &code[at..end]);
            i = advance(&chars, end);
            continue;
        }
        if c.is_ascii_digit() && (i == 0 || !is_word(chars[i - 1].1)) {
            let mut j = i;
            while j < chars.len()
                && (chars[j].1.is_ascii_alphanumeric() || chars[j].1 == '.' || chars[j].1 == '_')
            {
                j += 1;
            }
            let end = chars.get(j).map_or(code.len(), |(a, _)| *a);
            span(&mut out, "number", &code[at..end]);
            i = j;
            continue;
        }
        if is_word(c) {
            let mut j = i;
            while j < chars.len() && is_word(chars[j].1) {
                j += 1;
            }
            let end = chars.get(j).map_or(code.len(), |(a, _)| *a);
            let word = &code[at..end];
            if syntax.keywords.contains(&word) {
                span(&mut out, "keyword", word);
            } else {
                escape_text(word, &mut out);
            }
            i = j;
            continue;
        }
        let mut buf = [0u8; 4];
        escape_text(c.encode_utf8(&mut buf), &mut out);
        i += 1;
    }
    Some(out)
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The index of the first char at or after byte `end`.
fn advance(chars: &[(usize, char)], end: usize) -> usize {
    chars.partition_point(|(a, _)| *a < end)
}
