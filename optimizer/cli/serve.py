"""`optimizer serve`: serve an overlay's tool definitions in front of an MCP server (see `optimizer.serve`).

Exit codes: 0 stopped (the client left, or SIGINT/SIGTERM); 2 usage or operational error before serving (a bad
overlay, named by its file; an upstream that does not start; a port in use). Nothing but the MCP protocol is
written to stdout; progress and errors go to stderr.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path
from typing import Annotated, TextIO

import typer

from optimizer.cli.common import fail, parse_headers
from optimizer.serve import ProxyConfig, ProxyError, serve
from optimizer.servers import ServerError, ServerSpec


def serve_command(
    server: Annotated[str | None, typer.Option("--server", help="Upstream MCP server: a command line run over "
                                               "stdio (\"python server.py\"), or an http(s)://…/mcp URL.")] = None,
    overlay: Annotated[Path | None, typer.Option("--overlay", help="Overlay JSON whose names and descriptions are "
                                                 "served (e.g. runs/<id>/overlay.json).")] = None,
    http: Annotated[int | None, typer.Option("--http", min=0, max=65535, metavar="PORT",
                                             help="Serve streamable HTTP at http://127.0.0.1:PORT/mcp instead of "
                                             "stdio.")] = None,
    header: Annotated[list[str] | None, typer.Option("--header", help="HTTP header for a URL upstream, "
                                                     "'Name: value' (repeatable; never stored).")] = None,
    tool_timeout: Annotated[float, typer.Option("--tool-timeout", min=0.001, help="Seconds before an upstream "
                                                "tool call is abandoned and answered with an error.")] = 60.0,
    pin: Annotated[Path | None, typer.Option("--pin", help="A tools lock (`optimizer pin`, or runs/<id>/"
                                             "winner.lock.json): a tool whose served definition no longer matches "
                                             "it is not listed, and is named in the log.")] = None,
) -> None:
    """Serve the upstream's tools under the overlay's names and descriptions, as an MCP server of its own
    (stdio, or HTTP with --http). Calls go to the original tools; results come back unchanged. With --pin and no
    --overlay, the upstream's own definitions are served, minus the tools whose definitions drifted from the lock."""
    if server is None or (overlay is None and pin is None):
        raise fail("give --server CMD|URL and --overlay FILE, --pin LOCK or both (--pin alone serves the upstream's "
                   "own definitions and withholds the tools that drifted from the lock)")
    try:
        spec = ServerSpec.parse(server, headers=parse_headers(header))
    except ServerError as exc:
        raise fail(str(exc)) from None
    _log_to_stderr()
    config = ProxyConfig(server=spec, overlay=overlay, http_port=http, tool_timeout=tool_timeout, pin=pin)
    try:
        asyncio.run(serve(config))
    except ProxyError as exc:
        raise fail(str(exc)) from None
    except KeyboardInterrupt:  # a second Ctrl-C while shutting down
        raise typer.Exit(130) from None


class _ServeLog(logging.StreamHandler[TextIO]):
    """The stderr handler `optimizer serve` adds, once per process."""


def _log_to_stderr() -> None:
    """The proxy's progress lines on stderr (stdout is the protocol in stdio mode)."""
    log = logging.getLogger("optimizer")
    if not any(isinstance(h, _ServeLog) for h in log.handlers):
        handler = _ServeLog(sys.stderr)
        handler.setFormatter(logging.Formatter("optimizer serve: %(message)s"))
        log.addHandler(handler)
    log.setLevel(logging.INFO)
