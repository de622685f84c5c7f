"""The document catalog tools through the official MCP SDK: the acceptance scenarios of
`docs/reference/catalog-spec.md` §11.1–§11.6 (kb_find_docs, kb_list_tags, kb_update_index, kb_check).

The fixtures F1, F2 and G1 of §11.1 are built here. Scenario numbers are the spec's.
"""

import asyncio
import base64
import json
import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest
from mcp import Client

from test_mcp_client import body, envelope, error, params, project, run

INDEX_F1 = """\
# 文書の索引。kb_update_index でも書き換える。
version: 1
docs:
  - id: arch
    path: 設計/arch.md
    title: アーキテクチャ
    aliases: [全体構成, architecture]
    description: 全体の構成と依存の向き
    tags: [{name: 設計, main: true}, MCP]
    related:
      - to: api
        type: requires
        when: API を変えるとき
  - id: api
    path: guide/api.md
    title: API リファレンス
    description: MCP のツールの一覧
    tags: [topic:mcp, 設計]
    related:
      - to: api-en
        type: change_together
        when: 英訳を同じ変更で直す
        paths: [../src/tools/**]
  - id: api-en
    path: guide/api.en.md
    title: API reference (English)
    tags: [{name: topic:mcp, main: true}]
    related:
      - to: api
        type: change_together
        when: 和文を同じ変更で直す
      - arch                   # string form: a relation without type and when
  - id: notes
    path: notes.md
    title: 開発メモ
    tags: [旧タグ]
terms:
  - id: pointer
    term: ポインター
    aliases: [pointer, セマンティックポインター]
    definition: Markdown の要素を指す論理アドレス。
    see: [api]
tags:
  - name: 設計
    group: kind
    description: "含める: 構成と方針。含めない: 手順。例: arch"
  - name: topic:mcp
    group: topic
    description: "含める: MCP のツール。含めない: Claude Code の設定。例: find_docs"
    aliases: [MCP]
  - name: 旧タグ
    deprecated: 設計
"""

CONFIG_F1 = """\
knowledgeBase:
  root: .
  allowWrites: true
catalog:
  index: docs/index.yaml
  scan: ["docs/**/*.md"]
  build:
    include: ["docs/guide/*.md"]
    out: dist/guide.html
    title: 製品ガイド
"""

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")

FILES_F1 = {
    "docs/設計/arch.md": "# アーキテクチャ\n\n全体は [API](../guide/api.md#ツールの一覧) を参照。\n\n## 依存の向き\n\n"
    "![構成図](../../images/arch.png)\n",
    "docs/guide/api.md": "# API リファレンス\n\n## ツールの一覧\n\nツールの説明。\n",
    "docs/guide/api.en.md": "# API reference\n\nSee [notes](../notes.md).\n",
    "docs/notes.md": "# 開発メモ\n\n全体構成の図は後で直す。\n",
    "docs/draft.md": "# 下書き\n",
}


def write(root, rel, text):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_bytes(text.encode("utf-8"))


def f1(index=INDEX_F1, config=CONFIG_F1):
    """F1: returns (root, server params)."""
    root = project(copy_fixture=False)
    write(root, "lvsm.yaml", config)
    write(root, "docs/index.yaml", index)
    for rel, text in FILES_F1.items():
        write(root, rel, text)
    write(root, "images/arch.png", PNG)
    return root, params(root, "--config", str(root / "lvsm.yaml"))


def f2(language=None):
    """F2: 25 documents at the root, one vocabulary tag."""
    root = project(copy_fixture=False)
    lines = ["version: 1", "docs:"]
    for n in range(1, 26):
        tag = "[{name: 設計, main: true}]" if n in (7, 19) else "[設計]"
        lines += [f"  - id: d{n:02}", f"    path: d{n:02}.md", f"    title: 文書{n:02}", f"    tags: {tag}"]
        write(root, f"d{n:02}.md", f"# 文書{n:02}\n")
    lines += ["tags:", "  - name: 設計", ""]
    write(root, "index.yaml", "\n".join(lines))
    lang = f"\n  language: {language}" if language else ""
    write(root, "lvsm.yaml", f"knowledgeBase:\n  root: .\ncatalog:\n  index: index.yaml{lang}\n")
    return root, params(root, "--config", str(root / "lvsm.yaml"))


def snapshot(root):
    # The derived index is left out: a server builds it by itself in the background (index.autoIndex).
    index = root / ".local-vector-search-mcp"
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and index not in p.parents}


def text_only(result):
    assert not result.is_error, result.content[0].text
    assert len(result.content) == 1
    assert result.structured_content is None
    return result.content[0].text


