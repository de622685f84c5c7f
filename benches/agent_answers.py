#!/usr/bin/env python3
"""Agent benchmark (issue #45 item 1): what a search costs the model, and when the answer is in view.

Drives the binary as an MCP server over stdio (the client of eval_hybrid.py / mcp_latency.py),
with `--embedding-provider none`, and sends every question as the *default* `kb_search` call
an agent makes, `{"request": {"query": q}}` (no mode, no topK: the server's default mode, which
with no embeddings answers lexically and says so in `warning`; topK 10). For each call it
counts what Claude Code hands the model: the UTF-8 bytes of the tool result's text content
blocks (`content[].text`), and among them the bytes of the snippets alone.

JSQuAD (../shared/eval/jsquad-valid, the project of eval_hybrid.py: `p/<id>.md` per passage,
plus every Nth Markdown file of the corpora as `distractors/`), questions from raw/valid-v1.3.json
with their gold answers (`answers[].text`), split into the tuning and the held-out half of
eval_hybrid.split_articles (the split of eval_quality.sh), each half reported:
- visible in top-k: some gold answer is a substring of one of the first k hits' snippets, both
  normalised the same way: `[`/`]` (highlight marks) and `...` removed, NFKC, whitespace removed;
- bytes per search (median, p90), snippet bytes, the snippets' share of the bytes;
- bytes until the answer is in view: the search bytes when the top-3 snippets show it, else the
  agent follows the first hit's `readHint` with `kb_read` (exactly those arguments; a compact hit,
which has none, is read by its `path` and `pointer`) and pays the
  search plus the read's text bytes; the answer is then in view if the read's `markdown` holds it.
  Shares answered within the search / within search + read / not at all.
- the snippet window: of the questions whose first hit is the gold passage, how often the
  answer is not in that hit's snippet, and how often the snippet cuts it (a `...` edge splits it).

Technical set (benches/quality/technical.jsonl, the queries answered in rust-book-ja and
js-primer, over a project of those two books whole): bytes per default search, snippet share, and
what reading the first hit's `readHint` costs.

Usage:
  agent_answers.py --bin BIN [--data DIR] [--corpora DIR] [--distractor-every N] [--limit N]
                   [--label NAME] [--out FILE] [--extra-args '--config x.yaml'] [--workdir DIR]
  agent_answers.py --compare BEFORE.json AFTER.json      # a before/after Markdown table
  agent_answers.py --bin BIN --self-check                # 20 questions: the plumbing works

Runtime on the shared 2-core VM (load average 13-15): 10 min 41 s from nothing, 7 min of it the
index of every distractor file; with --workdir kept, 3 min. --distractor-every 100 indexes a
hundredth of the distractors if the full project is ever too slow (not comparable with the full one).
Data defaults are relative to the repository (../shared/eval/jsquad-valid, ../shared/corpora).
Standard library only (plus eval_hybrid.py, eval_technical.py and mcp_latency.py beside it).
"""

import argparse
import datetime
import json
import os
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import unicodedata

from eval_hybrid import McpServer, build_project, evenly_spaced, log, read_jsonl, read_qrels, reindex, split_articles
from eval_technical import WHOLE, corpus_of, markdown_files, read_set
from eval_technical import build_project as build_files_project
from mcp_latency import percentile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
TECH_SET = os.path.join(HERE, "quality", "technical.jsonl")
SELF_CHECK_QUESTIONS = 20
DEFAULT_DISTRACTOR_EVERY = 1  # every distractor file (the eval_quality.sh step 3 project)


# ---------------------------------------------------------------------------------------------
# Text


_MARKS = re.compile(r"\[|\]|\.\.\.")
_DROP = re.compile(r"[\s\[\]]|\.\.\.")


def norm(text):
    """The comparison form of a snippet, a read's markdown or a gold answer: the highlight marks
    `[` `]` and the ellipsis `...` removed, NFKC, then whitespace (and marks NFKC made) removed."""
    return _DROP.sub("", unicodedata.normalize("NFKC", _MARKS.sub("", text or "")))


def utf8(text):
    return len((text or "").encode("utf-8"))


def dist(values):
    """median and p90 (nearest rank) of a list of numbers; None when empty."""
    if not values:
        return {"n": 0, "median": None, "p90": None, "mean": None}
    s = sorted(values)
    return {"n": len(s), "median": statistics.median(s), "p90": percentile(s, 0.90), "mean": statistics.fmean(s)}


