"""The servers that stand beside the one under test, as a client loads them, and how the client names tools.

- `context_specs` reads `--mcp-config FILE` (the `mcpServers` JSON of Claude Desktop, Claude Code's `.mcp.json`
  and Cursor: stdio entries with `command`/`args`/`env`, HTTP entries with `url`/`headers`), keeps the servers
  `--context` names, and adds each `--context-server CMD|URL`. Raises ContextError with the file and line.
- `Context` is those servers opened (an async context manager): their tools, unchanged, join the target's in
  `expose`; `call` runs a call to a context tool on its server when the tool is annotated read-only, and
  answers any other with an error result saying it is not available in this evaluation. A context tool's
  original name is `<server>:<tool>`, so confusion data names the server.
- `client_names` renames every exposed tool the way a client shows it: `plain` (as listed) or `claude-code`
  (`mcp__<server>__<tool>`).

Contract: the context's tools are never edited by a candidate, and the same context gives the same exposed
list (so cached episodes stay valid exactly when the agent saw the same tools).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from optimizer.definitions import Catalog, Exposed
from optimizer.run.episode import CallTool
from optimizer.servers import CallOutcome, ServerError, ServerPool, ServerSpec

ClientNaming = Literal["plain", "claude-code"]
CLIENT_NAMINGS: tuple[ClientNaming, ...] = ("plain", "claude-code")
SEPARATOR = ":"
_NAME = re.compile(r"[^A-Za-z0-9_-]+")


class ContextError(ValueError):
    """A context setting that cannot be used (bad file, unknown server name, bad entry)."""


@dataclass(frozen=True)
class ContextServer:
    """One opened context server: its name, pool and tools as the server lists them."""

    name: str
    pool: ServerPool
    catalog: Catalog

    def read_only(self, tool: str) -> bool:
        return self.catalog.get(tool).hint("readOnlyHint") is True


def context_specs(mcp_config: str | None, names: Sequence[str], servers: Sequence[str],
                  *, headers: Mapping[str, str] | None = None) -> list[tuple[str, ServerSpec]]:
    """(name, spec) of every context server: the `names` picked from the `mcp_config` file, in the order given,
    then each of `servers` (named after its program or host; `ServerPool` renames it to what the server says
    when it connects). `--context` without `--mcp-config`, or a name the file lacks, is a ContextError."""
    entries = _read_config(Path(mcp_config)) if mcp_config else {}
    if names and not mcp_config:
        raise ContextError("--context names servers of an --mcp-config file; give the file too")
    out: list[tuple[str, ServerSpec]] = []
    for name in names:
        if name not in entries:
            known = ", ".join(sorted(entries)) or "none"
            raise ContextError(f"{mcp_config}: no server named {name!r} under mcpServers (it has: {known})")
        out.append((name, entries[name]))
    for text in servers:
        try:
            spec = ServerSpec.parse(text, headers=headers if text.strip().startswith("http") else None)
        except ServerError as exc:
            raise ContextError(str(exc).replace("--server", "--context-server")) from None
        out.append((spec.fallback_name, spec))
    taken: set[str] = set()
    for name, _ in out:
        if name in taken:
            raise ContextError(f"two context servers are both named {name!r}")
        taken.add(name)
    return out


def _read_config(path: Path) -> dict[str, ServerSpec]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ContextError(f"cannot read --mcp-config {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ContextError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}") from None
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise ContextError(f"{path}: expected an object with an \"mcpServers\" object (the Claude Desktop, "
                           "Claude Code .mcp.json and Cursor format)")
    return {name: _entry(path, text, name, entry) for name, entry in servers.items()}


def _entry(path: Path, text: str, name: str, entry: Any) -> ServerSpec:
    where = f"{path}:{_line_of(text, name)}: server {name!r}"
    if not isinstance(entry, dict):
        raise ContextError(f"{where}: expected an object with \"command\" or \"url\"")
    if isinstance(entry.get("url"), str):
        headers = entry.get("headers") or {}
        if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
            raise ContextError(f"{where}: \"headers\" must map names to strings")
        return ServerSpec(url=entry["url"], headers=dict(headers))
    command, args, env = entry.get("command"), entry.get("args") or [], entry.get("env") or {}
    if not isinstance(command, str) or not command.strip():
        raise ContextError(f"{where}: needs \"command\" (a program) or \"url\"")
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ContextError(f"{where}: \"args\" must be a list of strings")
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise ContextError(f"{where}: \"env\" must map names to strings")
    return ServerSpec(argv=(command, *args), env=dict(env), cwd=entry.get("cwd") if isinstance(entry.get("cwd"),
                                                                                              str) else None)


def _line_of(text: str, name: str) -> int:
    found = text.find(json.dumps(name))
    return text.count("\n", 0, found) + 1 if found >= 0 else 1


class Context:
    """The opened context servers of a run (see the module docstring)."""

    def __init__(self, servers: Sequence[ContextServer] = ()) -> None:
        self.servers = tuple(servers)
        self._by_name = {s.name: s for s in self.servers}

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.servers]

    def __bool__(self) -> bool:
        return bool(self.servers)

    def expose(self, exposed: Exposed, naming: ClientNaming = "plain",
               target_server: str = "") -> tuple[Exposed, list[str]]:
        """The target's exposed tools followed by every context tool, as the client names them (`client_names`,
        the target's tools under `target_server`). Under plain naming a context tool whose name is already shown
        (by the target or an earlier context server) is left out, with a note; under claude-code naming every name
        carries its server, so every tool is shown."""
        tools, routing, notes = list(exposed.tools), dict(exposed.routing), []
        for server in self.servers:
            for tool in server.catalog.tools:
                original = f"{server.name}{SEPARATOR}{tool.name}"
                shown = tool.name if naming == "plain" else original
                if shown in routing:
                    notes.append(f"context server {server.name!r}: {tool.name} is left out, a tool of that name "
                                 "is already shown (use --client-naming claude-code to show both)")
                    continue
                tools.append(replace(tool, name=shown))
                routing[shown] = original
        return client_names(Exposed(tuple(tools), routing), naming, target_server), notes

    def call(self, target: CallTool) -> CallTool:
        """A call router: target tools go to `target`, context tools to their server when read-only."""

        async def route(original: str, arguments: dict[str, Any]) -> CallOutcome:
            server_name, sep, tool = original.partition(SEPARATOR)
            server = self._by_name.get(server_name) if sep else None
            if server is None:
                return await target(original, arguments)
            if not server.read_only(tool):
                return CallOutcome(f"Error: {tool} (server {server_name}) is not available in this evaluation: "
                                   "only tools annotated read-only run on a context server.", True)
            return await server.pool.call(tool, arguments)

        return route


@contextlib.asynccontextmanager
async def open_context(specs: Sequence[tuple[str, ServerSpec]], *, log_dir: Path, tool_timeout: float,
                       connect_timeout: float) -> AsyncIterator[Context]:
    """Open one connection to each context server (its stderr to `log_dir/context-<name>.log`); close them on
    exit. Raises ServerError naming the server that failed."""
    async with contextlib.AsyncExitStack() as stack:
        servers = []
        for name, spec in specs:
            pool = ServerPool(spec, instances=1, log_path=log_dir / f"context-{_NAME.sub('_', name)}.log",
                              tool_timeout=tool_timeout, connect_timeout=connect_timeout)
            try:
                await stack.enter_async_context(pool)
                catalog = await pool.list_tools()
            except ServerError as exc:
                raise ServerError(f"context server {name!r}: {exc}") from None
            servers.append(ContextServer(name, pool, catalog))
        yield Context(servers)


def client_names(exposed: Exposed, naming: ClientNaming, target_server: str) -> Exposed:
    """The exposed tools as the client shows them: unchanged (`plain`), or `mcp__<server>__<tool>`
    (`claude-code`, the server being the context server's name or `target_server` for the target's tools)."""
    if naming == "plain":
        return exposed
    tools, routing = [], {}
    for tool in exposed.tools:
        original = exposed.routing[tool.name]
        server, sep, bare = original.partition(SEPARATOR)
        name = f"mcp__{_NAME.sub('_', server if sep else target_server)}__{bare if sep else tool.name}"
        tools.append(replace(tool, name=name))
        routing[name] = original
    return Exposed(tuple(tools), routing)
