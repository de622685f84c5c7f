#!/usr/bin/env python3
"""MCP stdio latency of the release binary (docs/reference/product.md section 6), raw JSON-RPC over pipes.

(a) process start -> `initialize` response, over N fresh starts against a project that already
    has an index (target < 50 ms). Baseline in the same run: the same spawn + write + read of
    the same line through `cat` (the cost of fork/exec and a pipe round trip from Python).
(b) `kb_search` round trip (`tools/call`, lexical, topK 10) over the queries, p50/p99
    (target p50 < 5 ms; issue #18: < 3 ms), in one long-lived server; the first call (opens the
    index) is reported on its own. Baseline in the same run: a `kb_status` round trip after
    each search (an MCP call that searches nothing).
(c) server RSS: idle after `initialize` (target < 100 MB) and after all searches.

Usage: mcp_latency.py --bin BIN --project-root DIR --storage-path DIR --queries QUERIES.jsonl
                      [--starts 20] [--passes 5] [--out FILE] [--extra-args ARGS]
"""

import argparse
import json
import math
import os
import shlex
import subprocess
import sys
import time

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "lvs-bench", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


# kb_search calls in flight at once in the concurrency measurement.
CONCURRENT = 8


def percentile(sorted_samples, p):
    n = len(sorted_samples)
    k = min(max(math.ceil(p * n), 1), n) - 1
    return sorted_samples[k]


def stats(samples):
    s = sorted(samples)
    ms = lambda x: x * 1e3  # noqa: E731
    return {
        "samples": len(s),
        "min_ms": ms(s[0]),
        "p50_ms": ms(percentile(s, 0.50)),
        "p90_ms": ms(percentile(s, 0.90)),
        "p99_ms": ms(percentile(s, 0.99)),
        "max_ms": ms(s[-1]),
        "mean_ms": ms(sum(s) / len(s)),
    }