def cut_by_window(snippet, answers):
    """True when the snippet shows the start or the end of an answer (two characters or more) at
    a `...` edge but not the whole answer: the snippet window split it."""
    parts = (snippet or "").split("...")
    if len(parts) < 2:
        return False
    for ans in answers:
        a = norm(ans)
        if len(a) < 3:
            continue
        for i, part in enumerate(parts):
            p = norm(part)
            if not p:
                continue
            if i < len(parts) - 1:  # text runs on after this part: does it end with a prefix of a?
                if any(p.endswith(a[:n]) for n in range(len(a) - 1, 1, -1)):
                    return True
            if i > 0:  # text ran before this part: does it start with a suffix of a?
                if any(p.startswith(a[-n:]) for n in range(len(a) - 1, 1, -1)):
                    return True
    return False


# ---------------------------------------------------------------------------------------------
# MCP



def read_args(hit):
    """What the agent passes to kb_read to read a hit: its readHint (the full hit shape), else
    its path and pointer (the compact shape, whose tool description says exactly that)."""
    if hit.get("readHint"):
        return hit["readHint"]
    if hit.get("path") and hit.get("pointer"):
        return {"path": hit["path"], "pointer": hit["pointer"]}
    return None

def call(server, tool, arguments):
    """One tools/call: (text bytes of the content blocks, structuredContent or {}, error or None,
    the text content concatenated)."""
    msg = server.request("tools/call", {"name": tool, "arguments": arguments})
    if "error" in msg:
        return 0, {}, f"JSON-RPC error: {json.dumps(msg['error'], ensure_ascii=False)}", ""
    res = msg.get("result") or {}
    texts = [c.get("text", "") for c in res.get("content") or [] if isinstance(c, dict) and c.get("type") == "text"]
    nbytes = sum(utf8(t) for t in texts)
    err = None
    if res.get("isError"):
        err = " ".join(texts) or "isError without text"
    return nbytes, res.get("structuredContent") or {}, err, "".join(texts)


def server_args(extra_args):
    """--extra-args split like a shell; a `--config` path is made absolute against the working
    directory (the server would resolve a relative one against the benchmark's project root)."""
    out = shlex.split(extra_args or "")
    for i, a in enumerate(out):
        if a == "--config" and i + 1 < len(out):
            out[i + 1] = os.path.abspath(out[i + 1])
        elif a.startswith("--config="):
            out[i] = "--config=" + os.path.abspath(a[len("--config="):])
    return out


def start_server(bin_path, project, index_dir, extra_args, stderr_path, timeout_s):
    argv = [os.path.abspath(bin_path), "--project-root", project, "--storage-path", index_dir,
            "--embedding-provider", "none", *server_args(extra_args)]
    server = McpServer(argv, stderr_path)
    t = time.perf_counter()
    seconds, status = reindex(server, timeout_s)
    last = status["indexing"]["last"]
    if last.get("outcome") != "succeeded":
        log(f"WARNING: reindex outcome {last.get('outcome')}: {last.get('error')}")
    project_info = status.get("project") or {}
    log(f"reindex {time.perf_counter() - t:.1f} s: {project_info.get('documents')} documents, "
        f"{project_info.get('chunks')} chunks")
    return server, {"reindex_seconds": round(seconds, 1), "documents": project_info.get("documents"),
                    "chunks": project_info.get("chunks")}


def search(server, query):
    """The default kb_search of one query: a dict of what the model reads."""
    t = time.perf_counter()
    nbytes, sc, err, _ = call(server, "kb_search", {"request": {"query": query}})
    ms = (time.perf_counter() - t) * 1e3
    hits = sc.get("results") or []
    snippets = [h.get("snippet") or "" for h in hits]
    return {"bytes": nbytes, "snippet_bytes": sum(utf8(s) for s in snippets), "hits": hits, "snippets": snippets,
            "warning_bytes": utf8(sc.get("warning")), "modes": sorted({h.get("searchMode") for h in hits if h}),
            "field_bytes": field_bytes(hits), "error": err, "ms": ms}


def field_bytes(hits):
    """Bytes of each hit field summed over the hits, as compact JSON (`"key":value,`): where a
    result's bytes go, whatever the server's own serialisation adds around them."""
    out = {}
    for h in hits:
        for k, v in h.items():
            out[k] = out.get(k, 0) + utf8(json.dumps({k: v}, ensure_ascii=False, separators=(",", ":"))) - 1
    return out


