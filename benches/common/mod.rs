//! Helpers shared by the benchmarks: percentiles, process CPU and memory, machine facts.

#![allow(dead_code)]

use std::fs;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

pub fn median(samples: &[Duration]) -> Duration {
    let mut v = samples.to_vec();
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

pub fn median_f(samples: &[f64]) -> f64 {
    let mut v = samples.to_vec();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

pub struct Latency {
    pub p50: Duration,
    pub p90: Duration,
    pub p99: Duration,
    pub max: Duration,
    pub mean: Duration,
}

impl Latency {
    pub fn of(samples: &mut [Duration]) -> Latency {
        samples.sort();
        let n = samples.len();
        // Nearest-rank percentile.
        let pct = |p: f64| samples[((p * n as f64).ceil() as usize).clamp(1, n) - 1];
        let mean = samples.iter().sum::<Duration>() / n.max(1) as u32;
        Latency { p50: pct(0.50), p90: pct(0.90), p99: pct(0.99), max: samples[n - 1], mean }
    }
}

/// User + system CPU time of this process so far, in seconds (`/proc/self/stat`, 100 Hz ticks).
pub fn cpu_secs() -> f64 {
    let Ok(s) = fs::read_to_string("/proc/self/stat") else { return 0.0 };
    // Fields after the `(comm)`: state is field 3, utime 14, stime 15.
    let rest = s.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(11) + tick(12)) / 100.0
}

/// A field of `/proc/self/status` in kB (0 where unavailable).
pub fn proc_status_kb(field: &str) -> u64 {
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field) && l[field.len()..].starts_with(':'))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// Sum of the sizes of the regular files under `dir`.
pub fn dir_size(dir: &Path) -> u64 {
    let Ok(rd) = fs::read_dir(dir) else { return 0 };
    rd.flatten()
        .map(|e| match e.file_type() {
            Ok(ft) if ft.is_dir() => dir_size(&e.path()),
            Ok(ft) if ft.is_file() => e.metadata().map_or(0, |m| m.len()),
            _ => 0,
        })
        .sum()
}

pub fn machine() -> Value {
    let cpu = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_default();
    let mem_kb = fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines().next().and_then(|l| l.split_whitespace().nth(1)).and_then(|v| v.parse::<u64>().ok())
        })
        .unwrap_or(0);
    json!({
        "cpu": cpu,
        "cores": std::thread::available_parallelism().map_or(0, |n| n.get()),
        "mem_gib": mem_kb as f64 / 1024.0 / 1024.0,
        "loadavg": fs::read_to_string("/proc/loadavg").unwrap_or_default().trim(),
    })
}

/// A duration in milliseconds.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// A lexical `kb_search` request for `query` with `top_k` hits, every other option at its
/// default (as the in-process query benches send it).
pub fn lexical_request(query: &str, top_k: i64) -> lvs::wire::SearchRequest {
    lvs::wire::SearchRequest {
        query: query.to_owned(),
        mode: Some(lvs::config::SearchMode::Lexical),
        top_k: Some(top_k),
        ..Default::default()
    }
}
