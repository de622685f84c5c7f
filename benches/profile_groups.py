#!/usr/bin/env python3
"""Groups a flat `perf report` (symbol self time) into the parts of the pipeline.

Reads `perf report --no-children --sort dso,sym --stdio` output on stdin (optionally limited to
some threads with --comm), prints the share of each group and the top symbols. Groups, first
match wins: lindera (the dictionary and Viterbi), tantivy FST building, tantivy postings and
positions, the rest of tantivy, our analyzer (lvs::lexical), Markdown parse and chunking,
snippets, JSON (serde_json), the allocator (glibc malloc/free/realloc), memmove/memcmp, kernel,
other.

Usage: perf report -i perf.data --no-children --sort dso,sym --stdio | profile_groups.py [--top 15]
"""

import argparse
import re
import sys

GROUPS = [
    ("lindera (dictionary, Viterbi)", r"lindera"),
    ("tantivy FST (term dictionary) build", r"tantivy_fst::raw::(registry|build)"),
    ("tantivy term dictionary lookups", r"tantivy_fst|termdict"),
    ("tantivy postings and positions", r"tantivy::(postings|positions)"),
    ("tantivy docstore (compress, decompress)", r"tantivy::store|lz4_flex|zstd"),
    ("tantivy, other", r"tantivy"),
    ("snippets", r"lvs::lexical::snippet"),
    ("our analyzer (normalise, fold, split, decompose)", r"lvs::lexical"),
    ("Markdown parse and chunking", r"pulldown_cmark|lvs::markdown|lvs::chunk"),
    ("JSON (serde_json)", r"serde_json"),
    ("allocator (malloc, free, realloc)", r"malloc|_int_free|cfree|realloc|unlink_chunk|consolidate|_int_memalign"),
    ("memmove, memcmp, memset", r"memmove|memcpy|memcmp|memset|memchr"),
    ("hashing (SipHash)", r"sip::Hasher|BuildHasher|hash_one"),
    ("kernel", r"\[kernel"),
]
LINE = re.compile(r"^\s*([0-9.]+)%\s+(\S+)\s+\[(.)\]\s+(.*)$")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--top", type=int, default=15)
    args = ap.parse_args()
    rows = []
    for line in sys.stdin:
        m = LINE.match(line)
        if m:
            pct, dso, kind, sym = float(m.group(1)), m.group(2), m.group(3), m.group(4).strip()
            rows.append((pct, f"{dso} {sym}" if kind != "k" else f"[kernel] {sym}"))
    total = sum(p for p, _ in rows) or 1.0
    sums = {name: 0.0 for name, _ in GROUPS}
    sums["other"] = 0.0
    for pct, sym in rows:
        for name, pat in GROUPS:
            if re.search(pat, sym):
                sums[name] += pct
                break
        else:
            sums["other"] += pct
    print("| part | share of samples |")
    print("|---|---|")
    for name, v in sorted(sums.items(), key=lambda kv: -kv[1]):
        print(f"| {name} | {100 * v / total:.1f} % |")
    print()
    print("| top symbols (self) | share |")
    print("|---|---|")
    for pct, sym in sorted(rows, key=lambda r: -r[0])[: args.top]:
        short = re.sub(r"<[^<>]*>", "", sym)[:110].replace("|", "\\|")
        print(f"| `{short}` | {100 * pct / total:.1f} % |")


if __name__ == "__main__":
    main()
