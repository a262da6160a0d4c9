"""`optimizer serve`: an MCP server that shows an overlay's definitions in front of another MCP server.

Contract:
- Start: connect to the upstream, list every page of its tools, apply the overlay (`definitions.apply`).
  An unreadable or invalid overlay (unknown tool or parameter, clashing or invalid names), an upstream that
  does not start or does not speak MCP, or an HTTP port that cannot be bound raises `ProxyError` before
  anything is served.
- tools/list: exactly the exposed tools, one per upstream tool and never another: the overlay's names,
  descriptions and parameter descriptions; the upstream's input schema otherwise unchanged; its output
  schema, annotations and title passed through. The list is fixed at start. With a pin (`optimizer pin`), a
  tool whose exposed definition differs from its pinned one is not listed (and so cannot be called); each is
  named in the log and, with how it differs, in the tools/list result's `_meta` (`WITHHELD_KEY`).
- tools/call: the exposed name is routed back to its original and the arguments are forwarded unchanged.
  The upstream's result comes back unchanged (content blocks, isError, structuredContent); only the
  result's `_meta` is dropped, because on 2026-07-28 connections it names the upstream server. An unknown
  name (an original name the overlay renamed included), an upstream timeout, an invalid upstream result
  and a crashed upstream (which is restarted) are error results, never protocol errors.
- Identity: the proxy answers with its own serverInfo (name: the overlay's namespace word when it sets one,
  else "optimizer-serve"; version: this package's) and no instructions; nothing of the upstream's identity
  metadata is passed on.
- Transports: stdio (stdout is the protocol; logs and the upstream's stderr go to stderr) or streamable
  HTTP on http://127.0.0.1:PORT/mcp. Serving stops when the stdio client closes stdin or on SIGINT/SIGTERM;
  the upstream is shut down before `serve` returns.

Only this module and `servers/connections.py` import `mcp`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import stat
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mcp.types as types
import uvicorn
from mcp import MCPError
from mcp.server import Server
from mcp.server.stdio import stdio_server

from optimizer import __version__
from optimizer.definitions import Candidate, Catalog, DefinitionError, Exposed, ToolDef, apply
from optimizer.files.patch import load_overlay
from optimizer.files.pin import LockError, differences, load_lock
from optimizer.servers.connections import (
    CONNECTION_CLOSED,
    REQUEST_TIMEOUT,
    ServerCrashed,
    ServerError,
    ServerPool,
    ServerSpec,
)

logger = logging.getLogger(__name__)

DEFAULT_NAME = "optimizer-serve"
HOST = "127.0.0.1"
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
WITHHELD_KEY = "io.github.mcp-tool-optimizer/withheld"
"""The tools/list `_meta` key of the note naming the tools `--pin` left out."""
STOP_GRACE_S = 5.0
"""Seconds a stopped stdio session gets to finish before it is cancelled."""


class ProxyError(RuntimeError):
    """The proxy cannot start serving; the message is a paragraph a user can act on (it names the overlay
    file for overlay problems)."""


@dataclass(frozen=True)
class ProxyConfig:
    """What `optimizer serve` needs; every field is set from the command line."""

    server: ServerSpec
    """The upstream MCP server (stdio command or http(s) URL, with its headers)."""
    overlay: Path | None
    """The overlay JSON applied to the upstream's definitions; None serves them as they are (with a pin: only
    those that still match it)."""
    http_port: int | None = None
    """Serve streamable HTTP on 127.0.0.1:PORT/mcp (0 picks a free port); None serves stdio."""
    tool_timeout: float = 60.0
    """Seconds an upstream tool call may take before it becomes an error result."""
    connect_timeout: float = 30.0
    """Seconds the upstream may take to complete the MCP handshake at start."""
    pin: Path | None = None
    """A tools lock (`optimizer pin`): only tools whose exposed definition matches it are served."""


class _Upstream(ServerPool):
    """The upstream connection: a `ServerPool` that also returns a call's raw `CallToolResult`.

    `ServerPool.call` flattens results to text for the agent loop; a proxy must pass the blocks on. The
    failure handling mirrors `ServerPool.call` (same restart rule) but turns every failure into an error
    result naming the tool as the client called it.
    """

    async def call_result(self, name: str, arguments: dict[str, Any] | None, *, shown_as: str) -> types.CallToolResult:
        """Call the upstream tool `name` (ORIGINAL name) with `arguments` exactly as given. Never raises for a
        tool-level or connection failure: those are error results mentioning `shown_as`."""
        conn = self._pick()
        if conn.client is None and self._restart_lock.locked():
            async with self._restart_lock:  # a restart is under way: wait for it rather than fail
                pass
        generation = conn.generation
        conn.busy += 1
        try:
            client = conn.client
            if client is None:
                raise ServerCrashed("the upstream connection is down")
            return await client.call_tool(name, arguments, read_timeout_seconds=self.tool_timeout)
        except MCPError as exc:
            if exc.code == REQUEST_TIMEOUT:
                return error_result(f"The tool {shown_as} did not answer within {self.tool_timeout:g} s "
                                    "and was abandoned.")
            if exc.code != CONNECTION_CLOSED:
                return error_result(f"Error: {exc}")
            await self._restart(conn, generation)
            return error_result(f"The upstream server closed the connection during {shown_as}; it was restarted. "
                                "Retry the call.")
        except ServerCrashed as exc:
            await self._restart(conn, generation)
            return error_result(f"The tool {shown_as} is unavailable: {exc}; it is being restarted. Retry the call.")
        except RuntimeError as exc:  # the client rejected structured content that breaks the output schema
            return error_result(f"Error: the tool's result was invalid: {exc}")
        except Exception as exc:  # noqa: BLE001 - transport failure: restart, answer with an error result
            logger.warning("upstream call %s failed: %s: %s; restarting the upstream", name, type(exc).__name__, exc)
            await self._restart(conn, generation)
            return error_result(f"The connection to the upstream server failed during {shown_as}; it was "
                                "restarted. Retry the call.")
        finally:
            conn.busy -= 1


def error_result(text: str) -> types.CallToolResult:
    """An `isError` tool result carrying one text block."""
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def wire_tool(tool: ToolDef) -> types.Tool:
    """A definition in the SDK's `Tool` model, fields passed through as they are."""
    wire: dict[str, Any] = {"name": tool.name, "description": tool.description,
                            "inputSchema": dict(tool.input_schema)}
    if tool.title is not None:
        wire["title"] = tool.title
    if tool.output_schema is not None:
        wire["outputSchema"] = dict(tool.output_schema)
    if tool.annotations is not None:
        wire["annotations"] = dict(tool.annotations)
    return types.Tool.model_validate(wire)


