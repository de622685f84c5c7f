#!/usr/bin/env python3
"""The tables of `docs/performance.md` from one `benches/run.sh` results directory.

Usage: python3 benches/summary.py RESULTS_DIR [--record]

Reads the JSON each step wrote (index.json, fts5.json, mcp.json, edit.json, corpus10x.json,
catalog.json, assets.json; missing steps are reported as not run), writes summary.json, and
prints two tables: docs/reference/product.md §6 with every baseline from the same run, and the current targets
(issue #28). Each timed row carries the load average (1/5/15 min) recorded before its step
(loadavg.txt), so a reader sees what else the machine was doing.

The current-targets table is Markdown: the rows this run measured, with the run's date and commit
(run.json, written by run.sh), and for every other row the latest recorded run of it from
benches/targets.json, marked "not rerun". `--record` writes the merged rows back to
benches/targets.json and replaces the table in docs/performance.md between its markers.
"""
import json
import os
import sys

out = [a for a in sys.argv[1:] if not a.startswith("--")][0]


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

# The current targets (issue #28), every row with its baseline from this run. Each row is a dict
# (id, measure, bar, value, baseline, ratio, status, step); rows of steps this run did not take
# come from benches/targets.json, the record of the latest run of each row, with that run's date.
run_info = optional("run.json") or {}
targets = []


def target(rid, measure, bar, value, baseline, ratio, met, step):
    status = "met" if met is True else "not met" if met is False else ""
    targets.append({"id": rid, "measure": measure, "bar": bar, "value": value, "baseline": baseline,
                    "ratio": ratio, "status": status, "load": loads.get(step, ""), "step": step})


if ix:
    src = ix["files"]["source_bytes"]
    target("lexical_vs_lindera", "full lexical index / lindera alone, 2 threads", "<= 2x",
           f"{fi['seconds']:.2f} s", f"lindera {fl['lindera_2t_seconds']:.2f} s",
           f"{ix['ratios']['full_index_over_lindera_2t']:.2f}x", ix["ratios"]["full_index_over_lindera_2t"] <= 2, "start")
    target("lexical_vs_fts5", "full lexical index / FTS5 unicode61 build", "<= 1.5x", f"{fi['seconds']:.2f} s",
           f"FTS5 {u['build_seconds']:.2f} s", f"{fi['seconds'] / u['build_seconds']:.2f}x",
           fi["seconds"] / u["build_seconds"] <= 1.5, "after-index-bench")
    target("index_size", "index size on disk / Markdown", "<= 1.3x, < FTS5",
           f"{fi['index_bytes'] / src:.2f}x ({mib(fi['index_bytes']):.1f} MiB: tantivy {mib(fi['lexical_bytes']):.1f}, "
           f"redb {mib(fi['store_bytes']):.1f}, links.bin {mib(fi.get('links_bytes', 0)):.1f})",
           f"FTS5 unicode61 {u['db_bytes'] / src:.2f}x", f"{fi['index_bytes'] / u['db_bytes']:.2f}x FTS5",
           fi["index_bytes"] / src <= 1.3 and fi["index_bytes"] < u["db_bytes"], "after-index-bench")
    target("query_inprocess", "lexical query p50 / p99, in-process", "< 1 / < 5 ms",
           f"{q['p50_ms']:.2f} / {q['p99_ms']:.2f} ms",
           f"FTS5 unicode61 {u['p50_ms']:.2f} / {u['p99_ms']:.2f} ms", f"{q['p50_ms'] / u['p50_ms']:.2f}x FTS5 p50",
           q["p50_ms"] < 1 and q["p99_ms"] < 5, "start")
    if "snippet" in q:
        sn = q["snippet"]
        target("query_snippets", "  its snippets: per returned hit p50 (topK 10 minus topK 1)", "",
               f"{sn['per_hit_p50_us']:.0f} us", f"query topK 1 {q['top_k_1_p50_ms']:.2f} ms",
               f"{sn['share_of_p50']:.2f} of p50", None, "start")
    target("query_mcp", "kb_search over MCP stdio p50", "< 2 ms", f"{ks['p50_ms']:.2f} ms",
           f"in-process {q['p50_ms']:.2f} ms", f"{ks['p50_ms'] / q['p50_ms']:.2f}x", ks["p50_ms"] < 2, "after-fts5")
if edit:
    run = edit["runs"][-1] if "runs" in edit else edit  # edit_latency.py: one run per --bin, ours last
    pt, wt = run["patch_to_searchable_ms"], run["watch_to_searchable_minus_debounce_ms"]
    rtt = run["baseline_search_rtt_ms"]["p50"]
    target("patch_latency", "kb_patch -> searchable p50 / p99", "< 30 / < 100 ms", f"{pt['p50']:.1f} / {pt['p99']:.1f} ms",
           f"one kb_search {rtt:.1f} ms", f"{pt['p50'] / rtt:.1f}x", pt["p50"] < 30 and pt["p99"] < 100, "after-mcp")
    target("watch_latency", "external save -> searchable p50 (minus the 400 ms debounce)", "< 100 ms",
           f"{wt['p50']:.0f} ms (p99 {wt['p99']:.0f})", f"one kb_search {rtt:.1f} ms", f"{wt['p50'] / rtt:.1f}x",
           wt["p50"] < 100, "after-mcp")
