//! Lexical index.
pub mod dictionary;
#[cfg(test)]
mod scratch;