def server_name(candidate: Candidate) -> str:
    """The proxy's serverInfo name: the overlay's own namespace word, else "optimizer-serve" (never the
    upstream's name)."""
    return candidate.word.strip() if candidate.word else DEFAULT_NAME


def build_server(exposed: Exposed, upstream: _Upstream, *, name: str,
                 withheld: dict[str, list[str]] | None = None) -> Server[Any]:
    """The low-level MCP server answering tools/list and tools/call for `exposed`, calling `upstream`. Tools the
    pin withheld are named, with how they differ, in the tools/list result's `_meta` under `WITHHELD_KEY`."""
    tools = [wire_tool(t) for t in exposed.tools]
    schemas = {t.name: dict(t.input_schema) for t in exposed.tools}
    note = {WITHHELD_KEY: [{"tool": tool, "differences": why} for tool, why in withheld.items()]} if withheld else None

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[t.model_copy(deep=True) for t in tools], _meta=note)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        original = exposed.original(params.name)
        if original is None:
            return error_result(f"Unknown tool: {params.name}")
        result = await upstream.call_result(original, params.arguments, shown_as=params.name)
        return result.model_copy(update={"meta": None})

    return Server(name, version=__version__, on_list_tools=list_tools, on_call_tool=call_tool,
                  get_tool_input_schema=schemas.get)


