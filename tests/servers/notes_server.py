"""A stateful MCP server for the lease and isolation tests: notes kept in this process's memory.

`add_note` keeps a note (unannotated: its verb says it keeps something); `list_notes` (read-only) returns the notes
and this process's id, so a test can tell which process answered and what state it had."""

from __future__ import annotations

import os

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("notes", log_level="WARNING")
NOTES: list[str] = []


@server.tool(structured_output=False)
def add_note(text: str) -> str:
    """Add a note to the list of notes."""
    NOTES.append(text)
    return f"Noted ({len(NOTES)} notes)."


@server.tool(annotations=ToolAnnotations(read_only_hint=True), structured_output=False)
def list_notes() -> str:
    """List the notes kept so far."""
    return f"pid {os.getpid()}: " + ("; ".join(NOTES) if NOTES else "no notes")


if __name__ == "__main__":
    server.run()
