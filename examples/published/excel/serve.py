"""Run the published `excel-mcp-server` over stdio on a fresh copy of the bakery workbooks.

    python examples/published/excel/serve.py

Each process builds the fixture (`fixture.py`) into `/tmp/optimizer-testbed/mcp-excel/workbooks`
(`launch.serve_on_fixture`) and runs `excel-mcp-server stdio --allow-dir <that directory>`, so the server may open
files there only and relative paths (`sales-q1-2026.xlsx`) start there; stdin/stdout are passed through and the
directory is removed when the server exits, so parallel instances and the write tools never share or dirty data. The
server binary is, in order: $OPTIMIZER_EXCEL_SERVER, `excel-mcp-server` on PATH, next to this Python, or in
<repo>/.ci/cache/excel-venv/bin/ (what .ci/run makes). Missing, it prints how to install it and exits 2."""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]
from fixture import build  # noqa: E402
from launch import REPO, fixed_clock, missing, python_server, serve_on_fixture  # noqa: E402

BINARY = "excel-mcp-server"
VERSION = "2.2.2"
ENV_VAR = "OPTIMIZER_EXCEL_SERVER"
VENV_BIN = REPO / ".ci" / "cache" / "excel-venv" / "bin"
FOLDER = "workbooks"
SEEDED = Path(__file__).resolve().parent / "seeded"
INSTALL = (f"{BINARY} not found: python -m venv .ci/cache/excel-venv && "
           f".ci/cache/excel-venv/bin/pip install {BINARY}=={VERSION} (or set {ENV_VAR} to its path)")
# Settings the server reads from the environment; a caller's value would change its tool list or its limits.
SERVER_SETTINGS = ("EXCEL_FILES_PATH", "EXCEL_MCP_READ_ONLY", "EXCEL_MCP_ALLOW_VBA_WRITE", "EXCEL_MCP_TOOLS",
                   "EXCEL_MCP_MAX_FILE_MB", "EXCEL_MCP_MAX_CELLS", "EXCEL_MCP_MAX_PIVOT_CELLS",
                   "EXCEL_MCP_MAX_LOADED_CELLS")


def find_server() -> str | None:
    """The server binary's path, or None when it is nowhere this launcher looks."""
    return python_server(BINARY, ENV_VAR, VENV_BIN)


def main() -> int:
    binary = find_server()
    if binary is None:
        return missing(INSTALL)
    for key in SERVER_SETTINGS:
        os.environ.pop(key, None)

    def start(scratch: Path) -> tuple[list[str], dict[str, str], Path]:
        folder = scratch / FOLDER
        build(folder)
        # what it saves carries the time and random ids: a frozen clock, and ids from a seed (seeded/sitecustomize.py)
        return [binary, "stdio", "--allow-dir", str(folder)], {**fixed_clock(), "PYTHONPATH": str(SEEDED)}, folder

    return serve_on_fixture("mcp-excel-", start)


if __name__ == "__main__":
    sys.exit(main())
