"""Shared test fixtures: free ports, background processes that are always stopped, the CLI in a subprocess."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import pytest


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


CliRunner = Callable[..., "subprocess.CompletedProcess[str]"]


@pytest.fixture
def run_cli(tmp_path: Path) -> CliRunner:
    """Run `optimizer ARGS...` (the installed console script when there is one) in a subprocess whose working
    directory is tmp_path; returns the CompletedProcess with text stdout/stderr."""
    script = Path(sys.executable).with_name("optimizer")
    prefix = [str(script)] if script.exists() else [sys.executable, "-c", "from optimizer.cli import main; main()"]

    def run(*args: str | Path, timeout: float = 180, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "200"}
        proc = subprocess.Popen([*prefix, *map(str, args)], cwd=cwd or tmp_path, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8",
                                start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            pytest.fail(f"optimizer {' '.join(map(str, args))} did not finish within {timeout:g} s:\n{err[-3000:]}")
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    return run
