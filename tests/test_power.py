"""What the gate can see: the smallest detectable drop and the tasks a drop needs, checked against the exact test
they stand for."""

from __future__ import annotations

import random

from optimizer.stats.paired import mcnemar_exact
from optimizer.stats.power import detectable_drop, tasks_needed


def simulated_power(n: int, psi: float, drop: float, alpha: float, runs: int = 2000) -> float:
    """How often McNemar's exact test rejects, in the drop direction, on simulated paired tasks."""
    rng = random.Random(7)
    down_share = (1 + drop / psi) / 2
    hits = 0
    for _ in range(runs):
        changed = [rng.random() < psi for _ in range(n)]
        down = sum(1 for c in changed if c and rng.random() < down_share)
        up = sum(changed) - down
        hits += down > up and mcnemar_exact(down, up) < alpha
    return hits / runs


def test_the_detectable_drop_is_detected_about_80_percent_of_the_time() -> None:
    n, psi, alpha = 40, 0.2, 0.05
    drop = detectable_drop(n, psi, alpha=alpha)
    assert drop is not None
    assert 0.76 <= simulated_power(n, max(psi, drop), drop, alpha) <= 0.9
    assert simulated_power(n, max(psi, drop * 0.6), drop * 0.6, alpha) < 0.7


def test_the_exact_floor_and_its_growth_with_tasks() -> None:
    # alpha 0.025 needs at least 7 tasks lost and none gained: on 36 tasks nothing under 7/36 can be seen
    assert (detectable_drop(36, 0.0, alpha=0.025) or 1) > 7 / 36
    drops = [detectable_drop(n, 0.1, alpha=0.05) or 1.0 for n in (20, 50, 100, 400, 2000)]
    assert drops == sorted(drops, reverse=True) and drops[-1] < 0.05
    assert detectable_drop(5, 0.2, alpha=0.05) is None  # five tasks cannot show any drop at all


def test_tasks_needed_is_about_what_the_normal_approximation_asks() -> None:
    needed = tasks_needed(0.1, 30, 0.15, alpha=0.05)
    assert needed is not None and needed > 30
    seen = [detectable_drop(m, 0.15, alpha=0.05) or 1.0 for m in (needed // 2, needed, needed * 2)]
    assert seen[0] > 0.1 and abs(seen[1] - 0.1) < 0.02 and seen[2] < 0.1  # the exact test agrees, about
    assert tasks_needed(0.5, 30, 0.15, alpha=0.05) == 30 and tasks_needed(0.0, 30, 0.15, alpha=0.05) is None
    several = detectable_drop(60, 0.3, alpha=0.05, exact=False)  # the bootstrap's normal approximation
    assert several is not None and abs(several - max(2.8016 * 0.3 / 60 ** 0.5, 2.8016 ** 2 / 60)) < 1e-3