def proc_kb(pid, field):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class Server:
    """The binary as an MCP server on pipes: newline-delimited JSON-RPC (also used by
    eval_hybrid.py). `stderr` is a file object for the server's log (default: discarded)."""

    def __init__(self, argv, stderr=None, close_timeout=10):
        self.t0 = time.perf_counter()
        self.stderr = stderr
        self.close_timeout = close_timeout
        self.p = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=stderr if stderr is not None else subprocess.DEVNULL,
        )
        self.next_id = 1

    def send(self, msg):
        self.p.stdin.write((json.dumps(msg, ensure_ascii=False) + "\n").encode())
        self.p.stdin.flush()

    def read_response(self, want_id):
        while True:
            line = self.p.stdout.readline()
            if not line:
                where = self.stderr.name if self.stderr is not None else "its stderr by running it by hand"
                raise RuntimeError(f"server closed stdout (see {where})")
            msg = json.loads(line)
            if msg.get("id") == want_id and ("result" in msg or "error" in msg):
                return msg

    def request(self, method, params):
        self.next_id += 1
        rid = self.next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return self.read_response(rid)

    def close(self):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        try:
            self.p.wait(timeout=self.close_timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        if self.stderr is not None:
            self.stderr.close()


def time_start(argv):
    """Spawn -> initialize response, in seconds; returns (seconds, server)."""
    s = Server(argv)
    s.send(INIT)
    s.read_response(1)
    return time.perf_counter() - s.t0, s


def time_cat():
    """Floor: spawn `cat`, write the initialize line, read it back."""
    t0 = time.perf_counter()
    p = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    p.stdin.write((json.dumps(INIT) + "\n").encode())
    p.stdin.flush()
    p.stdout.readline()
    t = time.perf_counter() - t0
    p.stdin.close()
    p.wait()
    return t


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--project-root", required=True)
    ap.add_argument("--storage-path", required=True)
    ap.add_argument("--queries", required=True)
    ap.add_argument("--starts", type=int, default=20)
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--top-k", type=int, default=10)
    ap.add_argument("--out", default=None)
    ap.add_argument("--extra-args", default="",
                    help="more server arguments, shell-quoted (e.g. '--config c.yaml' for another snippet window)")
    args = ap.parse_args()

    argv = [
        os.path.abspath(args.bin),
        "--project-root", os.path.abspath(args.project_root),
        "--storage-path", os.path.abspath(args.storage_path),
        "--embedding-provider", "none",
        *shlex.split(args.extra_args),
    ]
    with open(args.queries, encoding="utf-8") as f:
        queries = [json.loads(line)["query"] for line in f if line.strip()]

    # (a) start -> initialize. One untimed start warms the page cache for the binary.
    _, s = time_start(argv)
    s.close()
    starts, cats, idle_rss = [], [], []
    for _ in range(args.starts):
        cats.append(time_cat())
        t, s = time_start(argv)
        starts.append(t)
        s.send(INITIALIZED)
        time.sleep(0.05)
        idle_rss.append(proc_kb(s.p.pid, "VmRSS"))
        s.close()

    # (b) kb_search round trips on one server.
    _, s = time_start(argv)
    s.send(INITIALIZED)
    time.sleep(0.2)
    rss_idle = proc_kb(s.p.pid, "VmRSS")

    def call(q):
        return s.request(
            "tools/call",
            {"name": "kb_search", "arguments": {"request": {"query": q, "mode": "lexical", "topK": args.top_k}}},
        )

    t = time.perf_counter()
    first = call(queries[0])
    first_ms = (time.perf_counter() - t) * 1e3
    if "error" in first or first["result"].get("isError"):
        print(f"kb_search failed: {json.dumps(first, ensure_ascii=False)[:500]}", file=sys.stderr)
        sys.exit(1)
    errors = zero = 0
    for q in queries:  # warm-up pass, also counts
        r = call(q)
        res = r.get("result") or {}
        if "error" in r or res.get("isError"):
            errors += 1
        elif not (res.get("structuredContent") or {}).get("results"):
            zero += 1
    samples, status_samples = [], []
    for _ in range(args.passes):
        for q in queries:
            t = time.perf_counter()
            call(q)
            samples.append(time.perf_counter() - t)
            # Baseline of the same moment: a tool call that does no search (issue #18).
            t = time.perf_counter()
            s.request("tools/call", {"name": "kb_status", "arguments": {}})
            status_samples.append(time.perf_counter() - t)
    # (c) concurrency: the queries in groups of 8, each group sent at once (pipelined, as 8
    # clients would over HTTP) vs one at a time; wall time of all groups, medians of passes.
    conc = []
    for _ in range(args.passes):
        t = time.perf_counter()
        for q in queries:
            call(q)
        sequential = time.perf_counter() - t
        t = time.perf_counter()
        for i in range(0, len(queries), CONCURRENT):
            ids = []
            for q in queries[i:i + CONCURRENT]:
                s.next_id += 1
                ids.append(s.next_id)
                s.send({"jsonrpc": "2.0", "id": s.next_id, "method": "tools/call",
                        "params": {"name": "kb_search",
                                   "arguments": {"request": {"query": q, "mode": "lexical", "topK": args.top_k}}}})
            pending = set(ids)
            while pending:
                line = s.p.stdout.readline()
                if not line:
                    raise RuntimeError("server closed stdout")
                msg = json.loads(line)
                pending.discard(msg.get("id"))
        conc.append((sequential, time.perf_counter() - t))
    conc.sort(key=lambda c: c[1] / c[0])
    conc_seq, conc_par = conc[len(conc) // 2]
    rss_after = proc_kb(s.p.pid, "VmRSS")
    hwm_after = proc_kb(s.p.pid, "VmHWM")
    anon_after = proc_kb(s.p.pid, "RssAnon")
    file_after = proc_kb(s.p.pid, "RssFile")
    s.close()

    st = stats(starts)
    cat = stats(cats)
    se = stats(samples)
    ss = stats(status_samples)
    idle_rss.sort()
    result = {
        "argv": argv,
        "initialize": {**st, "target_ms": 50, "ratio_p50_to_target": st["p50_ms"] / 50},
        "spawn_floor_cat": cat,
        "initialize_over_cat_p50": st["p50_ms"] / cat["p50_ms"],
        "kb_search": {
            **se,
            "queries": len(queries),
            "passes": args.passes,
            "first_call_ms": first_ms,
            "errors": errors,
            "zero_results": zero,
            "target_p50_ms": 5,
            "ratio_p50_to_target": se["p50_ms"] / 5,
        },
        "baseline_kb_status": ss,
        "kb_search_over_kb_status_p50": se["p50_ms"] / ss["p50_ms"],
        "concurrent": {
            "in_flight": CONCURRENT,
            "sequential_ms": conc_seq * 1e3,
            "pipelined_ms": conc_par * 1e3,
            "pipelined_over_sequential": conc_par / conc_seq,
        },
        "rss": {
            "idle_after_initialize_kb_p50": idle_rss[len(idle_rss) // 2] if idle_rss else 0,
            "idle_long_lived_kb": rss_idle,
            "after_searches_kb": rss_after,
            "hwm_after_searches_kb": hwm_after,
            "rss_anon_after_searches_kb": anon_after,
            "rss_file_after_searches_kb": file_after,
            "target_idle_mb": 100,
        },
    }
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(result, f, ensure_ascii=False, indent=2)
    print(json.dumps(result, ensure_ascii=False))


if __name__ == "__main__":
    main()
