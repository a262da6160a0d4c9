"""`optimizer pin`: write a tools lock of what a server exposes (optionally under an overlay).
Exit codes: 0 written; 2 usage or operational error."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from optimizer.cli.common import fail, out, parse_headers
from optimizer.definitions import Catalog, DefinitionError, apply
from optimizer.files.patch import load_overlay
from optimizer.files.pin import write_lock
from optimizer.servers import ServerError, ServerSpec, list_tools_once


def pin_command(
    server: Annotated[str, typer.Option("--server", help="MCP server: a command line run over stdio (\"python "
                                        "server.py\"), or an http(s)://…/mcp URL.")],
    output: Annotated[Path, typer.Option("-o", "--output", help="The lock file to write (e.g. tools.lock.json).")],
    overlay: Annotated[Path | None, typer.Option("--overlay", help="Pin the definitions as this overlay exposes "
                                                 "them (what `optimizer serve` would serve).")] = None,
    header: Annotated[list[str] | None, typer.Option("--header", help="HTTP header for URL servers, "
                                                     "'Name: value' (repeatable; never stored).")] = None,
) -> None:
    """Pin the tool definitions a server exposes: a hash per tool of its name, description, input schema and
    annotations, the definitions themselves, and a hash of the whole. Check later with `optimizer lint --against`,
    or serve only matching tools with `optimizer serve --pin`."""
    try:
        catalog = asyncio.run(list_tools_once(ServerSpec.parse(server, headers=parse_headers(header))))
        if overlay is not None:
            catalog = Catalog(catalog.server_name, apply(catalog, load_overlay(overlay, catalog)).tools)
        lock = write_lock(output, catalog)
    except (ServerError, DefinitionError, OSError) as exc:
        raise fail(str(exc)) from None
    out.print(f"pinned {len(lock['tools'])} tool(s) of {escape(catalog.server_name)} to {escape(str(output))} "
              f"(sha256 {lock['sha256'][:12]}…)")