async def find(c, **args):
    return body(await c.call_tool("kb_find_docs", {"format": "json", **args}))


def ids(res):
    return [d["id"] for d in res["docs"]]


# --- §11.2 Finding documents ---------------------------------------------------------------------


def test_pages_cursors_and_limits_f2():
    async def go():
        root, p = f2()
        async with Client(p) as c:
            # 1. Default page.
            r = await find(c)
            assert (r["total"], r["returned"], r["total_chars"]) == (25, 20, 175)
            assert ids(r) == [f"d{n:02}" for n in range(1, 21)]
            for d in r["docs"]:
                assert list(d) == ["id", "title", "description", "tags", "chars"]
                assert d.get("description") is None and d["chars"] == 7
            assert isinstance(r["next_cursor"], str)
            assert r["hint"].startswith("More documents match;")
            assert [o["field"] for o in r["omitted"]] == ["path", "aliases", "related", "referenced_by"]
            assert r["warnings"] == []
            # 2. Next page.
            r2 = await find(c, cursor=r["next_cursor"])
            assert (r2["returned"], r2["total"], r2["next_cursor"], r2["hint"]) == (5, 25, None, None)
            assert ids(r2) == [f"d{n:02}" for n in range(21, 26)]
            # 3. Main tags first.
            t1 = await find(c, tags=["設計"])
            assert ids(t1) == ["d07", "d19"] + [f"d{n:02}" for n in range(1, 21) if n not in (7, 19)]
            t2 = await find(c, tags=["設計"], cursor=t1["next_cursor"])
            assert ids(t2) == [f"d{n:02}" for n in range(21, 26)]
            # 4. Other filter.
            e = error(await c.call_tool("kb_find_docs", {"tags": ["実装"], "cursor": t1["next_cursor"]}))
            assert e["code"] == "INVALID_ARGUMENT" and "omit cursor" in e["message"], e
            # 5. Damaged cursors.
            for bad in ["abc", "eyJvZmZzZXQiOjIwfQ"]:
                e = error(await c.call_tool("kb_find_docs", {"cursor": bad}))
                assert e == {"code": "INVALID_ARGUMENT", "message": "The cursor was not returned by kb_find_docs or is damaged; omit cursor to start again from the first page."}
            # 7. cursor with count_only.
            e = error(await c.call_tool("kb_find_docs", {"count_only": True, "cursor": r["next_cursor"]}))
            assert e["message"] == "count_only returns totals for all matches; omit cursor."
            # 8. Limits.
            for bad in [0, 101, 2.5, "20"]:
                e = error(await c.call_tool("kb_find_docs", {"limit": bad}))
                assert e["code"] == "INVALID_ARGUMENT", bad
            r = await find(c, limit=100)
            assert (r["returned"], r["next_cursor"]) == (25, None)
            # 19. Markdown, zero results.
            out = text_only(await c.call_tool("kb_find_docs", {"text": "存在しない"}))
            assert out == "Total 0 · returned 0 · total chars 0 · next_cursor: null\n"
    run(go())


def test_markdown_layout_in_japanese_f2():
    async def go():
        root, p = f2(language="ja")
        async with Client(p) as c:
            # 18.
            out = text_only(await c.call_tool("kb_find_docs", {"tags": ["設計"], "limit": 2, "include": ["path"]}))
            cursor = out.split("next_cursor: ")[1].split("\n")[0]
            assert out == (
                f"総件数 25 件・返した件数 2 件・合計文字数 175・next_cursor: {cursor}\n\n"
                "| ID | 題 | 概要 | タグ | 文字数 | パス |\n"
                "| --- | --- | --- | --- | --- | --- |\n"
                "| d07 | 文書07 |  | 設計（主題） | 7 | d07.md |\n"
                "| d19 | 文書19 |  | 設計（主題） | 7 | d19.md |\n\n"
                "タグごとの件数: 設計 25\n"
                "省いた項目: aliases（include: [\"aliases\"]）・related（include: [\"related\"]）・referenced_by（include: [\"referenced_by\"]）\n"
                "続きがあります。tags・any_tags・text で絞るか、count_only で件数だけを確かめてください。\n"
            )
            # 73 (first half): a Japanese cursor message.
            e = error(await c.call_tool("kb_find_docs", {"cursor": "abc"}))
            assert e["message"] == "cursor を読めません。cursor を省いて先頭から引き直してください。"
    run(go())


