"""Bad settings are refused before anything is spent, and a failed start leaves nothing behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import CLI_ENV, cli_command
from helpers.run_db import count_episodes

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


def test_ctrl_c_says_how_to_resume(tmp_path: Path) -> None:
    proc = subprocess.Popen([*cli_command(), "eval", "--server", SUPPORT, "--tasks", TASKS, "--models",
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
