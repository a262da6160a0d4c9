"""Several processes share one optimize study through one SQLite file (`optimizer worker`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.cli import cli_command

from optimizer.search.study import load_trials

pytestmark = pytest.mark.slow  # end-to-end runs: scheduled first (see conftest.py)

ROOT = Path(__file__).resolve().parent.parent
ENTRY = cli_command(sim=True)[-1]
"""The CLI's entry point, the tests' simulated agents registered (python -c ENTRY ARGS...)."""


def test_workers_evaluate_trials_of_a_running_optimize(tmp_path: Path) -> None:
    run_dir = tmp_path / "runs" / "shared"
    tasks = tmp_path / "tasks"  # 21 of the example's tasks: trials long enough for the workers to join, no longer
    tasks.mkdir()
    for name in ("orders.yaml", "shipping.yaml"):
        shutil.copy(ROOT / "examples/support/tasks" / name, tasks / name)
    storage = f"sqlite:///{tmp_path / 'study.db'}"
    main = subprocess.Popen(
        [sys.executable, "-c", ENTRY, "optimize", "--server", f"{sys.executable} {ROOT / 'examples/support/server.py'}",
         "--tasks", str(tasks), "--models", "sim:lexical?latency_ms=40", "--rounds", "1",
         "--trials", "12", "--storage", storage, "--runs-dir", str(tmp_path / "runs"), "--run-id", "shared",
         "--max-connections", "2", "--heldout-candidates", "1", "--json"],  # two server processes: sharing is the point
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    study = "optimize-shared-r1"
    workers = [subprocess.Popen([sys.executable, "-c", ENTRY, "worker", "--storage", storage, "--study", study,
                                 "--wait", "120", "--json"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
               for _ in range(2)]  # started with the main run: they wait for its study to appear
    outputs = [w.communicate(timeout=300) for w in workers]
    main_out, main_err = main.communicate(timeout=300)
    assert main.returncode in (0, 1), main_err[-3000:]
    for worker, (_out, err) in zip(workers, outputs, strict=True):
        assert worker.returncode == 0, err[-3000:]
    reports = [json.loads(out) for out, _ in outputs]
    assert sum(r["episodes"]["run"] for r in reports) > 0, f"the workers evaluated nothing: {reports}"
    trials = [t for t in load_trials(storage, study) if t["state"] in ("COMPLETE", "PRUNED")]
    assert len(trials) >= 12
    summary = json.loads(main_out)
    assert summary["run_id"] == "shared" and (run_dir / "winning.patch").exists()


def test_a_worker_waits_for_a_study_that_never_comes_then_says_so_without_making_the_file(
        run_cli: Callable[..., subprocess.CompletedProcess[str]], tmp_path: Path) -> None:
    db = tmp_path / "later.db"
    result = run_cli("worker", "--storage", f"sqlite:///{db}", "--study", "optimize-x-r1", "--wait", "1")
    assert result.returncode == 2 and "no study 'optimize-x-r1'" in result.stderr and "waited 1 s" in result.stderr
    assert not db.exists()
