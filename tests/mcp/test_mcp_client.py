"""The real binary over stdio, driven by the official MCP Python SDK.

Run by `.ci/run` (its pytest step) or by hand: `python3 -m pytest -p no:cacheprovider tests/mcp`.
LVS_BIN = the binary under test, LVS_FIXTURE = tests/fixtures/ja, LVS_SHARED = ../shared (see
conftest.py for the defaults). Each test copies the fixture into a fresh project.
"""

import asyncio
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

BIN = os.environ["LVS_BIN"]
FIXTURE = Path(os.environ["LVS_FIXTURE"])
CORPORA = Path(os.environ["LVS_SHARED"]) / "corpora"
# The tool sets come from the generated tool list (`schema/mcp-tools.json`, which a Rust test keeps
# equal to the `tools/list` the server builds from its tool table), never from lists of our own.
TOOLS = {t["name"]: t for t in json.loads(
    (Path(__file__).resolve().parents[2] / "schema" / "mcp-tools.json").read_text(encoding="utf-8"))["tools"]}
ALL_TOOLS = sorted(TOOLS)
READ_ONLY = {n for n, t in TOOLS.items() if t["annotations"]["readOnlyHint"]}
DESTRUCTIVE = {n for n, t in TOOLS.items() if t["annotations"]["destructiveHint"]}
# Tools whose arguments sit under one `request` object; the others take them flat.
WRAPPED = {n for n, t in TOOLS.items() if list(t["inputSchema"].get("properties", {})) == ["request"]}
# Tools that publish no outputSchema and answer without a structured JSON result: plain text blocks
# (kb_read_guide), the catalog's Markdown-or-JSON answers (structuredContent only with format json),
# or a binary block (image or embedded resource) plus a metadata text block.
UNSTRUCTURED = {n for n, t in TOOLS.items() if "outputSchema" not in t}


def project(copy_fixture=True):
    root = Path(tempfile.mkdtemp(prefix="lvs-mcp-"))
    if copy_fixture:
        shutil.copytree(FIXTURE, root, dirs_exist_ok=True)
    return root


def params(root, *extra):
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    env["RUST_LOG"] = "warn"
    args = ["--project-root", str(root), "--embedding-provider", "none", "--search-mode", "lexical", *extra]
    return StdioServerParameters(command=BIN, args=args, env=env)


def run(coro, limit=120):
    """Runs a test's coroutine; `limit` seconds is a hang detector, not a timing assertion."""
    return asyncio.run(asyncio.wait_for(coro, limit))


def without_nulls(value):
    """`value` without null object fields, at every depth (what structured content leaves out)."""
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value


def body(result):
    """The structured result; asserts the text block carries the same JSON (the text keeps the
    contract's null fields; structured content leaves them out where an output schema is
    published, i.e. everywhere but the catalog's text tools)."""
    assert not result.is_error, result.content[0].text
    assert len(result.content) == 1
    assert without_nulls(json.loads(result.content[0].text)) == without_nulls(result.structured_content)
    return result.structured_content


def envelope(result):
    """The contract's `{"code","message"}` of an error result: its second block, after the same
    error as plain `CODE: message` text (docs/design/clients.md)."""
    assert result.is_error, result
    assert len(result.content) == 2, result.content
    err = json.loads(result.content[1].text)
    assert result.content[0].text == f"{err['code']}: {err['message']}", result.content
    return err


def error(result):
    err = envelope(result)
    assert set(err) == {"code", "message"}, err
    assert err["message"] and not err["message"].startswith("An error occurred invoking")
    return err


async def reindex_and_wait(c):
    started = body(await c.call_tool("kb_reindex", {"request": {}}))
    # `started: false` when it joined the first build the server began by itself.
    assert started["started"] is True or started["current"]["scope"] == "changed"
    assert started["current"]["scope"] == "changed"
    for _ in range(600):
        status = body(await c.call_tool("kb_status", {}))
        if not status["indexing"]["isRunning"] and status["indexing"]["last"]:
            assert status["indexing"]["last"]["outcome"] == "succeeded", status
            return status
        await asyncio.sleep(0.05)
    raise AssertionError("reindex did not finish")


async def synchronised(c):
    """Waits (up to 20 s) until kb_status shows no pending file and no running reindex."""
    for _ in range(400):
        status = body(await c.call_tool("kb_status", {}))
        if status["synchronization"]["pendingFiles"] == 0 and not status["indexing"]["isRunning"]:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("edits were not indexed")


