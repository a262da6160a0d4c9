"""The MCP servers under test: connections over stdio or streamable HTTP and the pool a run keeps open
(`connections`, the only module with `serve.py` that imports `mcp`), how servers fail in ways the SDK does not say
(`faults`), what the SDK's answers become (`results`), and which connection each episode uses (`leases`)."""

from optimizer.servers.connections import (
    CallOutcome,
    Connection,
    ServerCrashed,
    ServerError,
    ServerHung,
    ServerPool,
    ServerSpec,
    list_tools_once,
    one_connection,
    python_command,
)

__all__ = ["CallOutcome", "Connection", "ServerCrashed", "ServerError", "ServerHung", "ServerPool", "ServerSpec",
           "list_tools_once", "one_connection", "python_command"]
