"""Settings and fixtures of the MCP client tests (the real binary, the official Python SDK).

Environment (each has a default, so `python3 -m pytest -p no:cacheprovider tests/mcp` works
from the repository root after `cargo build --bin local-vector-search-mcp`):

- LVS_BIN: the binary under test; default `$CARGO_TARGET_DIR/debug/local-vector-search-mcp`
  (`target/debug/...` without CARGO_TARGET_DIR).
- LVS_FIXTURE: the Japanese sample workspace each test copies; default `tests/fixtures/ja`.
- LVS_SHARED: the product specification checkout (corpora); default `$LVS_SHARED_DIR` or
  `../shared`. Tests that need it skip when it is absent.

The embedding server the vector tests talk to is `fake_embed.py`, started once per session by the
`embed_endpoint` fixture.
"""

import os
import tempfile
from pathlib import Path

import pytest

from fake_embed import FakeEmbed

REPO = Path(__file__).resolve().parents[2]


def _default_bin():
    target = Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")
    if not target.is_absolute():
        target = REPO / target
    return target / "debug" / "local-vector-search-mcp"


os.environ.setdefault("LVS_BIN", str(_default_bin()))
os.environ.setdefault("LVS_FIXTURE", str(REPO / "tests" / "fixtures" / "ja"))
os.environ.setdefault("LVS_SHARED", os.environ.get("LVS_SHARED_DIR") or str(REPO.parent / "shared"))


def pytest_configure(config):
    if not os.access(os.environ["LVS_BIN"], os.X_OK):
        raise pytest.UsageError(
            f"LVS_BIN={os.environ['LVS_BIN']} is not an executable: build it first "
            "(cargo build --locked --bin local-vector-search-mcp) or set LVS_BIN"
        )


@pytest.fixture(scope="session")
def embed_endpoint():
    """`http://127.0.0.1:<port>/v1` of a fake OpenAI-compatible embedding server (64 dimensions)."""
    server = FakeEmbed(dims=64).start()
    yield server.endpoint
    server.stop()


@pytest.fixture(scope="session", autouse=True)
def projects_under_pytest_temp(tmp_path_factory):
    """The tests' projects (tempfile.mkdtemp) go under pytest's temp folder, which pytest prunes."""
    tempfile.tempdir = str(tmp_path_factory.mktemp("projects"))
    yield
    tempfile.tempdir = None
