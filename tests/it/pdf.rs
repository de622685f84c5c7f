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
    let mut seen: Vec<String> = Vec::new();
    for page in text.split('\u{c}') {
        let mut lines: Vec<&str> = page.lines().collect();
        // A running header repeats a chapter title seen before (pdftotext may split it at the
        // ideographic space after its number).
        for _ in 0..3 {
            while lines.first().is_some_and(|l| l.trim().is_empty()) {
                lines.remove(0);
            }
            if lines.first().is_some_and(|l| seen.contains(&l.trim().to_owned())) {
                lines.remove(0);
            }
        }
        seen.extend(lines.iter().map(|l| l.trim().to_owned()));
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
    assert_every_font_embedded(&fonts, label);
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

/// Every row of `pdffonts` says the font is embedded (`emb yes`).
fn assert_every_font_embedded(fonts: &str, label: &str) {
    let rows: Vec<&str> = fonts.lines().skip(2).filter(|l| !l.trim().is_empty()).collect();
    assert!(!rows.is_empty(), "{label}: no fonts at all:\n{fonts}");
    for row in rows {
        let cols: Vec<&str> = row.split_whitespace().collect();
        // name type… encoding emb sub uni object ID
        let emb = cols.get(cols.len().saturating_sub(5)).copied().unwrap_or("");
        assert_eq!(emb, "yes", "{label}: a font is not embedded: {row}\n{fonts}");
    }
}

#[test]
fn every_font_of_the_book_is_embedded_code_included() {
    let project = Project::from_fixture("pdf");
    project.ok(&["pdf", "book.md", "--style", "technical"]);
    let fonts = pdffonts(&project.root().join("book.pdf"));
    assert_every_font_embedded(&fonts, "technical");
    // The code face is a Japanese monospaced face, not Courier.
    assert!(!fonts.contains("Courier"), "{fonts}");
    assert!(fonts.lines().any(|l| l.contains("+IPAGothic")), "no IPAGothic code face:\n{fonts}");
}

/// Runs the binary in a private mount namespace where every system font folder is an empty
/// tmpfs; `None` (with a visible skip line) when this machine does not allow it.
fn run_without_system_fonts(project: &Project, args: &[&str]) -> Option<std::process::Output> {
    const HIDE: &str = r#"set -e
for d in /usr/share/fonts /usr/local/share/fonts /usr/X11R6/lib/X11/fonts "$HOME/.fonts" "$HOME/.local/share/fonts"; do
  if [ -d "$d" ]; then mount -t tmpfs tmpfs "$d"; fi
done
if [ -n "$(ls -A /usr/share/fonts)" ]; then echo "fonts still visible" >&2; exit 97; fi
exec "$@""#;
    let probe = Command::new("unshare")
        .args(["--mount", "--", "mount", "-t", "tmpfs", "tmpfs", "/usr/share/fonts"])
        .output();
    if !probe.as_ref().is_ok_and(|o| o.status.success()) {
        let why =
            probe.map_or_else(|e| e.to_string(), |o| String::from_utf8_lossy(&o.stderr).trim().to_owned());
        eprintln!("skipped: hiding the system fonts needs `unshare --mount` as root ({why})");
        return None;
    }
    let out = Command::new("unshare")
        .args(["--mount", "--", "sh", "-c", HIDE, "sh", env!("CARGO_BIN_EXE_local-vector-search-mcp")])
        .env_remove("CLAUDE_PROJECT_DIR")
        .env_remove("LVS_PDF_FONT")
        .env_remove("LVS_PDF_SERIF_FONT")
        .env_remove("LVS_PDF_MONO_FONT")
        .env("RUST_LOG", "warn")
        .arg("--project-root")
        .arg(project.root())
        .args(["--embedding-provider", "none"])
        .args(args)
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(97), "the font folders could not be hidden");
    Some(out)
}

