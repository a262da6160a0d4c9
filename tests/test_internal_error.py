"""A bug reaches the user as one line (exit 2, "internal error", the path of a log with the traceback), never as a
traceback on the screen (issue 16)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def test_a_bug_exits_2_with_one_line_and_a_log_of_the_traceback(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The console script's last line of defence: an exception no command expected is a bug, reported in one line
    (exit 2) with the path of a log holding the traceback, secrets redacted; the screen shows no traceback."""
    import optimizer.cli.lint as lint_cli
    from optimizer.cli import main

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom with sk-ant-api03-" + "x" * 40)

    monkeypatch.setattr(lint_cli, "lint", broken)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    (tmp_path / "defs").mkdir()
    (tmp_path / "defs" / "echo.json").write_text(json.dumps(
        {"name": "echo", "description": "Echo the text back.", "input_schema": {"type": "object"}}), encoding="utf-8")
    monkeypatch.setattr("sys.argv", ["optimizer", "lint", "--definitions", str(tmp_path / "defs")])
    with pytest.raises(SystemExit) as stopped:
        main()
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and "Traceback" not in err
    assert "internal error (a bug in the optimizer, not in your input): RuntimeError: boom" in err
    [log] = tmp_path.glob("optimizer-internal-error-*.log")
    assert log.name in "".join(err.split())
    text = log.read_text(encoding="utf-8")
    assert "Traceback" in text and "raise RuntimeError" in text and "x" * 40 not in text
