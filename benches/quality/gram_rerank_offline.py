#!/usr/bin/env python3
"""Offline variants of the character-gram re-rank (docs/design/retrieval.md, "Character-gram
re-rank"), on JSQuAD result lists dumped by eval_hybrid.py:

    python3 benches/eval_hybrid.py --lexical-only --distractors --distractor-every 1 --split tune \
        --workdir DIR --search-yaml "rerankWeight: 0" --fetch-k 50 --dump tune-dump.jsonl
    python3 benches/quality/gram_rerank_offline.py tune-dump.jsonl --workdir DIR

Each variant re-orders the first 20 hits of each list: rank term RANK_K / (RANK_K + rank) plus
weight x (gram score / best gram score in the pool), within the all-words tier and the rest
(`lexicalAllTerms` of the explain), and reports MRR@10. Gram score: the query grams (characters,
pairs, triples of letters and digits, NFKC + lowercase) a candidate holds, each weighted by a
pool-local IDF; or a BM25 over pairs with pool-local statistics. `--sentence` instead tries
round 5's best-sentence term on top of the built variant (`--fixed K,W1,W2` scores one setting).
Candidate texts: the passage (title + text) from corpus.jsonl, a distractor file's first 4,000
characters from the workdir.
"""
import argparse
import collections
import json
import math
import os
import re
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "..", "shared", "eval", "jsquad-valid")
SEP = re.compile(r"[\s\W_]", re.U)


def norm(s):
    return unicodedata.normalize("NFKC", s).lower()


def grams(s, n):
    s = norm(s)
    return [s[i:i + n] for i in range(len(s) - n + 1) if not SEP.search(s[i:i + n])]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dump")
    ap.add_argument("--data", default=DATA)
    ap.add_argument("--workdir", required=True, help="the eval_hybrid.py workdir the lists came from")
    ap.add_argument("--depth", type=int, default=20)
    ap.add_argument("--sentence", action="store_true",
                    help="round 5: also add the best single sentence's gram score (x W2) to the built variant")
    ap.add_argument("--fixed", default=None, metavar="K,W1,W2",
                    help="with --sentence: report only this setting (to confirm a tuning-half choice held out)")
    args = ap.parse_args()

    text = {}
    for line in open(os.path.join(args.data, "corpus.jsonl"), encoding="utf-8"):
        d = json.loads(line)
        text["p/" + d["_id"] + ".md"] = d["title"] + "\n" + d["text"]
    rel = {}
    with open(os.path.join(args.data, "qrels", "passage.tsv"), encoding="utf-8") as f:
        next(f)
        for line in f:
            q, c, s = line.rstrip("\n").split("\t")[:3]
            if float(s) > 0:
                rel.setdefault(q, set()).add("p/" + c + ".md")
    questions = {json.loads(l)["_id"]: json.loads(l)["text"] for l in open(os.path.join(args.data, "queries.jsonl"), encoding="utf-8")}
    lists = []
    for line in open(args.dump, encoding="utf-8"):
        d = json.loads(line)
        res = d["results"][: args.depth]
        lists.append((d["qid"], [r["path"] for r in res], [bool((r.get("explain") or {}).get("lexicalAllTerms")) for r in res]))

    def get(p):
        if p not in text:
            try:
                with open(os.path.join(args.workdir, p), encoding="utf-8", errors="replace") as f:
                    text[p] = f.read()[:4000]
            except OSError:
                text[p] = ""
        return text[p]

    cache = {}

    def set_scores(qid, paths, ns, idf):
        key = ("set", qid, ns, idf)
        if key not in cache:
            qg = {g for n in ns for g in grams(questions[qid], n)}
            cg = [{g for n in ns for g in grams(get(p), n)} & qg for p in paths]
            N = len(paths)
            df = collections.Counter(g for c in cg for g in c)
            f = {"log": lambda d: math.log(1 + N / d), "bm25": lambda d: math.log(1 + (N - d + 0.5) / (d + 0.5)),
                 "inverse": lambda d: 1 / d, "none": lambda d: 1}[idf]
            cache[key] = [sum(f(df[g]) for g in c) for c in cg]
        return cache[key]

    def bm25_scores(qid, paths, b, k1=1.2):
        key = ("bm25", qid, b)
        if key not in cache:
            qg = set(grams(questions[qid], 2))
            cnts = [collections.Counter(grams(get(p), 2)) for p in paths]
            lens = [sum(c.values()) or 1 for c in cnts]
            avg = sum(lens) / max(1, len(lens))
            N = len(paths)
            df = collections.Counter(g for c in cnts for g in qg if g in c)
            cache[key] = [sum(math.log(1 + (N - df[g] + 0.5) / (df[g] + 0.5)) * c[g] * (k1 + 1) / (c[g] + k1 * (1 - b + b * L / avg))
                              for g in qg if c.get(g)) for c, L in zip(cnts, lens)]
        return cache[key]

    def mrr(scorer, weight, rank_k):
        total = 0.0
        for qid, paths, tiers in lists:
            order = paths
            if scorer is not None and paths:
                sc = scorer(qid, paths)
                best = max(sc) or 1
                keyed = [(t, rank_k / (rank_k + i + 1) + weight * s / best, -i, p)
                         for i, (p, s, t) in enumerate(zip(paths, sc, tiers))]
                order = [k[-1] for k in sorted(keyed, reverse=True)]
            total += next((1 / (i + 1) for i, p in enumerate(order[:10]) if p in rel.get(qid, ())), 0.0)
        return total / len(lists)

    print(f"{len(lists)} lists, depth {args.depth}; lexical order: MRR@10 {mrr(None, 0, 60):.4f}")
    if args.sentence:
        sentence_variants(lists, questions, rel, get, args.fixed)
        return
    print("variant | best MRR@10 | rank K | weight")
    variants = [(f"set {ns} idf {idf}", (lambda ns, idf: lambda q, p: set_scores(q, p, ns, idf))(ns, idf))
                for ns in ((1,), (2,), (1, 2), (2, 3)) for idf in ("log", "bm25", "inverse", "none")]
    variants += [(f"pair BM25 b={b}", (lambda b: lambda q, p: bm25_scores(q, p, b))(b)) for b in (0.0, 0.5, 0.75)]
    for name, scorer in variants:
        best = max((mrr(scorer, w, k), k, w) for k in (10, 20, 60) for w in (0.1, 0.2, 0.3, 0.5))
        print(f"{name} | {best[0]:.4f} | {best[1]} | {best[2]}")


