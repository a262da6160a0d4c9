"""Shared test fixtures: free ports, background processes that are always stopped, the CLI in this process or in a
new one; and the session's installs (tests/installs.py) with the summary of what they could not make."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import installs
import pytest
import typer.testing
from fakes.sim import register as register_sim_agents
from helpers.cli import CLI_ENV, SHARED_RUN_FLAGS, cli_command

REPO = Path(__file__).resolve().parent.parent
os.environ.update(CLI_ENV)  # before a test module imports the CLI: its rich consoles read these when they are made
register_sim_agents()  # the simulated agents (`sim:` models) are test doubles: they load in the tests only


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


@contextlib.contextmanager
def _background(
    argv: Sequence[str], *, port: int, env: Mapping[str, str] | None = None, cwd: Path | None = None,
    ready_timeout: float = 30.0,
) -> Iterator[subprocess.Popen[bytes]]:
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(list(argv), env={**os.environ, **(env or {})}, cwd=cwd, stdin=subprocess.DEVNULL,
                                stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + ready_timeout
            while True:
                if proc.poll() is not None:
                    log.seek(0)
                    pytest.fail(f"{argv} exited with {proc.returncode} before listening on port {port}:\n"
                                + log.read().decode(errors="replace")[-2000:])
                with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
                if time.monotonic() > deadline:
                    pytest.fail(f"{argv} did not listen on port {port} within {ready_timeout:g} s")
                time.sleep(0.1)
            yield proc
        finally:
            _stop(proc)


INSTALLS = pytest.StashKey[list[installs.Outcome]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--no-installs", action="store_true",
                     help="do not install what the tests need (tests/installs.py): tests whose installs are missing "
                          "skip")


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """Before anything is collected, make what the tests need beyond `pip install ".[dev]"` (tests/installs.py),
    once per session: in this process when it is the pytest-xdist controller (which starts the workers after this
    hook) or the only process; never in a worker."""
    config = session.config
    if hasattr(config, "workerinput"):
        return
    if config.getoption("--no-installs") or config.getoption("collectonly"):
        config.stash[INSTALLS] = installs.checked_only("installs are turned off: --no-installs"
                                                       if config.getoption("--no-installs") else "--collect-only")
        return
    capture = config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled() if capture is not None else contextlib.nullcontext():
        config.stash[INSTALLS] = installs.ensure_all()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line per missing install that made tests skip: how many, why, and in which files (nothing when none)."""
    outcomes = terminalreporter.config.stash.get(INSTALLS, None)
    if outcomes is None:
        return
    skipped = [(report.nodeid, report.longrepr[2]) for report in terminalreporter.stats.get("skipped", ())
               if isinstance(getattr(report, "longrepr", None), tuple) and len(report.longrepr) == 3]
    lines = installs.summary_lines(outcomes, skipped)
    if lines:
        terminalreporter.write_sep("=", "not installed")
        for line in lines:
            terminalreporter.write_line(line)



