#!/usr/bin/env python3
"""Edits during a large vector catch-up (issue #10): how soon is an edit searchable lexically
while thousands of chunks wait for a slow embedding endpoint?

Builds a generated project (FILES x SECTIONS chunks, default 500 x 11 = 5,500), indexes it
lexically, then starts the release server with embeddings on against a slow OpenAI-compatible
endpoint served here on 127.0.0.1 (each request sleeps --stall-ms, batchSize 16), starts
kb_reindex (every chunk pending) and, while the catch-up runs, makes --edits kb_create calls,
each with a unique word, polling kb_search until it is found. Reported: create call, create ->
searchable (p50/p99/max), and the catch-up progress at the end (it must still be far from done,
or the measurement proves nothing). Baseline in the same run: the same edits with embeddings off.

Usage: catchup_edit.py --bin BIN [--files 500] [--sections 11] [--edits 20] [--stall-ms 100]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_latency import INIT, INITIALIZED, Server, stats  # noqa: E402

DIMS = 64


def slow_embedding_server(stall_s):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            time.sleep(stall_s)
            data = []
            for i, text in enumerate(body["input"]):
                v = [0.0] * DIMS
                for ch in text:
                    v[ord(ch) % DIMS] += 1.0
                n = sum(x * x for x in v) ** 0.5 or 1.0
                data.append({"index": i, "embedding": [x / n for x in v]})
            out = json.dumps({"data": data}).encode()
            try:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the server under test was closed while this request slept

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def call(s, tool, args):
    r = s.request("tools/call", {"name": tool, "arguments": args})
    res = r.get("result") or {}
    if "error" in r or res.get("isError"):
        raise RuntimeError(f"{tool} failed: {json.dumps(r, ensure_ascii=False)[:300]}")
    return res.get("structuredContent")


def measure(bin_path, root, config, edits, tag, wait_for_catch_up):
    s = Server([bin_path, "--project-root", root, "--config", config])
    s.send(INIT)
    s.read_response(1)
    s.send(INITIALIZED)
    if wait_for_catch_up:
        assert call(s, "kb_reindex", {"request": {}})["started"]
        deadline = time.time() + 300
        while True:
            st = call(s, "kb_status", {})
            emb = ((st["indexing"] or {}).get("current") or {}).get("embedding") or {}
            if emb.get("embeddedChunks", 0) >= 32:
                break
            if time.time() > deadline:
                raise RuntimeError("the catch-up never started")
            time.sleep(0.05)
    creates, searchable = [], []
    for i in range(edits):
        word = f"翡翠{tag}{i:03d}号"
        t0 = time.perf_counter()
        call(s, "kb_create", {"request": {"path": f"new/{tag}-{i}.md", "markdown": f"# 追記 {i}\n\n合言葉は{word}である。\n"}})
        creates.append(time.perf_counter() - t0)
        while True:
            hits = call(s, "kb_search", {"request": {"query": word, "mode": "lexical", "topK": 3}})
            if any(h["path"] == f"new/{tag}-{i}.md" for h in hits["results"]):
                break
            if time.perf_counter() - t0 > 60:
                raise RuntimeError("an edit never became searchable")
        searchable.append(time.perf_counter() - t0)
    st = call(s, "kb_status", {})
    s.close()
    return creates, searchable, st


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--files", type=int, default=500)
    ap.add_argument("--sections", type=int, default=11)
    ap.add_argument("--edits", type=int, default=20)
    ap.add_argument("--stall-ms", type=int, default=100)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    bin_path = os.path.abspath(args.bin)
    work = tempfile.mkdtemp(prefix="lvs-catchup-")
    try:
        root = os.path.join(work, "project")
        for f in range(args.files):
            d = os.path.join(root, "docs", f"{f % 40:03d}")
            os.makedirs(d, exist_ok=True)
            text = f"# 資料 {f}\n\n" + "".join(
                f"## 節 {f}-{s}\n\n倉庫{f}の在庫{s}について記録する。\n\n" for s in range(args.sections)
            )
            with open(os.path.join(d, f"{f}.md"), "w", encoding="utf-8") as fh:
                fh.write(text)
        srv = slow_embedding_server(args.stall_ms / 1000)
        endpoint = f"http://127.0.0.1:{srv.server_address[1]}/v1"
        lexical_cfg = os.path.join(work, "lexical.yaml")
        vector_cfg = os.path.join(work, "vectors.yaml")
        with open(lexical_cfg, "w") as fh:
            fh.write("knowledgeBase:\n  allowWrites: true\nembedding:\n  provider: none\n")
        with open(vector_cfg, "w") as fh:
            fh.write(
                "knowledgeBase:\n  allowWrites: true\nembedding:\n  provider: openai-compatible\n"
                f"  endpoint: {endpoint}\n  dimensions: {DIMS}\n  batchSize: 16\n"
            )
        subprocess.run([bin_path, "--project-root", root, "--config", lexical_cfg, "reindex"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        chunks = args.files * args.sections
        base_c, base_s, _ = measure(bin_path, root, lexical_cfg, args.edits, "lex", False)
        shutil.rmtree(os.path.join(root, "new"))
        subprocess.run([bin_path, "--project-root", root, "--config", lexical_cfg, "reindex"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        c, s, st = measure(bin_path, root, vector_cfg, args.edits, "vec", True)
        emb = ((st["indexing"] or {}).get("current") or {}).get("embedding") or {}
        result = {
            "chunks": chunks,
            "stall_ms": args.stall_ms,
            "edits": args.edits,
            "during_catch_up": {
                "create": stats(c),
                "create_to_searchable": stats(s),
                "catch_up_running_at_end": bool((st["indexing"] or {}).get("isRunning")),
                "embedded_at_end": emb.get("embeddedChunks"),
                "total_to_embed": emb.get("totalChunks"),
            },
            "embeddings_off_baseline": {"create": stats(base_c), "create_to_searchable": stats(base_s)},
        }
        if args.out:
            with open(args.out, "w", encoding="utf-8") as fh:
                json.dump(result, fh, indent=2)
        print(json.dumps(result, ensure_ascii=False))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
