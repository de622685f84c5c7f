//! Unit tests of the pure asset rules (`docs/reference/original-server.md` §11): addresses, URLs,
//! names, snippets, cursors, signatures and the GIF preview. The downloader against a real HTTPS
//! server is in `tests/it/assets.rs`.

use std::net::IpAddr;

use super::download::{MSG_NOT_HTTPS, MSG_PRIVATE, MSG_USER_INFO, check_url, is_public};
use super::*;
use crate::error::ErrorCode;

#[test]
fn every_unsafe_range_is_refused_and_public_addresses_pass() {
    let refused = [
        // IPv4: this network / unspecified, private, loopback, CGNAT, link-local, benchmarking,
        // documentation, IETF, multicast, reserved, broadcast.
        "0.0.0.0",
        "0.1.2.3",
        "10.0.0.1",
        "10.255.255.255",
        "127.0.0.1",
        "127.1.2.3",
        "100.64.0.1",
        "100.127.255.254",
        "169.254.169.254",
        "172.16.0.1",
        "172.31.255.255",
        "192.168.0.1",
        "192.168.255.255",
        "198.18.0.1",
        "198.19.255.255",
        "192.0.0.8",
        "192.0.2.1",
        "198.51.100.7",
        "203.0.113.9",
        "224.0.0.1",
        "239.255.255.250",
        "240.0.0.1",
        "255.255.255.255",
        // IPv6: unspecified, loopback, IPv4-compatible, link-local, site-local, ULA, multicast,
        // documentation, discard.
        "::",
        "::1",
        "::127.0.0.1",
        "fe80::1",
        "febf::1",
        "fec0::1",
        "fc00::1",
        "fd12:3456::1",
        "ff02::1",
        "ff0e::1",
        "2001:db8::1",
        "100::1",
        // IPv4-mapped, NAT64 and 6to4 forms of unsafe IPv4 addresses.
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "::ffff:169.254.169.254",
        "::ffff:100.64.0.1",
        "::ffff:0.0.0.0",
        "::ffff:224.0.0.1",
        "64:ff9b::a00:1",
        "64:ff9b::7f00:1",
        "2002:c0a8:0101::1",
        "2002:7f00:1::1",
    ];
    for ip in refused {
        let addr: IpAddr = ip.parse().unwrap();
        assert!(!is_public(addr), "{ip} must be refused");
    }
    let allowed = [
        "1.1.1.1",
        "8.8.8.8",
        "93.184.216.34",
        "100.63.255.255",
        "100.128.0.1",
        "172.15.255.255",
        "172.32.0.1",
        "169.253.1.1",
        "192.167.1.1",
        "198.17.255.255",
        "198.20.0.1",
        "223.255.255.254",
        "2606:4700::1111",
        "2a00:1450:4001::1",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",
        "2002:0808:0808::1",
    ];
    for ip in allowed {
        let addr: IpAddr = ip.parse().unwrap();
        assert!(is_public(addr), "{ip} is public");
    }
}

#[test]
fn urls_must_be_https_without_user_info_or_localhost() {
    let check = |u: &str| check_url(&reqwest::Url::parse(u).unwrap()).map_err(|e| e.message);
    assert_eq!(check("https://example.com/a.png?sig=x"), Ok(()));
    assert_eq!(check("http://example.com/a.png"), Err(MSG_NOT_HTTPS.to_owned()));
    assert_eq!(check("ftp://example.com/a.png"), Err(MSG_NOT_HTTPS.to_owned()));
    assert_eq!(check("data:image/png;base64,AAAA"), Err(MSG_NOT_HTTPS.to_owned()));
    assert_eq!(check("https://user:pw@example.com/a.png"), Err(MSG_USER_INFO.to_owned()));
    assert_eq!(check("https://user@example.com/a.png"), Err(MSG_USER_INFO.to_owned()));
    assert_eq!(check("https://localhost/a.png"), Err(MSG_PRIVATE.to_owned()));
    assert_eq!(check("https://LOCALHOST./a.png"), Err(MSG_PRIVATE.to_owned()));
    assert_eq!(check("https://img.localhost/a.png"), Err(MSG_PRIVATE.to_owned()));
}

