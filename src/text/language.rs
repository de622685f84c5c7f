//! The language of human-facing text: catalog messages, Markdown labels and HTML warnings.
//!
//! It sits at the bottom layer because several modules that must not import each other (the
//! catalog, the HTML export) choose their sentences by it.

/// The language of catalog messages and Markdown labels (the catalog's `language` setting).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Language {
    /// English (the default).
    #[default]
    En,
    /// Japanese: mdmark's texts.
    Ja,
}

impl Language {
    /// `en` or `ja`.
    pub fn as_str(self) -> &'static str {
        match self {
            Language::En => "en",
            Language::Ja => "ja",
        }
    }

    /// The text for this language.
    pub fn pick<T>(self, en: T, ja: T) -> T {
        match self {
            Language::En => en,
            Language::Ja => ja,
        }
    }

    /// The separator between items of a list in a sentence or a cell: `, ` or `・`.
    pub fn list_sep(self) -> &'static str {
        self.pick(", ", "・")
    }
}
