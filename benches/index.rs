//! Indexing and in-process query benchmark (`docs/reference/product.md` §6). Run with
//! `cargo bench --bench index [-- CORPUS_DIR]` (release profile).
//!
//! Every number is reported next to a baseline measured in the same process, so the ratios
//! survive a change of machine:
//!
//! (a) full lexical index through `Engine::reindex` into a fresh directory: wall time, files,
//!     chunks, size on disk, peak RSS (`VmHWM`) right after indexing;
//! (b) a no-op reindex (nothing changed);
//! (c) the physical floor: the same files parsed and chunked (timed on its own), then exactly
//!     the chunk texts and heading paths tokenised by a plain lindera `Segmenter` (IPADIC,
//!     normal mode) on 1 thread and on 2 threads;
//! (d) in-process `Engine::search` latency over 200 Japanese queries derived from the corpus;
//! (e) the chunk rows and the queries as JSONL for `benches/fts5_baseline.py`.
//!
//! Environment (all optional):
//! - `LVS_BENCH_CORPUS`: the corpus directory (default `../shared/corpora/visualstudio-docs-ja`,
//!   relative to the package root; a first positional argument wins);
//! - `LVS_BENCH_OUT`: directory for `chunks.jsonl`, `queries.jsonl` and `index.json`
//!   (default: a fresh directory under the system temp dir, printed);
//! - `LVS_BENCH_INDEX_DIR`: where to build the index (must be empty or absent; kept afterwards
//!   so `benches/mcp_latency.py` can reuse it). Default: a temp dir removed at the end;
//! - `LVS_BENCH_QUERY_PASSES`: timed passes over the 200 queries (default 5);
//! - `LVS_BENCH_REPEAT`: how many times the full index and each floor are timed (default 3);
//!   the medians are reported, every sample is in the JSON.
//!
//! Output: a human table, then one line of JSON (also written to `$LVS_BENCH_OUT/index.json`).
//! No assertions: targets are printed, never enforced (no timing checks in `cargo test`).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::borrow::Cow;
use std::collections::{BTreeSet, HashSet};
use std::fs;
use std::hint::black_box;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use lindera::mode::Mode;
use lindera::segmenter::Segmenter;
use lindera_dictionary::viterbi::Lattice;
use lvs::chunk::{ChunkOptions, chunk};
use lvs::config::{CliOverrides, EmbeddingProvider, load};
use lvs::engine::Engine;
use lvs::engine::ReindexOptions;
use lvs::markdown::{Document, ElementKind};
use lvs::workspace::GlobFilter;
use serde_json::json;

mod common;
use common::{Latency, cpu_secs, dir_size, lexical_request, machine, median, median_f, ms, proc_status_kb};

const DEFAULT_CORPUS: &str = "../shared/corpora/visualstudio-docs-ja";
const QUERY_COUNT: usize = 200;
const TOP_K: i64 = 10;

/// Threads of the concurrency measurement (8 clients).
const CONCURRENT_THREADS: usize = 8;

fn main() {
    if let Err(e) = run() {
        eprintln!("index bench failed: {e}");
        std::process::exit(1);
    }
}

