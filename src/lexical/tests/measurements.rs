//! Measurements, ignored by default (run by name): analyzer and query timings over the
//! shared corpora.

use super::*;

// `../shared/<sub>` (or under `LVS_SHARED_DIR`); `None` after one "skipped" line when absent.
use crate::testdata::shared_or_skip;

fn markdown_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            markdown_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "md") {
            out.push(p);
        }
    }
}

/// User + system CPU seconds of this process so far (Linux `/proc/self/stat`).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat.rsplit(')').next().unwrap_or("").split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

/// Tokenizing throughput on visualstudio-docs-ja (`LVS_MEASURE_BYTES`, default 1 MiB):
/// lindera alone vs our analyzer vs a full index. Wall and CPU time, best of `LVS_MEASURE_RUNS`
/// (default 3), so other processes on the machine disturb the numbers less.
/// `cargo test --release --lib lexical::tests::measure_tokenize -- --ignored --nocapture`
#[test]
#[ignore = "measurement; needs ../shared/corpora"]
fn measure_tokenize() {
    use std::borrow::Cow;
    use std::time::Instant;

    let Some(corpus) = shared_or_skip("corpora/visualstudio-docs-ja/docs") else { return };
    let mut files = Vec::new();
    markdown_files(&corpus, &mut files);
    let limit: usize =
        std::env::var("LVS_MEASURE_BYTES").ok().and_then(|v| v.parse().ok()).unwrap_or(1 << 20);
    let runs: usize = std::env::var("LVS_MEASURE_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(3);
    let mut texts = Vec::new();
    let mut bytes = 0;
    for f in files {
        if bytes >= limit {
            break;
        }
        if let Ok(t) = std::fs::read_to_string(&f) {
            bytes += t.len();
            texts.push(t);
        }
    }
    assert!(bytes > 0, "corpus not found");
    let mb = bytes as f64 / (1 << 20) as f64;
    eprintln!("{} files, {bytes} bytes", texts.len());
    let measure = |what: &str, f: &mut dyn FnMut()| {
        let (mut wall, mut cpu) = (f64::MAX, f64::MAX);
        for _ in 0..runs {
            let (w0, c0) = (Instant::now(), cpu_seconds());
            f();
            wall = wall.min(w0.elapsed().as_secs_f64());
            cpu = cpu.min(cpu_seconds() - c0);
        }
        eprintln!(
            "{what:<40} wall {:>7.0} ms ({:>5.2} MB/s)  cpu {:>7.0} ms",
            wall * 1e3,
            mb / wall,
            cpu * 1e3
        );
    };
    let dict = super::dictionary::load().unwrap();
    for (name, mode) in [
        ("lindera alone, normal mode", lindera::mode::Mode::Normal),
        ("lindera alone, decompose mode", lindera::mode::Mode::Decompose(lindera::mode::Penalty::default())),
    ] {
        let seg = lindera::segmenter::Segmenter::new(mode, dict.clone(), None);
        measure(name, &mut || {
            for t in &texts {
                std::hint::black_box(seg.segment(Cow::Borrowed(t.as_str())).unwrap().len());
            }
        });
    }
    let mut a = Analyzer::new();
    measure("our analyzer, one thread", &mut || {
        for t in &texts {
            a.run(t);
            std::hint::black_box(a.tokens().len());
        }
    });
    measure("full index on disk, 2 indexing threads", &mut || {
        let dir = tempfile::tempdir().unwrap();
        let index = LexicalIndex::open_or_create(dir.path()).unwrap();
        let mut w = index.writer(WriterSize::Bulk(128 << 20)).unwrap();
        for (i, t) in texts.iter().enumerate() {
            w.add(&doc(i as u64, &format!("{i}.md"), "", t)).unwrap();
        }
        w.commit(1).unwrap();
    });
}

/// Passage-level MRR@10 on jsquad-valid (passages only, no distractors) and query latency.
/// `cargo test --release lexical::tests::eval_jsquad -- --ignored --nocapture`
#[test]
#[ignore = "evaluation; needs ../shared/eval"]
fn eval_jsquad() {
    use std::collections::HashMap;
    use std::time::Instant;

    let Some(base) = shared_or_skip("eval/jsquad-valid") else { return };
    let field = |line: &str, key: &str| -> String {
        // the files are simple one-object-per-line JSON
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        v[key].as_str().unwrap_or_default().to_string()
    };
    let corpus = std::fs::read_to_string(base.join("corpus.jsonl")).expect("eval set");
    let mut docs = Vec::new();
    let mut id_of: HashMap<u64, String> = HashMap::new();
    for (i, line) in corpus.lines().enumerate() {
        let id = field(line, "_id");
        docs.push(doc(i as u64, &format!("{id}.md"), &field(line, "title"), &field(line, "text")));
        id_of.insert(i as u64, id);
    }
    if std::env::var_os("LVS_EVAL_DISTRACTORS").is_some() {
        // the three documentation corpora, cut into paragraph chunks of up to ~2 KB
        let Some(corpora) = shared_or_skip("corpora") else { return };
        let mut files = Vec::new();
        markdown_files(&corpora, &mut files);
        for f in files {
            let Ok(text) = std::fs::read_to_string(&f) else { continue };
            let mut chunk = String::new();
            for para in text.split("\n\n") {
                if !chunk.is_empty() && chunk.len() + para.len() > 2000 {
                    docs.push(doc(docs.len() as u64 + 1_000_000, "distractor.md", "", &chunk));
                    chunk.clear();
                }
                chunk.push_str(para);
                chunk.push_str("\n\n");
            }
            if !chunk.trim().is_empty() {
                docs.push(doc(docs.len() as u64 + 1_000_000, "distractor.md", "", &chunk));
            }
        }
        for d in &docs {
            id_of.entry(d.chunk_id).or_insert_with(|| "distractor".to_string());
        }
    }
    let started = Instant::now();
    let index = index_with(&docs);
    eprintln!("indexed {} chunks in {:?}", docs.len(), started.elapsed());
    let qrels_text = std::fs::read_to_string(base.join("qrels/passage.tsv")).unwrap();
    let mut qrels: HashMap<&str, Vec<&str>> = HashMap::new();
    for line in qrels_text.lines().skip(1) {
        let mut cols = line.split('\t');
        if let (Some(q), Some(c)) = (cols.next(), cols.next()) {
            qrels.entry(q).or_default().push(c);
        }
    }
    let queries = std::fs::read_to_string(base.join("queries.jsonl")).unwrap();
    let (mut rr, mut n, mut found) = (0.0, 0, 0);
    let mut times = Vec::new();
    let limit: usize =
        std::env::var("LVS_EVAL_LIMIT").ok().and_then(|v| v.parse().ok()).unwrap_or(usize::MAX);
    for line in queries.lines().step_by(if limit < 4442 { 4442 / limit } else { 1 }) {
        let (qid, text) = (field(line, "_id"), field(line, "text"));
        let Some(rel) = qrels.get(qid.as_str()) else { continue };
        let start = Instant::now();
        let hits = index.search(&text, 10, None).unwrap_or_default();
        times.push(start.elapsed());
        n += 1;
        let rank = hits.iter().position(|h| rel.contains(&id_of[&h.chunk_id].as_str()));
        if let Some(rank) = rank {
            rr += 1.0 / (rank + 1) as f64;
            found += 1;
        }
        if rank != Some(0) && std::env::var_os("LVS_EVAL_SHOW").is_some() {
            let p = super::query::plan(&text, &mut Analyzer::new());
            let clauses: Vec<String> = p
                .strict
                .iter()
                .map(|c| {
                    format!(
                        "{:?}|{:?}",
                        c.phrases
                            .iter()
                            .map(|ph| ph.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>().join(" "))
                            .collect::<Vec<_>>(),
                        c.terms
                    )
                })
                .collect();
            eprintln!(
                "Q {text} rank={rank:?} rel={rel:?} top={:?}\n   clauses={clauses:?} loose={:?}",
                hits.iter().take(3).map(|h| id_of[&h.chunk_id].as_str()).collect::<Vec<_>>(),
                p.loose
            );
        }
    }
    times.sort();
    eprintln!(
        "jsquad passages: {} docs, {n} queries, MRR@10 {:.4}, recall@10 {:.4}, p50 {:?}, p99 {:?}",
        docs.len(),
        rr / n as f64,
        found as f64 / n as f64,
        times[times.len() / 2],
        times[times.len() * 99 / 100]
    );
}

/// Only our analyzer over `LVS_MEASURE_BYTES` of the corpus (for `perf record`).
#[test]
#[ignore = "measurement; needs ../shared/corpora"]
fn measure_analyzer_only() {
    let Some(corpus) = shared_or_skip("corpora/visualstudio-docs-ja/docs") else { return };
    let mut files = Vec::new();
    markdown_files(&corpus, &mut files);
    let limit: usize =
        std::env::var("LVS_MEASURE_BYTES").ok().and_then(|v| v.parse().ok()).unwrap_or(4 << 20);
    let mut texts = Vec::new();
    let mut bytes = 0;
    for f in files {
        if bytes >= limit {
            break;
        }
        if let Ok(t) = std::fs::read_to_string(&f) {
            bytes += t.len();
            texts.push(t);
        }
    }
    let mut a = Analyzer::new();
    let start = std::time::Instant::now();
    for t in &texts {
        a.run(t);
    }
    eprintln!("analyzer: {bytes} bytes in {:?}", start.elapsed());
}

/// Full index of visualstudio-docs-ja (chunks of ≤ 2 KB paragraphs) vs lindera alone, then
/// query latency for heading-like queries (top 10 with snippets).
/// `cargo test --release --lib lexical::tests::measure_corpus -- --ignored --nocapture`
#[test]
#[ignore = "measurement; needs ../shared/corpora"]
fn measure_corpus() {
    use std::borrow::Cow;
    use std::time::Instant;

    let Some(corpus) = shared_or_skip("corpora/visualstudio-docs-ja") else { return };
    let mut files = Vec::new();
    markdown_files(&corpus, &mut files);
    let mut docs = Vec::new();
    let mut queries = Vec::new();
    let mut bytes = 0;
    for (i, f) in files.iter().enumerate() {
        let Ok(text) = std::fs::read_to_string(f) else { continue };
        bytes += text.len();
        if i % 20 == 0
            && let Some(h) = text.lines().find(|l| l.starts_with("# ") || l.starts_with("## "))
        {
            queries.push(h.trim_start_matches('#').trim().to_string());
        }
        let path = f.to_string_lossy().to_string();
        let mut chunk = String::new();
        for para in text.split("\n\n") {
            if !chunk.is_empty() && chunk.len() + para.len() > 2000 {
                docs.push(doc(docs.len() as u64, &path, "", &chunk));
                chunk.clear();
            }
            chunk.push_str(para);
            chunk.push_str("\n\n");
        }
        if !chunk.trim().is_empty() {
            docs.push(doc(docs.len() as u64, &path, "", &chunk));
        }
    }
    eprintln!("{} files, {bytes} bytes, {} chunks, {} queries", files.len(), docs.len(), queries.len());

    let dict = super::dictionary::load().unwrap();
    let seg = lindera::segmenter::Segmenter::new(lindera::mode::Mode::Normal, dict, None);
    let (w0, c0) = (Instant::now(), cpu_seconds());
    for d in &docs {
        std::hint::black_box(seg.segment(Cow::Borrowed(d.text.as_str())).unwrap().len());
    }
    eprintln!("lindera alone:  wall {:?}, cpu {:.2} s", w0.elapsed(), cpu_seconds() - c0);

    let dir = tempfile::tempdir().unwrap();
    let index = LexicalIndex::open_or_create(dir.path()).unwrap();
    let (w0, c0) = (Instant::now(), cpu_seconds());
    let mut w = index.writer(WriterSize::Bulk(128 << 20)).unwrap();
    for d in &docs {
        w.add(d).unwrap();
    }
    w.commit(1).unwrap();
    eprintln!("full index:     wall {:?}, cpu {:.2} s", w0.elapsed(), cpu_seconds() - c0);

    for (label, filter) in
        [("no scope", None), ("scope", Some(&(|p: &str| p.contains("/ide/")) as &ScopeFilter<'_>))]
    {
        let mut times = Vec::new();
        let repeat: usize =
            std::env::var("LVS_MEASURE_REPEAT").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
        for q in queries.iter().cycle().take(queries.len() * repeat) {
            let start = Instant::now();
            let _ = index.search(q, 10, filter);
            times.push(start.elapsed());
        }
        times.sort();
        eprintln!(
            "queries ({label}): p50 {:?}, p90 {:?}, p99 {:?}, max {:?}",
            times[times.len() / 2],
            times[times.len() * 9 / 10],
            times[times.len() * 99 / 100],
            times[times.len() - 1]
        );
    }
}
