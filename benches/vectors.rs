//! Vector index and hybrid search benchmark (`cargo bench --bench vectors`).
//!
//! (a) usearch through `lvs::vectors::VectorIndex` with synthetic unit vectors of 1024
//!     dimensions at 10k and 100k keys: build time, memory, file size, query latency (k = 50)
//!     and recall@10 against an exhaustive scan run in the same process (the baseline).
//! (b) The whole engine on a real corpus with the test's HTTP embedding server
//!     (`tests/fake_embed`, 1024 dimensions): reindex with vectors, then the same 200 queries in
//!     lexical, semantic and hybrid mode; the query-embedding round trip is timed on its own so
//!     the ranking overhead can be told apart from the (fake) model.
//!
//! Environment: `LVS_BENCH_SIZES` (default `10000,100000`), `LVS_BENCH_CORPUS` (default
//! visualstudio-docs-ja; `none` skips part b), `LVS_BENCH_OUT` (JSON output directory).
//! Nothing is asserted: numbers are printed, never enforced.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::fs;
use std::path::PathBuf;
use std::time::Instant;

use lvs::config::{CliOverrides, EmbeddingProvider, SearchMode, load};
use lvs::engine::Engine;
use lvs::engine::ReindexOptions;
use lvs::vectors::{Embedder, PRECISION, Precision, VectorIndex};
use lvs::wire::SearchRequest;
use serde_json::{Value, json};

mod common;
#[path = "../tests/fake_embed/mod.rs"]
mod fake_embed;
use common::{Latency, dir_size, machine, ms, proc_status_kb};

const DIMS: usize = 1024;
const QUERIES: usize = 200;
const RECALL_QUERIES: usize = 50;
const DEFAULT_CORPUS: &str = "../shared/corpora/visualstudio-docs-ja";

