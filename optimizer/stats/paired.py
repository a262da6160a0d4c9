"""Paired statistics for the release gate: the same tasks before and after a change.

Inputs map a task id to that task's outcomes over epochs (True = passed). Only tasks present, with at least one
outcome, in both maps are compared; every figure is task-weighted (a task's pass rate over its epochs counts once).
Deltas are after minus before, so a regression has a negative delta. Pure Python and deterministic given `seed`.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

_ZERO = 1e-12
"""Resampled mean differences closer to 0 than this count as 0 (sums of thirds do not cancel exactly)."""
_BATCH = 2_000_000
"""Task draws generated at once by the bootstrap (bounds memory for large task sets)."""


@dataclass(frozen=True)
class BootstrapResult:
    delta: float
    """mean per-task pass rate after minus before"""
    ci_low: float
    ci_high: float
    """percentile interval of the resampled deltas at level 1 - alpha"""
    p_value: float
    """two-sided: share of resampled deltas on the other side of 0 from `delta` (0 included), doubled, capped
    at 1; 1.0 when delta is 0. 0.0 means fewer than one resample in n."""
    n_tasks: int


@dataclass(frozen=True)
class Comparison:
    n_tasks: int
    before_acc: float
    after_acc: float
    delta: float
    p_value: float
    method: Literal["mcnemar", "bootstrap"]
    """mcnemar when every task has one epoch on both sides, else the paired bootstrap over tasks"""
    flipped_up: list[str]
    """tasks whose pass rate rose, sorted"""
    flipped_down: list[str]
    """tasks whose pass rate fell, sorted"""
    ci_low: float
    ci_high: float
    """paired-bootstrap interval of delta (for both methods)"""


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact binomial p-value on the discordant pairs (b: passed before only, c: passed after only);
    1.0 when b + c == 0. Summed in log space, so any counts work (relative error ~1e-12)."""
    if b < 0 or c < 0:
        raise ValueError("discordant counts cannot be negative")
    n, k = b + c, min(b, c)
    if n == 0:
        return 1.0
    logs = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) for i in range(k + 1)]
    top = logs[-1]  # C(n, i) grows with i up to n / 2, so the last term is the largest
    log_tail = top + math.log(math.fsum(math.exp(x - top) for x in logs)) - n * math.log(2)
    return min(1.0, 2 * math.exp(log_tail))


def holm(p_values: Mapping[str, float]) -> dict[str, float]:
    """Holm–Bonferroni adjusted p-values (same keys): the i-th smallest of m is multiplied by m - i (i from 0),
    made non-decreasing in that order and capped at 1. Ties are ordered by key, which does not change values."""
    ordered = sorted(p_values.items(), key=lambda item: (item[1], item[0]))
    m = len(ordered)
    adjusted: dict[str, float] = {}
    running = 0.0
    for i, (key, p) in enumerate(ordered):
        running = max(running, min(1.0, (m - i) * p))
        adjusted[key] = running
    return {key: adjusted[key] for key in p_values}


def paired_bootstrap(
    before: Mapping[str, Sequence[float]],
    after: Mapping[str, Sequence[float]],
    *,
    n: int = 10_000,
    seed: int = 0,
    alpha: float = 0.05,
) -> BootstrapResult:
    """Resample TASKS with replacement (outcomes stay clustered by task) and recompute the mean per-task
    difference. Outcomes are pass/fail (the per-task pass rate) or counts (the per-task mean, e.g. failed calls).
    Raises ValueError when no task has outcomes on both sides or n < 1."""
    if n < 1 or not 0 < alpha < 1:
        raise ValueError("the bootstrap needs n >= 1 and 0 < alpha < 1")
    diffs = [_rate(after[t]) - _rate(before[t]) for t in _common(before, after)]
    m = len(diffs)
    delta = math.fsum(diffs) / m
    means = sorted(_resampled_means(diffs, n, random.Random(seed)))
    low = means[min(n - 1, math.floor(alpha / 2 * n))]
    high = means[max(0, math.ceil((1 - alpha / 2) * n) - 1)]
    if abs(delta) <= _ZERO:
        p_value = 1.0
    else:
        other = sum(1 for x in means if x <= _ZERO) if delta > 0 else sum(1 for x in means if x >= -_ZERO)
        p_value = min(1.0, 2 * other / n)
    return BootstrapResult(delta=delta, ci_low=low, ci_high=high, p_value=p_value, n_tasks=m)