type Res<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn run() -> Res<()> {
    // `cargo bench` passes `--bench` (and filters); the first argument that is not an option
    // is the corpus.
    let arg_corpus = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let corpus = arg_corpus
        .or_else(|| std::env::var("LVS_BENCH_CORPUS").ok())
        .unwrap_or_else(|| DEFAULT_CORPUS.to_owned());
    let corpus = fs::canonicalize(&corpus).map_err(|e| format!("corpus {corpus}: {e}"))?;
    let out_dir = match std::env::var_os("LVS_BENCH_OUT") {
        Some(d) => PathBuf::from(d),
        None => std::env::temp_dir().join(format!("lvs-bench-{}", std::process::id())),
    };
    fs::create_dir_all(&out_dir)?;
    let out_dir = fs::canonicalize(&out_dir)?;
    let (index_dir, keep_index) = match std::env::var_os("LVS_BENCH_INDEX_DIR") {
        Some(d) => (PathBuf::from(d), true),
        None => (out_dir.join("index-tmp"), false),
    };
    if index_dir.exists() && fs::read_dir(&index_dir)?.next().is_some() {
        return Err(format!("{} is not empty; remove it first", index_dir.display()).into());
    }
    fs::create_dir_all(&index_dir)?;
    let index_dir = fs::canonicalize(&index_dir)?;
    // Timed repetitions of the full index and of the floors; medians are reported.
    let repeat: usize =
        std::env::var("LVS_BENCH_REPEAT").ok().and_then(|s| s.parse().ok()).unwrap_or(3).max(1);
    let passes: usize =
        std::env::var("LVS_BENCH_QUERY_PASSES").ok().and_then(|s| s.parse().ok()).unwrap_or(5).max(1);

    eprintln!("corpus: {}", corpus.display());
    eprintln!("index:  {}", index_dir.display());
    eprintln!("out:    {}", out_dir.display());
    let rss_start = proc_status_kb("VmRSS");
    let load_start = fs::read_to_string("/proc/loadavg").unwrap_or_default().trim().to_owned();

    // ---------------------------------------------------------------- (a) full index
    let overrides = CliOverrides {
        project_root: Some(corpus.clone()),
        storage_path: Some(index_dir.clone()),
        embedding_provider: Some(EmbeddingProvider::None),
        ..Default::default()
    };
    let cwd = std::env::current_dir()?;
    let open_engine = |dir: &Path| -> Res<Engine> {
        let o = CliOverrides { storage_path: Some(dir.to_path_buf()), ..overrides.clone() };
        let loaded = load(&o, &|k| std::env::var(k).ok(), &cwd).map_err(|e| e.message)?;
        Ok(Engine::open(loaded).map_err(|e| e.message)?)
    };
    // `repeat` full indexes, each into a fresh directory; the last one is kept for (b) and (d).
    // Peak RSS is read after the first one (the process has done nothing else yet).
    let mut full_samples = Vec::new();
    let mut full_cpu_samples = Vec::new();
    let (mut hwm_after_index, mut rss_after_index) = (0, 0);
    let mut last = None;
    for i in 0..repeat {
        eprintln!("(a) full index {}/{repeat} ...", i + 1);
        let dir =
            if i + 1 == repeat { index_dir.clone() } else { index_dir.with_extension(format!("rep{i}")) };
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir)?;
        let engine = open_engine(&dir)?;
        let (t, c) = (Instant::now(), cpu_secs());
        let result = engine
            .reindex(ReindexOptions { all: false, force: false }, &mut |_p| {})
            .map_err(|e| e.message)?;
        full_samples.push(t.elapsed());
        full_cpu_samples.push(cpu_secs() - c);
        if i == 0 {
            hwm_after_index = proc_status_kb("VmHWM");
            rss_after_index = proc_status_kb("VmRSS");
        }
        if i + 1 == repeat {
            last = Some((engine, result));
        } else {
            drop(engine);
            fs::remove_dir_all(&dir)?;
        }
    }
    let Some((engine, full)) = last else { return Err("no index was built".into()) };
    let full_time = median(&full_samples);
    let full_cpu = median_f(&full_cpu_samples);
    let index_bytes = dir_size(&index_dir);
    let lexical_bytes = dir_size(&index_dir.join("lexical"));
    let store_bytes = fs::metadata(index_dir.join("meta.redb")).map_or(0, |m| m.len());
    let links_bytes = fs::metadata(index_dir.join("links.bin")).map_or(0, |m| m.len());
    let vector_bytes = fs::metadata(index_dir.join("vectors.usearch")).map_or(0, |m| m.len());

    // ---------------------------------------------------------------- (b) no-op reindex
    eprintln!("(b) no-op reindex ...");
    let (t, c) = (Instant::now(), cpu_secs());
    let noop = engine.reindex(ReindexOptions::default(), &mut |_p| {}).map_err(|e| e.message)?;
    let noop_time = t.elapsed();
    let noop_cpu = cpu_secs() - c;

    // ---------------------------------------------------------------- (c) lindera floor
    eprintln!("(c) read, parse+chunk, lindera alone ...");
    let cfg = engine.config();
    let filter =
        GlobFilter::new(&cfg.knowledge_base.include, &cfg.knowledge_base.exclude).map_err(|e| e.message)?;
    let chunk_opts = ChunkOptions {
        max_chunk_bytes: cfg.chunking.max_chunk_bytes,
        max_elements: cfg.chunking.max_elements,
        include_heading_context: cfg.chunking.include_heading_context,
        include_front_matter: cfg.chunking.include_front_matter,
    };
    let ws = engine.workspace();
    let t = Instant::now();
    let entries = ws.scan_markdown(&filter).map_err(|e| e.message)?;
    let mut sources = Vec::with_capacity(entries.len());
    for e in &entries {
        // Unreadable files (not UTF-8, too large) are skipped exactly as the indexer skips them.
        if let Ok(s) = ws.read_markdown(&e.path) {
            sources.push((e.path.as_str().to_owned(), s.text));
        }
    }
    let read_time = t.elapsed();
    let source_bytes: usize = sources.iter().map(|(_, s)| s.len()).sum();

    let t = Instant::now();
    let mut docs = Vec::with_capacity(sources.len());
    let mut chunk_count = 0usize;
    for (path, text) in &sources {
        let doc = Document::parse(text);
        let chunks = chunk(&doc, &chunk_opts);
        chunk_count += chunks.len();
        docs.push((path.as_str(), doc, chunks));
    }
    let parse_chunk_time = t.elapsed();

    // Exactly what the indexer gives the analyzer: each chunk's text and heading path.
    let mut texts: Vec<&str> = Vec::with_capacity(chunk_count * 2);
    for (_, _, chunks) in &docs {
        for c in chunks {
            texts.push(&c.text);
            if let Some(h) = c.heading_path.as_deref().filter(|h| !h.is_empty()) {
                texts.push(h);
            }
        }
    }
    let token_bytes: usize = texts.iter().map(|s| s.len()).sum();
    let dict = lvs::lexical::dictionary::load()?;
    let segmenter = Segmenter::new(Mode::Normal, dict, None);
    // Warm the dictionary pages in so neither run pays the first touch.
    let _ = segmenter.segment(Cow::Borrowed("形態素解析の準備をします。"))?;
    let mid = split_by_bytes(&texts);
    let (mut l1, mut l1_cpu, mut l2, mut l2_cpu) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut tokens_1t, mut tokens_2t) = (0, 0);
    for _ in 0..repeat {
        let (t, c) = (Instant::now(), cpu_secs());
        tokens_1t = tokenize(&segmenter, &texts);
        l1.push(t.elapsed());
        l1_cpu.push(cpu_secs() - c);
        let (t, c) = (Instant::now(), cpu_secs());
        tokens_2t = std::thread::scope(|s| {
            let a = s.spawn(|| tokenize(&segmenter, &texts[..mid]));
            let b = tokenize(&segmenter, &texts[mid..]);
            a.join().unwrap_or(0) + b
        });
        l2.push(t.elapsed());
        l2_cpu.push(cpu_secs() - c);
    }
    let (lindera_1t, lindera_1t_cpu) = (median(&l1), median_f(&l1_cpu));
    let (lindera_2t, lindera_2t_cpu) = (median(&l2), median_f(&l2_cpu));

    // Diagnostic, not a floor: the crate's own analyzer (NFKC, word scanner, lindera normal +
    // decompose, base forms) over the same texts, through the public `lexical::analyze`
    // (which allocates a fresh analyzer per text, so it slightly overstates the cost).
    let (mut a1, mut a1_cpu, mut a2) = (Vec::new(), Vec::new(), Vec::new());
    let (mut analyzer_tokens_1t, mut analyzer_tokens_2t) = (0, 0);
    for _ in 0..repeat {
        let (t, c) = (Instant::now(), cpu_secs());
        analyzer_tokens_1t = analyze_all(&texts);
        a1.push(t.elapsed());
        a1_cpu.push(cpu_secs() - c);
        let t = Instant::now();
        analyzer_tokens_2t = std::thread::scope(|s| {
            let a = s.spawn(|| analyze_all(&texts[..mid]));
            let b = analyze_all(&texts[mid..]);
            a.join().unwrap_or(0) + b
        });
        a2.push(t.elapsed());
    }
    let (analyzer_1t, analyzer_1t_cpu, analyzer_2t) = (median(&a1), median_f(&a1_cpu), median(&a2));

    // ---------------------------------------------------------------- (d) queries
    eprintln!("(d) queries ...");
    let queries = build_queries(&docs, &segmenter);
    let req = |q: &str| lexical_request(q, TOP_K);
    // The first search opens the index reader: reported on its own.
    let t = Instant::now();
    let first = engine.search(&req(&queries[0].0));
    let first_search = t.elapsed();
    if let Err(e) = first {
        return Err(format!("search failed: {}", e.message).into());
    }
    let mut zero_results = 0usize;
    let mut failed = 0usize;
    let mut hits_total = 0usize;
    for (q, _) in &queries {
        match engine.search(&req(q)) {
            Ok(r) if r.results.is_empty() => zero_results += 1,
            Ok(r) => hits_total += r.results.len(),
            Err(_) => failed += 1,
        }
    }
    let mut samples = Vec::with_capacity(queries.len() * passes);
    for _ in 0..passes {
        for (q, _) in &queries {
            let t = Instant::now();
            let r = engine.search(&req(q));
            samples.push(t.elapsed());
            black_box(r.ok());
        }
    }
    let lat = Latency::of(&mut samples);
    // Diagnostic: the same queries with topK 1 separate the per-hit cost (snippet, stale check)
    // from the per-query cost (analysis, BM25 over the posting lists).
    let mut samples_k1 = Vec::with_capacity(queries.len() * passes);
    for _ in 0..passes {
        for (q, _) in &queries {
            let t = Instant::now();
            let r = engine.search(&lexical_request(q, 1));
            samples_k1.push(t.elapsed());
            black_box(r.ok());
        }
    }
    let lat_k1 = Latency::of(&mut samples_k1);
    // Snippets on their own: the texts of each query's hits (read once through a second reader
    // of the same index), then the snippet of each, timed per hit and per query.
    let reader =
        lvs::lexical::LexicalIndex::open_or_create(&index_dir.join("lexical")).map_err(|e| e.message)?;
    let mut hit_texts: Vec<(&str, Vec<String>)> = Vec::with_capacity(queries.len());
    for (q, _) in &queries {
        let ids: Vec<u64> = reader
            .search(q, TOP_K as usize, None)
            .map_err(|e| e.message)?
            .iter()
            .map(|h| h.chunk_id)
            .collect();
        let texts = reader.stored_docs(&ids).map_err(|e| e.message)?.into_iter().map(|d| d.text).collect();
        hit_texts.push((q.as_str(), texts));
    }
    drop(reader);
    let (mut per_hit, mut per_query) = (Vec::new(), Vec::new());
    for _ in 0..passes {
        for (q, texts) in &hit_texts {
            let t = Instant::now();
            black_box(lvs::lexical::snippets_of(texts, q, lvs::config::DEFAULT_SNIPPET_TOKENS));
            let took = t.elapsed();
            per_query.push(took);
            if !texts.is_empty() {
                per_hit.push(took / texts.len() as u32);
            }
        }
    }
    let snip_hit = Latency::of(&mut per_hit);
    let snip_query = Latency::of(&mut per_query);
    // Concurrency: the 200 queries once on 1 thread, then split over 8 threads sharing the
    // engine (as 8 MCP clients would). Readers share one tantivy searcher, so on 2 cores the
    // 8-thread wall time should be about half the sequential one.
    let mut conc = Vec::new();
    for _ in 0..passes {
        let t = Instant::now();
        for (q, _) in &queries {
            black_box(engine.search(&req(q)).ok());
        }
        let sequential = t.elapsed();
        let t = Instant::now();
        std::thread::scope(|s| {
            for part in queries.chunks(queries.len().div_ceil(CONCURRENT_THREADS)) {
                let engine = &engine;
                let req = &req;
                s.spawn(move || {
                    for (q, _) in part {
                        black_box(engine.search(&req(q)).ok());
                    }
                });
            }
        });
        conc.push((sequential, t.elapsed()));
    }
    conc.sort_by(|a, b| {
        (a.1.as_secs_f64() / a.0.as_secs_f64()).total_cmp(&(b.1.as_secs_f64() / b.0.as_secs_f64()))
    });
    let (conc_seq, conc_par) = conc[conc.len() / 2];
    let hwm_end = proc_status_kb("VmHWM");
    let rss_end = proc_status_kb("VmRSS");

    // ---------------------------------------------------------------- (e) files for FTS5
    let rows_path = out_dir.join("chunks.jsonl");
    let queries_path = out_dir.join("queries.jsonl");
    {
        let mut w = BufWriter::new(fs::File::create(&rows_path)?);
        for (path, _, chunks) in &docs {
            for c in chunks {
                let row = json!({"path": path, "heading_path": c.heading_path.as_deref().unwrap_or(""), "text": c.text});
                writeln!(w, "{row}")?;
            }
        }
        w.flush()?;
        let mut w = BufWriter::new(fs::File::create(&queries_path)?);
        for (q, kind) in &queries {
            writeln!(w, "{}", json!({"query": q, "kind": kind}))?;
        }
        w.flush()?;
    }
    drop(engine);
    if !keep_index {
        let _ = fs::remove_dir_all(&index_dir);
    }

    // ---------------------------------------------------------------- report
    let secs = |d: Duration| d.as_secs_f64();
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    let ratio_2t = secs(full_time) / secs(lindera_2t);
    let ratio_1t = secs(full_time) / secs(lindera_1t);
    let floor_with_parse = secs(lindera_2t) + secs(parse_chunk_time) / 2.0;
    let report = json!({
        "corpus": corpus.display().to_string(),
        "index_dir": index_dir.display().to_string(),
        "index_kept": keep_index,
        "rows_jsonl": rows_path.display().to_string(),
        "queries_jsonl": queries_path.display().to_string(),
        "machine": machine(),
        "loadavg_at_start": load_start,
        "files": {
            "scanned": full.scanned_files,
            "indexed": full.indexed_files,
            "failed": full.failed_files.len(),
            "source_bytes": source_bytes,
        },
        "repeat": repeat,
        "samples_seconds": {
            "full_index": full_samples.iter().map(|d| secs(*d)).collect::<Vec<_>>(),
            "lindera_1t": l1.iter().map(|d| secs(*d)).collect::<Vec<_>>(),
            "lindera_2t": l2.iter().map(|d| secs(*d)).collect::<Vec<_>>(),
            "analyzer_1t": a1.iter().map(|d| secs(*d)).collect::<Vec<_>>(),
            "analyzer_2t": a2.iter().map(|d| secs(*d)).collect::<Vec<_>>(),
        },
        "full_index": {
            "seconds": secs(full_time),
            "cpu_seconds": full_cpu,
            "cores_busy": full_cpu / secs(full_time),
            "chunks": full.chunks_indexed,
            "index_bytes": index_bytes,
            "lexical_bytes": lexical_bytes,
            "store_bytes": store_bytes,
            "links_bytes": links_bytes,
            "vector_bytes": vector_bytes,
            "index_to_source_ratio": index_bytes as f64 / source_bytes.max(1) as f64,
            "vm_hwm_kb": hwm_after_index,
            "vm_rss_kb": rss_after_index,
            "vm_rss_at_start_kb": rss_start,
            "target_peak_rss_mb": 500,
        },
        "noop_reindex": {
            "seconds": secs(noop_time),
            "cpu_seconds": noop_cpu,
            "indexed": noop.indexed_files,
            "skipped": noop.skipped_files,
            "target_seconds": 1.0,
            "ratio_to_target": secs(noop_time) / 1.0,
        },
        "floor": {
            "read_seconds": secs(read_time),
            "parse_chunk_seconds_1t": secs(parse_chunk_time),
            "chunks": chunk_count,
            "texts": texts.len(),
            "token_bytes": token_bytes,
            "lindera_1t_seconds": secs(lindera_1t),
            "lindera_2t_seconds": secs(lindera_2t),
            "lindera_1t_cpu_seconds": lindera_1t_cpu,
            "lindera_2t_cpu_seconds": lindera_2t_cpu,
            "lindera_tokens": tokens_1t,
            "lindera_tokens_2t": tokens_2t,
            "lindera_1t_mb_per_s": token_bytes as f64 / 1e6 / secs(lindera_1t),
            "two_thread_speedup": secs(lindera_1t) / secs(lindera_2t),
            "analyzer_1t_seconds": secs(analyzer_1t),
            "analyzer_1t_cpu_seconds": analyzer_1t_cpu,
            "analyzer_2t_seconds": secs(analyzer_2t),
            "analyzer_tokens": analyzer_tokens_1t,
            "analyzer_tokens_2t": analyzer_tokens_2t,
        },
        "ratios": {
            "full_index_over_lindera_2t": ratio_2t,
            "full_index_over_lindera_1t": ratio_1t,
            "full_index_over_lindera_2t_plus_parse_chunk": secs(full_time) / floor_with_parse,
            "full_index_cpu_over_lindera_cpu": full_cpu / lindera_1t_cpu,
            "analyzer_over_lindera_1t": secs(analyzer_1t) / secs(lindera_1t),
            "full_index_over_analyzer_2t": secs(full_time) / secs(analyzer_2t),
            "target_full_index_over_lindera_2t": 1.5,
            "query_p50_over_target": ms(lat.p50) / 2.0,
            "query_p99_over_target": ms(lat.p99) / 20.0,
        },
        "query": {
            "count": queries.len(),
            "titles": queries.iter().filter(|q| q.1 == "title").count(),
            "noun_pairs": queries.iter().filter(|q| q.1 == "noun_pair").count(),
            "top_k": TOP_K,
            "passes": passes,
            "samples": samples.len(),
            "first_search_ms": ms(first_search),
            "p50_ms": ms(lat.p50),
            "p90_ms": ms(lat.p90),
            "p99_ms": ms(lat.p99),
            "max_ms": ms(lat.max),
            "mean_ms": ms(lat.mean),
            "top_k_1_p50_ms": ms(lat_k1.p50),
            "snippet": {
                "per_hit_p50_us": ms(snip_hit.p50) * 1e3,
                "per_hit_p99_us": ms(snip_hit.p99) * 1e3,
                "per_query_p50_ms": ms(snip_query.p50),
                "per_query_p99_ms": ms(snip_query.p99),
                "share_of_p50": ms(snip_query.p50) / ms(lat.p50),
                "note": "lexical::snippets_of over the stored texts of each query's hits (query analysis included once per query, as in a search); per hit = per query / hits",
            },
            "top_k_1_p99_ms": ms(lat_k1.p99),
            "zero_results": zero_results,
            "errors": failed,
            "mean_hits": hits_total as f64 / queries.len() as f64,
            "target_p50_ms": 2.0,
            "target_p99_ms": 20.0,
            "concurrent_threads": CONCURRENT_THREADS,
            "sequential_ms": ms(conc_seq),
            "concurrent_ms": ms(conc_par),
            "concurrent_over_sequential": secs(conc_par) / secs(conc_seq),
        },
        "end": { "vm_hwm_kb": hwm_end, "vm_rss_kb": rss_end },
    });

    println!();
    println!(
        "== index bench: {} ({} files, {:.1} MiB of Markdown) ==",
        corpus.display(),
        full.indexed_files,
        mib(source_bytes as u64)
    );
    println!("{:<44} {:>14} {:>14} {:>10}", "measure", "value", "target", "ratio");
    let row = |name: &str, value: &str, target: &str, ratio: &str| {
        println!("{name:<44} {value:>14} {target:>14} {ratio:>10}");
    };
    row("full index (Engine::reindex)", &format!("{:.2} s", secs(full_time)), "", "");
    row(
        "  CPU time (user+sys), cores busy",
        &format!("{full_cpu:.2} s"),
        "",
        &format!("{:.2}", full_cpu / secs(full_time)),
    );
    row("  lindera alone, 2 threads", &format!("{:.2} s", secs(lindera_2t)), "", "");
    row(
        "  full / lindera 2 threads",
        &format!("{ratio_2t:.2}x"),
        "<= 1.5x",
        &format!("{:.2}", ratio_2t / 1.5),
    );
    row("  lindera alone, 1 thread", &format!("{:.2} s", secs(lindera_1t)), "", "");
    row("  full / lindera 1 thread", &format!("{ratio_1t:.2}x"), "", "");
    row("  CPU time full / lindera", &format!("{:.2}x", full_cpu / lindera_1t_cpu), "", "");
    row(
        "  our analyzer alone, 1 thread",
        &format!("{:.2} s", secs(analyzer_1t)),
        "",
        &format!("{:.2}", secs(analyzer_1t) / secs(lindera_1t)),
    );
    row(
        "  our analyzer alone, 2 threads",
        &format!("{:.2} s", secs(analyzer_2t)),
        "",
        &format!("{:.2}", secs(analyzer_2t) / secs(lindera_2t)),
    );
    row(
        "  parse+chunk, 1 thread",
        &format!("{:.2} s", secs(parse_chunk_time)),
        "",
        &format!("{:.2}", secs(parse_chunk_time) / secs(full_time)),
    );
    row(
        "  read files (warm cache, +SHA-256)",
        &format!("{:.2} s", secs(read_time)),
        "",
        &format!("{:.2}", secs(read_time) / secs(full_time)),
    );
    row("chunks", &full.chunks_indexed.to_string(), "", "");
    row(
        "index size on disk",
        &format!("{:.1} MiB", mib(index_bytes)),
        "",
        &format!("{:.2}", index_bytes as f64 / source_bytes.max(1) as f64),
    );
    row("  tantivy (lexical/)", &format!("{:.1} MiB", mib(lexical_bytes)), "", "");
    row("  redb (meta.redb)", &format!("{:.1} MiB", mib(store_bytes)), "", "");
    row("  link graph (links.bin)", &format!("{:.1} MiB", mib(links_bytes)), "", "");
    row("  vectors (vectors.usearch)", &format!("{:.1} MiB", mib(vector_bytes)), "", "");
    row(
        "peak RSS after index (VmHWM)",
        &format!("{:.0} MiB", hwm_after_index as f64 / 1024.0),
        "< 500 MiB",
        &format!("{:.2}", hwm_after_index as f64 / 1024.0 / 500.0),
    );
    row("RSS after index (VmRSS)", &format!("{:.0} MiB", rss_after_index as f64 / 1024.0), "", "");
    row("no-op reindex", &format!("{:.3} s", secs(noop_time)), "< 1 s", &format!("{:.2}", secs(noop_time)));
    row("first search (opens reader)", &format!("{:.2} ms", ms(first_search)), "", "");
    row(
        "query p50 (in-process)",
        &format!("{:.3} ms", ms(lat.p50)),
        "< 2 ms",
        &format!("{:.2}", ms(lat.p50) / 2.0),
    );
    row(
        "query p99 (in-process)",
        &format!("{:.3} ms", ms(lat.p99)),
        "< 20 ms",
        &format!("{:.2}", ms(lat.p99) / 20.0),
    );
    row("query max (in-process)", &format!("{:.3} ms", ms(lat.max)), "", "");
    row(
        "  query p50 with topK 1 (diagnostic)",
        &format!("{:.3} ms", ms(lat_k1.p50)),
        "",
        &format!("{:.2}", ms(lat_k1.p50) / ms(lat.p50)),
    );
    row(
        "  snippets of a query's hits p50 (per hit)",
        &format!("{:.3} ms ({:.0} us)", ms(snip_query.p50), ms(snip_hit.p50) * 1e3),
        "",
        &format!("{:.2}", ms(snip_query.p50) / ms(lat.p50)),
    );
    row(
        &format!("{} queries on {CONCURRENT_THREADS} threads / 1 thread", queries.len()),
        &format!("{:.0} / {:.0} ms", ms(conc_par), ms(conc_seq)),
        "~0.5 (2 cores)",
        &format!("{:.2}", secs(conc_par) / secs(conc_seq)),
    );
    row("queries with 0 results", &format!("{zero_results}/{}", queries.len()), "", "");
    let list = |v: &[Duration]| v.iter().map(|d| format!("{:.2}", secs(*d))).collect::<Vec<_>>().join(" ");
    println!(
        "(times are medians of {repeat}; samples in s: full index [{}], lindera 1t [{}], lindera 2t [{}], analyzer 1t [{}], analyzer 2t [{}])",
        list(&full_samples),
        list(&l1),
        list(&l2),
        list(&a1),
        list(&a2)
    );
    println!("rows: {}  queries: {}", rows_path.display(), queries_path.display());
    let line = serde_json::to_string(&report)?;
    println!("{line}");
    fs::write(out_dir.join("index.json"), serde_json::to_string_pretty(&report)?)?;
    Ok(())
}

