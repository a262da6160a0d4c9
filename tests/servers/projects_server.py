"""An MCP server for the offline task generator's tests: a listing whose items feed a look-up, values that change
with each start of the server (a session token) or with the clock, a tool that is not annotated, and a destructive
one. Run over stdio: `python tests/servers/projects_server.py`."""

from __future__ import annotations

import json
import secrets
from datetime import UTC, datetime

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

server = MCPServer("projects", log_level="WARNING")
READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
SESSION = secrets.token_hex(6)
PROJECTS = {
    "PRJ-7": {"code": "PRJ-7", "title": "Harbour bridge survey", "lead": "Mina Sol", "budget": 120000,
              "status": "active", "started": "2025-04-01"},
    "PRJ-9": {"code": "PRJ-9", "title": "Library roof repair", "lead": "Ravi Mehta", "budget": 45500,
              "status": "paused", "started": "2024-11-18"},
}


@server.tool(description="List every project with its code and title.", annotations=READ, structured_output=False)
def list_projects() -> str:
    return json.dumps([{"code": p["code"], "title": p["title"]} for p in PROJECTS.values()])


@server.tool(description="Get one project's lead, budget, status and start date by its project code.",
             annotations=READ, structured_output=False)
def get_project(code: str) -> str:
    project = PROJECTS.get(code)
    if project is None:
        raise ToolError(f"no project {code!r}; codes look like PRJ-7")
    return json.dumps({**project, "session": SESSION, "read_at": datetime.now(UTC).isoformat(timespec="seconds")})


@server.tool(description="Archive a finished project so it no longer shows up in listings.", structured_output=False)
def archive_project(code: str) -> str:
    raise ToolError("archiving is not allowed in this test server")


@server.tool(description="Delete a project and all of its files for good.", structured_output=False,
             annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
def delete_project(code: str) -> str:
    raise ToolError("deleting is not allowed in this test server")


if __name__ == "__main__":
    server.run()
