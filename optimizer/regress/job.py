"""`optimizer regress`: the cross-model release gate.

Runs the same tasks under a baseline (the server's own definitions, an overlay, or another server
version) and under a candidate overlay, for every model, and compares them with the gate that `optimize`
uses too (`optimizer.gate`: paired per task, Holm across models). Episodes go through the run's store like
every other command, so a killed run resumes and a re-run costs nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from optimizer.cost.estimate import Estimate, Plan, eval_plan, judged
from optimizer.definitions import Candidate, Catalog, DefinitionError
from optimizer.files.patch import load_overlay
from optimizer.files.store import StoredEpisode
from optimizer.gate import judge, outcomes_by_task
from optimizer.html_report import changes_of
from optimizer.models.tape import keep_outcome
from optimizer.regress.outputs import write_report_html
from optimizer.run.config import EvalConfig, RunError
from optimizer.run.evaluate import EvalResult, Progress, first_tool_confusion
from optimizer.run.harness import Costing, Harness, open_harness
from optimizer.servers import ServerError, ServerPool, ServerSpec
from optimizer.servers.leases import state_report
from optimizer.tasks import TaskSet


class RegressConfig(EvalConfig):
    """Settings of one regress run (everything `eval` takes, plus the two sides and the verdict)."""

    candidate: str = Field("original", description="Overlay with the new definitions, or 'original' (the server's "
                           "own definitions).")
    epochs: int = Field(1, ge=1, description="Runs per task; more than one uses a bootstrap clustered by task and "
                        "reports pass^k.")
    baseline: str = Field("original", description="'original' (the server's definitions) or an overlay file.")
    baseline_server: str | None = Field(None, description="The old server version to compare against, on the "
                                        "same tasks.")
    split: Literal["heldout", "train", "all"] = Field("heldout", description="The tasks compared.")
    max_drop: float | None = Field(None, ge=0, le=1, description="Also fail on any accuracy drop larger "
                                   "than this (0.05 = 5 points), significant or not. Default: only significant "
                                   "drops fail.")
    alpha: float = Field(0.05, gt=0, lt=1, description="Significance level (Holm-adjusted across models).")
    margin: float | None = Field(None, gt=0, le=1, description="Non-inferiority margin (0.05 = 5 points): a model "
                                 "passes only when its drop's upper confidence bound is below it; a drop of the "
                                 "margin or more regresses, anything between is inconclusive.")
    fail_on: Literal["regressed", "inconclusive"] = Field("regressed", description="'inconclusive' also fails "
                                                          "models whose non-inferiority could not be shown.")
    fail_on_failed_calls: bool = Field(False, description="Also fail a model whose failed calls per task rise "
                                       "significantly (paired per task, Holm-adjusted across models), whatever its "
                                       "accuracy; the change is reported either way.")

    @field_validator("overlay")
    @classmethod
    def _sides_not_overlay(cls, value: str | None) -> str | None:
        if value is not None:
            raise ValueError("regress compares two sides: give --candidate (and --baseline), not --overlay")
        return value


@dataclass(frozen=True)
class Side:
    label: str
    catalog: Catalog
    candidate: Candidate
    pool: ServerPool


async def run_regress(
    config: RegressConfig | None, *, runs_dir: Path, run_id: str | None = None, resume: str | None = None,
    progress: Progress | None = None, on_start: Callable[[Harness[RegressConfig], int], None] | None = None,
    overrides: dict[str, Any] | None = None, on_estimate: Callable[[Estimate, float, Any], None] | None = None,
) -> dict[str, Any]:
    """Evaluate both sides and return the verdict with every figure (what `-o FILE.json` holds). `on_estimate` hears
    the cost estimate before the first paid request (and may stop the run)."""
    async with open_harness(config, RegressConfig, runs_dir=runs_dir, run_id=run_id, resume=resume,
                            overrides=overrides, progress=progress, costing=Costing(planned, on_estimate)) as run:
        cfg = run.config
        tasks = run.taskset.split(cfg.split)
        if not tasks:
            raise RunError(f"no {cfg.split} tasks to compare on; choose --split train or all, or mark tasks")
        if on_start is not None:
            on_start(run, 2 * len(tasks) * len(run.models) * cfg.epochs)
        async with _baseline_side(run) as before_side:
            new = Candidate() if cfg.candidate == "original" else _overlay(cfg.candidate, run.catalog, "--candidate")
            after_side = Side("candidate", run.catalog, new, run.pool)
            results = {}
            for side in (before_side, after_side):
                results[side.label] = await run.evaluate(side.candidate, tasks, epochs=cfg.epochs, pool=side.pool,
                                                         catalog=side.catalog)
        report = verdict(run, results["baseline"], results["candidate"])
        report["report_html"] = str(run.store.dir / "report.html")
        run.store.write_json("regress.json", report)
        keep_outcome(run.config.record, report)
        changes = changes_of(run.catalog, new, before_side.candidate) if cfg.baseline_server is None else []
        write_report_html(run.store.dir, report, {"before": first_tool_confusion(results["baseline"].outcomes),
                                                  "after": first_tool_confusion(results["candidate"].outcomes)},
                          changes)
        run.store.export_transcripts()
        return report


def planned(config: RegressConfig, taskset: TaskSet, in_context: bool) -> Plan:
    """What the regress run will play (for its cost estimate): the split under each side."""
    tasks = taskset.split(config.split)
    judge, graded = judged(config.judge, config.models, tasks)
    return eval_plan("regress", config.models, tasks=len(tasks), epochs=config.epochs,
                     sides=("baseline", "candidate"), judge=judge, judged=graded)


@contextlib.asynccontextmanager
async def _baseline_side(run: Harness[RegressConfig]) -> AsyncIterator[Side]:
    cfg = run.config
    if cfg.baseline_server is None:
        candidate = Candidate() if cfg.baseline == "original" else _overlay(cfg.baseline, run.catalog, "--baseline")
        yield Side("baseline", run.catalog, candidate, run.pool)
        return
    try:
        spec = ServerSpec.parse(cfg.baseline_server, headers=cfg.headers)
        pool = ServerPool(spec, instances=run.pool.instances, log_path=run.store.dir / "baseline-server.log",
                          tool_timeout=cfg.tool_timeout, connect_timeout=cfg.connect_timeout)
        await pool.__aenter__()
    except ServerError as exc:
        raise RunError(f"--baseline-server: {exc}") from None
    try:
        catalog = await pool.list_tools()
        try:
            run.taskset.check_tools(catalog.names)
        except Exception as exc:  # noqa: BLE001 - a TaskError, reworded for this side
            raise RunError(f"--baseline-server lacks tools the tasks need: {exc}") from None
        candidate = Candidate() if cfg.baseline == "original" else _overlay(cfg.baseline, catalog, "--baseline")
        yield Side("baseline", catalog, candidate, pool)
    finally:
        await pool.__aexit__(None, None, None)


def _overlay(path: str, catalog: Catalog, option: str) -> Candidate:
    try:
        return load_overlay(Path(path), catalog)
    except DefinitionError as exc:
        raise RunError(f"{option}: {exc}") from None


def verdict(run: Harness[RegressConfig], before: EvalResult, after: EvalResult) -> dict[str, Any]:
    """Per-model figures and the overall verdict (see `optimizer.gate`)."""
    cfg = run.config
    models = run.model_ids
    passed, verdicts = judge(models, before.episodes, after.episodes, max_drop=cfg.max_drop, alpha=cfg.alpha,
                             seed=cfg.seed, margin=cfg.margin, fail_on_inconclusive=cfg.fail_on == "inconclusive",
                             fail_on_failed_calls=cfg.fail_on_failed_calls)
    rows = {v.model: {**v.to_json(), **side_figures(v.model, before.episodes, after.episodes)} for v in verdicts}
    return {
        "run_id": run.store.run_id, "run_dir": str(run.store.dir), "offline": run.offline, "models": models,
        "replay": run.providers.replaying, "split": cfg.split, "epochs": cfg.epochs, "max_drop": cfg.max_drop,
        "alpha": cfg.alpha, "margin": cfg.margin, "fail_on": cfg.fail_on,
        "fail_on_failed_calls": cfg.fail_on_failed_calls,
        "baseline": {"definitions": cfg.baseline, "server": cfg.baseline_server or run.pool.spec.display,
                     "candidate": before.candidate},
        "candidate": {"definitions": cfg.candidate, "server": run.pool.spec.display, "candidate": after.candidate},
        "context": run.context.names, "client_naming": cfg.client_naming, "passed": passed, "results": rows,
        "episodes": {"run": before.run + after.run, "cached": before.cached + after.cached,
                     "infra_errors": before.infra_errors + after.infra_errors,
                     "infra_retried": before.infra_retried + after.infra_retried,
                     "changed_state": before.changed_state + after.changed_state},
        "state": state_report(before.changed_state + after.changed_state, before.run + after.run, isolate=cfg.isolate),
        "estimate": run.store.get_meta("estimate"),
    }


def side_figures(model: str, before: Sequence[StoredEpisode], after: Sequence[StoredEpisode]) -> dict[str, Any]:
    """pass^k, and mean steps and tokens per task on each side, for one model ({} figures without tasks)."""
    b, a = outcomes_by_task(before, model), outcomes_by_task(after, model)
    if not (set(b) & set(a)):
        return {"pass_k": {}, "steps": {}, "tokens": {}}
    return {
        "pass_k": {"before": _pass_k(b), "after": _pass_k(a)},
        "steps": {"before": _mean(before, model, "turns"), "after": _mean(after, model, "turns")},
        "tokens": {"before": _mean(before, model, "tokens"), "after": _mean(after, model, "tokens")},
    }


def _pass_k(outcomes: dict[str, list[bool]]) -> float:
    """Share of tasks that passed in every epoch (pass^k, k = the epochs run)."""
    return round(sum(all(runs) for runs in outcomes.values()) / len(outcomes), 4) if outcomes else 0.0


def _mean(episodes: Sequence[StoredEpisode], model: str, what: str) -> float:
    values = []
    for ep in episodes:
        if ep.model != model:
            continue
        usage = ep.data.get("usage") or {}
        values.append(ep.data.get("turns", 0) if what == "turns" else sum(int(v or 0) for v in usage.values()))
    return round(sum(values) / len(values), 2) if values else 0.0
