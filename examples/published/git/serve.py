"""Run `@cyanheads/git-mcp-server` over stdio on a fresh copy of the quillmark repositories.

    python examples/published/git/serve.py

Each process builds the fixture (`fixture.py`: the working repository `quillmark/` and its bare remote
`quillmark-origin.git/`) into `/tmp/optimizer-testbed/mcp-git/workspace` (`launch.serve_on_fixture`), and starts the
server with that directory as GIT_BASE_DIR, so every path must lie inside it and a relative path (`quillmark`) is
resolved against it. The server's own git configuration is empty (HOME in the scratch directory, no system config),
commits it makes are by "Quillmark Agent", signing is off, and its log files go to the scratch directory.
stdin/stdout are passed through, and the directory is removed when the server exits: parallel instances never share
a repository, and whatever agents commit, reset or delete is thrown away. The server is found as `node
$OPTIMIZER_NPM_PREFIX/node_modules/.bin/git-mcp-server` (default prefix: `<repo>/.ci/cache/npm`); without it the
launcher says how to install it and exits with status 2."""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]
from fixture import build  # noqa: E402
from launch import FIXED_CLOCK, missing, npm_install_hint, npm_server, serve_on_fixture  # noqa: E402

PACKAGE = "@cyanheads/git-mcp-server@2.15.3"
BINARY = "git-mcp-server"
WORKSPACE = "workspace"
AGENT = ("Quillmark Agent", "agent@quillmark.dev")
STAMP = FIXED_CLOCK.replace(" ", "T") + "Z"


def server_environment(scratch: Path, workspace: Path) -> dict[str, str]:
    """What the server runs with: stdio, its defaults for the response format, errors only in its log, no signing,
    a fixed identity and date for the commits it makes, and neither the host's git configuration nor a GIT_*
    variable of the caller's. OpenTelemetry
    stays off by leaving OTEL_ENABLED unset: the server reads the variable as a JavaScript boolean of the string,
    so even "false" turns it on, and it then prints on stdout, which breaks the MCP stream."""
    home = scratch / "home"
    home.mkdir()
    name, email = AGENT
    return {
        "MCP_TRANSPORT_TYPE": "stdio", "MCP_LOG_LEVEL": "error", "MCP_RESPONSE_FORMAT": "json",
        "MCP_RESPONSE_VERBOSITY": "standard", "LOGS_DIR": str(scratch / "logs"),
        "GIT_BASE_DIR": str(workspace), "GIT_SIGN_COMMITS": "false",
        "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email,
        "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "TZ": "UTC", "LC_ALL": "C",
        "GIT_AUTHOR_DATE": STAMP, "GIT_COMMITTER_DATE": STAMP,  # commits the agents make hash the same on every start
    }


def main() -> int:
    command = npm_server(BINARY)
    if command is None:
        return missing(npm_install_hint(BINARY, PACKAGE))
    for key in [k for k in os.environ if k.startswith(("GIT_", "OTEL_", "MCP_"))]:
        del os.environ[key]  # a caller's GIT_DIR would point git at another repository; OTEL_ENABLED: see above

    def start(scratch: Path) -> tuple[list[str], dict[str, str], Path]:
        workspace = scratch / WORKSPACE
        build(workspace)
        return command, server_environment(scratch, workspace), workspace

    return serve_on_fixture("mcp-git-", start)


if __name__ == "__main__":
    sys.exit(main())
