#!/usr/bin/env python3
"""What Claude Code, Codex and Gemini CLI hand their model for one large `kb_outline` answer
(issue #44): each CLI runs offline against a fake model (fake_model.py) and the real server over
stdio, calls `kb_outline` once, and the fake model records the request that carries the result.

For every CLI, file (Japanese, ASCII) and `maxBytes` (and the server's default page), the table
gives the answer our server sent (bytes, characters; measured with the Python MCP SDK on the same
project) and what the model received, and whether it arrived intact (the sent JSON is in the request
whole, or the CLI's JSON of our structured result equals it) or was cut or replaced.

Usage: run.py --bin SERVER [--claude CLAUDE] [--codex CODEX] [--gemini GEMINI]
              [--sizes 24576,32768,...] [--timeout 120] [--keep DIR]
A CLI whose path is empty is skipped with a message. The table goes to stdout, logs to stderr.
"""

import argparse
import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_model import FakeModel  # noqa: E402

TOOL = "kb_outline"
FILES = {"ja": "large-ja.md", "en": "large-en.md"}


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# --- the project ----------------------------------------------------------------------------

JA_WORDS = ["京都", "東京", "大阪", "北海道", "沖縄", "名古屋", "福岡", "仙台", "広島", "神戸",
            "検索", "索引", "設計", "実装", "評価", "運用", "障害", "対策", "手順", "概要",
            "形態素解析", "全文検索", "ベクトル", "埋め込み", "文書", "見出し", "段落", "表", "画像", "目次"]
EN_WORDS = ["Kyoto", "Tokyo", "Osaka", "Hokkaido", "Okinawa", "Nagoya", "Fukuoka", "Sendai", "Hiroshima", "Kobe",
            "search", "index", "design", "implementation", "evaluation", "operations", "failure", "remedy",
            "procedure", "overview", "tokenizer", "full-text", "vector", "embedding", "document", "heading",
            "paragraph", "table", "image", "contents"]


def markdown(words, sep, para, sections=60, subs=4, subsubs=2):
    """60 `#` sections x 4 `##` x 2 `###`: 60 + 240 + 480 = 780 headings, a short paragraph each."""
    out, k = [], 0

    def title(n):
        nonlocal k
        k += 1
        return sep.join(words[(k * 7 + i * 11) % len(words)] for i in range(n)) + f" {k}"

    for s in range(sections):
        out += [f"# {title(5)}", "", para, ""]
        for _ in range(subs):
            out += [f"## {title(6)}", "", para, ""]
            for _ in range(subsubs):
                out += [f"### {title(7)}", "", para, ""]
    return "\n".join(out)


def make_project(root):
    docs = root / "docs"
    docs.mkdir(parents=True)
    (docs / FILES["ja"]).write_text(markdown(
        JA_WORDS, "と", "この節では京都と東京の検索について短く説明します。見出しごとに段落があります。"), encoding="utf-8")
    (docs / FILES["en"]).write_text(markdown(
        EN_WORDS, " ", "This section briefly explains search in Kyoto and Tokyo. Every heading has a paragraph."),
        encoding="utf-8")


def server_args(binary, project, storage):
    return [binary, "--project-root", str(project), "--storage-path", str(storage),
            "--embedding-provider", "none", "--search-mode", "lexical"]


def tool_args(lang, size):
    request = {"path": f"docs/{FILES[lang]}"}
    if size is not None:
        request["maxBytes"] = size
    return {"request": request}


# --- what the server sends (the official Python MCP SDK) ------------------------------------

async def reference(binary, project, storage, cases):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    argv = server_args(binary, project, storage)
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=clean_env({}))
    sent = {}
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            for lang, size in cases:
                res = await s.call_tool(TOOL, tool_args(lang, size))
                assert not res.is_error, res.content
                assert len(res.content) == 1, res.content
                sent[(lang, size)] = {"text": res.content[0].text, "structured": res.structured_content}
    return sent


# --- the CLIs ---------------------------------------------------------------------------------

