"""kb_export_html and kb_build_site through the official MCP SDK: the scenarios of
`docs/reference/catalog-spec.md` §11.7 on fixture F1 (§11.1), the write gate and Japanese warnings.

Every produced file is parsed and checked for external resources (`docs/reference/catalog-spec.md` §7.7): any `src`,
`srcset`, `poster`, `<link href>`, `@import` or CSS `url(` that is not a `data:` URI or an in-page
or relative local reference fails the test.
"""

import re
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from test_mcp_catalog import INDEX_F1
from test_mcp_client import body, error, params, project, run

# `docs/reference/catalog-spec.md` §4.2, with its comment line (the catalog tests' fixture F1).
INDEX = INDEX_F1


def _png():
    """A valid 1×1 PNG (one green pixel)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00\x00\xff\x00"))
            + chunk(b"IEND", b""))


PNG = _png()

F1_FILES = {
    "docs/index.yaml": INDEX,
    "docs/設計/arch.md": "# アーキテクチャ\n\n全体は [API](../guide/api.md#ツールの一覧) を見る。\n\n"
    "## 依存の向き\n\n![構成図](../../images/arch.png)\n",
    "docs/guide/api.md": "# API リファレンス\n\n## ツールの一覧\n\n本文。\n",
    "docs/guide/api.en.md": "# API reference\n\nSee [notes](../notes.md).\n",
    "docs/notes.md": "# 開発メモ\n\n全体構成の図は後で直す。\n",
    "docs/draft.md": "# 下書き\n",
}

BUILD = """  build:
    include: {include}
    out: dist/guide.html
    title: 製品ガイド
"""


def f1(build=True, include='["docs/guide/*.md"]', allow_writes=True, language=None, prefix=()):
    """Fixture F1 in a fresh project; returns (root, server parameters)."""
    root = project(copy_fixture=False)
    for rel, text in F1_FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / "images").mkdir()
    (root / "images" / "arch.png").write_bytes(PNG)
    config = "knowledgeBase:\n  root: .\n  allowWrites: {}\ncatalog:\n  index: docs/index.yaml\n".format(
        "true" if allow_writes else "false")
    config += '  scan: ["docs/**/*.md"]\n'
    if language:
        config += f"  language: {language}\n"
    if build:
        config += BUILD.format(include=include)
    (root / "lvsm.yaml").write_text(config, encoding="utf-8")
    p = params(root, "--config", str(root / "lvsm.yaml"))
    if prefix:
        p = StdioServerParameters(command=prefix[0], args=[*prefix[1:], p.command, *p.args], env=p.env)
    return root, p


def snapshot(root):
    """Every file under the root (index folder excluded) with its bytes."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".local-vector-search-mcp" not in p.parts
    }


