"""Run the published `mcp-server-sqlite` over stdio on a fresh copy of the tea-shop database.

    python examples/published/sqlite/serve.py

Each process builds its own database (fixture.py) in a new temporary directory, runs the server on it with this
process's stdin and stdout, and deletes the directory when the server exits, so parallel instances and write tools
never share or dirty data. The server binary is, in order: $OPTIMIZER_SQLITE_SERVER, `mcp-server-sqlite` on PATH,
next to this Python, or in <repo>/.ci/cache/mcp1-venv/bin/ (the package pins mcp<2, so it lives in a virtual
environment of its own). Missing, it prints how to install it and exits 2.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from types import FrameType

BINARY = "mcp-server-sqlite"
ENV_VAR = "OPTIMIZER_SQLITE_SERVER"
REPO = Path(__file__).resolve().parents[3]
INSTALL = (f"{BINARY} not found: install it in a virtual environment of its own (it needs mcp<2): "
           f"python -m venv .venv-sqlite && .venv-sqlite/bin/pip install {BINARY}, "
           f"then set {ENV_VAR}=.venv-sqlite/bin/{BINARY}")


def find_server() -> str | None:
    """The server binary's path, or None when it is nowhere this launcher looks."""
    override = os.environ.get(ENV_VAR)
    if override:
        return override if Path(override).is_file() else None
    candidates = [shutil.which(BINARY), Path(sys.executable).with_name(BINARY),
                  REPO / ".ci" / "cache" / "mcp1-venv" / "bin" / BINARY]
    return next((str(c) for c in candidates if c and Path(c).is_file()), None)


def main() -> int:
    import fixture  # imported here, not at the top: this folder is on sys.path only when the file runs as a script

    binary = find_server()
    if binary is None:
        print(INSTALL, file=sys.stderr)
        return 2
    server: subprocess.Popen[bytes] | None = None

    def stop(signum: int, frame: FrameType | None) -> None:
        if server is None:
            raise SystemExit(128 + signum)
        server.terminate()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    workdir = Path(tempfile.mkdtemp(prefix="optimizer-sqlite-"))
    try:
        fixture.build(workdir)
        server = subprocess.Popen([binary, "--db-path", str(workdir / fixture.DATABASE)])
        code = server.wait()
        return 128 - code if code < 0 else code  # killed by signal N: exit 128 + N, as a shell reports it
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

if __name__ == "__main__":
    sys.exit(main())
