//! Link graph benchmark (`docs/performance.md`, "Link graph"). Run with
//! `cargo bench --bench links [-- CORPUS_DIR]` (release profile).
//!
//! (a) extraction alone: `markdown::scan_links` + `links::extract` over every file (the index-time
//!     work the graph adds on top of parsing, which the indexer does anyway), timed apart from
//!     `Document::parse`;
//! (b) the `links.bin` snapshot (the only stored copy; the same records as JSON for scale):
//!     encode + atomic write time and size;
//! (c) a reader loading the snapshot: `LinkGraph::read` + `LinkIndex::new`;
//! (d) "who links to X": incoming links of every document, depth 1 and 3; outgoing depth 1;
//! (e) the whole project's broken-link report, with counts by reason;
//! (f) end to end: a full reindex through `Engine::reindex` (which writes `links.bin`), then
//!     `Engine::links` cold (first call loads the snapshot) and warm;
//! (g) the size of that index by file kind (`links.bin`, `meta.redb`, tantivy's files by
//!     extension) and tantivy's own account per field (term dictionary, postings, positions,
//!     fieldnorms, fast fields; the document store as a whole).
//!
//! Environment: `LVS_BENCH_CORPUS` (default `../shared/corpora/visualstudio-docs-ja`).
//! No assertions: numbers are printed (human lines, then one line of JSON).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use lvs::config::{CliOverrides, EmbeddingProvider, load};
use lvs::engine::{Engine, ReindexOptions};
use lvs::links::{Direction, LinkGraph, LinkIndex, extract};
use lvs::markdown::Document;
use lvs::wire::{LinkDirection, LinksRequest};
use serde_json::json;

mod common;
use common::{Latency, machine, ms};

const DEFAULT_CORPUS: &str = "../shared/corpora/visualstudio-docs-ja";

fn markdown_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(p),
                Ok(t) if t.is_file() && p.extension().is_some_and(|x| x.eq_ignore_ascii_case("md")) => {
                    out.push(p)
                }
                _ => {}
            }
        }
    }
    out.sort();
    out
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn latency(label: &str, samples: &mut [Duration]) -> serde_json::Value {
    let l = Latency::of(samples);
    println!(
        "{label:<44} p50 {:>9.1} µs  p99 {:>9.1} µs  max {:>9.1} µs  ({} samples)",
        us(l.p50),
        us(l.p99),
        us(l.max),
        samples.len()
    );
    json!({"p50_us": us(l.p50), "p99_us": us(l.p99), "max_us": us(l.max), "mean_us": us(l.mean), "samples": samples.len()})
}

