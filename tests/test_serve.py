"""`optimizer serve` (optimizer/proxy.py) run as a subprocess, spoken to with the real mcp client (`ServerPool`).

What a client of the proxy must see: exactly the overlay's view of the upstream's tools (`apply(catalog, overlay)`),
calls that reach the original tools with results identical to calling the upstream directly, the proxy's own
identity instead of the upstream's, error results for unknown names and timeouts, the upstream shut down when the
proxy stops, and exit 2 naming the file for a bad overlay.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from optimizer.definitions import Catalog, apply
from optimizer.files.patch import load_overlay
from optimizer.servers import CallOutcome, ServerPool, ServerSpec, python_command

REPO = Path(__file__).resolve().parent.parent
SUPPORT = REPO / "examples" / "support" / "server.py"
REFERENCE = REPO / "examples" / "support" / "reference-overlay.json"
TIME_SERVER = Path(sys.executable).with_name("mcp-server-time")
PROXY = (sys.executable, "-c", "from optimizer.cli import main; main()", "serve")

RENAMED = {  # a rename, a new description and parameter description, a lean schema, under a namespace prefix
    "namespace": {"scheme": "prefix", "word": "acme"},
    "tools": {"get_customer": {"name": "find_customer",
                               "description": "Look up one customer by email, phone or id (C-1004).",
                               "parameters": {"query": "Email, phone (+1-555-0104) or customer id."},
                               "lean_schema": True}},
}
SUPPORT_CALLS = [  # (original name, arguments): an answer, a business error, a validation error
    ("get_customer", {"query": "C-1004"}),
    ("get_account", {"id": "C-1009"}),
    ("list_orders", {"customer": "C-1004", "since": "March"}),
]

VAULT_SOURCE = '''\
"""A throwaway upstream for the proxy tests: an identity of its own, structured results, several content blocks,
a result `_meta`, a slow tool, and its process ids."""
import asyncio
import os

from pydantic import BaseModel
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, ImageContent, TextContent, ToolAnnotations

server = MCPServer("vault-upstream", version="9.9.9", instructions="VAULT-INSTRUCTIONS: call vault tools first.",
                   log_level="WARNING")


class Sum(BaseModel):
    total: int


@server.tool(title="Add two numbers", annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
def add(a: int, b: int) -> Sum:
    """Add two integers."""
    return Sum(total=a + b)


@server.tool()
def blocks(word: str) -> CallToolResult:
    """Answer with a text block, an image block, structured content and a result _meta."""
    return CallToolResult(content=[TextContent(type="text", text=f"word: {word}"),
                                   ImageContent(type="image", data="iVBORw0KGgo=", mime_type="image/png")],
                          structured_content={"word": word, "missing": None}, meta={"vault/trace": "t-1"})


@server.tool(structured_output=False)
def fail(kind: str) -> str:
    """Always fail."""
    raise ToolError(f"{kind}: the vault is locked")


@server.tool(structured_output=False)
async def hang(seconds: float) -> str:
    """Sleep, then answer."""
    await asyncio.sleep(seconds)
    return f"slept {seconds:g} s"


@server.tool(structured_output=False)
def pids() -> str:
    """This process's id and its parent's."""
    return f"{os.getpid()} {os.getppid()}"


server.run()
'''
VAULT_OVERLAY = {"tools": {"add": {"name": "sum_numbers", "description": "Sum two integers a and b."},
                           "hang": {"parameters": {"seconds": "How long to sleep, in seconds."}}}}
VAULT_CALLS = [("add", {"a": 2, "b": 40}), ("blocks", {"word": "héllo"}), ("fail", {"kind": "business"})]


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def write_json(path: Path, value: object) -> Path:
    path.write_text(json.dumps(value, indent=2), encoding="utf-8")
    return path


def proxy_argv(server: str, overlay: Path, *extra: str) -> tuple[str, ...]:
    return (*PROXY, "--server", server, "--overlay", str(overlay), *extra)


def client_of(pool: ServerPool) -> Any:
    """The pool's live mcp `Client` (white-box: raw results and the server's identity are not in CallOutcome)."""
    client = pool._connections[0].client
    assert client is not None
    return client


def wire(result: Any) -> dict[str, Any]:
    """A CallToolResult as it goes over the wire, without the result `_meta` (which names the server)."""
    return result.model_dump(by_alias=True, mode="json", exclude_none=True, exclude={"meta"})


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def outcome_key(outcome: CallOutcome) -> tuple[str, bool, Any]:
    return outcome.text, outcome.is_error, outcome.structured


async def direct(spec: ServerSpec, calls: list[tuple[str, dict[str, Any]]]) -> tuple[Catalog, list[Any]]:
    """The upstream's own catalog and raw results for `calls`."""
    async with ServerPool(spec, connect_timeout=60) as pool:
        catalog = await pool.list_tools()
        return catalog, [await client_of(pool).call_tool(name, args) for name, args in calls]


