"""An MCP server (mcp 2.x `MCPServer`) whose process stays alive but stops answering, in two ways:

- `legacy_name` returns text with a lone surrogate, as decoding a Latin-1 record with errors="surrogateescape" leaves
  it. The SDK cannot encode the reply: its stdout writer dies and the server answers nothing from then on, while
  the process lives on until more input arrives.
- `freeze` blocks the server's event loop (a deadlock): nothing is read or answered, and a cancel changes nothing.

`echo` answers normally. Run: `python tests/servers/goes_silent.py`.
"""

from __future__ import annotations

import time

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("goes-silent", log_level="WARNING")
READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


@server.tool(annotations=READ, structured_output=False)
def echo(text: str) -> str:
    """Echo the text back unchanged."""
    return text


@server.tool(annotations=READ, structured_output=False)
def legacy_name() -> str:
    """Give the customer's name as the legacy system stores it."""
    return b"Jos\xe9".decode("utf-8", errors="surrogateescape")  # "Jos\udce9": not encodable as UTF-8


@server.tool(annotations=READ, structured_output=False)
async def freeze() -> str:
    """Freeze the server: block its event loop for an hour."""
    time.sleep(3600)  # blocking inside the loop on purpose
    return "thawed"


if __name__ == "__main__":
    server.run()
