#!/usr/bin/env python3
"""A caching proxy in front of an OpenAI-compatible embedding server (benchmark helper).

Embedding a corpus on two shared cores takes many minutes; the evaluation runs it again for
every configuration and binary. This proxy answers `POST /v1/embeddings` from a SQLite cache
keyed by (upstream model tag, input_type, model, text) and forwards only the misses (in one
upstream request per incoming request, in input order). Vectors are stored as float32 bytes.

    embed_cache.py --upstream http://127.0.0.1:8000/v1 --db CACHE.sqlite --tag e5-small-q4 [--port 0]

Prints "listening on http://HOST:PORT/v1" to stderr. Importable: `CachingProxy(...).start()`.
Standard library only (the vectors stay lists of floats on the wire).
"""

import argparse
import hashlib
import json
import sqlite3
import struct
import sys
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Cache:
    def __init__(self, path, tag):
        self.db = sqlite3.connect(path, check_same_thread=False)
        self.db.execute("CREATE TABLE IF NOT EXISTS v (k TEXT PRIMARY KEY, dims INTEGER, data BLOB)")
        self.db.commit()
        self.tag = tag
        self.lock = threading.Lock()
        self.hits = self.misses = 0

    def key(self, input_type, model, text):
        h = hashlib.sha256()
        for part in (self.tag, input_type or "", model or "", text):
            h.update(part.encode("utf-8"))
            h.update(b"\0")
        return h.hexdigest()

    def get(self, keys):
        with self.lock:
            out = []
            for k in keys:
                row = self.db.execute("SELECT dims, data FROM v WHERE k = ?", (k,)).fetchone()
                out.append(list(struct.unpack(f"<{row[0]}f", row[1])) if row else None)
            return out

    def put(self, items):
        with self.lock:
            self.db.executemany(
                "INSERT OR REPLACE INTO v VALUES (?, ?, ?)",
                [(k, len(v), struct.pack(f"<{len(v)}f", *v)) for k, v in items],
            )
            self.db.commit()


class CachingProxy:
    def __init__(self, upstream, db_path, tag, host="127.0.0.1", port=0):
        self.upstream = upstream.rstrip("/") + "/embeddings"
        self.cache = Cache(db_path, tag)
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length", 0) or 0)
                raw = self.rfile.read(n)
                try:
                    code, body = proxy.handle(json.loads(raw.decode("utf-8")))
                except Exception as e:  # a broken upstream must answer, not hang the client
                    code, body = 502, {"error": {"message": f"embed_cache: {e}"}}
                data = json.dumps(body).encode("utf-8")
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer((host, port), Handler)
        self.endpoint = f"http://{host}:{self.httpd.server_address[1]}/v1"

    def handle(self, req):
        texts = req.get("input")
        if isinstance(texts, str):
            texts = [texts]
        keys = [self.cache.key(req.get("input_type"), req.get("model"), t) for t in texts]
        found = self.cache.get(keys)
        missing = [i for i, v in enumerate(found) if v is None]
        self.cache.hits += len(texts) - len(missing)
        self.cache.misses += len(missing)
        if missing:
            fwd = dict(req)
            fwd["input"] = [texts[i] for i in missing]
            r = urllib.request.Request(self.upstream, data=json.dumps(fwd).encode("utf-8"),
                                       headers={"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(r, timeout=3600) as resp:
                    body = json.load(resp)
            except urllib.error.HTTPError as e:
                return e.code, json.loads(e.read().decode("utf-8") or "{}")
            got = sorted(body["data"], key=lambda d: d["index"])
            self.cache.put([(keys[i], d["embedding"]) for i, d in zip(missing, got)])
            for i, d in zip(missing, got):
                found[i] = d["embedding"]
        data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(found)]
        return 200, {"object": "list", "data": data, "model": req.get("model")}

    def start(self):
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self):
        self.httpd.shutdown()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--tag", required=True, help="names the upstream model in the cache key")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    a = ap.parse_args()
    p = CachingProxy(a.upstream, a.db, a.tag, a.host, a.port)
    print(f"listening on {p.endpoint}", file=sys.stderr, flush=True)
    p.httpd.serve_forever()


if __name__ == "__main__":
    main()