async def serve(config: ProxyConfig) -> None:
    """Connect, apply the overlay, then serve until the client leaves or a stop signal arrives.

    Raises ProxyError (before serving) for a bad overlay, an upstream that does not start, or a port in use.
    The upstream is closed on every way out."""
    try:
        if config.overlay is not None:
            load_overlay(config.overlay)  # a malformed file fails before any upstream process is started
        lock = load_lock(config.pin) if config.pin else None
    except (DefinitionError, LockError) as exc:
        raise ProxyError(str(exc)) from None
    sock = None if config.http_port is None else _bind(config.http_port)  # so does a port in use
    upstream = _Upstream(config.server, tool_timeout=config.tool_timeout, connect_timeout=config.connect_timeout)
    try:
        await upstream.__aenter__()
    except ServerError as exc:
        if sock is not None:
            sock.close()
        raise ProxyError(str(exc)) from None
    stop_seen = asyncio.Event()
    try:
        try:
            catalog = await upstream.list_tools()
            candidate = load_overlay(config.overlay, catalog) if config.overlay is not None else Candidate()
            exposed = apply(catalog, candidate)
        except (ServerError, DefinitionError) as exc:
            raise ProxyError(str(exc)) from None
        withheld: dict[str, list[str]] = {}
        if lock is not None:
            exposed, withheld = _pinned_only(exposed, lock, catalog.server_name)
        server = build_server(exposed, upstream, name=server_name(candidate), withheld=withheld)
        where = f"{len(exposed.tools)} tools of {config.server.display}" + (
            f" with {config.overlay}" if config.overlay is not None else " as it defines them")
        with _stop_on_signals() as stop:
            stop_seen = stop
            if sock is None:
                logger.info("serving %s over stdio", where)
                await _serve_stdio(server, stop)
            else:
                logger.info("serving %s at http://%s:%d/mcp", where, HOST, sock.getsockname()[1])
                await _serve_http(server, sock, stop)
    finally:
        if sock is not None:
            sock.close()
        await upstream.__aexit__(None, None, None)
        why = "a stop signal" if stop_seen.is_set() else "the client left"
        logger.info("stopped after %s; the upstream was shut down", why)


def _pinned_only(exposed: Exposed, lock: dict[str, Any], server: str) -> tuple[Exposed, dict[str, list[str]]]:
    """The exposed tools whose definition matches the pin, and the others (name -> how each differs), which are
    logged and left out."""
    changed: dict[str, list[str]] = {}
    for difference in differences(lock, Catalog(server, exposed.tools)):
        if difference.kind != "tool-removed":
            changed.setdefault(difference.tool, []).append(f"{difference.kind}: {difference.detail}")
    for name, why in changed.items():
        logger.warning("not serving %s: its definition no longer matches the pin (%s)", name, "; ".join(why))
    return Exposed(tools=tuple(t for t in exposed.tools if t.name not in changed),
                   routing={k: v for k, v in exposed.routing.items() if k not in changed}), changed


