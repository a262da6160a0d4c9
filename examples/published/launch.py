"""What every launcher of the test bed shares: finding the published server's program, and running it over this
process's stdin/stdout on a fresh fixture that is removed when the server exits.

The fixture lives at the same path on every start — `FIXED_ROOT/<name>` — so that no result a task can see names a
temporary directory: each launcher re-executes itself in a private mount namespace (`unshare --mount`, or as a
non-root user `unshare --user --map-root-user --mount`) and mounts a filesystem of its own on FIXED_ROOT there, so
servers started at once each see their own copy under the one path. It is a ramfs, which keeps no birth time, so
no file shows when its fixture was made. Where no namespace can be made, the fixture goes
to a new temporary directory instead (the old way: a recording of such a server replays only up to the first result
that names it), and the launcher says so on stderr.

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
FIXED_ROOT = Path("/tmp/optimizer-testbed")
"""Where every fixture lives, in the launcher's own mount namespace."""
FIXED_CLOCK = "2026-12-07 09:30:00"
"""The wall clock (UTC) of the servers whose results carry the time, frozen (`fixed_clock`)."""
FAKETIME_LIBRARIES = ("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
                      "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1", "/usr/lib/faketime/libfaketime.so.1")
"""Where Debian's `faketime` package puts libfaketime."""
_INSIDE = "OPTIMIZER_TESTBED_NAMESPACE"
"""Set in the re-executed launcher: it runs in its private namespace, with its tmpfs on FIXED_ROOT."""


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


def fixed_clock() -> dict[str, str]:
    """The environment that freezes a process's wall clock at FIXED_CLOCK (UTC) through libfaketime (Debian's
    `faketime`; the tests install it), monotonic clocks left running so timers work; {} and a note on stderr when the
    library is missing (results that carry the time then differ on every start)."""
    library = next((path for path in FAKETIME_LIBRARIES if Path(path).is_file()), None)
    if library is None:
        print("optimizer test bed: libfaketime is not installed (apt-get install faketime), so this server's clock "
              "is the real one and results that carry the time differ on every start", file=sys.stderr)
        return {}
    return {"LD_PRELOAD": library, "FAKETIME": FIXED_CLOCK, "FAKETIME_DONT_FAKE_MONOTONIC": "1", "TZ": "UTC"}


def missing(hint: str) -> int:
    """Say on one line how to install the server; the launcher's exit status."""
    print(hint, file=sys.stderr)
    return 2


def serve_on_fixture(
    scratch_prefix: str, start: Callable[[Path], tuple[Sequence[str], Mapping[str, str] | None, Path | None]],
) -> int:
    """Make the fixture's directory (`FIXED_ROOT/<scratch_prefix without its dash>` in a private mount namespace,
    else a new temporary directory; see the module docstring), let `start(directory)` build the fixture in it and
    return the server's (argv, extra environment, working directory), run the server on this process's
    stdin/stdout, forward SIGTERM/SIGINT/SIGHUP to it, and remove the directory when it exits. Returns the server's
    exit status (128 + N when it was killed by signal N, as a shell reports it)."""
    if os.environ.get(_INSIDE) is None:
        _enter_namespace()  # returns only when no namespace can be made
    child: subprocess.Popen[bytes] | None = None

    def forward(signum: int, _frame: FrameType | None) -> None:
        if child is None:  # still building the fixture: stop, and let `finally` clean up
            raise SystemExit(128 + signum)
        child.send_signal(signum)

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, forward)
    scratch = _scratch(scratch_prefix)
    try:
        argv, env, cwd = start(scratch)
        child = subprocess.Popen(list(argv), env={**os.environ, **env} if env else None, cwd=cwd)
        code = child.wait()
        return 128 - code if code < 0 else code
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _enter_namespace() -> None:
    """Re-execute this launcher in a private mount namespace (see the module docstring); return when none can be
    made."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return
    flags = ["--mount"] if os.geteuid() == 0 else ["--user", "--map-root-user", "--mount"]
    probe = subprocess.run([unshare, *flags, "--propagation", "private", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        return
    FIXED_ROOT.mkdir(parents=True, exist_ok=True)
    os.environ[_INSIDE] = "1"
    os.execv(unshare, [unshare, *flags, "--propagation", "private", sys.executable, *sys.argv])


def _scratch(prefix: str) -> Path:
    """The fixture's directory: FIXED_ROOT/<name> on a ramfs of this namespace's own, else a new temporary one. A ramfs
    keeps no birth time (a file's is the epoch, not the moment the fixture was made) and, mounted noatime, reading a
    file leaves its access time as the fixture set it."""
    if os.environ.get(_INSIDE) == "1":
        mounted = subprocess.run(["mount", "-t", "ramfs", "-o", "mode=0755,noatime", "optimizer-testbed",
                                  str(FIXED_ROOT)], capture_output=True, check=False)
        if mounted.returncode == 0:
            scratch = FIXED_ROOT / prefix.rstrip("-")
            scratch.mkdir()
            return scratch
    print("optimizer test bed: no private mount namespace here, so the fixture goes to a new temporary directory "
          "and results that name it differ on every start", file=sys.stderr)
    return Path(tempfile.mkdtemp(prefix=prefix))
