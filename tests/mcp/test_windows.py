"""The Windows smoke suite (issue #47): what differs on Windows, driven through the real binary.

Three runs of the same file:

- `.ci/windows`: the cross-built `.exe` under Wine (LVS_BIN is a wrapper that runs it with wine,
  LVS_TARGET_OS=windows, LVS_HOLD_OPEN is a wrapper of `tests/windows/hold_open.c`);
- the Windows job of `.github/workflows/release.yml`: the same `.exe` natively on a GitHub runner
  (LVS_TARGET_OS=windows);
- `.ci/run`'s pytest step: the Linux binary, where every check that is not about Windows alone
  holds too (the others skip with the reason).

`docs/design/portability.md` ("What runs where") says which row each test covers.
"""

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import stdio_client

from test_mcp_client import BIN, body, error, params, project, reindex_and_wait, run, synchronised
from test_mcp_edit import (INDEX_DIR, TEMP_PREFIX, element, eventually_found, ls_a, save_like_an_editor,
                           search_paths, writable)

REPO = Path(__file__).resolve().parents[2]
WINDOWS = os.environ.get("LVS_TARGET_OS") == "windows" or os.name == "nt"
UNDER_WINE = bool(os.environ.get("LVS_UNDER_WINE"))
windows_only = pytest.mark.skipif(not WINDOWS, reason="Windows only (set LVS_TARGET_OS=windows)")


def cli(root, *args, cwd=None, timeout=300):
    """Runs a CLI command of the binary on project `root`; returns (stdout bytes, stderr text)."""
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    env["RUST_LOG"] = "warn"
    out = subprocess.run([BIN, "--project-root", str(root), "--embedding-provider", "none",
                          "--search-mode", "lexical", *args], cwd=cwd or root, env=env,
                         capture_output=True, timeout=timeout)
    err = out.stderr.decode("utf-8", errors="replace")
    assert out.returncode == 0, f"{args}: exit {out.returncode}: {err}"
    return out.stdout, err


def every_name(root):
    """Every file and folder name under `root` (hidden ones too), relative, with `/`."""
    return sorted(str(p.relative_to(root)).replace("\\", "/") for p in Path(root).rglob("*"))


def temp_files(root):
    """Temp files left anywhere in the project (its index folder included), each folder listed
    with `ls -a` (on Windows os.listdir: Git's `ls` writes names in a code page Python would
    misread)."""
    left = []
    for folder, _, _ in os.walk(root):
        names = os.listdir(folder) if os.name == "nt" or not shutil.which("ls") else ls_a(folder)
        rel = Path(folder).relative_to(root).as_posix()
        left += [f"{rel}/{n}" for n in names if n.startswith(TEMP_PREFIX)]
    return left


class Logged:
    """An MCP client over stdio whose server's stderr goes to a file (read with `.log()`)."""

    def __init__(self, server_params):
        self.path = Path(tempfile.mkdtemp(prefix="lvs-win-log-")) / "stderr.txt"
        self.file = self.path.open("w", encoding="utf-8")
        self.client = Client(stdio_client(server_params, errlog=self.file))

    async def __aenter__(self):
        return await self.client.__aenter__()

    async def __aexit__(self, *exc):
        try:
            return await self.client.__aexit__(*exc)
        finally:
            self.file.close()

    def log(self):
        return self.path.read_text(encoding="utf-8", errors="replace")