def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """With OPTIMIZER_REQUIRE_INSTALLS=1 (what `.ci/run` sets), a test skipped for a missing install fails the run:
    CI must run everything. Checked again here since the summary comes after the exit status is set."""
    if os.environ.get("OPTIMIZER_REQUIRE_INSTALLS") == "1" and not hasattr(session.config, "workerinput"):
        outcomes = session.config.stash.get(INSTALLS, None)
        reporter = session.config.pluginmanager.getplugin("terminalreporter")
        skipped = [(r.nodeid, r.longrepr[2]) for r in (reporter.stats.get("skipped", ()) if reporter else ())
                   if isinstance(getattr(r, "longrepr", None), tuple) and len(r.longrepr) == 3]
        if outcomes is not None and installs.summary_lines(outcomes, skipped) and exitstatus == 0:
            session.exitstatus = 1


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The order pytest-xdist hands out the tests in (with `--dist loadgroup` and no groups: one at a time, to
    whichever worker is free). Tests marked slow come first, so that the long end-to-end tests start early instead
    of ending the run on one worker while the others wait; of those, the ones that use the session's `optimized`
    runs come first of all, so that the workers make the runs side by side before anything else asks for them."""
    items.sort(key=lambda item: (item.get_closest_marker("slow") is None,
                                 "optimized" not in getattr(item, "fixturenames", ())))


@pytest.fixture(autouse=True)
def _no_real_api(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may reach a real model API: keys and base URLs from the developer's environment are removed
    (tests that talk to the local fake set their own, and subprocesses inherit this environment)."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY",
                 "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def free_port() -> Callable[[], int]:
    """A function returning a TCP port on 127.0.0.1 that is free right now."""
    return _free_port


@pytest.fixture(scope="session")
def background() -> Callable[..., contextlib.AbstractContextManager[subprocess.Popen[bytes]]]:
    """`with background(argv, port=p, env=..., cwd=...) as proc:` runs a process until it accepts connections
    on 127.0.0.1:p (failing the test with its output if it exits first) and terminates it on exit."""
    return _background


RunCli = Callable[..., "subprocess.CompletedProcess[str]"]


def _invoke(args: Sequence[str | Path], *, cwd: Path, env: Mapping[str, str | None] | None = None,
            script: str = "optimizer") -> subprocess.CompletedProcess[str]:
    """`optimizer ARGS...` (or `optimize ARGS...`) through typer's CliRunner in this process; see run_cli."""
    from optimizer.cli import app, optimize_app

    argv = [str(a) for a in args]
    before = os.getcwd()
    os.chdir(cwd)
    try:
        result = typer.testing.CliRunner().invoke(app if script == "optimizer" else optimize_app, argv,
                                                  env={**CLI_ENV, **(env or {})})
    finally:
        os.chdir(before)
    stderr = result.stderr
    if result.exc_info is not None and not isinstance(result.exception, SystemExit):
        stderr += "".join(traceback.format_exception(*result.exc_info))
    return subprocess.CompletedProcess([script, *argv], result.exit_code, result.stdout, stderr)


