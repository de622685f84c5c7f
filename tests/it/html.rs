//! `export-html` and `build-site` end to end (`docs/reference/catalog-spec.md` §8.2, §8.3, scenario
//! 71), the self-contained guarantee over every produced file (§7.7), determinism, a whole corpus
//! as a site, and a real browser: headless Chromium opens an exported Japanese document and a built
//! site with the network disabled, checks that every embedded image loaded and saves screenshots
//! (light, dark, narrow) outside the repository.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::{Project, bin};

/// A PNG of `w` × `h` pixels: a blue-to-green gradient with a dark bar, so a screenshot shows
/// whether it loaded.
fn png(w: u32, h: u32) -> Vec<u8> {
    let img = image::RgbImage::from_fn(w, h, |x, y| {
        if y > h / 3 && y < h / 3 + h / 8 {
            image::Rgb([40, 40, 60])
        } else {
            image::Rgb([30, (40 + 200 * x / w) as u8, (230 - 150 * y / h) as u8])
        }
    });
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

/// Fixture F1 (`docs/reference/catalog-spec.md` §11.1) with the index of §4.2; `lvsm.yaml` inside
/// the root.
fn f1() -> Project {
    let p = Project::empty();
    let spec_index = INDEX;
    p.write("docs/index.yaml", spec_index);
    p.write(
        "docs/設計/arch.md",
        "# アーキテクチャ\n\n全体は [API](../guide/api.md#ツールの一覧) を見る。\n\n## 依存の向き\n\n![構成図](../../images/arch.png)\n",
    );
    p.write("docs/guide/api.md", "# API リファレンス\n\n## ツールの一覧\n\n本文。\n");
    p.write("docs/guide/api.en.md", "# API reference\n\nSee [notes](../notes.md).\n");
    p.write("docs/notes.md", "# 開発メモ\n\n全体構成の図は後で直す。\n");
    p.write("docs/draft.md", "# 下書き\n");
    std::fs::create_dir_all(p.root().join("images")).unwrap();
    std::fs::write(p.root().join("images/arch.png"), png(1, 1)).unwrap();
    p.write(
        "lvsm.yaml",
        "knowledgeBase:\n  root: .\n  allowWrites: true\ncatalog:\n  index: docs/index.yaml\n  scan: [\"docs/**/*.md\"]\n  build:\n    include: [\"docs/guide/*.md\"]\n    out: dist/guide.html\n    title: 製品ガイド\n",
    );
    p
}

const INDEX: &str = "# 文書の索引。kb_update_index でも書き換える。\nversion: 1\ndocs:\n  - id: arch\n    path: 設計/arch.md\n    title: アーキテクチャ\n  - id: api\n    path: guide/api.md\n    title: API リファレンス\n  - id: api-en\n    path: guide/api.en.md\n    title: API reference (English)\n  - id: notes\n    path: notes.md\n    title: 開発メモ\n";

/// Runs the binary in `cwd` with the project's `lvsm.yaml`.
fn run_in(p: &Project, cwd: &Path, args: &[&str]) -> Output {
    bin()
        .current_dir(cwd)
        .arg("--project-root")
        .arg(p.root())
        .arg("--config")
        .arg(p.root().join("lvsm.yaml"))
        .args(["--embedding-provider", "none"])
        .args(args)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Every file under the root with its bytes (the index folder aside).
fn snapshot(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.file_name().is_some_and(|n| n == ".local-vector-search-mcp") {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push((path.clone(), std::fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// Resource references of a page that would make a request (`docs/reference/catalog-spec.md` §7.7):
/// every `src`, `srcset`, `poster`, `<link href>`, `@import` and CSS `url(` whose value is not a
/// `data:` URI or an in-page or relative local reference.
fn external_refs(html: &str) -> Vec<String> {
    let lower = html.to_ascii_lowercase();
    let mut values: Vec<String> = Vec::new();
    let value_at = |at: usize| -> String {
        let rest = &html[at..];
        match rest.chars().next() {
            Some(q @ ('"' | '\'')) => rest[1..].split(q).next().unwrap_or("").to_owned(),
            _ => rest.split(|c: char| c.is_whitespace() || c == '>').next().unwrap_or("").to_owned(),
        }
    };
    for attr in ["src=", "srcset=", "poster="] {
        for (at, _) in lower.match_indices(attr) {
            if at > 0 && lower.as_bytes()[at - 1].is_ascii_whitespace() {
                let v = value_at(at + attr.len());
                if attr == "srcset=" {
                    values.extend(v.split(',').map(|s| s.split_whitespace().next().unwrap_or("").to_owned()));
                } else {
                    values.push(v);
                }
            }
        }
    }
    for (at, _) in lower.match_indices("<link") {
        let tag_end = lower[at..].find('>').map_or(lower.len(), |e| at + e);
        match lower[at..tag_end].find(" href=") {
            Some(h) => values.push(value_at(at + h + 6)),
            None => values.push("<link> without href".to_owned()),
        }
    }
    for (at, _) in lower.match_indices("url(") {
        let v = html[at + 4..].split(')').next().unwrap_or("").trim().trim_matches(['"', '\'']).to_owned();
        values.push(v);
    }
    for (at, _) in lower.match_indices("@import") {
        values.push(html[at..].chars().take(60).collect());
    }
    values
        .into_iter()
        .filter(|v| {
            let l = v.trim().to_ascii_lowercase();
            let scheme = l.find(':').is_some_and(|i| {
                i > 1 && l[..i].chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
            });
            !l.starts_with("data:")
                && !l.starts_with('#')
                && (l.starts_with("//") || scheme || l.starts_with('@') || l.starts_with('<'))
        })
        .collect()
}

#[test]
fn the_resource_check_finds_every_kind_of_external_reference() {
    let page = r#"<img src="https://x/a.png"><link rel="stylesheet" href="//cdn/a.css"><style>@import "b.css"; p{background:url(http://x/c.png)}</style><video poster='http://x/p.jpg'></video><img srcset="a.png 1x, https://x/b.png 2x"><img src="data:image/png;base64,AA"><a href="https://example.com">ok</a><img src="local.png">"#;
    let found = external_refs(page);
    assert_eq!(found.len(), 6, "{found:?}");
    assert!(
        external_refs("<a href=\"https://example.com\">x</a><img src=\"data:image/png;base64,AA\">")
            .is_empty()
    );
}

#[test]
fn cli_export_and_build_print_paths_and_warnings() {
    let p = f1();
    let out = run_in(&p, p.root(), &["export-html", "docs/設計/arch.md"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "docs/設計/arch.html\n");
    assert_eq!(text(&out.stderr), "");
    let html = std::fs::read_to_string(p.root().join("docs/設計/arch.html")).unwrap();
    assert!(html.starts_with("<!doctype html>\n<html lang=\"ja\">"));
    assert!(
        html.contains("href=\"../guide/api.html#ツールの一覧\"") && html.contains("data:image/png;base64,")
    );
    assert_eq!(external_refs(&html), Vec::<String>::new());

    // Relative to the working directory, and not gated by allowWrites.
    std::fs::write(
        p.root().join("lvsm.yaml"),
        std::fs::read_to_string(p.root().join("lvsm.yaml"))
            .unwrap()
            .replace("allowWrites: true", "allowWrites: false"),
    )
    .unwrap();
    let out =
        run_in(&p, &p.root().join("docs"), &["export-html", "guide/api.md", "--out", "../site/api.html"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "site/api.html\n");

    let before = snapshot(p.root());
    let out = run_in(&p, p.root(), &["export-html", "docs/none.md"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), "");
    assert_eq!(
        text(&out.stderr),
        "error: `docs/none.md` was not found; pass an existing root-relative Markdown path.\n"
    );
    assert_eq!(snapshot(p.root()), before, "a failed export writes nothing");

    let out = run_in(&p, p.root(), &["build-site"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "dist/guide.html (2 documents)\n");
    assert_eq!(
        text(&out.stderr),
        "warning: docs/guide/api.en.md:3: link target `../notes.md` is not part of the build; add it to build.include or link elsewhere\n"
    );
    let site = std::fs::read_to_string(p.root().join("dist/guide.html")).unwrap();
    assert!(site.contains("<article id=\"api-en\">") && site.contains("id=\"api--ツールの一覧\""));
    assert_eq!(external_refs(&site), Vec::<String>::new());
}

#[test]
fn build_documents_follow_the_patterns_then_code_point_order_each_once() {
    let p = f1();
    p.write("docs/Zeta.md", "# Zeta\n");
    let config = std::fs::read_to_string(p.root().join("lvsm.yaml")).unwrap().replace(
        "include: [\"docs/guide/*.md\"]",
        "include: [\"docs/guide/api.md\", \"docs/**/*.md\"]\n    exclude: [\"docs/draft.md\", \"docs/設計\"]",
    );
    std::fs::write(p.root().join("lvsm.yaml"), config).unwrap();
    let out = run_in(&p, p.root(), &["build-site"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "dist/guide.html (4 documents)\n");
    let site = std::fs::read_to_string(p.root().join("dist/guide.html")).unwrap();
    let order: Vec<&str> =
        site.split("<article id=\"").skip(1).map(|a| a.split('"').next().unwrap()).collect();
    // api.md first (its own pattern), then docs/**/*.md by code points: `Z` < `g` < `n`.
    assert_eq!(order, ["api", "docs--Zeta", "api-en", "notes"]);
    // Links between included documents are in-page now: no warning about notes.md.
    assert_eq!(text(&out.stderr), "");
}

#[test]
fn identical_inputs_give_identical_bytes() {
    let p = f1();
    for args in [&["export-html", "docs/設計/arch.md"][..], &["build-site"][..]] {
        let target = if args[0] == "build-site" { "dist/guide.html" } else { "docs/設計/arch.html" };
        assert!(run_in(&p, p.root(), args).status.success());
        let first = std::fs::read(p.root().join(target)).unwrap();
        assert!(run_in(&p, p.root(), args).status.success());
        assert_eq!(std::fs::read(p.root().join(target)).unwrap(), first, "{args:?}");
    }
}

#[test]
fn hostile_raw_html_leaves_no_external_reference() {
    let p = f1();
    p.write(
        "docs/guide/evil.md",
        "# Evil\n\n<script src=\"https://evil.example/x.js\"></script>\n\n<link rel=\"stylesheet\" href=\"https://evil.example/a.css\">\n\n<style>@import url(https://evil.example/b.css); body{background:url(https://evil.example/c.png)}</style>\n\n<iframe src=\"https://evil.example\"></iframe>\n\n<img src=\"https://evil.example/d.png\" srcset=\"https://evil.example/e.png 2x\" alt=\"d\">\n\n<video poster=\"https://evil.example/p.jpg\" src=\"https://evil.example/v.mp4\"></video>\n\n<div style=\"background:url(https://evil.example/f.png)\" onclick=\"x()\">text</div>\n\n![remote](https://evil.example/g.png) ![proto](//evil.example/h.png)\n\n<a href=\"javascript:alert(1)\">js</a> <object data=\"https://evil.example/o\"></object> <embed src=\"https://evil.example/e\">\n",
    );
    let out = run_in(&p, p.root(), &["export-html", "docs/guide/evil.md"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let html = std::fs::read_to_string(p.root().join("docs/guide/evil.html")).unwrap();
    assert_eq!(external_refs(&html), Vec::<String>::new(), "{html}");
    assert!(!html.contains("<script") && !html.contains("javascript:") && !html.contains("onclick"));
    let stderr = text(&out.stderr);
    for removed in [
        "`<script>`",
        "`<link>`",
        "`<style>`",
        "`<iframe>`",
        "`srcset`",
        "`<video>`",
        "`style`",
        "`onclick`",
        "`javascript:`",
        "`<object>`",
        "`<embed>`",
    ] {
        assert!(stderr.contains(removed), "{removed}: {stderr}");
    }
    assert!(run_in(&p, p.root(), &["build-site"]).status.success());
    let site = std::fs::read_to_string(p.root().join("dist/guide.html")).unwrap();
    assert_eq!(external_refs(&site), Vec::<String>::new());
}

#[test]
fn a_whole_corpus_builds_into_one_self_contained_site() {
    let Some(dir) = crate::support::shared_or_skip("corpora/rust-book-ja") else { return };
    let p = Project::empty();
    crate::support::copy_tree(&dir, p.root());
    p.write("mdmark.config.yaml", "build:\n  include: [\"src/*.md\"]\n  out: dist/book.html\n  title: The Rust Programming Language 日本語版\n");
    std::fs::create_dir_all(p.root().join(".git")).unwrap();
    let out = bin()
        .arg("--project-root")
        .arg(p.root())
        .args(["--embedding-provider", "none", "build-site"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let docs = std::fs::read_dir(dir.join("src"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "md"))
        .count();
    assert_eq!(text(&out.stdout), format!("dist/book.html ({docs} documents)\n"));
    let site = std::fs::read_to_string(p.root().join("dist/book.html")).unwrap();
    assert_eq!(external_refs(&site), Vec::<String>::new());
    assert_eq!(site.matches("<article id=").count(), docs);
}

// ---------------------------------------------------------------------------------------------
// A real browser.

/// Chromium, if installed (`.ci/setup` installs Debian's `chromium`).
fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"].iter().find_map(|name| {
        std::env::var_os("PATH")?.to_str()?.split(':').map(|d| Path::new(d).join(name)).find(|p| p.is_file())
    })
}

/// Whether `unshare -rn` (a private network namespace without interfaces) works here.
fn unshare_works() -> bool {
    Command::new("unshare").args(["-rn", "true"]).output().is_ok_and(|o| o.status.success())
}

/// Runs headless Chromium on `page` with no network: inside `unshare -rn` when possible, and in
/// any case with every host resolving to nothing and no proxy.
fn browse(chrome: &Path, profile: &Path, page: &Path, extra: &[&str]) -> Output {
    let mut cmd = if unshare_works() {
        let mut c = Command::new("unshare");
        c.args(["-rn"]).arg(chrome);
        c
    } else {
        Command::new(chrome)
    };
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        "--no-proxy-server",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--disable-background-networking",
        "--virtual-time-budget=5000",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(extra)
    .arg(format!("file://{}", page.display()));
    cmd.output().expect("chromium runs")
}

/// A test-only copy of `page` whose CSP allows one inline script that reports, after `load`,
/// how many images loaded and how many are broken (`data-images="ok N broken M"` on `<body>`).
fn with_image_probe(page: &Path, copy: &Path) {
    let html = std::fs::read_to_string(page).unwrap();
    let html = html
        .replace("style-src 'unsafe-inline'\">", "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">");
    let probe = "<script>window.addEventListener('load',function(){var ok=0,bad=0;for(const i of document.images){if(i.complete&&i.naturalWidth>0)ok++;else bad++;}document.body.setAttribute('data-images','ok '+ok+' broken '+bad);});</script>\n</body>";
    std::fs::write(copy, html.replacen("</body>", probe, 1)).unwrap();
}

/// The image report of a page in Chromium: (loaded, broken).
fn image_report(chrome: &Path, profile: &Path, page: &Path) -> (usize, usize) {
    let probe = page.with_extension("probe.html");
    with_image_probe(page, &probe);
    let out = browse(chrome, profile, &probe, &["--dump-dom"]);
    let dom = text(&out.stdout);
    let at = dom
        .find("data-images=\"ok ")
        .unwrap_or_else(|| panic!("no image report in the DOM; stderr: {}", text(&out.stderr)));
    let report: Vec<usize> =
        dom[at + 13..].split('"').next().unwrap().split(' ').filter_map(|w| w.parse().ok()).collect();
    (report[0], report[1])
}

/// Console lines of Chromium that report a blocked load (a Content Security Policy violation):
/// the page tried to reach something outside itself.
fn csp_violations(chrome: &Path, profile: &Path, page: &Path) -> Vec<String> {
    let out = browse(chrome, profile, page, &["--enable-logging=stderr", "--v=0", "--dump-dom"]);
    text(&out.stderr).lines().filter(|l| l.contains("Content Security Policy")).map(str::to_owned).collect()
}

/// Where the screenshots go: outside the repository, kept for a person to look at.
fn screenshot_dir() -> PathBuf {
    let dir = std::env::var_os("LVS_SCREENSHOT_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("lvs-html-screenshots"));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn screenshot(chrome: &Path, profile: &Path, page: &Path, name: &str, size: &str, dark: bool) -> PathBuf {
    let file = screenshot_dir().join(name);
    let _ = std::fs::remove_file(&file);
    let mut extra = vec![format!("--window-size={size}"), format!("--screenshot={}", file.display())];
    if dark {
        extra.push("--force-dark-mode".to_owned());
        extra.push("--blink-settings=preferredColorScheme=0".to_owned());
    }
    let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
    let out = browse(chrome, profile, page, &extra);
    assert!(file.is_file(), "no screenshot {name}: {}", text(&out.stderr));
    file
}

/// A Japanese document with what a reader notices: a table, code, a list, a quote, an image.
const SHOWCASE: &str = "---\ntitle: 検索サーバーの使い方\n---\n\nこのページは、書き出した HTML を実際のブラウザーで確かめるための文書です。段落はソースの中で\n折り返していますが、日本語の文字の間に余計な空白は入りません。\n\n## 設定の一覧\n\n| キー | 型 | 既定値 | 意味 |\n|:--|:-:|--:|---|\n| `html.lang` | 文字列 | `auto` | 書き出す HTML の言語 |\n| `html.toc` | 真偽値 | `true` | 目次を付けるかどうか |\n| `html.tocDepth` | 整数 | 3 | 目次に載せる見出しの深さ |\n\n## コードの例\n\n```rust\nfn main() {\n    let 名前 = \"世界\";\n    println!(\"こんにちは、{名前}！\");\n}\n```\n\n### 手順\n\n- [x] 表を書く\n- [ ] 図を描く\n- *強調*と**太字**と`コード`\n\n> [!NOTE]\n> 注記の例です。\n\n## 構成図\n\n![構成図](../../images/diagram.png)\n\n<img src=\"../../images/diagram.png\" alt=\"HTML の画像\" width=\"120\">\n";

#[test]
fn chromium_shows_an_export_and_a_site_with_every_image_and_no_network() {
    let Some(chrome) = chromium() else {
        crate::shared_dir::skip("chromium is not installed (.ci/setup installs Debian's `chromium` package)");
        return;
    };
    let p = f1();
    std::fs::write(p.root().join("images/diagram.png"), png(480, 200)).unwrap();
    p.write("docs/guide/showcase.md", SHOWCASE);
    let out = run_in(&p, p.root(), &["export-html", "docs/guide/showcase.md"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "", "the showcase has no broken reference");
    let out = run_in(&p, p.root(), &["build-site"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let profile = tempfile::tempdir().unwrap();
    let export = p.root().join("docs/guide/showcase.html");
    let site = p.root().join("dist/guide.html");

    assert_eq!(image_report(&chrome, profile.path(), &export), (2, 0), "both images of the export loaded");
    assert_eq!(image_report(&chrome, profile.path(), &site), (2, 0), "both images of the site loaded");
    // The probe can fail: a damaged image is reported as broken.
    let damaged = p.root().join("dist/damaged.html");
    let html = std::fs::read_to_string(&site).unwrap().replacen(
        "<img src=\"data:image/png;base64,",
        "<img src=\"data:image/png;base64,AAAA",
        1,
    );
    std::fs::write(&damaged, html).unwrap();
    assert_eq!(image_report(&chrome, profile.path(), &damaged), (1, 1));

    // The pages as written try to load nothing: no CSP violation is logged. The check can fail:
    // a page that asks for a remote image logs one.
    assert_eq!(csp_violations(&chrome, profile.path(), &export), Vec::<String>::new());
    assert_eq!(csp_violations(&chrome, profile.path(), &site), Vec::<String>::new());
    let leaky = p.root().join("dist/leaky.html");
    std::fs::write(
        &leaky,
        std::fs::read_to_string(&site).unwrap().replacen(
            "<main>",
            "<main><img src=\"https://example.com/x.png\">",
            1,
        ),
    )
    .unwrap();
    assert_eq!(csp_violations(&chrome, profile.path(), &leaky).len(), 1);

    // Screenshots for a person to look at (not compared here).
    let mut shots = vec![
        screenshot(&chrome, profile.path(), &export, "export-light.png", "1280,1600", false),
        screenshot(&chrome, profile.path(), &export, "export-dark.png", "1280,1600", true),
        screenshot(&chrome, profile.path(), &site, "site-light.png", "1280,1000", false),
        screenshot(&chrome, profile.path(), &site, "site-dark.png", "1280,1000", true),
    ];
    let open_nav = p.root().join("dist/open-nav.html");
    std::fs::write(
        &open_nav,
        std::fs::read_to_string(&site)
            .unwrap()
            .replace("class=\"nav-toggle\">", "class=\"nav-toggle\" checked>"),
    )
    .unwrap();
    shots.push(screenshot(&chrome, profile.path(), &open_nav, "site-narrow-open.png", "420,900", false));
    shots.push(screenshot(&chrome, profile.path(), &export, "export-narrow.png", "420,1400", false));
    eprintln!(
        "screenshots: {}",
        shots.iter().map(|s| s.display().to_string()).collect::<Vec<_>>().join(", ")
    );
}
