"""The one gate `optimize` and `regress` share: a baseline against a candidate on the same tasks, paired per
task, for every model.

Per model: exact McNemar on pass/fail with one epoch, a paired bootstrap clustered by task with several, and
Holm's correction across the models. A model's verdict is
- `regressed` when its accuracy drops by more than `max_drop` (when one is set), drops with a Holm-adjusted p-value
  under `alpha`, or, with a non-inferiority `margin`, drops by the margin or more;
- with a `margin`, `pass` only when non-inferiority is shown (the Holm-adjusted one-sided p-value that the drop is
  at least the margin is under `alpha`: the upper confidence bound of the drop is below the margin), else
  `inconclusive`; without one, `pass` whenever it did not regress.
A model passes on `pass`, and on `inconclusive` unless `fail_on_inconclusive`. A model with no task scored on both
sides fails too: no evidence is not a pass. The gate passes when every model passes.

Every verdict also carries the paired change in failed calls per task (`call_change.py`), reported always; with
`fail_on_failed_calls` a significant rise regresses the model as a drop would.

Every verdict also says what the test could see (`optimizer.stats.power`): the smallest drop it detects with 80% power
at the strictest Holm level (alpha / models), and `underpowered` when the drop that matters (the margin, else
`max_drop` when above 0, else the drop observed) is below that, with the tasks it would take to see it. Verdicts
and their reasons are worded the same for both commands.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from optimizer.files.store import StoredEpisode
from optimizer.stats.call_change import CallChange, call_change_text, call_changes
from optimizer.stats.paired import Comparison, compare, holm, noninferiority
from optimizer.stats.power import detectable_drop, tasks_needed

Verdict = Literal["pass", "regressed", "inconclusive"]


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
    verdict: Verdict = "pass"
    detectable_drop: float | None = None
    """smallest drop detected with 80% power at alpha / models; None: not even losing every task"""
    underpowered: bool = False
    tasks_needed: int | None = None
    """tasks that would make the drop that matters detectable (when underpowered)"""
    drop_upper: float | None = None
    """upper 1 - alpha confidence bound of the drop (with a margin)"""
    p_noninferior: float | None = None
    """Holm-adjusted one-sided p-value that the drop is at least the margin (with a margin)"""
    failed_calls: CallChange | None = None
    """the paired change in failed calls per task (`call_change.py`); None: no task scored on both sides"""

    def to_json(self) -> dict[str, Any]:
        return {
            "n_tasks": self.n_tasks, "before": round(self.before, 4), "after": round(self.after, 4),
            "delta": round(self.delta, 4), "p_value": round(self.p_value, 6), "p_holm": round(self.p_holm, 6),
            "method": self.method, "ci": [round(self.ci[0], 4), round(self.ci[1], 4)], "passed": self.passed,
            "reason": self.reason, "flipped_up": list(self.flipped_up), "flipped_down": list(self.flipped_down),
            "verdict": self.verdict, "detectable_drop": _round(self.detectable_drop),
            "underpowered": self.underpowered, "tasks_needed": self.tasks_needed,
            "drop_upper": _round(self.drop_upper), "p_noninferior": _round(self.p_noninferior, 6),
            "failed_calls": self.failed_calls.to_json() if self.failed_calls else None,
        }


def _round(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


def rule(max_drop: float | None, alpha: float, margin: float | None = None, fail_on_inconclusive: bool = False,
         fail_on_failed_calls: bool = False) -> str:
    """The gate's rule in words, the same for `optimize` and `regress` outputs."""
    cap = f"a drop over {max_drop * 100:.0f} pts or " if max_drop is not None else ""
    text = f"fails on {cap}a significant drop (Holm-adjusted across models, alpha {alpha})"
    if margin is not None:
        text += (f"; passes only when a drop of {margin * 100:.0f} pts or more is ruled out (non-inferiority), "
                 + ("inconclusive fails" if fail_on_inconclusive else "inconclusive is reported, not failed"))
    return text + ("; a significant rise in failed calls per task fails" if fail_on_failed_calls
                   else "; the change in failed calls per task is reported, not failed")