def test_tags_text_views_and_counts_f1():
    async def go():
        root, p = f1()
        async with Client(p) as c:
            # 6. Equivalent filter.
            r = await find(c, tags=["MCP"], limit=1)
            all3 = ids(await find(c, tags=["MCP"]))
            r2 = await find(c, tags=["ｍｃｐ"], cursor=r["next_cursor"], limit=2, view="full")
            assert ids(r2) == all3[1:3]
            # 9. NFKC tag alias.
            r = await find(c, tags=["ＭＣＰ"])
            assert ids(r) == ["api-en", "arch", "api"] and r["warnings"] == []
            assert r["docs"][1]["tags"] == [{"name": "設計", "main": True}, {"name": "MCP", "main": False}]
            # 10. NFKC text.
            assert ids(await find(c, text=" ＡＰＩ ")) == ["api", "api-en"]
            assert (await find(c, text="ぜんたい"))["total"] == 0
            assert ids(await find(c, text="全体構成")) == ["arch"]
            # 11. Unknown tag with a vocabulary.
            r = await find(c, tags=["設訂"])
            assert r["total"] == 0
            assert r["warnings"] == ["Tag `設訂` is not in the tag vocabulary; close tags: `設計` (the tag was still matched as given)."]
            # 13. AND and OR.
            r = await find(c, tags=["設計"], any_tags=["MCP", "存在しない"])
            assert ids(r) == ["arch", "api"] and len(r["warnings"]) == 1 and "存在しない" in r["warnings"][0]
            assert ids(await find(c, tags=[], any_tags=[])) == ["arch", "api", "api-en", "notes"]
            # 14. Deprecated tag in the query.
            r = await find(c, tags=["旧タグ"])
            assert ids(r) == ["arch", "api", "notes"]
            assert r["warnings"] == ["Tag `旧タグ` is deprecated in favour of `設計`; documents with either tag were matched — use `設計` from now on."]
            # 15. Views and fields.
            r = await find(c, view="standard")
            assert r["docs"][0]["path"] == "docs/設計/arch.md" and "aliases" in r["docs"][0]
            assert [o["field"] for o in r["omitted"]] == ["related", "referenced_by"]
            r = await find(c, view="full")
            assert "related" in r["docs"][0] and "referenced_by" in r["docs"][0] and r["omitted"] == []
            r = await find(c, include=["related"], exclude=["related"])
            assert "related" not in r["docs"][0] and "related" in [o["field"] for o in r["omitted"]]
            e = error(await c.call_tool("kb_find_docs", {"exclude": ["title"]}))
            assert e["message"] == "`title` is always returned and cannot be excluded; remove it from exclude."
            e = error(await c.call_tool("kb_find_docs", {"include": ["rev"]}))
            assert e["code"] == "INVALID_ARGUMENT" and "`rev` is not a valid include" in e["message"]
            # 16. Reference counts.
            r = await find(c, view="full")
            by = {d["id"]: d for d in r["docs"]}
            assert {k: v["referenced_by"] for k, v in by.items()} == {"arch": 2, "api": 2, "api-en": 1, "notes": 1}
            assert by["api-en"]["related"] == [
                {"to": "api", "type": "change_together", "when": "和文を同じ変更で直す"},
                {"to": "arch", "type": None, "when": None},
            ]
            assert by["api"]["related"][0]["paths"] == ["src/tools/**"]
            # 17. count_only.
            r = await find(c, count_only=True)
            assert list(r) == ["total", "total_chars", "tag_counts", "warnings"] and r["total"] == 4
            assert r["tag_counts"] == [{"name": "topic:mcp", "count": 3}, {"name": "設計", "count": 2}, {"name": "旧タグ", "count": 1}]
            # 20. JSON format and no outputSchema.
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert tools["kb_find_docs"].output_schema is None and tools["kb_list_tags"].output_schema is None
            # 21. related_to with inverse names.
            r = await find(c, related_to="api")
            assert ids(r) == ["arch", "api-en"]
            assert r["docs"][0]["relations"] == [{"direction": "incoming", "type": "required_by", "when": "API を変えるとき"}]
            assert r["docs"][1]["relations"] == [
                {"direction": "outgoing", "type": "change_together", "when": "英訳を同じ変更で直す"},
                {"direction": "incoming", "type": "change_together", "when": "和文を同じ変更で直す"},
            ]
            # 22. Body relations only where no catalog relation exists.
            r = await find(c, related_to="arch")
            assert ids(r) == ["api", "api-en", "notes"]
            assert [d["relations"] for d in r["docs"]] == [
                [{"direction": "outgoing", "type": "requires", "when": "API を変えるとき"}],
                [{"direction": "incoming", "type": None, "when": None}],
                [{"direction": "incoming", "type": None, "when": None}],
            ]
            # 23. Body link and mention relations.
            r = await find(c, related_to="notes")
            assert ids(r) == ["arch", "api-en"]
            assert [d["relations"] for d in r["docs"]] == [
                [{"direction": "outgoing", "type": None, "when": None}],
                [{"direction": "incoming", "type": None, "when": None}],
            ]
            # 24. Unknown related_to.
            e = error(await c.call_tool("kb_find_docs", {"related_to": "apix"}))
            assert e["code"] == "NOT_FOUND" and "close IDs: `api`, `api-en`" in e["message"], e
            # 65. project_dir: the project root is accepted, another folder is not.
            r = body(await c.call_tool("kb_find_docs", {"format": "json", "project_dir": str(root)}))
            assert r["total"] == 4
            e = error(await c.call_tool("kb_find_docs", {"project_dir": str(root.parent)}))
            assert e["code"] == "INVALID_ARGUMENT" and "start a separate server" in e["message"]
            # 25. chars.
            (root / "docs/notes.md").unlink()
            r = await find(c, text="開発")
            assert r["docs"][0].get("chars") is None and r["total_chars"] == 0
            write(root, "docs/notes.md", "あいうえおかきくけこ\n")
            assert (await find(c, text="開発"))["docs"][0]["chars"] == 11
            # 74. A hand edit is visible at once.
            index = (root / "docs/index.yaml").read_text(encoding="utf-8")
            write(root, "docs/index.yaml", index.replace("tags: [旧タグ]", "tags: [旧タグ, 手動]"))
            r = await find(c, tags=["手動"])
            assert ids(r) == ["notes"]
    run(go())


