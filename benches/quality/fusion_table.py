#!/usr/bin/env python3
"""One Markdown table of every fusion variant on both halves of both sets, and the choice.

Reads fusion-{jsquad,technical}-{tune,held}.json (fusion_offline.py --json) from DIR, and
fusion-sections-{tune,held}.json when there (JSQuAD by article, benches/eval_sections.py: never
tuned on, so its columns only report). The choice
looks at the tuning halves only: among the hybrid variants at least as good as lexical on both
tuning halves (the issue's "vectors that add"; all of them when none is), the one with the best
mean of JSQuAD-tune MRR@10 and technical-tune nDCG@10 (ties: the earlier variant in
fusion_offline's grid). Its held-out numbers are printed beside it, never used to choose.

Usage: fusion_table.py DIR
"""

import json
import os
import sys


def main():
    d = sys.argv[1]
    runs = {}
    sets = ["jsquad", "technical"]
    if os.path.exists(os.path.join(d, "fusion-sections-held.json")):
        sets.append("sections")
    for ds in sets:
        for split in ("tune", "held"):
            with open(os.path.join(d, f"fusion-{ds}-{split}.json"), encoding="utf-8") as f:
                data = json.load(f)
            runs[(ds, split)] = {v["variant"]: v for v in data["variants"]}
            runs[(ds, split, "n")] = data["queries"]
    names = list(runs[("jsquad", "tune")])
    cols = [("jsquad", "tune", "mrr@10"), ("jsquad", "held", "mrr@10"),
            ("technical", "tune", "ndcg@10"), ("technical", "held", "ndcg@10"),
            ("technical", "tune", "mrr@10"), ("technical", "held", "mrr@10")]
    if "sections" in sets:
        cols += [("sections", "tune", "mrr@10"), ("sections", "held", "mrr@10"), ("sections", "held", "recall@10")]

    def row(name):
        return [runs[(ds, sp)].get(name, {}).get(m) for ds, sp, m in cols]

    def tune_score(name):
        r = row(name)
        return (r[0] + r[2]) / 2

    head = ["JSQuAD tune MRR", "JSQuAD held MRR", "tech tune nDCG", "tech held nDCG", "tech tune MRR", "tech held MRR"]
    if "sections" in sets:
        head += ["by-article tune MRR", "by-article held MRR", "by-article held R@10"]
    print("| variant | " + " | ".join(head) + " |")
    print("|---" * (len(head) + 1) + "|")
    for name in names:
        print(f"| {name} | " + " | ".join("—" if v is None else f"{v:.4f}" for v in row(name)) + " |")
    hybrids = [n for n in names if n.startswith(("RRF", "adaptive"))]
    lex = row("lexical")
    adding = [n for n in hybrids if row(n)[0] >= lex[0] and row(n)[2] >= lex[2]]
    pool = adding or hybrids
    best = max(pool, key=lambda n: (tune_score(n), -pool.index(n)))
    shipped = "adaptive k=60 wLex=1.5 wLexAllTerms=1000 floor=0.04 gate tiers"
    before = "RRF k=60 wLex=2 floor=0.04 gate tiers"
    # The family the default comes from (docs/design/retrieval.md, "Fusion, round 2"): the
    # lexical order stands when every word was found; k = 60 as in the contract. Its members
    # are chosen between on the tuning halves only.
    family = [n for n in hybrids if n.startswith("adaptive k=60 ") and "wLexAllTerms=1000" in n]
    print()
    print(f"hybrid variants at least as good as lexical on both tuning halves: {len(adding)} of {len(hybrids)}")
    print("questions: " + "; ".join(f"{ds} tune {runs[(ds, 'tune', 'n')]}, held {runs[(ds, 'held', 'n')]}" for ds in sets))
    in_family = max(family, key=lambda n: (tune_score(n), -family.index(n))) if family else best
    for label, name in (("chosen on the tuning halves", best),
                        ("best on the tuning halves in the default's family", in_family),
                        ("shipped default", shipped), ("default before (issue #17)", before),
                        ("lexical", "lexical")):
        r = row(name)
        print(f"{label}: {name}: " + ", ".join(f"{ds} {sp} {m} {v:.4f}" for (ds, sp, m), v in zip(cols, r)))


if __name__ == "__main__":
    main()
