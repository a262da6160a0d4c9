"""`optimizer worker`: evaluate trials of a running optimize round from another process."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Annotated

import typer

from optimizer.cli.common import fail, out
from optimizer.optimize.worker import run_worker
from optimizer.run.config import RunError


def worker_command(
    storage: Annotated[str, typer.Option("--storage", help="The optuna storage URL the optimize run uses "
                                         "(default there: sqlite:///runs/<id>/run.db).")],
    study: Annotated[str, typer.Option("--study", help="The round's study, e.g. optimize-<run id>-r1.")],
    wait: Annotated[float, typer.Option("--wait", min=0, help="Seconds to keep looking for a study that does not "
                                        "exist yet, so that workers can start before or with `optimize`.")] = 0.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print what this worker did as JSON.")] = False,
) -> None:
    """Help a running `optimize` evaluate one round's search trials from another process (or machine,
    with a shared run directory and a storage URL both can reach). Exits when the round is full."""
    try:
        report = asyncio.run(run_worker(storage, study, wait=wait))
    except RunError as exc:
        raise fail(str(exc)) from None
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2, sort_keys=True) + "\n")
    else:
        out.print(f"worker done: {report['episodes']['run']} episodes run for {report['study']} "
                  f"({report['trials_in_study']} trials in the study)")
