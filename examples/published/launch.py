"""What every launcher of the test bed shares: finding the published server's program, and running it over this
process's stdin/stdout on a fresh fixture in a new temporary directory that is removed when the server exits.

A launcher imports this file after putting its parent folder on sys.path (launchers run as scripts).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import FrameType

REPO = Path(__file__).resolve().parents[2]
NPM_PREFIX_VAR = "OPTIMIZER_NPM_PREFIX"


def npm_prefix() -> Path:
    """Where npm servers are installed: $OPTIMIZER_NPM_PREFIX, else <repo>/.ci/cache/npm (what .ci/run makes)."""
    return Path(os.environ.get(NPM_PREFIX_VAR) or REPO / ".ci" / "cache" / "npm")


def npm_server(binary: str) -> list[str] | None:
    """`[node, <prefix>/node_modules/.bin/<binary>]`, or None when node or the package is missing."""
    script = npm_prefix() / "node_modules" / ".bin" / binary
    node = shutil.which("node")
    if node is None or not script.exists():
        return None
    return [node, str(script)]


def npm_install_hint(binary: str, package: str) -> str:
    return (f"{binary} not found: install node 20+ and run `npm install --prefix {npm_prefix()} {package}` "
            f"(or set {NPM_PREFIX_VAR} to the prefix it is installed under)")


def python_server(binary: str, env_var: str, *also: Path) -> str | None:
    """A Python server's program: $<env_var> (only if it is a file), else `binary` on PATH, next to this Python,
    or in one of the folders `also` names; None when it is nowhere."""
    override = os.environ.get(env_var)
    if override:
        return override if Path(override).is_file() else None
    candidates = [shutil.which(binary), Path(sys.executable).with_name(binary), *(d / binary for d in also)]
    return next((str(c) for c in candidates if c and Path(c).is_file()), None)


def missing(hint: str) -> int:
    """Say on one line how to install the server; the launcher's exit status."""
    print(hint, file=sys.stderr)
    return 2


def serve_on_fixture(
    scratch_prefix: str, start: Callable[[Path], tuple[Sequence[str], Mapping[str, str] | None, Path | None]],
) -> int:
    """Make a new temporary directory, let `start(directory)` build the fixture in it and return the server's
    (argv, extra environment, working directory), run the server on this process's stdin/stdout, forward
    SIGTERM/SIGINT/SIGHUP to it, and remove the directory when it exits. Returns the server's exit status
    (128 + N when it was killed by signal N, as a shell reports it)."""
    child: subprocess.Popen[bytes] | None = None

    def forward(signum: int, _frame: FrameType | None) -> None:
        if child is None:  # still building the fixture: stop, and let `finally` clean up
            raise SystemExit(128 + signum)
        child.send_signal(signum)

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, forward)
    scratch = Path(tempfile.mkdtemp(prefix=scratch_prefix))
    try:
        argv, env, cwd = start(scratch)
        child = subprocess.Popen(list(argv), env={**os.environ, **env} if env else None, cwd=cwd)
        code = child.wait()
        return 128 - code if code < 0 else code
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
