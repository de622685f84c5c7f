#!/usr/bin/env python3
"""The 10x corpus benchmark (issue #18): does indexing and searching grow linearly?

Builds a corpus about FACTOR times the size of the base corpus by copying the Markdown files of
the shared corpora (default: all folders of ../shared/corpora) under new names
(`copy-01/<corpus>/...`, `copy-02/<corpus>/...`, ...), whole corpora in turn, until the copied
bytes reach FACTOR x the base corpus's Markdown bytes (the last copy may stop part-way). Then,
with the release binary, on the base corpus (1x) and on the copy (10x), each in a fresh index
directory:

- a full `reindex` (wall time, peak RSS of the process from wait4);
- a no-op `reindex` right after (nothing changed);
- for the 10x index only: `benches/mcp_latency.py` (start -> initialize, kb_search over MCP stdio
  p50/p99, server RSS) with the given queries; the 1x numbers of the same script come from the
  caller's run (`benches/run.sh` passes its mcp.json), so they are not taken twice.

The corpus and both indexes are deleted at the end unless --keep.

Prints one JSON object (also written to --out).

Usage: corpus10x.py --bin BIN --base CORPUS --queries QUERIES.jsonl [--sources DIR ...]
                    [--factor 10] [--work DIR] [--passes 5] [--starts 20] [--keep] [--out FILE]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_SOURCES = HERE.parent / ".." / "shared" / "corpora"


def markdown_files(root):
    """Root-relative paths of the Markdown files under root, sorted."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(".md"):
                out.append(os.path.relpath(os.path.join(dirpath, name), root))
    return out


def build_corpus(sources, dest, target_bytes):
    """Copies the sources' Markdown under copy-NN/<name>/ until target_bytes are copied."""
    lists = [(s, markdown_files(s)) for s in sources]
    if not any(files for _, files in lists):
        raise SystemExit("no Markdown files in the sources")
    total = files = 0
    copies = 0
    t = time.perf_counter()
    while total < target_bytes:
        copies += 1
        for src, names in lists:
            if total >= target_bytes:
                break
            base = os.path.join(dest, f"copy-{copies:02d}", os.path.basename(os.path.normpath(src)))
            for rel in names:
                if total >= target_bytes:
                    break
                to = os.path.join(base, rel)
                os.makedirs(os.path.dirname(to), exist_ok=True)
                shutil.copyfile(os.path.join(src, rel), to)
                total += os.path.getsize(to)
                files += 1
    return {"files": files, "bytes": total, "rounds": copies, "copy_seconds": time.perf_counter() - t}


def dir_bytes(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def run_timed(argv):
    """Runs argv to completion; returns (wall seconds, peak RSS in kB, stdout)."""
    t = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = p.stdout.read()
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.stderr.write(err.decode(errors="replace")[-2000:])
        raise SystemExit(f"{argv[-2:]} failed with {p.returncode}")
    return wall, usage.ru_maxrss, out


def index_pair(binary, root, storage):
    """Full reindex into a fresh storage dir, then a no-op reindex."""
    shutil.rmtree(storage, ignore_errors=True)
    os.makedirs(storage)
    argv = [binary, "--project-root", str(root), "--storage-path", str(storage),
            "--embedding-provider", "none", "reindex", "--json"]
    full, rss, out = run_timed(argv)
    result = json.loads(out)
    noop, noop_rss, _ = run_timed(argv)
    return {
        "full_seconds": full,
        "peak_rss_kb": rss,
        "indexed_files": result.get("indexedFiles"),
        "chunks": result.get("chunksIndexed"),
        "noop_seconds": noop,
        "noop_peak_rss_kb": noop_rss,
        "index_bytes": dir_bytes(storage),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--base", required=True, help="the 1x corpus (its Markdown bytes set the size)")
    ap.add_argument("--queries", required=True)
    ap.add_argument("--sources", nargs="*", help="corpora to copy (default: every folder of ../shared/corpora)")
    ap.add_argument("--factor", type=float, default=10.0)
    ap.add_argument("--work", help="where to build the corpus and indexes (default: a new temp dir)")
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--starts", type=int, default=20)
    ap.add_argument("--keep", action="store_true", help="keep the corpus and the indexes")
    ap.add_argument("--out")
    a = ap.parse_args()

    binary = os.path.abspath(a.bin)
    base = Path(a.base).resolve()
    sources = [Path(s).resolve() for s in a.sources] if a.sources else sorted(
        p.resolve() for p in DEFAULT_SOURCES.iterdir() if p.is_dir())
    work = Path(a.work or tempfile.mkdtemp(prefix="lvs-corpus10x."))
    work.mkdir(parents=True, exist_ok=True)
    corpus, ix1, ix10 = work / "corpus", work / "index-1x", work / "index-10x"
    shutil.rmtree(corpus, ignore_errors=True)
    corpus.mkdir()
    base_bytes = sum(os.path.getsize(base / f) for f in markdown_files(base))
    print(f"10x corpus: copying {[s.name for s in sources]} into {corpus} ...", file=sys.stderr)
    built = build_corpus(sources, corpus, a.factor * base_bytes)
    built["base_files"] = len(markdown_files(base))
    built["base_bytes"] = base_bytes
    try:
        print("10x corpus: 1x index ...", file=sys.stderr)
        one = index_pair(binary, base, ix1)
        print(f"10x corpus: 10x index ({built['files']} files, {built['bytes'] / 1e6:.0f} MB) ...", file=sys.stderr)
        ten = index_pair(binary, corpus, ix10)
        print("10x corpus: MCP latency on the 10x index ...", file=sys.stderr)
        mcp_out = work / "mcp-10x.json"
        subprocess.run([sys.executable, str(HERE / "mcp_latency.py"), "--bin", binary, "--project-root", str(corpus),
                        "--storage-path", str(ix10), "--queries", a.queries, "--starts", str(a.starts),
                        "--passes", str(a.passes), "--out", str(mcp_out)], check=True, stdout=subprocess.DEVNULL)
        mcp = json.loads(mcp_out.read_text(encoding="utf-8"))
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    result = {
        "corpus": built,
        "sources": [str(s) for s in sources],
        "one_x": one,
        "ten_x": ten,
        "mcp_10x": mcp,
        "ratios": {
            "bytes": built["bytes"] / base_bytes,
            "index_time": ten["full_seconds"] / one["full_seconds"],
            "peak_rss": ten["peak_rss_kb"] / one["peak_rss_kb"],
            "noop": ten["noop_seconds"] / one["noop_seconds"],
        },
        "targets": {"index_time_ratio": 10, "query_p99_ms": 50, "peak_rss_mb": 1000,
                    "initialize_ms": 100, "noop_seconds": 5},
        "kept": str(work) if a.keep else None,
    }
    text = json.dumps(result, ensure_ascii=False, indent=2)
    if a.out:
        Path(a.out).write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
