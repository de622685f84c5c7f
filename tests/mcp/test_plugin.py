"""The Claude Code plugin in `.claude-plugin/`: its manifest, its marketplace entry and its MCP
server entry.

- `claude plugin validate` (Claude Code's own checker, from the npm package `.ci/setup` installs
  into `~/.cache/lvs-claude-code`, or `$LVS_CLAUDE`, or `claude` on PATH) runs offline; it must
  accept both manifests and reject a broken copy. Without it that test is skipped.
- Always: the fields Claude Code's plugin reference documents (kebab-case `name`, semantic
  `version` equal to Cargo.toml's, `mcpServers` entries with `command`/`args`), and the server
  entry's own arguments run the real binary with `CLAUDE_PROJECT_DIR` as the project root, as
  Claude Code starts it.
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from test_mcp_client import BIN, project

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / ".claude-plugin" / "plugin.json"
MARKETPLACE = REPO / ".claude-plugin" / "marketplace.json"
NAME = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
SEMVER = re.compile(r"^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$")
DOCUMENTED = {"name", "version", "description", "author", "homepage", "repository", "license", "keywords",
              "commands", "agents", "skills", "hooks", "mcpServers", "outputStyles", "lspServers"}


def claude():
    for candidate in (os.environ.get("LVS_CLAUDE"),
                      str(Path.home() / ".cache" / "lvs-claude-code" / "node_modules" / ".bin" / "claude"),
                      shutil.which("claude")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def cargo_version():
    text = (REPO / "Cargo.toml").read_text(encoding="utf-8")
    return re.search(r'^version = "([^"]+)"', text, re.M).group(1)


def test_the_manifest_has_the_documented_fields_and_a_working_server_entry():
    manifest = json.loads(PLUGIN.read_text(encoding="utf-8"))
    assert set(manifest) <= DOCUMENTED, set(manifest) - DOCUMENTED
    assert NAME.match(manifest["name"]), manifest["name"]
    assert SEMVER.match(manifest["version"]) and manifest["version"] == cargo_version()
    assert manifest["description"] and manifest["license"] == "MIT"
    servers = manifest["mcpServers"]
    assert list(servers) == ["local-vector-search"]
    entry = servers["local-vector-search"]
    assert set(entry) <= {"command", "args", "env", "cwd"} and entry["command"] == "uvx"
    assert entry["args"][0] == "local-vector-search-mcp" and "--project-root" not in entry["args"], \
        "the project root comes from CLAUDE_PROJECT_DIR, which Claude Code sets"
    market = json.loads(MARKETPLACE.read_text(encoding="utf-8"))
    assert NAME.match(market["name"]) and market["owner"]["name"]
    assert [p["name"] for p in market["plugins"]] == [manifest["name"]]
    assert market["plugins"][0]["source"] == "./"
    # The entry's arguments, given to the real binary (uvx runs the same program), with the
    # project root from CLAUDE_PROJECT_DIR.
    root = project()
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    env["CLAUDE_PROJECT_DIR"] = str(root)
    out = subprocess.run([BIN, *entry["args"][1:], "status", "--json"], env=env, cwd=tempfile.gettempdir(),
                         capture_output=True, timeout=60)
    assert out.returncode == 0, out.stderr
    status = json.loads(out.stdout)
    assert Path(status["project"]["root"]) == root.resolve() and status["indexMode"] == "lexical"


def test_claude_plugin_validate_accepts_the_plugin_and_rejects_a_broken_copy():
    exe = claude()
    if exe is None:
        pytest.skip("Claude Code is not installed (.ci/setup installs it with npm when it can)")
    home = tempfile.mkdtemp(prefix="lvs-claude-home-")
    env = {**os.environ, "HOME": home}

    def validate(path):
        return subprocess.run([exe, "plugin", "validate", str(path)], env=env, capture_output=True, text=True,
                              timeout=120)

    for path in (PLUGIN, MARKETPLACE):
        out = validate(path)
        assert out.returncode == 0 and "Validation passed" in out.stdout, out.stdout + out.stderr
        assert "warning" not in out.stdout.lower(), out.stdout
    broken = Path(tempfile.mkdtemp(prefix="lvs-broken-plugin-"))
    (broken / ".claude-plugin").mkdir()
    manifest = json.loads(PLUGIN.read_text(encoding="utf-8"))
    manifest["name"] = "Local Vector Search"
    (broken / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest), encoding="utf-8")
    out = validate(broken / ".claude-plugin" / "plugin.json")
    assert out.returncode != 0 and "name" in out.stdout, out.stdout + out.stderr
