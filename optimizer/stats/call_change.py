"""The paired change in failed calls per task between the two sides of the gate, for every model.

A new server version that passes the same tasks with twice the failed calls is a regression users feel in latency,
tokens and rate limits, though accuracy does not move. Per model: each task's failed calls per episode (mean over
its epochs) on both sides, the mean paired difference (after - before), its task-clustered bootstrap interval at
1 - alpha, and a two-sided p-value, Holm-adjusted across the models. `raised` means significantly more failed calls
after (a positive difference with a Holm-adjusted p under alpha); `regress --fail-on-failed-calls` fails on it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from optimizer.files.store import StoredEpisode
from optimizer.stats.efficiency import EpisodeCost
from optimizer.stats.paired import holm, paired_bootstrap


@dataclass(frozen=True)
class CallChange:
    before: float
    after: float
    delta: float
    ci: tuple[float, float]
    p_value: float
    p_holm: float
    n_tasks: int
    raised: bool

    def to_json(self) -> dict[str, Any]:
        return {"before": round(self.before, 4), "after": round(self.after, 4), "delta": round(self.delta, 4),
                "ci": [round(self.ci[0], 4), round(self.ci[1], 4)], "p_value": round(self.p_value, 6),
                "p_holm": round(self.p_holm, 6), "n_tasks": self.n_tasks, "raised": self.raised}


def failed_calls_by_task(episodes: Iterable[StoredEpisode], model: str) -> dict[str, list[float]]:
    """task id -> failed calls per epoch (in epoch order) for one model."""
    out: dict[str, list[tuple[int, float]]] = {}
    for ep in episodes:
        if ep.model == model:
            out.setdefault(ep.task_id, []).append((ep.epoch, float(EpisodeCost.of(ep.data).failed_calls)))
    return {task: [f for _, f in sorted(runs)] for task, runs in sorted(out.items())}


def call_changes(models: Sequence[str], before: Sequence[StoredEpisode], after: Sequence[StoredEpisode], *,
                 seed: int = 0, alpha: float = 0.05) -> dict[str, CallChange | None]:
    """Every model's paired change in failed calls per task (None: no task scored on both sides)."""
    tested = {}
    for model in models:
        b, a = failed_calls_by_task(before, model), failed_calls_by_task(after, model)
        try:
            tested[model] = (_mean(b), _mean(a), paired_bootstrap(b, a, seed=seed, alpha=alpha))
        except ValueError:
            continue
    adjusted = holm({m: boot.p_value for m, (_, _, boot) in tested.items()})
    out: dict[str, CallChange | None] = {m: None for m in models}
    for model, (b_mean, a_mean, boot) in tested.items():
        out[model] = CallChange(b_mean, a_mean, boot.delta, (boot.ci_low, boot.ci_high), boot.p_value,
                                adjusted[model], boot.n_tasks, boot.delta > 0 and adjusted[model] < alpha)
    return out


def call_change_text(row: Mapping[str, Any] | None) -> str:
    """A model's change in words: `failed calls per task 0.9 → 1.8 (+0.9, 95% CI +0.4 to +1.4, Holm p=0.01)`."""
    if not row:
        return "failed calls per task: no task scored on both sides"
    low, high = row["ci"]
    said = " — significantly more" if row["raised"] else ""
    return (f"failed calls per task {row['before']:.2f} → {row['after']:.2f} ({row['delta']:+.2f}, CI "
            f"{low:+.2f} to {high:+.2f}, Holm p={row['p_holm']:.3g}){said}")


def calls_cell(row: Mapping[str, Any] | None) -> str:
    """A model's change for a table cell: `0.90 → 1.80 (+0.90, CI +0.40 to +1.40)`, `–` when not measured."""
    if not row:
        return "–"
    low, high = row["ci"]
    return f"{row['before']:.2f} → {row['after']:.2f} ({row['delta']:+.2f}, CI {low:+.2f} to {high:+.2f})"


def _mean(by_task: Mapping[str, Sequence[float]]) -> float:
    values = [f for runs in by_task.values() for f in runs]
    return sum(values) / len(values) if values else 0.0