# --- in front of examples/support -----------------------------------------------------------------------


@pytest.fixture(scope="session")  # not module: tests reach a worker one at a time, modules interleaved
def support_direct() -> tuple[Catalog, list[CallOutcome]]:
    async def go() -> tuple[Catalog, list[CallOutcome]]:
        async with ServerPool(ServerSpec.parse(python_command(str(SUPPORT)))) as pool:
            return await pool.list_tools(), [await pool.call(name, args) for name, args in SUPPORT_CALLS]

    return run(go())


@pytest.fixture(params=["stdio-reference", "http-renamed"])
def support_proxy(request: pytest.FixtureRequest, tmp_path: Path, background: Callable[..., Any],
                  free_port: Callable[[], int]) -> Iterator[tuple[ServerSpec, Path]]:
    """The proxy in front of examples/support: over stdio with the reference overlay (upstream over stdio), or
    over HTTP with a rename + prefix overlay (upstream over HTTP, reached by URL with a --header)."""
    if request.param == "stdio-reference":
        yield ServerSpec(argv=proxy_argv(python_command(str(SUPPORT)), REFERENCE)), REFERENCE
        return
    overlay = write_json(tmp_path / "renamed.json", RENAMED)
    upstream_port, port = free_port(), free_port()
    with background([sys.executable, str(SUPPORT), "--http", str(upstream_port)], port=upstream_port), \
            background([*proxy_argv(f"http://127.0.0.1:{upstream_port}/mcp", overlay, "--http", str(port),
                                    "--header", "X-Probe: 1")], port=port):
        yield ServerSpec.parse(f"http://127.0.0.1:{port}/mcp"), overlay


@pytest.mark.slow
def test_support_lists_the_overlay_and_calls_reach_the_originals(
    support_proxy: tuple[ServerSpec, Path], support_direct: tuple[Catalog, list[CallOutcome]]
) -> None:
    spec, overlay_path = support_proxy
    catalog, expected = support_direct
    candidate = load_overlay(overlay_path, catalog)
    exposed = apply(catalog, candidate)
    by_original = {original: name for name, original in exposed.routing.items()}

    async def go() -> tuple[Catalog, str, list[CallOutcome], list[CallOutcome]]:
        async with ServerPool(spec, connect_timeout=60) as pool:
            listed = await pool.list_tools()
            calls = [await pool.call(by_original[name], args) for name, args in SUPPORT_CALLS]
            unknown = [await pool.call("no_such_tool", {})]
            if by_original["get_customer"] != "get_customer":  # renamed: the original name is not served
                unknown.append(await pool.call("get_customer", {"query": "C-1004"}))
            return listed, pool.server_name, calls, unknown

    listed, name, calls, unknown = run(go())
    assert listed.tools == exposed.tools  # names, descriptions, schemas, output schemas, annotations, titles
    assert sorted(exposed.routing.values()) == sorted(catalog.names)  # one per upstream tool, never another
    assert [outcome_key(o) for o in calls] == [outcome_key(o) for o in expected]
    assert "Dana Whitfield" in calls[0].text and calls[1].is_error and calls[2].is_error
    assert name == ("acme" if candidate.word else "optimizer-serve") != catalog.server_name
    assert all(o.is_error for o in unknown) and "no_such_tool" in unknown[0].text
    if candidate.word:  # the original name of a renamed tool is not callable through the proxy
        assert len(unknown) == 2 and "get_customer" in unknown[1].text
        assert {t.name for t in listed.tools} >= {"acme_find_customer", "acme_lookup_order"}
        lean = listed.get("acme_find_customer").input_schema  # FastMCP's generated titles are not served
        assert "title" not in lean and "title" not in lean["properties"]["query"]
        assert "title" in listed.get("acme_lookup_order").input_schema