def test_without_vocabulary_and_with_a_schema_error():
    async def go():
        # 12. No vocabulary: no warnings, no alias resolution.
        index = INDEX_F1.split("tags:\n  - name: 設計")[0]
        root, p = f1(index=index)
        async with Client(p) as c:
            r = await find(c, tags=["未登録"])
            assert (r["total"], r["warnings"]) == (0, [])
            assert ids(await find(c, tags=["MCP"])) == ["arch"]
            # 29. kb_list_tags without a vocabulary.
            assert body(await c.call_tool("kb_list_tags", {"format": "json"})) == {"tags": []}
            out = text_only(await c.call_tool("kb_list_tags", {}))
            assert out == "| Name | Group | Description | Aliases | Replaced by | Docs |\n| --- | --- | --- | --- | --- | --- |\n"
        # 26. Schema-invalid index.
        root, p = f1(index=INDEX_F1.replace("type: requires", "type: depends"))
        async with Client(p) as c:
            e = error(await c.call_tool("kb_find_docs", {}))
            assert e["code"] == "INVALID_ARGUMENT"
            assert "docs[0].related[0].type: `depends` is not a relation type" in e["message"]
    run(go())


# --- §11.3 Tag vocabulary -----------------------------------------------------------------------


def test_list_tags():
    async def go():
        root, p = f1(index=INDEX_F1 + "  - name: 設計\n    description: dup\n")
        async with Client(p) as c:
            # 27.
            r = body(await c.call_tool("kb_list_tags", {"query": "ＭＣＰ", "format": "json"}))
            assert r == {"tags": [{"name": "topic:mcp", "group": "topic",
                                   "description": "含める: MCP のツール。含めない: Claude Code の設定。例: find_docs",
                                   "aliases": ["MCP"], "deprecated": None, "docs": 3}]}
            # 28. The duplicate `設計` entry is a schema-valid index? It is: duplicates are kb_check's job.
            r = body(await c.call_tool("kb_list_tags", {"format": "json"}))
            assert [(t["name"], t["docs"], t["deprecated"]) for t in r["tags"]] == [
                ("設計", 2, None), ("topic:mcp", 3, None), ("旧タグ", 1, "設計")]
            assert r["tags"][0]["description"] != "dup"
    run(go())


# --- §11.4 Updating the index -------------------------------------------------------------------


async def update(c, **args):
    return body(await c.call_tool("kb_update_index", args))


