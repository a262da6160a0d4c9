"""An MCP server written for mcp 1.x (`FastMCP`), as many published servers still are.

It runs only in the mcp 1.x virtual environment that `.ci/run` makes (`.ci/cache/mcp1-venv`):
`.ci/cache/mcp1-venv/bin/python tests/servers/legacy_server.py` (stdio).
"""

from mcp.server.fastmcp import FastMCP

server = FastMCP("legacy")


@server.tool()
def shout(text: str) -> str:
    """Return the text in upper case."""
    return text.upper()


@server.tool()
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


if __name__ == "__main__":
    server.run()
