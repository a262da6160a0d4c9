"""Run the published `mcp-server-sqlite` over stdio on a fresh copy of the tea-shop database.

    python examples/published/sqlite/serve.py

Each process builds its own database (fixture.py) in its own directory (`launch.serve_on_fixture`), runs the server
on it with this process's stdin and stdout, and deletes the directory when the server exits, so parallel instances
and write tools never share or dirty data. The server binary is, in order: $OPTIMIZER_SQLITE_SERVER,
`mcp-server-sqlite` on PATH, next to this Python, or in <repo>/.ci/cache/mcp1-venv/bin/ (the package pins mcp<2, so
it lives in a virtual environment of its own). Missing, it prints how to install it and exits 2."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]
import fixture  # noqa: E402
from launch import REPO, missing, python_server, serve_on_fixture  # noqa: E402

BINARY = "mcp-server-sqlite"
ENV_VAR = "OPTIMIZER_SQLITE_SERVER"
INSTALL = (f"{BINARY} not found: install it in a virtual environment of its own (it needs mcp<2): "
           f"python -m venv .venv-sqlite && .venv-sqlite/bin/pip install {BINARY}, "
           f"then set {ENV_VAR}=.venv-sqlite/bin/{BINARY}")


def find_server() -> str | None:
    """The server binary's path, or None when it is nowhere this launcher looks."""
    return python_server(BINARY, ENV_VAR, REPO / ".ci" / "cache" / "mcp1-venv" / "bin")


def main() -> int:
    binary = find_server()
    if binary is None:
        return missing(INSTALL)

    def start(workdir: Path) -> tuple[list[str], None, None]:
        fixture.build(workdir)
        return [binary, "--db-path", str(workdir / fixture.DATABASE)], None, None

    return serve_on_fixture("optimizer-sqlite-", start)


if __name__ == "__main__":
    sys.exit(main())