@contextlib.contextmanager
def _stop_on_signals() -> Iterator[asyncio.Event]:
    """An event set by SIGINT/SIGTERM while the block runs (the previous handlers come back afterwards)."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    installed = []
    for sig in STOP_SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, stop.set)
            installed.append(sig)
    try:
        yield stop
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)


async def _serve_stdio(server: Server[Any], stop: asyncio.Event) -> None:
    """Serve one client over stdin/stdout until it closes stdin or `stop` is set. A stop ends the input as if
    the client had closed stdin, so the session winds down the ordinary way."""
    async with _stdio_streams() as (read_stream, write_stream, end_input):
        run = asyncio.ensure_future(server.run(read_stream, write_stream, server.create_initialization_options()))
        halt = asyncio.ensure_future(stop.wait())
        try:
            done, _ = await asyncio.wait({run, halt}, return_when=asyncio.FIRST_COMPLETED)
            if run not in done:
                end_input()
                await asyncio.wait({run}, timeout=STOP_GRACE_S)
        finally:
            for task in (run, halt):
                task.cancel()
            await asyncio.gather(run, halt, return_exceptions=True)
        if not run.cancelled():
            run.result()  # re-raises what ended the session, if anything did


@contextlib.asynccontextmanager
async def _stdio_streams() -> AsyncIterator[tuple[Any, Any, Callable[[], None]]]:
    """The SDK's stdio transport with stdin read through the event loop: (read stream, write stream, a function
    that ends the input).

    The SDK's own stdin reader blocks in a worker thread that nothing but EOF ends, so a stop signal while the
    client keeps stdin open would wait forever. Pipes, sockets and terminals are read here instead (and left
    blocking again afterwards); a regular file or /dev/null, which reach EOF anyway, keep the SDK's reader."""
    if not _is_stream(0):
        async with stdio_server() as (read_stream, write_stream):
            yield read_stream, write_stream, lambda: None
        return
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    wire = os.dup(0)
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                                os.fdopen(wire, "rb", buffering=0))
    try:
        # The SDK types `stdin` as an anyio.AsyncFile[str] but only iterates it: `_Lines` is that iterator of lines.
        async with stdio_server(stdin=_Lines(reader)) as (read_stream, write_stream):  # type: ignore[arg-type]
            yield read_stream, write_stream, reader.feed_eof
    finally:
        with contextlib.suppress(OSError):
            os.set_blocking(wire, True)  # the flag is shared with the client's end of a terminal
        transport.close()


def _is_stream(fd: int) -> bool:
    """A pipe, socket or terminal (what the event loop can poll); False for a regular file, /dev/null or a
    closed fd, which all reach EOF on their own."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)


class _Lines:
    """An asyncio stream as the async iterator of text lines the SDK's stdio transport reads (lines of any
    length; UTF-8 with replacement, like the SDK's own reader)."""

    CHUNK = 1 << 16

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader
        self._buffer = bytearray()

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        scanned = 0
        while (newline := self._buffer.find(b"\n", scanned)) < 0:
            scanned = len(self._buffer)
            chunk = await self._reader.read(self.CHUNK)
            if not chunk:
                if not self._buffer:
                    raise StopAsyncIteration
                newline = len(self._buffer) - 1  # a last line without a newline
                break
            self._buffer += chunk
        line = bytes(self._buffer[:newline + 1])
        del self._buffer[:newline + 1]
        return line.decode("utf-8", errors="replace")


def _bind(port: int) -> socket.socket:
    """A TCP socket bound to 127.0.0.1:port, not listening yet (uvicorn listens on it once the upstream is up and
    the overlay applied, so clients are refused until then); a port in use is a ProxyError."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        raise ProxyError(f"cannot listen on {HOST}:{port}: {exc.strerror or exc}") from None
    return sock


class _Uvicorn(uvicorn.Server):
    """uvicorn without its own signal handling: the proxy owns SIGINT/SIGTERM (uvicorn would re-raise them
    after its shutdown, killing the process before the upstream is closed)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def _serve_http(server: Server[Any], sock: socket.socket, stop: asyncio.Event) -> None:
    """Serve streamable HTTP at /mcp on `sock` until `stop` is set (localhost Host-header checks on)."""
    app = server.streamable_http_app(streamable_http_path="/mcp", host=HOST)
    web = _Uvicorn(uvicorn.Config(app, log_config=None, access_log=False, log_level="warning",
                                  timeout_graceful_shutdown=3))

    async def watch() -> None:
        await stop.wait()
        web.should_exit = True

    watcher = asyncio.ensure_future(watch())
    try:
        await web.serve(sockets=[sock])
    finally:
        watcher.cancel()