def test_version():
    out = subprocess.run([BIN, "--version"], capture_output=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert re.fullmatch(rb"local-vector-search-mcp \d+\.\d+\.\d+\r?\n", out.stdout), out.stdout


def sample_project():
    """`docs/sample-ja` plus a folder and a file with Japanese names that link into it."""
    root = Path(tempfile.mkdtemp(prefix="lvs-win-"))
    shutil.copytree(REPO / "docs" / "sample-ja", root, dirs_exist_ok=True)
    (root / "メモ").mkdir()
    (root / "メモ" / "桜の記録.md").write_text(
        "# 桜の開花\n\n今年の桜は三月の末に咲いた。詳しくは[サーバー設定](../ops/server-setup.md)を見る。\n\n"
        "## 花見\n\n上野公園で花見をした。\n", encoding="utf-8")
    return root


@pytest.mark.skipif(os.name == "nt", reason="needs a Unix pseudo-terminal (Wine's console runs on one)")
def test_japanese_on_a_terminal():
    """On a console the binary writes UTF-16 (std's WriteConsoleW), whatever the code page; Wine
    turns it into the terminal's UTF-8. On a pipe it writes UTF-8 bytes (the other tests)."""
    import pty
    root = Path(tempfile.mkdtemp(prefix="lvs-win-tty-"))
    (root / "桜.md").write_text("# 桜の開花\n\n今年の桜は三月に咲いた。\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    env.update(LANG="C.UTF-8", RUST_LOG="warn")
    master, slave = pty.openpty()
    proc = subprocess.Popen([BIN, "--project-root", str(root), "--embedding-provider", "none", "read", "桜.md"],
                            stdin=slave, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the terminal's last writer is gone
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    assert proc.wait(120) == 0, out
    text = out.decode("utf-8")
    assert "桜の開花" in text and "今年の桜は三月に咲いた。" in text, text


def test_cli_japanese_sample_and_names():
    root = sample_project()
    out, _ = cli(root, "reindex", "--json")
    assert json.loads(out)["indexedFiles"] == 9, out
    # Japanese in and out: the query is an argument, the answer is UTF-8 on a pipe.
    out, _ = cli(root, "search", "桜の開花", "--json")
    hits = json.loads(out.decode("utf-8"))["results"]
    assert hits and hits[0]["path"] == "メモ/桜の記録.md", hits
    out, _ = cli(root, "search", "サーバー設定")
    text = out.decode("utf-8")
    assert "ops/server-setup.md" in text and "サーバー設定" in text, text
    # A Japanese file name as an argument; `\` in a path is read as `/`.
    out, _ = cli(root, "read", "メモ/桜の記録.md")
    assert "今年の桜は三月の末に咲いた。" in out.decode("utf-8")
    out, _ = cli(root, "read", "ops\\server-setup.md", "--json")
    assert json.loads(out)["path"] == "ops/server-setup.md"
    out, _ = cli(root, "outline", "ops/server-setup.md")
    assert "構成の概要" in out.decode("utf-8")
    out, _ = cli(root, "links", "メモ/桜の記録.md", "--json")
    assert "ops/server-setup.md" in out.decode("utf-8"), out.decode("utf-8")
    # The PDF with the built-in Japanese fonts (Wine and a bare runner have no Japanese system font).
    cli(root, "pdf", "メモ/桜の記録.md", "--out", "出力/桜.pdf")
    pdf = (root / "出力" / "桜.pdf").read_bytes()
    assert pdf.startswith(b"%PDF-") and len(pdf) > 10_000
    cli(root, "export-html", "メモ/桜の記録.md", "--out", "出力/桜.html")
    html = (root / "出力" / "桜.html").read_text(encoding="utf-8")
    assert "桜の開花" in html and "上野公園で花見をした。" in html
    assert temp_files(root) == []


async def patch_paragraph(c, path, contains, markdown):
    para, _ = await element(c, path, "paragraph", contains)
    res = body(await c.call_tool("kb_patch", {"request": {"path": path, "operations": [
        {"kind": "replace_element", "pointer": para["pointer"], "markdown": markdown}]}}))
    return para, res


def test_mcp_search_read_patch_and_file_tools():
    """Forty patches in a row (the Windows run logged "could not sync the lexical index: Access
    ... denied" here), the file tools, a stale anchor, and no temp file or warning left."""
    root = project()
    server = Logged(writable(root))

    async def go():
        async with server as c:
            await reindex_and_wait(c)
            assert "kyoto.md" in await search_paths(c, "京都")
            page = body(await c.call_tool("kb_read", {"request": {"path": "notes\\2026\\budget-meeting.md"}}))
            assert page["path"] == "notes/2026/budget-meeting.md"
            first = None
            for i in range(40):
                para, _ = await patch_paragraph(c, "kyoto.md", None, f"清水寺の舞台から紅葉を眺めた（{i}回目）。")
                first = first or para
            assert await eventually_found(c, "紅葉", "kyoto.md")
            await synchronised(c)
            err = error(await c.call_tool("kb_patch", {"request": {"path": "kyoto.md", "operations": [
                {"kind": "replace_element", "pointer": first["pointer"], "markdown": "古い版。"}]}}))
            assert err["code"] == "CONFLICT"
            assert "（39回目）" in (root / "kyoto.md").read_text(encoding="utf-8")
            created = body(await c.call_tool("kb_create", {"request": {"path": "新規/メモ.md", "markdown": "# 新しいメモ\n\n伏見稲荷の千本鳥居。\n"}}))
            assert await eventually_found(c, "千本鳥居", "新規/メモ.md")
            moved = body(await c.call_tool("kb_move", {"request": {"sourcePath": "新規/メモ.md", "targetPath": "新規/移動.md", "expectedSourceHash": created["sourceHash"]}}))
            assert moved["path"] == "新規/移動.md" and not (root / "新規" / "メモ.md").exists()
            assert await eventually_found(c, "千本鳥居", "新規/移動.md")
            body(await c.call_tool("kb_delete", {"request": {"path": "新規/移動.md", "expectedSourceHash": created["sourceHash"]}}))
            assert not (root / "新規" / "移動.md").exists()
            await synchronised(c)
    run(go(), limit=600)
    assert temp_files(root) == [], every_name(root)
    assert "WARN" not in server.log() and "ERROR" not in server.log(), server.log()
    # Segments merged away were deleted although readers mapped them (without the garbage
    # collector 40 commits leave about 40 segments; Linux and Wine leave 2-3).
    lexical = os.listdir(root / INDEX_DIR / "lexical")
    segments = {n.split(".")[0] for n in lexical if re.fullmatch(r"[0-9a-f]{32}\..+", n)}
    assert len(segments) <= 8, sorted(lexical)


def test_windows_path_rules_over_mcp():
    """portability.md's path rules as the server applies them (the same on every platform)."""
    async def go():
        root = project()
        async with Client(params(root)) as c:
            for bad in ["NUL.md", "con.md", "notes/AUX.md", "COM1.md", "lpt9.txt.md", "kyoto.md.", "kyoto.md ",
                        "\\\\?\\C:\\kyoto.md", "C:\\kyoto.md", "C:kyoto.md", "\\\\server\\share\\kyoto.md",
                        "kyoto.md:stream", "..\\kyoto.md"]:
                err = error(await c.call_tool("kb_read", {"request": {"path": bad}}))
                assert err["code"] == "INVALID_PATH", (bad, err)
            page = body(await c.call_tool("kb_read", {"request": {"path": "notes\\2026\\budget-meeting.md"}}))
            assert page["path"] == "notes/2026/budget-meeting.md"
    run(go())


@windows_only
def test_names_differing_only_in_case_are_one_file():
    """NTFS (and Wine) find `KYOTO.md` as `kyoto.md`; the index keeps the name on disk."""
    async def go():
        root = project()
        async with Client(writable(root)) as c:
            await reindex_and_wait(c)
            page = body(await c.call_tool("kb_read", {"request": {"path": "KYOTO.md"}}))
            assert any("京都" in e["text"] for e in page["elements"]), page
            assert page["path"] == "kyoto.md", "answers name the file as it is on disk"
            para, _ = await element(c, "KYOTO.md", "paragraph")
            res = body(await c.call_tool("kb_patch", {"request": {"path": "KYOTO.md", "operations": [
                {"kind": "replace_element", "pointer": para["pointer"], "markdown": "嵐山の竹林を歩いた。"}]}}))
            assert res["path"] == "kyoto.md"
            assert "嵐山の竹林を歩いた。" in (root / "kyoto.md").read_text(encoding="utf-8")
            # Searchable at once under the one key (it was indexed as KYOTO.md until a scan).
            assert await search_paths(c, "竹林") == {"kyoto.md"}
            await synchronised(c)
            assert await search_paths(c, "竹林") == {"kyoto.md"}, "one file, one index key"
    run(go())


def test_a_case_only_rename():
    """`kb_move kyoto.md Kyoto.md`: on a case-insensitive file system the target "exists" (it is
    the source), which a no-replace rename must not take for another file."""
    async def go():
        root = project()
        async with Client(writable(root)) as c:
            await reindex_and_wait(c)
            page = body(await c.call_tool("kb_read", {"request": {"path": "kyoto.md"}}))
            moved = body(await c.call_tool("kb_move", {"request": {"sourcePath": "kyoto.md", "targetPath": "Kyoto.md", "expectedSourceHash": page["sourceHash"]}}))
            assert moved["path"] == "Kyoto.md" and moved["previousPath"] == "kyoto.md"
            if not UNDER_WINE:
                # Wine 8 ignores a rename that changes only case (`ren kyoto.md Kyoto.md` in its
                # cmd too): the name on disk is checked by the native Windows job of release.yml.
                names = os.listdir(root)
                assert "Kyoto.md" in names and "kyoto.md" not in names, names
                assert await eventually_found(c, "京都", "Kyoto.md")
                await synchronised(c)
                assert "kyoto.md" not in await search_paths(c, "京都")
            # A different file of that name is still never replaced.
            (root / "other.md").write_text("# 別\n", encoding="utf-8")
            other = body(await c.call_tool("kb_read", {"request": {"path": "other.md"}}))
            err = error(await c.call_tool("kb_move", {"request": {"sourcePath": "other.md", "targetPath": "KYOTO.md" if WINDOWS else "Kyoto.md", "expectedSourceHash": other["sourceHash"]}}))
            assert err["code"] == "INVALID_ARGUMENT" and "exists" in err["message"], err
            assert (root / ("kyoto.md" if UNDER_WINE else "Kyoto.md")).read_bytes() == (REPO / "tests/fixtures/ja/kyoto.md").read_bytes()
    run(go())


def test_crlf_is_kept_byte_exact_by_a_patch():
    async def go():
        root = project()
        original = "# 改行\r\n\r\n最初の段落。\r\n\r\n二番目の段落。\r\n\r\n- 項目\r\n"
        (root / "crlf.md").write_bytes(original.encode("utf-8"))
        async with Client(writable(root)) as c:
            await patch_paragraph(c, "crlf.md", "最初", "書き換えた段落。")
        assert (root / "crlf.md").read_bytes() == original.replace("最初の段落。", "書き換えた段落。").encode("utf-8")
    run(go())


def test_a_second_server_sees_the_first_ones_patch():
    async def go():
        root = project()
        async with Client(writable(root)) as a:
            await reindex_and_wait(a)
            async with Client(writable(root)) as b:
                assert "kyoto.md" not in await search_paths(b, "金閣寺の池")
                await patch_paragraph(a, "kyoto.md", None, "金閣寺の池に映る姿を見た。")
                page = body(await b.call_tool("kb_read", {"request": {"path": "kyoto.md"}}))
                assert any("金閣寺の池" in e["text"] for e in page["elements"]), page
                assert await eventually_found(b, "金閣寺の池", "kyoto.md", seconds=30)
    run(go())


def test_a_reindex_while_a_server_holds_the_index_open():
    """Another process rewrites the index (a new segment, then every file again) while a
    server's reader maps the old segments; both go on answering."""
    root = project()
    server = Logged(params(root))

    async def go():
        async with server as c:
            await reindex_and_wait(c)
            assert "kyoto.md" in await search_paths(c, "京都")
            (root / "added.md").write_text("# 追加\n\n奈良の大仏を見上げた。\n", encoding="utf-8")
            out, err = cli(root, "reindex", "--json")
            assert json.loads(out)["warning"] is None and "WARN" not in err, err
            assert await eventually_found(c, "大仏", "added.md", seconds=30)
            out, err = cli(root, "reindex", "--all", "--json")
            assert json.loads(out)["warning"] is None and "WARN" not in err, err
            assert await eventually_found(c, "大仏", "added.md", seconds=30)
            assert "kyoto.md" in await search_paths(c, "京都")
    run(go(), limit=600)
    assert "WARN" not in server.log(), server.log()


def test_vectors_are_replaced_while_the_server_searches_them(embed_endpoint):
    """Each edit's new vectors replace `vectors.usearch` while the server's own reader holds the
    old ones (on Windows a copy in memory, not a mapping, which would refuse the rename)."""
    from test_mcp_vectors import vector_params
    root = project()
    server = Logged(vector_params(root, embed_endpoint, writes=True))

    async def vectors_saved(c):
        for _ in range(600):
            status = body(await c.call_tool("kb_status", {}))
            v = status["vectors"]
            if v["pending"] == 0 and status["synchronization"]["pendingFiles"] == 0:
                assert v.get("lastError") is None, v
                return
            await asyncio.sleep(0.05)
        raise AssertionError(f"vectors were not saved: {status['vectors']}")

    async def go():
        async with server as c:
            await reindex_and_wait(c)
            await vectors_saved(c)
            for i in range(3):
                sentence = f"祇園祭の山鉾が四条通を進んだ（{i}回目）。"
                before = body(await c.call_tool("kb_search", {"request": {"query": sentence, "mode": "semantic"}}))
                assert before.get("warning") is None, before
                await patch_paragraph(c, "kyoto.md", None, sentence)
                await vectors_saved(c)
                # A search right after kb_status shows the vectors saved can still answer without
                # the new one (on Linux too, about one run in five): the check is that it comes,
                # with no warning on the way.
                deadline = time.monotonic() + 10
                while True:
                    after = body(await c.call_tool("kb_search", {"request": {"query": sentence, "mode": "semantic", "topK": 3}}))
                    assert after.get("warning") is None, after
                    if "kyoto.md" in {h["path"] for h in after["results"]}:
                        break
                    assert time.monotonic() < deadline, (i, after)
                    await asyncio.sleep(0.05)
    run(go(), limit=600)
    assert "WARN" not in server.log() and "ERROR" not in server.log(), server.log()


def test_serve_http_answers_on_loopback():
    root = project()
    log = Path(tempfile.mkdtemp(prefix="lvs-win-http-")) / "stderr.txt"
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_PROJECT_DIR", "LVS_HTTP_TOKEN", "MDMARK_PORT")}
    env["RUST_LOG"] = "info"
    with log.open("wb") as err:
        proc = subprocess.Popen([BIN, "--project-root", str(root), "--embedding-provider", "none",
                                 "--search-mode", "lexical", "serve", "--http", "127.0.0.1:0"],
                                env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
    try:
        url = None
        deadline = time.monotonic() + 120
        while url is None:
            assert proc.poll() is None, log.read_text(encoding="utf-8", errors="replace")
            assert time.monotonic() < deadline, "no URL: " + log.read_text(encoding="utf-8", errors="replace")
            m = re.search(r"serving MCP over Streamable HTTP at (http://127\.0\.0\.1:\d+/mcp)",
                          log.read_text(encoding="utf-8", errors="replace"))
            url = m and m.group(1)
            time.sleep(0.05)

        async def go():
            async with Client(url) as c:
                assert c.server_info.name == "local-vector-search-mcp"
                await reindex_and_wait(c)
                assert "kyoto.md" in await search_paths(c, "京都")
        run(go())
        # A plain GET without the MCP headers is refused, not served.
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(url, timeout=30)
    finally:
        proc.kill()
        proc.wait(60)


def hold_open(path):
    """Holds `path` open the way many Windows programs do: without delete sharing."""
    if os.name == "nt":
        return open(path, "rb")  # noqa: SIM115 (CPython opens files without FILE_SHARE_DELETE)
    helper = os.environ.get("LVS_HOLD_OPEN")
    if not helper:
        pytest.skip("needs Windows or LVS_HOLD_OPEN (.ci/windows builds tests/windows/hold_open.c)")
    proc = subprocess.Popen([helper, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdout.readline().strip() == b"held"

    class Held:
        def close(self):
            proc.stdin.close()
            proc.wait(60)
    return Held()


@windows_only
def test_a_patch_over_a_file_another_program_holds_open():
    """Windows refuses to replace a file opened without delete sharing: the patch answers one
    sentence, the file stays whole, no temp file is left; once it is closed the patch goes through."""
    async def go():
        root = project()
        async with Client(writable(root)) as c:
            para, _ = await element(c, "kyoto.md", "paragraph")
            before = (root / "kyoto.md").read_bytes()
            held = hold_open(root / "kyoto.md")
            try:
                res = await c.call_tool("kb_patch", {"request": {"path": "kyoto.md", "operations": [
                    {"kind": "replace_element", "pointer": para["pointer"], "markdown": "開いている間の版。"}]}})
                err = error(res)
                assert err["code"] in ("PERMISSION_DENIED", "CONFLICT", "INTERNAL"), err
                assert err["message"].count(". ") <= 1 and "kyoto.md" in err["message"], err
            finally:
                held.close()
            assert (root / "kyoto.md").read_bytes() == before
            assert temp_files(root) == []
            await patch_paragraph(c, "kyoto.md", None, "閉じた後の版。")
            assert "閉じた後の版。" in (root / "kyoto.md").read_text(encoding="utf-8")
    run(go())


def test_an_editor_style_save_is_picked_up_by_the_watcher():
    """ReadDirectoryChangesW on Windows (Wine maps it onto inotify)."""
    async def go():
        root = project()
        async with Client(params(root, "--watch-files")) as c:
            await reindex_and_wait(c)
            await save_like_an_editor(c, root, "新しい.md", seconds=30)
    run(go())


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
