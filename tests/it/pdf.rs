//! `kb_create_pdf_book` and `pdf` end to end, checked with poppler (`pdfinfo`, `pdffonts`,
//! `pdftotext`, `pdfimages`): every page format × style × profile on a Japanese fixture with
//! every element kind, kinsoku, images, path and permission errors, atomic replacement.

use std::io::Cursor;
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::rpc::Rpc;
use crate::support::{Project, bin};

const FORMATS: [(&str, f64, f64); 5] = [
    ("a4", 595.28, 841.89),
    ("a5", 419.53, 595.28),
    ("a6", 297.64, 419.53),
    ("b5", 515.91, 728.5),
    ("letter", 612.0, 792.0),
];
const STYLES: [&str; 5] = ["compact", "classic", "modern", "technical", "academic"];
const PROFILES: [&str; 3] = ["screen", "standard", "print"];

/// The paragraph of the fixture that must come back whole and in order.
const LONG_PARAGRAPH: &str = "日本語の文章は単語の間に空白を置かないため、行分割は文字と文字の間で行う必要があります。ただし、句読点（、や。）や閉じ括弧は行頭に来てはならず、開き括弧は行末に来てはなりません。これを禁則処理と呼びます。また、英単語（たとえば configuration や synchronization）は途中で分割せず、長いURL（https://example.com/very/long/path/to/a/resource/that/does/not/fit/on/one/line.html）や識別子（very_long_identifier_name_that_keeps_going_on_and_on）は行幅に合わせて折り返します。この段落は、抽出したテキストが読み順どおりで欠けた文字がないことを確かめるために使います。";

