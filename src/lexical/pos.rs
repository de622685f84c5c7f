//! Word classes: what a token is as far as query building cares ([`Class`]), from IPADIC's part
//! of speech, with the light verbs and question words that are no query terms on their own.

/// What a primary token is, as far as query building cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    /// A part of a word run (English word, identifier piece, number).
    Word,
    /// A Japanese noun, prefix, number or unknown word: may form compounds with neighbours.
    Noun,
    /// An independent verb, adjective or adverb: a query term on its own.
    Content,
    /// Particles, auxiliaries, pronouns, dependent words: kept in the index (phrases need
    /// them) but not used as query terms on their own.
    Function,
}

pub(super) fn class_code(class: Class) -> u8 {
    match class {
        Class::Word => 0,
        Class::Noun => 1,
        Class::Content => 2,
        Class::Function => 3,
    }
}

pub(super) fn class_of(code: u8) -> Class {
    match code {
        0 => Class::Word,
        1 => Class::Noun,
        2 => Class::Content,
        _ => Class::Function,
    }
}

/// Verbs too common to mean anything as a query term (by base form).
const LIGHT_VERBS: &[&str] = &[
    "する",
    "いる",
    "ある",
    "なる",
    "いう",
    "言う",
    "できる",
    "くる",
    "来る",
    "やる",
    "おる",
    "れる",
    "られる",
    "せる",
    "させる",
    "みる",
    "しまう",
    "いく",
    "行く",
];

/// Question words: a question's `何年` must not require the text to say `何`.
const INTERROGATIVES: &[&str] = &[
    "なに",
    "なん",
    "いつ",
    "いつか",
    "どこ",
    "だれ",
    "誰",
    "どれ",
    "どの",
    "どんな",
    "なぜ",
    "どう",
    "どうして",
    "いくつ",
    "いくら",
    "いかが",
];

/// Maps IPADIC's part of speech (fields 0 and 1), the surface and the base form to a [`Class`].
pub(super) fn classify(pos: &str, sub: &str, surface: &str, base: &str) -> Class {
    if surface.starts_with('何') || INTERROGATIVES.contains(&surface) {
        return Class::Function;
    }
    match pos {
        "名詞" => match sub {
            "非自立" | "代名詞" => Class::Function,
            _ => Class::Noun,
        },
        "接頭詞" => Class::Noun,
        "動詞" | "形容詞" => match sub {
            "自立" if !LIGHT_VERBS.contains(&base) && base != "ない" => Class::Content,
            _ => Class::Function,
        },
        "副詞" => Class::Content,
        "助詞" | "助動詞" | "記号" | "接続詞" | "連体詞" | "感動詞" | "フィラー" | "その他" => {
            Class::Function
        }
        // unknown words and anything else: treat as a noun
        _ => Class::Noun,
    }
}
