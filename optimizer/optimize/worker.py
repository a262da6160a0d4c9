"""`optimizer worker`: evaluate trials of a running optimization's search from another process.

The main `optimize` process stores each round's pool, search settings and run location with the
round's optuna study. A worker loads them, opens the same run (its episode store, server and tasks),
and asks, evaluates and tells trials until the study holds its planned number of finished trials.
Episodes go through the shared run store, so no (candidate, task, model) is run twice.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from optimizer.optimize.config import OptimizeConfig
from optimizer.optimize.rounds import make_objective
from optimizer.run.config import RunError
from optimizer.run.evaluate import Progress
from optimizer.run.harness import open_harness
from optimizer.search.study import SearchError, search, study_setup

WAIT_POLL_S = 0.5
"""How often a waiting worker looks for its study."""


async def run_worker(storage: str, study_name: str, *, wait: float = 0.0,
                     progress: Progress | None = None) -> dict[str, Any]:
    """Work on one round's study until it is full; return what this worker did. With `wait`, a study that is not
    there yet is looked for again for up to that many seconds (workers may start before `optimize` reaches its
    search); a SQLite file that does not exist yet is waited for, never created."""
    deadline = time.monotonic() + wait
    while True:
        try:
            if wait and _missing_sqlite_file(storage):
                raise SearchError(f"no study {study_name!r} in {storage}: the file does not exist")
            pool, config = study_setup(storage, study_name)
            break
        except SearchError as exc:
            if time.monotonic() >= deadline:
                raise RunError(f"{exc}{f' (waited {wait:g} s)' if wait else ''}") from None
            await asyncio.sleep(WAIT_POLL_S)
    context = config.context or {}
    if "runs_dir" not in context or "run_id" not in context:
        raise RunError(f"study {study_name!r} does not say which run it belongs to")
    async with open_harness(None, OptimizeConfig, runs_dir=Path(context["runs_dir"]), resume=context["run_id"],
                            progress=progress) as run:
        result = await search(pool, [], make_objective(run, run.taskset.split("train")), config)
        return {"study": study_name, "run_id": run.store.run_id, "trials_in_study": len(result.trials),
                "episodes": run.episodes, "best_accuracy": result.best.accuracy}


def _missing_sqlite_file(storage: str) -> bool:
    prefix = "sqlite:///"
    return storage.startswith(prefix) and not Path(storage[len(prefix):]).exists()
