"""Image and file assets through the real binary and the official MCP SDK: list, load (image block
first), move, delete, download, write gating and the path guard. Saving from a real HTTPS server
is tested in tests/it/assets.rs (the shipped binary refuses loopback, so it cannot reach a local
server); here only its refusals are checked."""

import base64
import hashlib
import json
import os

from mcp import Client

from test_mcp_client import body, error, params, project, run
from test_mcp_edit import writable

# A 1x1 PNG and a 1x1 GIF.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
GIF = base64.b64decode("R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==")


def assets_project():
    root = project(copy_fixture=False)
    (root / "images").mkdir()
    (root / "images" / "a.png").write_bytes(PNG)
    (root / "images" / "b.gif").write_bytes(GIF)
    (root / "docs").mkdir()
    (root / "docs" / "page.md").write_text("![a](../images/a.png)\n", encoding="utf-8")
    (root / "docs" / "data.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    return root


def binary(result):
    """The binary block and the parsed metadata of a kb_load_image / kb_download_file result."""
    assert not result.is_error, result.content[0].text
    assert result.structured_content is None
    assert len(result.content) == 2
    return result.content[0], json.loads(result.content[1].text)


def test_list_load_move_delete_and_download():
    async def go():
        root = assets_project()
        async with Client(writable(root)) as c:
            listed = body(await c.call_tool("kb_list_images", {"pageSize": 1}))
            assert [i["path"] for i in listed["images"]] == ["images/a.png"]
            assert listed["images"][0]["mimeType"] == "image/png"
            page2 = body(await c.call_tool("kb_list_images", {"cursor": listed["nextCursor"], "pageSize": 1}))
            assert [i["path"] for i in page2["images"]] == ["images/b.gif"] and page2.get("nextCursor") is None

            block, meta = binary(await c.call_tool("kb_load_image", {"path": "images/a.png"}))
            assert block.type == "image" and block.mime_type == "image/png"
            assert base64.b64decode(block.data) == PNG
            assert meta == {"path": "images/a.png", "mimeType": "image/png", "bytes": len(PNG),
                            "sha256": hashlib.sha256(PNG).hexdigest()}
            block, meta = binary(await c.call_tool("kb_load_image", {"path": "images/b.gif"}))
            assert block.type == "image" and block.mime_type == "image/png"
            assert base64.b64decode(block.data)[:8] == b"\x89PNG\r\n\x1a\n"
            assert meta["mimeType"] == "image/gif"

            moved = body(await c.call_tool("kb_move_image", {"request": {
                "sourcePath": "images/a.png", "targetPath": "art/new/a.png",
                "expectedSha256": hashlib.sha256(PNG).hexdigest()}}))
            assert moved == {"previousPath": "images/a.png", "path": "art/new/a.png",
                             "sha256": hashlib.sha256(PNG).hexdigest()}
            assert (root / "art" / "new" / "a.png").read_bytes() == PNG
            assert (root / "docs" / "page.md").read_text(encoding="utf-8") == "![a](../images/a.png)\n"
            err = error(await c.call_tool("kb_move_image", {"request": {
                "sourcePath": "art/new/a.png", "targetPath": "images/b.gif"}}))
            assert err["code"] == "ALREADY_EXISTS"
            err = error(await c.call_tool("kb_move_image", {"request": {
                "sourcePath": "art/new/a.png", "targetPath": "x.png", "expectedSha256": "0" * 64}}))
            assert err["code"] == "CONFLICT"

            block, meta = binary(await c.call_tool("kb_download_file", {"path": "docs/data.csv"}))
            assert block.type == "resource"
            assert block.resource.mime_type == "text/csv"
            assert base64.b64decode(block.resource.blob) == b"a,b\n1,2\n"
            assert meta["bytes"] == 8 and meta["path"] == "docs/data.csv"
            block, meta = binary(await c.call_tool("kb_download_file", {"path": "images/b.gif"}))
            assert block.resource.mime_type == "image/gif" and base64.b64decode(block.resource.blob) == GIF

            deleted = body(await c.call_tool("kb_delete_image", {"path": "art/new/a.png"}))
            assert deleted == {"path": "art/new/a.png", "deleted": True}
            assert not (root / "art" / "new" / "a.png").exists() and (root / "art" / "new").is_dir()
            err = error(await c.call_tool("kb_delete_image", {"path": "art/new/a.png"}))
            assert err["code"] == "NOT_FOUND"
    run(go())


def test_writes_disabled_and_the_path_guard():
    async def go():
        root = assets_project()
        os.symlink("/etc", root / "outside")
        async with Client(params(root)) as c:
            for name, args in [
                ("kb_delete_image", {"path": "images/a.png"}),
                ("kb_move_image", {"request": {"sourcePath": "images/a.png", "targetPath": "c.png"}}),
                ("kb_save_image", {"file": {"download_url": "https://example.com/a.png", "file_id": "f"}}),
            ]:
                err = error(await c.call_tool(name, args))
                assert err["code"] == "PERMISSION_DENIED", (name, err)
                assert "knowledgeBase.allowWrites" in err["message"]
            for path in [".git/config", ".local-vector-search-mcp/status.json", "outside/hostname", "../x.png"]:
                err = error(await c.call_tool("kb_download_file", {"path": path}))
                assert err["code"] == "INVALID_PATH", (path, err)
            err = error(await c.call_tool("kb_load_image", {"path": ".git/x.png"}))
            assert err["code"] == "INVALID_PATH" and "Git metadata" in err["message"]
            body(await c.call_tool("kb_list_images", {}))
            assert (root / "images" / "a.png").exists()
    run(go())


def test_save_refuses_unsafe_urls_without_echoing_them():
    async def go():
        root = assets_project()
        async with Client(writable(root)) as c:
            for url, message in [
                ("http://example.com/a.png?sig=SECRET", "download_url must be an absolute HTTPS URL."),
                ("https://127.0.0.1/a.png?sig=SECRET", "download_url resolves to a local or private destination."),
                ("https://localhost/a.png?sig=SECRET", "download_url resolves to a local or private destination."),
                ("https://[::ffff:10.0.0.1]/a.png?sig=SECRET", "download_url resolves to a local or private destination."),
                ("https://user:pw@example.com/a.png", "download_url must not contain user-info."),
            ]:
                err = error(await c.call_tool("kb_save_image", {"file": {"download_url": url, "file_id": "f"}}))
                assert err == {"code": "INVALID_ARGUMENT", "message": message}, (url, err)
            err = error(await c.call_tool("kb_save_image", {"file": {"download_url": "https://example.com/a.png"}}))
            assert err["message"] == "The file parameter does not contain file_id."
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert tools["kb_save_image"].meta == {"openai/fileParams": ["file"]}
        assert sorted(p.name for p in (root / "images").iterdir()) == ["a.png", "b.gif"]
    run(go())