def test_update_add_replace_remove():
    async def go():
        root, p = f1()
        idx = root / "docs/index.yaml"
        async with Client(p) as c:
            # 30. Add keeps the rest.
            before = idx.read_bytes()
            r = await update(c, kind="doc", id="b", item={"path": "docs/b.md", "title": "文書 B", "tags": ["設計"]})
            assert r == {"action": "added", "index": "docs/index.yaml"}
            after = idx.read_bytes()
            marker = "terms:\n".encode()
            head, tail = before.split(marker)
            assert after == head + "  - id: b\n    path: b.md\n    title: 文書 B\n    tags: [設計]\n".encode() + marker + tail
            # 31. Replace touches only changed keys (a comment between title and description).
            text = idx.read_text(encoding="utf-8").replace(
                "    title: API リファレンス\n", "    title: API リファレンス\n# 公開 API\n")
            idx.write_text(text, encoding="utf-8")
            await update(c, kind="doc", id="api", item={
                "path": "docs/guide/api.md", "title": "API リファレンス v2", "description": "MCP のツールの一覧",
                "tags": ["topic:mcp", "設計"],
                "related": [{"to": "api-en", "type": "change_together", "when": "英訳を同じ変更で直す", "paths": ["src/tools/**"]}]})
            new = idx.read_text(encoding="utf-8")
            diff = [(a, b) for a, b in zip(text.splitlines(), new.splitlines()) if a != b]
            assert diff == [("    title: API リファレンス", "    title: API リファレンス v2")]
            assert len(text.splitlines()) == len(new.splitlines()) and "# 公開 API" in new
            # 32. Remove, then remove again.
            r = await update(c, kind="doc", id="notes", item=None)
            assert r["action"] == "removed" and "id: notes" not in idx.read_text(encoding="utf-8")
            snap = snapshot(root)
            e = error(await c.call_tool("kb_update_index", {"kind": "doc", "id": "notes", "item": None}))
            assert e == {"code": "NOT_FOUND", "message": "`notes` is not in docs; nothing was removed."}
            assert snapshot(root) == snap
            # 35. Schema errors reject the whole change.
            e = error(await c.call_tool("kb_update_index", {"kind": "doc", "id": "c", "item": {
                "path": "docs/c.md", "title": "C", "related": [{"to": "api", "type": "requires"}]}}))
            assert e["code"] == "INVALID_ARGUMENT"
            assert "docs[4].related[0].when: required key `when` is missing; add it" in e["message"].splitlines()
            e = error(await c.call_tool("kb_update_index", {"kind": "doc", "id": "c", "item": {
                "path": "docs/c.md", "title": "C", "related": [{"to": "api", "type": "depends_on", "when": "x"}]}}))
            assert "requires, references, replaces, part_of or change_together" in e["message"]
            assert snapshot(root) == snap
            # 39. Paths are converted.
            await update(c, kind="doc", id="readme", item={"path": "README.md", "title": "はじめに", "related": [
                {"to": "api", "type": "references", "when": "常に", "paths": ["src/**"]}]})
            stored = idx.read_text(encoding="utf-8")
            assert "    path: ../README.md\n" in stored and "paths: [../src/**]" in stored
            r = await find(c, text="はじめに", view="full")
            assert r["docs"][0]["path"] == "README.md" and r["docs"][0]["related"][0]["paths"] == ["src/**"]
    run(go())