type Res<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn main() {
    if let Err(e) = run() {
        eprintln!("vectors bench failed: {e}");
        std::process::exit(1);
    }
}

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);
impl Rng {
    fn next_f32(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        ((x >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }
    fn unit(&mut self, dims: usize) -> Vec<f32> {
        let mut v: Vec<f32> = (0..dims).map(|_| self.next_f32()).collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter_mut().for_each(|x| *x /= n);
        v
    }
}

fn run() -> Res<()> {
    let out_dir = std::env::var_os("LVS_BENCH_OUT").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
    fs::create_dir_all(&out_dir)?;
    let sizes: Vec<usize> = std::env::var("LVS_BENCH_SIZES")
        .unwrap_or_else(|_| "10000,100000".to_owned())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let mut report = json!({ "machine": machine(), "dims": DIMS });
    // Every precision at the smallest size; the product's precision at every size.
    let mut direct = Vec::new();
    for (i, &n) in sizes.iter().enumerate() {
        for p in Precision::ALL {
            if p == PRECISION || (i == 0 && std::env::var_os("LVS_BENCH_ONLY_DEFAULT").is_none()) {
                direct.push(bench_direct(n, p)?);
            }
        }
    }
    report["direct"] = Value::Array(direct);
    let corpus = std::env::var("LVS_BENCH_CORPUS").unwrap_or_else(|_| DEFAULT_CORPUS.to_owned());
    if corpus != "none" {
        report["engine"] = bench_engine(&corpus)?;
    }
    let text = serde_json::to_string(&report)?;
    fs::write(out_dir.join("vectors.json"), &text)?;
    println!("{text}");
    Ok(())
}

fn bench_direct(n: usize, precision: Precision) -> Res<Value> {
    eprintln!("(a) {n} vectors x {DIMS} dims, {} ...", precision.name());
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ n as u64);
    // Clustered data (closer to real embeddings than uniform noise): 256 centres + noise.
    let centres: Vec<Vec<f32>> = (0..256).map(|_| rng.unit(DIMS)).collect();
    let mut data: Vec<Vec<f32>> = Vec::with_capacity(n);
    for i in 0..n {
        let c = &centres[i % centres.len()];
        let noise = rng.unit(DIMS);
        let mut v: Vec<f32> = c.iter().zip(&noise).map(|(a, b)| a + 0.6 * b).collect();
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter_mut().for_each(|x| *x /= norm);
        data.push(v);
    }
    let rss_before = proc_status_kb("VmRSS");
    let mut index = VectorIndex::with_precision(DIMS, precision)?;
    let items: Vec<(u64, &[f32])> =
        data.iter().enumerate().map(|(i, v)| (i as u64 + 1, v.as_slice())).collect();
    let t = Instant::now();
    index.add_many(&items)?;
    let build = t.elapsed();
    let rss_after = proc_status_kb("VmRSS");
    let memory = index.memory_usage();
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("vectors.usearch");
    let t = Instant::now();
    index.save(&path)?;
    let save = t.elapsed();
    let file_bytes = fs::metadata(&path)?.len();
    let t = Instant::now();
    let view = VectorIndex::view(&path)?;
    let open_view = t.elapsed();

    let queries: Vec<Vec<f32>> = (0..QUERIES)
        .map(|i| {
            let base = &data[(i * 7_919) % n];
            let noise = rng.unit(DIMS);
            let mut v: Vec<f32> = base.iter().zip(&noise).map(|(a, b)| a + 0.3 * b).collect();
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.iter_mut().for_each(|x| *x /= norm);
            v
        })
        .collect();
    let mut samples = Vec::new();
    let mut view_samples = Vec::new();
    for q in &queries {
        let t = Instant::now();
        std::hint::black_box(index.search(q, 50, None)?);
        samples.push(t.elapsed());
        let t = Instant::now();
        std::hint::black_box(view.search(q, 50, None)?);
        view_samples.push(t.elapsed());
    }
    let hnsw = Latency::of(&mut samples);
    let viewed = Latency::of(&mut view_samples);
    // Baseline: exhaustive cosine scan over the same f32 data, same process.
    let mut exact_samples = Vec::new();
    let mut recall_hits = 0usize;
    for q in queries.iter().take(RECALL_QUERIES) {
        let t = Instant::now();
        let mut scored: Vec<(u64, f32)> = data
            .iter()
            .enumerate()
            .map(|(i, v)| (i as u64 + 1, 1.0 - v.iter().zip(q).map(|(a, b)| a * b).sum::<f32>()))
            .collect();
        scored.select_nth_unstable_by(9, |a, b| a.1.total_cmp(&b.1));
        exact_samples.push(t.elapsed());
        let truth: std::collections::HashSet<u64> = scored[..10].iter().map(|s| s.0).collect();
        let got = index.search(q, 10, None)?;
        recall_hits += got.iter().filter(|g| truth.contains(&g.0)).count();
    }
    let exact = Latency::of(&mut exact_samples);
    let recall = recall_hits as f64 / (RECALL_QUERIES * 10) as f64;
    eprintln!(
        "    build {:.1} s ({:.0} vectors/s), memory {:.1} MiB (RSS +{:.1} MiB), file {:.1} MiB",
        build.as_secs_f64(),
        n as f64 / build.as_secs_f64(),
        memory as f64 / 1048576.0,
        (rss_after.saturating_sub(rss_before)) as f64 / 1024.0,
        file_bytes as f64 / 1048576.0
    );
    eprintln!(
        "    query k=50 p50 {:.3} ms p99 {:.3} ms (mapped file p50 {:.3} ms); exhaustive scan p50 {:.2} ms → {:.0}x; recall@10 {:.3}",
        ms(hnsw.p50),
        ms(hnsw.p99),
        ms(viewed.p50),
        ms(exact.p50),
        ms(exact.p50) / ms(hnsw.p50).max(1e-9),
        recall
    );
    Ok(json!({
        "precision": precision.name(),
        "vectors": n,
        "build_s": build.as_secs_f64(),
        "vectors_per_s": n as f64 / build.as_secs_f64(),
        "memory_bytes": memory,
        "rss_delta_kb": rss_after.saturating_sub(rss_before),
        "file_bytes": file_bytes,
        "save_ms": ms(save),
        "open_view_ms": ms(open_view),
        "query_k50_p50_ms": ms(hnsw.p50),
        "query_k50_p99_ms": ms(hnsw.p99),
        "query_view_p50_ms": ms(viewed.p50),
        "exact_scan_p50_ms": ms(exact.p50),
        "speedup_vs_exact": ms(exact.p50) / ms(hnsw.p50).max(1e-9),
        "recall_at_10": recall,
    }))
}

fn bench_engine(corpus: &str) -> Res<Value> {
    let corpus = fs::canonicalize(corpus).map_err(|e| format!("corpus {corpus}: {e}"))?;
    eprintln!("(b) engine on {} ...", corpus.display());
    let server = fake_embed::FakeEmbed::start(DIMS);
    let index_dir = tempfile::tempdir()?;
    let config_dir = tempfile::tempdir()?;
    let config = config_dir.path().join("lvs.yaml");
    fs::write(
        &config,
        format!(
            "embedding:\n  provider: openai-compatible\n  endpoint: {}\n  dimensions: {DIMS}\n  batchSize: 64\n",
            server.endpoint
        ),
    )?;
    let overrides = CliOverrides {
        project_root: Some(corpus.clone()),
        config: Some(config),
        storage_path: Some(index_dir.path().to_path_buf()),
        embedding_provider: Some(EmbeddingProvider::OpenAiCompatible),
        search_mode: Some(SearchMode::Hybrid),
        ..Default::default()
    };
    let cwd = std::env::current_dir()?;
    let loaded = load(&overrides, &|k| std::env::var(k).ok(), &cwd).map_err(|e| e.message)?;
    let embedding = loaded.config.embedding.clone();
    let engine = Engine::open(loaded).map_err(|e| e.message)?;
    let t = Instant::now();
    let r = engine.reindex(ReindexOptions::default(), &mut |_| {}).map_err(|e| e.message)?;
    let reindex = t.elapsed();
    if let Some(w) = &r.warning {
        return Err(format!("reindex warned: {w}").into());
    }
    let vector_file = fs::metadata(index_dir.path().join("vectors.usearch"))?.len();
    eprintln!(
        "    reindex with vectors: {:.1} s for {} chunks (vectors.usearch {:.1} MiB, index dir {:.1} MiB)",
        reindex.as_secs_f64(),
        r.chunks_indexed,
        vector_file as f64 / 1048576.0,
        dir_size(index_dir.path()) as f64 / 1048576.0
    );
    // Queries: the first sentence-ish piece of every N-th chunk's heading path is not available
    // here, so use fixed Japanese technical phrases plus words from the corpus's file names.
    let mut queries: Vec<String> = Vec::new();
    let words = [
        "プロジェクト",
        "デバッグ",
        "ビルド",
        "拡張機能",
        "設定",
        "テスト",
        "コード",
        "ソリューション",
        "配置",
        "エラー",
        "パフォーマンス",
        "コンテナー",
        "ブレークポイント",
        "リファクタリング",
        "依存関係",
        "インストール",
        "ワークロード",
        "プロファイラー",
        "コマンド",
        "ウィンドウ",
    ];
    for i in 0..QUERIES {
        queries.push(format!("{} {}", words[i % words.len()], words[(i * 7 + 3) % words.len()]));
    }
    let embedder = Embedder::new(&embedding, None).map_err(|e| e.message)?;
    let mut embed_samples = Vec::new();
    for q in &queries {
        let t = Instant::now();
        std::hint::black_box(embedder.embed(&[q.as_str()]).map_err(|e| e.message)?);
        embed_samples.push(t.elapsed());
    }
    let embed = Latency::of(&mut embed_samples);
    let mut modes = serde_json::Map::new();
    for mode in [SearchMode::Lexical, SearchMode::Semantic, SearchMode::Hybrid] {
        let req = |q: &str| SearchRequest {
            query: q.to_owned(),
            mode: Some(mode),
            top_k: Some(10),
            include_globs: None,
            exclude_globs: None,
            filters: None,
            explain: None,
            max_per_file: None,
            detail: None,
        };
        engine.search(&req(&queries[0])).map_err(|e| e.message)?; // warm-up (opens readers)
        let mut samples = Vec::new();
        for q in &queries {
            let t = Instant::now();
            let res = engine.search(&req(q)).map_err(|e| e.message)?;
            samples.push(t.elapsed());
            if res.warning.is_some() {
                return Err(format!("{mode} search warned: {:?}", res.warning).into());
            }
        }
        let l = Latency::of(&mut samples);
        eprintln!("    {mode:8} p50 {:.2} ms p99 {:.2} ms", ms(l.p50), ms(l.p99));
        modes.insert(
            mode.to_string(),
            json!({"p50_ms": ms(l.p50), "p99_ms": ms(l.p99), "mean_ms": ms(l.mean)}),
        );
    }
    eprintln!("    query embedding round trip (fake server, 1024 dims) p50 {:.2} ms", ms(embed.p50));
    let lexical = modes["lexical"]["p50_ms"].as_f64().unwrap_or(0.0);
    let hybrid = modes["hybrid"]["p50_ms"].as_f64().unwrap_or(0.0);
    eprintln!(
        "    hybrid overhead over lexical p50: +{:.2} ms, of which the embedding round trip {:.2} ms",
        hybrid - lexical,
        ms(embed.p50)
    );
    Ok(json!({
        "corpus": corpus.file_name().map(|n| n.to_string_lossy().into_owned()),
        "chunks": r.chunks_indexed,
        "reindex_with_vectors_s": reindex.as_secs_f64(),
        "vector_file_bytes": vector_file,
        "modes": modes,
        "query_embed_p50_ms": ms(embed.p50),
        "hybrid_overhead_p50_ms": hybrid - lexical,
        "rss_kb": proc_status_kb("VmRSS"),
    }))
}
