#!/usr/bin/env python3
"""The tables of `docs/performance.md` from one `benches/run.sh` results directory.

Usage: python3 benches/summary.py RESULTS_DIR

Reads the JSON each step wrote (index.json, fts5.json, mcp.json, edit.json, corpus10x.json,
catalog.json, assets.json; missing steps are reported as not run), writes summary.json, and
prints two tables: docs/reference/product.md §6 with every baseline from the same run, and the current targets
(issue #28). Each timed row carries the load average (1/5/15 min) recorded before its step
(loadavg.txt), so a reader sees what else the machine was doing.
"""
import json
import os
import sys

out = sys.argv[1]


def optional(name):
    path = os.path.join(out, name)
    return json.load(open(path)) if os.path.exists(path) else None


ix, fts, mcp = optional("index.json"), optional("fts5.json"), optional("mcp.json")
edit, c10 = optional("edit.json"), optional("corpus10x.json")
cat, ast = optional("catalog.json"), optional("assets.json")
json.dump({"index": ix, "fts5": fts, "mcp": mcp, "edit": edit, "corpus10x": c10, "catalog": cat, "assets": ast},
          open(os.path.join(out, "summary.json"), "w"), ensure_ascii=False, indent=2)
loads = {}
if os.path.exists(os.path.join(out, "loadavg.txt")):
    for line in open(os.path.join(out, "loadavg.txt")):
        step, *rest = line.split()
        loads[step] = " ".join(rest[:3])
mib = lambda b: b / 1048576
rows = []


def row(name, ours, base, ratio, target, load=""):
    rows.append((name, ours, base, ratio, target, load))


def table(rows):
    hdr = ("measure", "ours", "baseline (this run)", "ratio", "target", "load (1/5/15 min)")
    w = [max(len(r[i]) for r in rows + [hdr]) for i in range(6)]
    print("  ".join(h.ljust(w[i]) if i in (0, 5) else h.rjust(w[i]) for i, h in enumerate(hdr)))
    for r in rows:
        print("  ".join(c.ljust(w[i]) if i in (0, 5) else c.rjust(w[i]) for i, c in enumerate(r)))


if ix:
    fi, fl, q = ix["full_index"], ix["floor"], ix["query"]
    u, t = fts["unicode61"], fts["trigram"]
    init, ks, rss = mcp["initialize"], mcp["kb_search"], mcp["rss"]
    L1, L2, L3 = loads.get("start", ""), loads.get("after-index-bench", ""), loads.get("after-fts5", "")
    row("full index vs lindera alone, 2 threads", f"{fi['seconds']:.2f} s", f"{fl['lindera_2t_seconds']:.2f} s",
        f"{ix['ratios']['full_index_over_lindera_2t']:.2f}x", "<= 2x", L1)
    row("full index vs lindera alone, 1 thread", f"{fi['seconds']:.2f} s", f"{fl['lindera_1t_seconds']:.2f} s",
        f"{ix['ratios']['full_index_over_lindera_1t']:.2f}x", "", L1)
    row("full index vs FTS5 unicode61 build", f"{fi['seconds']:.2f} s", f"{u['build_seconds']:.2f} s",
        f"{fi['seconds'] / u['build_seconds']:.2f}x", "<= 1.5x", L2)
    row("full index vs FTS5 trigram build", f"{fi['seconds']:.2f} s", f"{t['build_seconds']:.2f} s",
        f"{fi['seconds'] / t['build_seconds']:.2f}x", "", L2)
    row("index size vs FTS5 unicode61", f"{mib(fi['index_bytes']):.0f} MiB", f"{mib(u['db_bytes']):.0f} MiB",
        f"{fi['index_bytes'] / u['db_bytes']:.2f}x", "< 1x")
    row("index size vs the Markdown", f"{mib(fi['index_bytes']):.0f} MiB",
        f"{mib(ix['files']['source_bytes']):.0f} MiB", f"{fi['index_to_source_ratio']:.2f}x", "<= 1.3x")
    row("  tantivy / redb / links.bin / vectors", f"{mib(fi['lexical_bytes']):.1f} / {mib(fi['store_bytes']):.1f} / "
        f"{mib(fi.get('links_bytes', 0)):.1f} / {mib(fi.get('vector_bytes', 0)):.1f} MiB", "", "", "")
    row("index size vs FTS5 trigram", f"{mib(fi['index_bytes']):.0f} MiB", f"{mib(t['db_bytes']):.0f} MiB",
        f"{fi['index_bytes'] / t['db_bytes']:.2f}x", "")
    row("peak RSS during full index", f"{fi['vm_hwm_kb'] / 1024:.0f} MiB", "500 MiB",
        f"{fi['vm_hwm_kb'] / 1024 / 500:.2f}", "< 500 MiB", L1)
    row("no-op reindex", f"{ix['noop_reindex']['seconds']:.3f} s", "1 s",
        f"{ix['noop_reindex']['seconds']:.2f}", "< 1 s", L1)
    for name, base in (("unicode61", u), ("trigram", t)):
        row(f"query p50 in-process vs FTS5 {name}", f"{q['p50_ms']:.3f} ms", f"{base['p50_ms']:.3f} ms",
            f"{q['p50_ms'] / base['p50_ms']:.2f}x", "< 1 ms", L1)
    for name, base in (("unicode61", u), ("trigram", t)):
        row(f"query p99 in-process vs FTS5 {name}", f"{q['p99_ms']:.3f} ms", f"{base['p99_ms']:.3f} ms",
            f"{q['p99_ms'] / base['p99_ms']:.2f}x", "< 5 ms", L1)
    row("query max in-process", f"{q['max_ms']:.3f} ms", "", "", "", L1)
    row("query p50 in-process, topK 1 vs topK 10", f"{q['top_k_1_p50_ms']:.3f} ms", f"{q['p50_ms']:.3f} ms",
        f"{q['top_k_1_p50_ms'] / q['p50_ms']:.2f}x", "", L1)
    row("kb_search MCP p50 vs in-process p50", f"{ks['p50_ms']:.3f} ms", f"{q['p50_ms']:.3f} ms",
        f"{ks['p50_ms'] / q['p50_ms']:.2f}x", "< 2 ms", L3)
    row("kb_search MCP p99", f"{ks['p99_ms']:.3f} ms", "", "", "", L3)
    row("start -> initialize p50 vs spawn `cat`", f"{init['p50_ms']:.1f} ms",
        f"{mcp['spawn_floor_cat']['p50_ms']:.1f} ms", f"{mcp['initialize_over_cat_p50']:.2f}x", "< 50 ms", L3)
    row("start -> initialize max", f"{init['max_ms']:.1f} ms", "", "", "< 50 ms", L3)
    row("idle server RSS", f"{rss['idle_after_initialize_kb_p50'] / 1024:.0f} MiB", "100 MiB",
        f"{rss['idle_after_initialize_kb_p50'] / 1024 / 100:.2f}", "< 100 MiB", L3)
    row("server RSS after all searches", f"{rss['after_searches_kb'] / 1024:.0f} MiB", "", "", "", L3)
    n = q["count"]
    row("queries with 0 results: ours / unicode61", f"{q['zero_results']}/{n}", f"{u['zero_results']}/{n}", "", "")
    row("queries with 0 results: ours / trigram", f"{q['zero_results']}/{n}", f"{t['zero_results']}/{n}", "", "")
    print()
    print(f"== summary (docs/reference/product.md §6): {ix['files']['indexed']} files, {fi['chunks']} chunks; "
          f"machine {ix['machine']['cpu']}, {ix['machine']['cores']} cores ==")
    table(rows)

