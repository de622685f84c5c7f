//! Closed value sets of the wire that are refused with a sentence of their own.
//!
//! A [`ValueSet`] is a Rust enum whose variants are the values (`SearchRequest.mode`,
//! `PatchOperation.kind`, `CheckIssue.kind`). Its JSON Schema is derived (a plain string `enum`:
//! the variants carry no doc comments, so nothing is folded into the field's description), and
//! its serde impls come from [`value_set_serde!`]: written as [`ValueSet::as_str`], read
//! ignoring ASCII case, and a value outside the set is refused with [`ValueSet::refusal`], one
//! sentence naming the allowed values.
//!
//! serde errors carry only text, so the refusal travels as text with a mark in front;
//! [`refused`] finds the sentence again, and the MCP edge shows it as it is (without the field
//! path it puts before serde's own messages).

/// A closed set of string values.
pub trait ValueSet: Sized + Copy + 'static {
    /// Every value, in the order of the schema's `enum`.
    const ALL: &'static [Self];

    /// The wire spelling.
    fn as_str(self) -> &'static str;

    /// The one-sentence error for `given`, a value outside the set; it names the allowed values.
    fn refusal(given: &str) -> String;

    /// The value spelled `given`, ignoring ASCII case.
    fn find(given: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|v| v.as_str().eq_ignore_ascii_case(given))
    }

    /// The wire spellings of [`ValueSet::ALL`].
    fn spellings() -> Vec<&'static str> {
        Self::ALL.iter().map(|v| v.as_str()).collect()
    }
}

/// The value of `T` spelled `given`, ignoring ASCII case and surrounding whitespace: the `find`
/// of the sets a client types by hand (`mode`, `detail`).
pub(super) fn find_loosely<T: ValueSet>(given: &str) -> Option<T> {
    let given = given.trim();
    T::ALL.iter().copied().find(|v| given.eq_ignore_ascii_case(v.as_str()))
}

/// What comes before a refusal's sentence inside a serde error message.
const MARK: &str = "\u{1}refused\u{1}";

/// The refusal sentence of a [`ValueSet`] in a serde error message, if that is what it is.
pub fn refused(serde_message: &str) -> Option<&str> {
    serde_message.strip_prefix(MARK)
}

/// Reads a [`ValueSet`] value (the serde half of [`value_set_serde!`]).
pub(super) fn deserialize<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: ValueSet,
{
    use serde::Deserialize as _;
    use serde::de::Error as _;
    let given = String::deserialize(deserializer)?;
    T::find(&given).ok_or_else(|| D::Error::custom(format!("{MARK}{}", T::refusal(&given))))
}

/// `Serialize` and `Deserialize` of a [`ValueSet`] type, by its spellings.
macro_rules! value_set_serde {
    ($t:ty) => {
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str($crate::wire::ValueSet::as_str(*self))
            }
        }

        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                $crate::wire::values::deserialize(deserializer)
            }
        }
    };
}

pub(super) use value_set_serde;

/// `a, b or c`.
pub(super) fn or_list(values: &[&str]) -> String {
    match values {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [head @ .., last] => format!("{} or {last}", head.join(", ")),
    }
}
