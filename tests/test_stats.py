"""Paired statistics for the release gate."""

from __future__ import annotations

import random
import time

import pytest

from optimizer.stats.paired import compare, holm, mcnemar_exact, paired_bootstrap, within_noise


def outcomes(seed: int, *, tasks: int = 40, epochs: int = 3, drop: float = 0.0) -> tuple[dict, dict]:
    """Tasks of varied difficulty; `after` passes each task with its before-rate minus `drop`."""
    rng = random.Random(seed)
    before, after = {}, {}
    for i in range(tasks):
        rate = rng.random()
        before[f"t{i}"] = [rng.random() < rate for _ in range(epochs)]
        after[f"t{i}"] = [rng.random() < rate - drop for _ in range(epochs)]
    return before, after


def test_mcnemar_known_values() -> None:
    assert mcnemar_exact(0, 5) == pytest.approx(0.0625)
    assert mcnemar_exact(5, 0) == pytest.approx(0.0625)
    assert mcnemar_exact(1, 9) == pytest.approx(0.021484375)
    assert mcnemar_exact(4, 4) == 1.0
    assert mcnemar_exact(0, 0) == 1.0
    assert 0.0 < mcnemar_exact(5000, 5300) < 0.01  # large counts stay exact, no overflow
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 2)


def test_holm_known_values() -> None:
    adjusted = holm({"a": 0.01, "b": 0.04, "c": 0.03})
    assert adjusted == pytest.approx({"a": 0.03, "b": 0.06, "c": 0.06})
    assert list(adjusted) == ["a", "b", "c"]
    assert holm({"x": 0.2, "y": 0.9}) == pytest.approx({"x": 0.4, "y": 0.9})
    assert holm({"x": 0.6, "y": 0.7}) == {"x": 1.0, "y": 1.0}
    assert holm({}) == {}


def test_bootstrap_detects_a_planted_drop() -> None:
    before, after = outcomes(7, drop=0.3)
    result = paired_bootstrap(before, after, seed=1)
    assert result.delta < -0.2
    assert result.p_value < 0.01
    assert result.ci_low <= result.delta <= result.ci_high < 0
    assert result.n_tasks == 40


def test_bootstrap_null_difference_rarely_alarms() -> None:
    trials = 200
    alarms = sum(paired_bootstrap(*outcomes(seed), n=400, seed=seed).p_value < 0.05 for seed in range(trials))
    assert alarms / trials <= 0.09  # nominal 0.05; measured ~0.055 with a standard error of ~0.015


def test_bootstrap_is_deterministic_and_handles_no_change() -> None:
    before, after = outcomes(3)
    assert paired_bootstrap(before, after, seed=4) == paired_bootstrap(before, after, seed=4)
    same = paired_bootstrap(before, before, n=100)
    assert (same.delta, same.ci_low, same.ci_high, same.p_value) == (0.0, 0.0, 0.0, 1.0)
    with pytest.raises(ValueError):
        paired_bootstrap({"a": [True]}, {"b": [True]})


def test_bootstrap_of_ten_thousand_resamples_is_fast() -> None:
    before, after = outcomes(1, tasks=100)
    start = time.perf_counter()
    paired_bootstrap(before, after, n=10_000)
    assert time.perf_counter() - start < 2.0  # ~0.15 s here


def test_compare_one_epoch_uses_mcnemar_and_lists_flips() -> None:
    before = {"a": [True], "b": [True], "c": [False], "d": [False], "only-before": [True]}
    after = {"a": [True], "b": [False], "c": [True], "d": [True], "only-after": [False]}
    result = compare(before, after)
    assert result.method == "mcnemar"
    assert result.n_tasks == 4
    assert (result.flipped_up, result.flipped_down) == (["c", "d"], ["b"])
    assert result.p_value == pytest.approx(mcnemar_exact(1, 2))
    assert (result.before_acc, result.after_acc) == (0.5, 0.75)
    assert result.delta == pytest.approx(0.25)
    assert result.ci_low <= result.delta <= result.ci_high


def test_compare_several_epochs_uses_the_bootstrap() -> None:
    before, after = outcomes(11, drop=0.4)
    result = compare(before, after, seed=2)
    assert result.method == "bootstrap"
    assert result.p_value < 0.01 and result.delta < 0
    assert result.flipped_down and set(result.flipped_down).isdisjoint(result.flipped_up)
    assert result.flipped_down == sorted(result.flipped_down)
    with pytest.raises(ValueError):
        compare({"a": []}, {"a": [True]})


def test_within_noise_allows_a_shortfall_of_one_standard_error() -> None:
    best = {f"t{i}": [True] for i in range(60)}
    one_less = {**best, "t0": [False]}
    two_less = {**one_less, "t1": [False]}
    assert within_noise(best, one_less) and not within_noise(best, two_less)
    swapped = {**best, "t0": [False], "t1": [False]}  # two down, but two up elsewhere: the mean shortfall is 0
    assert within_noise({**best, "t2": [False], "t3": [False]}, swapped)
    assert within_noise(best, {**best, "extra": [False]}) and within_noise({}, best)
    assert not within_noise({"a": [True]}, {"a": [False]})  # one item cannot show noise
    assert not within_noise(best, one_less, tolerance=0.5) and within_noise(best, best, tolerance=0.0)


def test_the_bootstrap_draws_exactly_what_random_choices_would() -> None:
    """The resampling runs in numpy from the Random's own Mersenne Twister state: the same means, in the same order,
    as drawing with `rng.choices` and summing in order, and the Random is left where those draws leave it."""
    import random

    from optimizer.stats.paired import _resampled_means

    for seed, m in ((0, 1), (1, 7), (2, 30), (3, 66)):
        diffs = [random.Random(seed + i).choice([-1.0, -2 / 3, -1 / 3, 0.0, 1 / 3, 0.5, 1.0]) for i in range(m)]
        ours, theirs = random.Random(seed), random.Random(seed)
        draws = theirs.choices(diffs, k=500 * m)
        expected = [sum(draws[i: i + m]) / m for i in range(0, 500 * m, m)]
        assert _resampled_means(diffs, 500, ours) == expected
        assert ours.random() == theirs.random()
