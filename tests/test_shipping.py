"""What an optimize run ships (`optimize/shipping.py`): the winner, unless it only adds definition tokens."""

from __future__ import annotations

from optimizer.definitions import Candidate, ToolEdit
from optimizer.optimize.rounds import Scored
from optimizer.optimize.shipping import to_ship
from optimizer.run.evaluate import EvalResult, Outcome
from optimizer.stats.efficiency import EpisodeCost

BASELINE = Scored(Candidate(), 1.0, 100, EvalResult("base"))


def scored(tokens: int) -> Scored:
    return Scored(Candidate({"t": ToolEdit(description=f"d{tokens}")}), 1.0, tokens, EvalResult("w"))


def heldout(passed: list[bool], failed: int = 0, model: str = "m") -> EvalResult:
    cost = EpisodeCost(calls=1 + failed, failed_calls=failed, turns=1, tokens=10)
    return EvalResult("c", [Outcome(f"t{i}", model, "heldout", 0, p, False, None, None, cost=cost)
                            for i, p in enumerate(passed)])


def test_a_larger_winner_ships_only_for_a_held_out_gain() -> None:
    winner = scored(180)
    same = to_ship(BASELINE, winner, heldout([True, False]), heldout([True, False]), ["m"])
    assert same.scored is BASELINE and "adds 80 definition tokens and gained nothing" in (same.reason or "")
    better = to_ship(BASELINE, winner, heldout([True, False]), heldout([True, True]), ["m"])
    assert better.scored is winner and better.reason is None
    cheaper = to_ship(BASELINE, winner, heldout([True, True], failed=1), heldout([True, True]), ["m"])
    assert cheaper.scored is winner  # the same accuracy for fewer failed calls is a gain
    worse = to_ship(BASELINE, winner, heldout([True, True]), heldout([True, False], failed=0), ["m"])
    assert worse.scored is BASELINE  # a drop is no gain, whatever the gate says


def test_a_winner_no_larger_than_the_baseline_ships_as_chosen() -> None:
    smaller = scored(60)
    assert to_ship(BASELINE, smaller, heldout([True]), heldout([True]), ["m"]).scored is smaller
    assert to_ship(BASELINE, BASELINE, heldout([True]), heldout([True]), ["m"]).scored is BASELINE