def test_initialize_and_tools_list():
    async def go():
        async with Client(params(project())) as c:
            assert c.server_info.name == "local-vector-search-mcp"
            assert "kb_search" in (c.instructions or "")
            tools = (await c.list_tools()).tools
            assert sorted(t.name for t in tools) == ALL_TOOLS
            by = {t.name: t for t in tools}
            assert by["kb_status"].input_schema == {"type": "object", "properties": {}, "additionalProperties": False}
            # The sets are not empty, so the checks below check something.
            assert READ_ONLY and DESTRUCTIVE and WRAPPED and UNSTRUCTURED and ALL_TOOLS != sorted(READ_ONLY)
            assert {"kb_read_guide", "kb_load_image", "kb_find_docs"} <= UNSTRUCTURED and "kb_search" in WRAPPED
            for t in tools:
                assert t.description and len(t.description) > 40, t.name
                # What the SDK reads is the generated file, field by field.
                entry = TOOLS[t.name]
                assert (t.description, t.input_schema, t.output_schema) == (
                    entry["description"], entry["inputSchema"], entry.get("outputSchema")), t.name
                if t.name in UNSTRUCTURED:
                    assert t.output_schema is None, t.name
                else:
                    assert t.output_schema and t.output_schema.get("type") == "object", t.name
                if t.name in WRAPPED:
                    assert t.input_schema["required"] == ["request"], t.name
                assert t.annotations.read_only_hint == (t.name in READ_ONLY), t.name
                assert t.annotations.destructive_hint == (t.name in DESTRUCTIVE), t.name
            patch = by["kb_patch"].description
            for needle in ["replace_element", "replace_subtree", "replace_section", "delete_section",
                           "deprecated alias", "section body is preserved", "complete owned section subtree"]:
                assert needle in patch, needle
            assert "expectedSourceHash" not in json.dumps(by["kb_patch"].input_schema)
            assert set(by["kb_edit_table"].input_schema["required"]) >= {"path", "pointer", "action"}
    run(go())


def test_happy_paths_on_a_japanese_project():
    async def go():
        root = project()
        async with Client(params(root)) as c:
            status = await reindex_and_wait(c)
            assert status["project"]["documents"] == 6
            assert status["indexMode"] == "lexical"
            res = body(await c.call_tool("kb_search", {"request": {"query": "形態素解析", "topK": 5}}))
            hit = res["results"][0]
            assert hit["path"] == "tokenizer.md" and "[形態素解析]" in hit["snippet"]
            # The compact hit: what an agent needs, no bookkeeping (stale only when true).
            assert set(hit) <= {"path", "pointer", "headingPath", "snippet"}, hit
            assert res["mode"] == "lexical"
            full = body(await c.call_tool("kb_search", {"request": {"query": "形態素解析", "topK": 5, "detail": "full"}}))
            assert full["results"][0]["stale"] is False and len(full["results"][0]["indexedSourceHash"]) == 64
            assert full["results"][0]["readHint"]["pointer"] == hit["pointer"] and "mode" not in full
            res = body(await c.call_tool("kb_search", {"request": {"query": "京都"}}))
            assert {r["path"] for r in res["results"]} == {"kyoto.md"}
            res = body(await c.call_tool("kb_search", {"request": {"query": "API"}}))
            assert {r["path"] for r in res["results"]} == {"legacy/hankaku.md"}
            page = body(await c.call_tool("kb_read", {"request": {"path": hit["path"], "pointer": hit["pointer"]}}))
            assert page["pointer"] == hit["pointer"]
            whole = body(await c.call_tool("kb_read", {"request": {"path": "kyoto.md"}}))
            assert whole["pointer"] == "document" and whole.get("nextPointer") is None
            assert whole["markdown"] == (root / "kyoto.md").read_text(encoding="utf-8")
            assert len(whole["sourceHash"]) == 64
            outline = body(await c.call_tool("kb_outline", {"request": {"path": "kyoto.md"}}))
            assert outline["headings"][0]["pointer"].startswith("1~")
            files = body(await c.call_tool("kb_list_files", {"request": {}}))
            paths = [f["relativePath"] for f in files["files"]]
            assert "notes/2026/budget-meeting.md" in paths
            assert not any(p.startswith(".local-vector-search-mcp") for p in paths)
            md = body(await c.call_tool("kb_list_files", {"request": {"pathPrefix": "notes", "includeGlob": "**/*.md"}}))
            assert [f["kind"] for f in md["files"]] == ["markdown"]
    run(go())