fn main() {
    let corpus = std::env::args()
        .nth(1)
        .filter(|a| !a.starts_with('-'))
        .or_else(|| std::env::var("LVS_BENCH_CORPUS").ok())
        .map_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(DEFAULT_CORPUS), PathBuf::from);
    let corpus = corpus.canonicalize().expect("the corpus directory");
    let files = markdown_files(&corpus);
    let texts: Vec<(String, String)> = files
        .iter()
        .map(|f| {
            let rel = f.strip_prefix(&corpus).unwrap().to_string_lossy().replace('\\', "/");
            let text = std::fs::read_to_string(f).unwrap_or_default();
            (rel, text.strip_prefix('\u{feff}').map(str::to_owned).unwrap_or(text))
        })
        .collect();
    let bytes: usize = texts.iter().map(|(_, t)| t.len()).sum();
    println!("corpus: {} files, {:.1} MB", texts.len(), bytes as f64 / 1e6);

    // (a) extraction, apart from parsing.
    let t = Instant::now();
    let docs: Vec<Document> = texts.iter().map(|(_, t)| Document::parse(t)).collect();
    let parse = t.elapsed();
    let t = Instant::now();
    let mut graph = LinkGraph::new(1);
    for ((rel, text), doc) in texts.iter().zip(&docs) {
        graph.docs.insert(rel.clone(), extract(text, doc));
    }
    let extraction = t.elapsed();
    let links: usize = graph.docs.values().map(|d| d.links.len()).sum();
    let anchors: usize = graph.docs.values().map(|d| d.anchors.len()).sum();
    println!(
        "(a) parse {:.0} ms; link extraction {:.0} ms ({:.0} % of parsing): {links} links, {anchors} anchors",
        ms(parse),
        ms(extraction),
        100.0 * extraction.as_secs_f64() / parse.as_secs_f64()
    );

    // (b) the snapshot (`links.bin`, the only stored copy), against the JSON of the same records.
    let json_bytes: usize = graph.docs.values().map(|d| serde_json::to_vec(d).unwrap().len()).sum();
    let t = Instant::now();
    let encoded = graph.encode().len();
    let encode = t.elapsed();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("links.bin");
    let mut writes = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        graph.write(&path).unwrap();
        writes.push(t.elapsed());
    }
    let snapshot_bytes = std::fs::metadata(&path).unwrap().len();
    let write = common::median(&writes);
    println!(
        "(b) links.bin {:.1} MB (the records as JSON: {:.1} MB), encoded in {:.0} ms; {:.1} MB written in {:.0} ms (median of 5)",
        encoded as f64 / 1e6,
        json_bytes as f64 / 1e6,
        ms(encode),
        snapshot_bytes as f64 / 1e6,
        ms(write)
    );

    // (c) a reader loads it.
    let mut loads = Vec::new();
    let mut index = None;
    for _ in 0..5 {
        let t = Instant::now();
        let g = LinkGraph::read(&path).unwrap();
        let read = t.elapsed();
        let i = LinkIndex::new(g);
        loads.push((read, t.elapsed()));
        index = Some(i);
    }
    let index = index.unwrap();
    loads.sort();
    let (read, load_total) = loads[loads.len() / 2];
    println!(
        "(c) load: read + parse {:.0} ms, with resolution and incoming map {:.0} ms",
        ms(read),
        ms(load_total)
    );

    // (d) queries.
    let root = corpus.clone();
    let mut known: BTreeMap<String, bool> = BTreeMap::new();
    let mut exists = |p: &str| *known.entry(p.to_owned()).or_insert_with(|| root.join(p).exists());
    let paths: Vec<String> = texts.iter().map(|(p, _)| p.clone()).collect();
    let mut run = |direction: Direction, depth: u8| {
        let mut samples = Vec::with_capacity(paths.len());
        let mut edges = 0usize;
        for p in &paths {
            let t = Instant::now();
            let found = black_box(index.traverse(p, direction, depth, &mut exists));
            samples.push(t.elapsed());
            edges += found.len();
        }
        (samples, edges)
    };
    let _ = run(Direction::Incoming, 1); // warm the existence cache
    let (mut s1, e1) = run(Direction::Incoming, 1);
    let incoming1 = latency("(d) incoming, depth 1, every document", &mut s1);
    let (mut s3, e3) = run(Direction::Incoming, 3);
    let incoming3 = latency("    incoming, depth 3", &mut s3);
    let (mut so, eo) = run(Direction::Outgoing, 1);
    let outgoing1 = latency("    outgoing, depth 1", &mut so);
    println!(
        "    edges per query: incoming {:.1}, depth 3 {:.1}, outgoing {:.1}",
        e1 as f64 / paths.len() as f64,
        e3 as f64 / paths.len() as f64,
        eo as f64 / paths.len() as f64
    );
    let most =
        paths.iter().max_by_key(|p| index.traverse(p, Direction::Incoming, 1, &mut exists).len()).unwrap();
    let most_count = index.traverse(most, Direction::Incoming, 1, &mut exists).len();
    println!("    most linked-to: {most} ({most_count} incoming links)");

    // (e) broken links.
    let t = Instant::now();
    let all = index.all(&mut exists);
    let report = t.elapsed();
    let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
    for e in all.iter().filter_map(|e| e.reason) {
        *reasons.entry(e.as_str()).or_default() += 1;
    }
    let md: Vec<_> =
        all.iter().filter(|e| !e.external && e.to.to_ascii_lowercase().ends_with(".md")).collect();
    let md_ok = md.iter().filter(|e| e.reason.is_none_or(|r| r.as_str() == "missing_anchor")).count();
    let md_files = md.iter().map(|e| e.from.as_str()).collect::<std::collections::BTreeSet<_>>().len();
    let external = all.iter().filter(|e| e.external).count();
    println!(
        "(e) whole-project report {:.0} ms: {} links ({external} external), broken {reasons:?}; .md links {} in {md_files} files, {md_ok} resolve",
        ms(report),
        all.len(),
        md.len()
    );

    // (f) end to end through the engine.
    let index_dir = tempfile::tempdir().unwrap();
    let overrides = CliOverrides {
        project_root: Some(corpus.clone()),
        storage_path: Some(index_dir.path().join("idx")),
        embedding_provider: Some(EmbeddingProvider::None),
        ..CliOverrides::default()
    };
    let loaded = load(&overrides, &|_| None, &corpus).expect("configuration");
    let engine = Engine::open(loaded).expect("engine");
    let t = Instant::now();
    engine.reindex(ReindexOptions::default(), &mut |_| {}).expect("reindex");
    let reindex = t.elapsed();
    let snapshot = std::fs::metadata(index_dir.path().join("idx/links.bin")).map(|m| m.len()).unwrap_or(0);
    let request = |p: &str| LinksRequest {
        path: Some(p.to_owned()),
        direction: Some(LinkDirection::Incoming),
        ..LinksRequest::default()
    };
    let t = Instant::now();
    engine.links(&request(most)).expect("links");
    let cold = t.elapsed();
    let mut warm: Vec<Duration> = paths
        .iter()
        .step_by(paths.len().div_ceil(500).max(1))
        .map(|p| {
            let t = Instant::now();
            black_box(engine.links(&request(p)).expect("links"));
            t.elapsed()
        })
        .collect();
    println!(
        "(f) full reindex {:.2} s, links.bin {:.1} MB; Engine::links cold {:.0} ms",
        reindex.as_secs_f64(),
        snapshot as f64 / 1e6,
        ms(cold)
    );
    let engine_warm = latency("    Engine::links incoming (warm)", &mut warm);
    let t = Instant::now();
    let broken = engine
        .links(&LinksRequest { broken_only: Some(true), limit: Some(1000), ..LinksRequest::default() })
        .expect("broken");
    let broken_page = t.elapsed();
    println!("    Engine::links brokenOnly first page {:.0} ms (total {})", ms(broken_page), broken.total);

    // (g) what the index is made of: bytes per file kind, and tantivy's own account per field.
    let idx = index_dir.path().join("idx");
    let parts = index_parts(&idx);
    println!(
        "(g) index {:.1} MB = {:.2}x the Markdown",
        parts.values().sum::<u64>() as f64 / 1e6,
        parts.values().sum::<u64>() as f64 / bytes as f64
    );
    for (part, n) in &parts {
        println!("    {part:<24} {:>8.2} MB", *n as f64 / 1e6);
    }
    let fields = field_usage(&idx.join("lexical"));
    for (what, n) in fields.iter().filter(|(w, _)| w.as_str() != "segments") {
        println!("    lexical {what:<32} {:>8.2} MB", *n as f64 / 1e6);
    }
    println!("    lexical segments: {}", fields.get("segments").copied().unwrap_or(0));

    let out = json!({
        "index_parts": parts, "lexical_fields": fields,
        "machine": machine(),
        "files": texts.len(), "bytes": bytes, "links": links, "anchors": anchors,
        "parse_ms": ms(parse), "extract_ms": ms(extraction),
        "snapshot_encoded_bytes": encoded, "json_bytes": json_bytes, "encode_ms": ms(encode),
        "snapshot_bytes": snapshot_bytes, "snapshot_write_ms": ms(write),
        "load_read_ms": ms(read), "load_total_ms": ms(load_total),
        "incoming_depth1": incoming1, "incoming_depth3": incoming3, "outgoing_depth1": outgoing1,
        "most_linked": {"path": most, "incoming": most_count},
        "report_ms": ms(report), "report_links": all.len(), "external": external, "broken": reasons,
        "md_links": md.len(), "md_link_files": md_files, "md_resolving": md_ok,
        "reindex_s": reindex.as_secs_f64(), "engine_snapshot_bytes": snapshot,
        "engine_cold_ms": ms(cold), "engine_warm": engine_warm, "engine_broken_page_ms": ms(broken_page),
    });
    println!("{out}");
}

