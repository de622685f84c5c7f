"""kb_links, kb_read_guide and the server instructions through the official MCP SDK."""

import json
import time

from mcp import Client

from test_mcp_client import body, error, params, project, reindex_and_wait, run, synchronised

FILES = {
    "docs/a.md": "# A\n\n## 概要\n\n## 概要\n\nSee [b](b.md), [概要](#概要), [second](#概要-1), [guide](../guide/c.html).\n\n"
    "- [encoded](%E3%81%82.md) and ![img](img/p.png)\n- [ref][r] and <https://example.com/x>\n\n"
    "[gone](missing.md) [bad anchor](b.md#nowhere)\n\n[r]: ../guide/c.md#設定-mcp\n",
    "docs/b.md": "# B\n\nBack to [a](a.md#a) and on to [c](/guide/c.md).\n",
    "guide/c.md": "# C\n\n## 設定 (MCP)\n\nLoop: [a](../docs/a.md).\n",
    "docs/あ.md": "# あ\n\nNo links.\n",
    "docs/img/p.png": "not really a png",
}


def linked_project():
    root = project(copy_fixture=False)
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    cfg = root.parent / (root.name + "-config.yml")
    cfg.write_text("knowledgeBase:\n  allowWrites: true\n", encoding="utf-8")
    return root, params(root, "--config", str(cfg))


async def links(c, **request):
    return body(await c.call_tool("kb_links", {"request": request}))


def summary(res):
    return [(e["from"], e["to"], e.get("toFragment"), e["kind"], e.get("reason")) for e in res["edges"]]


def test_links_in_every_direction_and_the_broken_report():
    async def go():
        root, p = linked_project()
        async with Client(p) as c:
            await reindex_and_wait(c)
            out = await links(c, path="docs/a.md", direction="outgoing")
            assert summary(out) == [
                ("docs/a.md", "docs/b.md", None, "inline", None),
                ("docs/a.md", "docs/a.md", "概要", "inline", None),
                ("docs/a.md", "docs/a.md", "概要-1", "inline", None),
                ("docs/a.md", "guide/c.md", None, "inline", None),
                ("docs/a.md", "docs/あ.md", None, "inline", None),
                ("docs/a.md", "docs/img/p.png", None, "image", None),
                ("docs/a.md", "guide/c.md", "設定-mcp", "reference", None),
                ("docs/a.md", "docs/missing.md", None, "inline", "missing_file"),
                ("docs/a.md", "docs/b.md", "nowhere", "inline", "missing_anchor"),
            ]
            first = out["edges"][0]
            page = body(await c.call_tool("kb_read", {"request": {"path": "docs/a.md", "pointer": first["fromAnchor"], "maxElements": 1}}))
            assert "[b](b.md)" in page["elements"][0]["text"]
            ext = await links(c, path="docs/a.md", direction="outgoing", includeExternal=True)
            assert ("docs/a.md", "https://example.com/x", None, "autolink", None) in summary(ext)
            inc = await links(c, path="guide/c.md", direction="incoming")
            assert {(e["from"], e["kind"]) for e in inc["edges"]} == {("docs/a.md", "inline"), ("docs/a.md", "reference"), ("docs/b.md", "inline")}
            both = await links(c, path="docs/b.md", direction="both", depth=3)
            assert both["total"] == len({(e["from"], e["line"], e["raw"]) for e in both["edges"]}) == 2 + 9 + 1
            assert max(e["depth"] for e in both["edges"]) == 2
            broken = await links(c, brokenOnly=True)
            assert broken.get("path") is None and broken["total"] == broken["broken"] == 2
            paged = await links(c, brokenOnly=True, limit=1)
            assert len(paged["edges"]) == 1 and paged["nextCursor"] == "1"
            rest = await links(c, brokenOnly=True, limit=1, cursor=paged["nextCursor"])
            assert rest.get("nextCursor") is None and rest["edges"][0] != paged["edges"][0]
            err = error(await c.call_tool("kb_links", {"request": {"path": "docs/a.md", "depth": 6}}))
            assert err["code"] == "INVALID_ARGUMENT" and "depth" in err["message"]
            err = error(await c.call_tool("kb_links", {"request": {"path": "nothing.md"}}))
            assert err["code"] == "NOT_FOUND"
    run(go())


