#!/usr/bin/env python3
"""The Markdown table of ranking_sets.sh's run in DIR: every variant (and the character-bigram
baseline) on every set, tuning and held-out halves.

QA sets: MRR@10 / R@1 / R@10; the technical set: nDCG@10 / MRR@10 / R@10. Variants in the order
of DIR/variants.txt (`name: search yaml`).

Usage: ranking_table.py DIR
"""

import json
import os
import sys


def qa(path, mode):
    with open(path, encoding="utf-8") as f:
        d = json.load(f)
    r = (d.get("modes") or d.get("results"))[mode]
    return {h: (v["mrr@10"], v["recall@1"], v["recall@10"]) for h, v in r["by_split"].items()}


def tech(path):
    with open(path, encoding="utf-8") as f:
        r = json.load(f)["modes"]["lexical"]["split"]
    return {h: (v["ndcg@10"], v["mrr@10"], v["recall@10"]) for h, v in r.items()}


def cell(t):
    return " / ".join(f"{x:.4f}" for x in t) if t else "—"


def main():
    d = sys.argv[1]
    names = []
    with open(os.path.join(d, "variants.txt"), encoding="utf-8") as f:
        for line in f:
            if line.strip():
                name, _, yaml = line.rstrip("\n").partition(": ")
                names.append((name, yaml))
    print("| variant | JSQuAD tune MRR / R@1 / R@10 | **JSQuAD held** | sections tune MRR / R@1 / R@10 "
          "| **sections held** | technical tune nDCG / MRR / R@10 | **technical held** |")
    print("|---|---|---|---|---|---|---|")
    base = "char-bigram BM25"
    first = names[0][0]
    try:
        j, s = qa(os.path.join(d, f"jsquad-{first}.json"), base), qa(os.path.join(d, f"sections-{first}.json"), base)
        print(f"| {base} | {cell(j.get('tune'))} | {cell(j.get('held'))} | {cell(s.get('tune'))} | "
              f"{cell(s.get('held'))} | — | — |")
    except (OSError, KeyError):
        pass
    for name, yaml in names:
        j = qa(os.path.join(d, f"jsquad-{name}.json"), "lexical")
        s = qa(os.path.join(d, f"sections-{name}.json"), "lexical")
        t = tech(os.path.join(d, f"technical-{name}.json"))
        label = name if not yaml else f"{name} (`{yaml}`)"
        print(f"| {label} | {cell(j.get('tune'))} | {cell(j.get('held'))} | {cell(s.get('tune'))} | "
              f"{cell(s.get('held'))} | {cell(t.get('tune'))} | {cell(t.get('held'))} |")


if __name__ == "__main__":
    main()