def test_update_missing_terms_last_tag_and_guards():
    async def go():
        # 33. Missing list key.
        index = INDEX_F1.replace(INDEX_F1[INDEX_F1.index("terms:"):INDEX_F1.index("tags:\n  - name")], "")
        root, p = f1(index=index)
        idx = root / "docs/index.yaml"
        async with Client(p) as c:
            before = idx.read_text(encoding="utf-8")
            await update(c, kind="term", id="anchor", item={"term": "アンカー", "definition": "ハッシュ付きのポインター。"})
            assert idx.read_text(encoding="utf-8") == before + "terms:\n  - id: anchor\n    term: アンカー\n    definition: ハッシュ付きのポインター。\n"
        # 34. Removing the last tag.
        root, p = f1(index="version: 1\ndocs:\n  - id: a\n    path: a.md\n    title: A\n    tags: [x]\ntags:\n  - name: x\n# after\n")
        idx = root / "docs/index.yaml"
        async with Client(p) as c:
            await update(c, kind="tag", id="x", item=None)
            assert idx.read_text(encoding="utf-8") == "version: 1\ndocs:\n  - id: a\n    path: a.md\n    title: A\n    tags: [x]\n# after\n"
            r = await find(c, tags=["x"])
            assert r["warnings"] == []
        # 36. A pre-existing violation blocks updates.
        root, p = f1(index=INDEX_F1.replace("    title: アーキテクチャ\n", "    title: アーキテクチャ\n    colour: red\n"))
        async with Client(p) as c:
            e = error(await c.call_tool("kb_update_index", {"kind": "doc", "id": "z", "item": {"path": "z.md", "title": "Z"}}))
            assert e["code"] == "INVALID_ARGUMENT" and "docs[0].colour" in e["message"]
        # 37. Writes disabled.
        root, p = f1(config=CONFIG_F1.replace("allowWrites: true", "allowWrites: false"))
        async with Client(p) as c:
            snap = snapshot(root)
            e = error(await c.call_tool("kb_update_index", {"kind": "doc", "id": "z", "item": {"path": "z.md", "title": "Z"}}))
            assert e == {"code": "PERMISSION_DENIED", "message": "Workspace writes are disabled; set knowledgeBase.allowWrites: true in the server configuration to let kb_update_index write files."}
            assert snapshot(root) == snap
        # 38. CRLF and BOM.
        root, p = f1(index="\ufeff" + INDEX_F1.replace("\n", "\r\n"))
        idx = root / "docs/index.yaml"
        async with Client(p) as c:
            before = idx.read_bytes()
            await update(c, kind="doc", id="b", item={"path": "docs/b.md", "title": "B"})
            after = idx.read_bytes()
            assert after.startswith(b"\xef\xbb\xbf")
            assert after.count(b"\n") == after.count(b"\r\n")
            assert after.replace(b"  - id: b\r\n    path: b.md\r\n    title: B\r\n", b"") == before
        # 40. Duplicated ID.
        root, p = f1(index=INDEX_F1.replace("  - id: notes\n", "  - id: api\n    path: x.md\n    title: X\n  - id: notes\n"))
        async with Client(p) as c:
            e = error(await c.call_tool("kb_update_index", {"kind": "doc", "id": "api", "item": {"path": "docs/x.md", "title": "X"}}))
            assert e["code"] == "CONFLICT" and "appears 2 times in docs" in e["message"]
        # 41. Unsafe YAML.
        index = INDEX_F1.replace("  - id: api\n", "  - &api\n    id: api\n").replace("see: [api]", "x-copy: *api")
        root, p = f1(index=index)
        async with Client(p) as c:
            snap = snapshot(root)
            e = error(await c.call_tool("kb_update_index", {"kind": "doc", "id": "api", "item": None}))
            assert e["code"] == "UNSUPPORTED_FORMAT", e
            assert snapshot(root) == snap
    run(go())


def test_concurrent_updates_never_lose_one():
    async def go():
        root, p = f1()
        idx = root / "docs/index.yaml"
        async with Client(p) as c1, Client(p) as c2:
            calls = []
            for n in range(6):
                client = c1 if n % 2 == 0 else c2
                calls.append(client.call_tool("kb_update_index", {"kind": "doc", "id": f"n{n}", "item": {"path": f"docs/n{n}.md", "title": f"N{n}"}}))
            results = await asyncio.gather(*calls)
            landed = []
            for n, res in enumerate(results):
                if res.is_error:
                    assert envelope(res)["code"] == "CONFLICT"
                else:
                    landed.append(f"n{n}")
            text = idx.read_text(encoding="utf-8")
            for n in range(6):
                assert (f"id: n{n}\n" in text) == (f"n{n}" in landed), (n, landed)
            assert landed, "at least one update lands"
    run(go())


# --- §11.5 Checking -----------------------------------------------------------------------------


async def check(c, **args):
    return body(await c.call_tool("kb_check", args))["issues"]


def kinds(issues):
    return [(i["kind"], i["where"]) for i in issues]


