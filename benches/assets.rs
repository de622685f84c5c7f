//! Asset tools benchmark (`cargo bench --bench assets`): what `kb_load_image`,
//! `kb_download_file` and `kb_list_images` cost on large inputs, through the engine.
//!
//! (a) `kb_load_image` of a 20 MiB PNG-signature file (read, SHA-256, signature check);
//! (b) `kb_download_file` of the same file;
//! (c) `kb_load_image` of a 1024×1024 two-frame GIF (decode the first frame, encode PNG);
//! (d) `kb_list_images` over 5,000 images in 50 folders, all pages of 200;
//! (e) one `kb_list_images` page of 200 (the first, and one from the middle), warm: what a
//!     client waits for per page (target under 30 ms, issue #28);
//! (f) the listing alone: a walk of the root (what every page did before issue #28, the
//!     same-run baseline) and the cached listing (now).
//!
//! Nothing is asserted: numbers are printed (median of 5 runs; (e) median of 25), never
//! enforced, then one line of JSON with the machine and its load average.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::time::{Duration, Instant};

use lvs::config::{CliOverrides, EmbeddingProvider, load};
use lvs::engine::Engine;
use lvs::wire::{AssetPathRequest, ListImagesRequest};
use serde_json::json;

mod common;

fn median(mut runs: Vec<Duration>) -> Duration {
    runs.sort();
    runs[runs.len() / 2]
}

fn time(label: &str, f: impl FnMut()) -> f64 {
    time_n(label, 5, f)
}

fn time_n(label: &str, n: usize, mut f: impl FnMut()) -> f64 {
    let runs: Vec<Duration> = (0..n)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    let ms = median(runs).as_secs_f64() * 1000.0;
    println!("{label}: median {ms:.1} ms");
    ms
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("images")).unwrap();
    let mut big = vec![0u8; 20 * 1024 * 1024];
    big[..8].copy_from_slice(&[0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A]);
    std::fs::write(root.join("images/big.png"), &big).unwrap();

    let mut gif = Vec::new();
    {
        use image::codecs::gif::GifEncoder;
        use image::{Delay, Frame, Rgba, RgbaImage};
        let first = RgbaImage::from_fn(1024, 1024, |x, y| Rgba([(x % 256) as u8, (y % 256) as u8, 128, 255]));
        let second = RgbaImage::from_pixel(1024, 1024, Rgba([0, 255, 0, 255]));
        GifEncoder::new(&mut gif)
            .encode_frames(vec![
                Frame::from_parts(first, 0, 0, Delay::from_numer_denom_ms(100, 1)),
                Frame::from_parts(second, 0, 0, Delay::from_numer_denom_ms(100, 1)),
            ])
            .unwrap();
    }
    std::fs::write(root.join("images/anim.gif"), &gif).unwrap();
    for folder in 0..50 {
        let d = root.join(format!("gallery/f{folder:02}"));
        std::fs::create_dir_all(&d).unwrap();
        for i in 0..100 {
            std::fs::write(d.join(format!("img{i:03}.png")), b"\x89PNG\r\n\x1a\n").unwrap();
        }
    }

    let overrides = CliOverrides {
        project_root: Some(root.to_path_buf()),
        embedding_provider: Some(EmbeddingProvider::None),
        ..CliOverrides::default()
    };
    let engine = Engine::open(load(&overrides, &|_| None, root).unwrap()).unwrap();
    let path = |p: &str| AssetPathRequest { path: p.to_owned() };

    println!("gif: {} bytes", gif.len());
    let load_png = time("(a) kb_load_image 20 MiB PNG", || {
        engine.load_image(&path("images/big.png")).unwrap();
    });
    let download = time("(b) kb_download_file 20 MiB", || {
        engine.download_file(&path("images/big.png")).unwrap();
    });
    let gif_png = time("(c) kb_load_image 1024x1024 GIF -> PNG", || {
        engine.load_image(&path("images/anim.gif")).unwrap();
    });
    let all_pages = time("(d) kb_list_images 5,002 images, all pages of 200", || {
        let mut cursor = None;
        let mut n = 0;
        loop {
            let page = engine
                .list_images(&ListImagesRequest {
                    cursor: cursor.take(),
                    page_size: Some(200),
                    max_bytes: None,
                })
                .unwrap();
            n += page.images.len();
            match page.next_cursor {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        assert_eq!(n, 5002);
    });
    let page = |cursor: Option<String>| ListImagesRequest { cursor, page_size: Some(200), max_bytes: None };
    let middle = engine.list_images(&page(None)).unwrap().next_cursor;
    let first = time_n("(e) kb_list_images one page of 200, first", 25, || {
        engine.list_images(&page(None)).unwrap();
    });
    let mid = time_n("(e) kb_list_images one page of 200, second", 25, || {
        engine.list_images(&page(middle.clone())).unwrap();
    });
    // The same-run baseline: the listing as every page built it before issue #28 (a walk of the
    // root, then the image filter), against the cached listing a page uses now.
    let walk = time_n("(f) listing by a walk of the root (before)", 25, || {
        let all = engine.workspace().list_files(None, None).unwrap();
        let n = all
            .iter()
            .filter(|f| lvs::assets::ImageFormat::from_file_name(f.path.file_name()).is_some())
            .count();
        assert_eq!(n, 5002);
    });
    let cached = time_n("(f) cached listing (now)", 25, || {
        assert_eq!(lvs::assets::list_image_files(engine.workspace()).unwrap().len(), 5002);
    });
    println!(
        "{}",
        json!({"bench": "assets", "images": 5002, "load_image_20mib_ms": load_png, "download_20mib_ms": download,
               "gif_to_png_ms": gif_png, "list_all_pages_ms": all_pages, "list_page_first_ms": first,
               "list_page_second_ms": mid, "listing_walk_ms": walk, "listing_cached_ms": cached,
               "build": if cfg!(debug_assertions) { "debug" } else { "release" }, "machine": common::machine()})
    );
}
