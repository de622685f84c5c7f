#!/usr/bin/env bash
# Before/after of the two rows a structural change must keep (issue #43, "behaviour and speed
# unchanged"): kb_search over MCP stdio (benches/mcp_latency.py) and kb_patch → searchable plus
# an external save → searchable (benches/edit_latency.py), for two release binaries on the same
# project, index and machine. The search runs alternate A, B, A, B …; edit_latency.py alternates
# the binaries itself. Prints one table; the JSON of every run stays in $OUT.
#
# Usage: benches/ab_search_edit.sh BIN_A BIN_B [ROUNDS]
# Env:   LVS_AB_OUT (default a fresh /tmp dir), LVS_AB_PASSES (search passes, default 5),
#        LVS_AB_EDITS (kb_patch edits per binary and round, default 30).
# The project is js-primer + rust-book-ja from ../shared/corpora, copied; the queries are the
# 80 of benches/quality/technical.jsonl.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
A="$(realpath "$1")"; B="$(realpath "$2")"; ROUNDS="${3:-2}"
SHARED="${LVS_SHARED_DIR:-$ROOT/../shared}"
OUT="${LVS_AB_OUT:-$(mktemp -d /tmp/lvs-ab.XXXXXX)}"
rm -rf "$OUT/project" "$OUT/index-A" "$OUT/index-B"
mkdir -p "$OUT/project"
cp -r "$SHARED/corpora/js-primer" "$SHARED/corpora/rust-book-ja" "$OUT/project/"
# Lexical only, as benches/edit_latency.py runs: no server tries an embedding endpoint meanwhile.
# Each binary its own index: two versions may index other fields (one would rebuild the other's).
for side in A B; do
  bin="$A"; [ "$side" = B ] && bin="$B"
  "$bin" --project-root "$OUT/project" --storage-path "$OUT/index-$side" --embedding-provider none reindex >/dev/null
done
echo "out: $OUT; load before: $(cat /proc/loadavg)" >&2
for r in $(seq 1 "$ROUNDS"); do
  for side in A B; do
    bin="$A"; [ "$side" = B ] && bin="$B"
    python3 "$ROOT/benches/mcp_latency.py" --bin "$bin" --project-root "$OUT/project" \
      --storage-path "$OUT/index-$side" --queries "$ROOT/benches/quality/technical.jsonl" \
      --starts 10 --passes "${LVS_AB_PASSES:-5}" --extra-args "--embedding-provider none" \
      --out "$OUT/search-$side-$r.json" >/dev/null
  done
done
python3 "$ROOT/benches/edit_latency.py" --bin "$A" --bin "$B" --corpus "$OUT/project" \
  --edits "${LVS_AB_EDITS:-30}" --watch-edits 10 --rounds "$ROUNDS" --out "$OUT/edit.json" >/dev/null
echo "load after: $(cat /proc/loadavg)" >&2
python3 - "$OUT" "$ROUNDS" <<'PY'
import json, sys
out, rounds = sys.argv[1], int(sys.argv[2])
print("| run | kb_search p50 (ms) | p99 (ms) | kb_status p50 (ms) | search / status |")
print("|---|---|---|---|---|")
for side in "AB":
    for r in range(1, rounds + 1):
        d = json.load(open(f"{out}/search-{side}-{r}.json"))
        s, st = d["kb_search"], d["baseline_kb_status"]
        print(f"| {side} round {r} | {s['p50_ms']:.2f} | {s['p99_ms']:.2f} | {st['p50_ms']:.2f} | {d['kb_search_over_kb_status_p50']:.2f} |")
e = json.load(open(f"{out}/edit.json"))
print()
print("| binary | kb_patch call p50 / p99 (ms) | patch → searchable p50 / p99 (ms) | watch → searchable p50 / p99 (ms, minus debounce) |")
print("|---|---|---|---|")
for side, run in zip("AB", e["runs"]):
    def f(key):
        v = run[key]
        return f"{v['p50']} / {v['p99']}"
    print(f"| {side} | {f('patch_call_ms')} | {f('patch_to_searchable_ms')} | {f('watch_to_searchable_minus_debounce_ms')} |")
PY