#[test]
fn without_any_installed_font_the_built_in_fonts_make_a_japanese_book() {
    let project = Project::from_fixture("pdf");
    let Some(out) = run_without_system_fonts(&project, &["pdf", "book.md", "--style", "classic"]) else {
        return;
    };
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let file = project.root().join("book.pdf");
    let text = poppler("pdftotext", &["-enc", "UTF-8"], &file).unwrap_or_default();
    assert!(squeeze(&body_text(&text)).contains(&squeeze(LONG_PARAGRAPH)), "{text}");
    for needle in ["はじめに", "検索サーバー運用ガイド", "defaultMode: hybrid"] {
        assert!(text.contains(needle), "'{needle}' missing:\n{text}");
    }
    let fonts = pdffonts(&file);
    assert_every_font_embedded(&fonts, "no system fonts");
    assert!(fonts.contains("+IPAexGothic") && fonts.contains("+IPAGothic"), "{fonts}");
    // The installed mincho was hidden too: classic falls back to the gothic face.
    assert!(!fonts.contains("Mincho"), "{fonts}");
}

/// `n` paragraphs of Japanese text (enough to fill pages).
fn filler(topic: &str, n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "{topic}について説明します（段落{i}）。日本語の本文は両端をそろえて組まれ、読み手は行の長さが一定であることを期待します。この段落はページを埋めるための文章です。\n\n"
            )
        })
        .collect()
}

fn multi_chapter_book() -> (String, Vec<&'static str>) {
    let entries =
        vec!["第1章　はじめに", "準備", "最初の一歩", "第2章　所有権", "所有権の規則", "第3章　構造体"];
    let mut md = String::from("---\ntitle: テストの本\ndate: 2024-05-06\n---\n\n");
    md.push_str(&format!("# {}\n\n{}", entries[0], filler("導入", 6)));
    md.push_str(&format!("## {}\n\n{}", entries[1], filler("準備", 14)));
    md.push_str(&format!("## {}\n\n{}", entries[2], filler("最初", 8)));
    md.push_str(&format!("# {}\n\n{}", entries[3], filler("所有権", 4)));
    md.push_str(&format!("## {}\n\n{}", entries[4], filler("規則", 10)));
    md.push_str(&format!("# {}\n\n{}", entries[5], filler("構造体", 5)));
    (md, entries)
}

fn page_text(file: &Path, page: usize) -> String {
    let p = page.to_string();
    poppler("pdftotext", &["-f", &p, "-l", &p, "-layout", "-enc", "UTF-8"], file).unwrap_or_default()
}

#[test]
fn a_book_with_chapters_opens_with_a_table_of_contents_that_links_to_them() {
    let project = Project::empty();
    let (md, entries) = multi_chapter_book();
    project.write("book.md", &md);
    project.ok(&["pdf", "book.md", "--style", "classic"]);
    let file = project.root().join("book.pdf");
    let info = pdfinfo(&file);
    assert!(info.lines().any(|l| l.starts_with("Title:") && l.trim_end().ends_with(" テストの本")), "{info}");
    assert!(info.contains("CreationDate:") && info.contains("2024"), "the front matter's date: {info}");
    let doc = lopdf::Document::load(&file).unwrap();
    let catalog = doc.catalog().unwrap();
    assert_eq!(catalog.get(b"Lang").unwrap().as_str().unwrap(), b"ja");
    let pages = doc.get_pages();
    let number_of: std::collections::HashMap<lopdf::ObjectId, u32> =
        pages.iter().map(|(n, id)| (*id, *n)).collect();
    let toc = page_text(&file, 1);
    assert!(toc.contains("目次"), "page 1 is not the 目次:\n{toc}");
    // The links of page 1, top to bottom, one per entry.
    let page1 = doc.get_dictionary(pages[&1]).unwrap();
    let mut links: Vec<(f32, u32)> = page1
        .get(b"Annots")
        .and_then(lopdf::Object::as_array)
        .unwrap()
        .iter()
        .map(|a| {
            let annot = doc.get_dictionary(a.as_reference().unwrap()).unwrap();
            let rect = annot.get(b"Rect").unwrap().as_array().unwrap();
            let top = rect[3].as_float().unwrap();
            let dest = annot.get(b"Dest").unwrap().as_array().unwrap();
            (top, number_of[&dest[0].as_reference().unwrap()])
        })
        .collect();
    links.sort_by(|a, b| b.0.total_cmp(&a.0));
    assert_eq!(links.len(), entries.len(), "one link per entry:\n{toc}");
    let toc_lines: Vec<&str> = toc.lines().filter(|l| !l.trim().is_empty()).collect();
    for ((_, target), title) in links.iter().zip(&entries) {
        let target_text = page_text(&file, *target as usize);
        assert!(
            squeeze(&target_text).contains(&squeeze(title)),
            "'{title}' is not on page {target}:\n{target_text}"
        );
        // The number printed in the 目次 is the body's page number (the 目次 page is i).
        let line = toc_lines
            .iter()
            .find(|l| squeeze(l).starts_with(&squeeze(title)))
            .unwrap_or_else(|| panic!("{title} not in:\n{toc}"));
        let printed: u32 = line.split_whitespace().last().unwrap().trim_start_matches('・').parse().unwrap();
        assert_eq!(printed + 1, *target, "{line}");
    }
    // Chapters start on new pages in the classic style: the 目次 points at three different pages.
    let chapter_pages: std::collections::BTreeSet<u32> = [0, 3, 5].iter().map(|&i| links[i].1).collect();
    assert_eq!(chapter_pages.len(), 3);
    // The running header names the chapter on a page inside it (not on its opening page).
    let inside = links[0].1 + 1;
    assert!(inside < links[3].1, "chapter 1 spans more than one page");
    let head = page_text(&file, inside as usize);
    let first_line = head.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    assert!(
        squeeze(first_line).contains(&squeeze(entries[0])),
        "running header of page {inside}: {first_line}"
    );

    // Turned off: one page fewer, and the book starts with its first chapter.
    project.ok(&["pdf", "book.md", "--style", "classic", "--no-toc", "--out", "plain.pdf"]);
    let plain = project.root().join("plain.pdf");
    assert_eq!(page_count(&pdfinfo(&plain)) + 1, page_count(&info));
    assert!(!page_text(&plain, 1).contains("目次"));
}