/// Tokenises every text with one reused lattice; returns the token count.
fn tokenize(segmenter: &Segmenter, texts: &[&str]) -> usize {
    let mut lattice = Lattice::default();
    let mut n = 0;
    for t in texts {
        if let Ok(tokens) = segmenter.segment_with_lattice(Cow::Borrowed(t), &mut lattice) {
            n += tokens.len();
            black_box(&tokens);
        }
    }
    n
}

/// The median of durations (the upper one of the middle two for an even count).
/// Runs the crate's analyzer over every text; returns the token count.
fn analyze_all(texts: &[&str]) -> usize {
    texts.iter().map(|t| black_box(lvs::lexical::analyze(t)).len()).sum()
}

/// The index that splits `texts` into two halves of about equal bytes.
fn split_by_bytes(texts: &[&str]) -> usize {
    let total: usize = texts.iter().map(|s| s.len()).sum();
    let mut acc = 0;
    for (i, t) in texts.iter().enumerate() {
        acc += t.len();
        if acc * 2 >= total {
            return i + 1;
        }
    }
    texts.len()
}

fn is_japanese(c: char) -> bool {
    matches!(c, '\u{3041}'..='\u{3096}' | '\u{30A1}'..='\u{30FA}' | '\u{30FC}' | '\u{4E00}'..='\u{9FFF}' | '々')
}

