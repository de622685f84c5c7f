//! Code identifiers found by their parts and whole; language names with symbols.

use super::*;

#[test]
fn code_identifiers_are_found_by_parts_and_whole() {
    let index = index_of(&[
        "Call kb_search, then Array.prototype.map over a Vec<T> in the HTTPServer (fooBar).",
        "Plain text about search engines and maps.",
    ]);
    for q in [
        "kb_search",
        "kb",
        "prototype",
        "Array.prototype.map",
        "vec",
        "Vec<T>",
        "HTTPServer",
        "server",
        "httpserver",
        "fooBar",
        "foobar",
        "bar",
    ] {
        let got = ids(&index, q);
        assert_eq!(got.first(), Some(&1), "query {q}: {got:?}");
    }
    // `kb_search` is typed in other forms too
    assert_eq!(ids(&index, "KbSearch").first(), Some(&1));
    assert_eq!(ids(&index, "\"kb search\"").first(), Some(&1));
}

#[test]
fn language_names_with_symbols_stay_distinct() {
    let index = index_of(&["C# のコード", "C++ のコード", "C 言語のコード"]);
    assert_eq!(ids(&index, "C#"), vec![1]);
    assert_eq!(ids(&index, "C++"), vec![2]);
    assert_eq!(ids(&index, "ｃ＃"), vec![1]);
}
