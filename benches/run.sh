#!/usr/bin/env bash
# The whole performance benchmark (product.md §6), in one go:
#   1. release builds (binary + the `index` bench);
#   2. benches/index.rs        full index, no-op reindex, lindera floor, in-process queries;
#   3. benches/fts5_baseline.py SQLite FTS5 unicode61 / trigram on the same chunks and queries;
#   4. benches/mcp_latency.py  start → initialize, kb_search over MCP stdio, server RSS;
#   5. a ratio table (ours vs the lindera floor, vs FTS5, vs the targets).
#
# Usage: benches/run.sh [CORPUS_DIR]
# Env:   CARGO_TARGET_DIR (default <repo>/target), LVS_BENCH_CORPUS, LVS_BENCH_OUT (results dir,
#        default a fresh /tmp/lvs-bench.XXXXXX), LVS_BENCH_KEEP_INDEX=1 (keep the built index),
#        LVS_BENCH_QUERY_PASSES (default 5), LVS_BENCH_STARTS (default 20), LVS_BENCH_REPEAT
#        (full index and floors timed this many times, medians reported; default 3).
# Numbers are only meaningful on an otherwise idle machine: the load average is printed first.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
case "$TARGET" in /*) ;; *) TARGET="$ROOT/$TARGET" ;; esac
export CARGO_TARGET_DIR="$TARGET"
CORPUS="${1:-${LVS_BENCH_CORPUS:-$ROOT/../shared/corpora/visualstudio-docs-ja}}"
CORPUS="$(cd "$CORPUS" && pwd)"
OUT="${LVS_BENCH_OUT:-$(mktemp -d /tmp/lvs-bench.XXXXXX)}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
INDEX="$OUT/index"
PASSES="${LVS_BENCH_QUERY_PASSES:-5}"
STARTS="${LVS_BENCH_STARTS:-20}"
BIN="$TARGET/release/local-vector-search-mcp"

echo "corpus: $CORPUS" >&2
echo "out:    $OUT" >&2
echo "target: $TARGET" >&2

echo "== build (release) ==" >&2
cargo build --release --bin local-vector-search-mcp
cargo bench --bench index --no-run
# Freeze both executables: other builds in a shared target dir must not swap them mid-run.
BENCH_EXE="$(cargo bench --bench index --no-run --message-format=json 2>/dev/null | python3 -c '
import json, sys
exe = ""
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "index" and m.get("executable"):
        exe = m["executable"]
print(exe)')"
[ -x "$BENCH_EXE" ] || { echo "could not find the index bench executable" >&2; exit 1; }
mkdir -p "$OUT/bin"
cp "$BIN" "$OUT/bin/local-vector-search-mcp"
cp "$BENCH_EXE" "$OUT/bin/index-bench"
BIN="$OUT/bin/local-vector-search-mcp"

# Let the build's load settle (other processes' load too): wait up to LVS_BENCH_IDLE_WAIT
# seconds (default 180) for the 1-minute load average to drop below 0.8.
deadline=$(( $(date +%s) + ${LVS_BENCH_IDLE_WAIT:-180} ))
while awk '{exit !($1 >= 0.8)}' /proc/loadavg && [ "$(date +%s)" -lt "$deadline" ]; do sleep 5; done
echo "== load average before measuring: $(cat /proc/loadavg) ==" >&2
: > "$OUT/loadavg.txt"
load() { echo "$1 $(cat /proc/loadavg)" >> "$OUT/loadavg.txt"; }
rm -rf "$INDEX"
load start

echo "== 1/3 index bench ==" >&2
# The same as `cargo bench --bench index -- "$CORPUS"`, without a rebuild at this point.
LVS_BENCH_OUT="$OUT" LVS_BENCH_INDEX_DIR="$INDEX" LVS_BENCH_QUERY_PASSES="$PASSES" \
  "$OUT/bin/index-bench" --bench "$CORPUS" | tee "$OUT/index.txt"

load after-index-bench
echo "== 2/3 SQLite FTS5 baseline ==" >&2
python3 benches/fts5_baseline.py "$OUT/chunks.jsonl" "$OUT/queries.jsonl" \
  --passes "$PASSES" --db-dir "$OUT/fts5" --out "$OUT/fts5.json" >/dev/null

load after-fts5
echo "== 3/3 MCP stdio latency ==" >&2
python3 benches/mcp_latency.py --bin "$BIN" --project-root "$CORPUS" --storage-path "$INDEX" \
  --queries "$OUT/queries.jsonl" --starts "$STARTS" --passes "$PASSES" --out "$OUT/mcp.json" >/dev/null

load after-mcp

if [ "${LVS_BENCH_KEEP_INDEX:-0}" != 1 ]; then
  rm -rf "$INDEX" "$OUT/fts5" "$OUT/bin"
fi

python3 - "$OUT" <<'EOF'
import json, sys, os
out = sys.argv[1]
ix = json.load(open(os.path.join(out, "index.json")))
fts = json.load(open(os.path.join(out, "fts5.json")))
mcp = json.load(open(os.path.join(out, "mcp.json")))
json.dump({"index": ix, "fts5": fts, "mcp": mcp}, open(os.path.join(out, "summary.json"), "w"),
          ensure_ascii=False, indent=2)

fi, fl, q = ix["full_index"], ix["floor"], ix["query"]
u, t = fts["unicode61"], fts["trigram"]
init, ks, rss = mcp["initialize"], mcp["kb_search"], mcp["rss"]
mib = lambda b: b / 1048576
rows = []
def row(name, ours, base, ratio, target):
    rows.append((name, ours, base, ratio, target))

row("full index vs lindera alone, 2 threads", f"{fi['seconds']:.2f} s", f"{fl['lindera_2t_seconds']:.2f} s",
    f"{ix['ratios']['full_index_over_lindera_2t']:.2f}x", "<= 1.5x")
row("full index vs lindera alone, 1 thread", f"{fi['seconds']:.2f} s", f"{fl['lindera_1t_seconds']:.2f} s",
    f"{ix['ratios']['full_index_over_lindera_1t']:.2f}x", "")
row("full index vs FTS5 unicode61 build", f"{fi['seconds']:.2f} s", f"{u['build_seconds']:.2f} s",
    f"{fi['seconds'] / u['build_seconds']:.2f}x", "")
row("full index vs FTS5 trigram build", f"{fi['seconds']:.2f} s", f"{t['build_seconds']:.2f} s",
    f"{fi['seconds'] / t['build_seconds']:.2f}x", "")
row("index size vs FTS5 unicode61", f"{mib(fi['index_bytes']):.0f} MiB", f"{mib(u['db_bytes']):.0f} MiB",
    f"{fi['index_bytes'] / u['db_bytes']:.2f}x", "< 1x")
row("index size vs the Markdown", f"{mib(fi['index_bytes']):.0f} MiB", f"{mib(ix['files']['source_bytes']):.0f} MiB",
    f"{fi['index_to_source_ratio']:.2f}x", "<= 1.5x")
row("  tantivy / redb / links.json / vectors", f"{mib(fi['lexical_bytes']):.1f} / {mib(fi['store_bytes']):.1f} / "
    f"{mib(fi.get('links_bytes', 0)):.1f} / {mib(fi.get('vector_bytes', 0)):.1f} MiB", "", "", "")
row("index size vs FTS5 trigram", f"{mib(fi['index_bytes']):.0f} MiB", f"{mib(t['db_bytes']):.0f} MiB",
    f"{fi['index_bytes'] / t['db_bytes']:.2f}x", "")
row("peak RSS during full index", f"{fi['vm_hwm_kb'] / 1024:.0f} MiB", "500 MiB",
    f"{fi['vm_hwm_kb'] / 1024 / 500:.2f}", "< 500 MiB")
row("no-op reindex", f"{ix['noop_reindex']['seconds']:.3f} s", "1 s",
    f"{ix['noop_reindex']['seconds']:.2f}", "< 1 s")
row("query p50 in-process vs FTS5 unicode61", f"{q['p50_ms']:.3f} ms", f"{u['p50_ms']:.3f} ms",
    f"{q['p50_ms'] / u['p50_ms']:.2f}x", "< 2 ms")
row("query p50 in-process vs FTS5 trigram", f"{q['p50_ms']:.3f} ms", f"{t['p50_ms']:.3f} ms",
    f"{q['p50_ms'] / t['p50_ms']:.2f}x", "< 2 ms")
row("query p99 in-process vs FTS5 unicode61", f"{q['p99_ms']:.3f} ms", f"{u['p99_ms']:.3f} ms",
    f"{q['p99_ms'] / u['p99_ms']:.2f}x", "< 20 ms")
row("query p99 in-process vs FTS5 trigram", f"{q['p99_ms']:.3f} ms", f"{t['p99_ms']:.3f} ms",
    f"{q['p99_ms'] / t['p99_ms']:.2f}x", "< 20 ms")
row("query max in-process", f"{q['max_ms']:.3f} ms", "", "", "")
row("query p50 in-process, topK 1 vs topK 10", f"{q['top_k_1_p50_ms']:.3f} ms", f"{q['p50_ms']:.3f} ms",
    f"{q['top_k_1_p50_ms'] / q['p50_ms']:.2f}x", "")
row("kb_search MCP p50 vs in-process p50", f"{ks['p50_ms']:.3f} ms", f"{q['p50_ms']:.3f} ms",
    f"{ks['p50_ms'] / q['p50_ms']:.2f}x", "< 5 ms")
row("kb_search MCP p99", f"{ks['p99_ms']:.3f} ms", "", "", "")
row("start -> initialize p50 vs spawn `cat`", f"{init['p50_ms']:.1f} ms", f"{mcp['spawn_floor_cat']['p50_ms']:.1f} ms",
    f"{mcp['initialize_over_cat_p50']:.2f}x", "< 50 ms")
row("start -> initialize max", f"{init['max_ms']:.1f} ms", "", "", "< 50 ms")
row("idle server RSS", f"{rss['idle_after_initialize_kb_p50'] / 1024:.0f} MiB", "100 MiB",
    f"{rss['idle_after_initialize_kb_p50'] / 1024 / 100:.2f}", "< 100 MiB")
row("server RSS after all searches", f"{rss['after_searches_kb'] / 1024:.0f} MiB", "", "", "")
n = q["count"]
row("queries with 0 results: ours / unicode61", f"{q['zero_results']}/{n}", f"{u['zero_results']}/{n}", "", "")
row("queries with 0 results: ours / trigram", f"{q['zero_results']}/{n}", f"{t['zero_results']}/{n}", "", "")

w = [max(len(r[i]) for r in rows + [("measure", "ours", "baseline", "ratio", "target")]) for i in range(5)]
print()
print(f"== summary: {ix['files']['indexed']} files, {fi['chunks']} chunks; machine {ix['machine']['cpu']}, "
      f"{ix['machine']['cores']} cores ==")
hdr = ("measure", "ours", "baseline", "ratio", "target")
print("  ".join(h.ljust(w[i]) if i == 0 else h.rjust(w[i]) for i, h in enumerate(hdr)))
for r in rows:
    print("  ".join(c.ljust(w[i]) if i == 0 else c.rjust(w[i]) for i, c in enumerate(r)))
print("\nload average (1/5/15 min) at each step:")
print(open(os.path.join(out, "loadavg.txt")).read().rstrip())
print(f"\nresults: {out}/summary.json")
EOF
