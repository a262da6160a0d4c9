"""A low-level (`mcp.server.Server`) MCP server that lists 25 tools in pages of 10 via `next_cursor`.

Run over stdio (`python tests/servers/paged_server.py`) or import `server` for an in-memory connection.
Every tool `tool_NN(text)` answers `tool_NN: <text>`.
"""

from __future__ import annotations

import asyncio
from typing import Any

import mcp.types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

TOOL_COUNT = 25
PAGE_SIZE = 10
NAMES = [f"tool_{i:02d}" for i in range(TOOL_COUNT)]


def _tool(name: str) -> types.Tool:
    return types.Tool(
        name=name,
        description=f"Paged tool number {name[-2:]}.",
        input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    )


async def list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    start = int(params.cursor) if params is not None and params.cursor else 0
    end = start + PAGE_SIZE
    page = [_tool(name) for name in NAMES[start:end]]
    return types.ListToolsResult(tools=page, next_cursor=str(end) if end < TOOL_COUNT else None)


async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
    if params.name not in NAMES:
        return types.CallToolResult(content=[types.TextContent(text=f"Unknown tool: {params.name}")], is_error=True)
    text = (params.arguments or {}).get("text", "")
    return types.CallToolResult(content=[types.TextContent(text=f"{params.name}: {text}")])


server = Server("paged", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    asyncio.run(main())