#[test]
fn literal_private_addresses_are_refused_before_any_connection() {
    let d = download::Downloader::new();
    for url in [
        "https://127.0.0.1/a.png",
        "https://[::1]/a.png",
        "https://[::ffff:127.0.0.1]/a.png",
        "https://169.254.169.254/latest/meta-data",
        "https://10.0.0.1:8443/x",
    ] {
        let err = d.download(url, &mut Vec::new()).unwrap_err();
        assert_eq!(err.message, MSG_PRIVATE, "{url}");
    }
    let err = d.download("not a url at all", &mut Vec::new()).unwrap_err();
    assert_eq!(err.message, MSG_NOT_HTTPS);
}

#[test]
fn signatures_and_extensions() {
    let png = [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0];
    assert_eq!(ImageFormat::detect(&png), Some(ImageFormat::Png));
    assert_eq!(ImageFormat::detect(&[0xFF, 0xD8, 0xFF, 0xE0]), Some(ImageFormat::Jpeg));
    assert_eq!(ImageFormat::detect(b"RIFF\0\0\0\0WEBPVP8 "), Some(ImageFormat::Webp));
    assert_eq!(ImageFormat::detect(b"RIFF\0\0\0\0WAVEfmt "), None);
    assert_eq!(ImageFormat::detect(b"GIF87a.."), Some(ImageFormat::Gif));
    assert_eq!(ImageFormat::detect(b"GIF89a.."), Some(ImageFormat::Gif));
    assert_eq!(ImageFormat::detect(b"<svg xmlns="), None);
    assert_eq!(ImageFormat::from_file_name("a.JPEG"), Some(ImageFormat::Jpeg));
    assert_eq!(ImageFormat::from_file_name("a.jpg"), Some(ImageFormat::Jpeg));
    assert_eq!(ImageFormat::from_file_name("a.svg"), None);
    assert_eq!(ImageFormat::from_file_name("png"), None);
}

#[test]
fn declared_mime_only_refuses_a_disagreeing_image_type() {
    assert!(check_declared_mime(None, ImageFormat::Png).is_ok());
    assert!(check_declared_mime(Some(""), ImageFormat::Png).is_ok());
    assert!(check_declared_mime(Some("application/octet-stream"), ImageFormat::Png).is_ok());
    assert!(check_declared_mime(Some("text/plain"), ImageFormat::Png).is_ok());
    assert!(check_declared_mime(Some("image/jpg"), ImageFormat::Jpeg).is_ok());
    let err = check_declared_mime(Some("image/jpeg"), ImageFormat::Png).unwrap_err();
    assert_eq!(err.message, "Declared MIME type 'image/jpeg' does not match the detected image/png image.");
}

#[test]
fn file_names_follow_the_portable_basename_rules() {
    let name = |explicit: Option<&str>, hint: Option<&str>, f| {
        choose_file_name(explicit, hint, f, "20261201-120000", "0123456789ab")
    };
    use ImageFormat::*;
    assert_eq!(name(Some("cover"), None, Png).unwrap(), "cover.png");
    assert_eq!(name(Some("обложка"), None, Png).unwrap(), "обложка.png");
    assert_eq!(name(Some("cover.PNG"), None, Png).unwrap(), "cover.PNG");
    assert_eq!(name(Some("photo.jpeg"), None, Jpeg).unwrap(), "photo.jpeg");
    for bad in [
        "CON.jpg", "con", "../a.png", "a/b.png", "a\\b.png", "cover.", "cover ", " ", ".", "..", "a:b.png",
        "a*b.png",
    ] {
        let err = name(Some(bad), None, Png).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgument, "{bad}");
        assert!(err.message.contains("is not a portable file name"), "{bad}: {}", err.message);
    }
    let err = name(Some("x.txt"), None, Png).unwrap_err();
    assert_eq!(err.code, ErrorCode::UnsupportedFormat);
    assert!(
        err.message.starts_with("fileName extension does not match the image signature"),
        "{}",
        err.message
    );
    assert_eq!(name(Some("x.jpg"), None, Png).unwrap_err().code, ErrorCode::UnsupportedFormat);
    // The upload's name is only a hint: its stem is kept, the extension forced.
    assert_eq!(name(None, Some("../folder/cover.jpg"), Png).unwrap(), "cover.png");
    assert_eq!(name(None, Some("C:\\Users\\me\\shot.PNG"), Png).unwrap(), "shot.png");
    assert_eq!(name(None, Some("CON.jpg"), Png).unwrap(), "image-20261201-120000-0123456789ab.png");
    assert_eq!(name(None, Some("bad:name.gif"), Gif).unwrap(), "image-20261201-120000-0123456789ab.gif");
    assert_eq!(name(None, None, Webp).unwrap(), "image-20261201-120000-0123456789ab.webp");
    assert_eq!(with_suffix("cover.png", 2), "cover-2.png");
    assert_eq!(with_suffix("a.b.png", 3), "a.b-3.png");
}

