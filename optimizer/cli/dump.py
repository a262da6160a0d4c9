"""`optimizer dump`: the server's tool definitions as canonical JSON files, the text patches apply to."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

from optimizer.cli.common import HeaderOpt, OverlayOpt, ServerOpt, err, fail, parse_headers
from optimizer.definitions import Candidate, DefinitionError
from optimizer.files.patch import dump_definitions, load_overlay
from optimizer.servers import ServerError, ServerPool, ServerSpec


def dump_command(
    server: ServerOpt = None,
    out_dir: Annotated[Path, typer.Option("--out-dir", help="Directory for one <tool>.json per tool.")] = Path("."),
    overlay: OverlayOpt = None,
    header: HeaderOpt = None,
) -> None:
    """Write the server's tool definitions (optionally under an overlay) as canonical JSON files —
    the text that `winning.patch` and `reviewed.patch` apply to."""
    if server is None:
        raise fail("--server is required")
    async def dump() -> list[Path]:
        spec = ServerSpec.parse(server, headers=parse_headers(header))
        async with ServerPool(spec, instances=1) as pool:
            catalog = await pool.list_tools()
        candidate = load_overlay(overlay, catalog) if overlay else Candidate()
        return dump_definitions(catalog, candidate, out_dir)

    try:
        written = asyncio.run(dump())
    except (ServerError, DefinitionError) as exc:
        raise fail(str(exc)) from None
    err.print(f"wrote {len(written)} definition file(s) to {out_dir}")
