"""Connections to the MCP server under test: stdio commands or streamable-HTTP URLs.

The only module (with `serve.py`, the proxy) that imports `mcp`. A `ServerPool` keeps `instances` connections
open for a whole run; tool calls go to the least busy one. A connection whose server died is
restarted and the call that was in flight raises `ServerCrashed`, which the episode runner records
as an infrastructure fault (never as a model failure). A tool that does not answer within the
timeout is cancelled (the SDK sends notifications/cancelled) and the server is pinged: a server that
answers is alive, and the agent sees the timeout like any other tool failure; a server that answers
nothing is hung, and is restarted like a crashed one (`ServerHung`).
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import urlsplit, urlunsplit

from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import EmptyResult, PingRequest

from optimizer.definitions import Catalog, ToolDef
from optimizer.secrets import SECRET_WORDS, redact_argv, redact_text, scrubbed_environ, secret_values
from optimizer.servers.faults import NOT_MCP, NOT_MCP_GRACE, http_refusal
from optimizer.servers.results import result_text, tool_def

CONNECTION_CLOSED = -32000
REQUEST_TIMEOUT = -32001
MAX_PAGES = 1000
PING_DEADLINE = 3.0
"""Seconds a server gets to answer a ping after a tool call timed out (by then the SDK has sent notifications/cancelled
for the call, so a server that handles one request at a time is free again). Any answer, even an error, shows the
server alive and the timeout stands as the tool's; no answer makes it hung. A slow tool's timeout costs one round
trip more (milliseconds); a hung server's costs this deadline, then a restart."""


class ServerError(RuntimeError):
    """The server could not be started or spoken to; the message is a paragraph a user can act on."""


class ServerCrashed(RuntimeError):
    """The connection died while a call was in flight; the pool has restarted it."""


class ServerHung(ServerCrashed):
    """A call timed out and the server then answered no ping: alive, maybe, but answering nothing (a dead writer, a
    blocked loop). The pool has restarted it; an infrastructure fault like a crash."""


@dataclass(frozen=True)
class ServerSpec:
    """How to reach a server: a command line (stdio) or an http(s) URL ending in the MCP path."""

    argv: tuple[str, ...] = ()
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    inproc: Any = None
    """An `MCPServer`/`Server` object connected in memory (the test transport)."""

    @classmethod
    def parse(cls, text: str, *, headers: Mapping[str, str] | None = None) -> ServerSpec:
        text = text.strip()
        if not text:
            raise ServerError("--server is empty: give a command line (\"python server.py\") or an http(s) URL.")
        if text.startswith(("http://", "https://")):
            return cls(url=text, headers=dict(headers or {}))
        try:
            argv = tuple(shlex.split(text))
        except ValueError as exc:
            raise ServerError(f"cannot split --server {text!r} like a shell would: {exc}") from None
        return cls(argv=argv)

    @property
    def display(self) -> str:
        """A printable form with credentials removed (safe for logs, reports and summary.json)."""
        if self.inproc is not None:
            return f"in-memory:{getattr(self.inproc, 'name', 'server')}"
        if self.url:
            parts = urlsplit(self.url)
            host = parts.hostname or ""
            netloc = host + (f":{parts.port}" if parts.port else "")
            return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
        return shlex.join(redact_argv(self.argv))

    @property
    def secrets(self) -> list[str]:
        """Credential values this spec carries (argv values hidden by redaction, header values, values of its own
        environment variables named like credentials, as an `mcpServers` entry's `env` sets them)."""
        hidden = [a for a, r in zip(self.argv, redact_argv(self.argv), strict=True) if a != r]
        pieces = [v.partition("=")[2] or v for v in hidden]
        named = [v for k, v in self.env.items() if SECRET_WORDS.search(k) and v]
        return [*pieces, *self.headers.values(), *named, *secret_values()]

    @property
    def fallback_name(self) -> str:
        if self.inproc is not None:
            return str(getattr(self.inproc, "name", "server"))
        if self.url:
            return urlsplit(self.url).hostname or "server"
        script = next((a for a in reversed(self.argv) if not a.startswith("-")), self.argv[0])
        path = Path(script)
        return path.parent.name if path.stem in {"server", "main", "__main__"} else path.stem