# --- a throwaway upstream with its own identity, structured results and a slow tool ----------------------


@pytest.fixture(scope="session")  # not module: tests reach a worker one at a time, modules interleaved
def vault(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Catalog, list[Any]]:
    """The vault server's script, the overlay, and its own catalog and raw results."""
    root = tmp_path_factory.mktemp("vault")
    script = root / "vault_server.py"
    script.write_text(VAULT_SOURCE, encoding="utf-8")
    catalog, results = run(direct(ServerSpec.parse(python_command(str(script))), VAULT_CALLS))
    return script, write_json(root / "overlay.json", VAULT_OVERLAY), catalog, results


@pytest.mark.slow
def test_over_http_results_are_unchanged_identity_is_its_own_and_sigterm_closes_the_upstream(
    vault: tuple[Path, Path, Catalog, list[Any]], background: Callable[..., Any], free_port: Callable[[], int],
) -> None:
    script, overlay, catalog, expected = vault
    exposed = apply(catalog, load_overlay(overlay, catalog))
    by_original = {original: name for name, original in exposed.routing.items()}
    port = free_port()

    async def go() -> dict[str, Any]:
        async with ServerPool(ServerSpec.parse(f"http://127.0.0.1:{port}/mcp"), connect_timeout=60) as pool:
            client = client_of(pool)
            seen: dict[str, Any] = {"info": client.server_info, "instructions": client.instructions}
            seen["tools"] = (await pool.list_tools()).tools
            seen["raw"] = [await client.call_tool(by_original[n], a) for n, a in VAULT_CALLS]
            started = time.monotonic()
            seen["slow"] = await pool.call("hang", {"seconds": 30})
            seen["slow_s"] = time.monotonic() - started
            seen["after"] = await pool.call("hang", {"seconds": 0})
            seen["pids"] = [int(p) for p in (await pool.call("pids", {})).text.split()]
            return seen

    argv = proxy_argv(python_command(str(script)), overlay, "--tool-timeout", "0.5", "--http", str(port))
    with background(argv, port=port) as proc:
        seen = run(go())
        upstream_pid, proxy_pid = seen["pids"]
        assert proxy_pid == proc.pid and alive(upstream_pid)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
        assert not alive(upstream_pid)  # the proxy closed its upstream before it exited

    assert seen["tools"] == exposed.tools
    add = next(t for t in seen["tools"] if t.name == "sum_numbers")
    assert add.title == "Add two numbers" and add.output_schema and add.annotations == catalog.get("add").annotations
    assert [wire(r) for r in seen["raw"]] == [wire(r) for r in expected]  # content blocks, isError, structured
    assert seen["raw"][0].structured_content == {"total": 42}
    assert [b.type for b in seen["raw"][1].content] == ["text", "image"]
    assert seen["raw"][1].structured_content == {"word": "héllo", "missing": None}
    assert seen["raw"][2].is_error and "the vault is locked" in seen["raw"][2].content[0].text
    info = seen["info"]
    assert (info.name, info.version) == ("optimizer-serve", "0.1.0") and seen["instructions"] is None
    leaked = json.dumps([r.model_dump(by_alias=True, mode="json") for r in seen["raw"]])
    assert "vault-upstream" not in leaked and "9.9.9" not in leaked and "vault/trace" not in leaked
    assert seen["slow"].is_error and "did not answer within 0.5 s" in seen["slow"].text and seen["slow_s"] < 10
    assert (seen["after"].text, seen["after"].is_error) == ("slept 0 s", False)


