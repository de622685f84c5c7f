//! Text rules every renderer of Markdown shares (`docs/design/markdown-model.md`, "Text rules"):
//! which characters are CJK, what a soft line break becomes, how emphasis looks in Japanese text.
//!
//! The HTML export and the PDF export both apply these functions, so one document reads the same
//! in both: the same characters in the same runs, the same kind of emphasis.

/// Whether `c` is a CJK character for line breaking: kana, kanji, Hangul, CJK punctuation and
/// full-width forms. A line may break before or after any of them.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x11FF | 0x2E80..=0x2FDF | 0x2FF0..=0x303F | 0x3040..=0x30FF | 0x3100..=0x31FF
        | 0x3200..=0x4DBF | 0x4E00..=0x9FFF | 0xA960..=0xA97F | 0xAC00..=0xD7FF | 0xF900..=0xFAFF
        | 0xFE30..=0xFE4F | 0xFF00..=0xFFEF | 0x20000..=0x3FFFF)
}

/// Whether `c` belongs to a script written without spaces between words: kana, kanji, CJK
/// punctuation and full-width forms (Hangul is written with spaces, so it is not one).
pub fn is_spaceless(c: char) -> bool {
    matches!(c as u32,
        0x3000..=0x303F | 0x3040..=0x309F | 0x30A0..=0x30FF | 0x31F0..=0x31FF | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0xFF00..=0xFFEF | 0x20000..=0x2FFFF)
}

/// Whether `c` is full-width punctuation (、。「」（）・！？ …): its glyph carries its own space.
pub fn is_fullwidth_punctuation(c: char) -> bool {
    matches!(c as u32, 0x3001..=0x3004 | 0x3008..=0x303F | 0x30FB | 0xFF01..=0xFF0F | 0xFF1A..=0xFF20 | 0xFF3B..=0xFF40 | 0xFF5B..=0xFF65)
}

/// Whether `c` is a full-width closing bracket (）］｝」』】〉》〕〙〗〟): the one list the PDF's
/// line breaker (no line starts with one) and its punctuation spacing (its glyph sits in the
/// left half of its box) share.
pub fn is_closing_bracket(c: char) -> bool {
    matches!(c, '）' | '］' | '｝' | '」' | '』' | '】' | '〉' | '》' | '〕' | '〙' | '〗' | '〟')
}

/// Whether `c` is a full-width opening bracket (（［｛「『【〈《〔〘〖〝), the twin of
/// [`is_closing_bracket`]: no line ends with one, and its glyph sits in the right half of its box.
pub fn is_opening_bracket(c: char) -> bool {
    matches!(c, '（' | '［' | '｛' | '「' | '『' | '【' | '〈' | '《' | '〔' | '〘' | '〖' | '〝')
}

/// Whether a soft line break between `prev` (the last character before it) and `next` (the
/// first after it) is joined with nothing. It is when both sides are written without spaces
/// (`かかるほど⏎深い` → `かかるほど深い`), or when either side is full-width punctuation
/// (`につれて、⏎定期的`, `です。⏎The`): Japanese text has no spaces and its punctuation has its
/// own. Everywhere else (between Latin words, Latin and kana) it is one space. An unknown side
/// (`None`: start or end of the text, an image, a line break) keeps the space.
pub fn soft_break_joins(prev: Option<char>, next: Option<char>) -> bool {
    let (Some(a), Some(b)) = (prev, next) else { return false };
    (is_spaceless(a) && is_spaceless(b)) || is_fullwidth_punctuation(a) || is_fullwidth_punctuation(b)
}

/// What a soft line break becomes in running text: `""` or `" "` (see [`soft_break_joins`]).
pub fn soft_break(prev: Option<char>, next: Option<char>) -> &'static str {
    if soft_break_joins(prev, next) { "" } else { " " }
}

/// Whether `c` is Japanese: Hiragana, Katakana or a CJK ideograph (what makes a document
/// Japanese for `html.lang: auto` and for the PDF's emphasis rule).
pub fn is_japanese(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x31F0..=0x31FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0xFF66..=0xFF9F)
}

/// Whether any character of `text` is Japanese.
pub fn has_japanese(text: &str) -> bool {
    text.chars().any(is_japanese)
}

/// How `*emphasis*` is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emphasis {
    /// Slanted (Latin text in a non-Japanese document).
    Slanted,
    /// Upright in the gothic (sans-serif) face, heavier than the body: slanted kanji are not
    /// Japanese typography, and a mincho body marks emphasis with gothic.
    Gothic,
}

/// The emphasis of a run of `text` in a document that is Japanese (`japanese_document`) or not:
/// gothic in a Japanese document and for any run holding Japanese, else slanted.
pub fn emphasis(japanese_document: bool, text: &str) -> Emphasis {
    if japanese_document || has_japanese(text) { Emphasis::Gothic } else { Emphasis::Slanted }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Joins soft-broken lines of plain text by the soft-break rule: `lines` as they stood in the
    /// source, the result as a reader sees it.
    fn join_lines<'a>(lines: impl IntoIterator<Item = &'a str>) -> String {
        let mut out = String::new();
        for line in lines {
            if !out.is_empty() {
                out.push_str(soft_break(out.chars().last(), line.chars().next()));
            }
            out.push_str(line);
        }
        out
    }

    #[test]
    fn a_soft_break_between_japanese_characters_is_joined_with_nothing() {
        assert_eq!(join_lines(["所有権はかかるほど", "深い"]), "所有権はかかるほど深い");
        assert_eq!(join_lines(["時間が経つにつれて、", "定期的"]), "時間が経つにつれて、定期的");
        assert_eq!(join_lines(["「所有権」", "です"]), "「所有権」です");
    }

    #[test]
    fn a_soft_break_between_latin_words_is_one_space() {
        assert_eq!(join_lines(["the borrow", "checker"]), "the borrow checker");
        assert_eq!(join_lines(["Rust の", "ownership"]), "Rust の ownership");
        assert_eq!(join_lines(["所有権", "ownership"]), "所有権 ownership");
    }

    #[test]
    fn full_width_punctuation_carries_its_own_space() {
        assert_eq!(join_lines(["これです。", "The end"]), "これです。The end");
        assert_eq!(join_lines(["see", "（注）"]), "see（注）");
        // Hangul is written with spaces between words.
        assert_eq!(join_lines(["소유권은", "중요하다"]), "소유권은 중요하다");
    }

    #[test]
    fn an_unknown_side_keeps_the_space() {
        assert_eq!(soft_break(None, Some('深')), " ");
        assert_eq!(soft_break(Some('深'), None), " ");
    }

    #[test]
    fn emphasis_in_japanese_is_gothic_never_slanted() {
        assert_eq!(emphasis(false, "所有権"), Emphasis::Gothic);
        assert_eq!(emphasis(true, "ownership"), Emphasis::Gothic);
        assert_eq!(emphasis(false, "ownership"), Emphasis::Slanted);
    }

    #[test]
    fn cjk_classes() {
        assert!(is_cjk('所') && is_cjk('。') && is_cjk('한') && !is_cjk('a'));
        assert!(is_spaceless('所') && !is_spaceless('한') && !is_spaceless('a'));
        assert!(is_fullwidth_punctuation('、') && is_fullwidth_punctuation('」'));
        assert!(!is_fullwidth_punctuation('あ') && !is_fullwidth_punctuation('Ａ'));
        assert!(has_japanese("Rust の本") && !has_japanese("Rust"));
    }
}
