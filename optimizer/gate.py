"""The release gate: baseline against winner on the same held-out tasks, paired, per model.

A model fails the gate when its held-out accuracy drops by more than `max_drop`, or drops
significantly at `alpha` (exact McNemar with one epoch, a paired bootstrap clustered by task with
several). The gate passes when no model fails.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from optimizer.stats import compare
from optimizer.store import StoredEpisode


@dataclass(frozen=True)
class ModelVerdict:
    model: str
    n_tasks: int
    before: float
    after: float
    delta: float
    p_value: float
    method: str
    passed: bool
    flipped_up: tuple[str, ...]
    flipped_down: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "n_tasks": self.n_tasks, "before": round(self.before, 4), "after": round(self.after, 4),
            "delta": round(self.delta, 4), "p_value": round(self.p_value, 6), "method": self.method,
            "passed": self.passed, "flipped_up": list(self.flipped_up), "flipped_down": list(self.flipped_down),
        }


def outcomes_by_task(episodes: Iterable[StoredEpisode], model: str) -> dict[str, list[bool]]:
    """task id -> pass/fail per epoch (in epoch order) for one model."""
    out: dict[str, list[tuple[int, bool]]] = {}
    for ep in episodes:
        if ep.model == model:
            out.setdefault(ep.task_id, []).append((ep.epoch, ep.passed))
    return {task: [p for _, p in sorted(runs)] for task, runs in sorted(out.items())}


def judge(
    models: Sequence[str], before: Sequence[StoredEpisode], after: Sequence[StoredEpisode], *,
    max_drop: float = 0.0, alpha: float = 0.05, seed: int = 0,
) -> tuple[bool, list[ModelVerdict]]:
    """Every model's paired verdict, and whether the gate passes."""
    verdicts = []
    for model in models:
        try:
            result = compare(outcomes_by_task(before, model), outcomes_by_task(after, model), seed=seed, alpha=alpha)
        except ValueError:  # no held-out task scored on both sides: no evidence, so no pass
            verdicts.append(ModelVerdict(model, 0, 0.0, 0.0, 0.0, 1.0, "none", False, (), ()))
            continue
        dropped = result.delta < -max_drop - 1e-12
        significant = result.delta < 0 and result.p_value < alpha
        verdicts.append(ModelVerdict(
            model=model, n_tasks=result.n_tasks, before=result.before_acc, after=result.after_acc,
            delta=result.delta, p_value=result.p_value, method=result.method, passed=not (dropped or significant),
            flipped_up=tuple(result.flipped_up), flipped_down=tuple(result.flipped_down),
        ))
    return all(v.passed for v in verdicts), verdicts
