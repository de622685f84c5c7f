#!/usr/bin/env python3
"""kb_search over Streamable HTTP at 1, 4 and 16 concurrent clients, and over stdio with one client
(the baseline), in one run against one index, so the ratios are fair (docs/performance.md).

Raw JSON-RPC, no SDK (its Python overhead would be most of what is measured):
- stdio: newline-delimited JSON-RPC over the server's pipes, one request at a time;
- HTTP: `serve --http 127.0.0.1:0`; each client is a separate Python process (no GIL sharing)
  with one keep-alive connection, POSTing `tools/call` one request at a time.
Every client runs the same bounded loop (`--requests` searches over the query list, after an
untimed warm-up); all clients of a level start together (a barrier). Reported per level:
requests, wall time, throughput (requests/s), p50 and p99 latency, errors. Only 127.0.0.1.

Queries: the first heading of about 150 Markdown files spread evenly over the corpus (sorted
paths), so the set is fixed for a corpus.

Usage: http_latency.py --bin BIN --corpus DIR [--storage-path DIR] [--requests 200] [--out FILE]
"""

import argparse
import http.client
import json
import math
import multiprocessing as mp
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mcp_latency import INIT, INITIALIZED, Server  # noqa: E402

LEVELS = (1, 4, 16)
PROTOCOL = "2025-11-25"
# Untimed searches each HTTP client makes first (the stdio baseline warms up on every query once).
WARM_UP = 10
URL_LINE = re.compile(r"serving MCP over Streamable HTTP at http://([0-9.]+):(\d+)/mcp")


def percentile(sorted_samples, p):
    n = len(sorted_samples)
    return sorted_samples[min(max(math.ceil(p * n), 1), n) - 1]


def summary(latencies, wall, errors):
    s = sorted(latencies)
    return {
        "requests": len(s),
        "wall_s": wall,
        "throughput_rps": len(s) / wall if wall else 0.0,
        "p50_ms": percentile(s, 0.50) * 1e3,
        "p99_ms": percentile(s, 0.99) * 1e3,
        "max_ms": s[-1] * 1e3,
        "errors": errors,
    }


def queries_of(corpus, wanted=150):
    files = sorted(p for p in Path(corpus).rglob("*.md") if p.is_file())
    out = []
    for p in files[::max(1, len(files) // wanted)]:
        for line in p.read_text(encoding="utf-8", errors="replace").splitlines():
            m = re.match(r"#{1,3}\s+(.+)", line)
            if m:
                text = re.sub(r"[`*_\[\]()<>{}#|]", " ", m.group(1)).strip()
                if text:
                    out.append(text[:60])
                break
    return out


def search_params(query):
    return {"name": "kb_search", "arguments": {"request": {"query": query, "mode": "lexical", "topK": 10}}}


def failed(msg):
    return bool("error" in msg or (msg.get("result") or {}).get("isError"))


# --- HTTP --------------------------------------------------------------------------------------


class HttpClient:
    def __init__(self, host, port):
        self.conn = http.client.HTTPConnection(host, port, timeout=60)
        self.headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                        "MCP-Protocol-Version": PROTOCOL}
        self.next_id = 0

    def call(self, method, params):
        self.next_id += 1
        body = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params},
                          ensure_ascii=False).encode()
        self.conn.request("POST", "/mcp", body=body, headers=self.headers)
        resp = self.conn.getresponse()
        data = resp.read()
        if resp.status != 200:
            return {"error": {"status": resp.status, "body": data[:200].decode("utf-8", "replace")}}
        return json.loads(data)


def http_worker(host, port, queries, requests, barrier, results):
    c = HttpClient(host, port)
    init = c.call("initialize", {**INIT["params"], "protocolVersion": PROTOCOL})
    errors = int(failed(init))
    for q in queries[:WARM_UP]:  # warm-up, untimed
        errors += int(failed(c.call("tools/call", search_params(q))))
    barrier.wait()
    latencies = []
    for i in range(requests):
        t = time.perf_counter()
        r = c.call("tools/call", search_params(queries[i % len(queries)]))
        latencies.append(time.perf_counter() - t)
        errors += int(failed(r))
    results.put((latencies, errors))


