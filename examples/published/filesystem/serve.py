"""Run `@modelcontextprotocol/server-filesystem` over stdio on a fresh copy of the fixture.

Each start builds the project tree into `/tmp/optimizer-testbed/mcp-filesystem/fernway` (`launch.serve_on_fixture`),
starts the server with that directory as its only allowed root and as its working directory, passes stdin/stdout
through, and removes the directory when the server exits. Parallel instances never share files, and the write tools
only ever touch their own copy. The server is found as `node
$OPTIMIZER_NPM_PREFIX/node_modules/.bin/mcp-server-filesystem` (default prefix: `<repo>/.ci/cache/npm`); without it
the launcher says how to install it and exits with status 2."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]
from fixture import build  # noqa: E402
from launch import missing, npm_install_hint, npm_server, serve_on_fixture  # noqa: E402

PACKAGE = "@modelcontextprotocol/server-filesystem"
BIN = "mcp-server-filesystem"
ROOT_NAME = "fernway"


def server_command() -> list[str] | None:
    """`node <bin>` for the installed server, or None when node or the package is missing."""
    return npm_server(BIN)


def main() -> int:
    command = server_command()
    if command is None:
        return missing(npm_install_hint(BIN, PACKAGE))

    def start(scratch: Path) -> tuple[list[str], None, Path]:
        root = scratch / ROOT_NAME
        build(root)
        return [*command, str(root)], None, root

    return serve_on_fixture("mcp-filesystem-", start)


if __name__ == "__main__":
    sys.exit(main())
