#!/usr/bin/env python3
"""Character-bigram BM25 over the binary's own chunks: the baseline of the QA sets (issue #46).

SQLite FTS5 through Python's sqlite3 (the parts of fts5_baseline.py). Each chunk's heading path
and text are NFKC-normalised and lowercased, and each run of letters and digits becomes its
space-separated character pairs (a run of one character is itself), so FTS5's `unicode61`
tokenizer indexes one token per pair; two columns (heading, text), FTS5's bm25 with its
defaults (k1 1.2, b 0.75, both columns weight 1). A query is the OR of its distinct pairs.

The chunks are what the index holds: `export-chunks` of the evaluated project (same chunking,
same files), so the baseline and the binary rank the same units.

Used by eval_hybrid.py --bigram and eval_sections.py. Standard library only.
"""

import json
import re
import sqlite3
import subprocess
import unicodedata

RUN = re.compile(r"\w+")


def bigrams(text):
    out = []
    for run in RUN.findall(unicodedata.normalize("NFKC", text or "").lower()):
        if len(run) == 1:
            out.append(run)
        out.extend(run[i:i + 2] for i in range(len(run) - 1))
    return out


def export_chunks(argv):
    """The project's chunks (`argv` is the binary with its global options) as dicts."""
    out = subprocess.run(argv + ["export-chunks"], check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


class Bigram:
    """FTS5 over `rows` = [(key, heading, text)]; `search(query, k)` -> the first k distinct keys."""

    def __init__(self, rows):
        self.con = sqlite3.connect(":memory:")
        self.con.execute("CREATE VIRTUAL TABLE c USING fts5(heading, text, tokenize='unicode61')")
        self.keys = [r[0] for r in rows]
        self.con.execute("BEGIN")
        self.con.executemany("INSERT INTO c(rowid, heading, text) VALUES (?, ?, ?)",
                             ((i + 1, " ".join(bigrams(h)), " ".join(bigrams(t))) for i, (_, h, t) in enumerate(rows)))
        self.con.execute("COMMIT")

    def search(self, query, k):
        grams = list(dict.fromkeys(bigrams(query)))
        if not grams:
            return []
        match = " OR ".join('"' + g.replace('"', '""') + '"' for g in grams)
        out, limit = [], 5 * k
        while True:
            rows = self.con.execute("SELECT rowid FROM c WHERE c MATCH ? ORDER BY bm25(c) LIMIT ?",
                                    (match, limit)).fetchall()
            out = list(dict.fromkeys(self.keys[r[0] - 1] for r in rows))
            if len(out) >= k or len(rows) < limit:
                return out[:k]
            limit *= 4
