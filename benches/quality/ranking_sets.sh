#!/usr/bin/env bash
# Every lexical ranking variant on every set, tuning and held-out halves (issue #46's rule: a
# ranking change reports held-out R@10 on every set, and none that lowers it ships):
#   - JSQuAD, one passage per file, every distractor file (eval_hybrid.py);
#   - JSQuAD, one article per file, every paragraph a section (eval_sections.py, never tuned on);
#   - the technical set, the books whole and every 25th visualstudio-docs-ja file (eval_technical.py);
# the first variant also runs the character-bigram BM25 baseline of both QA sets (bigram_bm25.py).
# Then benches/quality/ranking_table.py OUT prints the Markdown table of retrieval.md.
#
# Usage: benches/quality/ranking_sets.sh BIN OUT [NAME='search: yaml; lines' ...]
#   default variants: the shipped defaults ("default") only.
# Env: LVS_QUALITY_WORK (projects + indexes kept between runs, default ~/.cache/lvs-bench);
#      LVS_QUALITY_BASELINE=0 skips the baseline (on JSQuAD with every distractor it takes ~20 min).
# Needs ../shared/eval/jsquad-valid and ../shared/corpora; no model.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
OUT="$2"
shift 2
WORK="${LVS_QUALITY_WORK:-$HOME/.cache/lvs-bench}"
mkdir -p "$OUT" "$WORK"
[ $# -gt 0 ] || set -- "default="
cd "$ROOT/benches"
echo "binary: $BIN; commit $(git rev-parse --short HEAD); $(date -u +%FT%TZ); load $(cut -d' ' -f1-3 /proc/loadavg)" \
  | tee -a "$OUT/run.txt"
first="${LVS_QUALITY_BASELINE:-1}"
for v in "$@"; do
  name="${v%%=*}"
  yaml="${v#*=}"
  base=()
  [ "$first" = 1 ] && base=(--bigram)
  echo "== $name: '$yaml' ==" >&2
  python3 eval_hybrid.py --bin "$BIN" --lexical-only --distractors --distractor-every 1 \
    --workdir "$WORK/jsquad-lexical-all" --search-yaml "$yaml" "${base[@]}" --out "$OUT/jsquad-$name.json" \
    > "$OUT/jsquad-$name.txt"
  nb=()
  [ "$first" = 1 ] || nb=(--no-baseline)
  python3 eval_sections.py --bin "$BIN" --lexical-only --workdir "$WORK/jsquad-sections" --search-yaml "$yaml" \
    "${nb[@]}" --out "$OUT/sections-$name.json" > "$OUT/sections-$name.txt"
  python3 eval_technical.py --bin "$BIN" --lexical-only --modes lexical --book-every 1 --vs-every 25 \
    --workdir "$WORK/technical-lexical" --search-yaml "$yaml" --out "$OUT/technical-$name.json" \
    > "$OUT/technical-$name.txt"
  echo "$name: $yaml" >> "$OUT/variants.txt"
  first=0
done
python3 "$ROOT/benches/quality/ranking_table.py" "$OUT" | tee "$OUT/table.md"
