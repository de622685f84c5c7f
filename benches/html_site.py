#!/usr/bin/env python3
"""`build-site` over a whole book (docs/performance.md, "HTML export").

Copies the book (default ../shared/corpora/rust-book-ja) into a temporary project, builds a
catalog for it from the book's `src/SUMMARY.md` — an index with one `docs` entry per chapter (ID =
file stem, title = the SUMMARY link text) and a standalone `mdmark.config.yaml` whose
`build.include` lists the chapters in reading order — then runs `build-site` RUNS times with the
given binary and reports wall time (each run and the median), the process's peak RSS, the output
size (total, and how much of it is embedded images) and the number of documents and warnings.
Also times `export-html` of the longest chapter. Prints one JSON object. No assertions.

Usage: python3 benches/html_site.py --bin target/release/local-vector-search-mcp [--book DIR] [--runs 5]
"""

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def summary_order(src):
    """(file, title) of every chapter linked from SUMMARY.md, in order, comments removed."""
    text = re.sub(r"<!--.*?-->", "", (src / "SUMMARY.md").read_text(encoding="utf-8"), flags=re.S)
    seen, out = set(), []
    for title, target in re.findall(r"\[([^\]]+)\]\(([^)#]+\.md)\)", text):
        if target not in seen and (src / target).is_file():
            seen.add(target)
            out.append((target, title))
    return out


def yaml_str(s):
    return json.dumps(s, ensure_ascii=False)


def build_catalog(root):
    """index.yaml + mdmark.config.yaml for the book at root/src; returns the chapters."""
    chapters = summary_order(root / "src")
    lines = ["# Built by benches/html_site.py from src/SUMMARY.md.", "version: 1", "docs:"]
    for file, title in chapters:
        lines += [f"  - id: {yaml_str(Path(file).stem)}", f"    path: src/{file}", f"    title: {yaml_str(title)}"]
    (root / "index.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    include = "\n".join(f"    - {yaml_str('src/' + f)}" for f, _ in chapters)
    (root / "mdmark.config.yaml").write_text(
        "index: index.yaml\nhtml:\n  highlight: true\nbuild:\n  include:\n" + include
        + "\n  out: dist/book.html\n  title: The Rust Programming Language 日本語版\n", encoding="utf-8")
    (root / ".git").mkdir(exist_ok=True)  # stops the upward search for mdmark.config.yaml
    return chapters


def run(binary, root, *args):
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    env["RUST_LOG"] = "error"
    start = time.perf_counter()
    out = subprocess.run([binary, "--project-root", str(root), "--embedding-provider", "none", *args],
                         capture_output=True, text=True, env=env, check=False)
    secs = time.perf_counter() - start
    if out.returncode != 0:
        raise SystemExit(f"{args} failed: {out.stderr}")
    return secs, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--book", default=str(REPO.parent / "shared" / "corpora" / "rust-book-ja"))
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    binary = str(Path(a.bin).resolve())
    with tempfile.TemporaryDirectory(prefix="lvs-html-bench-") as tmp:
        root = Path(tmp) / "book"
        shutil.copytree(Path(a.book) / "src", root / "src")
        chapters = build_catalog(root)
        markdown_bytes = sum((root / "src" / f).stat().st_size for f, _ in chapters)
        times, last = [], None
        for _ in range(a.runs):
            secs, last = run(binary, root, "build-site")
            times.append(secs)
        html = (root / "dist" / "book.html").read_text(encoding="utf-8")
        data_uris = sum(len(m) for m in re.findall(r'data:image/[^"]+', html))
        longest = max(chapters, key=lambda c: (root / "src" / c[0]).stat().st_size)[0]
        export_times = [run(binary, root, "export-html", f"src/{longest}")[0] for _ in range(a.runs)]
        result = {
            "binary": binary,
            "documents": len(chapters),
            "markdown_bytes": markdown_bytes,
            "build_site_stdout": last.stdout.strip(),
            "warnings": len([l for l in last.stderr.splitlines() if l.startswith("warning: ")]),
            "build_site_seconds": [round(t, 3) for t in times],
            "build_site_median_seconds": round(statistics.median(times), 3),
            "output_bytes": len(html.encode("utf-8")),
            "embedded_image_bytes": data_uris,
            "peak_rss_mib_of_any_run": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1),
            "export_html_longest": longest,
            "export_html_median_seconds": round(statistics.median(export_times), 3),
            "load_average": os.getloadavg(),
        }
        print(json.dumps(result, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
