#!/usr/bin/env bash
# CPU profiles of a full index and of kb_search (issue #28): a flat `perf` profile (self time per
# symbol, every thread) of a release build with symbols, grouped by benches/profile_groups.py.
#   1. release build with line tables and symbols (strip off) in its own target dir;
#   2. `reindex` of the corpus into a fresh storage dir under `perf record -F 499`;
#   3. benches/mcp_latency.py (lexical kb_search over MCP stdio, the technical set's 112 queries,
#      30 passes) under `perf record -F 1999`; only the server's threads are grouped.
# Usage: benches/profile.sh [CORPUS_DIR]
# Env:   LVS_PROFILE_TARGET (target dir of the symbol build, default <repo>/target/profile-build),
#        LVS_PROFILE_OUT (default a fresh /tmp dir). Needs perf (Debian: linux-perf).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
CORPUS="${1:-$ROOT/../shared/corpora/visualstudio-docs-ja}"
CORPUS="$(cd "$CORPUS" && pwd)"
TARGET="${LVS_PROFILE_TARGET:-$ROOT/target/profile-build}"
OUT="${LVS_PROFILE_OUT:-$(mktemp -d /tmp/lvs-profile.XXXXXX)}"
mkdir -p "$OUT"
command -v perf >/dev/null || { echo "perf not found (Debian: apt-get install linux-perf)" >&2; exit 1; }
echo "commit $(git rev-parse --short HEAD); $(date -u +%FT%TZ); load $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$OUT/run.txt"

CARGO_TARGET_DIR="$TARGET" CARGO_PROFILE_RELEASE_STRIP=false CARGO_PROFILE_RELEASE_DEBUG=line-tables-only \
  cargo build --release --bin local-vector-search-mcp >&2
BIN="$TARGET/release/local-vector-search-mcp"

rm -rf "$OUT/storage"
/usr/bin/time -v perf record -F 499 -o "$OUT/index.data" -- "$BIN" --project-root "$CORPUS" \
  --storage-path "$OUT/storage" --embedding-provider none reindex 2> "$OUT/index.time" | tee "$OUT/index.txt"
grep -E "Elapsed|Maximum resident" "$OUT/index.time" | tee -a "$OUT/index.txt"
echo "== full index: share of CPU samples, every thread ==" | tee -a "$OUT/profile.md"
perf report -i "$OUT/index.data" --no-children --sort dso,sym --stdio 2>/dev/null \
  | python3 benches/profile_groups.py | tee -a "$OUT/profile.md"

python3 -c "
import json
for l in open('benches/quality/technical.jsonl'):
    print(json.dumps({'query': json.loads(l)['query']}, ensure_ascii=False))" > "$OUT/queries.jsonl"
perf record -F 1999 -o "$OUT/query.data" -- python3 benches/mcp_latency.py --bin "$BIN" \
  --project-root "$CORPUS" --storage-path "$OUT/storage" --queries "$OUT/queries.jsonl" --starts 1 --passes 30 \
  --out "$OUT/query.json" > /dev/null
python3 -c "import json; d=json.load(open('$OUT/query.json'))['kb_search']; print('kb_search p50 %.2f ms p99 %.2f ms over %d calls (under perf)' % (d['p50_ms'], d['p99_ms'], d['samples']))" \
  | tee -a "$OUT/profile.md"
echo "== kb_search: share of the server's CPU samples ==" | tee -a "$OUT/profile.md"
perf report -i "$OUT/query.data" --no-children --comm tokio-rt-worker --sort dso,sym --stdio 2>/dev/null \
  | python3 benches/profile_groups.py | tee -a "$OUT/profile.md"
echo "results: $OUT" >&2