if c10:
    one, ten, m10, cb = c10["one_x"], c10["ten_x"], c10["mcp_10x"], c10["corpus"]
    target("c10_index", "10x corpus: index time / 1x", "<= 10x", f"{ten['full_seconds']:.1f} s",
           f"1x {one['full_seconds']:.1f} s", f"{c10['ratios']['index_time']:.2f}x", c10["ratios"]["index_time"] <= 10,
           "after-edit")
    target("c10_query", "10x corpus: kb_search p99 over MCP, server peak RSS", "< 50 ms, < 1 GB",
           f"{m10['kb_search']['p99_ms']:.1f} ms, {m10['rss']['hwm_after_searches_kb'] / 1024:.0f} MiB",
           f"1x {mcp['kb_search']['p99_ms']:.1f} ms" if mcp else "", "",
           m10["kb_search"]["p99_ms"] < 50 and m10["rss"]["hwm_after_searches_kb"] < 1e6, "after-edit")
if cat:
    case = {c["case"]: c for c in cat["cases"]}
    fd, tags = case["kb_find_docs {} warm"], case["kb_list_tags {}"]
    target("find_docs", f"kb_find_docs {{}} at {cat['docs']:,} documents p50, {cat.get('build', 'unrecorded')} build",
           "< 20 ms", f"{fd['p50_ms']:.1f} ms (p90 {fd['p90_ms']:.1f})", f"kb_list_tags {tags['p50_ms']:.1f} ms",
           f"{fd['p50_ms'] / tags['p50_ms']:.2f}x", fd["p50_ms"] < 20 if cat.get("build") == "release" else None,
           "before-catalog")
if ast:
    target("list_images", f"kb_list_images page of 200 at {ast['images']:,} images, first / second, "
           f"{ast.get('build', 'unrecorded')} build", "< 30 ms",
           f"{ast['list_page_first_ms']:.1f} / {ast['list_page_second_ms']:.1f} ms",
           f"all {-(-ast['images'] // 200)} pages {ast['list_all_pages_ms']:.0f} ms", "",
           max(ast["list_page_first_ms"], ast["list_page_second_ms"]) < 30, "before-assets")

this_run = {"date": run_info.get("date", "date unrecorded"), "commit": run_info.get("commit", "commit unrecorded")}
for t in targets:
    t["run"] = dict(this_run, load=t.pop("load"))
record_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "targets.json")
record = json.load(open(record_path)) if os.path.exists(record_path) else {"rows": []}
fresh = {t["id"] for t in targets}
merged = targets + [r for r in record["rows"] if r["id"] not in fresh]
order = {r["id"]: i for i, r in enumerate(record["rows"])}
merged.sort(key=lambda r: order.get(r["id"], len(order)))
json.dump({"rows": merged}, open(os.path.join(out, "targets.json"), "w"), ensure_ascii=False, indent=2)


def markdown(rows):
    lines = ["| measure | bar | latest | same-run baseline | ratio | status | run (date, commit, load 1/5/15 min) |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        ru = r["run"]
        where = f"{ru['date']}, `{ru['commit']}`" + (f", load {ru['load']}" if ru.get("load") else "")
        if r["id"] not in fresh:
            where = "not rerun: " + where
        lines.append(f"| {r['measure']} | {r['bar']} | {r['value']} | {r['baseline']} | {r['ratio']} | "
                     f"{r['status']} | {where} |")
    return "\n".join(lines)


table_md = markdown(merged)
open(os.path.join(out, "targets.md"), "w").write(table_md + "\n")
if "--record" in sys.argv:
    # benches/targets.json and the table of docs/performance.md between its markers
    json.dump({"rows": merged}, open(record_path, "w"), ensure_ascii=False, indent=2)
    open(record_path, "a").write("\n")
    doc = os.path.join(os.path.dirname(record_path), "..", "docs", "performance.md")
    text = open(doc).read()
    begin, end = "<!-- targets:begin (benches/summary.py --record) -->", "<!-- targets:end -->"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        text = head + begin + "\n" + table_md + "\n" + end + rest.split(end, 1)[1]
        open(doc, "w").write(text)
    print(f"recorded: {record_path} and the targets table of docs/performance.md", file=sys.stderr)
print()
print("== current targets (issue #28; rows not rerun come from benches/targets.json) ==")
print(table_md)
if os.path.exists(os.path.join(out, "loadavg.txt")):
    print("\nload average (1/5/15 min) at each step:")
    print(open(os.path.join(out, "loadavg.txt")).read().rstrip())
print(f"\nresults: {out}/summary.json")