def clean_env(extra):
    """A minimal environment: nothing of the caller's model keys, proxies or settings leaks in."""
    env = {k: os.environ[k] for k in ("PATH", "LANG", "LC_ALL", "TMPDIR") if k in os.environ}
    env.setdefault("LANG", "C.UTF-8")
    env.update(extra)
    return env


def run_claude(exe, run_dir, argv, port):
    home = run_dir / "home"
    home.mkdir()
    cfg = run_dir / "mcp.json"
    cfg.write_text(json.dumps({"mcpServers": {"lvs": {"type": "stdio", "command": argv[0], "args": argv[1:]}}}))
    cmd = [exe, "-p", f"Call the {TOOL} tool once.", "--mcp-config", str(cfg), "--strict-mcp-config",
           "--allowedTools", f"mcp__lvs__{TOOL}", "--permission-mode", "bypassPermissions",
           "--model", "claude-sonnet-4-5", "--output-format", "json", "--max-turns", "4"]
    env = clean_env({
        "HOME": str(home), "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}", "ANTHROPIC_API_KEY": "offline",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1", "MCP_TIMEOUT": "60000", "IS_SANDBOX": "1",
        # MCP tools are offered directly, not behind the ToolSearch tool (deferred loading).
        "ENABLE_TOOL_SEARCH": "false",
    })
    return cmd, env


def run_codex(exe, run_dir, argv, port):
    home = run_dir / "home"
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True)
    toml = "\n".join([
        # A model Codex knows: its truncation policy comes from the model's metadata.
        'model = "gpt-5.5"',
        'model_provider = "fake"',
        'approval_policy = "never"',
        'sandbox_mode = "read-only"',
        "[model_providers.fake]",
        'name = "fake"',
        f'base_url = "http://127.0.0.1:{port}/v1"',
        'wire_api = "responses"',
        'env_key = "FAKE_MODEL_KEY"',
        "request_max_retries = 0",
        "stream_max_retries = 0",
        "[mcp_servers.lvs]",
        f"command = {json.dumps(argv[0])}",
        f"args = {json.dumps(argv[1:])}",
        "startup_timeout_sec = 60",
        "tool_timeout_sec = 60",
        "required = true",  # the first turn waits for the server's tools
        'default_tools_approval_mode = "approve"',  # headless: no one to ask
        "",
    ])
    (codex_home / "config.toml").write_text(toml)
    cmd = [exe, "exec", "--skip-git-repo-check", "--json", f"Call the {TOOL} tool once."]
    env = clean_env({"HOME": str(home), "CODEX_HOME": str(codex_home), "FAKE_MODEL_KEY": "offline"})
    return cmd, env


def run_gemini(exe, run_dir, argv, port):
    home = run_dir / "home"
    (home / ".gemini").mkdir(parents=True)
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "mcpServers": {"lvs": {"command": argv[0], "args": argv[1:], "trust": True, "timeout": 60000}},
        "privacy": {"usageStatisticsEnabled": False},
    }
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    cmd = [exe, "-m", "gemini-2.5-flash", "-p", f"Call the {TOOL} tool once.", "--skip-trust",
           "--approval-mode", "yolo", "--output-format", "stream-json"]
    env = clean_env({"HOME": str(home), "GEMINI_API_KEY": "offline",
                     "GOOGLE_GEMINI_BASE_URL": f"http://127.0.0.1:{port}"})
    return cmd, env


CLIS = {"claude": run_claude, "codex": run_codex, "gemini": run_gemini}
NAMES = {"claude": "Claude Code", "codex": "Codex", "gemini": "Gemini CLI"}


# --- what the model received ------------------------------------------------------------------

def texts(v):
    """Every text of a tool result's content, in order (a string, a list of parts, a dict)."""
    if isinstance(v, str):
        return [v]
    if isinstance(v, list):
        return [t for x in v for t in texts(x)]
    if isinstance(v, dict):
        if isinstance(v.get("text"), str):
            return [v["text"]]
        for key in ("output", "content", "response", "result"):
            if key in v:
                return texts(v[key])
    return []