SENTENCE_END = re.compile(r"(?<=[。\n])")


def sentence_variants(lists, questions, rel, get, fixed):
    """Round 5 (docs/design/retrieval.md, "Sentence focus"): the built score (characters and
    pairs, pool IDF) plus W2 x the best single sentence's score under the same IDF, each divided
    by the pool's best; sentences end at a line break or `。`."""
    feats = {}
    for qid, paths, _ in lists:
        qg = set(grams(questions[qid], 1)) | set(grams(questions[qid], 2))
        held = [(set(grams(get(p), 1)) | set(grams(get(p), 2))) & qg for p in paths]
        df = collections.Counter(g for h in held for g in h)
        idf = {g: math.log(1 + len(paths) / d) for g, d in df.items()}
        whole = [sum(idf[g] for g in h) for h in held]
        best_sentence = []
        for p in paths:
            scores = [sum(idf.get(g, 0) for g in (set(grams(x, 1)) | set(grams(x, 2))) & qg)
                      for x in SENTENCE_END.split(get(p)) if x.strip()]
            best_sentence.append(max(scores, default=0))
        feats[qid] = (whole, best_sentence)

    def mrr(k, w1, w2):
        total = 0.0
        for qid, paths, tiers in lists:
            if not paths:
                continue
            whole, sent = feats[qid]
            bw, bs = max(whole) or 1, max(sent) or 1
            keyed = [(t, k / (k + i + 1) + w1 * whole[i] / bw + w2 * sent[i] / bs, -i, p)
                     for i, (p, t) in enumerate(zip(paths, tiers))]
            order = [x[-1] for x in sorted(keyed, reverse=True)]
            total += next((1 / (i + 1) for i, p in enumerate(order[:10]) if p in rel.get(qid, ())), 0.0)
        return total / len(lists)

    if fixed:
        k, w1, w2 = (float(x) for x in fixed.split(","))
        print(f"K {k:g}, W1 {w1:g}, W2 {w2:g}: MRR@10 {mrr(k, w1, w2):.4f}; without the sentence term "
              f"{mrr(k, w1, 0):.4f}")
        return
    print("rank K | W1 (whole) | W2 (best sentence) | MRR@10")
    for r in sorted(((mrr(k, w1, w2), k, w1, w2) for k in (10, 20, 60) for w1 in (0.1, 0.2, 0.3, 0.5)
                     for w2 in (0, 0.1, 0.2, 0.3, 0.5)), reverse=True)[:10]:
        print(f"{r[1]} | {r[2]} | {r[3]} | {r[0]:.4f}")


if __name__ == "__main__":
    main()
