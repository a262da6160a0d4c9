"""Run the published `mcp-server-time` over stdio with its local time zone fixed to UTC.

    python examples/published/time/serve.py

The server works on no data, so there is no fixture: the launcher only finds the binary and replaces itself with
`mcp-server-time --local-timezone UTC`, so that what the server calls local time never depends on the host, with
its wall clock frozen at `launch.FIXED_CLOCK` (libfaketime), so that "now" is the same on every start. The
binary is, in order: $OPTIMIZER_TIME_SERVER, `mcp-server-time` on PATH, or next to this Python. Missing, it prints
how to install it and exits 2.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from launch import fixed_clock, missing, python_server  # noqa: E402

BINARY = "mcp-server-time"
ENV_VAR = "OPTIMIZER_TIME_SERVER"
LOCAL_TIMEZONE = "UTC"
INSTALL = f"{BINARY} not found: pip install {BINARY} (or set {ENV_VAR} to its path)"


def find_server() -> str | None:
    """The server binary's path, or None when it is nowhere this launcher looks."""
    return python_server(BINARY, ENV_VAR)


def main() -> int:
    binary = find_server()
    if binary is None:
        return missing(INSTALL)
    os.execve(binary, [binary, "--local-timezone", LOCAL_TIMEZONE], {**os.environ, **fixed_clock()})
    return 0  # not reached: execv replaces this process


if __name__ == "__main__":
    sys.exit(main())