def mean_field_bytes(rows):
    """Mean bytes per search of each hit field, largest first."""
    total = {}
    for r in rows:
        for k, v in r["field_bytes"].items():
            total[k] = total.get(k, 0) + v
    return {k: round(v / len(rows), 1) for k, v in sorted(total.items(), key=lambda kv: -kv[1])} if rows else {}


# ---------------------------------------------------------------------------------------------
# JSQuAD


def load_answers(data):
    """question id -> gold answer texts, from raw/valid-v1.3.json (SQuAD format)."""
    with open(os.path.join(data, "raw", "valid-v1.3.json"), encoding="utf-8") as f:
        raw = json.load(f)
    out = {}
    for article in raw["data"]:
        for para in article["paragraphs"]:
            for qa in para["qas"]:
                out[qa["id"]] = [a["text"] for a in qa.get("answers") or [] if a.get("text")]
    return out


def run_jsquad_question(server, q, answers, gold):
    s = search(server, q["text"])
    golds = [norm(a) for a in answers]
    golds = [g for g in golds if g]
    shown = [norm(x) for x in s["snippets"]]
    first_seen = next((k for k, text in enumerate(shown, 1) if any(g in text for g in golds)), None)
    row = {"qid": q["_id"], "bytes": s["bytes"], "snippet_bytes": s["snippet_bytes"], "hits": len(s["hits"]),
           "warning_bytes": s["warning_bytes"], "modes": s["modes"], "error": s["error"], "first_seen": first_seen,
           "snippet_sizes": [utf8(x) for x in s["snippets"]], "field_bytes": s["field_bytes"],
           "ms": round(s["ms"], 2)}
    top1 = s["hits"][0] if s["hits"] else None
    row["top1_gold"] = bool(top1 and top1.get("path") in gold)
    row["top1_cut"] = bool(top1 and first_seen != 1 and cut_by_window(s["snippets"][0], answers))
    if row["top1_gold"] and first_seen != 1:  # the right passage first, the answer outside its snippet
        row["top1_snippet"], row["answers"] = s["snippets"][0], answers
    if first_seen is not None and first_seen <= 3:
        row.update(outcome="search", read_bytes=0, cost=s["bytes"])
    elif top1 and read_args(top1):
        rbytes, rsc, rerr, _ = call(server, "kb_read", {"request": read_args(top1)})
        in_read = not rerr and any(g in norm(rsc.get("markdown")) for g in golds)
        row.update(outcome="read" if in_read else "none", read_bytes=rbytes, cost=s["bytes"] + rbytes,
                   read_error=rerr, read_markdown_bytes=utf8(rsc.get("markdown")),
                   read_truncated=bool(rsc.get("nextPointer")))
    else:
        row.update(outcome="none", read_bytes=0, cost=s["bytes"])
    return row


def summarise_jsquad(rows):
    n = len(rows)
    if not n:
        return {"questions": 0}
    share = lambda pred: sum(1 for r in rows if pred(r)) / n  # noqa: E731
    reads = [r for r in rows if r["outcome"] != "search" and r["read_bytes"]]
    gold1 = [r for r in rows if r["top1_gold"]]
    total_bytes = sum(r["bytes"] for r in rows)
    return {
        "questions": n,
        "visible_top1": share(lambda r: r["first_seen"] is not None and r["first_seen"] <= 1),
        "visible_top3": share(lambda r: r["first_seen"] is not None and r["first_seen"] <= 3),
        "visible_top10": share(lambda r: r["first_seen"] is not None and r["first_seen"] <= 10),
        "search_bytes": dist([r["bytes"] for r in rows]),
        "snippet_bytes": dist([r["snippet_bytes"] for r in rows]),
        "snippet_share": sum(r["snippet_bytes"] for r in rows) / total_bytes if total_bytes else 0.0,
        "bytes_per_snippet": dist([b for r in rows for b in r["snippet_sizes"]]),
        "hits_per_search": statistics.fmean(r["hits"] for r in rows),
        "field_bytes_per_search": mean_field_bytes(rows),
        "warning_bytes": statistics.fmean(r["warning_bytes"] for r in rows),
        "cost_until_answer": dist([r["cost"] for r in rows]),
        "cost_until_answer_answered": dist([r["cost"] for r in rows if r["outcome"] != "none"]),
        "read_bytes": dist([r["read_bytes"] for r in reads]),
        "read_markdown_bytes": dist([r["read_markdown_bytes"] for r in reads]),
        "answered_search": share(lambda r: r["outcome"] == "search"),
        "answered_read": share(lambda r: r["outcome"] == "read"),
        "answered_none": share(lambda r: r["outcome"] == "none"),
        "reads": len(reads),
        "reads_with_next_page": sum(1 for r in reads if r.get("read_truncated")),
        "top1_gold": share(lambda r: r["top1_gold"]),
        "top1_gold_answer_not_in_snippet": (sum(1 for r in gold1 if r["first_seen"] != 1) / len(gold1)) if gold1 else 0.0,
        "top1_gold_answer_cut": (sum(1 for r in gold1 if r["top1_cut"]) / len(gold1)) if gold1 else 0.0,
        "errors": sum(1 for r in rows if r["error"]),
        "search_ms": dist([r["ms"] for r in rows]),
    }


