"""What the tests need beyond `pip install ".[dev]"`, installed by the test session itself (tests/conftest.py calls
`ensure_all` once, on the pytest-xdist controller, before anything is collected), so that a newcomer's first
`pytest -q` runs the whole suite and `.ci/run` needs no install step of its own:

    .ci/cache/npm         @modelcontextprotocol/server-everything, -filesystem and -memory, @cyanheads/git-mcp-server
                          (the published-server tests and the test bed in examples/published/)
    .ci/cache/mcp1-venv   mcp<2 and mcp-server-sqlite (legacy mcp 1.x server tests, the sqlite test bed)
    .ci/cache/excel-venv  excel-mcp-server (the excel test bed)
    mcp-server-time       into the environment of the Python running pytest (it must sit next to sys.executable)
    chromium, faketime    Debian's packages through apt-get, when missing and we are root (report.html is opened
                          headless; the test bed's servers whose results carry the time run on a frozen clock)

Each install checks first (a few file lookups when it is done: no subprocess) and says on stderr when it installs.
One that cannot be made (no network, no npm, not root) fails nothing: its Outcome says why, and the session's
summary names the tests skipped because of it. `python tests/installs.py` makes them all without running tests.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from packaging.specifiers import SpecifierSet

REPO = Path(__file__).resolve().parent.parent
CACHE = REPO / ".ci" / "cache"
NPM_PREFIX = CACHE / "npm"
NPM_PACKAGES = {  # package: (version, or None for any; the program it puts in node_modules/.bin)
    "@modelcontextprotocol/server-everything": (None, "mcp-server-everything"),
    "@modelcontextprotocol/server-filesystem": ("2026.8.31", "mcp-server-filesystem"),
    "@modelcontextprotocol/server-memory": ("2026.8.31", "mcp-server-memory"),
    "@cyanheads/git-mcp-server": ("2.15.3", "git-mcp-server"),
}
MCP1_VENV = CACHE / "mcp1-venv"
MCP1_REQUIREMENTS = ("mcp<2", "mcp-server-sqlite==2025.4.25")
EXCEL_VENV = CACHE / "excel-venv"
EXCEL_SERVER = ("excel-mcp-server", "2.2.2")
TIME_SERVER = ("mcp-server-time", ">=2026.1,<2027")
TIMEOUT = 900.0
"""Seconds one install may take before it is given up (a first chromium from apt-get takes minutes)."""
PIP_ENV = {"PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}


@dataclass
class Outcome:
    """How one install ended. status: "present" (done before), "installed" (now), "failed" (tried: `why`),
    "cannot" (not tried: `why`, e.g. not root) or "off" (installs turned off: `why`)."""

    name: str
    label: str
    status: str
    why: str = ""
    mentions: tuple[str, ...] = ()
    """Words of a skip reason that name this install (its programs, paths, packages)."""

    @property
    def missing(self) -> bool:
        return self.status not in ("present", "installed")

    def describe(self) -> str:
        are, them = ("are", "them") if self.name == "npm" else ("is", "it")
        if self.status == "cannot":
            return f"{self.label} {are} not installed and cannot be ({self.why})"
        if self.status == "failed":
            return f"{self.label} {are} not installed: installing {them} failed ({self.why})"
        if self.status == "off":
            return f"{self.label} {are} not installed ({self.why})"
        return f"{self.label} {are} installed, but not where these tests look"


def say(message: str) -> None:
    print(f"tests: {message}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def _locked(name: str) -> Iterator[None]:
    """One install of `name` at a time across pytest sessions (two sessions in one clone share .ci/cache)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f".install-{name}.lock", "a", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(f"waiting for another session's install of {name}…")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class InstallError(Exception):
    """An install step failed; the message is the reason, one line."""


def _run(argv: list[str], *, env: dict[str, str] | None = None) -> None:
    try:
        result = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace",
                                env={**os.environ, **(env or {})}, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        raise InstallError(f"`{' '.join(argv[:3])} …` took over {TIMEOUT:g} s") from None
    except OSError as error:
        raise InstallError(f"{argv[0]}: {error.strerror}") from None
    if result.returncode != 0:
        lines = [line.strip() for line in (result.stderr + result.stdout).splitlines() if line.strip()]
        errors = [line for line in lines if re.match(r"(ERROR|E|npm ERR!|npm error)\b", line)]
        detail = (errors or lines or [f"exit status {result.returncode}"])[-1]
        raise InstallError(f"{Path(argv[0]).name} {argv[1] if len(argv) > 1 else ''}: {detail}"[:300])


LABELS = {
    "npm": "the published npm servers (.ci/cache/npm)",
    "mcp1-venv": "the mcp 1.x virtualenv (.ci/cache/mcp1-venv)",
    "excel-venv": "the excel virtualenv (.ci/cache/excel-venv)",
    "time": "mcp-server-time",
    "chromium": "chromium and faketime (Debian)",
}
MENTIONS = {  # words of a skip reason that name the install (npm is matched last: "node" is in many reasons)
    "npm": ("node_modules", "@modelcontextprotocol/", "@cyanheads/", "mcp-server-everything", "mcp-server-filesystem",
            "mcp-server-memory", "git-mcp-server", "the filesystem server", "the memory server", "node is not",
            "node or ", "or node is missing"),
    "mcp1-venv": ("mcp1-venv", "mcp 1.x", "mcp-server-sqlite", "the sqlite server"),
    "excel-venv": ("excel-venv", "excel-mcp-server", "the excel server"),
    "time": ("mcp-server-time", "the time server"),
    "chromium": ("chromium", "faketime"),
}