def received(api_body):
    """The tool result the CLI put in the model request, as a list of text parts."""
    if "messages" in api_body:  # Anthropic
        for m in reversed(api_body["messages"]):
            for b in m.get("content") if isinstance(m.get("content"), list) else []:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    return texts(b.get("content"))
    if isinstance(api_body.get("input"), list):  # Responses
        for i in reversed(api_body["input"]):
            if isinstance(i, dict) and i.get("type", "").endswith("call_output"):
                return texts(i.get("output"))
    for c in reversed(api_body.get("contents") or []):  # Gemini
        for p in c.get("parts") or []:
            if isinstance(p, dict) and "functionResponse" in p:
                return texts(p["functionResponse"].get("response"))
    return None


def without_nulls(v):
    if isinstance(v, dict):
        return {k: without_nulls(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [without_nulls(x) for x in v]
    return v


def verdict(sent, parts):
    """(verdict, received text) for what the server sent and the text parts the model received.

    intact: the received text is the sent JSON, or holds it whole after a header the CLI adds
    (Codex writes `Wall time: …` / `Output:` before a result, Claude Code appends a
    `<system-reminder>`, Gemini CLI wraps it in `<untrusted_context>`) — either way the JSON parses and
    equals what was sent; "as structuredContent" when the CLI passed our structured result
    instead of the text. Otherwise the answer was cut (part of the JSON is missing) or replaced
    by a preview (a small part and, usually, the path of a file holding the rest)."""
    if parts is None:
        return "no tool result in the request", ""
    got = "".join(parts)
    text = sent["text"]
    if got == text:
        return "intact", got
    at = got.find(text)
    if at >= 0:
        return f"intact (+{len(got) - len(text)} chars the CLI adds around it)", got
    start = got.find("{")
    try:
        value, _ = json.JSONDecoder().raw_decode(got[start:]) if start >= 0 else (None, 0)
    except ValueError:
        value = None
    if value is not None and (value == json.loads(text) or without_nulls(value) == without_nulls(sent["structured"])):
        return "intact (as structuredContent)", got
    if len(got) < len(text) // 4:
        return "replaced by a preview", got
    return "cut", got


WRAPPING = {
    "claude": "a `<system-reminder>` after it",
    "codex": "`Wall time: … seconds` / `Output:` before it",
    "gemini": "`<untrusted_context>` tags around it",
}

MARKERS = [
    r"<persisted-output>\s*[^\n]*",  # Claude Code: a preview and the file that holds the rest
    r"Output too large\.[^\n]*",  # Gemini CLI: head and tail, and the file that holds it all
    r"…[^…]{0,40}truncated…",  # Codex: the middle left out
]


def marker(got):
    """The CLI's own words where it cut or replaced an answer (else the first line)."""
    for pattern in MARKERS:
        m = re.search(pattern, got)
        if m:
            # The file's path is a private temporary one: say only that there is one.
            return re.sub(r"(saved to:|see:) \S+", r"\1 <file>", " ".join(m.group(0).split()))
    return got.strip().splitlines()[0][:160]


# --- the bench --------------------------------------------------------------------------------

def fmt(n):
    return f"{n:,}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--claude", default="")
    ap.add_argument("--codex", default="")
    ap.add_argument("--gemini", default="")
    ap.add_argument("--sizes", default="24576,32768,40960,49152,65536")
    ap.add_argument("--langs", default="ja,en")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--keep", default="", help="keep the runs' files (requests, logs) in this directory")
    a = ap.parse_args()

    sizes = [int(s) for s in a.sizes.split(",") if s] + [None]
    langs = [l for l in a.langs.split(",") if l]
    cases = [(lang, size) for lang in langs for size in sizes]
    work = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="lvs-agent-clis-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        project = work / "project"
        if not project.exists():
            make_project(project)
        sent = asyncio.run(asyncio.wait_for(reference(a.bin, project, work / "index-ref", cases), 120))
        for lang in langs:
            default = sent[(lang, None)]["text"]
            log(f"{FILES[lang]}: default page {len(default.encode())} bytes, {len(default)} chars")

        rows, versions, notes = [], {}, {}
        for cli, make in CLIS.items():
            exe = getattr(a, cli)
            if not exe:
                log(f"skip {NAMES[cli]}: no executable given")
                continue
            try:
                versions[cli] = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60,
                                               env=clean_env({"HOME": str(work)})).stdout.strip().splitlines()[-1]
            except (subprocess.SubprocessError, IndexError, OSError) as e:
                versions[cli] = f"? ({e})"
            for lang, size in cases:
                tag = f"{cli}-{lang}-{size or 'default'}"
                run_dir = work / tag
                if run_dir.exists():
                    shutil.rmtree(run_dir)
                run_dir.mkdir()
                record = run_dir / "request.json"
                model = FakeModel(TOOL, tool_args(lang, size), str(record), lifetime=a.timeout + 30,
                                  dump=str(run_dir / "model-request") if a.keep else None).start()
                argv = server_args(a.bin, project, run_dir / "index")
                cmd, env = make(exe, run_dir, argv, model.port)
                t0 = time.monotonic()
                # Its own process group, so that a timeout also ends the MCP server it started.
                p = subprocess.Popen(cmd, cwd=project, env=env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
                try:
                    out, err = p.communicate(timeout=a.timeout)
                    rc = p.returncode
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    out, err = p.communicate()
                    rc = "timeout"
                (run_dir / "stdout.txt").write_bytes(out)
                (run_dir / "stderr.txt").write_bytes(err)
                model.stop()
                log(f"{tag}: exit {rc} in {time.monotonic() - t0:.1f} s; model requests: {model.log}")
                s = sent[(lang, size)]
                if record.exists():
                    v, got = verdict(s, received(json.loads(record.read_bytes())))
                    (run_dir / "received.txt").write_text(got, encoding="utf-8")
                else:
                    v, got = f"no second model request (exit {rc})", ""
                    err = (run_dir / "stderr.txt").read_text(errors="replace").strip().splitlines()
                    log(f"  stderr tail: {err[-5:]}")
                rows.append((cli, lang, size, s["text"], got, v))
                if not v.startswith("intact") and got and cli not in notes:
                    notes[cli] = marker(got)

        print(f"Server: `{TOOL}` of docs/{FILES['ja']} (Japanese) and docs/{FILES['en']} (ASCII); "
              + "; ".join(f"{NAMES[c]} {v}" for c, v in versions.items()))
        print()
        # One row per page and maxBytes, one column per CLI: what arrived, and its size.
        ran = [c for c in CLIS if c in versions]
        print("| page | maxBytes | sent bytes | sent chars | " + " | ".join(NAMES[c] for c in ran) + " |")
        print("| --- | ---: | ---: | ---: | " + " | ".join("---" for _ in ran) + " |")
        cells = {(cli, lang, size): (got, v) for cli, lang, size, _, got, v in rows}
        for lang, size in cases:
            text = sent[(lang, size)]["text"]
            line = [lang, fmt(size) if size else "default", fmt(len(text.encode())), fmt(len(text))]
            for cli in ran:
                got, v = cells[(cli, lang, size)]
                word = "intact" if v.startswith("intact") else f"**{v}**"
                line.append(f"{word}: {fmt(len(got.encode()))} B / {fmt(len(got))} ch")
            print("| " + " | ".join(line) + " |")
        print()
        print("B / ch: bytes and characters of the tool result in the model request (an intact answer "
              "plus what the CLI adds around it: " + "; ".join(
                  f"{NAMES[c]} {w}" for c, w in WRAPPING.items() if c in ran) + ").")
        if notes:
            print()
            print("How each CLI marks a cut or replaced answer:")
            for cli, line in notes.items():
                print(f"- {NAMES[cli]}: `{line}`")
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