def run_jsquad(args, work):
    corpus = read_jsonl(os.path.join(args.data, "corpus.jsonl"))
    qrels = read_qrels(os.path.join(args.data, "qrels", "passage.tsv"))
    answers = load_answers(args.data)
    queries = [q for q in read_jsonl(os.path.join(args.data, "queries.jsonl")) if q["_id"] in qrels]
    queries = evenly_spaced(queries, args.limit)
    tune, held = split_articles(corpus)
    project, index_dir = os.path.join(work, "jsquad", "project"), os.path.join(work, "jsquad", "index")
    every = args.distractor_every
    n_distractors = build_project(project, corpus, args.corpora if every > 0 else None, max(every, 1))
    log(f"JSQuAD project: {len(corpus)} passages, {n_distractors} distractor files, {len(queries)} questions")
    server, info = start_server(args.bin, project, index_dir, args.extra_args,
                                os.path.join(work, "jsquad-server.stderr"), args.timeout_min * 60)
    rows = []
    t0 = time.perf_counter()
    try:
        for i, q in enumerate(queries, 1):
            gold = {f"p/{pid}.md" for pid in qrels[q["_id"]]}
            rows.append(run_jsquad_question(server, q, answers.get(q["_id"], []), gold))
            if i % 500 == 0:
                log(f"  JSQuAD {i}/{len(queries)} ({time.perf_counter() - t0:.0f} s)")
    finally:
        server.close()
    info["questions_seconds"] = round(time.perf_counter() - t0, 1)
    half = lambda r: "tune" if r["qid"].split("p")[0] in tune else "held"  # noqa: E731
    out = {"distractor_every": every, "distractor_files": n_distractors, "passages": len(corpus), **info,
           "tune": summarise_jsquad([r for r in rows if half(r) == "tune"]),
           "held": summarise_jsquad([r for r in rows if half(r) == "held"]),
           "all": summarise_jsquad(rows)}
    return out, rows


# ---------------------------------------------------------------------------------------------
# Technical set


