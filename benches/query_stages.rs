//! Where an in-process lexical query's time goes, on an index that already exists (issue #28:
//! the query p50 bar is < 1 ms). Run with
//! `cargo bench --bench query_stages -- STORAGE_DIR PROJECT_ROOT QUERIES_JSONL`, where the
//! storage dir holds an index of the project (e.g. one `run.sh` or `reindex` built) and the
//! queries are the `index` bench's `queries.jsonl`.
//!
//! For each query, at topK 10, the same snapshot is timed through three layers:
//! ranking alone (`LexicalView::rank_with`), ranking plus reading the hits and their snippets
//! (`search_tiered_with`), and `Engine::search` (plus the scope, the staleness check per hit and
//! the answer's assembly). The differences are the stages. Nothing is asserted.
//!
//! `--merge` first merges the index's segments into one (it rewrites STORAGE_DIR's lexical
//! index in place: give it a copy). A reindex leaves one segment per commit and indexing
//! thread; this measures what that costs a query.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

use lvs::config::{CliOverrides, EmbeddingProvider, load};
use lvs::engine::Engine;
use lvs::lexical::{LexicalIndex, RankWeights, WriterSize};

mod common;
use common::{Latency, lexical_request, ms};

type Res<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn main() {
    if let Err(e) = run() {
        eprintln!("query_stages bench failed: {e}");
        std::process::exit(1);
    }
}

fn run() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let [storage, root, queries] = args.as_slice() else {
        return Err("usage: query_stages STORAGE_DIR PROJECT_ROOT QUERIES_JSONL".into());
    };
    let passes: usize =
        std::env::var("LVS_BENCH_QUERY_PASSES").ok().and_then(|s| s.parse().ok()).unwrap_or(5).max(1);
    let queries: Vec<String> = std::fs::read_to_string(queries)?
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).map(|v| v["query"].as_str().unwrap_or("").to_owned())
        })
        .collect::<Result<_, _>>()?;
    if std::env::args().any(|a| a == "--merge") {
        let index =
            LexicalIndex::open_or_create(&PathBuf::from(storage).join("lexical")).map_err(|e| e.message)?;
        let mut writer = index.writer(WriterSize::Edit).map_err(|e| e.message)?;
        let t = Instant::now();
        let merged = writer.merge_all().map_err(|e| e.message)?;
        println!("merged {merged} segments into one in {:.2} s", t.elapsed().as_secs_f64());
    }
    let overrides = CliOverrides {
        project_root: Some(PathBuf::from(root)),
        storage_path: Some(PathBuf::from(storage)),
        embedding_provider: Some(EmbeddingProvider::None),
        ..Default::default()
    };
    let loaded =
        load(&overrides, &|k| std::env::var(k).ok(), &std::env::current_dir()?).map_err(|e| e.message)?;
    let engine = Engine::open(loaded).map_err(|e| e.message)?;
    let index =
        LexicalIndex::open_or_create(&PathBuf::from(storage).join("lexical")).map_err(|e| e.message)?;
    let weights = RankWeights::default();
    // warm-up
    for q in &queries {
        black_box(engine.search(&lexical_request(q, 10)).ok());
    }
    let view = index.view();
    // `LVS_BENCH_STAGE=<text>` runs only the stages whose name contains it (to profile one).
    let only = std::env::var("LVS_BENCH_STAGE").ok();
    let stage = |name: &str, f: &mut dyn FnMut(&str)| {
        if only.as_deref().is_some_and(|o| !name.contains(o)) {
            return;
        }
        let mut samples = Vec::with_capacity(queries.len() * passes);
        for _ in 0..passes {
            for q in &queries {
                let t = Instant::now();
                f(q);
                samples.push(t.elapsed());
            }
        }
        let l = Latency::of(&mut samples);
        println!(
            "{name:<48} p50 {:>7.3} ms  p90 {:>7.3} ms  p99 {:>7.3} ms",
            ms(l.p50),
            ms(l.p90),
            ms(l.p99)
        );
    };
    stage("rank only, topK 10", &mut |q| {
        black_box(view.rank_with(q, 10, None, &weights).ok());
    });
    stage("rank only, topK 1", &mut |q| {
        black_box(view.rank_with(q, 1, None, &weights).ok());
    });
    stage("rank only, pool 50 (lexical mode with maxPerFile)", &mut |q| {
        black_box(view.rank_with(q, 50, None, &weights).ok());
    });
    let ranked: Vec<Vec<u64>> = queries
        .iter()
        .map(|q| view.rank_with(q, 10, None, &weights).map(|r| r.0).unwrap_or_default())
        .collect();
    let mut at = 0;
    stage("fetch the 10 ranked hits by chunk id (read + snippets)", &mut |q| {
        black_box(view.fetch(&ranked[at % ranked.len()], q).ok());
        at += 1;
    });
    stage("rank + read + snippets, topK 10", &mut |q| {
        black_box(view.search_tiered_with(q, 10, None, &weights).ok());
    });
    stage("Engine::search, topK 10", &mut |q| {
        black_box(engine.search(&lexical_request(q, 10)).ok());
    });
    stage("Engine::search, topK 1", &mut |q| {
        black_box(engine.search(&lexical_request(q, 1)).ok());
    });
    let mut short = 0;
    for q in &queries {
        if let Ok((_, all)) = view.rank_with(q, 10, None, &weights)
            && all < 10
        {
            short += 1;
        }
    }
    println!(
        "queries whose first tier (every word) holds fewer than 10 chunks: {short} of {}",
        queries.len()
    );
    Ok(())
}