/// A heading's plain title: `#` markers, emphasis and code marks removed; `None` for titles
/// that are not useful queries (no Japanese, markup, too short or long).
fn heading_title(text: &str) -> Option<String> {
    let line = text.lines().next()?.trim();
    let t = strip_tags(line.trim_start_matches('#').trim_end_matches('#'));
    let t = t.trim();
    if t.contains(['<', '>', '(', ')', '{', '}', '|', '\\', '!', '&', ']', '[']) {
        return None;
    }
    let t: String = t.chars().filter(|c| !matches!(c, '`' | '*')).collect();
    let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
    let n = t.chars().count();
    let jp = t.chars().filter(|&c| is_japanese(c)).count();
    (jp >= 2 && (4..=30).contains(&n)).then_some(t)
}

/// Removes inline HTML tags (`<a name="x"></a>Title` → `Title`, as in Microsoft Docs).
fn strip_tags(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('<') {
        out.push_str(&rest[..i]);
        match rest[i..].find('>') {
            Some(j) => rest = &rest[i + j + 1..],
            None => {
                rest = &rest[i..];
                break;
            }
        }
    }
    out.push_str(rest);
    out
}

/// 200 deterministic queries: 100 heading titles (every Nth distinct title, in path order)
/// and 100 pairs of nouns taken from headings (`名詞 名詞`, space-separated, the way an agent
/// types keywords).
fn build_queries(
    docs: &[(&str, Document, Vec<lvs::chunk::Chunk>)],
    segmenter: &Segmenter,
) -> Vec<(String, &'static str)> {
    let mut seen = HashSet::new();
    let mut titles = Vec::new();
    for (_, doc, _) in docs {
        for e in doc.elements.iter().filter(|e| e.kind == ElementKind::Heading) {
            if let Some(t) = heading_title(&e.text)
                && seen.insert(t.clone())
            {
                titles.push(t);
            }
        }
    }
    let half = QUERY_COUNT / 2;
    let pick = |list: &[String], n: usize| -> Vec<String> {
        if list.len() <= n {
            return list.to_vec();
        }
        let step = list.len() as f64 / n as f64;
        (0..n).map(|i| list[(i as f64 * step) as usize].clone()).collect()
    };
    let mut pairs = Vec::new();
    let mut pair_seen = BTreeSet::new();
    for t in &titles {
        let Ok(mut tokens) = segmenter.segment(Cow::Borrowed(t.as_str())) else { continue };
        let mut nouns: Vec<String> = Vec::new();
        for tok in tokens.iter_mut() {
            let surface = tok.surface.to_string();
            let d = tok.details();
            let is_noun = d.first() == Some(&"名詞")
                && !matches!(d.get(1).copied(), Some("数" | "非自立" | "代名詞" | "接尾"));
            if is_noun
                && surface.chars().count() >= 2
                && surface.chars().all(is_japanese)
                && !nouns.contains(&surface)
            {
                nouns.push(surface);
            }
        }
        if nouns.len() >= 2 {
            let q = format!("{} {}", nouns[0], nouns[1]);
            if pair_seen.insert(q.clone()) {
                pairs.push(q);
            }
        }
    }
    let mut out: Vec<(String, &'static str)> =
        pick(&titles, half).into_iter().map(|q| (q, "title")).collect();
    let want = QUERY_COUNT - out.len();
    out.extend(pick(&pairs, want).into_iter().map(|q| (q, "noun_pair")));
    out
}
