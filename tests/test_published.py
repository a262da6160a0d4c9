"""Published MCP servers the harness must work with: `mcp-server-time` (PyPI) and
`@modelcontextprotocol/server-everything` (npm). tests/installs.py installs both; without them these tests skip."""

from __future__ import annotations

import asyncio
import json
import shlex
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from optimizer.definitions import Catalog
from optimizer.servers import CallOutcome, ServerPool, ServerSpec

pytestmark = pytest.mark.published

REPO = Path(__file__).resolve().parent.parent
TIME_SERVER = Path(sys.executable).with_name("mcp-server-time")
NPM_PREFIX = REPO / ".ci" / "cache" / "npm"
EVERYTHING = NPM_PREFIX / "node_modules" / ".bin" / "mcp-server-everything"
NODE = shutil.which("node")


def needs_time_server() -> None:
    if not TIME_SERVER.exists():
        pytest.skip(f"mcp-server-time is not installed next to {sys.executable} (pip install mcp-server-time)")


def needs_everything() -> None:
    if NODE is None:
        pytest.skip("node is not on PATH (needed for @modelcontextprotocol/server-everything)")
    if not EVERYTHING.exists():
        pytest.skip(f"{EVERYTHING} is missing; install it with npm install --prefix {NPM_PREFIX} "
                    "@modelcontextprotocol/server-everything (tests/installs.py does)")


async def list_and_call(spec: ServerSpec, name: str, arguments: dict[str, Any]) -> tuple[Catalog, CallOutcome]:
    async with ServerPool(spec, connect_timeout=60) as pool:
        return await pool.list_tools(), await pool.call(name, arguments)


def test_time_server_over_stdio(tmp_path: Path) -> None:
    needs_time_server()
    spec = ServerSpec(argv=(str(TIME_SERVER), "--local-timezone", "UTC"))
    catalog, outcome = asyncio.run(list_and_call(spec, "get_current_time", {"timezone": "UTC"}))
    assert sorted(catalog.names) == ["convert_time", "get_current_time"]
    schema = next(t for t in catalog.tools if t.name == "get_current_time").input_schema
    assert "timezone" in schema["properties"]
    assert not outcome.is_error, outcome.text
    assert json.loads(outcome.text)["timezone"] == "UTC"


@pytest.fixture(params=["stdio", "http"])
def everything(request: pytest.FixtureRequest, background: Callable[..., Any], free_port: Callable[[], int]) -> Any:
    """server-everything over stdio and over streamable HTTP (PORT=n → http://127.0.0.1:n/mcp)."""
    needs_everything()
    if request.param == "stdio":
        yield ServerSpec(argv=(str(NODE), str(EVERYTHING), "stdio"))
        return
    port = free_port()
    with background([str(NODE), str(EVERYTHING), "streamableHttp"], port=port, env={"PORT": str(port)}):
        yield ServerSpec.parse(f"http://127.0.0.1:{port}/mcp")


def test_everything_lists_all_tools_and_echoes(everything: ServerSpec) -> None:
    catalog, outcome = asyncio.run(list_and_call(everything, "echo", {"message": "banana"}))
    assert len(catalog.names) == len(set(catalog.names)) >= 10
    assert {"echo", "get-sum"} <= set(catalog.names)
    echo = next(t for t in catalog.tools if t.name == "echo")
    assert echo.description and "message" in echo.input_schema["properties"]
    assert (outcome.text, outcome.is_error) == ("Echo: banana", False)


def test_eval_against_everything(run_cli: Callable[..., Any], tmp_path: Path) -> None:
    needs_everything()
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "echo-banana", "prompt": "Echo the word banana",
                                 "expect": {"answer": "banana", "tools": ["echo"]}}) + "\n", encoding="utf-8")
    server = shlex.join([str(NODE), str(EVERYTHING), "stdio"])
    catalog = asyncio.run(list_and_call(ServerSpec(argv=(str(NODE), str(EVERYTHING), "stdio")), "echo",
                                        {"message": "x"}))[0]
    destructive = sorted(t.name for t in catalog.tools if t.hint("destructiveHint") is True)
    args = ["eval", "--server", server, "--tasks", tasks, "--models", "sim:lexical", "--runs-dir", tmp_path / "runs",
            "--json"]
    if destructive:  # then a plain eval must refuse, naming them, before running anything
        refused = run_cli(*args)
        assert refused.returncode == 2
        assert "--allow-destructive" in refused.stderr and destructive[0] in refused.stderr
        args.append("--allow-destructive")
    result = run_cli(*args)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["episodes"] == {"run": 1, "cached": 0, "infra_errors": 0, "infra_retried": 0, "changed_state": 0}
    assert report["results"]["sim:lexical"]["train"]["passed"] == 1
