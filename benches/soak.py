#!/usr/bin/env python3
"""Soak: one MCP server (stdio, raw JSON-RPC) under a bounded mixed load (issue #19 part 6).

The server runs on a COPY of a corpus in a temporary folder (writes allowed, lexical only, no
network; `--watch` adds the file watcher). One client loop, for `--minutes`, picks at random:

- `search`    kb_search (lexical, topK 10) for a corpus word or a token a patch added;
- `read`      kb_read of a random file from a random pointer of its outline;
- `outline`   kb_outline of a random file;
- `patch`     kb_patch `insert_after` of one new paragraph (a unique token) after a paragraph,
              with the anchor of the last kb_read of that file (often several operations old);
              then the file must hold the token exactly once;
- `external`  an edit behind the server's back: append a paragraph to a file, or rewrite one
              paragraph a patch added earlier (written directly, atomically);
- `reindex`   kb_reindex (changed) every `--reindex-every` seconds, then kb_status until done
              (`reindex_wait` is the time to completion).

Errors: every tool error or JSON-RPC error counts as an error, except the one expected case: a
`CONFLICT` from a patch whose anchor was read before an external edit changed that very element
(counted as `expected_conflicts`, with the file and reason). A patched token that search does not
find although the patch answered `indexSynchronized: true` is an error too (`search_missed`).

Measured: RSS of the server (VmRSS, every `--rss-every` seconds), latency per operation type per
`--window` minutes (p50/p99/max/count), errors. Results as JSON (`--out`) and a printed table.

Usage: soak.py [--bin BIN] [--corpus DIR] [--minutes 30] [--out FILE] [--seed N] [--watch]
"""

import argparse
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benches"))
from mcp_latency import INIT, INITIALIZED, Server, percentile, proc_kb  # noqa: E402

WORDS = [
    "所有権", "借用", "ライフタイム", "トレイト", "ベクタ", "ハッシュマップ", "クロージャ",
    "イテレータ", "エラー処理", "パターン", "マクロ", "スレッド", "構造体", "列挙型", "モジュール",
    "テスト", "unsafe", "cargo", "Option", "Result", "panic", "所有", "参照", "文字列", "並行性",
]


def default_bin():
    target = Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")
    return target / "release" / "local-vector-search-mcp"


def default_corpus():
    shared = Path(os.environ.get("LVS_SHARED_DIR") or REPO.parent / "shared")
    return shared / "corpora" / "rust-book-ja"


def tool_error(res):
    """`{"code", "message"}` of an error result: the JSON envelope block (`docs/design/clients.md`:
    the first block is `CODE: message` as plain text, the second the envelope), else the plain
    text split at its first colon."""
    texts = [b.get("text", "") for b in res.get("content") or [] if b.get("type") == "text"]
    for text in texts:
        try:
            err = json.loads(text)
        except ValueError:
            continue
        if isinstance(err, dict) and "code" in err:
            return err
    text = texts[0] if texts else ""
    code, sep, message = text.partition(": ")
    if sep and code.isupper():
        return {"code": code, "message": message}
    return {"code": "TEXT", "message": text}