def gate_rule(settings: Mapping[str, Any]) -> str:
    """`rule` read from a report's or summary's gate settings (max_drop, alpha, margin, fail_on)."""
    return rule(settings["max_drop"], settings["alpha"], settings.get("margin"),
                settings.get("fail_on") == "inconclusive", bool(settings.get("fail_on_failed_calls")))


def verdict_text(row: Mapping[str, Any]) -> str:
    """A model's verdict in words: `pass`, the inconclusive reason when it is not failed, or `FAIL: <reason>`."""
    if not row["passed"]:
        return f"FAIL: {row['reason']}"
    return row["reason"] if row.get("verdict") == "inconclusive" else "pass"


def underpowered_note(rows: Mapping[str, Mapping[str, Any]]) -> str:
    """One sentence for the models whose test could not see the drop that matters ("" when none)."""
    weak = [model for model, row in rows.items() if row.get("underpowered")]
    if not weak:
        return ""
    return (f"Underpowered for {', '.join(weak)}: the drop that matters (the margin, else --max-drop, else the "
            "drop seen) is smaller than what these tasks can detect with 80% power; a pass says little. More tasks "
            "fix it (the 'can see' column gives about how many); more epochs only help when the agents vary.")


def change_text(row: Mapping[str, Any], alpha: float) -> str:
    """What the paired test says of a model's change, so that a pass is not read as proof of a gain."""
    delta, significant = row["delta"], row["p_holm"] < alpha
    if abs(delta) < 1e-12:
        return "no change"
    if delta > 0:
        return "significant gain" if significant else "gain not significant"
    return "significant drop" if significant else "drop not significant"


def power_text(row: Mapping[str, Any]) -> str:
    """What a model's test could see, in words: `detects ≥ 24%`, with `UNDERPOWERED (~420 tasks)` when it is."""
    drop = row.get("detectable_drop")
    seen = f"detects ≥ {drop * 100:.0f} pts" if drop is not None else "detects no drop"
    if not row.get("underpowered"):
        return seen
    needed = row.get("tasks_needed")
    return f"{seen}; UNDERPOWERED" + (f" (~{needed:,} tasks)" if needed else "")


def outcomes_by_task(episodes: Iterable[StoredEpisode], model: str) -> dict[str, list[bool]]:
    """task id -> pass/fail per epoch (in epoch order) for one model."""
    out: dict[str, list[tuple[int, bool]]] = {}
    for ep in episodes:
        if ep.model == model:
            out.setdefault(ep.task_id, []).append((ep.epoch, ep.passed))
    return {task: [p for _, p in sorted(runs)] for task, runs in sorted(out.items())}