/// Runs a poppler tool on `file` (`pdftotext` writes to stdout) and returns its output.
fn poppler(tool: &str, args: &[&str], file: &Path) -> Option<String> {
    let mut cmd = Command::new(tool);
    cmd.args(args).arg(file);
    if tool == "pdftotext" {
        cmd.arg("-");
    }
    let out =
        cmd.output().unwrap_or_else(|e| panic!("{tool} is missing ({e}); .ci/setup installs poppler-utils"));
    assert!(out.status.success(), "{tool} {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn pdfinfo(file: &Path) -> String {
    let out =
        Command::new("pdfinfo").arg(file).output().expect("pdfinfo (poppler-utils, installed by .ci/setup)");
    assert!(out.status.success(), "pdfinfo: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn pdffonts(file: &Path) -> String {
    let out = Command::new("pdffonts").arg(file).output().expect("pdffonts");
    assert!(out.status.success(), "pdffonts: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn squeeze(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// The text without the page numbers and running heads at the end of each page (they interrupt
/// a paragraph that crosses a page).
fn body_text(text: &str) -> String {
    let mut out = String::new();
    for page in text.split('\u{c}') {
        let mut lines: Vec<&str> = page.lines().collect();
        for _ in 0..3 {
            while lines.last().is_some_and(|l| l.trim().is_empty()) {
                lines.pop();
            }
            let Some(last) = lines.last() else { break };
            let t = last.trim().trim_start_matches("検索サーバー運用ガイド").trim();
            let folio = t.is_empty()
                || t.trim_matches('—')
                    .trim()
                    .split(" / ")
                    .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
            if !folio {
                break;
            }
            lines.pop();
        }
        for line in lines {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

fn page_count(info: &str) -> usize {
    info.lines().find_map(|l| l.strip_prefix("Pages:")).and_then(|v| v.trim().parse().ok()).expect("Pages:")
}

/// Checks one exported fixture PDF.
fn check_book(file: &Path, format: (&str, f64, f64), label: &str) {
    let info = pdfinfo(file);
    let size = info.lines().find_map(|l| l.strip_prefix("Page size:")).expect("Page size");
    let nums: Vec<f64> = size.split_whitespace().filter_map(|w| w.parse().ok()).collect();
    assert!(
        (nums[0] - format.1).abs() < 1.0 && (nums[1] - format.2).abs() < 1.0,
        "{label}: page size {size}, want {} x {}",
        format.1,
        format.2
    );
    let fonts = pdffonts(file);
    assert!(
        fonts
            .lines()
            .any(|l| l.contains("+IPAex") && l.contains("CID TrueType") && l.contains("yes yes yes")),
        "{label}: no embedded subset CJK font:\n{fonts}"
    );
    let text = poppler("pdftotext", &["-enc", "UTF-8"], file).unwrap_or_default();
    for needle in [
        "はじめに",
        "手順",
        "設定例",
        "比較表",
        "画像",
        "一度に返す結果の数",
        "defaultMode: hybrid",
        "allowWrites",
        "検索サーバー運用ガイド",
    ] {
        assert!(text.contains(needle), "{label}: '{needle}' missing from the text:\n{text}");
    }
    let body = squeeze(&body_text(&text));
    assert!(
        body.contains(&squeeze(LONG_PARAGRAPH)),
        "{label}: the long paragraph is not whole and in order:\n{text}"
    );
    // The long code line is wrapped, not cut off.
    assert!(
        body.contains("this_is_a_very_long_configuration_key_that_must_wrap_inside_the_code_block:12345"),
        "{label}:\n{text}"
    );
    let layout = poppler("pdftotext", &["-layout", "-enc", "UTF-8"], file).unwrap_or_default();
    for line in layout.lines() {
        let t = line.trim_start();
        assert!(
            !t.starts_with('。') && !t.starts_with('、'),
            "{label}: a line starts with a comma or full stop: {line}"
        );
    }
}

fn writable_config(project: &Project, writes: bool) -> std::path::PathBuf {
    let cfg = project.root().with_extension("yml");
    // No index of its own: the export must not need one (and the checks below see none).
    std::fs::write(&cfg, format!("knowledgeBase:\n  allowWrites: {writes}\nindex:\n  autoIndex: false\n"))
        .unwrap();
    cfg
}

fn server(project: &Project, writes: bool) -> Rpc {
    let cfg = writable_config(project, writes);
    Rpc::start(&[
        "--project-root".as_ref(),
        project.root().as_os_str(),
        "--config".as_ref(),
        cfg.as_os_str(),
        "--embedding-provider".as_ref(),
        "none".as_ref(),
    ])
}

fn tool_error(rpc: &mut Rpc, request: Value) -> Value {
    let frame =
        rpc.request("tools/call", json!({"name": "kb_create_pdf_book", "arguments": {"request": request}}));
    assert_eq!(frame["result"]["isError"], true, "{frame}");
    crate::rpc::error_envelope(&frame)
}

fn export_matrix(styles: &[&str]) {
    let project = Project::from_fixture("pdf");
    let mut rpc = server(&project, true);
    for style in styles {
        for format in FORMATS {
            for profile in PROFILES {
                let out = format!("out/{}-{style}-{profile}.pdf", format.0);
                let r = rpc.call(
                    "kb_create_pdf_book",
                    json!({"request": {"path": "book.md", "outputPath": out, "pageFormat": format.0, "style": style, "profile": profile}}),
                );
                assert_eq!(r["path"], out.as_str());
                let file = project.root().join(&out);
                assert_eq!(r["bytes"].as_u64().unwrap(), std::fs::metadata(&file).unwrap().len());
                check_book(&file, format, &out);
            }
        }
    }
}

#[test]
fn every_format_and_profile_of_compact_and_classic_is_a_readable_japanese_book() {
    export_matrix(&STYLES[..2]);
}

#[test]
fn every_format_and_profile_of_modern_technical_and_academic_is_a_readable_japanese_book() {
    export_matrix(&STYLES[2..]);
}

#[test]
fn the_default_export_warns_about_missing_and_remote_images_and_changes_nothing_else() {
    let project = Project::from_fixture("pdf");
    // A server that would see the fetch if the remote image were requested.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let remote = format!("http://127.0.0.1:{}/remote.png", listener.local_addr().unwrap().port());
    let md = std::fs::read_to_string(project.root().join("book.md"))
        .unwrap()
        .replace("https://example.com/remote.png", &remote);
    project.write("book.md", &md);
    let before_md = std::fs::read(project.root().join("book.md")).unwrap();
    let before_png = std::fs::read(project.root().join("images/diagram.png")).unwrap();
    let mut rpc = server(&project, true);
    let r = rpc.call("kb_create_pdf_book", json!({"request": {"path": "book.md"}}));
    assert_eq!(r["path"], "book.pdf");
    let warnings: Vec<String> =
        r["warnings"].as_array().unwrap().iter().map(|w| w.as_str().unwrap().to_owned()).collect();
    assert!(warnings.iter().any(|w| w.contains("images/missing.png")), "{warnings:?}");
    assert!(warnings.iter().any(|w| w.contains(&remote) && w.contains("not fetched")), "{warnings:?}");
    assert!(listener.accept().is_err(), "the remote image was requested");
    let file = project.root().join("book.pdf");
    check_book(&file, FORMATS[1], "default");
    let text = poppler("pdftotext", &["-enc", "UTF-8"], &file).unwrap();
    assert!(text.contains("［画像なし］"), "placeholder text:\n{text}");
    // The real image is embedded once; the Markdown and the image are untouched; no index.
    let images = poppler("pdfimages", &["-list"], &file).unwrap();
    assert!(
        images.lines().any(|l| l.contains(" image ") && l.contains("240") && l.contains("120")),
        "{images}"
    );
    assert_eq!(std::fs::read(project.root().join("book.md")).unwrap(), before_md);
    assert_eq!(std::fs::read(project.root().join("images/diagram.png")).unwrap(), before_png);
    assert!(!project.root().join(".local-vector-search-mcp/lexical").exists());
    // The outline (bookmarks) and the link are in the file.
    let bytes = std::fs::read(&file).unwrap();
    let raw = String::from_utf8_lossy(&bytes);
    let xml = poppler("pdftohtml", &["-xml", "-stdout", "-i", "-q"], &file).unwrap();
    let outline = &xml[xml.find("<outline>").expect("an outline")..];
    for (a, b) in [("はじめに", "手順"), ("手順", "設定例"), ("設定例", "比較表"), ("比較表", "画像")]
    {
        assert!(outline.find(a) < outline.find(b), "outline order {a} {b}: {outline}");
    }
    // 設定例 (H3) is nested under 手順 (H2), itself under はじめに (H1).
    assert!(outline.matches("<outline>").count() >= 3, "{outline}");
    assert!(raw.contains("/URI") || xml.contains("https://example.com/docs"), "no link annotation");
}

#[test]
fn output_paths_outside_the_root_in_git_or_the_index_are_invalid_and_writes_need_permission() {
    let project = Project::from_fixture("pdf");
    std::fs::create_dir_all(project.root().join(".git")).unwrap();
    let mut rpc = server(&project, true);
    for out in [
        "../escape.pdf",
        ".git/book.pdf",
        ".local-vector-search-mcp/book.pdf",
        "/abs/book.pdf",
        "docs/../../x.pdf",
        "book.md",
        "notes.txt",
    ] {
        let e = tool_error(&mut rpc, json!({"path": "book.md", "outputPath": out}));
        assert_eq!(e["code"], "INVALID_PATH", "{out}: {e}");
    }
    let e = tool_error(&mut rpc, json!({"path": "book.md", "style": "fancy"}));
    assert_eq!(e["code"], "INVALID_ARGUMENT", "{e}");
    let e = tool_error(&mut rpc, json!({"path": "missing.md"}));
    assert_eq!(e["code"], "NOT_FOUND", "{e}");
    assert!(!project.root().join(".git/book.pdf").exists());
    drop(rpc);

    let mut rpc = server(&project, false);
    let e = tool_error(&mut rpc, json!({"path": "book.md"}));
    assert_eq!(e["code"], "PERMISSION_DENIED", "{e}");
    assert!(e["message"].as_str().unwrap().contains("knowledgeBase.allowWrites"), "{e}");
    assert!(!project.root().join("book.pdf").exists());
}

#[test]
fn an_existing_pdf_is_replaced_atomically() {
    let project = Project::from_fixture("pdf");
    let target = project.root().join("book.pdf");
    std::fs::write(&target, b"%PDF-1.4 old\n%%EOF\n").unwrap();
    let old = std::fs::read(&target).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (target, stop, old) = (target.clone(), stop.clone(), old.clone());
        std::thread::spawn(move || {
            let mut reads = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let bytes = std::fs::read(&target).unwrap();
                let whole = bytes == old
                    || (bytes.starts_with(b"%PDF-") && bytes.trim_ascii_end().ends_with(b"%%EOF"));
                assert!(whole, "a reader saw a partial file of {} bytes", bytes.len());
                reads += 1;
            }
            reads
        })
    };
    let mut rpc = server(&project, true);
    for style in STYLES {
        rpc.call("kb_create_pdf_book", json!({"request": {"path": "book.md", "style": style}}));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(reader.join().unwrap() > 0);
    assert_ne!(std::fs::read(&target).unwrap(), old);
    let leftovers: Vec<_> = std::fs::read_dir(project.root())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".lvs-tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "temp files left: {leftovers:?}");
}

#[test]
fn profiles_downsample_large_photos_and_keep_jpegs_with_metadata() {
    let project = Project::empty();
    // A 2400 × 1600 photo-like JPEG without metadata, and the same with an EXIF segment.
    let img = image::RgbImage::from_fn(2400, 1600, |x, y| {
        image::Rgb([(x % 256) as u8, (y % 256) as u8, ((x + y) % 256) as u8])
    });
    let mut plain = Vec::new();
    image::DynamicImage::ImageRgb8(img)
        .write_to(&mut Cursor::new(&mut plain), image::ImageFormat::Jpeg)
        .unwrap();
    let mut exif = plain[..2].to_vec();
    let payload = b"Exif\0\0MM\0*\0\0\0\x08\0\0";
    exif.extend_from_slice(&[0xFF, 0xE1]);
    exif.extend_from_slice(&((payload.len() + 2) as u16).to_be_bytes());
    exif.extend_from_slice(payload);
    exif.extend_from_slice(&plain[2..]);
    std::fs::create_dir_all(project.root().join("img")).unwrap();
    std::fs::write(project.root().join("img/photo.jpg"), &plain).unwrap();
    std::fs::write(project.root().join("img/exif.jpg"), &exif).unwrap();
    project.write("photo.md", "# 写真\n\n![写真](img/photo.jpg)\n\n![EXIF付き](img/exif.jpg)\n");
    let mut widths = Vec::new();
    for profile in PROFILES {
        let out = format!("{profile}.pdf");
        let stdout = project.ok(&["pdf", "photo.md", "--out", &out, "--profile", profile, "--json"]);
        let r: Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(r["warnings"], json!([]), "{r}");
        let list = poppler("pdfimages", &["-list"], &project.root().join(&out)).unwrap();
        let sizes: Vec<(u32, u32)> = list
            .lines()
            .skip(2)
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                Some((f.get(3)?.parse().ok()?, f.get(4)?.parse().ok()?))
            })
            .collect();
        assert!(sizes.contains(&(2400, 1600)), "{profile}: the EXIF JPEG is kept as it is: {list}");
        let downsampled: Vec<u32> = sizes.iter().filter(|s| **s != (2400, 1600)).map(|s| s.0).collect();
        assert_eq!(downsampled.len(), 1, "{profile}: {list}");
        widths.push(downsampled[0]);
    }
    assert!(widths[0] < widths[1] && widths[1] < widths[2], "screen < standard < print: {widths:?}");
}

#[test]
fn the_cli_writes_next_to_the_source_without_needing_allow_writes() {
    let project = Project::from_fixture("pdf");
    let out = bin()
        .arg("--project-root")
        .arg(project.root())
        .args(["--embedding-provider", "none", "pdf", "book.md", "--page-format", "a6", "--style", "modern"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("wrote book.pdf ("));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("images/missing.png"), "warnings go to stderr: {stderr}");
    check_book(&project.root().join("book.pdf"), FORMATS[2], "cli");
    let bad = project.run(&["pdf", "book.md", "--page-format", "a3"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("a4, a5, a6, b5, letter"));
}

#[test]
fn a_whole_book_exports() {
    let Some(dir) = crate::support::shared_or_skip("corpora/rust-book-ja/src") else { return };
    let project = Project::empty();
    let mut files = crate::support::markdown_files(&dir);
    files.sort();
    let mut md = String::new();
    for f in &files {
        md.push_str(&std::fs::read_to_string(f).unwrap());
        md.push_str("\n\n");
    }
    project.write("book.md", &md);
    project.ok(&["pdf", "book.md"]);
    let info = pdfinfo(&project.root().join("book.pdf"));
    assert!(page_count(&info) >= 300, "{info}");
}

#[test]
fn a_font_path_that_cannot_be_read_is_a_clear_error() {
    let project = Project::from_fixture("pdf");
    let out = bin()
        .env("LVS_PDF_FONT", "no-such-font.ttf")
        .arg("--project-root")
        .arg(project.root())
        .args(["--embedding-provider", "none", "pdf", "book.md"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("LVS_PDF_FONT names a font file that cannot be read"), "{stderr}");
    assert!(!project.root().join("book.pdf").exists());
}