@dataclass
class CallOutcome:
    """One tool call's result as the agent will see it."""

    text: str
    is_error: bool
    structured: Any = None
    duration_s: float = 0.0


class Connection:
    """One live MCP client session, owned by its own task so that its context is entered and exited
    in the same task (the SDK's transports require that)."""

    def __init__(self, spec: ServerSpec, errlog: TextIO | None, connect_timeout: float) -> None:
        self.spec = spec
        self.errlog = errlog
        self.connect_timeout = connect_timeout
        self.client: Client | None = None
        self.busy = 0
        self.generation = 0
        self._task: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None

    def _target(self) -> Any:
        if self.spec.inproc is not None:
            return self.spec.inproc
        if self.spec.url:
            if self.spec.headers:
                import httpx2

                http = httpx2.AsyncClient(headers=dict(self.spec.headers), timeout=httpx2.Timeout(30, read=300))
                return streamable_http_client(self.spec.url, http_client=http)
            return self.spec.url
        command = self.spec.argv[0]
        if shutil.which(command) is None and not Path(command).exists():
            raise ServerError(f"the server command {command!r} was not found on PATH. Check --server.")
        # Bytes that are not UTF-8 become U+FFFD, as clients show them; "strict" would drop the whole reply and
        # turn the call into a timeout scored against the model.
        params = StdioServerParameters(
            command=command, args=list(self.spec.argv[1:]), env={**scrubbed_environ(), **self.spec.env},
            cwd=self.spec.cwd, encoding_error_handler="replace",
        )
        if self.errlog is None:
            return params
        from mcp.client.stdio import stdio_client

        return stdio_client(params, errlog=self.errlog)

    async def start(self) -> None:
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(self._run(ready, self._stop))
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            while True:  # wait for the handshake; give up early once the server has printed something else
                left = started + self.connect_timeout - loop.time()
                try:
                    await asyncio.wait_for(asyncio.shield(ready), max(0.0, min(left, 0.5)))
                    break
                except TimeoutError:
                    if left <= 0.5 or (NOT_MCP.seen and loop.time() - started > NOT_MCP_GRACE):
                        raise
        except TimeoutError:
            await self.stop()
            foreign = NOT_MCP.lines()
            raise ServerError(
                (f"the server wrote lines on stdout that are not MCP (JSON-RPC) and did not complete the handshake; "
                 f"the first: {foreign}") if foreign else
                f"the server did not complete the MCP handshake within {self.connect_timeout:g} s"
            ) from None
        self.generation += 1

    async def _run(self, ready: asyncio.Future[None], stop: asyncio.Event) -> None:
        try:
            async with Client(self._target(), read_timeout_seconds=None) as client:
                self.client = client
                ready.set_result(None)
                await stop.wait()
        except BaseException as exc:  # noqa: BLE001 - reported through `ready` or as a dead connection
            if isinstance(exc, asyncio.CancelledError):
                ready.cancel()  # only stop() cancels, after start() gave up waiting: nobody reads `ready`
                raise
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else ServerError(repr(exc)))
        finally:
            self.client = None

    async def stop(self) -> None:
        if self._stop is not None:
            self._stop.set()
        if self._task is not None:
            if self.client is None and not self._task.done():
                self._task.cancel()  # still connecting: nothing to close gracefully
            try:
                await asyncio.wait_for(self._task, 5)
            except BaseException:  # noqa: BLE001 - the connection's own end, however it went
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise  # Ctrl-C (or a cancelled run) while a restart stops the old connection: not ours to drop
        self._task = None