def test_a_move_breaks_incoming_links_until_they_are_patched():
    async def go():
        root, p = linked_project()
        async with Client(p) as c:
            await reindex_and_wait(c)
            c_md = body(await c.call_tool("kb_read", {"request": {"path": "guide/c.md"}}))
            body(await c.call_tool("kb_move", {"request": {"sourcePath": "guide/c.md", "targetPath": "guide/c2.md", "expectedSourceHash": c_md["sourceHash"]}}))
            await synchronised(c)
            old = await links(c, path="guide/c.md", direction="incoming")
            assert {(e["from"], e["reason"]) for e in old["edges"]} == {("docs/a.md", "missing_file"), ("docs/b.md", "missing_file")}
            assert len(old["edges"]) == 3 and all(e["broken"] for e in old["edges"])
            assert {e["to"] for e in old["edges"]} == {"guide/c.md", "guide/c.html"}
            # Repair: patch every element that holds a link to the old path.
            for e in (await links(c, path="guide/c.md", direction="incoming"))["edges"]:
                if e["kind"] == "reference":
                    continue  # its definition is repaired with the element below
                page = body(await c.call_tool("kb_read", {"request": {"path": e["from"], "pointer": e["fromAnchor"], "maxElements": 1}}))
                text = page["elements"][0]["text"].replace("c.html", "c2.md").replace("/guide/c.md", "/guide/c2.md")
                body(await c.call_tool("kb_patch", {"request": {"path": e["from"], "operations": [
                    {"kind": "replace_element", "pointer": e["fromAnchor"], "markdown": text}]}}))
            # The reference definition sits outside any element: fix it in its section.
            outline = body(await c.call_tool("kb_outline", {"request": {"path": "docs/a.md"}}))
            section = outline["headings"][0]["children"][1]
            a = (root / "docs/a.md").read_text(encoding="utf-8")
            start = a.index("## 概要\n\n## 概要") + len("## 概要\n\n")
            new_section = a[start:].replace("../guide/c.md#", "../guide/c2.md#")
            body(await c.call_tool("kb_patch", {"request": {"path": "docs/a.md", "operations": [
                {"kind": "replace_section", "pointer": section["pointer"], "markdown": new_section}]}}))
            await synchronised(c)
            broken = await links(c, brokenOnly=True)
            assert [(e["from"], e["to"]) for e in broken["edges"]] == [("docs/a.md", "docs/missing.md"), ("docs/a.md", "docs/b.md")]
            now = await links(c, path="guide/c2.md", direction="incoming")
            assert len(now["edges"]) == 3 and not any(e["broken"] for e in now["edges"])
            err = error(await c.call_tool("kb_links", {"request": {"path": "guide/c.md", "direction": "incoming"}}))
            assert err["code"] == "NOT_FOUND"
    run(go())


def test_guides_and_instructions():
    async def go():
        async with Client(params(project())) as c:
            text = c.instructions or ""
            assert "kb_patch" in text and "kb_links" in text
            assert text.rstrip().splitlines()[-11].startswith("- pointers: How semantic pointers")
            assert text.rstrip().endswith("- errors: The error codes every tool returns and the usual fix for each.")
            names = [line[2:].split(":")[0] for line in text.splitlines() if line.startswith("- ")]
            res = await c.call_tool("kb_read_guide", {"names": names[:5]})
            assert not res.is_error and res.structured_content is None
            assert [b.text.split("\n")[0] for b in res.content] == [f"# {n}" for n in names[:5]]
            res = await c.call_tool("kb_read_guide", {"names": ["tables", "pointers", "TABLES"]})
            assert [b.text[:10] for b in res.content] == ["# tables\n\n", "# pointers"]
            err = error(await c.call_tool("kb_read_guide", {"names": ["pointers", "pointer"]}))
            assert err["code"] == "NOT_FOUND" and "`pointer` (close: `pointers`)" in err["message"]
            err = error(await c.call_tool("kb_read_guide", {"names": []}))
            assert err["code"] == "INVALID_ARGUMENT" and err["message"].startswith("names must list at least one guide name")
            err = error(await c.call_tool("kb_read_guide", {"names": ["pointers"], "project_dir": "/"}))
            assert err["code"] == "INVALID_ARGUMENT" and "project_dir" in err["message"]
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert tools["kb_read_guide"].output_schema is None
            assert tools["kb_read_guide"].description.startswith("Read usage guides of this server by name")
    run(go())
