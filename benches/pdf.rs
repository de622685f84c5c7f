//! PDF export benchmark: a whole book through `export::render_pdf` (`docs/performance.md`).
//! Run with `cargo bench --bench pdf [-- BOOK_DIR]` (release profile).
//!
//! The book is every Markdown file of `../shared/corpora/rust-book-ja/src` (or BOOK_DIR, or
//! `LVS_BENCH_BOOK`) concatenated in file-name order, images resolved against that folder.
//! Measured: Markdown parse + layout + PDF writing for A5 / compact / standard of one chapter
//! (`ch04-01-what-is-ownership.md`, the first render, which includes choosing and loading the
//! fonts, then again warm), then of the whole book, with the process's peak RSS (`VmHWM`) after
//! it, then the whole book in every style; wall time, pages, PDF bytes. No assertions.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::time::Instant;

use lvs::export::{PageFormat, PdfOptions, Profile, StyleName, render_pdf};
use serde_json::json;

mod common;
use common::{machine, proc_status_kb};

const DEFAULT_BOOK: &str = "../shared/corpora/rust-book-ja/src";
/// The chapter timed alone (when the book has it).
const CHAPTER: &str = "ch04-01-what-is-ownership.md";

fn markdown_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "md") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn main() {
    let dir = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .or_else(|| std::env::var("LVS_BENCH_BOOK").ok())
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(DEFAULT_BOOK));
    let files = markdown_files(&dir);
    if files.is_empty() {
        eprintln!("no Markdown under {}; pass a book folder", dir.display());
        return;
    }
    let mut book = String::new();
    for f in &files {
        book.push_str(&std::fs::read_to_string(f).unwrap_or_default());
        book.push_str("\n\n");
    }
    let rss_before = proc_status_kb("VmRSS");
    let mut load = |src: &str| -> Result<Vec<u8>, String> {
        if src.contains("://") || src.starts_with('/') {
            return Err("remote".into());
        }
        std::fs::read(dir.join(src)).map_err(|e| e.to_string())
    };
    let mut results = Vec::new();
    let chapter = std::fs::read_to_string(dir.join(CHAPTER)).ok();
    let mut run =
        |book: &str, style: StyleName, label: &str, load: &mut dyn FnMut(&str) -> Result<Vec<u8>, String>| {
            let options = PdfOptions {
                format: PageFormat::A5,
                style,
                profile: Profile::Standard,
                fallback_title: "book".into(),
                toc: true,
            };
            let start = Instant::now();
            let out = render_pdf(book, &options, load).expect("render");
            let secs = start.elapsed().as_secs_f64();
            let pages_per_s = out.pages as f64 / secs;
            println!(
                "{label:<24} {:>6} pages {:>8.2} s {:>7.0} pages/s {:>8.1} MiB  warnings {}",
                out.pages,
                secs,
                pages_per_s,
                out.bytes.len() as f64 / 1048576.0,
                out.warnings.len()
            );
            results
                .push(json!({"style": style.as_str(), "label": label, "pages": out.pages, "seconds": secs,
            "bytes": out.bytes.len(), "warnings": out.warnings.len(), "peakRssKb": proc_status_kb("VmHWM")}));
        };
    println!("book: {} files, {} bytes of Markdown", files.len(), book.len());
    if let Some(chapter) = &chapter {
        run(chapter, StyleName::Compact, "chapter (first, +fonts)", &mut load);
        run(chapter, StyleName::Compact, "chapter", &mut load);
        println!("peak RSS after the chapter {:.0} MiB", proc_status_kb("VmHWM") as f64 / 1024.0);
    }
    run(&book, StyleName::Compact, "book compact", &mut load);
    println!("peak RSS after the whole book {:.0} MiB", proc_status_kb("VmHWM") as f64 / 1024.0);
    for style in StyleName::ALL {
        run(&book, style, style.as_str(), &mut load);
    }
    let peak = proc_status_kb("VmHWM");
    println!(
        "peak RSS {:.0} MiB (before rendering {:.0} MiB)",
        peak as f64 / 1024.0,
        rss_before as f64 / 1024.0
    );
    println!(
        "{}",
        json!({"bench": "pdf", "files": files.len(), "markdownBytes": book.len(), "runs": results,
            "peakRssKb": peak, "machine": machine()})
    );
}
