#!/usr/bin/env python3
"""Soak, round 2: one `serve --http` server, many HTTP clients, the file watcher on (issue #30).

The operations, checks and report are those of `benches/soak.py` (read its docstring); what
differs:

- transport: Streamable HTTP on 127.0.0.1 (raw JSON-RPC POSTs, one keep-alive connection per
  client, like `benches/http_latency.py`); the server is started with `--watch-files`;
- `--clients` (default 16) client threads run the mixed loop at the same time, each pacing itself
  (`--pause-ms` between operations, so one client makes at most a few requests per second);
- external edits go through the watcher: after writing a paragraph with a new token straight to
  the file, the client searches for that token every 0.5 s until it is found (`watch_lag` is the
  time from the write to the first hit; not found within `--watch-timeout` s is an error, unless
  the paragraph was rewritten meanwhile);
- one more thread runs `kb_reindex` every `--reindex-every` seconds (default 180) and waits for it;
- a per-file lock keeps the harness's own external read-modify-write from racing a patch of the
  same file (a real editor would clobber it too; that is not what is tested here).

All loops are bounded by `--minutes`; traffic only to 127.0.0.1.

Usage: soak_http.py [--bin BIN] [--corpus DIR] [--minutes 30] [--clients 16] [--out FILE]
"""

import argparse
import http.client
import json
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mcp_latency import INIT, proc_kb  # noqa: E402
from soak import WORDS, Soak, default_bin, default_corpus, tool_error  # noqa: E402

PROTOCOL = "2025-11-25"
URL_LINE = re.compile(r"serving MCP over Streamable HTTP at http://([0-9.]+):(\d+)/mcp")


class Letters(int):
    """An int that formats as letters (0-9 -> a-j)."""

    def __format__(self, spec):
        return str(int(self)).translate(str.maketrans("0123456789", "abcdefghij"))


class HttpClient:
    def __init__(self, host, port):
        self.conn = http.client.HTTPConnection(host, port, timeout=300)
        self.headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                        "MCP-Protocol-Version": PROTOCOL}
        self.next_id = 0

    def request(self, method, params):
        self.next_id += 1
        body = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params},
                          ensure_ascii=False).encode()
        try:
            self.conn.request("POST", "/mcp", body=body, headers=self.headers)
            resp = self.conn.getresponse()
            data = resp.read()
        except (OSError, http.client.HTTPException) as e:
            self.conn.close()
            return {"error": {"transport": repr(e)}}
        if resp.status != 200:
            return {"error": {"status": resp.status, "body": data[:300].decode("utf-8", "replace")}}
        return json.loads(data)