class ServerPool:
    """`instances` connections to one server for the length of a run (an async context manager)."""

    def __init__(
        self,
        spec: ServerSpec,
        *,
        instances: int = 1,
        log_path: Path | None = None,
        tool_timeout: float = 60.0,
        connect_timeout: float = 30.0,
    ) -> None:
        self.spec = spec
        self.instances = max(1, instances)
        self.log_path = log_path
        self.tool_timeout = tool_timeout
        self.connect_timeout = connect_timeout
        self.restarts = 0
        self.server_name = spec.fallback_name
        self._errlog: TextIO | None = None
        self._connections: list[Connection] = []
        self._restart_lock = asyncio.Lock()

    async def __aenter__(self) -> ServerPool:
        if self.log_path is not None and self.spec.argv:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            self._errlog = open(self.log_path, "a", encoding="utf-8")  # noqa: SIM115 - closed in __aexit__
        try:
            first = await self._open_connection()
            opened = await asyncio.gather(*(self._open_connection() for _ in range(self.instances - 1)),
                                          return_exceptions=True)
            failed = [r for r in opened if isinstance(r, BaseException)]
            if failed:
                raise failed[0]
        except BaseException:
            await self.__aexit__(None, None, None)  # stops every connection that did open
            raise
        info = first.client.server_info if first.client else None
        if info is not None and info.name:
            self.server_name = info.name
        return self

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.gather(*(conn.stop() for conn in self._connections))
        self._connections = []
        if self._errlog is not None:
            self._errlog.close()
            self._errlog = None
            self._scrub_log()

    def _scrub_log(self) -> None:
        """The server's stderr may echo its own command line or environment: keep credentials out."""
        if self.log_path is None or not self.log_path.exists():
            return
        text = self.log_path.read_text(encoding="utf-8", errors="replace")
        clean = redact_text(text, self.spec.secrets)
        if clean != text:
            self.log_path.write_text(clean, encoding="utf-8")

    async def _open_connection(self) -> Connection:
        conn = Connection(self.spec, self._errlog, self.connect_timeout)
        try:
            await conn.start()
        except ServerError as exc:
            raise ServerError(self._explain(str(exc))) from None
        except Exception as exc:  # noqa: BLE001 - every start failure becomes one readable paragraph
            refused = await http_refusal(self.spec.url, self.spec.headers) if self.spec.url else None
            raise ServerError(self._explain(refused or _describe(exc))) from None
        self._connections.append(conn)
        return conn

    def _explain(self, what: str) -> str:
        where = self.spec.display
        kind = "URL" if self.spec.url else "command"
        text = f"Could not connect to the MCP server at {kind} `{where}`: {what.rstrip('.')}."
        if not self.spec.url:
            text += " Check that it starts on its own and speaks MCP over stdio (JSON-RPC on stdout)."
        tail = self.stderr_tail()
        if tail:
            text += " Last lines of its stderr:\n" + tail
        return text

    def stderr_tail(self, lines: int = 8) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        if self._errlog is not None:
            self._errlog.flush()
        content = self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()
        return redact_text("\n".join("    " + line for line in content[-lines:]), self.spec.secrets)

    async def list_tools(self) -> Catalog:
        """Every page of the server's tool list, as a Catalog."""
        client = self._pick().client
        if client is None:
            raise ServerError(self._explain("the connection closed before tools were listed"))
        tools: list[ToolDef] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            try:
                page = await client.list_tools(cursor=cursor)
            except MCPError as exc:
                raise ServerError(self._explain(f"tools/list failed: {exc}")) from None
            tools.extend(tool_def(t) for t in page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        return Catalog(server_name=self.server_name, tools=tuple(tools))

    def _pick(self) -> Connection:
        if not self._connections:
            raise ServerError("the server pool is not open")
        return min(self._connections, key=lambda c: c.busy)

    @property
    def connections(self) -> tuple[Connection, ...]:
        return tuple(self._connections)

    async def reset(self, conn: Connection) -> None:
        """Restart one connection's server process: it starts again from whatever state a fresh start gives."""
        await self._restart(conn, conn.generation, "an episode changed the server's state", counted=False)

    async def call(self, name: str, arguments: dict[str, Any], *, on: Connection | None = None) -> CallOutcome:
        """Call a tool by its ORIGINAL name, on connection `on` (default: the least busy). Raises ServerCrashed when
        the server died meanwhile."""
        conn = on or self._pick()
        if conn.client is None and self._restart_lock.locked():
            async with self._restart_lock:  # a restart is under way: wait for it rather than fail
                pass
        generation = conn.generation
        conn.busy += 1
        started = time.perf_counter()
        try:
            client = conn.client
            if client is None:
                raise ServerCrashed("the server connection is down")
            result = await client.call_tool(name, arguments, read_timeout_seconds=self.tool_timeout)
        except MCPError as exc:
            if exc.code == REQUEST_TIMEOUT:  # the SDK has sent notifications/cancelled for the call
                silent = await _unanswered_ping(conn.client)
                if silent is None:  # alive: the tool was slow, and the agent sees that like any tool failure
                    return CallOutcome(
                        f"The tool {name} did not answer within {self.tool_timeout:g} s and was abandoned.",
                        True, None, time.perf_counter() - started,
                    )
                why = f"the server stopped answering: {name} timed out after {self.tool_timeout:g} s, then {silent}"
                await self._restart(conn, generation, why)
                raise ServerHung(why) from None
            if exc.code != CONNECTION_CLOSED:
                return CallOutcome(f"Error: {exc}", True, None, time.perf_counter() - started)
            await self._restart(conn, generation)
            raise ServerCrashed(f"the server closed the connection during {name}") from None
        except ServerCrashed:
            await self._restart(conn, generation)
            raise
        except RuntimeError as exc:
            return CallOutcome(f"Error: the tool's result was invalid: {exc}", True, None,
                               time.perf_counter() - started)
        except Exception as exc:  # noqa: BLE001 - transport failure: restart, then an infra fault
            await self._restart(conn, generation)
            raise ServerCrashed(f"the connection failed during {name}: {_describe(exc)}") from None
        finally:
            conn.busy -= 1
        return CallOutcome(
            text=result_text(result.content, result.structured_content),
            is_error=bool(result.is_error),
            structured=result.structured_content,
            duration_s=time.perf_counter() - started,
        )

    async def _restart(self, conn: Connection, generation: int, why: str = "server connection lost", *,
                       counted: bool = True) -> None:
        async with self._restart_lock:
            if conn.generation != generation:
                return  # another caller already restarted this connection
            self.restarts += counted
            if self._errlog is not None and counted:
                self._errlog.write(f"[optimizer] {why}; restarting (restart {self.restarts})\n")
            await conn.stop()
            try:
                await conn.start()
            except Exception as exc:  # noqa: BLE001 - the next call reports the connection as down
                conn.client = None
                if self._errlog is not None:
                    self._errlog.write(f"[optimizer] restart failed: {_describe(exc)}\n")


async def _unanswered_ping(client: Client | None) -> str | None:
    """None when the server answers a ping within PING_DEADLINE (any answer will do: an mcp 2.x server on the 2026
    protocol answers "method not found"), else what happened instead."""
    if client is None:
        return "the connection closed"
    try:
        await client.session.send_request(PingRequest(), EmptyResult, request_read_timeout_seconds=PING_DEADLINE)
    except MCPError as exc:
        if exc.code == REQUEST_TIMEOUT:
            return f"a ping got no answer within {PING_DEADLINE:g} s"
        if exc.code == CONNECTION_CLOSED:
            return "the connection closed"
    except Exception as exc:  # noqa: BLE001 - the transport failed: no answer came
        return f"the ping failed ({_describe(exc)})"
    return None


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(e) for e in exc.exceptions)
    if isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED:
        return "the server closed the connection (it exited, or wrote something that is not MCP to stdout)"
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if type(exc).__name__ not in text else text


def python_command(script: str, *args: str) -> str:
    """A --server command line that runs a Python script with this interpreter."""
    return shlex.join([sys.executable, script, *args])


@contextlib.asynccontextmanager
async def one_connection(spec: ServerSpec) -> AsyncIterator[ServerPool]:
    """A pool of one short-lived connection, its stderr to a temporary log. Raises ServerError."""
    with tempfile.TemporaryDirectory(prefix="optimizer-") as tmp:
        async with ServerPool(spec, instances=1, log_path=Path(tmp) / "server.log") as pool:
            yield pool


async def list_tools_once(spec: ServerSpec) -> Catalog:
    """The server's tools from one short-lived connection. Raises ServerError."""
    async with one_connection(spec) as pool:
        return await pool.list_tools()
