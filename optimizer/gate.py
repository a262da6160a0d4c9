"""The one gate `optimize` and `regress` share: a baseline against a candidate on the same tasks, paired per
task, for every model.

Per model: exact McNemar on pass/fail with one epoch, a paired bootstrap clustered by task with several, and
Holm's correction across the models. A model fails when its accuracy drops by more than `max_drop` (when one
is set), or drops with a Holm-adjusted p-value under `alpha`. A model with no task scored on both sides fails
too: no evidence is not a pass. The gate passes when no model fails. Verdicts and their reasons are worded the
same for both commands.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from optimizer.stats import Comparison, compare, holm
from optimizer.store import StoredEpisode


@dataclass(frozen=True)
class ModelVerdict:
    model: str
    n_tasks: int
    before: float
    after: float
    delta: float
    p_value: float
    """The paired test's own p-value."""
    p_holm: float
    """Holm-adjusted across the gate's models; what the significance rule reads."""
    method: str
    ci: tuple[float, float]
    passed: bool
    reason: str
    flipped_up: tuple[str, ...]
    flipped_down: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "n_tasks": self.n_tasks, "before": round(self.before, 4), "after": round(self.after, 4),
            "delta": round(self.delta, 4), "p_value": round(self.p_value, 6), "p_holm": round(self.p_holm, 6),
            "method": self.method, "ci": [round(self.ci[0], 4), round(self.ci[1], 4)], "passed": self.passed,
            "reason": self.reason, "flipped_up": list(self.flipped_up), "flipped_down": list(self.flipped_down),
        }


def rule(max_drop: float | None, alpha: float) -> str:
    """The gate's rule in words, the same for `optimize` and `regress` outputs."""
    cap = f"a drop over {max_drop:.0%} or " if max_drop is not None else ""
    return f"fails on {cap}a significant drop (Holm-adjusted across models, alpha {alpha})"


def verdict_text(passed: bool, reason: str) -> str:
    """A model's verdict in words: `pass`, or `FAIL: <reason>`."""
    return "pass" if passed else f"FAIL: {reason}"


def outcomes_by_task(episodes: Iterable[StoredEpisode], model: str) -> dict[str, list[bool]]:
    """task id -> pass/fail per epoch (in epoch order) for one model."""
    out: dict[str, list[tuple[int, bool]]] = {}
    for ep in episodes:
        if ep.model == model:
            out.setdefault(ep.task_id, []).append((ep.epoch, ep.passed))
    return {task: [p for _, p in sorted(runs)] for task, runs in sorted(out.items())}


def judge(
    models: Sequence[str], before: Sequence[StoredEpisode], after: Sequence[StoredEpisode], *,
    max_drop: float | None = 0.0, alpha: float = 0.05, seed: int = 0,
) -> tuple[bool, list[ModelVerdict]]:
    """Every model's paired verdict (in `models` order), and whether the gate passes. `max_drop` None: only
    significant drops fail."""
    compared: dict[str, Comparison | None] = {}
    for model in models:
        try:
            compared[model] = compare(outcomes_by_task(before, model), outcomes_by_task(after, model), seed=seed,
                                      alpha=alpha)
        except ValueError:  # no task scored on both sides
            compared[model] = None
    adjusted = holm({m: c.p_value for m, c in compared.items() if c is not None})
    verdicts = []
    for model, c in compared.items():
        if c is None:
            verdicts.append(ModelVerdict(model, 0, 0.0, 0.0, 0.0, 1.0, 1.0, "none", (0.0, 0.0), False,
                                         "no task scored on both sides", (), ()))
            continue
        p_holm = adjusted[model]
        dropped = max_drop is not None and c.delta < -max_drop - 1e-12
        significant = c.delta < 0 and p_holm < alpha
        reason = (f"accuracy dropped {-c.delta:.1%} (more than --max-drop {max_drop or 0:.1%})" if dropped
                  else f"significant drop (Holm p={p_holm:.3g} < {alpha})" if significant
                  else "no regression")
        verdicts.append(ModelVerdict(
            model=model, n_tasks=c.n_tasks, before=c.before_acc, after=c.after_acc, delta=c.delta,
            p_value=c.p_value, p_holm=p_holm, method=c.method, ci=(c.ci_low, c.ci_high),
            passed=not (dropped or significant), reason=reason, flipped_up=tuple(c.flipped_up),
            flipped_down=tuple(c.flipped_down),
        ))
    return all(v.passed for v in verdicts), verdicts