def test_check_scenarios():
    async def go():
        root, p = f1()
        async with Client(p) as c:
            # 43. Entry checks and order.
            issues = await check(c)
            assert kinds(issues) == [("deprecated_tag", "docs[3].tags[0]"), ("unindexed_doc", "")]
            assert "`設計`" in issues[0]["message"] and issues[1]["file"] == "docs/draft.md"
            # 45. Links and Japanese anchors.
            arch = root / "docs/設計/arch.md"
            arch.write_text(FILES_F1["docs/設計/arch.md"].replace("#ツールの一覧", "#ツール一覧") + "\n[x](../nope.md)\n", encoding="utf-8")
            issues = await check(c)
            assert ("missing_anchor", "3") in kinds(issues) and ("broken_link", "9") in kinds(issues)
            anchor = next(i for i in issues if i["kind"] == "missing_anchor")
            assert anchor["file"] == "docs/設計/arch.md"
            # 42. missing_doc.
            (root / "docs/notes.md").unlink()
            issues = await check(c)
            assert {"file": "docs/index.yaml", "where": "docs[3].path", "kind": "missing_doc",
                    "message": "`docs/notes.md` was not found; restore the document or remove `docs[3]` from the index."} in issues
        # 44. More kinds, in order.
        index = (INDEX_F1
                 .replace("      - to: api\n        type: change_together\n        when: 和文を同じ変更で直す\n", "")
                 .replace("    tags: [topic:mcp, 設計]\n", "    tags: [topic:mcp, 設計, 設訂]\n")
                 .replace("        when: API を変えるとき\n", "        when: API を変えるとき\n      - {to: missing, type: references, when: 常に}\n")
                 .replace("terms:\n", "  - {id: arch, path: notes.md, title: 重複}\nterms:\n"))
        root, p = f1(index=index)
        async with Client(p) as c:
            issues = await check(c)
            assert kinds(issues) == [
                ("unknown_relation_target", "docs[0].related[1]"),
                ("unknown_tag", "docs[1].tags[2]"),
                ("asymmetric_change_together", "docs[1].related[0]"),
                ("deprecated_tag", "docs[3].tags[0]"),
                ("duplicate_id", "docs[4].id"),
                ("unindexed_doc", ""),
            ], issues
            assert "`設計`" in issues[1]["message"]
        # 46. check.ignore.
        root, p = f1(config=CONFIG_F1 + "  check: {ignore: [unindexed_doc]}\n")
        async with Client(p) as c:
            assert kinds(await check(c)) == [("deprecated_tag", "docs[3].tags[0]")]
        # 47. Schema errors stop later phases.
        root, p = f1(index=INDEX_F1.replace("    title: 開発メモ\n", ""))
        async with Client(p) as c:
            issues = await check(c)
            assert kinds(issues) == [("schema_error", "docs[3].title")]
        # 48. No configuration.
        root = project(copy_fixture=False)
        (root / ".git").mkdir()
        async with Client(params(root)) as c:
            e = error(await c.call_tool("kb_check", {}))
            assert e["code"] == "NOT_FOUND" and "mdmark.config.yaml" in e["message"] and "local-vector-search-mcp init" in e["message"]
        # 73 (second half): Japanese issue message.
        root, p = f1(config=CONFIG_F1 + "  language: ja\n")
        (root / "docs/notes.md").unlink()
        async with Client(p) as c:
            issues = await check(c)
            assert {"file": "docs/index.yaml", "where": "docs[3].path", "kind": "missing_doc",
                    "message": "`docs/notes.md` が見つかりません。文書を戻すか、索引の `docs[3]` を消してください。"} in issues
    run(go())


# --- §11.6 Checking against git -----------------------------------------------------------------


def git(root, *args):
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env)


def g1(index=INDEX_F1):
    root, p = f1(index=index)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "F1")
    return root, p


def missed(issues):
    return [i for i in issues if i["kind"] == "missed_change_together"]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_check_against_git():
    async def go():
        root, p = g1()
        async with Client(p) as c:
            # 50 (neither).
            assert missed(await check(c, base="main")) == []
            # 49. One side changed.
            api = root / "docs/guide/api.md"
            api.write_text(FILES_F1["docs/guide/api.md"] + "追記。\n", encoding="utf-8")
            m = missed(await check(c, base="main"))
            assert len(m) == 1 and m[0]["where"] == "docs[1].related[0]", m
            for needle in ["docs/guide/api.md", "docs/guide/api.en.md", "英訳を同じ変更で直す", "main"]:
                assert needle in m[0]["message"], needle
            # 50. Both changed: one committed on a branch, the other only staged.
            git(root, "checkout", "-q", "-b", "topic")
            git(root, "commit", "-q", "-am", "api")
            (root / "docs/guide/api.en.md").write_text(FILES_F1["docs/guide/api.en.md"] + "More.\n", encoding="utf-8")
            git(root, "add", "docs/guide/api.en.md")
            assert missed(await check(c, base="main")) == []
        # 51. Side extended by paths (an untracked file).
        root, p = g1()
        async with Client(p) as c:
            write(root, "src/tools/find.rs", "fn main() {}\n")
            m = missed(await check(c, base="main"))
            assert len(m) == 1 and "docs/guide/api.en.md" in m[0]["message"]
        # 52. Merge base.
        root, p = g1()
        git(root, "checkout", "-q", "-b", "feature")
        write(root, "docs/draft.md", "# 下書き\n\n続き。\n")
        git(root, "commit", "-q", "-am", "draft")
        git(root, "checkout", "-q", "main")
        write(root, "docs/guide/api.md", FILES_F1["docs/guide/api.md"] + "main だけ。\n")
        git(root, "commit", "-q", "-am", "api on main")
        git(root, "checkout", "-q", "feature")
        async with Client(p) as c:
            assert missed(await check(c, base="main")) == []
        # 53. Japanese file names.
        index = INDEX_F1.replace("        type: requires\n", "        type: change_together\n").replace(
            "      - arch                   # string form: a relation without type and when\n",
            "      - arch                   # string form: a relation without type and when\n").replace(
            "  - id: api\n    path: guide/api.md\n    title: API リファレンス\n    description: MCP のツールの一覧\n    tags: [topic:mcp, 設計]\n    related:\n",
            "  - id: api\n    path: guide/api.md\n    title: API リファレンス\n    description: MCP のツールの一覧\n    tags: [topic:mcp, 設計]\n    related:\n      - to: arch\n        type: change_together\n        when: 構成と一緒に\n")
        root, p = g1(index=index)
        async with Client(p) as c:
            write(root, "docs/設計/arch.md", FILES_F1["docs/設計/arch.md"] + "追記。\n")
            m = missed(await check(c, base="main"))
            assert len(m) == 1 and "`docs/設計/arch.md`" in m[0]["message"] and "\\" not in m[0]["message"], m
            # 54. Bad base.
            e = error(await c.call_tool("kb_check", {"base": "no-such-ref"}))
            assert e == {"code": "INVALID_ARGUMENT", "message": "Git ref `no-such-ref` could not be resolved; fetch it or pass an existing branch, tag or commit."}
            e = error(await c.call_tool("kb_check", {"base": "--output=x"}))
            assert e["code"] == "INVALID_ARGUMENT" and e["message"].startswith("base must be a git ref")
            assert not (root / "x").exists()
        root, p = f1()
        (root / ".git").mkdir()  # stops the configuration search, but is not a repository
        async with Client(p) as c:
            e = error(await c.call_tool("kb_check", {"base": "main"}))
            assert e == {"code": "INVALID_ARGUMENT", "message": "The root is not inside a git repository; omit base or run the check in a repository."}
    run(go())


