//! Character classes the analyzer splits text by: word characters of space-separated scripts,
//! connectors and marks inside identifiers, kana, kanji and katakana words.

/// Letters and digits of scripts that separate words with spaces (Latin, Greek, Cyrillic, …).
/// CJK, kana, Hangul and the space-less South-East Asian scripts go to lindera instead.
pub(crate) fn is_word_char(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric();
    }
    let u = c as u32;
    u < 0x2E80
        && c.is_alphanumeric()
        && !(0x0E00..=0x0EFF).contains(&u) // Thai, Lao
        && !(0x1000..=0x109F).contains(&u) // Myanmar
        && !(0x1100..=0x11FF).contains(&u) // Hangul Jamo
        && !(0x1780..=0x17FF).contains(&u) // Khmer
}

/// `char::is_alphanumeric` with a fast path for kana and common kanji.
pub(crate) fn is_alnum(c: char) -> bool {
    let u = c as u32;
    (0x3041..=0x3096).contains(&u)
        || (0x30A1..=0x30FA).contains(&u)
        || (0x4E00..=0x9FFF).contains(&u)
        || c.is_alphanumeric()
}

pub(super) fn is_mark(c: char) -> bool {
    !c.is_ascii() && unicode_normalization::char::is_combining_mark(c)
}

pub(super) fn is_connector(c: char) -> bool {
    matches!(c, '_' | '.' | '-' | ':' | '\'' | '/' | '@')
}

/// A katakana word of two characters or more (`コード`, `スニペット`; `ー` counts).
pub(crate) fn is_katakana_word(surface: &str) -> bool {
    surface.chars().nth(1).is_some() && surface.chars().all(|c| matches!(c, '\u{30A1}'..='\u{30FA}' | 'ー'))
}

pub(super) fn is_kanji(c: char) -> bool {
    matches!(c, '\u{4E00}'..='\u{9FFF}' | '\u{3400}'..='\u{4DBF}' | '\u{F900}'..='\u{FAFF}' | '\u{20000}'..='\u{2FFFF}' | '々')
}
