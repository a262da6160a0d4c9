"""Bad settings are refused before anything is spent, a failed start leaves nothing behind, and a run directory that
fills up stops the run cleanly with nothing lost."""

from __future__ import annotations

import errno
import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest
from conftest import small_optimize_args, small_tasks
from helpers.cli import CLI_ENV, cli_command
from helpers.run_db import count_episodes

from optimizer.files.store import no_room

ROOT = Path(__file__).resolve().parent.parent
SUPPORT = f"{sys.executable} {ROOT / 'examples/support/server.py'}"
TASKS = str(ROOT / "examples/support/tasks")
Cli = Callable[..., Any]


def test_a_storage_that_cannot_open_stops_optimize_before_the_baseline(run_cli: Cli, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    result = run_cli("--server", SUPPORT, "--tasks", TASKS, "--offline", "--runs-dir", str(runs), "--storage",
                     "sqlite:///no/such/dir/x.db", script="optimize")
    assert result.returncode == 2 and "cannot open the study storage" in result.stderr
    assert "Traceback" not in result.stderr and not list(runs.glob("*"))  # no run directory left behind
    worker = run_cli("worker", "--storage", "sqlite:///no/such/dir/x.db", "--study", "optimize-x-r1")
    assert worker.returncode == 2 and "cannot open the study storage" in worker.stderr
    assert "Traceback" not in worker.stderr


def test_a_run_that_fails_its_checks_leaves_no_directory(run_cli: Cli, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    result = run_cli("eval", "--server", SUPPORT, "--tasks", str(tmp_path / "missing"), "--offline", "--runs-dir",
                     str(runs))
    assert result.returncode == 2 and not list(runs.glob("*"))


def test_a_resume_with_another_command_is_refused(run_cli: Cli, tmp_path: Path) -> None:
    runs = str(tmp_path / "runs")
    made = run_cli("eval", "--server", SUPPORT, "--tasks", TASKS, "--offline", "--runs-dir", runs, "--run-id", "ev",
                   "--server-instances", "1")
    assert made.returncode == 0, made.stderr[-2000:]
    result = run_cli("--resume", "ev", "--runs-dir", runs, script="optimize")
    assert result.returncode == 2 and "made by `optimizer eval`, not `optimize`" in result.stderr
    assert (tmp_path / "runs" / "ev" / "run.db").exists()  # the eval run is untouched


class Refusing(BaseHTTPRequestHandler):
    """Answers every request with the status in the server's `status` attribute."""

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's handler naming
        self.send_response(self.server.status)  # type: ignore[attr-defined]
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST

    def log_message(self, *args: Any) -> None:
        pass


@pytest.mark.parametrize(("status", "said"), [(401, "HTTP 401 Unauthorized (no credentials were given)"),
                                              (403, "HTTP 403 Forbidden")])
def test_an_http_server_that_refuses_says_so_and_points_at_header(
    run_cli: Cli, tmp_path: Path, status: int, said: str
) -> None:
    server = HTTPServer(("127.0.0.1", 0), Refusing)
    server.status = status  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        result = run_cli("dump", "--server", f"http://127.0.0.1:{server.server_port}/mcp", "--out-dir",
                         str(tmp_path / "d"))
    finally:
        server.shutdown()
    assert result.returncode == 2 and said in result.stderr and "--header" in result.stderr


@pytest.mark.slow
def test_ctrl_c_says_how_to_resume(tmp_path: Path) -> None:
    proc = subprocess.Popen([*cli_command(sim=True), "eval", "--server", SUPPORT, "--tasks", TASKS, "--models",
                             "sim:lexical?latency_ms=150", "--runs-dir", str(tmp_path), "--run-id", "stopped",
                             "--max-connections", "1", "--server-instances", "1"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **CLI_ENV}, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and count_episodes(tmp_path / "stopped" / "run.db") < 3:
        time.sleep(0.1)
    assert proc.poll() is None, "the run ended before it could be interrupted"  # 66 tasks at 150 ms a turn: ~30 s
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err[-3000:]
    assert "continue with the same command and --resume stopped" in err


def test_optimize_without_held_out_tasks_is_refused_before_the_baseline(run_cli: Cli, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    result = run_cli("--server", SUPPORT, "--tasks", TASKS, "--offline", "--heldout", "0", "--runs-dir", str(runs),
                     "--server-instances", "1", script="optimize")
    assert result.returncode == 2 and "no held-out tasks" in result.stderr and not list(runs.glob("*"))


def full_disk(limit: int) -> Callable[[], None]:
    """A child process's `preexec_fn`: a write that would take any one file past `limit` bytes fails with EFBIG
    (SIGXFSZ ignored), as on a disk that is full, with no root and no mount."""

    def limit_writes() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return limit_writes


def on_a_full_disk(script: str, args: list[str], limit: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*cli_command(script, sim=True), *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=240, env={**os.environ, **CLI_ENV}, stdin=subprocess.DEVNULL,
                          preexec_fn=full_disk(limit))


def assert_stopped_for_a_full_disk(result: subprocess.CompletedProcess[str], run_dir: Path) -> int:
    """The run exited 2 naming the run directory and a full disk, without a traceback; returns the episodes stored."""
    assert result.returncode == 2, result.stderr[-3000:]
    assert f"error: cannot write to the run directory {run_dir}: disk full (a file reached the file size limit" in (
        result.stderr), result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    stored = count_episodes(run_dir / "run.db")
    assert stored > 0 and (f"The {stored} episodes finished so far are saved; make room, then continue with the same "
                           f"command and --resume {run_dir.name}") in result.stderr
    return stored


@pytest.mark.slow
def test_a_full_disk_stops_eval_with_exit_2_and_resume_finishes_it_the_same(run_cli: Cli, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    args = ["eval", "--server", SUPPORT, "--tasks", TASKS, "--models", "sim:lexical", "--server-instances", "1",
            "--runs-dir", str(runs)]
    stored = assert_stopped_for_a_full_disk(on_a_full_disk("optimizer", [*args, "--run-id", "full"], 200_000),
                                            runs / "full")
    assert stored < 66
    resumed = run_cli("eval", "--resume", "full", "--runs-dir", str(runs), "--json")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    report = json.loads(resumed.stdout)
    changed = report["episodes"].pop("changed_state")  # the support example's refunds and tickets write
    assert report["episodes"] == {"run": 66 - stored, "cached": stored, "infra_errors": 0, "infra_retried": 0}
    assert 0 < changed < 66 - stored
    whole = run_cli(*args, "--run-id", "whole", "--json")
    assert whole.returncode == 0, whole.stderr[-3000:]
    uninterrupted = json.loads(whole.stdout)
    assert (report["results"], report["confusion"]) == (uninterrupted["results"], uninterrupted["confusion"])


@pytest.mark.slow
def test_a_full_disk_stops_optimize_and_resume_gives_the_same_winner(
        run_cli: Cli, small_optimize: Path, tmp_path: Path) -> None:
    args = [*small_optimize_args(small_tasks(tmp_path)), "--runs-dir", str(tmp_path / "runs")]
    # 1 MB fills up after the baseline, as the search opens its study in the run's database (optuna's writes)
    assert_stopped_for_a_full_disk(on_a_full_disk("optimize", [*args, "--run-id", "full"], 1_000_000),
                                   tmp_path / "runs" / "full")
    resumed = run_cli("--resume", "full", "--runs-dir", str(tmp_path / "runs"), "--json", script="optimize")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    after = json.loads(resumed.stdout)
    uninterrupted = json.loads((small_optimize / "summary.json").read_text(encoding="utf-8"))
    assert (after["winner"], after["gate"]) == (uninterrupted["winner"], uninterrupted["gate"])


def test_no_room_tells_a_full_disk_from_other_write_errors(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "small.db")
    db.execute("PRAGMA max_page_count = 3")  # SQLite's own "database or disk is full"
    db.execute("CREATE TABLE t (x BLOB)")
    with pytest.raises(sqlite3.OperationalError) as full:
        db.execute("INSERT INTO t VALUES (?)", (b"x" * 100_000,))
    db.close()
    assert no_room(full.value, tmp_path) == "disk full (SQLite: database or disk is full)"
    try:  # as optuna and SQLAlchemy pass it on: raised from the SQLite error
        raise RuntimeError("the storage failed") from full.value
    except RuntimeError as wrapped:
        assert no_room(wrapped, tmp_path) == "disk full (SQLite: database or disk is full)"
    enospc = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(tmp_path / "eval.json"))
    assert no_room(enospc, tmp_path) == f"disk full ({os.strerror(errno.ENOSPC)}: {tmp_path / 'eval.json'})"
    assert no_room(ExceptionGroup("workers", [ValueError("x"), enospc]), tmp_path) is not None
    assert no_room(OSError(errno.EACCES, "Permission denied"), tmp_path) is None
    assert no_room(sqlite3.OperationalError("no such table: t"), tmp_path) is None

