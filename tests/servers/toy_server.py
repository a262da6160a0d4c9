"""A small MCP server for the transport contract tests (mcp 2.x `MCPServer`).

Run over stdio (`python tests/servers/toy_server.py`), over streamable HTTP
(`python tests/servers/toy_server.py --http PORT` → http://127.0.0.1:PORT/mcp), or import `server`
and connect to it in memory (`ServerSpec(inproc=toy_server.server)`).
"""

from __future__ import annotations

import argparse
import asyncio
import os

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

server = MCPServer("toy", log_level="WARNING")

READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


@server.tool(annotations=READ, structured_output=False)
def echo(text: str) -> str:
    """Echo the text back unchanged."""
    return text


@server.tool(annotations=READ)
def add(a: int, b: int) -> int:
    """Add two integers and return the sum."""
    return a + b


@server.tool(structured_output=False)
def fail(kind: str) -> str:
    """Always fail with an error result whose message names the kind of failure."""
    raise ToolError(f"{kind}: this tool always fails")


@server.tool(structured_output=False)
async def hang(seconds: float) -> str:
    """Sleep for the given number of seconds, then answer."""
    await asyncio.sleep(seconds)
    return f"slept {seconds:g} s"


@server.tool(structured_output=False)
def crash() -> str:
    """Crash the server process (exit code 3) without answering."""
    os._exit(3)


@server.tool(annotations=READ, structured_output=False)
def pid() -> str:
    """Return the server's process id (tells stdio instances apart)."""
    return str(os.getpid())


@server.tool(annotations=READ, structured_output=False)
def big(n: int) -> str:
    """Return a text of exactly n characters."""
    return "x" * n


def main() -> None:
    parser = argparse.ArgumentParser(description="Toy MCP server for tests.")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on 127.0.0.1:PORT (/mcp)")
    args = parser.parse_args()
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        server.run()


if __name__ == "__main__":
    main()
