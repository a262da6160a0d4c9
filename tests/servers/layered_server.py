"""A test server whose reading tool checks three arguments in turn and names only the first bad value ("invalid value
'x'"), so fixing one format uncovers the next: the subject of the rounds tests. `band` and `window` are optional, so
a task that names fewer of them passes once the formats it uses are right. Its listing tool's
results show the values each of the three takes, under fields named like them. One writing tool (never annotated
read-only) takes the same arguments, so probing can be seen to leave it alone.

Run: `python tests/servers/layered_server.py` (stdio)."""

from __future__ import annotations

import json

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

server = MCPServer("gauges", log_level="WARNING")
READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)

STATIONS = {"north-weir": 4.2, "mill-bridge": 1.7, "old-ford": 0.9}
UNITS = ("cubic-metres", "litres-per-second")
BANDS = ("high-flow", "low-flow")
WINDOWS = ("past-week", "past-month")


@server.tool(annotations=READ, structured_output=False)
def list_stations() -> str:
    """List stations."""
    return json.dumps([{"station": name, "unit": UNITS[i % 2], "band": BANDS[i % 2], "window": WINDOWS[i % 2]}
                       for i, name in enumerate(STATIONS)])


def _checked(station: str, unit: str, band: str, window: str) -> float:
    for value, allowed in ((station, STATIONS), (unit, UNITS), (band, BANDS), (window, WINDOWS)):
        if value and value not in allowed:
            raise ToolError(f"invalid value '{value}'")
    return STATIONS[station]


@server.tool(annotations=READ, structured_output=False)
def get_flow(station: str, unit: str, band: str = "", window: str = "") -> str:
    """Get flow."""
    flow = _checked(station, unit, band, window)
    scale = 1000 if unit == "litres-per-second" else 1
    scale *= (0.5 if band == "low-flow" else 1) * (4 if window == "past-month" else 1)
    return f"{station}: mean flow {flow * scale:g} {unit} ({band or 'all bands'}, {window or 'past-week'})"


@server.tool(annotations=WRITE, structured_output=False)
def flag_flow(station: str, unit: str, band: str = "", window: str = "") -> str:
    """Flag flow."""
    _checked(station, unit, band, window)
    return f"flagged {station}"


if __name__ == "__main__":
    server.run()
