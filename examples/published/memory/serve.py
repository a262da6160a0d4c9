"""Run `@modelcontextprotocol/server-memory` over stdio on a fresh copy of the seeded knowledge graph.

    python examples/published/memory/serve.py

Each process builds the fixture (`fixture.py`) into a new temporary directory, points the server at it
through MEMORY_FILE_PATH and passes its own stdin/stdout to the server, so parallel instances and the
write tools never share or dirty data. The directory is removed when the server exits. The server is
found at `$OPTIMIZER_NPM_PREFIX/node_modules/.bin/mcp-server-memory` (default prefix: `<repo>/.ci/cache/npm`);
when it or `node` is missing, one line on stderr says how to install it and the exit status is 2.
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

from fixture import FILE_NAME, build

PACKAGE = "@modelcontextprotocol/server-memory"
BINARY = "mcp-server-memory"
REPO = Path(__file__).resolve().parents[3]


def server_command() -> list[str] | None:
    """`[node, <prefix>/node_modules/.bin/mcp-server-memory]`, or None when either is missing."""
    prefix = Path(os.environ.get("OPTIMIZER_NPM_PREFIX") or REPO / ".ci" / "cache" / "npm")
    binary = prefix / "node_modules" / ".bin" / BINARY
    node = shutil.which("node")
    if node is None or not binary.exists():
        return None
    return [node, str(binary)]


def main() -> int:
    command = server_command()
    if command is None:
        prefix = os.environ.get("OPTIMIZER_NPM_PREFIX") or REPO / ".ci" / "cache" / "npm"
        print(f"{BINARY} not found: install node 18+ and run `npm install --prefix {prefix} {PACKAGE}` "
              "(or set OPTIMIZER_NPM_PREFIX to the prefix it is installed under)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="mcp-memory-fixture-") as directory:
        build(Path(directory))
        env = {**os.environ, "MEMORY_FILE_PATH": str(Path(directory) / FILE_NAME)}
        child = subprocess.Popen(command, env=env)

        def forward(signum: int, _frame: FrameType | None) -> None:
            child.send_signal(signum)

        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, forward)
        code = child.wait()
    return code if code >= 0 else 128 - code  # killed by a signal: the shell's convention


if __name__ == "__main__":
    sys.exit(main())