@pytest.fixture
def run_cli(tmp_path: Path) -> RunCli:
    """Run `optimizer ARGS...` (or, with script="optimize", the `optimize` console script's app) in this process
    with typer's CliRunner, in the working directory cwd (default tmp_path), with `env` laid over the environment
    for the call and an empty, non-terminal stdin. Returns a CompletedProcess with the exit code and text
    stdout/stderr kept apart; an uncaught exception exits 1 with its traceback on stderr, as a process would."""

    def run(*args: str | Path, cwd: Path | None = None, env: Mapping[str, str | None] | None = None,
            script: str = "optimizer") -> subprocess.CompletedProcess[str]:
        return _invoke(args, cwd=cwd or tmp_path, env=env, script=script)

    return run


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on `path` (made if missing): one pytest-xdist worker at a time."""
    with open(path, "a", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def optimized(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """`optimized("support")`: the run directory of one finished offline `optimize` of a bundled example (run id =
    the example's name), made once per test session and shared by the pytest-xdist workers. Read it only; copy it
    (shutil.copytree into tmp_path) to change or resume it. `optimized("published/time")` does the same for a
    server of the test bed (its launcher, its tasks, destructive tools allowed: every launcher serves a fresh
    disposable fixture); the gate may fail there, so only a run that errored fails the fixture."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the session's own directory, above each worker's
    runs = shared / "optimized-examples"
    runs.mkdir(exist_ok=True)

    def get(example: str) -> Path:
        run_id = example.replace("/", "-")
        run_dir = runs / run_id
        folder = REPO / "examples" / example
        published = example.startswith("published/")
        server = folder / ("serve.py" if published else "server.py")
        with _locked(runs / f"{run_id}.lock"):
            if not (run_dir / "summary.json").exists():
                shutil.rmtree(run_dir, ignore_errors=True)  # a run another worker left half done
                # One server process: a bundled example's write tools answer from their inputs alone (no state), so
                # the run is the same as with four, in less CPU; a test-bed launcher serves each process a fresh
                # fixture, which one process then keeps for the whole run (bench/testbed.py runs the default four).
                result = _invoke(["--server", f"{sys.executable} {server}", "--tasks", folder / "tasks", "--offline",
                                  *AGENTS, "--server-instances", "1", *(["--allow-destructive"] if published else []),
                                  *SHARED_RUN_FLAGS,
                                  "--runs-dir", runs,
                                  "--run-id", run_id, "--json"], cwd=shared, script="optimize")
                assert result.returncode in ((0, 1) if published else (0,)), result.stderr[-3000:]
        return run_dir

    return get


AGENTS = ("--models", "sim:lexical,sim:skim")
"""The simulated agents: test doubles that call tools, so a shared run has calls, errors, a search and a winner to
review and resume. They are not quality evidence; no test reads a gain from them."""

SMALL_OPTIMIZE_TASKS = ("customers.yaml", "refunds.yaml")
"""29 of the support example's tasks: an optimize small enough to run twice in a test (killed or stopped, then
resumed) and still through two rounds of the search."""


def small_optimize_args(tasks: Path) -> list[str]:
    """The settings of the small support optimize (`small_optimize`), without --runs-dir and --run-id; `tasks` is a
    directory holding SMALL_OPTIMIZE_TASKS (see `small_tasks`)."""
    server = f"{sys.executable} {REPO / 'examples' / 'support' / 'server.py'}"
    return ["--server", server, "--tasks", str(tasks), "--offline", *AGENTS, "--rounds", "2", "--trials", "8",
            "--heldout-candidates", "1", "--server-instances", "1"]


def small_tasks(directory: Path) -> Path:
    """Copy SMALL_OPTIMIZE_TASKS into `directory`/tasks and return that folder."""
    tasks = directory / "tasks"
    tasks.mkdir(parents=True, exist_ok=True)
    for name in SMALL_OPTIMIZE_TASKS:
        shutil.copy(REPO / "examples" / "support" / "tasks" / name, tasks / name)
    return tasks


@pytest.fixture(scope="session")
def small_optimize(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run directory of one uninterrupted small support optimize (`small_optimize_args`), made once per session
    and shared by the pytest-xdist workers: the reference a stopped-and-resumed run must reproduce. Read it only."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent
    runs = shared / "small-optimize"
    runs.mkdir(exist_ok=True)
    with _locked(runs / "run.lock"):
        if not (runs / "fresh" / "summary.json").exists():
            shutil.rmtree(runs / "fresh", ignore_errors=True)
            result = _invoke([*small_optimize_args(small_tasks(runs)), "--runs-dir", runs, "--run-id", "fresh",
                              "--json"], cwd=shared, script="optimize")
            assert result.returncode == 0, result.stderr[-3000:]
    return runs / "fresh"


@pytest.fixture
def run_cli_process(tmp_path: Path) -> RunCli:
    """Run `optimizer ARGS...` (or `optimize ARGS...` with script="optimize"; the installed console script when
    there is one) in a fresh process, for tests where the process boundary is the point. Working directory cwd
    (default tmp_path), `env` laid over this process's environment, stdin /dev/null; fails the test after
    `timeout` seconds. Returns the CompletedProcess with text stdout/stderr."""

    def run(*args: str | Path, cwd: Path | None = None, env: Mapping[str, str] | None = None,
            script: str = "optimizer", timeout: float = 300) -> subprocess.CompletedProcess[str]:
        sim = any("sim:" in str(a) for a in args)
        proc = subprocess.Popen([*cli_command(script, sim=sim), *map(str, args)], cwd=cwd or tmp_path,
                                env={**os.environ, **CLI_ENV, **(env or {})}, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8",
                                start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            pytest.fail(f"{script} {' '.join(map(str, args))} did not finish within {timeout:g} s:\n{err[-3000:]}")
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    return run