# The current targets (issue #28), every row with its baseline from this run.
rows = []
if ix:
    src = ix["files"]["source_bytes"]
    row("index size on disk / Markdown", f"{fi['index_bytes'] / src:.2f}x ({mib(fi['index_bytes']):.0f} MiB)",
        f"FTS5 unicode61 {u['db_bytes'] / src:.2f}x ({mib(u['db_bytes']):.0f} MiB)",
        f"{fi['index_bytes'] / u['db_bytes']:.2f}x FTS5", "<= 1.3x, < FTS5")
    row("full lexical index / lindera alone, 2 threads", f"{fi['seconds']:.2f} s",
        f"lindera {fl['lindera_2t_seconds']:.2f} s", f"{ix['ratios']['full_index_over_lindera_2t']:.2f}x", "<= 2x", L1)
    row("full lexical index / FTS5 unicode61 build", f"{fi['seconds']:.2f} s", f"FTS5 {u['build_seconds']:.2f} s",
        f"{fi['seconds'] / u['build_seconds']:.2f}x", "<= 1.5x", L2)
    if edit:
        run = edit["runs"][0] if "runs" in edit else edit  # edit_latency.py: one run per --bin
        pt, wt = run["patch_to_searchable_ms"], run["watch_to_searchable_minus_debounce_ms"]
        floor = f"one kb_search {ks['p50_ms']:.1f} ms"
        L4 = loads.get("after-mcp", "")
        row("kb_patch -> searchable p50 / p99", f"{pt['p50']:.0f} / {pt['p99']:.0f} ms", floor,
            f"{pt['p50'] / ks['p50_ms']:.1f}x", "< 30 / < 100 ms", L4)
        row("external save -> searchable p50 (minus debounce)", f"{wt['p50']:.0f} ms (p99 {wt['p99']:.0f})", floor,
            f"{wt['p50'] / ks['p50_ms']:.1f}x", "< 100 ms", L4)
    else:
        row("kb_patch / external save -> searchable", "not run", "", "", "")
    row("lexical query p50 / p99 in-process", f"{q['p50_ms']:.2f} / {q['p99_ms']:.2f} ms",
        f"FTS5 unicode61 {u['p50_ms']:.2f} / {u['p99_ms']:.2f} ms",
        f"{q['p50_ms'] / u['p50_ms']:.2f}x", "< 1 ms / < 5 ms", L1)
    row("lexical query p50 over MCP stdio", f"{ks['p50_ms']:.2f} ms", f"in-process {q['p50_ms']:.2f} ms",
        f"{ks['p50_ms'] / q['p50_ms']:.2f}x", "< 2 ms", L3)
    if c10:
        one, ten, m10, cb = c10["one_x"], c10["ten_x"], c10["mcp_10x"], c10["corpus"]
        L5 = loads.get("after-edit", "")
        row(f"10x corpus ({cb['files']} files, {cb['bytes'] / 1e6:.0f} MB = "
            f"{cb['bytes'] / cb['base_bytes']:.1f}x): index time",
            f"{ten['full_seconds']:.1f} s", f"1x {one['full_seconds']:.1f} s",
            f"{c10['ratios']['index_time']:.2f}x", "<= 10x", L5)
        row("10x: kb_search p99 over MCP (p50)",
            f"{m10['kb_search']['p99_ms']:.1f} ms ({m10['kb_search']['p50_ms']:.1f})",
            f"1x {ks['p99_ms']:.1f} ms", f"{m10['kb_search']['p99_ms'] / ks['p99_ms']:.2f}x", "< 50 ms", L5)
        row("10x: peak RSS of the full reindex", f"{ten['peak_rss_kb'] / 1024:.0f} MiB",
            f"1x {one['peak_rss_kb'] / 1024:.0f} MiB", f"{c10['ratios']['peak_rss']:.2f}x", "< 1 GB", L5)
        row("10x: server peak RSS after the searches", f"{m10['rss']['hwm_after_searches_kb'] / 1024:.0f} MiB",
            f"1x {mcp['rss']['hwm_after_searches_kb'] / 1024:.0f} MiB",
            f"{m10['rss']['hwm_after_searches_kb'] / max(mcp['rss']['hwm_after_searches_kb'], 1):.2f}x", "< 1 GB", L5)
        row("10x: start -> initialize p50 (max)",
            f"{m10['initialize']['p50_ms']:.1f} ms ({m10['initialize']['max_ms']:.1f})",
            f"1x {init['p50_ms']:.1f} ms", f"{m10['initialize']['p50_ms'] / init['p50_ms']:.2f}x", "< 50 ms", L5)
        row("10x: no-op reindex", f"{ten['noop_seconds']:.2f} s", f"1x {one['noop_seconds']:.2f} s",
            f"{c10['ratios']['noop']:.2f}x", "", L5)
        row("10x: index size / Markdown", f"{ten['index_bytes'] / cb['bytes']:.2f}x",
            f"1x {one['index_bytes'] / cb['base_bytes']:.2f}x", f"{ten['index_bytes'] / one['index_bytes']:.2f}x of 1x",
            "<= 10x of 1x", L5)
    else:
        row("10x corpus", "not run (LVS_BENCH_10X=0)", "", "", "")
