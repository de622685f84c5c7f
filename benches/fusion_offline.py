#!/usr/bin/env python3
"""Fusion variants scored offline from the result lists `eval_hybrid.py --dump` wrote.

The dump holds, per query, the lexical top-N (with `explain.lexicalRank` and
`explain.lexicalAllTerms`) and the semantic top-N (with `explain.vectorDistance`, taken with
`search.semanticFloor: 0`, so unfiltered). Every variant below re-ranks those two lists exactly
as `src/vectors/mod.rs` would (weighted RRF over 1-based ranks, ties by key), then scores the
first 10 distinct paths against the qrels: MRR@10 and recall@10. No server, no model: a
variant costs a second, so every one tried is listed, the losers too.

Usage: fusion_offline.py DUMP.jsonl [--data ../shared/eval/jsquad-valid] [--json OUT]
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def read_qrels(path):
    rel = {}
    with open(path, encoding="utf-8") as f:
        next(f)
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 3 and float(parts[2]) > 0:
                rel.setdefault(parts[0], set()).add(parts[1])
    return rel


def stem(path):
    if not path or not path.startswith("p/") or not path.endswith(".md"):
        return None
    return path[2:-3]


def score(ranked_keys, path_of, relevant, k=10):
    paths = []
    for key in ranked_keys:
        p = path_of[key]
        if p not in paths:
            paths.append(p)
        if len(paths) == k:
            break
    rank = next((i for i, p in enumerate(paths, 1) if stem(p) in relevant), None)
    return (1.0 / rank if rank else 0.0), rank is not None


def floor_cut(vec, delta, absolute):
    """vec: [(key, sim)] nearest first -> the prefix that passes the floor."""
    if not vec:
        return vec
    best = vec[0][1]
    lo = -1e9 if absolute is None else absolute
    if delta > 0:
        lo = max(lo, best - delta)
    return [v for v in vec if v[1] >= lo - 1e-6]


def rrf(lex, vec, k, wl, wv=1.0, gate=False, all_terms=0, tiers=False):
    """Weighted RRF. gate: with all-terms hits, vector-only chunks are dropped. tiers: the
    all-terms hits (the first `all_terms` of lex) rank before every other chunk."""
    s = {}
    for r, key in enumerate(lex, 1):
        s[key] = s.get(key, 0.0) + wl / (k + r)
    for r, (key, _) in enumerate(vec, 1):
        s[key] = s.get(key, 0.0) + wv / (k + r)
    if gate and all_terms > 0:
        lexset = set(lex)
        s = {key: v for key, v in s.items() if key in lexset}
    first = set(lex[:all_terms]) if tiers else set()
    return [key for key, _ in sorted(s.items(), key=lambda kv: (kv[0] not in first, -kv[1], kv[0]))]


def combsum(lex, vec, alpha):
    """alpha * (1 - (rank-1)/N) for lexical + (1 - alpha) * min-max normalised similarity."""
    s = {}
    n = max(1, len(lex))
    for r, key in enumerate(lex, 1):
        s[key] = alpha * (1 - (r - 1) / n)
    if vec:
        hi, lo = vec[0][1], vec[-1][1]
        span = (hi - lo) or 1.0
        for key, sim in vec:
            s[key] = s.get(key, 0.0) + (1 - alpha) * (sim - lo) / span
    return [key for key, _ in sorted(s.items(), key=lambda kv: (-kv[1], kv[0]))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dump")
    ap.add_argument("--data", default=os.path.join(REPO, "..", "shared", "eval", "jsquad-valid"))
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    qrels = read_qrels(os.path.join(args.data, "qrels", "passage.tsv"))

    per_q = {}
    path_of = {}
    for line in open(args.dump, encoding="utf-8"):
        d = json.loads(line)
        q = per_q.setdefault(d["qid"], {})
        rows = []
        for r in d["results"]:
            key = f"{r['path']}::{r['pointer']}"
            path_of[key] = r["path"]
            rows.append((key, r.get("explain") or {}))
        q[d["mode"]] = rows
    qids = [q for q in per_q if "lexical" in per_q[q] and "semantic" in per_q[q]]
    print(f"{len(qids)} queries with both lists", file=sys.stderr)

    prepared = []
    for qid in qids:
        lex_rows = per_q[qid]["lexical"]
        lex = [k for k, _ in lex_rows]
        all_terms = sum(1 for _, e in lex_rows if e.get("lexicalAllTerms"))
        vec = [(k, 1.0 - e["vectorDistance"]) for k, e in per_q[qid]["semantic"] if e.get("vectorDistance") is not None]
        prepared.append((qid, lex, all_terms, vec))

    variants = []

    def add(name, fn):
        rr = hit = 0.0
        for qid, lex, all_terms, vec in prepared:
            a, b = score(fn(lex, all_terms, vec), path_of, qrels.get(qid, set()))
            rr += a
            hit += b
        n = len(prepared)
        variants.append({"variant": name, "mrr@10": rr / n, "recall@10": hit / n})

    add("lexical", lambda lex, at, vec: lex)
    for delta in (0, 0.02, 0.03, 0.04, 0.05):
        add(f"semantic, floor {delta}", lambda lex, at, vec, d=delta: [k for k, _ in floor_cut(vec, d, None)])
    for k in (60, 20, 10):
        for wl in (1, 1.5, 2, 3):
            for delta in (0, 0.03, 0.04, 0.05):
                for gate, tiers in ((False, False), (True, False), (True, True)):
                    name = f"RRF k={k} wLex={wl} floor={delta}{' gate' if gate else ''}{' tiers' if tiers else ''}"
                    add(name, lambda lex, at, vec, k=k, wl=wl, d=delta, g=gate, t=tiers:
                        rrf(lex, floor_cut(vec, d, None), k, wl, gate=g, all_terms=at, tiers=t))
    add("lexical-first (vector-only appended)", lambda lex, at, vec: rrf(lex, vec, 60, 1000))
    add("vectors re-rank lexical pool only (RRF k=60 w=1)",
        lambda lex, at, vec: rrf(lex, vec, 60, 1, gate=True, all_terms=1))
    for alpha in (0.3, 0.5, 0.7):
        add(f"CombSUM alpha={alpha} (lexical rank-normalised + min-max cosine)",
            lambda lex, at, vec, a=alpha: combsum(lex, vec, a))
        add(f"CombSUM alpha={alpha} floor 0.05",
            lambda lex, at, vec, a=alpha: combsum(lex, floor_cut(vec, 0.05, None), a))

    with_at = sum(1 for p in prepared if p[2] > 0)
    print(f"queries whose lexical list has all-terms hits: {with_at}/{len(prepared)}")
    print(f"{'variant':<64} {'MRR@10':>7} {'R@10':>7}")
    for v in variants:
        print(f"{v['variant']:<64} {v['mrr@10']:>7.4f} {v['recall@10']:>7.4f}")
    if args.json:
        json.dump(variants, open(args.json, "w"), indent=2)


if __name__ == "__main__":
    main()
