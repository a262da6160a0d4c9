"""`optimize` end to end on the bundled examples with the offline agents (the acceptance of the
optimize issue): the winner beats the baseline on held-out tasks and loses on none, the gate passes,
winning.patch applies to what `optimizer dump` writes, and the same seed gives the same winner."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import small_optimize_args, small_tasks
from helpers.cli import cli_command
from helpers.run_db import count_episodes

pytestmark = pytest.mark.slow  # end-to-end runs: scheduled first (see conftest.py)

ROOT = Path(__file__).resolve().parent.parent
Cli = Callable[..., Any]
Optimized = Callable[[str], Path]


def server(example: str) -> str:
    return f"{sys.executable} {ROOT / 'examples' / example / 'server.py'}"


def summary_of(run_dir: Path) -> dict:
    return json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("example", ["support"])  # workspace: bench/testbed.py (costly here)
def test_a_finished_run_has_the_documented_summary_and_report(example: str, optimized: Optimized) -> None:
    """The shape of a finished run (the simulated agents are test doubles: no gain is read from them)."""
    run_dir = optimized(example)
    summary = summary_of(run_dir)
    assert summary["offline"] is True and summary["gate"]["passed"] is True
    assert summary["winner"]["candidate"] != summary["baseline"]["candidate"]
    assert summary["schemes_tried"] == ["none", "prefix", "suffix"]
    for key in ("run_id", "server", "models", "splits", "baseline", "winner", "gate", "definition_tokens",
                "episodes", "cost", "patch", "overlay"):
        assert key in summary
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    assert "OFFLINE" in report and "## Gate: PASSED" in report and "```diff" in report
    candidates = summary["candidates"]  # the winner first, then the best of the fronts; held-out only shown
    assert len(candidates) == 2 and candidates[0]["selected"] and not any(c["selected"] for c in candidates[1:])
    assert candidates[0]["id"] == summary["winner"]["candidate"]
    assert candidates[0]["heldout"] == {m: summary["winner"]["heldout"][m] for m in summary["models"]}
    assert all(set(c["train"]) == set(c["heldout"]) == set(summary["models"]) for c in candidates)
    assert "## Candidates on train and held-out" in report
    for verdict in summary["gate"]["models"].values():
        assert verdict["verdict"] == "pass" and verdict["detectable_drop"] is not None


@pytest.mark.parametrize("example", ["support"])  # workspace: bench/testbed.py (costly here)
def test_winning_patch_applies_to_the_dumped_definitions(
    example: str, optimized: Optimized, run_cli: Cli, tmp_path: Path
) -> None:
    if shutil.which("patch") is None:
        pytest.skip("GNU patch is not installed")
    run_dir = optimized(example)
    base, want = tmp_path / "d", tmp_path / "want"
    assert run_cli("dump", "--server", server(example), "--out-dir", str(base)).returncode == 0
    assert run_cli("dump", "--server", server(example), "--out-dir", str(want),
                   "--overlay", str(run_dir / "overlay.json")).returncode == 0
    with open(run_dir / "winning.patch", encoding="utf-8") as patch:
        applied = subprocess.run(["patch", "-p1", "-d", str(base)], stdin=patch, capture_output=True, text=True)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    got = {p.name: p.read_text(encoding="utf-8") for p in base.glob("*.json")}
    expected = {p.name: p.read_text(encoding="utf-8") for p in want.glob("*.json")}
    assert got == expected
    assert (run_dir / "winning.patch").read_text(encoding="utf-8").strip()


def test_offline_by_default_the_readers_score_and_the_rules_proposer_says_it_has_nothing_grounded(
    run_cli: Cli, tmp_path: Path
) -> None:
    """Readers call nothing, so the rules proposer has no error to read: the run keeps the server's definitions and
    says why, instead of writing text it cannot ground."""
    result = run_cli("--server", server("support"), "--tasks", str(small_tasks(tmp_path)), "--offline", "--rounds",
                     "1", "--server-instances", "1", "--runs-dir", str(tmp_path), "--run-id", "r", "--json",
                     script="optimize")
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads(result.stdout)
    assert summary["models"] == ["reader:bm25", "reader:embed"] and summary["offline"] is True
    assert summary["stop_reason"].startswith("nothing grounded to write")
    assert summary["winner"]["candidate"] == summary["baseline"]["candidate"]
    report = (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    assert "findability" in report and "not agent accuracy" in report


def test_rerunning_a_finished_run_makes_no_new_episodes(optimized: Optimized, run_cli: Cli, tmp_path: Path) -> None:
    shutil.copytree(optimized("support"), tmp_path / "support")
    result = run_cli("--resume", "support", "--runs-dir", str(tmp_path), "--json", script="optimize")
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads(result.stdout)
    assert summary["episodes"]["run"] == 0 and summary["episodes"]["cached"] > 0


def test_a_run_killed_in_the_search_resumes_to_the_same_winner(
    small_optimize: Path, run_cli: Cli, tmp_path: Path
) -> None:
    uninterrupted = summary_of(small_optimize)
    assert uninterrupted["rounds"][0]["improved"] and len(uninterrupted["rounds"]) == 2
    args = small_optimize_args(small_tasks(tmp_path))
    kill_at = uninterrupted["episodes"]["run"] * 6 // 10  # in the search, after round 1's first trials
    runs_dir = tmp_path / "killed-runs"
    # The killed run is a fresh process with its own hash seed, so the same winner after the resume also shows
    # that a seed gives the same run in another process (nothing depends on set or dict order of strings).
    proc = subprocess.Popen([*cli_command("optimize", sim=True), *args, "--runs-dir", str(runs_dir), "--run-id",
                             "killed"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, env={**os.environ, "PYTHONHASHSEED": "12345"})
    db = runs_dir / "killed" / "run.db"
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and count_episodes(db) < kill_at and proc.poll() is None:
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    stored = count_episodes(db)
    assert stored >= kill_at and not (runs_dir / "killed" / "summary.json").exists()
    result = run_cli("--resume", "killed", "--runs-dir", str(runs_dir), "--json", script="optimize")
    assert result.returncode == 0, result.stderr[-3000:]
    resumed = json.loads(result.stdout)
    # nothing stored is run again but the episodes in flight at the kill (a complete trial's score is kept in the
    # study, so its episodes are not even read back: counting cached episodes would not show this)
    assert resumed["episodes"]["run"] <= uninterrupted["episodes"]["run"] - stored + 8
    assert resumed["winner"] == uninterrupted["winner"] and resumed["gate"] == uninterrupted["gate"]
    def searched(summary: dict) -> list[dict]:  # the rounds less how many episodes each ran in this process
        return [{k: v for k, v in round_.items() if k != "episodes"} for round_ in summary["rounds"]]

    assert searched(resumed) == searched(uninterrupted)
    assert (runs_dir / "killed" / "overlay.json").read_bytes() == (small_optimize / "overlay.json").read_bytes()


def test_without_a_key_or_models_it_says_what_to_do(run_cli: Cli, tmp_path: Path) -> None:
    result = run_cli("--server", server("support"), "--tasks", str(ROOT / "examples/support/tasks"),
                     "--runs-dir", str(tmp_path), script="optimize", env={"ANTHROPIC_API_KEY": None})
    assert result.returncode == 2
    assert "ANTHROPIC_API_KEY" in result.stderr and "--offline" in result.stderr