#[test]
fn an_svg_figure_of_the_rust_book_is_drawn_as_a_picture() {
    let Some(dir) = crate::support::shared_or_skip("corpora/rust-book-ja/src/img") else { return };
    let project = Project::empty();
    std::fs::create_dir_all(project.root().join("img")).unwrap();
    std::fs::copy(dir.join("trpl04-01.svg"), project.root().join("img/trpl04-01.svg")).unwrap();
    project.write(
        "fig.md",
        "# 図\n\nメモリ上の文字列:\n\n<img alt=\"メモリ上の文字列\" src=\"img/trpl04-01.svg\" class=\"center\" style=\"width: 50%;\" />\n\n図の後の文。\n",
    );
    let out = project.run(&["pdf", "fig.md", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["warnings"], json!([]), "the SVG is not a placeholder: {result}");
    let file = project.root().join("fig.pdf");
    let list = poppler("pdfimages", &["-list"], &file).unwrap_or_default();
    assert_eq!(
        list.lines().skip(2).filter(|l| l.split_whitespace().nth(2) == Some("image")).count(),
        1,
        "{list}"
    );
    // The rendered page: the figure's region has drawn lines and text (dark pixels on white),
    // where a placeholder would be a nearly empty box.
    let prefix = project.root().join("page");
    let status = Command::new("pdftoppm")
        .args(["-png", "-r", "80", "-f", "1", "-l", "1", "-gray"])
        .arg(&file)
        .arg(&prefix)
        .status()
        .unwrap();
    assert!(status.success());
    let png = std::fs::read_dir(project.root())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name().unwrap().to_string_lossy().starts_with("page")
                && p.extension().is_some_and(|x| x == "png")
        })
        .unwrap();
    let img = image::open(&png).unwrap().to_luma8();
    // The figure sits between the heading and the last line: the middle band of the page.
    let (w, h) = img.dimensions();
    let band: Vec<f64> = img
        .enumerate_pixels()
        .filter(|(_, y, _)| *y > h / 6 && *y < h / 2)
        .map(|(x, _, p)| if x < w { f64::from(p.0[0]) } else { 255.0 })
        .collect();
    let mean = band.iter().sum::<f64>() / band.len() as f64;
    let var = band.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / band.len() as f64;
    let dark = band.iter().filter(|v| **v < 128.0).count() as f64 / band.len() as f64;
    assert!(
        var.sqrt() > 25.0 && dark > 0.01,
        "the figure region looks empty (sd {:.1}, dark {:.3})",
        var.sqrt(),
        dark
    );
}
