#!/usr/bin/env bash
# The whole performance benchmark (product.md §6), in one go:
#   1. release builds (binary + the `index` bench);
#   2. benches/index.rs        full index, no-op reindex, lindera floor, in-process queries;
#   3. benches/fts5_baseline.py SQLite FTS5 unicode61 / trigram on the same chunks and queries;
#   4. benches/mcp_latency.py  start → initialize, kb_search over MCP stdio, server RSS;
#   5. benches/edit_latency.py kb_patch → searchable, external save → searchable (watch mode);
#   6. benches/corpus10x.py    a 10x corpus (the shared corpora copied under new names, in a temp
#                              dir, deleted afterwards): index time, no-op reindex, peak RSS,
#                              start → initialize and kb_search p99, each against the 1x run;
#   7. two ratio tables: product.md §6, and issue #18's table (every row with its baseline from
#      this run: lindera, FTS5, one kb_search round trip, the 1x corpus).
#
# Usage: benches/run.sh [CORPUS_DIR]
# Env:   CARGO_TARGET_DIR (default <repo>/target), LVS_BENCH_CORPUS, LVS_BENCH_OUT (results dir,
#        default a fresh /tmp/lvs-bench.XXXXXX), LVS_BENCH_KEEP_INDEX=1 (keep the built index),
#        LVS_BENCH_QUERY_PASSES (default 5), LVS_BENCH_STARTS (default 20), LVS_BENCH_REPEAT
#        (full index and floors timed this many times, medians reported; default 3),
#        LVS_BENCH_EDITS (kb_patch edits, default 40), LVS_BENCH_WATCH_EDITS (default 20),
#        LVS_BENCH_10X=0 (skip the 10x corpus), LVS_BENCH_10X_KEEP=1 (keep it and its indexes),
#        LVS_BENCH_10X_FACTOR (default 10), LVS_BENCH_INDEX_EXE + LVS_BENCH_BIN (use these
#        prebuilt executables instead of building).
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

if [ -n "${LVS_BENCH_INDEX_EXE:-}" ] && [ -n "${LVS_BENCH_BIN:-}" ]; then
  # Prebuilt executables (e.g. an unstripped build for `perf`): no cargo run at all.
  BENCH_EXE="$LVS_BENCH_INDEX_EXE"
  BIN="$LVS_BENCH_BIN"
else
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
fi
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

echo "== 1/5 index bench ==" >&2
# The same as `cargo bench --bench index -- "$CORPUS"`, without a rebuild at this point.
LVS_BENCH_OUT="$OUT" LVS_BENCH_INDEX_DIR="$INDEX" LVS_BENCH_QUERY_PASSES="$PASSES" \
  "$OUT/bin/index-bench" --bench "$CORPUS" | tee "$OUT/index.txt"

load after-index-bench
echo "== 2/5 SQLite FTS5 baseline ==" >&2
python3 benches/fts5_baseline.py "$OUT/chunks.jsonl" "$OUT/queries.jsonl" \
  --passes "$PASSES" --db-dir "$OUT/fts5" --out "$OUT/fts5.json" >/dev/null

load after-fts5
echo "== 3/5 MCP stdio latency ==" >&2
python3 benches/mcp_latency.py --bin "$BIN" --project-root "$CORPUS" --storage-path "$INDEX" \
  --queries "$OUT/queries.jsonl" --starts "$STARTS" --passes "$PASSES" --out "$OUT/mcp.json" >/dev/null

load after-mcp
echo "== 4/5 edit latency (kb_patch, watch mode) ==" >&2
python3 benches/edit_latency.py --bin "$BIN" --corpus "$CORPUS" --edits "${LVS_BENCH_EDITS:-40}" \
  --watch-edits "${LVS_BENCH_WATCH_EDITS:-20}" --out "$OUT/edit.json" >/dev/null

load after-edit
if [ "${LVS_BENCH_10X:-1}" != 0 ]; then
  echo "== 5/5 10x corpus ==" >&2
  keep=(); [ "${LVS_BENCH_10X_KEEP:-0}" = 1 ] && keep=(--keep)
  python3 benches/corpus10x.py --bin "$BIN" --base "$CORPUS" --queries "$OUT/queries.jsonl" \
    --factor "${LVS_BENCH_10X_FACTOR:-10}" --passes "$PASSES" --starts "$STARTS" \
    --work "$(mktemp -d /tmp/lvs-corpus10x.XXXXXX)" "${keep[@]}" --out "$OUT/corpus10x.json" >/dev/null
  load after-10x
fi

if [ "${LVS_BENCH_KEEP_INDEX:-0}" != 1 ]; then
  rm -rf "$INDEX" "$OUT/fts5" "$OUT/bin"
fi

python3 - "$OUT" <<'EOF'
import json, sys, os
out = sys.argv[1]
ix = json.load(open(os.path.join(out, "index.json")))
fts = json.load(open(os.path.join(out, "fts5.json")))
mcp = json.load(open(os.path.join(out, "mcp.json")))
def optional(name):
    path = os.path.join(out, name)
    return json.load(open(path)) if os.path.exists(path) else None
edit, c10 = optional("edit.json"), optional("corpus10x.json")
json.dump({"index": ix, "fts5": fts, "mcp": mcp, "edit": edit, "corpus10x": c10},
          open(os.path.join(out, "summary.json"), "w"), ensure_ascii=False, indent=2)

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

