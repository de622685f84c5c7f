//! EXPERIMENT: character bigrams of CJK runs, a scoring-only field.

use tantivy::tokenizer::{Token, TokenStream, Tokenizer};

use super::analyzer::is_word_char;
use super::normalize::Normalized;

pub(crate) fn bigrams(text: &str, out: &mut Vec<String>) {
    let mut norm = Normalized::default();
    norm.normalize(text);
    let chars: Vec<char> = norm.text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let cjk = |c: char| c.is_alphanumeric() && !is_word_char(c);
        if !cjk(chars[i]) {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < chars.len() && cjk(chars[j]) {
            j += 1;
        }
        if j - i == 1 {
            out.push(chars[i].to_string());
        } else {
            for k in i..j - 1 {
                out.push(chars[k..k + 2].iter().collect());
            }
        }
        i = j;
    }
}

#[derive(Clone)]
pub(crate) struct BigramTokenizer;

pub(crate) struct BigramStream {
    tokens: Vec<Token>,
    cursor: usize,
    fallback: Token,
}

impl Tokenizer for BigramTokenizer {
    type TokenStream<'a> = BigramStream;
    fn token_stream<'a>(&'a mut self, text: &'a str) -> BigramStream {
        let mut out = Vec::new();
        bigrams(text, &mut out);
        let tokens = out
            .into_iter()
            .enumerate()
            .map(|(i, t)| Token { offset_from: 0, offset_to: 0, position: i, text: t, position_length: 1 })
            .collect();
        BigramStream { tokens, cursor: 0, fallback: Token::default() }
    }
}

impl TokenStream for BigramStream {
    fn advance(&mut self) -> bool {
        if self.cursor < self.tokens.len() {
            self.cursor += 1;
            true
        } else {
            false
        }
    }
    fn token(&self) -> &Token {
        self.cursor.checked_sub(1).and_then(|i| self.tokens.get(i)).unwrap_or(&self.fallback)
    }
    fn token_mut(&mut self) -> &mut Token {
        match self.cursor.checked_sub(1) {
            Some(i) if i < self.tokens.len() => &mut self.tokens[i],
            _ => &mut self.fallback,
        }
    }
}