def test_every_error_code_it_can_produce():
    async def go():
        root = project()
        async with Client(params(root)) as c:
            # A new project indexes itself (index.autoIndex): semantic search without embeddings is
            # the INDEX_NOT_READY a client still meets.
            err = error(await c.call_tool("kb_search", {"request": {"query": "京都", "mode": "semantic"}}))
            assert err["code"] == "INDEX_NOT_READY", err
            err = error(await c.call_tool("kb_read", {"request": {"path": "../outside.md"}}))
            assert err["code"] == "INVALID_PATH"
            err = error(await c.call_tool("kb_read", {"request": {"path": "/etc/passwd"}}))
            assert err["code"] == "INVALID_PATH"
            err = error(await c.call_tool("kb_read", {"request": {"path": "missing.md"}}))
            assert err["code"] == "NOT_FOUND"
            err = error(await c.call_tool("kb_read", {"request": {"path": "kyoto.md", "pointer": "li1.p1"}}))
            assert err["code"] == "INVALID_ARGUMENT"
            err = error(await c.call_tool("kb_read", {"request": {"path": "kyoto.md", "pointer": "9.9"}}))
            assert err["code"] == "INVALID_ARGUMENT" and "9.9" in err["message"]
            err = error(await c.call_tool("kb_read", {"path": "kyoto.md"}))
            assert err["code"] == "INVALID_ARGUMENT" and "request" in err["message"]
            err = error(await c.call_tool("kb_search", {"request": {"query": "  "}}))
            assert err["message"].startswith("query must not be empty.")
            err = error(await c.call_tool("kb_search", {"request": {"query": "x", "topK": 0}}))
            assert err["message"].startswith("topK must be greater than zero.")
            err = error(await c.call_tool("kb_search", {"request": {"query": "x", "includeGlobs": ["../**"]}}))
            assert err["message"].startswith("One or more glob patterns are invalid.")
            # A stale anchor: read, change the element behind the reader's back, read again.
            page = body(await c.call_tool("kb_read", {"request": {"path": "kyoto.md"}}))
            para = next(e for e in page["elements"] if e["kind"] == "paragraph")
            text = (root / "kyoto.md").read_text(encoding="utf-8")
            (root / "kyoto.md").write_text(text.replace(para["text"], para["text"] + "（追記）", 1), encoding="utf-8")
            err = error(await c.call_tool("kb_read", {"request": {"path": "kyoto.md", "pointer": para["pointer"]}}))
            assert err["code"] == "CONFLICT", err
            # The errors changed nothing: the index holds what the server built by itself.
            assert body(await c.call_tool("kb_status", {}))["project"]["documents"] == len(list(root.rglob("*.md")))
    run(go())


def test_kb_read_pages_to_the_end_of_a_corpus_file():
    book = CORPORA / "rust-book-ja" / "src"
    if not book.is_dir():
        pytest.skip(f"{book} is absent (it needs the product spec checkout beside the repo)")

    async def go():
        root = project(copy_fixture=False)
        src = max(book.glob("*.md"), key=lambda p: p.stat().st_size)
        shutil.copy(src, root / "big.md")
        expected = src.read_bytes().decode("utf-8").removeprefix("\ufeff")
        async with Client(params(root)) as c:
            pointer, out, pages = None, [], 0
            while True:
                req = {"path": "big.md", "maxElements": 7, "maxBytes": 3000}
                if pointer:
                    req["pointer"] = pointer
                page = body(await c.call_tool("kb_read", {"request": req}))
                out.append(page["markdown"])
                pages += 1
                pointer = page.get("nextPointer")
                if pointer is None:
                    break
            assert pages > 5
            assert "".join(out) == expected
    run(go())


def test_malformed_requests_then_a_normal_call_succeeds():
    async def go():
        async with Client(params(project())) as c:
            bad_calls = [
                ("kb_read", {"request": {"path": 123}}),
                ("kb_read", {"request": "kyoto.md"}),
                ("kb_read", {"request": {"path": "kyoto.md", "maxElements": "many"}}),
                ("kb_read", {"request": {"path": "kyoto.md", "bogus": 1}}),
                ("kb_search", {"request": {"query": ["a"]}}),
                ("kb_search", {"request": {"query": "x" * 2_000_000}}),
                ("kb_status", {"unexpected": True}),
                ("kb_reindex", {"request": {"scope": "everything"}}),
                ("kb_outline", {}),
                ("kb_list_files", {"request": {"pathPrefix": "../"}}),
                ("kb_list_files", {"request": {"includeGlob": "[z-a]"}}),
            ]
            for name, args in bad_calls:
                err = error(await c.call_tool(name, args))
                assert err["code"] in ("INVALID_ARGUMENT", "INVALID_PATH"), (name, err)
            with pytest.raises(Exception):
                await c.call_tool("kb_nonexistent", {})
            ok = body(await c.call_tool("kb_read", {"request": {"path": "kyoto.md", "maxElements": 1}}))
            assert len(ok["elements"]) == 1
    run(go())


def test_search_latency_sample():
    """Not a timing assertion: prints the round-trip numbers the benchmark reports."""
    async def go():
        async with Client(params(project())) as c:
            await reindex_and_wait(c)
            samples = []
            for q in ["京都", "会議 予算", "形態素解析", "API", "サーバー"] * 20:
                t = time.perf_counter()
                body(await c.call_tool("kb_search", {"request": {"query": q}}))
                samples.append((time.perf_counter() - t) * 1000)
            samples.sort()
            print(f"kb_search round trip (debug build): p50 {samples[len(samples)//2]:.2f} ms")
    run(go())