def judge(
    models: Sequence[str], before: Sequence[StoredEpisode], after: Sequence[StoredEpisode], *,
    max_drop: float | None = 0.0, alpha: float = 0.05, seed: int = 0, margin: float | None = None,
    fail_on_inconclusive: bool = False, fail_on_failed_calls: bool = False,
) -> tuple[bool, list[ModelVerdict]]:
    """Every model's paired verdict (in `models` order), and whether the gate passes (see the module docstring).
    `max_drop` None: only significant drops fail. Every verdict carries the paired change in failed calls per task;
    with `fail_on_failed_calls`, a model whose failed calls rose significantly regresses too."""
    calls = call_changes(models, before, after, seed=seed, alpha=alpha)
    outcomes = {m: (outcomes_by_task(before, m), outcomes_by_task(after, m)) for m in models}
    compared: dict[str, Comparison | None] = {}
    for model, (b, a) in outcomes.items():
        try:
            compared[model] = compare(b, a, seed=seed, alpha=alpha)
        except ValueError:  # no task scored on both sides
            compared[model] = None
    present = {m: c for m, c in compared.items() if c is not None}
    adjusted = holm({m: c.p_value for m, c in present.items()})
    tested = {m: noninferiority(*outcomes[m], margin, seed=seed, alpha=alpha) for m in present} if margin else {}
    adjusted_ni = holm({m: p for m, (p, _) in tested.items()})
    verdicts = []
    for model, c in compared.items():
        if c is None:
            verdicts.append(ModelVerdict(model, 0, 0.0, 0.0, 0.0, 1.0, 1.0, "none", (0.0, 0.0), False,
                                         "no task scored on both sides", (), (), "regressed"))
            continue
        p_holm = adjusted[model]
        dropped = max_drop is not None and c.delta < -max_drop - 1e-12
        significant = c.delta < 0 and p_holm < alpha
        beyond = margin is not None and -c.delta >= margin - 1e-12
        reason = (f"accuracy dropped {-c.delta * 100:.1f} pts (more than --max-drop {(max_drop or 0) * 100:.1f} pts)"
                  if dropped
                  else f"significant drop (Holm p={p_holm:.3g} < {alpha})" if significant
                  else f"accuracy dropped {-c.delta * 100:.1f} pts, at least the margin {(margin or 0) * 100:.1f} pts"
                  if beyond
                  else "no regression")
        change = calls[model]
        more_failed = fail_on_failed_calls and change is not None and change.raised
        if more_failed and change is not None and not (dropped or significant or beyond):
            reason = "failed calls rose significantly: " + call_change_text(change.to_json())
        verdict: Verdict = "regressed" if dropped or significant or beyond or more_failed else "pass"
        drop_upper = tested[model][1] if margin else None
        if verdict == "pass" and margin is not None and adjusted_ni[model] >= alpha:
            verdict = "inconclusive"
            reason = (f"inconclusive: a drop of up to {max(drop_upper or 0.0, 0.0) * 100:.1f} pts is not ruled out "
                      f"(margin {margin * 100:.1f} pts, Holm p={adjusted_ni[model]:.3g})")
        seen = _detectable(outcomes[model], c, alpha / len(present))
        target = margin if margin is not None else max_drop if max_drop else -c.delta if c.delta < 0 else None
        underpowered = target is not None and (seen[0] is None or seen[0] > target + 1e-12)
        verdicts.append(ModelVerdict(
            model=model, n_tasks=c.n_tasks, before=c.before_acc, after=c.after_acc, delta=c.delta,
            p_value=c.p_value, p_holm=p_holm, method=c.method, ci=(c.ci_low, c.ci_high),
            passed=verdict == "pass" or (verdict == "inconclusive" and not fail_on_inconclusive), reason=reason,
            flipped_up=tuple(c.flipped_up), flipped_down=tuple(c.flipped_down), verdict=verdict,
            detectable_drop=seen[0], underpowered=underpowered,
            tasks_needed=tasks_needed(target, c.n_tasks, seen[1], alpha=alpha / len(present),
                                      exact=c.method == "mcnemar") if underpowered and target else None,
            drop_upper=drop_upper, p_noninferior=adjusted_ni.get(model), failed_calls=calls[model],
        ))
    return all(v.passed for v in verdicts), verdicts


def _detectable(outcomes: tuple[dict[str, list[bool]], dict[str, list[bool]]], c: Comparison, level: float
                ) -> tuple[float | None, float]:
    """(the smallest detectable drop at `level`, the spread it was computed from: the share of changed tasks with
    one epoch, the standard deviation of per-task differences with several)."""
    if c.method == "mcnemar":
        spread = (len(c.flipped_up) + len(c.flipped_down)) / c.n_tasks
        return detectable_drop(c.n_tasks, spread, alpha=level), spread
    before, after = outcomes
    diffs = [sum(after[t]) / len(after[t]) - sum(before[t]) / len(before[t]) for t in before
             if before[t] and after.get(t)]
    mean = sum(diffs) / len(diffs)
    spread = math.sqrt(sum((d - mean) ** 2 for d in diffs) / max(1, len(diffs) - 1))
    return detectable_drop(c.n_tasks, spread, alpha=level, exact=False), spread
