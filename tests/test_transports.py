"""Transport contract: every way of reaching a server (in memory, stdio, streamable HTTP) passes the same suite.

The toy server (tests/servers/toy_server.py) is connected in memory, started over stdio per test, and served
over HTTP by one subprocess per module. The example servers are checked over stdio and HTTP.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from optimizer.definitions import Catalog
from optimizer.servers import CallOutcome, ServerPool, ServerSpec, python_command

REPO = Path(__file__).resolve().parent.parent
SERVERS = Path(__file__).resolve().parent / "servers"
TOY = SERVERS / "toy_server.py"
PAGED = SERVERS / "paged_server.py"
EXAMPLES = REPO / "examples"
TOY_TOOLS = {"echo", "add", "fail", "hang", "crash", "pid", "big"}
READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}


def load_server(path: Path) -> ModuleType:
    """Import a test server module from its file (for the in-memory transport)."""
    spec = importlib.util.spec_from_file_location(f"_test_server_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(coro: Any) -> Any:
    return asyncio.run(coro)


async def listing(spec: ServerSpec, **kwargs: Any) -> Catalog:
    async with ServerPool(spec, **kwargs) as pool:
        return await pool.list_tools()


async def one_call(spec: ServerSpec, name: str, arguments: dict[str, Any], **kwargs: Any) -> CallOutcome:
    async with ServerPool(spec, **kwargs) as pool:
        return await pool.call(name, arguments)


# --- transports ------------------------------------------------------------------------------------


@pytest.fixture(scope="session")  # not module: tests reach a worker one at a time, modules interleaved
def toy_module() -> ModuleType:
    return load_server(TOY)


@pytest.fixture(scope="session")  # not module: tests reach a worker one at a time, modules interleaved
def toy_http(background: Callable[..., Any], free_port: Callable[[], int]) -> Iterator[str]:
    port = free_port()
    with background([sys.executable, str(TOY), "--http", str(port)], port=port):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture(params=["memory", "stdio", "http"])
def toy(request: pytest.FixtureRequest, toy_module: ModuleType) -> ServerSpec:
    """The toy server over each transport."""
    if request.param == "memory":
        return ServerSpec(inproc=toy_module.server)
    if request.param == "stdio":
        return ServerSpec.parse(python_command(str(TOY)))
    return ServerSpec.parse(request.getfixturevalue("toy_http"))


# --- the contract ----------------------------------------------------------------------------------


def test_lists_every_tool_with_schemas_and_annotations(toy: ServerSpec) -> None:
    catalog = run(listing(toy))
    assert catalog.server_name == "toy"
    tools = {t.name: t for t in catalog.tools}
    assert set(tools) == TOY_TOOLS
    assert tools["echo"].description == "Echo the text back unchanged."
    assert tools["echo"].input_schema["properties"]["text"]["type"] == "string"
    assert tools["echo"].input_schema["required"] == ["text"]
    assert tools["add"].input_schema["required"] == ["a", "b"]
    assert tools["add"].output_schema is not None
    assert tools["add"].output_schema["properties"]["result"]["type"] == "integer"
    assert tools["echo"].output_schema is None  # structured_output=False
    assert tools["hang"].input_schema["properties"]["seconds"]["type"] == "number"
    assert tools["add"].annotations == READ_ONLY  # the wire's camelCase keys, not snake_case attributes
    assert tools["fail"].annotations is None


def test_calls_with_arguments(toy: ServerSpec) -> None:
    async def go() -> list[CallOutcome]:
        async with ServerPool(toy) as pool:
            return [await pool.call("echo", {"text": "héllo wörld"}), await pool.call("big", {"n": 200_000})]

    echo, big = run(go())
    assert (echo.text, echo.is_error) == ("héllo wörld", False)
    assert echo.duration_s > 0
    assert big.text == "x" * 200_000 and not big.is_error


def test_error_results_carry_their_text(toy: ServerSpec) -> None:
    async def go() -> list[CallOutcome]:
        async with ServerPool(toy) as pool:
            return [await pool.call("fail", {"kind": "business"}), await pool.call("no_such_tool", {}),
                    await pool.call("add", {"a": "not a number", "b": 1})]

    failed, unknown, invalid = run(go())
    assert failed.is_error and "business: this tool always fails" in failed.text
    assert unknown.is_error and "no_such_tool" in unknown.text
    assert invalid.is_error and invalid.text


def test_structured_content(toy: ServerSpec) -> None:
    outcome = run(one_call(toy, "add", {"a": 2, "b": 40}))
    assert not outcome.is_error
    assert outcome.structured == {"result": 42}
    assert outcome.text == "42"


def test_slow_tool_times_out_as_an_error_result_and_the_connection_survives(toy: ServerSpec) -> None:
    async def go() -> tuple[CallOutcome, float, CallOutcome, int]:
        async with ServerPool(toy, tool_timeout=0.5) as pool:
            started = time.monotonic()
            slow = await pool.call("hang", {"seconds": 30})
            elapsed = time.monotonic() - started
            after = await pool.call("echo", {"text": "still here"})
            return slow, elapsed, after, pool.restarts

    slow, elapsed, after, restarts = run(go())
    assert slow.is_error and "did not answer within 0.5 s" in slow.text
    assert elapsed < 5
    assert (after.text, after.is_error) == ("still here", False)
    assert restarts == 0


@pytest.mark.slow
def test_pool_spreads_concurrent_calls_over_its_instances(toy: ServerSpec) -> None:
    async def go() -> tuple[list[int], list[CallOutcome], float]:
        async with ServerPool(toy, instances=3) as pool:
            started = time.monotonic()
            calls = [asyncio.ensure_future(pool.call("hang", {"seconds": 1})) for _ in range(3)]
            await asyncio.sleep(0.2)
            # White-box: each of the three connections carries exactly one of the calls in flight.
            busy = sorted(conn.busy for conn in pool._connections)
            outcomes = await asyncio.gather(*calls)
            return busy, outcomes, time.monotonic() - started

    busy, outcomes, elapsed = run(go())
    assert busy == [1, 1, 1]
    assert [o.text for o in outcomes] == ["slept 1 s"] * 3
    assert elapsed < 2.5  # concurrent: one after another takes 3 s


@pytest.mark.slow
def test_stdio_instances_are_separate_processes() -> None:
    async def go() -> list[CallOutcome]:
        async with ServerPool(ServerSpec.parse(python_command(str(TOY))), instances=3) as pool:
            return list(await asyncio.gather(*(pool.call("pid", {}) for _ in range(3))))

    pids = {o.text for o in run(go())}
    assert len(pids) == 3


@pytest.mark.parametrize("transport", ["memory", "stdio"])
def test_list_tools_follows_cursors(transport: str) -> None:
    spec = (ServerSpec(inproc=load_server(PAGED).server) if transport == "memory"
            else ServerSpec.parse(python_command(str(PAGED))))

    async def go() -> tuple[Catalog, CallOutcome]:
        async with ServerPool(spec) as pool:
            return await pool.list_tools(), await pool.call("tool_24", {"text": "last page"})

    catalog, outcome = run(go())
    assert [t.name for t in catalog.tools] == [f"tool_{i:02d}" for i in range(25)]
    assert catalog.server_name == "paged"
    assert outcome.text == "tool_24: last page"


# --- the example servers ---------------------------------------------------------------------------

EXAMPLE_CASES = {
    "support": ({"get_customer", "lookup_order", "refund_order", "track_shipment"},
                "get_customer", {"query": "C-1004"}, "Dana Whitfield"),
    "workspace": ({"search", "query", "get", "get_item", "list", "schedule"},
                  "get", {"id": "DOC-101"}, "Deploy runbook"),
    "payroll": ({"get_employee", "file_expense", "submit_expense", "request_leave"},
                "get_employee", {"id": "E-00042"}, "Tomás Ortega"),
    "freight": ({"find_port", "quote_rate", "get_shipment", "get_free_time"},
                "quote_rate", {"origin": "DEHAM", "destination": "SGSIN", "container": "45R1", "service": "EXP"},
                '"rate_eur": 4037'),
}


@pytest.fixture(params=["stdio", "http"])
def example_transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.parametrize("example", sorted(EXAMPLE_CASES))
def test_example_server_lists_and_answers(
    example: str, example_transport: str, background: Callable[..., Any], free_port: Callable[[], int]
) -> None:
    script = EXAMPLES / example / "server.py"
    expected, tool, arguments, answer = EXAMPLE_CASES[example]

    async def go(spec: ServerSpec) -> tuple[Catalog, CallOutcome]:
        async with ServerPool(spec) as pool:
            return await pool.list_tools(), await pool.call(tool, arguments)

    if example_transport == "stdio":
        catalog, outcome = run(go(ServerSpec.parse(python_command(str(script)))))
    else:
        port = free_port()
        with background([sys.executable, str(script), "--http", str(port)], port=port):
            catalog, outcome = run(go(ServerSpec.parse(f"http://127.0.0.1:{port}/mcp")))
    assert catalog.server_name == example
    assert expected <= set(catalog.names)
    assert not outcome.is_error, outcome.text
    assert answer in outcome.text
