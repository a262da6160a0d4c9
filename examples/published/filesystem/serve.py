"""Run `@modelcontextprotocol/server-filesystem` over stdio on a fresh copy of the fixture.

Each start builds the project tree into a new directory `<tmp>/mcp-filesystem-XXXX/fernway`, starts
the server with that directory as its only allowed root and as its working directory, passes
stdin/stdout through, and removes the directory when the server exits. Parallel instances never share
files, and the write tools only ever touch their own copy. The server is found as
`node $OPTIMIZER_NPM_PREFIX/node_modules/.bin/mcp-server-filesystem` (default prefix:
`<repo>/.ci/cache/npm`); without it the launcher says how to install it and exits with status 2.
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

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
PACKAGE = "@modelcontextprotocol/server-filesystem"
BIN = "mcp-server-filesystem"
ROOT_NAME = "fernway"

sys.path.insert(0, str(HERE))
from fixture import build  # noqa: E402


def server_command() -> list[str] | None:
    """`node <bin>` for the installed server, or None when node or the package is missing."""
    prefix = Path(os.environ.get("OPTIMIZER_NPM_PREFIX") or REPO / ".ci" / "cache" / "npm")
    script = prefix / "node_modules" / ".bin" / BIN
    node = shutil.which("node")
    if node is None or not script.exists():
        return None
    return [node, str(script)]


def main() -> int:
    command = server_command()
    if command is None:
        prefix = os.environ.get("OPTIMIZER_NPM_PREFIX") or REPO / ".ci" / "cache" / "npm"
        print(f"{BIN} not found: install node 20+ and run `npm install --prefix {prefix} {PACKAGE}`",
              file=sys.stderr)
        return 2
    scratch = Path(tempfile.mkdtemp(prefix="mcp-filesystem-"))
    try:
        root = scratch / ROOT_NAME
        build(root)
        child = subprocess.Popen([*command, str(root)], cwd=root)

        def forward(signum: int, _frame: FrameType | None) -> None:
            child.send_signal(signum)

        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, forward)
        code = child.wait()
        return 128 - code if code < 0 else code  # killed by signal N: the shell's 128 + N
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
