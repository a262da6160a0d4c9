"""`optimizer regress`: the cross-model release gate.

Runs the same tasks under a baseline (the server's own definitions, an overlay, or another server
version) and under a candidate overlay, for every model, and compares them per model, paired per
task: exact McNemar on pass/fail with one epoch, a bootstrap clustered by task with several, Holm's
correction across models. A model regresses when its accuracy drops with a Holm-adjusted p-value
under `alpha`, or (with `max_drop` set) by more than `max_drop` at all. Episodes go through the run's store like every
other verb, so a killed run resumes and a re-run costs nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field

from optimizer.definitions import Candidate, Catalog, DefinitionError
from optimizer.evaluate import EvalResult, EvalSettings, Progress, evaluate
from optimizer.gate import outcomes_by_task
from optimizer.judge import make_judge
from optimizer.patch import load_overlay
from optimizer.run import EvalConfig, OpenRun, RunError, episode_config, open_run
from optimizer.servers import ServerError, ServerPool, ServerSpec
from optimizer.stats import compare, holm
from optimizer.store import StoredEpisode


class RegressConfig(EvalConfig):
    """Settings of one regress run (everything `eval` takes, plus the two sides and the verdict)."""

    candidate: str = Field("original", description="Overlay file with the new definitions, or 'original'.")
    baseline: str = Field("original", description="'original' or an overlay file.")
    baseline_server: str | None = Field(None, description="Another server version as the baseline side.")
    split: str = Field("heldout", description="heldout, train or all.")
    max_drop: float | None = Field(None, ge=0, le=1, description="Largest accuracy drop per model that passes; "
                                   "None: only significant drops fail.")
    alpha: float = Field(0.05, gt=0, lt=1, description="Significance level (Holm-adjusted across models).")


@dataclass(frozen=True)
class Side:
    label: str
    catalog: Catalog
    candidate: Candidate
    pool: ServerPool


async def run_regress(
    config: RegressConfig | None, *, runs_dir: Path, run_id: str | None = None, resume: str | None = None,
    progress: Progress | None = None, on_start: Any = None, overrides: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Evaluate both sides and return the verdict with every figure (what `-o FILE.json` holds)."""
    async with open_run(config, runs_dir=runs_dir, run_id=run_id, resume=resume, config_type=RegressConfig,
                        overrides=overrides) as run:
        cfg: RegressConfig = run.config  # type: ignore[assignment]
        tasks = run.taskset.split(cfg.split)
        if not tasks:
            raise RunError(f"no {cfg.split} tasks to compare on; choose --split train or all, or mark tasks")
        if on_start is not None:
            on_start(run, 2 * len(tasks) * len(run.models) * cfg.epochs)
        settings = EvalSettings(epochs=cfg.epochs, seed=cfg.seed, max_connections=cfg.max_connections,
                                episode=episode_config(run), judge=make_judge(cfg, run))
        async with _baseline_side(run, cfg) as before_side:
            new = Candidate() if cfg.candidate == "original" else _overlay(cfg.candidate, run.catalog, "--candidate")
            after_side = Side("candidate", run.catalog, new, run.pool)
            results = {}
            for side in (before_side, after_side):
                results[side.label] = await evaluate(pool=side.pool, store=run.store, catalog=side.catalog,
                                                     candidate=side.candidate, tasks=tasks, models=run.models,
                                                     settings=settings, progress=progress)
        report = verdict(run, cfg, results["baseline"], results["candidate"])
        run.store.write_json("regress.json", report)
        run.store.export_transcripts()
        return report


@contextlib.asynccontextmanager
async def _baseline_side(run: OpenRun, cfg: RegressConfig) -> AsyncIterator[Side]:
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


def verdict(run: OpenRun, cfg: RegressConfig, before: EvalResult, after: EvalResult) -> dict[str, Any]:
    """Per-model figures and the overall verdict (see the module docstring)."""
    models = [m.id for m in run.models]
    rows = {model: model_figures(model, before.episodes, after.episodes, seed=cfg.seed, alpha=cfg.alpha)
            for model in models}
    passed = decide(rows, max_drop=cfg.max_drop, alpha=cfg.alpha)
    return {
        "run_id": run.store.run_id, "run_dir": str(run.store.dir), "offline": run.offline, "models": models,
        "split": cfg.split, "epochs": cfg.epochs, "max_drop": cfg.max_drop, "alpha": cfg.alpha,
        "baseline": {"definitions": cfg.baseline, "server": cfg.baseline_server or run.pool.spec.display,
                     "candidate": before.candidate},
        "candidate": {"definitions": cfg.candidate, "server": run.pool.spec.display, "candidate": after.candidate},
        "passed": passed, "results": rows,
        "episodes": {"run": before.run + after.run, "cached": before.cached + after.cached,
                     "infra_errors": before.infra_errors + after.infra_errors},
    }


def decide(rows: dict[str, dict[str, Any]], *, max_drop: float | None, alpha: float) -> bool:
    """Add `p_holm`, `passed` and `reason` to each model's row; True when no model regressed. A model with no
    task scored on both sides does not pass (no evidence is not a pass)."""
    adjusted = holm({m: r["p_value"] for m, r in rows.items() if r["n_tasks"]})
    for model, row in rows.items():
        row["p_holm"] = round(adjusted.get(model, 1.0), 6)
        dropped = max_drop is not None and row["delta"] < -max_drop - 1e-12
        significant = row["delta"] < 0 and row["p_holm"] < alpha
        row["passed"] = bool(row["n_tasks"]) and not (dropped or significant)
        row["reason"] = ("no task scored on both sides" if not row["n_tasks"] else
                         f"accuracy dropped {-row['delta']:.1%} (more than --max-drop {max_drop or 0:.1%})" if dropped
                         else f"significant drop (Holm p={row['p_holm']:.3g} < {alpha})" if significant
                         else "no regression")
    return all(row["passed"] for row in rows.values())


def model_figures(model: str, before: Sequence[StoredEpisode], after: Sequence[StoredEpisode], *, seed: int,
                  alpha: float) -> dict[str, Any]:
    """One model's paired comparison, pass^k, and mean steps and tokens per task on each side."""
    b, a = outcomes_by_task(before, model), outcomes_by_task(after, model)
    try:
        c = compare(b, a, seed=seed, alpha=alpha)
    except ValueError:
        return {"n_tasks": 0, "before": 0.0, "after": 0.0, "delta": 0.0, "p_value": 1.0, "method": "none",
                "ci": [0.0, 0.0], "flipped_up": [], "flipped_down": [], "pass_k": {}, "steps": {}, "tokens": {}}
    return {
        "n_tasks": c.n_tasks, "before": round(c.before_acc, 4), "after": round(c.after_acc, 4),
        "delta": round(c.delta, 4), "p_value": round(c.p_value, 6), "method": c.method,
        "ci": [round(c.ci_low, 4), round(c.ci_high, 4)], "flipped_up": c.flipped_up, "flipped_down": c.flipped_down,
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
