use super::*;

#[test]
fn line_helpers() {
    let t = "ab\r\ncd\nef";
    assert_eq!(line_start(t, 5), 4);
    assert_eq!(line_content_end(t, 0), 2);
    assert_eq!(line_content_end(t, 4), 6);
    assert_eq!(line_content_end(t, 8), 9);
    assert_eq!(line_number(t, 8), 3);
}