#[test]
fn markdown_snippets_escape_alt_text_and_wrap_odd_destinations() {
    assert_eq!(markdown_snippet(None, "images/cover.png"), "![](images/cover.png)");
    assert_eq!(
        markdown_snippet(Some("A [b]\\\nC"), "images/my image.png"),
        "![A \\[b\\]\\\\ C](<images/my image.png>)"
    );
    assert_eq!(markdown_snippet(Some("x\r\ny"), "a(1).png"), "![x  y](<a(1).png>)");
}

#[test]
fn cursors_round_trip_and_refuse_garbage_and_old_versions() {
    let c = encode_cursor("images/ä b.png");
    assert!(!c.contains(['+', '/', '=']), "{c}");
    assert_eq!(decode_cursor(&c).unwrap(), "images/ä b.png");
    for bad in ["!!!", "bm9uZXdsaW5l" /* "nonewline" */, "", "djIK" /* "v2\n" */] {
        let err = decode_cursor(bad).unwrap_err();
        assert_eq!(err.message, "Image list cursor is malformed.", "{bad}");
    }
    use base64::Engine as _;
    let v1 = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode("v1\nimages/a.png");
    assert_eq!(
        decode_cursor(&v1).unwrap_err().message,
        "Image list cursor version 'v1' is not supported. Start listing again."
    );
}

#[path = "../../tests/common/images.rs"]
mod images;
use images::tiny_gif;

#[test]
fn a_gif_is_previewed_as_a_png_of_its_first_frame() {
    let gif = tiny_gif();
    assert_eq!(ImageFormat::detect(&gif), Some(ImageFormat::Gif));
    let png = gif_first_frame_png(&gif).unwrap();
    assert_eq!(ImageFormat::detect(&png), Some(ImageFormat::Png));
    let decoded = image::load_from_memory(&png).unwrap().to_rgba8();
    assert_eq!(decoded.dimensions(), (2, 1));
    assert_eq!(decoded.get_pixel(0, 0).0, [255, 0, 0, 255]);
    assert_eq!(decoded.get_pixel(1, 0).0, [0, 0, 255, 255]);
}

#[test]
fn gif_previews_are_bounded_and_broken_gifs_are_unsupported() {
    // A header announcing 4097 × 4097 (more than 16,777,216 pixels) is refused before decoding.
    let mut huge = tiny_gif();
    huge[6..8].copy_from_slice(&4097u16.to_le_bytes());
    huge[8..10].copy_from_slice(&4097u16.to_le_bytes());
    let err = gif_first_frame_png(&huge).unwrap_err();
    assert_eq!(err.code, ErrorCode::UnsupportedFormat);
    assert!(err.message.contains("16777216"), "{}", err.message);
    let err = gif_first_frame_png(b"GIF89a\x02\x00\x01\x00garbage").unwrap_err();
    assert_eq!(err.code, ErrorCode::UnsupportedFormat);
}

#[test]
fn download_mime_types_come_from_the_extension() {
    assert_eq!(mime_for_file_name("a.PNG"), "image/png");
    assert_eq!(mime_for_file_name("book.pdf"), "application/pdf");
    assert_eq!(mime_for_file_name("notes.md"), "text/markdown");
    assert_eq!(mime_for_file_name("blob.bin"), "application/octet-stream");
    assert_eq!(mime_for_file_name("Makefile"), "application/octet-stream");
}