def run_technical(args, work):
    queries = [q for q in read_set(args.set) if corpus_of(q) in WHOLE]
    if args.limit:
        queries = evenly_spaced(queries, max(1, args.limit * len(queries) // 4442))
    files = [os.path.join(name, p) for name in WHOLE for p in markdown_files(os.path.join(args.corpora, name))]
    project, index_dir = os.path.join(work, "technical", "project"), os.path.join(work, "technical", "index")
    build_files_project(project, args.corpora, files)
    log(f"technical project: {len(files)} files ({' + '.join(WHOLE)}), {len(queries)} queries")
    server, info = start_server(args.bin, project, index_dir, args.extra_args,
                                os.path.join(work, "technical-server.stderr"), args.timeout_min * 60)
    rows = []
    try:
        for q in queries:
            s = search(server, q["query"])
            row = {"id": q["id"], "bytes": s["bytes"], "snippet_bytes": s["snippet_bytes"], "hits": len(s["hits"]),
                   "warning_bytes": s["warning_bytes"], "modes": s["modes"], "error": s["error"], "read_bytes": 0,
                   "snippet_sizes": [utf8(x) for x in s["snippets"]], "field_bytes": s["field_bytes"]}
            if s["hits"] and read_args(s["hits"][0]):
                row["read_bytes"], rsc, row["read_error"], _ = call(server, "kb_read", {"request": read_args(s["hits"][0])})
                row["read_markdown_bytes"] = utf8(rsc.get("markdown"))
            rows.append(row)
    finally:
        server.close()
    total = sum(r["bytes"] for r in rows)
    return {"queries": len(rows), "files": len(files), **info,
            "search_bytes": dist([r["bytes"] for r in rows]),
            "snippet_bytes": dist([r["snippet_bytes"] for r in rows]),
            "snippet_share": sum(r["snippet_bytes"] for r in rows) / total if total else 0.0,
            "bytes_per_snippet": dist([b for r in rows for b in r["snippet_sizes"]]),
            "hits_per_search": statistics.fmean(r["hits"] for r in rows) if rows else 0.0,
            "field_bytes_per_search": mean_field_bytes(rows),
            "warning_bytes": statistics.fmean(r["warning_bytes"] for r in rows) if rows else 0.0,
            "first_hit_read_bytes": dist([r["read_bytes"] for r in rows if r["read_bytes"]]),
            "first_hit_read_markdown_bytes": dist([r["read_markdown_bytes"] for r in rows if r["read_bytes"]]),
            "search_plus_first_read_bytes": dist([r["bytes"] + r["read_bytes"] for r in rows]),
            "modes": sorted({m for r in rows for m in r["modes"]}),
            "errors": sum(1 for r in rows if r["error"])}, rows


# ---------------------------------------------------------------------------------------------
# Reports


def pct(x):
    return "—" if x is None else f"{100 * x:.1f} %"


def num(x):
    return "—" if x is None else f"{x:,.0f}"


def jsquad_row(name, s):
    return (f"| {name} | {s['questions']:,} | {pct(s['visible_top1'])} | {pct(s['visible_top3'])} | "
            f"{pct(s['visible_top10'])} | {num(s['search_bytes']['median'])} / {num(s['search_bytes']['p90'])} | "
            f"{num(s['snippet_bytes']['median'])} ({pct(s['snippet_share'])}) | "
            f"{num(s['cost_until_answer']['median'])} / {num(s['cost_until_answer']['p90'])} | "
            f"{pct(s['answered_search'])} / {pct(s['answered_read'])} / {pct(s['answered_none'])} |")


def fields_line(fields):
    return ", ".join(f"{k} {v:,.0f}" for k, v in fields.items())


def print_report(result):
    print(f"label: {result['label']}; {result['date']}; binary {result['binary_version']}; "
          f"server args {result['server_args']!r}")
    j = result.get("jsquad")
    if j:
        print(f"\nJSQuAD: {j['passages']} passages + {j['distractor_files']} distractor files "
              f"(every {j['distractor_every']}), {j['chunks']} chunks; reindex {j['reindex_seconds']} s, "
              f"questions {j['questions_seconds']} s")
        print("| half | questions | answer in top-1 | top-3 | top-10 snippets | bytes per search median / p90 | "
              "snippets median (share of bytes) | bytes until answer in view median / p90 | "
              "answered by search / + kb_read / not |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for name, key in (("tuning", "tune"), ("**held-out**", "held"), ("all", "all")):
            if j[key]["questions"]:
                print(jsquad_row(name, j[key]))
        a = j["all"]
        print(f"\nper snippet median {num(a['bytes_per_snippet']['median'])} B; hits per search "
              f"{a['hits_per_search']:.2f}; warning {a['warning_bytes']:.0f} B per search; kb_read (when followed, "
              f"{a['reads']}) median / p90 {num(a['read_bytes']['median'])} / {num(a['read_bytes']['p90'])} B (its markdown "
              f"{num(a['read_markdown_bytes']['median'])} B), "
              f"{a['reads_with_next_page']} with a next page")
        print(f"first hit is the gold passage: {pct(a['top1_gold'])}; of those, answer not in its snippet "
              f"{pct(a['top1_gold_answer_not_in_snippet'])}, cut by the snippet window "
              f"{pct(a['top1_gold_answer_cut'])}; errors {a['errors']}; search p50 {a['search_ms']['median']:.1f} ms")
        print("JSQuAD hit fields, mean bytes per search: " + fields_line(a["field_bytes_per_search"]))
    t = result.get("technical")
    if t:
        print("\ntechnical hit fields, mean bytes per search: " + fields_line(t["field_bytes_per_search"]))
        print(f"\ntechnical ({t['queries']} queries, {t['files']} files, {t['chunks']} chunks): bytes per search "
              f"median / p90 {num(t['search_bytes']['median'])} / {num(t['search_bytes']['p90'])}; snippets median "
              f"{num(t['snippet_bytes']['median'])} ({pct(t['snippet_share'])} of the bytes, "
              f"{num(t['bytes_per_snippet']['median'])} B each); first hit's kb_read median / p90 "
              f"{num(t['first_hit_read_bytes']['median'])} / {num(t['first_hit_read_bytes']['p90'])} (its markdown {num(t['first_hit_read_markdown_bytes']['median'])}); "
              f"modes {t['modes']}; errors {t['errors']}")
    print(f"\nruntime {result['seconds']:.0f} s")


METRICS = [  # (label, section, path, kind)
    ("answer in top-1 snippet", "jsquad", ("visible_top1",), "pct"),
    ("answer in top-3 snippets", "jsquad", ("visible_top3",), "pct"),
    ("answer in top-10 snippets", "jsquad", ("visible_top10",), "pct"),
    ("bytes per search, median", "jsquad", ("search_bytes", "median"), "num"),
    ("bytes per search, p90", "jsquad", ("search_bytes", "p90"), "num"),
    ("snippet bytes per search, median", "jsquad", ("snippet_bytes", "median"), "num"),
    ("snippets' share of the bytes", "jsquad", ("snippet_share",), "pct"),
    ("bytes per snippet, median", "jsquad", ("bytes_per_snippet", "median"), "num"),
    ("kb_read bytes when followed, median", "jsquad", ("read_bytes", "median"), "num"),
    ("first hit is the gold passage, answer not in its snippet", "jsquad", ("top1_gold_answer_not_in_snippet",), "pct"),
    ("bytes until the answer is in view, median", "jsquad", ("cost_until_answer", "median"), "num"),
    ("bytes until the answer is in view, p90", "jsquad", ("cost_until_answer", "p90"), "num"),
    ("answered by the search", "jsquad", ("answered_search",), "pct"),
    ("answered by search + kb_read", "jsquad", ("answered_read",), "pct"),
    ("not answered", "jsquad", ("answered_none",), "pct"),
    ("technical: bytes per search, median", "technical", ("search_bytes", "median"), "num"),
    ("technical: bytes per search, p90", "technical", ("search_bytes", "p90"), "num"),
    ("technical: snippets' share of the bytes", "technical", ("snippet_share",), "pct"),
    ("technical: first hit's kb_read bytes, median", "technical", ("first_hit_read_bytes", "median"), "num"),
]


def compare(path_a, path_b):
    with open(path_a, encoding="utf-8") as f:
        a = json.load(f)
    with open(path_b, encoding="utf-8") as f:
        b = json.load(f)
    print(f"| metric | {a['label']} | {b['label']} | change |")
    print("|---|---:|---:|---:|")

    def get(res, section, half, keys):
        v = res.get(section) or {}
        if section == "jsquad":
            v = v.get(half) or {}
        for k in keys:
            v = (v or {}).get(k)
        return v

    for half in ("tune", "held"):
        for label, section, keys, kind in [("questions", "jsquad", ("questions",), "num")] + METRICS:
            if section == "technical" and half == "tune":
                continue
            va, vb = get(a, section, half, keys), get(b, section, half, keys)
            name = label if section == "technical" else f"{'tuning' if half == 'tune' else '**held-out**'}: {label}"
            if va is None or vb is None:
                change = "—"
            elif kind == "pct":
                change = f"{100 * (vb - va):+.1f} pt"
            else:
                change = f"{vb - va:+,.0f}" + (f" ({100 * (vb - va) / va:+.0f} %)" if va else "")
            fmt = pct if kind == "pct" else num
            print(f"| {name} | {fmt(va)} | {fmt(vb)} | {change} |")


# ---------------------------------------------------------------------------------------------


def self_check(args, work):
    args.limit = SELF_CHECK_QUESTIONS
    args.distractor_every = 0
    j, rows = run_jsquad(args, work)
    problems = []
    if len(rows) != SELF_CHECK_QUESTIONS:
        problems.append(f"{len(rows)} questions run, not {SELF_CHECK_QUESTIONS}")
    for r in rows:
        if r["error"]:
            problems.append(f"{r['qid']}: kb_search error {r['error'][:200]}")
        if r["bytes"] <= 0 or not r["hits"]:
            problems.append(f"{r['qid']}: {r['bytes']} bytes, {r['hits']} hits")
        if r["snippet_bytes"] <= 0 or not all(r["snippet_sizes"]):
            problems.append(f"{r['qid']}: empty snippets {r['snippet_sizes']}")
        if r["snippet_bytes"] >= r["bytes"]:
            problems.append(f"{r['qid']}: snippet bytes {r['snippet_bytes']} not below the text bytes {r['bytes']}")
        if r["outcome"] != "search" and (r.get("read_error") or not r.get("read_markdown_bytes")):
            problems.append(f"{r['qid']}: kb_read of the readHint failed or was empty: {r.get('read_error')}")
    a = j["all"]
    if not a["visible_top10"]:
        problems.append("no answer visible in any snippet (is the answer matching broken?)")
    if not any(r["outcome"] != "search" for r in rows) and not a["answered_search"]:
        problems.append("neither a search nor a read answered anything")
    if norm("...[小笠原]諸島 を\u3000除く...") != "小笠原諸島を除く" or norm("ＡＰＩ") != "API":
        problems.append("norm() does not strip marks / NFKC as documented")
    print(f"self-check: {len(rows)} questions, bytes per search median {num(a['search_bytes']['median'])}, "
          f"snippets {pct(a['snippet_share'])} of them, top-10 visible {pct(a['visible_top10'])}, "
          f"reads {a['reads']}")
    for p in problems:
        print("FAIL:", p)
    if problems:
        sys.exit(1)
    print("self-check OK")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.path.join(REPO, "target", "release", "local-vector-search-mcp"))
    ap.add_argument("--data", default=os.path.join(REPO, "..", "shared", "eval", "jsquad-valid"))
    ap.add_argument("--corpora", default=os.path.join(REPO, "..", "shared", "corpora"))
    ap.add_argument("--set", default=TECH_SET, help="the technical set (queries answered in the two books are run)")
    ap.add_argument("--distractor-every", type=int, default=DEFAULT_DISTRACTOR_EVERY,
                    help="index every Nth Markdown file of --corpora as JSQuAD distractors (0: none)")
    ap.add_argument("--limit", type=int, default=0, help="evenly spaced JSQuAD questions (0: all 4,442); the "
                    "technical set is cut in proportion")
    ap.add_argument("--label", default="run", help="name of this run in --compare tables")
    ap.add_argument("--out", default=None, help="write the JSON summary (and per-question rows) here")
    ap.add_argument("--extra-args", default="", help="more server arguments, shell-quoted (e.g. '--config c.yaml')")
    ap.add_argument("--workdir", default=None, help="keep the projects and indexes here between runs")
    ap.add_argument("--timeout-min", type=float, default=30, help="reindex time limit (minutes)")
    ap.add_argument("--skip-technical", action="store_true")
    ap.add_argument("--skip-jsquad", action="store_true")
    ap.add_argument("--compare", nargs=2, metavar=("A.json", "B.json"), help="print a before/after table and exit")
    ap.add_argument("--self-check", action="store_true", help="20 questions, no distractors: assert the plumbing")
    args = ap.parse_args()
    if args.compare:
        compare(*args.compare)
        return
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so `finally` stops the server
    if not os.path.isfile(os.path.join(args.data, "raw", "valid-v1.3.json")):
        print(f"SKIP: JSQuAD not found at {args.data} (pass --data DIR)", file=sys.stderr)
        sys.exit(0)
    work = args.workdir or tempfile.mkdtemp(prefix="lvs-agent-answers-")
    os.makedirs(work, exist_ok=True)
    try:
        if args.self_check:
            self_check(args, work)
            return
        t0 = time.perf_counter()
        version = subprocess.run([args.bin, "--version"], capture_output=True, text=True).stdout.strip()
        result = {"label": args.label, "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                  "binary_version": version, "server_args": "--embedding-provider none " + args.extra_args,
                  "request": {"query": "<question>"}, "limit": args.limit}
        rows = {}
        if not args.skip_jsquad:
            result["jsquad"], rows["jsquad"] = run_jsquad(args, work)
        if not args.skip_technical and os.path.isdir(os.path.join(args.corpora, WHOLE[0])):
            result["technical"], rows["technical"] = run_technical(args, work)
        result["seconds"] = time.perf_counter() - t0
        print_report(result)
        if args.out:
            with open(args.out, "w", encoding="utf-8") as f:
                json.dump({**result, "rows": rows}, f, ensure_ascii=False, indent=1)
    finally:
        if args.workdir:
            log(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