class ResourceCheck(HTMLParser):
    """Collects every resource reference of a page (`docs/reference/catalog-spec.md` §7.7)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.refs = []
        self.in_style = False

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            value = value or ""
            if name in ("src", "poster"):
                self.refs.append((tag, name, value))
            elif name == "srcset":
                self.refs.extend((tag, name, part.strip().split(" ")[0]) for part in value.split(","))
            elif name == "href" and tag == "link":
                self.refs.append((tag, name, value))
            elif name == "style":
                self.css(value)
        self.in_style = tag == "style"

    def handle_endtag(self, tag):
        self.in_style = False

    def handle_data(self, data):
        if self.in_style:
            self.css(data)

    def css(self, text):
        for m in re.finditer(r"url\(\s*['\"]?([^'\")]*)", text):
            self.refs.append(("css", "url", m.group(1)))
        for m in re.finditer(r"@import\s+(?:url\()?\s*['\"]?([^'\");]*)", text):
            self.refs.append(("css", "@import", m.group(1)))


def external_resources(html):
    """The references that would make a request: not `data:`, not in-page, not relative."""
    check = ResourceCheck()
    check.feed(html)
    bad = []
    for tag, attr, value in check.refs:
        v = value.strip().lower()
        if v.startswith("data:") or v.startswith("#"):
            continue
        if v.startswith("//") or re.match(r"^[a-z][a-z0-9+.-]*:", v) or attr == "@import":
            bad.append((tag, attr, value))
    return bad


def test_the_resource_check_can_fail():
    page = ('<img src="https://x/a.png"><link rel="stylesheet" href="//cdn/a.css">'
            '<style>@import "https://x/b.css"; p{background:url(http://x/c.png)}</style>'
            '<video poster="http://x/p.jpg"></video><img srcset="a.png 1x, https://x/b.png 2x">'
            '<img src="data:image/png;base64,AA"><a href="https://example.com">ok</a>')
    assert sorted(v for _, _, v in external_resources(page)) == sorted([
        "https://x/a.png", "//cdn/a.css", "https://x/b.css", "http://x/c.png", "http://x/p.jpg", "https://x/b.png"])


def test_self_contained_export_overwrite_and_determinism():
    async def go():
        root, p = f1()
        stale = root / "docs" / "設計" / "arch.html"
        stale.write_text("old", encoding="utf-8")
        async with Client(p) as c:
            res = body(await c.call_tool("kb_export_html", {"file": "docs/設計/arch.md"}))
            assert res == {"out": "docs/設計/arch.html", "warnings": []}
            first = stale.read_bytes()
            html = first.decode("utf-8")
            assert html.startswith("<!doctype html>")
            assert '<html lang="ja">' in html
            assert ('<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; img-src data:; '
                    'style-src \'unsafe-inline\'">') in html
            assert "<title>アーキテクチャ</title>" in html
            assert 'src="data:image/png;base64,' in html
            assert 'id="依存の向き"' in html
            assert 'href="../guide/api.html#ツールの一覧"' in html
            assert external_resources(html) == []
            assert "http:" not in html and "https:" not in html
            again = body(await c.call_tool("kb_export_html", {"file": "docs/設計/arch.md", "project_dir": str(root)}))
            assert again == res
            assert stale.read_bytes() == first
            other = body(await c.call_tool("kb_export_html", {"file": "docs/設計/arch.md", "out": "out/a.htm"}))
            assert other == {"out": "out/a.htm", "warnings": []}
            # Written elsewhere, the link is relative to the new place.
            assert 'href="../docs/guide/api.html#ツールの一覧"' in (root / "out" / "a.htm").read_text("utf-8")
            # The export leaves no temp file; the index folder is left out of the look, because
            # the background indexer replaces its status file (temp file + rename) at any moment.
            index_dir = root / ".local-vector-search-mcp"
            leftovers = [p.name for p in root.rglob(".lvs-tmp-*") if index_dir not in p.parents]
            assert leftovers == []
    run(go())


def test_export_errors_write_nothing():
    async def go():
        root, p = f1()
        (root / "docs" / "a.txt").write_text("text", encoding="utf-8")
        (root / "docs" / "folder.html").mkdir()
        before = snapshot(root)
        async with Client(p) as c:
            err = error(await c.call_tool("kb_export_html", {"file": "docs/none.md"}))
            assert err == {"code": "NOT_FOUND",
                           "message": "`docs/none.md` was not found; pass an existing root-relative Markdown path."}
            err = error(await c.call_tool("kb_export_html", {"file": "docs/a.txt"}))
            assert err["code"] == "UNSUPPORTED_FORMAT" and "ending in .md" in err["message"], err
            err = error(await c.call_tool("kb_export_html", {"file": "docs/設計/arch.md", "out": "x.pdf"}))
            assert err["code"] == "UNSUPPORTED_FORMAT" and ".html or .htm" in err["message"], err
            for out in ["../x.html", ".git/x.html", "/x.html", "docs/folder.html"]:
                err = error(await c.call_tool("kb_export_html", {"file": "docs/設計/arch.md", "out": out}))
                assert err["code"] == "INVALID_PATH", (out, err)
            err = error(await c.call_tool("kb_export_html", {"file": "docs/設計/arch.md", "project_dir": "/"}))
            assert err["code"] == "INVALID_ARGUMENT" and "start a separate server" in err["message"], err
            err = error(await c.call_tool("kb_export_html", {"file": "docs/設計/arch.md", "extra": 1}))
            assert err["code"] == "INVALID_ARGUMENT" and "extra" in err["message"], err
        assert snapshot(root) == before
    run(go())


def test_config_argument_and_a_project_without_catalog():
    async def go():
        root, p = f1()
        (root / "other").mkdir()
        (root / "other" / "mdmark.config.yaml").write_text(
            "html:\n  lang: en-GB\n  toc: false\nbuild:\n  include: [\"../docs/notes.md\"]\n  out: site.html\n  title: Notes\n",
            encoding="utf-8")
        async with Client(p) as c:
            res = body(await c.call_tool("kb_export_html", {"file": "docs/設計/arch.md", "config": "other/mdmark.config.yaml"}))
            html = (root / res["out"]).read_text("utf-8")
            assert '<html lang="en-GB">' in html
            err = error(await c.call_tool("kb_export_html", {"file": "docs/設計/arch.md", "config": "nope.yaml"}))
            assert err["code"] == "NOT_FOUND", err
            res = body(await c.call_tool("kb_build_site", {"config": "other/mdmark.config.yaml"}))
            assert res == {"out": "other/site.html", "docs": 1, "warnings": []}
        bare = project(copy_fixture=False)
        (bare / "a.md").write_text("# A\n\n## One\n\n## Two\n", encoding="utf-8")
        (bare / ".git").mkdir()
        cfg = bare.parent / (bare.name + "-config.yml")
        cfg.write_text("knowledgeBase:\n  allowWrites: true\n", encoding="utf-8")
        async with Client(params(bare, "--config", str(cfg))) as c:
            assert body(await c.call_tool("kb_export_html", {"file": "a.md"})) == {"out": "a.html", "warnings": []}
            assert '<nav class="toc" aria-label="Contents">' in (bare / "a.html").read_text("utf-8")
            err = error(await c.call_tool("kb_build_site", {}))
            assert err["code"] == "NOT_FOUND" and "local-vector-search-mcp init" in err["message"], err
    run(go())


def no_network_prefix():
    """`unshare -rn` (a private network namespace with no interfaces) when the system allows it."""
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-rn", "true"], capture_output=True).returncode == 0:
        return (unshare, "-rn")
    return ()


def test_remote_and_missing_images_become_links_and_placeholders_without_network():
    async def go():
        prefix = no_network_prefix()
        root, p = f1(prefix=prefix)
        (root / "docs" / "img.md").write_text(
            "# 画像\n\n![遠く](https://example.com/a.png)\n\n![](nope.png)\n", encoding="utf-8")
        async with Client(p) as c:
            res = body(await c.call_tool("kb_export_html", {"file": "docs/img.md"}))
            assert res["warnings"] == [
                "docs/img.md:3: remote image `https://example.com/a.png` was not fetched and is shown as a link; "
                "save it into the project to embed it",
                "docs/img.md:5: image `nope.png` was not embedded (the file does not exist); fix the path or the file",
            ]
            html = (root / "docs" / "img.html").read_text("utf-8")
            assert '<a class="remote-image" href="https://example.com/a.png">遠く</a>' in html
            assert '<span class="missing-image"' in html
            assert external_resources(html) == []
    run(go())


def test_build_site_links_documents_and_warns_about_the_rest():
    async def go():
        root, p = f1()
        async with Client(p) as c:
            res = body(await c.call_tool("kb_build_site", {}))
            assert res == {
                "out": "dist/guide.html",
                "docs": 2,
                "warnings": [
                    "docs/guide/api.en.md:3: link target `../notes.md` is not part of the build; "
                    "add it to build.include or link elsewhere"
                ],
            }
            html = (root / "dist" / "guide.html").read_text("utf-8")
            nav = html[html.index('<nav class="site-nav"'):html.index("</nav>")]
            assert nav.index(">API reference (English)</a>") < nav.index(">API リファレンス</a>")
            assert '<article id="api-en">' in html and '<article id="api">' in html
            assert 'id="api--ツールの一覧"' in html
            assert "<title>製品ガイド</title>" in html
            assert 'href="../docs/notes.md"' in html
            assert external_resources(html) == []
            first = (root / "dist" / "guide.html").read_bytes()
            assert body(await c.call_tool("kb_build_site", {})) == res
            assert (root / "dist" / "guide.html").read_bytes() == first
    run(go())


def test_build_site_broken_references_are_warnings():
    async def go():
        root, p = f1()
        (root / "docs" / "guide" / "api.md").write_text(
            "# API リファレンス\n\n## ツールの一覧\n\n[gone](gone.md) [anchor](api.en.md#nowhere) "
            "[ok](api.en.md#api-reference) [self](#ツールの一覧)\n", encoding="utf-8")
        async with Client(p) as c:
            res = body(await c.call_tool("kb_build_site", {}))
            assert res["warnings"] == [
                "docs/guide/api.en.md:3: link target `../notes.md` is not part of the build; "
                "add it to build.include or link elsewhere",
                "docs/guide/api.md:5: link target `gone.md` does not exist; fix the link or restore the file",
                "docs/guide/api.md:5: link `api.en.md#nowhere` points to a heading that does not exist; "
                "fix the anchor or the heading",
            ]
            html = (root / "dist" / "guide.html").read_text("utf-8")
            assert 'href="#api-en--api-reference"' in html and 'href="#api--ツールの一覧"' in html
    run(go())


def test_build_without_build_or_matches_writes_nothing():
    async def go():
        for kwargs, message in [
            ({"build": False}, "The catalog configuration has no `build` section; add build.include "
                               "(and optionally out and title)."),
            ({"include": '["nothing/*.md"]'}, "build.include matches no Markdown file; fix the patterns."),
        ]:
            root, p = f1(**kwargs)
            before = snapshot(root)
            async with Client(p) as c:
                err = error(await c.call_tool("kb_build_site", {}))
                assert err == {"code": "NOT_FOUND", "message": message}
            assert snapshot(root) == before
    run(go())


def test_writes_disabled_and_japanese_messages():
    async def go():
        root, p = f1(allow_writes=False)
        before = snapshot(root)
        async with Client(p) as c:
            for tool, args in [("kb_export_html", {"file": "docs/設計/arch.md"}), ("kb_build_site", {})]:
                err = error(await c.call_tool(tool, args))
                assert err == {"code": "PERMISSION_DENIED", "message": (
                    "Workspace writes are disabled; set knowledgeBase.allowWrites: true in the server "
                    f"configuration to let {tool} write files.")}
        assert snapshot(root) == before
        root, p = f1(language="ja")
        async with Client(p) as c:
            res = body(await c.call_tool("kb_build_site", {}))
            assert res["warnings"] == [
                "docs/guide/api.en.md:3: リンク先 `../notes.md` はまとめる文書に入っていません。"
                "build.include に足すか、リンクを変えてください"
            ]
            err = error(await c.call_tool("kb_export_html", {"file": "docs/none.md"}))
            assert err["message"] == "`docs/none.md` が見つかりません。ある Markdown のパスを渡してください。"
    run(go())