else:
    row("corpus rows (index, FTS5, MCP, edits, 10x)", "not run (LVS_BENCH_ONLY_SMALL=1)", "", "", "")
if cat:
    case = {c["case"]: c for c in cat["cases"]}
    fd, tags = case["kb_find_docs {} warm"], case["kb_list_tags {}"]
    row(f"kb_find_docs {{}} at {cat['docs']:,} documents p50 (p90), {cat.get('build', 'unrecorded')} build", f"{fd['p50_ms']:.1f} ms ({fd['p90_ms']:.1f})",
        f"kb_list_tags {tags['p50_ms']:.1f} ms", f"{fd['p50_ms'] / tags['p50_ms']:.2f}x", "< 20 ms",
        loads.get("before-catalog", ""))
    if "guard: one GuardWalk per call" in case:
        now, old = case["guard: one GuardWalk per call"], case["guard: rel_path + stat per document"]
        row(f"  its path-guard part, 1 thread: one walk per call", f"{now['p50_ms']:.1f} ms",
            f"a walk per document {old['p50_ms']:.1f} ms", f"{now['p50_ms'] / old['p50_ms']:.2f}x", "",
            loads.get("before-catalog", ""))
else:
    row("kb_find_docs {} at 5,000 documents", "not run", "", "", "")
if ast:
    row(f"kb_list_images page of 200 at {ast['images']:,} images, first / second, {ast.get('build', 'unrecorded')} build",
        f"{ast['list_page_first_ms']:.1f} / {ast['list_page_second_ms']:.1f} ms",
        f"all {-(-ast['images'] // 200)} pages {ast['list_all_pages_ms']:.0f} ms", "", "< 30 ms",
        loads.get("before-assets", ""))
    if "listing_cached_ms" in ast:
        row("  its listing: cached vs a walk of the root", f"{ast['listing_cached_ms']:.1f} ms",
            f"walk {ast['listing_walk_ms']:.1f} ms", f"{ast['listing_cached_ms'] / ast['listing_walk_ms']:.2f}x", "",
            loads.get("before-assets", ""))
else:
    row("kb_list_images page at 5,000 images", "not run", "", "", "")
print()
print("== current targets (issue #28) ==")
table(rows)
if os.path.exists(os.path.join(out, "loadavg.txt")):
    print("\nload average (1/5/15 min) at each step:")
    print(open(os.path.join(out, "loadavg.txt")).read().rstrip())
print(f"\nresults: {out}/summary.json")
