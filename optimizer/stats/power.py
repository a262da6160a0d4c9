"""How large a drop the gate can see: the smallest accuracy drop its paired test on n tasks detects with a given
power, and about how many tasks it would take to see a given drop.

One epoch (McNemar's exact test), up to EXACT_UP_TO tasks: each task changes sides (passes on one side only) with
probability psi, and a changed task is a drop with probability (1 + d / psi) / 2, so accuracy falls by d on average.
Power is summed over the number of changed tasks and of drops among them, with the test's own critical counts. psi
is the observed share of changed tasks, and at least d: a drop of d needs that many changed tasks. Beyond
EXACT_UP_TO tasks, and with several epochs (a bootstrap over per-task pass rates), the normal approximation
d = max(K * s / sqrt(n), K**2 / n), K = z(1 - alpha / 2) + z(power), s the standard deviation of the per-task
differences (sqrt(psi) for one epoch); the second term is the same floor in closed form.
"""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist

from optimizer.stats.paired import mcnemar_exact

POWER = 0.8
EXACT_UP_TO = 200
MAX_TASKS = 100_000
_STEPS = 12
"""Bisection steps on the drop: a precision of 1/4096."""


def detectable_drop(n: int, spread: float, *, alpha: float, power: float = POWER, exact: bool = True
                    ) -> float | None:
    """The smallest drop (0..1) a two-sided test at `alpha` detects with `power` on `n` tasks, or None when even
    losing every task would not be detected. `spread` is the observed share of changed tasks when `exact` (one
    epoch), else the standard deviation of the per-task differences."""
    if n < 1:
        return None
    if not exact or n > EXACT_UP_TO:
        k = NormalDist().inv_cdf(1 - alpha / 2) + NormalDist().inv_cdf(power)
        s = math.sqrt(spread) if exact else spread
        drop = max(k * s / math.sqrt(n), k * k / n)
        return drop if drop <= 1 else None
    if _power(n, 1.0, 1.0, alpha) < power:
        return None
    low, high = 0.0, 1.0
    for _ in range(_STEPS):
        mid = (low + high) / 2
        if _power(n, max(spread, mid), mid, alpha) >= power:
            high = mid
        else:
            low = mid
    return high


def tasks_needed(target: float, n: int, spread: float, *, alpha: float, power: float = POWER,
                 exact: bool = True) -> int | None:
    """About how many tasks (at least n) would make a drop of `target` detectable with the same spread, from the
    normal approximation solved for n (an estimate: it is what the advice "about N tasks" needs); None when the
    target is not a drop or more than MAX_TASKS would be needed."""
    if target <= 0:
        return None
    k = NormalDist().inv_cdf(1 - alpha / 2) + NormalDist().inv_cdf(power)
    s = math.sqrt(max(spread, target)) if exact else spread
    needed = max(n, math.ceil(max((k * s / target) ** 2, k * k / target) - 1e-9))
    return needed if needed <= MAX_TASKS else None


def _power(n: int, psi: float, drop: float, alpha: float) -> float:
    """P(the exact test rejects in the drop direction) for n tasks, changed-share psi, drop `drop` <= psi."""
    q = min(1.0, (1 + drop / psi) / 2) if psi > 0 else 0.5
    critical = _critical(n, alpha)
    mean, sd = n * psi, math.sqrt(n * psi * (1 - psi))
    start, stop = max(0, math.floor(mean - 8 * sd - 1)), min(n, math.ceil(mean + 8 * sd + 1))
    total = 0.0
    for changed in range(start, stop + 1):
        needed = critical[changed]
        if needed is None:
            continue
        total += _pmf(n, changed, psi) * _tail(changed, needed, q)
    return total


@lru_cache(maxsize=64)
def _critical(n: int, alpha: float) -> tuple[int | None, ...]:
    """For 0..n changed tasks, the fewest drops among them that the exact test finds significant (None: none do)."""
    out: list[int | None] = []
    previous = 0
    for changed in range(n + 1):
        needed = max(previous, (changed + 2) // 2)  # a drop means more than half the changed tasks went down
        while needed <= changed and mcnemar_exact(needed, changed - needed) >= alpha:
            needed += 1
        out.append(needed if needed <= changed else None)
        previous = needed if needed <= changed else previous
    return tuple(out)


def _pmf(n: int, k: int, p: float) -> float:
    if p <= 0:
        return 1.0 if k == 0 else 0.0
    if p >= 1:
        return 1.0 if k == n else 0.0
    return math.exp(math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
                    + k * math.log(p) + (n - k) * math.log(1 - p))


def _tail(n: int, k: int, p: float) -> float:
    """P(Binomial(n, p) >= k)."""
    return math.fsum(_pmf(n, i, p) for i in range(k, n + 1))