class Soak:
    # Seconds between kb_status polls while a reindex runs.
    REINDEX_POLL = 0.05

    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.tmp = Path(tempfile.mkdtemp(prefix="lvs-soak-"))
        self.root = self.tmp / "project"
        shutil.copytree(args.corpus, self.root, ignore=shutil.ignore_patterns(".git", ".local-vector-search-mcp"))
        self.files = sorted(str(p.relative_to(self.root)) for p in self.root.rglob("*.md"))
        if not self.files:
            raise SystemExit(f"no .md files under {args.corpus}")
        # Patches and external edits go to a fixed subset, so the same files see both.
        self.edit_files = self.rng.sample(self.files, min(args.edit_files, len(self.files)))
        cfg = self.tmp / "config.yml"
        cfg.write_text("knowledgeBase:\n  allowWrites: true\n", encoding="utf-8")
        self.argv = [
            str(Path(args.bin).resolve()), "--project-root", str(self.root),
            "--storage-path", str(self.tmp / "storage"), "--embedding-provider", "none",
            "--config", str(cfg),
        ] + (["--watch-files"] if args.watch else [])
        self.log = open(self.tmp / "server.log", "w", encoding="utf-8")
        self.t0 = time.monotonic()
        self.samples = []  # (op, t_since_start, seconds)
        self.errors = []  # {op, t, code, message, ...}
        self.expected = []
        self.rss = []  # (t, kb)
        self.rss_parts = []  # (t, RssAnon kb, RssFile kb)
        self.reads = {}  # path -> {"elements": [...], "t_read": generation}
        self.gen = {}  # path -> external edit generation (bumped on every external edit)
        self.version = {}  # path -> bumped on every change (patch or external edit)
        self.edited_at = {}  # (path, text) -> generation when an external edit rewrote it
        self.tokens = []  # (token, path, synchronized)
        self.added = {}  # path -> [paragraph text added by patches]
        self.counter = 0
        self.stop = threading.Event()

    # -- plumbing ---------------------------------------------------------------------------

    def now(self):
        return time.monotonic() - self.t0

    def call(self, op, name, arguments):
        t = time.perf_counter()
        r = self.server.request("tools/call", {"name": name, "arguments": arguments})
        dt = time.perf_counter() - t
        self.samples.append((op, self.now(), dt))
        if "error" in r:
            return None, {"code": "JSONRPC", "message": json.dumps(r["error"], ensure_ascii=False)}
        res = r["result"]
        if res.get("isError"):
            return None, tool_error(res)
        return res.get("structuredContent") or json.loads(res["content"][0]["text"]), None

    def error(self, op, err, **extra):
        self.errors.append({"op": op, "t": round(self.now(), 1), **err, **extra})
        print(f"[{self.now():7.1f}s] ERROR {op}: {err} {extra}", file=sys.stderr)

    def rss_loop(self):
        while not self.stop.wait(self.args.rss_every):
            kb = proc_kb(self.server.p.pid, "VmRSS")
            if kb:
                self.rss.append((round(self.now(), 1), kb))
                # Heap and other private memory vs mapped files (the index's segments): growth
                # of the one is a leak, of the other the index's own size.
                pid = self.server.p.pid
                self.rss_parts.append((round(self.now(), 1), proc_kb(pid, "RssAnon"), proc_kb(pid, "RssFile")))

    # -- operations -------------------------------------------------------------------------

    def op_search(self):
        synced = [t for t in self.tokens[-50:] if t[2]]
        if synced and self.rng.random() < 0.3:
            token, path, _ = self.rng.choice(synced)
            res, err = self.call("search", "kb_search", {"request": {"query": token, "mode": "lexical", "topK": 10}})
            if err:
                return self.error("search", err, query=token)
            paths = {r["path"] for r in res["results"]}
            if path not in paths and self.token_still_there(path, token):
                self.error("search", {"code": "search_missed", "message": f"{token} not found in {path}"})
            return
        q = self.rng.choice(WORDS)
        _, err = self.call("search", "kb_search", {"request": {"query": q, "mode": "lexical", "topK": 10}})
        if err:
            self.error("search", err, query=q)

    def token_still_there(self, path, token):
        try:
            return token in (self.root / path).read_text(encoding="utf-8")
        except OSError:
            return False

    def op_outline(self):
        path = self.rng.choice(self.files)
        _, err = self.call("outline", "kb_outline", {"request": {"path": path}})
        if err:
            self.error("outline", err, path=path)

    def read(self, path, op="read"):
        req = {"path": path, "maxElements": 100, "maxBytes": 100000}
        res, err = self.call(op, "kb_read", {"request": req})
        if err:
            self.error(op, err, path=path)
            return None
        self.reads[path] = {"elements": res["elements"], "gen": self.gen.get(path, 0),
                            "version": self.version.get(path, 0)}
        return res

    def op_read(self):
        path = self.rng.choice(self.files)
        if path in self.edit_files and self.rng.random() < 0.5:
            self.read(path)
            return
        # A read from a random heading of the outline (anchors from the outline).
        res, err = self.call("outline", "kb_outline", {"request": {"path": path}})
        if err:
            return self.error("outline", err, path=path)
        heads = []
        stack = list(res["headings"])
        while stack:
            h = stack.pop()
            heads.append(h["pointer"])
            stack.extend(h.get("children") or [])
        req = {"path": path, "maxElements": self.rng.randint(1, 40)}
        if heads:
            req["pointer"] = self.rng.choice(heads)
        _, err = self.call("read", "kb_read", {"request": req})
        if err:
            self.error("read", err, path=path, pointer=req.get("pointer"))

    def op_patch(self, path=None):
        path = path or self.rng.choice(self.edit_files)
        cached = self.reads.get(path)
        if cached is None or self.rng.random() < 0.5:
            if self.read(path, op="read") is None:
                return
            cached = self.reads[path]
        paras = [e for e in cached["elements"] if e["kind"] == "paragraph"]
        if not paras:
            return
        target = self.rng.choice(paras)
        kind = "insert_after"
        if getattr(self.args, "steady", False):
            # A corpus that does not grow: rewrite a paragraph this harness added, when one is
            # in the read, instead of inserting another.
            added = set(self.added.get(path, []))
            mine = [e for e in paras if e["text"] in added]
            if mine:
                target, kind = self.rng.choice(mine), "replace_element"
        self.counter += 1
        token = f"soakz{self.counter}q"
        text = f"{token} 追記した段落 {self.counter}。"
        op = {"kind": kind, "pointer": target["pointer"], "markdown": text}
        res, err = self.call("patch", "kb_patch", {"request": {"path": path, "operations": [op]}})
        if err:
            stale = self.edited_at.get((path, target["text"]), -1) >= cached["gen"]
            moved = cached["version"] != self.version.get(path, 0)
            why = None
            if err.get("code") == "CONFLICT" and stale:
                why = "anchor read before an edit (external, or a --steady rewrite) rewrote that paragraph"
            elif err.get("code") == "CONFLICT" and moved and "multiple" in (err.get("message") or ""):
                why = "the file changed since the read and the paragraph's text occurs twice: relocation is ambiguous"
            elif err.get("code") == "CONFLICT" and moved and "now-atomic" in (err.get("message") or ""):
                why = ("the file changed since the read, shifting paragraph ordinals so that the anchor's "
                       "pointer is now reserved (a paragraph inside a list or quote): contract 5.3 refuses "
                       "hashed anchors on reserved pointers instead of relocating them")
            if why:
                self.expected.append({"op": "patch", "t": round(self.now(), 1), "path": path, "why": why,
                                      "message": err.get("message")})
                self.reads.pop(path, None)
                return
            return self.error("patch", err, path=path, pointer=target["pointer"],
                              changed_since_read=moved)
        body = (self.root / path).read_text(encoding="utf-8")
        if body.count(token) != 1:
            self.error("patch", {"code": "lost_patch", "message": f"{token} occurs {body.count(token)} times in {path}"})
        self.version[path] = self.version.get(path, 0) + 1
        self.tokens.append((token, path, bool(res.get("indexSynchronized"))))
        if kind == "replace_element":
            # Anchors read before this rewrite are now stale, as after an external one.
            self.edited_at[(path, target["text"])] = self.gen.get(path, 0)
            self.gen[path] = self.gen.get(path, 0) + 1
            if target["text"] in self.added.get(path, []):
                self.added[path].remove(target["text"])
        self.added.setdefault(path, []).append(text)

    def write_atomic(self, path, data):
        p = self.root / path
        tmp = p.with_name(f".soak-{os.getpid()}-{p.name}")
        tmp.write_bytes(data)
        os.replace(tmp, p)

    def op_external(self, path=None):
        path = path or self.rng.choice(self.edit_files)
        p = self.root / path
        t = time.perf_counter()
        raw = p.read_bytes()
        text = raw.decode("utf-8")
        eol = "\r\n" if "\r\n" in text else "\n"
        added = [a for a in self.added.get(path, []) if text.count(a) == 1]
        self.counter += 1
        if added and (getattr(self.args, "steady", False) or self.rng.random() < 0.5):
            old = self.rng.choice(added)
            new = f"soakx{self.counter}q 外部エディタで書き換えた段落。"
            text = text.replace(old, new)
            self.added[path].remove(old)
            self.added[path].append(new)
            self.edited_at[(path, old)] = self.gen.get(path, 0)
        else:
            if not text.endswith(("\n", "\r")):
                text += eol
            text += f"{eol}soakx{self.counter}q 外部エディタで末尾に足した段落。{eol}"
        self.gen[path] = self.gen.get(path, 0) + 1
        self.version[path] = self.version.get(path, 0) + 1
        self.write_atomic(path, text.encode("utf-8"))
        self.samples.append(("external", self.now(), time.perf_counter() - t))

    def op_reindex(self):
        res, err = self.call("reindex", "kb_reindex", {"request": {}})
        if err:
            return self.error("reindex", err)
        t = time.perf_counter()
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            st, err = self.call("status", "kb_status", {})
            if err:
                return self.error("status", err)
            if not st["indexing"]["isRunning"]:
                last = st["indexing"]["last"] or {}
                if last.get("outcome") not in (None, "succeeded"):
                    self.error("reindex", {"code": "reindex_failed", "message": json.dumps(last, ensure_ascii=False)})
                if res.get("started"):
                    self.samples.append(("reindex_wait", self.now(), time.perf_counter() - t))
                return
            time.sleep(self.REINDEX_POLL)
        self.error("reindex", {"code": "timeout", "message": "reindex still running after 600 s"})

    # -- run --------------------------------------------------------------------------------

    def run(self):
        self.server = Server(self.argv, stderr=self.log)
        self.server.send(INIT)
        self.server.read_response(1)
        self.server.send(INITIALIZED)
        self.t0 = time.monotonic()
        self.op_reindex()  # the first full index
        self.rss.append((round(self.now(), 1), proc_kb(self.server.p.pid, "VmRSS")))
        sampler = threading.Thread(target=self.rss_loop, daemon=True)
        sampler.start()
        ops = [(self.op_search, 40), (self.op_read, 20), (self.op_outline, 10),
               (self.op_patch, 15), (self.op_external, 8)]
        funcs, weights = zip(*ops)
        end = self.t0 + self.args.minutes * 60
        next_reindex = time.monotonic() + self.args.reindex_every
        n = 0
        while time.monotonic() < end:
            if time.monotonic() >= next_reindex:
                self.op_reindex()
                next_reindex = time.monotonic() + self.args.reindex_every
            else:
                self.rng.choices(funcs, weights)[0]()
            n += 1
            if self.server.p.poll() is not None:
                self.error("server", {"code": "exited", "message": f"exit status {self.server.p.returncode}"})
                break
            if self.args.pause_ms:
                time.sleep(self.args.pause_ms / 1000)
        self.op_reindex()  # the last one, so the final state is indexed
        self.stop.set()
        self.rss.append((round(self.now(), 1), proc_kb(self.server.p.pid, "VmRSS")))
        hwm = proc_kb(self.server.p.pid, "VmHWM")
        self.final_check()
        self.server.close()
        self.log.close()
        self.log_lines = self.server_log_summary()
        return self.report(n, hwm)

    def server_log_summary(self):
        """Warnings and errors the server logged, by message (timestamps and ids removed)."""
        import re
        counts = {}
        with open(self.tmp / "server.log", encoding="utf-8", errors="replace") as f:
            for line in f:
                line = re.sub(r"\x1b\[[0-9;]*m", "", line)
                m = re.search(r"\b(WARN|ERROR)\b\s+(.*)", line)
                if m:
                    key = m.group(1) + " " + re.sub(r"[0-9a-f]{8,}|\d+", "N", m.group(2))[:160]
                    counts[key] = counts.get(key, 0) + 1
        return counts

    def final_check(self):
        """After the last reindex, every token still in a file is found by search."""
        missing = 0
        for token, path, _ in self.tokens[-200:]:
            if not self.token_still_there(path, token):
                continue
            res, err = self.call("final_search", "kb_search", {"request": {"query": token, "mode": "lexical", "topK": 10}})
            if err or path not in {r["path"] for r in res["results"]}:
                missing += 1
                self.error("final_search", err or {"code": "search_missed", "message": f"{token} not found in {path}"})
        self.final_missing = missing

    def report(self, n, hwm):
        win = self.args.window * 60
        ops = sorted({s[0] for s in self.samples})
        windows = max(1, math.ceil(max(s[1] for s in self.samples) / win))
        table = {}
        for op in ops:
            rows = []
            for w in range(windows):
                xs = sorted(s[2] for s in self.samples if s[0] == op and w * win <= s[1] < (w + 1) * win)
                if xs:
                    rows.append({"window": w, "from_min": w * self.args.window, "count": len(xs),
                                 "p50_ms": round(percentile(xs, 0.5) * 1e3, 2),
                                 "p99_ms": round(percentile(xs, 0.99) * 1e3, 2),
                                 "max_ms": round(xs[-1] * 1e3, 2)})
            table[op] = rows
        rss_kb = [kb for _, kb in self.rss]
        mid = self.rss[len(self.rss) // 2] if self.rss else (0, 0)
        result = {
            "argv": self.argv[1:],
            "corpus": str(self.args.corpus),
            "files": len(self.files),
            "edit_files": len(self.edit_files),
            "minutes": self.args.minutes,
            "watch": self.args.watch,
            "seed": self.args.seed,
            "operations": n,
            "calls": len(self.samples),
            "patches_applied": len(self.tokens),
            "errors": len(self.errors),
            "error_list": self.errors[:50],
            "expected_conflicts": len(self.expected),
            "expected_list": self.expected[:20],
            "final_search_missing": self.final_missing,
            "server_log": self.log_lines,
            "rss_kb": {"first": rss_kb[0] if rss_kb else 0, "mid": mid[1], "last": rss_kb[-1] if rss_kb else 0,
                       "max": max(rss_kb) if rss_kb else 0, "hwm": hwm, "samples": self.rss,
                       "anon_file_samples": self.rss_parts},
            "latency": table,
        }
        if self.args.out:
            with open(self.args.out, "w", encoding="utf-8") as f:
                json.dump(result, f, ensure_ascii=False, indent=1)
        self.print_table(result)
        if not self.args.keep:
            shutil.rmtree(self.tmp, ignore_errors=True)
        else:
            print(f"kept {self.tmp}", file=sys.stderr)
        return result

    def print_table(self, r):
        print(f"soak: {r['minutes']} min, {r['files']} files, {r['operations']} operations, {r['calls']} calls, "
              f"{r['patches_applied']} patches applied")
        print(f"errors: {r['errors']}   expected conflicts: {r['expected_conflicts']}   "
              f"tokens missing at the end: {r['final_search_missing']}")
        for line, count in sorted(r["server_log"].items(), key=lambda kv: -kv[1]):
            print(f"server log: {count} x {line}")
        x = r["rss_kb"]
        print(f"RSS MB: first {x['first'] / 1024:.1f}  mid {x['mid'] / 1024:.1f}  last {x['last'] / 1024:.1f}  "
              f"max {x['max'] / 1024:.1f}  (VmHWM {x['hwm'] / 1024:.1f})")
        parts = x.get("anon_file_samples") or []
        if parts:
            mid_part = parts[len(parts) // 2]
            print("RSS MB anon / file: " + "  ".join(
                f"{name} {a / 1024:.1f} / {f / 1024:.1f}"
                for name, (_, a, f) in (("first", parts[0]), ("mid", mid_part), ("last", parts[-1]))))
        print(f"{'operation':<14}{'window':>8}{'count':>8}{'p50 ms':>10}{'p99 ms':>10}{'max ms':>10}")
        for op, rows in r["latency"].items():
            for row in rows:
                print(f"{op:<14}{row['from_min']:>6}m+{row['count']:>8}{row['p50_ms']:>10.2f}"
                      f"{row['p99_ms']:>10.2f}{row['max_ms']:>10.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=str(default_bin()))
    ap.add_argument("--corpus", default=str(default_corpus()))
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--window", type=float, default=5, help="latency window in minutes")
    ap.add_argument("--rss-every", type=float, default=10)
    ap.add_argument("--reindex-every", type=float, default=60)
    ap.add_argument("--edit-files", type=int, default=12)
    ap.add_argument("--pause-ms", type=float, default=0, help="pause between operations")
    ap.add_argument("--seed", type=int, default=19)
    ap.add_argument("--watch", action="store_true", help="start the server with --watch-files")
    ap.add_argument("--steady", action="store_true",
                    help="keep the corpus size steady: patches and external edits rewrite the paragraphs "
                         "the harness added instead of adding more (tells growth of the corpus from growth "
                         "of the process)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary project and server log")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    if args.minutes <= 1 and args.window >= args.minutes:
        args.window = max(args.minutes / 4, 0.1)
    r = Soak(args).run()
    sys.exit(1 if r["errors"] else 0)


if __name__ == "__main__":
    main()
