#!/usr/bin/env bash
# The whole performance benchmark (docs/reference/product.md §6), in one go:
#   1. release builds (binary + the `index` bench);
#   2. benches/index.rs        full index, no-op reindex, lindera floor, in-process queries;
#   3. benches/fts5_baseline.py SQLite FTS5 unicode61 / trigram on the same chunks and queries;
#   4. benches/mcp_latency.py  start → initialize, kb_search over MCP stdio, server RSS;
#   5. benches/edit_latency.py kb_patch → searchable, external save → searchable (watch mode);
#   6. benches/corpus10x.py    a 10x corpus (the shared corpora copied under new names, in a temp
#                              dir, deleted afterwards): index time, no-op reindex, peak RSS,
#                              start → initialize and kb_search p99, each against the 1x run;
#   7. benches/catalog.rs     kb_find_docs / kb_list_tags / kb_check over 5,000 generated documents;
#      benches/assets.rs      kb_list_images pages over 5,000 images, kb_load_image, kb_download_file;
#   8. benches/summary.py: two ratio tables, docs/reference/product.md §6, and the current targets (issue #28;
#      every row with its baseline from this run: lindera, FTS5, one kb_search round trip, the
#      1x corpus), each with the load average of the step it came from.
#
# Usage: benches/run.sh [CORPUS_DIR]
# Env:   CARGO_TARGET_DIR (default <repo>/target), LVS_BENCH_CORPUS, LVS_BENCH_OUT (results dir,
#        default a fresh /tmp/lvs-bench.XXXXXX), LVS_BENCH_KEEP_INDEX=1 (keep the built index),
#        LVS_BENCH_QUERY_PASSES (default 5), LVS_BENCH_STARTS (default 20), LVS_BENCH_REPEAT
#        (full index and floors timed this many times, medians reported; default 3),
#        LVS_BENCH_EDITS (kb_patch edits, default 40), LVS_BENCH_WATCH_EDITS (default 20),
#        LVS_BENCH_10X=0 (skip the 10x corpus), LVS_BENCH_10X_KEEP=1 (keep it and its indexes),
#        LVS_BENCH_10X_FACTOR (default 10), LVS_BENCH_INDEX_EXE + LVS_BENCH_BIN (use these
#        prebuilt executables instead of building), LVS_BENCH_ONLY_SMALL=1 (only step 7, the
#        catalog and image benches: no corpus, a few minutes; with LVS_BENCH_CATALOG_EXE and
#        LVS_BENCH_ASSETS_EXE to use prebuilt executables), LVS_BENCH_RECORD=1 (write the rows
#        this run measured into benches/targets.json and the targets table of
#        docs/performance.md; rows it did not measure keep their recorded run).
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

# The release executable of bench $1, built if needed. The caller copies it into $OUT/bin: other
# builds in a shared target dir must not swap it mid-run.
bench_exe() {
  cargo bench --bench "$1" --no-run >&2
  cargo bench --bench "$1" --no-run --message-format=json 2>/dev/null | python3 -c '
import json, sys
exe = ""
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == sys.argv[1] and m.get("executable"):
        exe = m["executable"]
print(exe)' "$1"
}

# Step 7: the catalog and image benches (generated inputs in temp dirs, no corpus). Each writes
# its last line, one JSON object with the machine and its load average, to $OUT/<name>.json.
small_benches() {
  local catalog_exe="${LVS_BENCH_CATALOG_EXE:-}" assets_exe="${LVS_BENCH_ASSETS_EXE:-}"
  [ -n "$catalog_exe" ] || catalog_exe="$(bench_exe catalog)"
  [ -n "$assets_exe" ] || assets_exe="$(bench_exe assets)"
  mkdir -p "$OUT/bin"
  cp "$catalog_exe" "$OUT/bin/catalog-bench"
  cp "$assets_exe" "$OUT/bin/assets-bench"
  echo "== 7 catalog and images ==" >&2
  load before-catalog
  "$OUT/bin/catalog-bench" --bench | tee "$OUT/catalog.txt" >&2
  tail -n 1 "$OUT/catalog.txt" > "$OUT/catalog.json"
  load before-assets
  "$OUT/bin/assets-bench" --bench | tee "$OUT/assets.txt" >&2
  tail -n 1 "$OUT/assets.txt" > "$OUT/assets.json"
  load after-assets
}
# Which run this is, for every row of the targets table (benches/summary.py).
commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
git diff --quiet HEAD -- src benches 2>/dev/null || commit="$commit+uncommitted"
python3 -c 'import json, sys; json.dump({"date": sys.argv[1], "commit": sys.argv[2], "uptime": sys.argv[3]}, open(sys.argv[4], "w"))' \
  "$(date -u '+%Y-%m-%d %H:%M UTC')" "$commit" "$(uptime)" "$OUT/run.json"
: > "$OUT/loadavg.txt"
load() { echo "$1 $(cat /proc/loadavg)" >> "$OUT/loadavg.txt"; }

if [ "${LVS_BENCH_ONLY_SMALL:-0}" = 1 ]; then
  echo "== load average before measuring: $(cat /proc/loadavg) ==" >&2
  small_benches
else
if [ -n "${LVS_BENCH_INDEX_EXE:-}" ] && [ -n "${LVS_BENCH_BIN:-}" ]; then
  # Prebuilt executables (e.g. an unstripped build for `perf`): no cargo run at all.
  BENCH_EXE="$LVS_BENCH_INDEX_EXE"
  BIN="$LVS_BENCH_BIN"
else
echo "== build (release) ==" >&2
cargo build --release --bin local-vector-search-mcp
BENCH_EXE="$(bench_exe index)"
LVS_BENCH_CATALOG_EXE="${LVS_BENCH_CATALOG_EXE:-$(bench_exe catalog)}"
LVS_BENCH_ASSETS_EXE="${LVS_BENCH_ASSETS_EXE:-$(bench_exe assets)}"
LVS_BENCH_STAGES_EXE="${LVS_BENCH_STAGES_EXE:-$(bench_exe query_stages)}"
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
rm -rf "$INDEX"
load start

echo "== 1/5 index bench ==" >&2
# The same as `cargo bench --bench index -- "$CORPUS"`, without a rebuild at this point.
LVS_BENCH_OUT="$OUT" LVS_BENCH_INDEX_DIR="$INDEX" LVS_BENCH_QUERY_PASSES="$PASSES" \
  "$OUT/bin/index-bench" --bench "$CORPUS" | tee "$OUT/index.txt"

load after-index-bench
# Where a query's time goes (benches/query_stages.rs), on the index and queries just made.
if [ -n "${LVS_BENCH_STAGES_EXE:-}" ]; then
  cp "$LVS_BENCH_STAGES_EXE" "$OUT/bin/query-stages-bench"
  echo "== query stages ==" >&2
  LVS_BENCH_QUERY_PASSES="$PASSES" "$OUT/bin/query-stages-bench" --bench "$INDEX" "$CORPUS" "$OUT/queries.jsonl" \
    | tee "$OUT/query_stages.txt" >&2
  load after-query-stages
fi
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

small_benches

if [ "${LVS_BENCH_KEEP_INDEX:-0}" != 1 ]; then
  rm -rf "$INDEX" "$OUT/fts5" "$OUT/bin"
fi
fi

# LVS_BENCH_RECORD=1: write this run's rows into benches/targets.json and docs/performance.md.
record=(); [ "${LVS_BENCH_RECORD:-0}" = 1 ] && record=(--record)
python3 benches/summary.py "$OUT" "${record[@]}"
