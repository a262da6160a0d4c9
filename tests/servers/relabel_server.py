"""An MCP server for the offline task generator's tests: one contact card whose field is named anew at each start
of the server (as after an upgrade that renamed it), so a task asked about the field on one start finds its answer
under another field on the next. The file given as the first argument counts the starts. Run over stdio:
`python tests/servers/relabel_server.py STARTS_FILE`."""

from __future__ import annotations

import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("relabel", log_level="WARNING")
READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
STARTS = Path(sys.argv[1])
START = int(STARTS.read_text(encoding="utf-8")) + 1 if STARTS.exists() else 1
STARTS.write_text(str(START), encoding="utf-8")
FIELD = ("Phone", "Fax")[START % 2]


@server.tool(description="The front desk's contact card.", annotations=READ, structured_output=False)
def contact_card() -> str:
    return f"{FIELD}: +44 20 7946 0100"


if __name__ == "__main__":
    server.run()