# --- §11.9 (configuration sources) and the remaining issue kinds ---------------------------------


def test_configuration_sources_and_invalid_paths():
    async def go():
        # 67. A standalone configuration at the repository top, found from the project root.
        root = project(copy_fixture=False)
        (root / ".git").mkdir()
        write(root, "mdmark.config.yaml", "index: catalog/index.yaml\n")
        write(root, "catalog/index.yaml", "docs:\n  - id: a\n    path: ../a.md\n    title: A\n")
        write(root, "a.md", "# A\n")
        async with Client(params(root)) as c:
            r = await find(c, view="standard")
            assert [(d["id"], d["path"]) for d in r["docs"]] == [("a", "a.md")]
        # ... but not from above the repository's top folder.
        outer = project(copy_fixture=False)
        write(outer, "mdmark.config.yaml", "index: index.yaml\n")
        inner = outer / "repo"
        (inner / ".git").mkdir(parents=True)
        async with Client(params(inner)) as c:
            e = error(await c.call_tool("kb_find_docs", {}))
            assert e["code"] == "NOT_FOUND" and "local-vector-search-mcp init" in e["message"]
        # 68. The config argument: relative to its own folder; outside the root; missing.
        root, p = f1()
        write(root, "other/mdmark.config.yaml", "index: idx.yaml\n")
        write(root, "other/idx.yaml", "docs:\n  - id: x\n    path: gone.md\n    title: X\n")
        async with Client(p) as c:
            issues = await check(c, config="other/mdmark.config.yaml")
            assert kinds(issues) == [("missing_doc", "docs[0].path")] and issues[0]["file"] == "other/idx.yaml"
            e = error(await c.call_tool("kb_check", {"config": "../x.yaml"}))
            assert e["code"] == "INVALID_PATH"
            e = error(await c.call_tool("kb_check", {"config": "none.yaml"}))
            assert e == {"code": "NOT_FOUND", "message": "Configuration file `none.yaml` was not found; pass an existing root-relative path or omit config."}
            # A document reached through a symbolic link is `invalid_path`, not read.
            (root / "docs/notes.md").unlink()
            (root / "docs/notes.md").symlink_to(root / "docs/draft.md")
            issues = await check(c)
            assert ("invalid_path", "docs[3].path") in kinds(issues), issues
            r = await find(c, text="開発")
            assert r["docs"][0].get("chars") is None
    run(go())


def test_instructions_mention_the_catalog_only_when_there_is_one():
    line = "This project has a document catalog: start with kb_list_tags and kb_find_docs to find documents by tag and relation."

    async def go():
        root, p = f1()
        async with Client(p) as c:
            assert line in c.instructions
        root, p = f1(config=CONFIG_F1 + "tools:\n  disabled: [catalog]\n")
        async with Client(p) as c:
            assert line not in c.instructions and "- catalog-index:" in c.instructions
        root = project(copy_fixture=False)
        (root / ".git").mkdir()
        async with Client(params(root)) as c:
            assert line not in c.instructions
    run(go())
