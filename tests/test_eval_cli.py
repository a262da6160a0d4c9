"""`optimizer eval` end to end: JSON shape, determinism across processes, resume after a kill, bad task files,
destructive tools."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import small_tasks
from helpers.cli import cli_command
from helpers.run_db import count_episodes

from optimizer.stats.efficiency import KEYS

ROOT = Path(__file__).resolve().parent.parent
SUPPORT = f"{sys.executable} {ROOT / 'examples/support/server.py'}"
SUPPORT_TASKS = ROOT / "examples/support/tasks"
DANGER = f"{sys.executable} {ROOT / 'tests/fixtures/servers/destructive_server.py'}"
ONE_SERVER = ("--server-instances", "1")
"""For runs where the number of server processes is not the point (each costs about a second of CPU to start);
tests/test_servers.py and tests/test_transports.py cover several."""

Cli = Callable[..., Any]


@pytest.mark.slow
def test_json_report_has_the_documented_shape(run_cli: Cli, tmp_path: Path) -> None:
    result = run_cli("eval", "--server", SUPPORT, "--tasks", str(small_tasks(tmp_path)), "--runs-dir", str(tmp_path),
                     "--run-id", "shape", "--json", *ONE_SERVER)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert {"run_id", "models", "results", "confusion", "episodes"} <= set(report)
    assert report["models"] == ["reader:bm25", "reader:embed"]  # the offline default: readers
    assert report["offline"] is True
    for model in report["models"]:
        for split in ("train", "heldout"):
            row = report["results"][model][split]
            assert set(row) == {"accuracy", "passed", "n", "ci_low", "ci_high", *KEYS}
            assert 0 <= row["ci_low"] <= row["accuracy"] <= row["ci_high"] <= 1
            assert row["calls_per_task"] == row["failed_calls_per_task"] == 0  # readers rank tools, call nothing
    assert report["episodes"]["run"] == sum(r["n"] for m in report["results"].values() for r in m.values())
    run_dir = tmp_path / "shape"
    assert (run_dir / "run.db").exists() and (run_dir / "eval.json").exists()
    lines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in (run_dir / "transcripts").glob("*.jsonl"))
    assert lines == report["episodes"]["run"]


@pytest.mark.slow
def test_same_seed_gives_byte_identical_results_in_another_process(
    run_cli: Cli, run_cli_process: Cli, tmp_path: Path
) -> None:
    outputs = []
    for run, cli in (("one", run_cli), ("two", run_cli_process)):
        result = cli("eval", "--server", SUPPORT, "--tasks", str(small_tasks(tmp_path)), "--runs-dir", str(tmp_path),
                     "--run-id", run, "--seed", "7", "--epochs", "2", "--server-instances", "1",
                     "--models", "sim:lexical?noise=0.3,sim:skim?noise=0.3", "--json")
        assert result.returncode == 0, result.stderr
        report = json.loads(result.stdout)
        outputs.append(json.dumps({k: report[k] for k in ("results", "confusion", "episodes")}, sort_keys=True))
    assert outputs[0] == outputs[1]


@pytest.mark.slow
def test_resume_after_a_kill_repeats_no_finished_episode(run_cli: Cli, tmp_path: Path) -> None:
    args = ["eval", "--server", SUPPORT, "--tasks", str(small_tasks(tmp_path)), "--runs-dir", str(tmp_path),
            "--run-id", "killed", "--models", "sim:lexical?latency_ms=20", "--max-connections", "1"]
    proc = subprocess.Popen([*cli_command(sim=True), *args], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    db = tmp_path / "killed" / "run.db"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and count_episodes(db) < 8:
            time.sleep(0.2)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    done_before = count_episodes(db)
    assert done_before >= 8
    result = run_cli("eval", "--resume", "killed", "--runs-dir", str(tmp_path), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    total = sum(r["n"] for m in report["results"].values() for r in m.values())
    assert report["episodes"]["cached"] == done_before
    assert report["episodes"]["run"] == total - done_before
    assert count_episodes(db) == total
    again = json.loads(run_cli("eval", "--resume", "killed", "--runs-dir", str(tmp_path), "--json").stdout)
    assert again["episodes"] == {"run": 0, "cached": total, "infra_errors": 0, "infra_retried": 0, "changed_state": 0}



def test_bad_task_file_runs_nothing_and_names_file_and_line(run_cli: Cli, tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "a.yaml").write_text('- id: one\n  prompt: "Where is order #10001?"\n  expect:\n'
                                  '    tools: [lookup_order]\n- id: two\n  promt: "typo"\n', encoding="utf-8")
    result = run_cli("eval", "--server", SUPPORT, "--tasks", str(tasks), "--runs-dir", str(tmp_path / "runs"))
    assert result.returncode == 2
    assert "a.yaml:5" in result.stderr or "a.yaml:6" in result.stderr
    assert not list((tmp_path / "runs").glob("*/transcripts/*.jsonl"))


def test_unknown_expected_tool_is_an_error_before_anything_runs(run_cli: Cli, tmp_path: Path) -> None:
    tasks = tmp_path / "t.yaml"
    tasks.write_text('- prompt: "Where is order #10001?"\n  expect: {tools: [lookup_orders]}\n', encoding="utf-8")
    result = run_cli("eval", "--server", SUPPORT, "--tasks", str(tasks), "--runs-dir", str(tmp_path / "runs"),
                     *ONE_SERVER)
    assert result.returncode == 2
    assert "lookup_orders" in result.stderr and "t.yaml:1" in result.stderr


def test_destructive_tools_need_explicit_permission(run_cli: Cli, tmp_path: Path) -> None:
    tasks = tmp_path / "t.yaml"
    tasks.write_text('- prompt: "List the files in the folder \\"docs\\""\n  expect: {tools: [list_files]}\n',
                     encoding="utf-8")
    refused = run_cli("eval", "--server", DANGER, "--tasks", str(tasks), "--runs-dir", str(tmp_path), *ONE_SERVER)
    assert refused.returncode == 2
    assert "delete_file" in refused.stderr and "--allow-destructive" in refused.stderr
    allowed = run_cli("eval", "--server", DANGER, "--tasks", str(tasks), "--runs-dir", str(tmp_path),
                      "--allow-destructive", "--json", *ONE_SERVER)
    assert allowed.returncode == 0, allowed.stderr


def test_api_keys_never_reach_the_run_directory(
    run_cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-ant-test-0123456789abcdefghij"
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)
    result = run_cli("eval", "--server", f"{SUPPORT} --api-key {secret}", "--tasks", str(SUPPORT_TASKS),
                     "--runs-dir", str(tmp_path), "--run-id", "keys", "--json")
    assert result.returncode == 2  # the example server rejects the unknown flag and exits at once
    assert secret not in result.stderr and "***" in result.stderr
    for path in (tmp_path / "keys").rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
    assert secret not in result.stdout


def test_offline_refuses_models_that_are_not_offline(run_cli: Cli, tmp_path: Path) -> None:
    result = run_cli("eval", "--server", SUPPORT, "--tasks", str(SUPPORT_TASKS), "--offline",
                     "--models", "sim:lexical,claude-haiku-5-5", "--runs-dir", str(tmp_path))
    assert result.returncode == 2 and "--offline runs only offline readers" in result.stderr
    assert not list(tmp_path.iterdir())


def test_eval_with_the_offline_readers_reports_findability_and_recall(run_cli: Cli, tmp_path: Path) -> None:
    result = run_cli("eval", "--server", SUPPORT, "--tasks", str(SUPPORT_TASKS), "--models", "reader:bm25,reader:embed",
                     "--offline", "--runs-dir", str(tmp_path), "--run-id", "read", "--json", *ONE_SERVER)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["offline"] is True and report["models"] == ["reader:bm25", "reader:embed"]
    for model in report["models"]:
        assert sum(report["results"][model][s]["n"] for s in ("train", "heldout")) == 66
        assert 0 < report["readers"][model]["found"] <= report["readers"][model]["n"] == 66
    assert report["episodes"]["changed_state"] == 0  # readers call nothing
    text = run_cli("eval", "--resume", "read", "--runs-dir", str(tmp_path), cwd=tmp_path)
    assert text.returncode == 0 and "measure findability" in text.stdout and "among its top 5" in text.stdout
