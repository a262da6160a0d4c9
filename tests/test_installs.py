"""The session's installs (tests/installs.py): an install that is done is not made again, one that cannot or does
not succeed fails nothing and says why, and the end-of-run summary puts each not-installed skip under the install
that would have prevented it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import installs
import pytest


def outcomes(status: str = "present", why: str = "") -> list[installs.Outcome]:
    return [installs._outcome(name, status, why) for name in installs.DONE]


def test_chromium_is_not_tried_without_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(installs.DONE, "chromium", lambda: False)
    monkeypatch.setattr(installs.shutil, "which", lambda program: f"/usr/bin/{program}")
    monkeypatch.setattr(installs.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(installs, "_run", lambda *a, **k: pytest.fail("apt-get ran without root"))
    outcome = installs.chromium()
    assert (outcome.status, outcome.missing) == ("cannot", True)
    assert outcome.describe() == ("chromium and faketime (Debian) is not installed and cannot be (not root: sudo "
                                  "apt-get install chromium faketime)")


def test_an_install_that_is_done_is_not_made_again(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(installs, "CACHE", tmp_path)
    monkeypatch.setitem(installs.DONE, "excel-venv", lambda: True)
    outcome = installs._install("excel-venv", "excel", lambda: pytest.fail("made again"))
    assert outcome.status == "present" and not outcome.missing


def test_a_failed_install_fails_nothing_and_says_why(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(installs, "CACHE", tmp_path)
    monkeypatch.setattr(installs, "MCP1_VENV", tmp_path / "mcp1-venv")  # made afresh: removed first
    monkeypatch.setitem(installs.DONE, "mcp1-venv", lambda: False)
    monkeypatch.setattr(installs.subprocess, "run", lambda argv, **_: subprocess.CompletedProcess(
        argv, 1, "", "Looking in indexes: x\nERROR: No matching distribution found for mcp<2\n"))
    outcome = installs.mcp1_venv()
    assert outcome.status == "failed"
    assert outcome.why.endswith("ERROR: No matching distribution found for mcp<2")
    err = capsys.readouterr().err
    assert "installing mcp<2 and mcp-server-sqlite into .ci/cache/mcp1-venv" in err and "(once)…" in err
    assert "could not install the mcp 1.x virtualenv" in err


REASONS = [  # node id, skip reason: what the tests say today
    ("tests/test_report_html.py::test_a", "chromium is not installed (tests/installs.py installs it)"),
    ("tests/test_report_html.py::test_b", "Skipped: chromium is not installed (tests/installs.py installs it)"),
    ("tests/test_lint.py::test_time", "mcp-server-time is not installed next to /v/bin/python (pip install x)"),
    ("tests/test_lint_security.py::test_x[time]", "the time server is not installed, or node is missing (...)"),
    ("tests/test_lint_security.py::test_x[sqlite]", "the sqlite server is not installed, or node is missing (...)"),
    ("tests/test_servers.py::test_legacy", "needs the mcp 1.x virtualenv at /r/.ci/cache/mcp1-venv/bin/python"),
    ("tests/test_published_large.py::test_s[excel]", "/r/.ci/cache/excel-venv/bin/excel-mcp-server is not installed"),
    ("tests/test_published.py::test_e", "node is not on PATH (needed for @modelcontextprotocol/server-everything)"),
    ("tests/test_published_memory.py::test_m", "/r/.ci/cache/npm/node_modules/.bin/mcp-server-memory is missing; x"),
    ("tests/test_optimize.py::test_p", "GNU patch is not installed"),
    ("tests/test_regress.py::test_q", "could not import 'openai': No module named 'openai'"),
]


def test_the_summary_puts_each_skip_under_its_install() -> None:
    failed = [o for o in outcomes("failed", "offline") if o.name != "chromium"]
    lines = installs.summary_lines([installs._outcome("chromium", "cannot", "not root"), *failed], REASONS)
    assert lines[0] == ("skipped 2 tests: chromium and faketime (Debian) is not installed and cannot be (not root): "
                        "tests/test_report_html.py")
    assert lines[1:] == [
        "skipped 2 tests: mcp-server-time is not installed: installing it failed (offline): "
        "tests/test_lint.py, tests/test_lint_security.py",
        "skipped 2 tests: the mcp 1.x virtualenv (.ci/cache/mcp1-venv) is not installed: installing it failed "
        "(offline): tests/test_lint_security.py, tests/test_servers.py",
        "skipped 1 test: the excel virtualenv (.ci/cache/excel-venv) is not installed: installing it failed "
        "(offline): tests/test_published_large.py",
        "skipped 2 tests: the published npm servers (.ci/cache/npm) are not installed: installing them failed "
        "(offline): tests/test_published.py, tests/test_published_memory.py",
        "skipped 1 test: GNU patch is not installed: tests/test_optimize.py",
    ]


def test_no_summary_without_not_installed_skips() -> None:
    assert installs.summary_lines(outcomes(), [REASONS[-1]]) == []
    assert installs.summary_lines(outcomes(), []) == []
