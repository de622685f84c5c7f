"""Vectors through MCP: the real binary, the official SDK, and the tests' own embedding server on
127.0.0.1 (fake_embed.py, 64 dimensions, the `embed_endpoint` fixture of conftest.py)."""

import asyncio
import os
import time

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from test_mcp_client import BIN, body, error, project, reindex_and_wait, run


def vector_params(root, endpoint, writes=False):
    cfg = root.parent / (root.name + "-vectors.yml")
    cfg.write_text(
        "embedding:\n"
        "  provider: openai-compatible\n"
        f"  endpoint: {endpoint}\n"
        "  dimensions: 64\n"
        "  batchSize: 8\n"
        "search:\n  defaultMode: hybrid\n"
        f"knowledgeBase:\n  allowWrites: {'true' if writes else 'false'}\n",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    env["RUST_LOG"] = "warn"
    return StdioServerParameters(command=BIN, args=["--project-root", str(root), "--config", str(cfg)], env=env)


def test_hybrid_search_explains_its_ranks_and_status_counts_vectors(embed_endpoint):
    async def go():
        root = project()
        async with Client(vector_params(root, embed_endpoint)) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            props = tools["kb_search"].input_schema["properties"]["request"]
            assert "explain" in str(props), props
            status = await reindex_and_wait(c)
            assert status["indexMode"] == "vector-enabled"
            assert status["vectors"]["vectors"] == status["project"]["chunks"] > 0
            assert status["vectors"]["pending"] == 0 and status["vectors"].get("lastError") is None
            res = body(await c.call_tool("kb_search", {"request": {"query": "京都 利用者", "explain": True, "detail": "full"}}))
            assert res.get("warning") is None
            hits = res["results"]
            assert hits and hits[0]["path"] == "kyoto.md"
            # some chunk has both words, so the lexical order stands: each hit scores its lexical
            # share, 1000 (search.lexicalWeight default) / (60 + lexical rank); the vector rank is
            # shown, not counted
            assert any(h["explain"].get("lexicalAllTerms") for h in hits)
            ranks = [h["explain"]["lexicalRank"] for h in hits]
            assert ranks == sorted(ranks), ranks
            for h in hits:
                assert h["searchMode"] == "hybrid"
                e = h["explain"]
                want = 1000 / (60 + e["lexicalRank"])
                assert abs(e["fusedScore"] - want) < 1e-12 and h["score"] == e["fusedScore"]
            sem = body(await c.call_tool("kb_search", {"request": {
                "query": "東京都庁の窓口で事業所の所在地変更を届け出た", "mode": "semantic", "topK": 2}}))
            # at most topK; the similarity floor may keep fewer
            assert 1 <= len(sem["results"]) <= 2
            assert sem["mode"] == "semantic"
            assert sem["results"][0]["path"] == "tocho.md"
            err = error(await c.call_tool("kb_search", {"request": {"query": "x", "explain": "yes"}}))
            assert err["code"] == "INVALID_ARGUMENT" and "explain" in err["message"]
    run(go())


def test_an_edit_gets_its_vector_and_is_found_semantically(embed_endpoint):
    async def go():
        root = project()
        async with Client(vector_params(root, embed_endpoint, writes=True)) as c:
            await reindex_and_wait(c)
            page = body(await c.call_tool("kb_read", {"request": {"path": "kyoto.md"}}))
            para = next(e for e in page["elements"] if e["kind"] == "paragraph")
            new_text = "伏見稲荷大社の千本鳥居を早朝に歩いた記録。"
            res = body(await c.call_tool("kb_patch", {"request": {"path": "kyoto.md", "operations": [
                {"kind": "replace_element", "pointer": para["pointer"], "markdown": new_text}]}}))
            assert res["indexSynchronized"] is True, res
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                status = body(await c.call_tool("kb_status", {}))
                if status["vectors"]["pending"] == 0 and status["synchronization"]["pendingFiles"] == 0:
                    break
                await asyncio.sleep(0.05)
            assert status["vectors"]["pending"] == 0, status
            sem = body(await c.call_tool("kb_search", {"request": {
                "query": new_text, "mode": "semantic", "topK": 1}}))
            assert sem["results"][0]["path"] == "kyoto.md"
            assert "千本鳥居" in sem["results"][0]["snippet"]
    run(go())
