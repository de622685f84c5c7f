#!/usr/bin/env python3
"""SQLite FTS5 baseline for the index benchmark (docs/reference/product.md section 6).

Reads the chunk rows and the queries written by `cargo bench --bench index`
(chunks.jsonl: {"path","heading_path","text"}; queries.jsonl: {"query","kind"}) and, for the
FTS5 tokenizers `unicode61` (the original server's) and `trigram` (its nearest option),
builds the original's table `chunks_fts USING fts5(text, heading_path)` with rowid = chunk id
in one transaction, then runs every query the way the original did (docs/reference/original-server.md section 8.2):
tokens `[\\p{L}\\p{N}_-]+`, each double-quoted, joined with AND, bm25 order, a 16-token
snippet, LIMIT top-k.

Prints one JSON object: per tokenizer the build time, database size, query latency
(p50/p90/p99/max over all timed samples) and how many queries return no row at all (the
recall problem: unicode61 keeps a whole run of Japanese as one token; trigram cannot match a
term shorter than three characters).

Usage: fts5_baseline.py ROWS.jsonl QUERIES.jsonl [--passes 5] [--top-k 10] [--db-dir DIR]
"""

import argparse
import json
import math
import os
import re
import sqlite3
import sys
import tempfile
import time

TOKEN = re.compile(r"[\w-]+")  # Python's \w is Unicode letters, digits and '_'


def build_match(query):
    """The original's query builder: quoted tokens joined with AND (None if no token)."""
    tokens = TOKEN.findall(query)
    if not tokens:
        return None
    return " AND ".join('"' + t.replace('"', '""') + '"' for t in tokens)


def percentile(sorted_samples, p):
    """Nearest-rank percentile (same definition as benches/index.rs)."""
    n = len(sorted_samples)
    k = min(max(math.ceil(p * n), 1), n) - 1
    return sorted_samples[k]


def db_size(path):
    total = 0
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            total += os.path.getsize(path + suffix)
        except OSError:
            pass
    return total


def run_tokenizer(tokenizer, rows, queries, db_dir, passes, top_k):
    path = os.path.join(db_dir, f"fts5-{tokenizer}.db")
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    con = sqlite3.connect(path, isolation_level=None)
    con.execute(f"CREATE VIRTUAL TABLE chunks_fts USING fts5(text, heading_path, tokenize='{tokenizer}')")
    t0 = time.perf_counter()
    con.execute("BEGIN")
    con.executemany(
        "INSERT INTO chunks_fts(rowid, text, heading_path) VALUES (?, ?, ?)",
        ((i + 1, r["text"], r["heading_path"] or None) for i, r in enumerate(rows)),
    )
    con.execute("COMMIT")
    build = time.perf_counter() - t0
    size = db_size(path)

    sql = (
        "SELECT rowid, bm25(chunks_fts) AS score, snippet(chunks_fts, 0, '[', ']', '...', 16) "
        "FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY score LIMIT ?"
    )

    def search(q):
        m = build_match(q)
        if m is None:
            return []
        return con.execute(sql, (m, top_k)).fetchall()

    zero = {"all": 0}
    hits = 0
    errors = 0
    for q in queries:
        try:
            r = search(q["query"])
        except sqlite3.Error:
            errors += 1
            r = []
        hits += len(r)
        if not r:
            zero["all"] += 1
            zero[q.get("kind", "other")] = zero.get(q.get("kind", "other"), 0) + 1
    samples = []
    for _ in range(passes):
        for q in queries:
            t = time.perf_counter()
            try:
                search(q["query"])
            except sqlite3.Error:
                pass
            samples.append(time.perf_counter() - t)
    con.close()
    samples.sort()
    ms = lambda s: s * 1e3  # noqa: E731
    return {
        "build_seconds": build,
        "db_bytes": size,
        "query_samples": len(samples),
        "p50_ms": ms(percentile(samples, 0.50)),
        "p90_ms": ms(percentile(samples, 0.90)),
        "p99_ms": ms(percentile(samples, 0.99)),
        "max_ms": ms(samples[-1]),
        "mean_ms": ms(sum(samples) / len(samples)),
        "zero_results": zero["all"],
        "zero_results_by_kind": {k: v for k, v in zero.items() if k != "all"},
        "errors": errors,
        "mean_hits": hits / max(len(queries), 1),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rows")
    ap.add_argument("queries")
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--top-k", type=int, default=10)
    ap.add_argument("--db-dir", default=None, help="where the databases go (default: a temp dir, removed)")
    ap.add_argument("--out", default=None, help="also write the JSON here")
    ap.add_argument("--tokenizers", default="unicode61,trigram")
    args = ap.parse_args()

    with open(args.rows, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    with open(args.queries, encoding="utf-8") as f:
        queries = [json.loads(line) for line in f if line.strip()]
    text_bytes = sum(len(r["text"].encode()) + len((r["heading_path"] or "").encode()) for r in rows)

    result = {
        "sqlite_version": sqlite3.sqlite_version,
        "python": sys.version.split()[0],
        "rows": len(rows),
        "text_bytes": text_bytes,
        "queries": len(queries),
        "passes": args.passes,
        "top_k": args.top_k,
    }
    tmp = None
    db_dir = args.db_dir
    if db_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="lvs-fts5-")
        db_dir = tmp.name
    os.makedirs(db_dir, exist_ok=True)
    try:
        for tok in args.tokenizers.split(","):
            print(f"fts5 {tok}: building {len(rows)} rows ...", file=sys.stderr)
            result[tok] = run_tokenizer(tok, rows, queries, db_dir, args.passes, args.top_k)
    finally:
        if tmp is not None:
            tmp.cleanup()
    text = json.dumps(result, ensure_ascii=False)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(result, f, ensure_ascii=False, indent=2)
    print(text)


if __name__ == "__main__":
    main()