class ServerProc:
    """Only what Soak needs of a server: `.p` (the process, for RSS) and close()."""

    def __init__(self, argv, log):
        self.p = subprocess.Popen([*argv, "serve", "--http", "127.0.0.1:0"], stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=log)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            m = URL_LINE.search(Path(log.name).read_text(errors="replace"))
            if m:
                self.host, self.port = m.group(1), int(m.group(2))
                return
            if self.p.poll() is not None:
                break
            time.sleep(0.05)
        raise SystemExit("the HTTP server did not start: " + Path(log.name).read_text(errors="replace")[-2000:])

    def close(self):
        self.p.terminate()
        try:
            self.p.wait(30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


class HttpSoak(Soak):
    # 16 clients share the server: poll the running reindex less often than the stdio soak.
    REINDEX_POLL = 0.25

    def __init__(self, args):
        args.watch = not args.no_watch
        super().__init__(args)
        self.tl = threading.local()
        self.path_locks = {p: threading.Lock() for p in self.files}
        self.samples_lock = threading.Lock()

    # Token numbers are per client (client i counts from i * 10^6), so tokens never collide; they
    # are spelled in letters (`soakzbaaaaacq`), one word for the tokenizer, so that a search for
    # one token ranks only that paragraph, not every paragraph sharing `soakz` and `q`.
    @property
    def counter(self):
        return Letters(getattr(self.tl, "counter", 0)) if hasattr(self, "tl") else 0

    @counter.setter
    def counter(self, value):
        if hasattr(self, "tl"):
            self.tl.counter = int(value)

    def client(self):
        c = getattr(self.tl, "client", None)
        if c is None:
            c = HttpClient(self.server.host, self.server.port)
            init = c.request("initialize", {**INIT["params"], "protocolVersion": PROTOCOL})
            if "error" in init:
                self.error("initialize", {"code": "JSONRPC", "message": json.dumps(init["error"])})
            self.tl.client = c
        return c

    def call(self, op, name, arguments):
        t = time.perf_counter()
        r = self.client().request("tools/call", {"name": name, "arguments": arguments})
        dt = time.perf_counter() - t
        self.samples.append((op, self.now(), dt))
        if "error" in r:
            return None, {"code": "JSONRPC", "message": json.dumps(r["error"], ensure_ascii=False)}
        res = r["result"]
        if res.get("isError"):
            return None, tool_error(res)
        return res.get("structuredContent") or json.loads(res["content"][0]["text"]), None

    def op_search(self):
        synced = [t for t in self.tokens[-50:] if t[2]]
        if not (synced and self.rng.random() < 0.3):
            q = self.rng.choice(WORDS)
            _, err = self.call("search", "kb_search", {"request": {"query": q, "mode": "lexical", "topK": 10}})
            if err:
                self.error("search", err, query=q)
            return
        token, path, _ = self.rng.choice(synced)
        hit, err = self.find(token, path)
        if err:
            return self.error("search", err, query=token)
        if hit is not None or not self.token_still_there(path, token):
            return
        # A miss: look again (topK 50, then after 2 s and 5 s) to tell a ranking miss, a late
        # index update and a lost one apart in the report.
        wide, _ = self.find(token, path, top_k=50)
        later = None
        for wait in (2, 3):
            time.sleep(wait)
            later, _ = self.find(token, path)
            if later is not None:
                break
        if later is None and not self.token_still_there(path, token):
            return  # rewritten by an external edit meanwhile
        self.error("search", {"code": "search_missed", "message": f"{token} not found in {path}"},
                   rank_in_top50=wide, found_after_5s=later is not None,
                   still_in_file=self.token_still_there(path, token))

    def find(self, token, path, top_k=10):
        res, err = self.call("search", "kb_search", {"request": {"query": token, "mode": "lexical", "topK": top_k}})
        if err:
            return None, err
        for i, r in enumerate(res["results"]):
            if r["path"] == path:
                return i + 1, None
        return None, None

    def op_patch(self):
        path = self.rng.choice(self.edit_files)
        with self.path_locks[path]:
            super().op_patch(path)

    def op_external(self):
        path = self.rng.choice(self.edit_files)
        with self.path_locks[path]:
            before = set(re.findall(r"soakx[a-j]+q", (self.root / path).read_text(encoding="utf-8")))
            super().op_external(path)
            after = set(re.findall(r"soakx[a-j]+q", (self.root / path).read_text(encoding="utf-8")))
        new = sorted(after - before)
        if not new or not self.args.watch:
            return
        token = new[0]
        t = time.perf_counter()
        deadline = time.monotonic() + self.args.watch_timeout
        while time.monotonic() < deadline and not self.stop.is_set():
            time.sleep(0.5)
            res, err = self.call("watch_search", "kb_search",
                                 {"request": {"query": token, "mode": "lexical", "topK": 10}})
            if err:
                return self.error("watch_search", err, query=token)
            if path in {r["path"] for r in res["results"]}:
                self.samples.append(("watch_lag", self.now(), time.perf_counter() - t))
                return
            if not self.token_still_there(path, token):
                return  # rewritten by a later external edit: nothing to wait for
        if self.token_still_there(path, token) and not self.stop.is_set():
            self.error("watch", {"code": "watch_missed",
                                 "message": f"{token} written to {path} not searchable after "
                                            f"{self.args.watch_timeout} s"})

    def client_loop(self, cid, end):
        self.tl.counter = (cid + 1) * 1_000_000
        ops = [(self.op_search, 40), (self.op_read, 20), (self.op_outline, 10),
               (self.op_patch, 15), (self.op_external, 8)]
        funcs, weights = zip(*ops)
        n = 0
        while time.monotonic() < end and not self.stop.is_set():
            self.rng.choices(funcs, weights)[0]()
            n += 1
            time.sleep(self.args.pause_ms / 1000 * (0.5 + self.rng.random()))
        self.ops_done[cid] = n

    def reindex_loop(self, end):
        while not self.stop.wait(self.args.reindex_every) and time.monotonic() < end:
            self.op_reindex()

    def run(self):
        self.server = ServerProc(self.argv, self.log)
        self.t0 = time.monotonic()
        self.op_reindex()  # the first full index
        self.rss.append((round(self.now(), 1), proc_kb(self.server.p.pid, "VmRSS")))
        sampler = threading.Thread(target=self.rss_loop, daemon=True)
        sampler.start()
        end = self.t0 + self.args.minutes * 60
        self.ops_done = {}
        threads = [threading.Thread(target=self.client_loop, args=(i, end), daemon=True)
                   for i in range(self.args.clients)]
        reindexer = threading.Thread(target=self.reindex_loop, args=(end,), daemon=True)
        for th in threads:
            th.start()
        reindexer.start()
        while time.monotonic() < end and any(th.is_alive() for th in threads):
            if self.server.p.poll() is not None:
                self.error("server", {"code": "exited", "message": f"exit status {self.server.p.returncode}"})
                self.stop.set()
                break
            time.sleep(1)
        for th in threads:
            th.join(600)
        self.stop.set()
        reindexer.join(600)
        self.tl.counter = 0
        self.op_reindex()  # the last one, so the final state is indexed
        self.rss.append((round(self.now(), 1), proc_kb(self.server.p.pid, "VmRSS")))
        hwm = proc_kb(self.server.p.pid, "VmHWM")
        self.final_check()
        self.server.close()
        self.log.close()
        self.log_lines = self.server_log_summary()
        return self.report(sum(self.ops_done.values()), hwm)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=str(default_bin()))
    ap.add_argument("--corpus", default=str(default_corpus()))
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--window", type=float, default=5, help="latency window in minutes")
    ap.add_argument("--rss-every", type=float, default=10)
    ap.add_argument("--reindex-every", type=float, default=180)
    ap.add_argument("--edit-files", type=int, default=24)
    ap.add_argument("--pause-ms", type=float, default=400,
                    help="mean pause of each client between operations (0.5x to 1.5x, random)")
    ap.add_argument("--watch-timeout", type=float, default=30)
    ap.add_argument("--seed", type=int, default=30)
    ap.add_argument("--no-watch", action="store_true",
                    help="start the server without the file watcher (external edits wait for a reindex)")
    ap.add_argument("--steady", action="store_true",
                    help="keep the corpus size steady (soak.py --steady): RSS growth is then the process's own")
    ap.add_argument("--keep", action="store_true", help="keep the temporary project and server log")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    if args.minutes <= 5 and args.window >= args.minutes:
        args.window = max(args.minutes / 4, 0.1)
    r = HttpSoak(args).run()
    print(f"clients: {args.clients}, pause {args.pause_ms} ms, reindex every {args.reindex_every} s, "
          f"watcher {'off' if args.no_watch else 'on'}")
    sys.exit(1 if r["errors"] else 0)


if __name__ == "__main__":
    main()