def noninferiority(before: Mapping[str, Sequence[bool]], after: Mapping[str, Sequence[bool]], margin: float, *,
                   n: int = 10_000, seed: int = 0, alpha: float = 0.05) -> tuple[float, float]:
    """(one-sided p-value that the drop is at least `margin`, the upper 1 - alpha confidence bound of the drop),
    from the same task-clustered resampling as `paired_bootstrap`; a small p shows the drop is under the margin."""
    diffs = [_rate(after[t]) - _rate(before[t]) for t in _common(before, after)]
    means = sorted(_resampled_means(diffs, n, random.Random(seed)))
    p_value = sum(1 for x in means if x <= -margin + _ZERO) / n
    return p_value, -means[min(n - 1, math.floor(alpha * n))]


def _resampled_means(diffs: list[float], n: int, rng: random.Random) -> list[float]:
    """n means of m draws with replacement from the precomputed per-task differences: exactly what drawing them with
    `rng.choices(diffs, k=n * m)` and summing each run of m in order gives, computed with numpy from the same
    Mersenne Twister state (both draw `floor(random() * m)` from the same 53-bit doubles) in a fiftieth of the
    time. `rng` is left where those draws would leave it."""
    m = len(diffs)
    version, internal, gauss = rng.getstate()
    twister = np.random.RandomState()
    twister.set_state(("MT19937", np.array(internal[:-1], dtype=np.uint32), internal[-1], 0, 0.0))
    values = np.asarray(diffs, dtype=np.float64)
    means: list[float] = []
    while len(means) < n:
        rows = min(max(1, _BATCH // m), n - len(means))
        picks = np.floor(twister.random_sample(rows * m) * m).astype(np.intp).reshape(rows, m)
        sums = np.add.accumulate(values[picks], axis=1)[:, -1]  # left to right, as sum() adds
        means.extend((sums / m).tolist())
    state = twister.get_state(legacy=False)["state"]
    rng.setstate((version, (*(int(k) for k in state["key"]), int(state["pos"])), gauss))
    return means


def compare(
    before: Mapping[str, Sequence[bool]],
    after: Mapping[str, Sequence[bool]],
    *,
    seed: int = 0,
    alpha: float = 0.05,
) -> Comparison:
    """Compare the tasks in both maps: McNemar's exact test on per-task outcomes when every task has one epoch on
    both sides, the paired bootstrap otherwise; the interval always comes from the bootstrap. Raises ValueError
    when no task has outcomes on both sides."""
    tasks = _common(before, after)
    rates = {t: (_rate(before[t]), _rate(after[t])) for t in tasks}
    up = [t for t, (b, a) in rates.items() if a > b]
    down = [t for t, (b, a) in rates.items() if a < b]
    boot = paired_bootstrap(before, after, seed=seed, alpha=alpha)
    single = all(len(before[t]) == 1 and len(after[t]) == 1 for t in tasks)
    before_acc = math.fsum(b for b, _ in rates.values()) / len(tasks)
    after_acc = math.fsum(a for _, a in rates.values()) / len(tasks)
    return Comparison(
        n_tasks=len(tasks),
        before_acc=before_acc,
        after_acc=after_acc,
        delta=boot.delta,
        p_value=mcnemar_exact(len(down), len(up)) if single else boot.p_value,
        method="mcnemar" if single else "bootstrap",
        flipped_up=up,
        flipped_down=down,
        ci_low=boot.ci_low,
        ci_high=boot.ci_high,
    )


def _common(before: Mapping[str, Sequence[float]], after: Mapping[str, Sequence[float]]) -> list[str]:
    tasks = sorted(t for t in before.keys() & after.keys() if len(before[t]) and len(after[t]))
    if not tasks:
        raise ValueError("no task has outcomes both before and after")
    return tasks


def _rate(outcomes: Sequence[float]) -> float:
    """The mean of a task's outcomes: its pass rate for pass/fail."""
    return math.fsum(float(o) for o in outcomes) / len(outcomes)


def within_noise(best: Mapping[str, Sequence[bool]], other: Mapping[str, Sequence[bool]],
                 tolerance: float = 1.0) -> bool:
    """Whether `other` is within the noise of `best` on the same tasks: its mean shortfall in per-task pass rate is
    at most `tolerance` standard errors of the paired differences. Only common tasks with outcomes count; with none,
    nothing can be told apart, so True. An `other` at least as good as `best` is always within."""
    common = [t for t in best if len(best[t]) and len(other.get(t, ()))]
    if not common:
        return True
    diffs = [_rate(best[t]) - _rate(other[t]) for t in common]
    mean = sum(diffs) / len(diffs)
    if mean <= _ZERO:
        return True
    if len(diffs) < 2:
        return False
    variance = sum((d - mean) ** 2 for d in diffs) / (len(diffs) - 1)
    return mean <= tolerance * math.sqrt(variance / len(diffs)) + _ZERO