@pytest.mark.parametrize("ending", ["eof", "sigterm"])
@pytest.mark.slow
def test_over_stdio_the_proxy_stops_on_eof_or_sigterm_and_closes_its_upstream(
    ending: str, vault: tuple[Path, Path, Catalog, list[Any]]
) -> None:
    """Raw JSON-RPC lines over pipes (no client library that would escalate to signals): the proxy must exit 0 by
    itself, with its upstream already gone, and write nothing but protocol messages on stdout."""
    script, overlay, _, _ = vault
    proc = subprocess.Popen(proxy_argv(python_command(str(script)), overlay), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8")
    try:
        assert proc.stdin is not None and proc.stdout is not None
        for message in ({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "test", "version": "0"}}},
                        {"jsonrpc": "2.0", "method": "notifications/initialized"},
                        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                         "params": {"name": "pids", "arguments": {}}}):
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
        lines = [json.loads(proc.stdout.readline()) for _ in range(2)]
        assert lines[0]["result"]["serverInfo"]["name"] == "optimizer-serve"
        upstream_pid, proxy_pid = map(int, lines[1]["result"]["content"][0]["text"].split())
        assert proxy_pid == proc.pid and alive(upstream_pid)
        if ending == "eof":
            proc.stdin.close()
        else:
            proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
        assert not alive(upstream_pid)
        assert proc.stdout.read() == ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


# --- in front of a published server ------------------------------------------------------------------------


@pytest.mark.published
@pytest.mark.slow
def test_in_front_of_the_published_time_server(tmp_path: Path) -> None:
    if not TIME_SERVER.exists():
        pytest.skip(f"mcp-server-time is not installed next to {sys.executable} (pip install mcp-server-time)")
    upstream = f"{TIME_SERVER} --local-timezone UTC"
    overlay = write_json(tmp_path / "time.json", {
        "namespace": {"scheme": "suffix", "word": "clock"},
        "tools": {"get_current_time": {"name": "current_time", "description": "Current time in one IANA zone.",
                                       "parameters": {"timezone": "IANA zone name, e.g. Europe/Paris or UTC."}}}})
    convert = {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}
    catalog, expected = run(direct(ServerSpec.parse(upstream), [("convert_time", convert)]))
    exposed = apply(catalog, load_overlay(overlay, catalog))

    async def go() -> tuple[Catalog, str, Any, CallOutcome]:
        async with ServerPool(ServerSpec(argv=proxy_argv(upstream, overlay)), connect_timeout=60) as pool:
            converted = await client_of(pool).call_tool("convert_time_clock", convert)
            return await pool.list_tools(), pool.server_name, converted, await pool.call("current_time_clock",
                                                                                          {"timezone": "UTC"})

    listed, name, converted, now = run(go())
    assert listed.tools == exposed.tools
    assert sorted(t.name for t in listed.tools) == ["convert_time_clock", "current_time_clock"]
    assert name == "clock"
    assert wire(converted) == wire(expected[0])
    assert not now.is_error and json.loads(now.text)["timezone"] == "UTC"


# --- errors before serving -----------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_bad_overlay_or_upstream_exits_2_before_serving(run_cli: Any, tmp_path: Path) -> None:
    typo = write_json(tmp_path / "typo-overlay.json", {"tools": {"get_custmer": {"description": "x"}}})
    wrong_param = write_json(tmp_path / "param-overlay.json",
                             {"tools": {"get_customer": {"parameters": {"email": "x"}}}})
    broken = tmp_path / "broken.json"
    broken.write_text('{"tools": {', encoding="utf-8")
    support = python_command(str(SUPPORT))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        cases = {
            "typo": ("--server", support, "--overlay", typo),
            "param": ("--server", support, "--overlay", wrong_param),
            "json": ("--server", support, "--overlay", broken),
            "missing": ("--server", str(tmp_path / "no-such-server"), "--overlay", REFERENCE),
            "port": ("--server", support, "--overlay", REFERENCE, "--http", str(busy.getsockname()[1])),
        }
        results = {key: run_cli("serve", *args) for key, args in cases.items()}  # in process: each fails early
    for key, result in results.items():
        assert result.returncode == 2, (key, result.stderr)
        assert result.stdout == "", key  # stdout is the protocol channel: nothing else is ever written there
    assert "typo-overlay.json" in results["typo"].stderr and "get_custmer" in results["typo"].stderr
    assert "param-overlay.json" in results["param"].stderr and "'email'" in results["param"].stderr
    assert "broken.json:1" in results["json"].stderr
    assert "no-such-server" in results["missing"].stderr
    assert "cannot listen on 127.0.0.1:" in results["port"].stderr
