#!/usr/bin/env python3
"""Fusion variants scored offline from the result lists `eval_hybrid.py --dump` wrote.

The dump holds, per query, the lexical top-N (with `explain.lexicalRank` and
`explain.lexicalAllTerms`) and the semantic top-N (with `explain.vectorDistance`, taken with
`search.semanticFloor: 0`, so unfiltered). Every variant below re-ranks those two lists exactly
as `src/vectors/mod.rs` would (weighted RRF over 1-based ranks, ties by key), then scores the
first 10 distinct paths against the qrels: MRR@10 and recall@10. No server, no model: a
variant costs a second, so every one tried is listed, the losers too.

With --technical SET.jsonl the dump is `eval_technical.py --dump`'s and every variant is scored
with that set's graded judgements (nDCG@10 and MRR@10, benches/quality/README.md). --split
tune|held keeps the tuning or held-out half (JSQuAD: by article, eval_hybrid.split_articles;
technical: odd or even ids), so a setting is chosen on one half and confirmed on the other.

Usage: fusion_offline.py DUMP.jsonl [--data ../shared/eval/jsquad-valid] [--technical SET.jsonl]
                         [--split all|tune|held] [--json OUT]
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


def variant_grid():
    """(name, fn(lex, all_terms, vec) -> ranked keys), every variant tried; the losers stay listed."""
    out = [("lexical", lambda lex, at, vec: lex)]
    for delta in (0, 0.02, 0.03, 0.04, 0.05, 0.06):
        out.append((f"semantic, floor {delta}", lambda lex, at, vec, d=delta: [k for k, _ in floor_cut(vec, d, None)]))
    for k in (100, 60, 20, 10):
        for wl in (1, 1.5, 2, 3, 4):
            for delta in (0, 0.03, 0.04, 0.05, 0.06):
                for gate, tiers in ((False, False), (True, False), (True, True)):
                    name = f"RRF k={k} wLex={wl} floor={delta}{' gate' if gate else ''}{' tiers' if tiers else ''}"
                    out.append((name, lambda lex, at, vec, k=k, wl=wl, d=delta, g=gate, t=tiers:
                                rrf(lex, floor_cut(vec, d, None), k, wl, gate=g, all_terms=at, tiers=t)))
    # Adaptive: with all-terms hits (the user's words were found), the lexical list weighs
    # `wl_at`; without (a whole-sentence question), `wl`. gate + tiers as the shipped fusion.
    for k in (60, 20):
        for wl in (1, 1.5, 2, 3, 4, 6, 1000):
            for wl_at in (4, 8, 1000):
                for delta in (0.04, 0.06):
                    name = f"adaptive k={k} wLex={wl} wLexAllTerms={wl_at} floor={delta} gate tiers"
                    out.append((name, lambda lex, at, vec, k=k, wl=wl, wa=wl_at, d=delta:
                                rrf(lex, floor_cut(vec, d, None), k, wa if at > 0 else wl, gate=True,
                                    all_terms=at, tiers=True)))
    out.append(("lexical-first (vector-only appended)", lambda lex, at, vec: rrf(lex, vec, 60, 1000)))
    out.append(("vectors re-rank lexical pool only (RRF k=60 w=1)",
                lambda lex, at, vec: rrf(lex, vec, 60, 1, gate=True, all_terms=1)))
    for alpha in (0.3, 0.5, 0.7):
        out.append((f"CombSUM alpha={alpha} (lexical rank-normalised + min-max cosine)",
                    lambda lex, at, vec, a=alpha: combsum(lex, vec, a)))
        out.append((f"CombSUM alpha={alpha} floor 0.05",
                    lambda lex, at, vec, a=alpha: combsum(lex, floor_cut(vec, 0.05, None), a)))
    return out


def load_dump(path):
    per_q, info = {}, {}
    for line in open(path, encoding="utf-8"):
        d = json.loads(line)
        q = per_q.setdefault(d["qid"], {})
        rows = []
        for r in d["results"]:
            key = f"{r['path']}::{r['pointer']}"
            info[key] = r
            rows.append((key, r.get("explain") or {}))
        q[d["mode"]] = rows
    return per_q, info


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dump")
    ap.add_argument("--data", default=os.path.join(REPO, "..", "shared", "eval", "jsquad-valid"))
    ap.add_argument("--technical", default=None, help="score with this graded set (eval_technical.py dump)")
    ap.add_argument("--split", choices=["all", "tune", "held"], default="all")
    ap.add_argument("--json", default=None)
    ap.add_argument("--diff", default=None, metavar="NAME",
                    help="also list the queries whose first metric differs between lexical and the variant named NAME")
    args = ap.parse_args()
    per_q, info = load_dump(args.dump)

    if args.technical:
        import eval_technical
        queries = {q["id"]: q for q in eval_technical.read_set(args.technical, args.split)}
        keep = set(queries)

        def scorer(qid, keys):
            ndcg, rr, hit = eval_technical.score(queries[qid], [info[k] for k in keys])
            return {"ndcg@10": ndcg, "mrr@10": rr, "recall@10": float(hit)}
    else:
        qrels = read_qrels(os.path.join(args.data, "qrels", "passage.tsv"))
        keep = None
        if args.split != "all":
            import eval_hybrid
            corpus = eval_hybrid.read_jsonl(os.path.join(args.data, "corpus.jsonl"))
            tune, held = eval_hybrid.split_articles(corpus)
            articles = tune if args.split == "tune" else held
            keep = {qid for qid in per_q if qid.split("p")[0] in articles}
        path_of = {k: r["path"] for k, r in info.items()}

        def scorer(qid, keys):
            rr, hit = score(keys, path_of, qrels.get(qid, set()))
            return {"mrr@10": rr, "recall@10": float(hit)}

    qids = [q for q in per_q if "lexical" in per_q[q] and "semantic" in per_q[q] and (keep is None or q in keep)]
    print(f"{len(qids)} queries with both lists (split {args.split})", file=sys.stderr)
    prepared = []
    for qid in qids:
        lex_rows = per_q[qid]["lexical"]
        lex = [k for k, _ in lex_rows]
        all_terms = sum(1 for _, e in lex_rows if e.get("lexicalAllTerms"))
        vec = [(k, 1.0 - e["vectorDistance"]) for k, e in per_q[qid]["semantic"] if e.get("vectorDistance") is not None]
        prepared.append((qid, lex, all_terms, vec))

    if args.diff:
        fn = dict(variant_grid())[args.diff]
        print(f"queries where '{args.diff}' differs from lexical:")
        for qid, lex, all_terms, vec in prepared:
            a, b = (next(iter(scorer(qid, keys).values())) for keys in (lex, fn(lex, all_terms, vec)))
            if abs(a - b) > 1e-3:
                kind = queries[qid].get("kind", "") if args.technical else ""
                query = queries[qid]["query"] if args.technical else qid
                print(f"  {qid} {kind} all-terms hits {all_terms}: {query}  {a:.3f} -> {b:.3f}")

    variants = []
    for name, fn in variant_grid():
        sums = {}
        for qid, lex, all_terms, vec in prepared:
            for m, v in scorer(qid, fn(lex, all_terms, vec)).items():
                sums[m] = sums.get(m, 0.0) + v
        variants.append({"variant": name, **{m: v / max(1, len(prepared)) for m, v in sums.items()}})

    with_at = sum(1 for p in prepared if p[2] > 0)
    metrics = [m for m in ("ndcg@10", "mrr@10", "recall@10") if variants and m in variants[0]]
    print(f"queries whose lexical list has all-terms hits: {with_at}/{len(prepared)}")
    print(f"{'variant':<64} " + " ".join(f"{m:>9}" for m in metrics))
    for v in variants:
        print(f"{v['variant']:<64} " + " ".join(f"{v[m]:>9.4f}" for m in metrics))
    if args.json:
        json.dump({"split": args.split, "queries": len(prepared), "variants": variants}, open(args.json, "w"), indent=2)


if __name__ == "__main__":
    main()