def _npm_version(package: str) -> str | None:
    try:
        manifest = json.loads((NPM_PREFIX / "node_modules" / package / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return str(manifest.get("version"))


def _npm_missing() -> list[str]:
    """The npm packages not in .ci/cache/npm at their version, or without their program in node_modules/.bin."""
    bin_dir = NPM_PREFIX / "node_modules" / ".bin"
    return [package for package, (version, program) in NPM_PACKAGES.items()
            if not (bin_dir / program).exists() or _npm_version(package) is None
            or version is not None and _npm_version(package) != version]


def _venv_has(venv: Path, program: str, dists: Iterable[str]) -> bool:
    """`venv` works (its python resolves), holds `program` and a dist-info matching each glob of `dists`."""
    if not (venv / "bin" / "python").exists() or not (venv / "bin" / program).exists():
        return False
    return all(any(venv.glob(f"lib/python*/site-packages/{dist}.dist-info")) for dist in dists)


@functools.cache
def _faketime_libraries() -> tuple[str, ...]:
    """Where the test bed's launchers look for libfaketime (examples/published/launch.py says, for one place)."""
    spec = importlib.util.spec_from_file_location("testbed_launch", REPO / "examples" / "published" / "launch.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return tuple(module.FAKETIME_LIBRARIES)


DEBIAN = {"chromium": lambda: shutil.which("chromium") is not None,
          "faketime": lambda: any(Path(p).is_file() for p in _faketime_libraries())}
"""Debian packages the tests use, each with its check."""


def _debian_missing() -> list[str]:
    return [package for package, present in DEBIAN.items() if not present()]


def _time_server_done() -> bool:
    package, pin = TIME_SERVER
    try:
        version = importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return False
    return SpecifierSet(pin).contains(version) and Path(sys.executable).with_name(package).exists()


DONE: dict[str, Callable[[], bool]] = {
    "chromium": lambda: not _debian_missing(),
    "time": _time_server_done,
    "mcp1-venv": lambda: _venv_has(MCP1_VENV, "mcp-server-sqlite", ("mcp-1.*", "mcp_server_sqlite-2025.4.25")),
    "excel-venv": lambda: _venv_has(EXCEL_VENV, EXCEL_SERVER[0],
                                    (f"{EXCEL_SERVER[0].replace('-', '_')}-{EXCEL_SERVER[1]}",)),
    "npm": lambda: not _npm_missing(),
}
"""Each install's check: true when it is done (file lookups only, no subprocess)."""


def _outcome(name: str, status: str, why: str = "") -> Outcome:
    return Outcome(name, LABELS[name], status, why, MENTIONS[name])


def _install(name: str, message: str, make: Callable[[], None]) -> Outcome:
    """The shape of every install: done already → present; else, under the lock, check again, say so, make it,
    and check that it is done now."""
    done = DONE[name]
    if done():
        return _outcome(name, "present")
    try:
        with _locked(name):
            if done():  # another session made it while we waited
                return _outcome(name, "present")
            say(f"installing {message} (once)…")
            started = time.monotonic()
            make()
            if not done():
                raise InstallError("it ran, but its check still fails")
    except InstallError as error:
        say(f"could not install {LABELS[name]}: {error}")
        return _outcome(name, "failed", str(error))
    say(f"installed {LABELS[name]} in {time.monotonic() - started:.0f} s")
    return _outcome(name, "installed")


def npm_servers() -> Outcome:
    """The published npm servers in .ci/cache/npm, at the versions the test bed pins (server-everything: any)."""
    if shutil.which("node") is None:
        return _outcome("npm", "cannot", "node is not on PATH: install Node.js 20+")
    if shutil.which("npm") is None and not DONE["npm"]():
        return _outcome("npm", "cannot", "npm is not on PATH: install Node.js 20+ with npm")

    def make() -> None:
        specs = [package if version is None else f"{package}@{version}"
                 for package, (version, _) in NPM_PACKAGES.items()]
        _run(["npm", "install", "--prefix", str(NPM_PREFIX), "--no-audit", "--no-fund", "--loglevel=error",
              "--fetch-retries=1", *specs])

    return _install("npm", f"{', '.join(_npm_missing())} into .ci/cache/npm for the test bed", make)


def _make_venv(venv: Path, requirements: Iterable[str]) -> None:
    shutil.rmtree(venv, ignore_errors=True)
    _run([sys.executable, "-m", "venv", str(venv)])
    _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--retries", "2", *requirements], env=PIP_ENV)


def mcp1_venv() -> Outcome:
    """.ci/cache/mcp1-venv: mcp 1.x and mcp-server-sqlite, which pins mcp<2 (it cannot live next to this project)."""
    return _install("mcp1-venv", "mcp<2 and mcp-server-sqlite into .ci/cache/mcp1-venv for the legacy-server tests",
                    lambda: _make_venv(MCP1_VENV, MCP1_REQUIREMENTS))


def excel_venv() -> Outcome:
    """.ci/cache/excel-venv: excel-mcp-server, in a virtualenv of its own (its dependencies are not ours)."""
    requirement = "==".join(EXCEL_SERVER)
    return _install("excel-venv", f"{requirement} into .ci/cache/excel-venv for the test bed",
                    lambda: _make_venv(EXCEL_VENV, [requirement]))


def time_server() -> Outcome:
    """mcp-server-time in this Python's environment, next to sys.executable (where the tests look). Whatever is
    installed already stays as it is: the install may only add packages (a constraint pins every one present)."""
    package, pin = TIME_SERVER

    def make() -> None:
        present: dict[str, str] = {}  # the first of a name is the one imported
        for dist in importlib.metadata.distributions():
            if dist.metadata["Name"] and dist.version:
                present.setdefault(dist.metadata["Name"].lower(), f"{dist.metadata['Name']}=={dist.version}")
        with tempfile.NamedTemporaryFile("w", suffix=".txt", prefix="installed-", encoding="utf-8") as constraints:
            constraints.write("\n".join(present.values()) + "\n")
            constraints.flush()
            _run([sys.executable, "-m", "pip", "install", "-q", "--retries", "2", "-c", constraints.name,
                  f"{package}{pin}"], env=PIP_ENV)
        importlib.invalidate_caches()

    return _install("time", f"{package} into this Python's environment ({Path(sys.executable).parent}) for the "
                    "published-server tests", make)


def chromium() -> Outcome:
    """Debian's chromium (report.html is opened headless) and faketime (the test bed's frozen clock), through apt-get
    in one call, when missing and we may install them."""
    if DONE["chromium"]():
        return _outcome("chromium", "present")
    wanted = _debian_missing() or list(DEBIAN)
    if shutil.which("apt-get") is None:
        return _outcome("chromium", "cannot", f"no apt-get: install {' and '.join(wanted)} the way your system does")
    if os.geteuid() != 0:
        return _outcome("chromium", "cannot", f"not root: sudo apt-get install {' '.join(wanted)}")

    def make() -> None:
        apt = ["apt-get", "install", "-y", "-q", *wanted]
        env = {"DEBIAN_FRONTEND": "noninteractive"}
        try:
            _run(apt, env=env)
        except InstallError:  # a stale package list: refresh it once
            _run(["apt-get", "update", "-q"], env=env)
            _run(apt, env=env)

    return _install("chromium", f"Debian's {' and '.join(wanted)} (apt-get) for the report.html browser test and "
                    "the test bed's frozen clock", make)


INSTALLS: tuple[Callable[[], Outcome], ...] = (chromium, time_server, mcp1_venv, excel_venv, npm_servers)
"""Every install, in the order of DONE (the order a skip reason is matched against their MENTIONS)."""


def ensure_all() -> list[Outcome]:
    """Every install, side by side (each waits on the network or on a subprocess, not on this process)."""
    with ThreadPoolExecutor(max_workers=len(INSTALLS), thread_name_prefix="install") as pool:
        return list(pool.map(lambda install: install(), INSTALLS))


def checked_only(why: str) -> list[Outcome]:
    """The outcomes when installs are turned off (`why`): each install checked, none made."""
    return [_outcome(name, "present" if done() else "off", why) for name, done in DONE.items()]


NOT_INSTALLED = re.compile(r"\bnot (installed|found|on PATH)\b|\bmissing\b|\bneeds\b", re.IGNORECASE)
"""A skip reason that says something is not installed (the only skips the summary counts)."""


def summary_lines(outcomes: Iterable[Outcome], skipped: Iterable[tuple[str, str]]) -> list[str]:
    """One line per missing install that made tests skip: how many, why, and in which files. `skipped` holds
    (node id, reason) of each skipped test; a skip that names no install of ours (GNU patch, git) gets a line of its
    own reason. Only reasons that say something is not installed count; none → no lines."""
    outcomes = list(outcomes)
    groups: dict[str, dict[str, None]] = {}  # line head → node ids, in order
    for nodeid, reason in skipped:
        reason = reason.removeprefix("Skipped: ").strip()
        if not NOT_INSTALLED.search(reason):
            continue
        owner = next((o for o in outcomes if any(word in reason for word in o.mentions)), None)
        head = owner.describe() if owner is not None else reason
        groups.setdefault(head, {})[nodeid] = None
    lines = []
    for head, nodeids in groups.items():
        files = sorted({nodeid.split("::")[0] for nodeid in nodeids})
        count = len(nodeids)
        lines.append(f"skipped {count} test{'' if count == 1 else 's'}: {head}: {', '.join(files)}")
    return lines


if __name__ == "__main__":
    results = ensure_all()
    for outcome in results:
        print(f"{outcome.label}: {outcome.status}{f' ({outcome.why})' if outcome.why else ''}")
    sys.exit(1 if any(o.missing for o in results) else 0)
