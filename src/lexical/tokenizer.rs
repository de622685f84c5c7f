//! The tantivy side of the analyzer: [`LvsTokenizer`], registered under
//! [`ANALYZER_NAME`](super::ANALYZER_NAME), and its token stream.

use tantivy::tokenizer::{Token, TokenStream, Tokenizer};

use super::analyzer::Analyzer;

/// Texts up to this many bytes are remembered by [`LvsTokenizer`], so the same text given again
/// (the heading path of every chunk of a section) is not analysed again.
const REPEAT_CACHE_BYTES: usize = 1024;

/// The tantivy tokenizer: cheap to clone (the dictionary is shared; each clone gets its own
/// scratch buffers), `Send + Sync`. tantivy keeps one per field and indexing thread, so the
/// heading-path field's tokenizer sees the same heading path for consecutive chunks of a
/// section: a short text equal to the previous one reuses its tokens.
pub(crate) struct LvsTokenizer {
    analyzer: Analyzer,
    /// The last analysed text, when it was short enough to remember (`None` otherwise).
    last: Option<String>,
}

impl LvsTokenizer {
    pub(crate) fn new() -> Self {
        LvsTokenizer { analyzer: Analyzer::new(), last: None }
    }
}

impl Clone for LvsTokenizer {
    fn clone(&self) -> Self {
        Self::new()
    }
}

/// The token stream over the analyzer's output, copied into one reused [`Token`].
pub(crate) struct LvsTokenStream<'a> {
    analyzer: &'a Analyzer,
    next: usize,
    token: Token,
}

impl Tokenizer for LvsTokenizer {
    type TokenStream<'a> = LvsTokenStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> LvsTokenStream<'a> {
        if self.last.as_deref() != Some(text) {
            self.analyzer.run(text);
            match self.last.as_mut() {
                _ if text.len() > REPEAT_CACHE_BYTES => self.last = None,
                Some(last) => {
                    last.clear();
                    last.push_str(text);
                }
                None => self.last = Some(text.to_owned()),
            }
        }
        LvsTokenStream { analyzer: &self.analyzer, next: 0, token: Token::default() }
    }
}

impl TokenStream for LvsTokenStream<'_> {
    fn advance(&mut self) -> bool {
        let Some(t) = self.analyzer.tokens().get(self.next) else { return false };
        self.next += 1;
        self.token.offset_from = t.offset_from;
        self.token.offset_to = t.offset_to;
        self.token.position = t.position;
        self.token.position_length = t.position_length;
        self.token.text.clear();
        self.token.text.push_str(self.analyzer.text(t));
        true
    }

    fn token(&self) -> &Token {
        &self.token
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.token
    }
}