def run_http(host, port, queries, clients, requests):
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(clients + 1)
    results = ctx.Queue()
    procs = [ctx.Process(target=http_worker, args=(host, port, queries, requests, barrier, results))
             for _ in range(clients)]
    for p in procs:
        p.start()
    barrier.wait()
    t0 = time.perf_counter()
    collected = [results.get() for _ in procs]
    wall = time.perf_counter() - t0
    for p in procs:
        p.join()
    latencies = [x for lat, _ in collected for x in lat]
    return summary(latencies, wall, sum(e for _, e in collected))


def start_http(argv):
    log = Path(tempfile.mkdtemp(prefix="lvs-http-bench-")) / "stderr.txt"
    proc = subprocess.Popen([*argv, "serve", "--http", "127.0.0.1:0"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=log.open("wb"))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        m = URL_LINE.search(log.read_text(errors="replace"))
        if m:
            return proc, m.group(1), int(m.group(2))
        if proc.poll() is not None:
            break
        time.sleep(0.02)
    raise RuntimeError("the HTTP server did not start: " + log.read_text(errors="replace"))


# --- stdio -------------------------------------------------------------------------------------


def run_stdio(argv, queries, requests):
    s = Server(argv)
    s.send(INIT)
    s.read_response(1)
    s.send(INITIALIZED)
    errors = 0
    for q in queries:  # warm-up pass, untimed
        errors += int(failed(s.request("tools/call", search_params(q))))
    latencies = []
    t0 = time.perf_counter()
    for i in range(requests):
        t = time.perf_counter()
        r = s.request("tools/call", search_params(queries[i % len(queries)]))
        latencies.append(time.perf_counter() - t)
        errors += int(failed(r))
    wall = time.perf_counter() - t0
    s.close()
    return summary(latencies, wall, errors)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--storage-path", default=None, help="index folder (default: a fresh temp folder)")
    ap.add_argument("--requests", type=int, default=200, help="timed searches per client")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    storage = os.path.abspath(args.storage_path or tempfile.mkdtemp(prefix="lvs-http-bench-index-"))
    argv = [os.path.abspath(args.bin), "--project-root", os.path.abspath(args.corpus),
            "--storage-path", storage, "--embedding-provider", "none", "--no-watch-files"]
    t = time.perf_counter()
    subprocess.run([*argv, "reindex"], check=True, stdout=subprocess.DEVNULL)
    print(f"index ready in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    queries = queries_of(args.corpus)
    print(f"{len(queries)} queries; load average {open('/proc/loadavg').read().split()[:3]}", file=sys.stderr)

    result = {"corpus": os.path.basename(os.path.abspath(args.corpus)), "queries": len(queries),
              "requests_per_client": args.requests, "cpus": os.cpu_count(),
              "loadavg_before": open("/proc/loadavg").read().split()[:3], "levels": []}
    result["levels"].append({"transport": "stdio", "clients": 1,
                             **run_stdio(argv, queries, args.requests)})
    proc, host, port = start_http(argv)
    try:
        for clients in LEVELS:
            result["levels"].append({"transport": "http", "clients": clients,
                                     **run_http(host, port, queries, clients, args.requests)})
    finally:
        proc.terminate()
        proc.wait(30)
    result["loadavg_after"] = open("/proc/loadavg").read().split()[:3]

    base = result["levels"][0]
    print("| transport | clients | requests | wall s | req/s | p50 ms | p99 ms | max ms | errors | p50 vs stdio |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in result["levels"]:
        print(f"| {r['transport']} | {r['clients']} | {r['requests']} | {r['wall_s']:.2f} | "
              f"{r['throughput_rps']:.0f} | {r['p50_ms']:.2f} | {r['p99_ms']:.2f} | {r['max_ms']:.1f} | "
              f"{r['errors']} | {r['p50_ms'] / base['p50_ms']:.2f}× |")
    print(f"load average before {' '.join(result['loadavg_before'])}, after {' '.join(result['loadavg_after'])}")
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2), encoding="utf-8")
    if any(r["errors"] for r in result["levels"]):
        sys.exit(1)


if __name__ == "__main__":
    main()