def table(rows):
    hdr = ("measure", "ours", "baseline (this run)", "ratio", "target")
    w = [max(len(r[i]) for r in rows + [hdr]) for i in range(5)]
    print("  ".join(h.ljust(w[i]) if i == 0 else h.rjust(w[i]) for i, h in enumerate(hdr)))
    for r in rows:
        print("  ".join(c.ljust(w[i]) if i == 0 else c.rjust(w[i]) for i, c in enumerate(r)))

print()
print(f"== summary (product.md §6): {ix['files']['indexed']} files, {fi['chunks']} chunks; "
      f"machine {ix['machine']['cpu']}, {ix['machine']['cores']} cores ==")
table(rows)

# Issue #18's table: every row against a baseline measured in this run.
rows = []
src = ix["files"]["source_bytes"]
row("index size on disk / Markdown", f"{fi['index_bytes'] / src:.2f}x ({mib(fi['index_bytes']):.0f} MiB)",
    f"FTS5 unicode61 {u['db_bytes'] / src:.2f}x ({mib(u['db_bytes']):.0f} MiB)",
    f"{fi['index_bytes'] / u['db_bytes']:.2f}x FTS5", "<= 1.5x, < FTS5")
row("full lexical index / lindera alone, 2 threads", f"{fi['seconds']:.2f} s", f"lindera {fl['lindera_2t_seconds']:.2f} s",
    f"{ix['ratios']['full_index_over_lindera_2t']:.2f}x", "<= 2x")
row("full lexical index / FTS5 unicode61 build", f"{fi['seconds']:.2f} s", f"FTS5 {u['build_seconds']:.2f} s",
    f"{fi['seconds'] / u['build_seconds']:.2f}x", "<= 1.5x")
if edit:
    run = edit["runs"][0] if "runs" in edit else edit  # edit_latency.py: one run per --bin
    pt, wt = run["patch_to_searchable_ms"], run["watch_to_searchable_minus_debounce_ms"]
    floor = f"one kb_search {ks['p50_ms']:.1f} ms"
    row("kb_patch -> searchable p50 / p99", f"{pt['p50']:.0f} / {pt['p99']:.0f} ms", floor,
        f"{pt['p50'] / ks['p50_ms']:.1f}x", "< 50 / < 200 ms")
    row("external save -> searchable p50 (minus debounce)", f"{wt['p50']:.0f} ms (p99 {wt['p99']:.0f})", floor,
        f"{wt['p50'] / ks['p50_ms']:.1f}x", "< 100 ms")
else:
    row("kb_patch / external save -> searchable", "not run", "", "", "")
row("lexical query p50 in-process", f"{q['p50_ms']:.2f} ms", f"FTS5 unicode61 {u['p50_ms']:.2f} ms",
    f"{q['p50_ms'] / u['p50_ms']:.2f}x", "< 1.5 ms")
row("lexical query p50 over MCP stdio", f"{ks['p50_ms']:.2f} ms", f"in-process {q['p50_ms']:.2f} ms",
    f"{ks['p50_ms'] / q['p50_ms']:.2f}x", "< 3 ms")
if c10:
    one, ten, m10, cb = c10["one_x"], c10["ten_x"], c10["mcp_10x"], c10["corpus"]
    row(f"10x corpus ({cb['files']} files, {cb['bytes'] / 1e6:.0f} MB = {cb['bytes'] / cb['base_bytes']:.1f}x): index time",
        f"{ten['full_seconds']:.1f} s", f"1x {one['full_seconds']:.1f} s", f"{c10['ratios']['index_time']:.2f}x", "<= 10x")
    row("10x: kb_search p99 over MCP (p50)", f"{m10['kb_search']['p99_ms']:.1f} ms ({m10['kb_search']['p50_ms']:.1f})",
        f"1x {ks['p99_ms']:.1f} ms", f"{m10['kb_search']['p99_ms'] / ks['p99_ms']:.2f}x", "< 50 ms")
    row("10x: peak RSS of the full reindex", f"{ten['peak_rss_kb'] / 1024:.0f} MiB", f"1x {one['peak_rss_kb'] / 1024:.0f} MiB",
        f"{c10['ratios']['peak_rss']:.2f}x", "< 1 GB")
    row("10x: server peak RSS after the searches", f"{m10['rss']['hwm_after_searches_kb'] / 1024:.0f} MiB",
        f"1x {mcp['rss']['hwm_after_searches_kb'] / 1024:.0f} MiB",
        f"{m10['rss']['hwm_after_searches_kb'] / max(mcp['rss']['hwm_after_searches_kb'], 1):.2f}x", "< 1 GB")
    row("10x: start -> initialize p50 (max)", f"{m10['initialize']['p50_ms']:.1f} ms ({m10['initialize']['max_ms']:.1f})",
        f"1x {init['p50_ms']:.1f} ms", f"{m10['initialize']['p50_ms'] / init['p50_ms']:.2f}x", "< 100 ms")
    row("10x: no-op reindex", f"{ten['noop_seconds']:.2f} s", f"1x {one['noop_seconds']:.2f} s",
        f"{c10['ratios']['noop']:.2f}x", "< 5 s")
    row("10x: index size / Markdown", f"{ten['index_bytes'] / cb['bytes']:.2f}x", f"1x {one['index_bytes'] / cb['base_bytes']:.2f}x",
        "", "")
else:
    row("10x corpus", "not run (LVS_BENCH_10X=0)", "", "", "")
print()
print("== issue #18 ==")
table(rows)
print("\nload average (1/5/15 min) at each step:")
print(open(os.path.join(out, "loadavg.txt")).read().rstrip())
print(f"\nresults: {out}/summary.json")
EOF
