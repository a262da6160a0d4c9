"""Run `@modelcontextprotocol/server-memory` over stdio on a fresh copy of the seeded knowledge graph.

    python examples/published/memory/serve.py

Each process builds the fixture (`fixture.py`) into its own directory (`launch.serve_on_fixture`), points the server
at it through MEMORY_FILE_PATH and passes its own stdin/stdout to the server, so parallel instances and the write
tools never share or dirty data. The directory is removed when the server exits. The server is found at
`$OPTIMIZER_NPM_PREFIX/node_modules/.bin/mcp-server-memory` (default prefix: `<repo>/.ci/cache/npm`); when it or
`node` is missing, one line on stderr says how to install it and the exit status is 2."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]
from fixture import FILE_NAME, build  # noqa: E402
from launch import missing, npm_install_hint, npm_server, serve_on_fixture  # noqa: E402

PACKAGE = "@modelcontextprotocol/server-memory"
BINARY = "mcp-server-memory"


def main() -> int:
    command = npm_server(BINARY)
    if command is None:
        return missing(npm_install_hint(BINARY, PACKAGE))

    def start(directory: Path) -> tuple[list[str], dict[str, str], None]:
        build(directory)
        return command, {"MEMORY_FILE_PATH": str(directory / FILE_NAME)}, None

    return serve_on_fixture("mcp-memory-fixture-", start)


if __name__ == "__main__":
    sys.exit(main())
