"""The library behind `optimizer eval`: run (or resume) every task with every model and write `eval.json`
and the transcripts into the run directory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from optimizer.config import EvalConfig
from optimizer.evaluate import EvalResult, Progress
from optimizer.harness import Harness, open_harness
from optimizer.scoring import accuracy_table, confusion


async def run_eval(
    config: EvalConfig | None, *, runs_dir: Path, run_id: str | None = None, resume: str | None = None,
    progress: Progress | None = None, on_start: Callable[[Harness[EvalConfig], int], None] | None = None,
    overrides: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Run (or resume) an eval and return the report that `--json` prints."""
    async with open_harness(config, EvalConfig, runs_dir=runs_dir, run_id=run_id, resume=resume,
                            overrides=overrides, progress=progress) as run:
        tasks = run.taskset.split("all")
        if on_start is not None:
            on_start(run, len(tasks) * len(run.models) * run.config.epochs)
        result = await run.evaluate(run.candidate, tasks, epochs=run.config.epochs)
        report = eval_report(run, result)
        run.store.write_json("eval.json", report)
        run.store.export_transcripts()
        return report


def eval_report(run: Harness[Any], result: EvalResult) -> dict[str, Any]:
    return {
        "run_id": run.store.run_id,
        "run_dir": str(run.store.dir),
        "server": run.pool.spec.display,
        "offline": run.offline,
        "models": run.model_ids,
        "candidate": result.candidate,
        "splits": run.taskset.counts(),
        "results": accuracy_table((o.model, o.split, o.passed) for o in result.outcomes),
        "confusion": {
            model: confusion((o.expected_first, o.chosen_first) for o in result.outcomes
                             if o.model == model and o.expected_first is not None)
            for model in run.model_ids
        },
        "episodes": {"run": result.run, "cached": result.cached, "infra_errors": result.infra_errors},
        "server_restarts": run.pool.restarts,
        "notices": run.notices,
    }