/// Bytes of an index directory by part: each top-level file, and the tantivy files by extension.
fn index_parts(idx: &std::path::Path) -> std::collections::BTreeMap<String, u64> {
    let mut parts = std::collections::BTreeMap::new();
    for entry in std::fs::read_dir(idx).unwrap().flatten() {
        let meta = entry.metadata().unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if meta.is_dir() {
            for f in std::fs::read_dir(entry.path()).unwrap().flatten() {
                let ext =
                    f.path().extension().map_or("other".to_owned(), |e| e.to_string_lossy().into_owned());
                *parts.entry(format!("{name}/*.{ext}")).or_insert(0) += f.metadata().unwrap().len();
            }
        } else {
            parts.insert(name, meta.len());
        }
    }
    parts
}

/// tantivy's space usage summed over segments: per component and field, and the store.
fn field_usage(lexical: &std::path::Path) -> std::collections::BTreeMap<String, u64> {
    let index = tantivy::Index::open_in_dir(lexical).unwrap();
    let searcher = index.reader().unwrap().searcher();
    let usage = searcher.space_usage().unwrap();
    let mut out = std::collections::BTreeMap::new();
    for seg in usage.segments() {
        for (component, per) in [
            ("terms", seg.termdict()),
            ("postings", seg.postings()),
            ("positions", seg.positions()),
            ("fieldnorms", seg.fieldnorms()),
            ("fast", seg.fast_fields()),
        ] {
            for f in per.fields() {
                *out.entry(format!("{component} {}", f.field_name())).or_insert(0) += f.total().get_bytes();
            }
        }
        *out.entry("store (all stored fields)".to_owned()).or_insert(0) += seg.store().total().get_bytes();
    }
    out.insert("segments".to_owned(), usage.segments().len() as u64);
    out
}
