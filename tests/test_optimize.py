"""`optimize` end to end on the bundled examples with the offline agents (the acceptance of the
optimize issue): the winner beats the baseline on held-out tasks for every model, the gate passes,
winning.patch applies to what `optimizer dump` writes, and the same seed gives the same winner."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.run_db import count_episodes

ROOT = Path(__file__).resolve().parent.parent
RUNS: dict[str, Path] = {}


def cli(*args: str, script: str = "optimizer", env: dict[str, str] | None = None,
        timeout: float = 400) -> subprocess.CompletedProcess[str]:
    entry = "main" if script == "optimizer" else "optimize_main"
    cmd = [sys.executable, "-c", f"from optimizer.cli import {entry}; {entry}()", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                          env={**(env or os.environ), "COLUMNS": "120", "NO_COLOR": "1"})


def server(example: str) -> str:
    return f"{sys.executable} {ROOT / 'examples' / example / 'server.py'}"


@pytest.fixture(scope="module")
def runs_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("runs")


def optimized(example: str, runs_dir: Path, run_id: str | None = None) -> tuple[dict, Path]:
    run_id = run_id or example
    if run_id not in RUNS:
        result = cli("--server", server(example), "--tasks", str(ROOT / "examples" / example / "tasks"), "--offline",
                     "--runs-dir", str(runs_dir), "--run-id", run_id, "--json", script="optimize")
        assert result.returncode == 0, result.stderr[-3000:]
        RUNS[run_id] = runs_dir / run_id
    return json.loads((RUNS[run_id] / "summary.json").read_text(encoding="utf-8")), RUNS[run_id]


@pytest.mark.parametrize("example", ["support", "workspace"])
def test_winner_beats_baseline_on_heldout_for_every_model(example: str, runs_dir: Path) -> None:
    summary, run_dir = optimized(example, runs_dir)
    assert summary["offline"] is True and summary["gate"]["passed"] is True
    for model in summary["models"]:
        before, after = summary["baseline"]["heldout"][model], summary["winner"]["heldout"][model]
        assert after["accuracy"] > before["accuracy"], (model, before, after)
        assert summary["winner"]["train"][model]["accuracy"] > summary["baseline"]["train"][model]["accuracy"]
    assert summary["schemes_tried"] == ["none", "prefix", "suffix"]
    for key in ("run_id", "server", "models", "splits", "baseline", "winner", "gate", "definition_tokens",
                "episodes", "cost", "patch", "overlay"):
        assert key in summary
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    assert "OFFLINE" in report and "## Gate: PASSED" in report and "```diff" in report


@pytest.mark.parametrize("example", ["support", "workspace"])
def test_winning_patch_applies_to_the_dumped_definitions(example: str, runs_dir: Path, tmp_path: Path) -> None:
    if shutil.which("patch") is None:
        pytest.skip("GNU patch is not installed")
    _, run_dir = optimized(example, runs_dir)
    base, want = tmp_path / "d", tmp_path / "want"
    assert cli("dump", "--server", server(example), "--out-dir", str(base)).returncode == 0
    assert cli("dump", "--server", server(example), "--out-dir", str(want),
               "--overlay", str(run_dir / "overlay.json")).returncode == 0
    with open(run_dir / "winning.patch", encoding="utf-8") as patch:
        applied = subprocess.run(["patch", "-p1", "-d", str(base)], stdin=patch, capture_output=True, text=True)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    got = {p.name: p.read_text(encoding="utf-8") for p in base.glob("*.json")}
    expected = {p.name: p.read_text(encoding="utf-8") for p in want.glob("*.json")}
    assert got == expected
    assert (run_dir / "winning.patch").read_text(encoding="utf-8").strip()


def test_same_seed_same_winner_and_patch_in_a_fresh_process(runs_dir: Path) -> None:
    first, first_dir = optimized("support", runs_dir)
    second, second_dir = optimized("support", runs_dir, run_id="support-again")
    for name in ("overlay.json", "winning.patch"):
        assert (first_dir / name).read_bytes() == (second_dir / name).read_bytes()
    assert first["winner"] == second["winner"] and first["gate"] == second["gate"]


def test_rerunning_a_finished_run_makes_no_new_episodes(runs_dir: Path) -> None:
    optimized("support", runs_dir)
    result = cli("--resume", "support", "--runs-dir", str(runs_dir), "--json", script="optimize")
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads(result.stdout)
    assert summary["episodes"]["run"] == 0 and summary["episodes"]["cached"] > 0


def test_a_run_killed_in_the_search_resumes_to_the_same_winner(runs_dir: Path) -> None:
    fresh, fresh_dir = optimized("support", runs_dir)
    args = ["--server", server("support"), "--tasks", str(ROOT / "examples/support/tasks"), "--offline",
            "--runs-dir", str(runs_dir), "--run-id", "killed"]
    proc = subprocess.Popen([sys.executable, "-c", "from optimizer.cli import optimize_main; optimize_main()", *args],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    db = runs_dir / "killed" / "run.db"
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and count_episodes(db) < 400 and proc.poll() is None:
            time.sleep(0.2)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    stored = count_episodes(db)
    assert stored >= 400 and not (runs_dir / "killed" / "summary.json").exists()
    result = cli("--resume", "killed", "--runs-dir", str(runs_dir), "--json", script="optimize")
    assert result.returncode == 0, result.stderr[-3000:]
    resumed = json.loads(result.stdout)
    assert resumed["episodes"]["cached"] >= stored - 8  # at most the episodes in flight at the kill are lost
    assert resumed["winner"] == fresh["winner"] and resumed["gate"] == fresh["gate"]
    assert (runs_dir / "killed" / "overlay.json").read_bytes() == (fresh_dir / "overlay.json").read_bytes()



def test_source_patch_rewrites_the_server_code(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    source = tmp_path / "support"
    shutil.copytree(ROOT / "examples" / "support", source, ignore=shutil.ignore_patterns("tasks", "__pycache__"))
    tasks = str(ROOT / "examples/support/tasks")
    result = cli("--server", f"{sys.executable} {source / 'server.py'}", "--tasks", tasks, "--offline",
                 "--rounds", "1", "--trials", "4", "--source", str(source), "--runs-dir",
                 str(tmp_path / "runs"), "--run-id", "src", "--json", script="optimize")
    assert result.returncode == 0, result.stderr[-3000:]
    placed = json.loads(result.stdout)["source_patch"]
    assert placed["changed"] and Path(placed["path"]).read_text(encoding="utf-8").startswith("diff --git")
    subprocess.run(["git", "init", "-q"], cwd=source, check=True)
    applied = subprocess.run(["git", "apply", "--check", placed["path"]], cwd=source, capture_output=True, text=True)
    assert applied.returncode == 0, applied.stderr


def test_without_a_key_or_models_it_says_what_to_do(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    result = cli("--server", server("support"), "--tasks", str(ROOT / "examples/support/tasks"),
                 "--runs-dir", str(tmp_path), script="optimize", env=env)
    assert result.returncode == 2
    assert "ANTHROPIC_API_KEY" in result.stderr and "--offline" in result.stderr
