"""When the rounds stop: every rule of `optimize/stopping.py` on its own, and which refused calls a probe may take."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from optimizer.definitions import Candidate, Catalog, ToolDef
from optimizer.optimize.config import ROUNDS_CAP
from optimizer.optimize.probes import Probe, refused_calls
from optimizer.optimize.rounds import Scored
from optimizer.optimize.stopping import Spending, after_round, before_round, nothing_refused
from optimizer.propose.base import CallSeen, EpisodeSeen
from optimizer.run.evaluate import EvalResult, Outcome


def run(rounds: Any = "auto", goal: str = "accuracy", max_episodes: int | None = None, episodes: int = 0,
        limit: float | None = None) -> Any:
    config = SimpleNamespace(rounds=rounds, goal=goal, max_episodes=max_episodes)
    return SimpleNamespace(config=config, episodes={"run": episodes},
                           budget=SimpleNamespace(limit=limit) if limit is not None else None)


def scored(key: str, accuracy: float, failed: int = 0) -> Scored:
    from optimizer.stats.efficiency import EpisodeCost

    cost = EpisodeCost(calls=1 + failed, failed_calls=failed, turns=1, tokens=10)
    outcomes = [Outcome("t1", "m", "train", 0, accuracy >= 1.0, False, None, None, cost=cost)]
    return Scored(Candidate(scheme=key), accuracy, 100, EvalResult(key, outcomes))


def test_the_rules_before_a_round() -> None:
    best = scored("none", 0.5, failed=1)
    assert before_round(run(), 1, scored("none", 1.0), None).rule == "perfect"  # type: ignore[union-attr]
    assert before_round(run(), 1, scored("none", 1.0, failed=1), None) is None  # perfect, but paid for it
    assert before_round(run(goal="shrink"), 1, scored("none", 1.0), None) is None
    assert before_round(run(rounds=2), 3, best, None).text == "2 round(s) done"  # type: ignore[union-attr]
    assert before_round(run(), ROUNDS_CAP + 1, best, None).rule == "cap"  # type: ignore[union-attr]
    assert before_round(run(), ROUNDS_CAP, best, None) is None
    assert before_round(run(max_episodes=10, episodes=10), 2, best, None).rule == "max-episodes"  # type: ignore
    spending = Spending(spent=4.0, last_round=0.8, gate=0.3)
    assert before_round(run(limit=5.0), 2, best, spending).rule == "max-usd"  # type: ignore[union-attr]
    assert before_round(run(limit=5.2), 2, best, spending) is None


def test_past_the_second_round_auto_goes_on_only_while_calls_were_refused() -> None:
    assert nothing_refused(run(), 2, 0) is None
    assert nothing_refused(run(), 3, 0).rule == "nothing-refused"  # type: ignore[union-attr]
    assert nothing_refused(run(), 3, 2) is None and nothing_refused(run(rounds=4), 3, 0) is None


def test_progress_is_accuracy_up_or_failed_calls_down() -> None:
    before = scored("none", 0.5, failed=2)
    assert after_round(run(), before, scored("prefix", 0.75, failed=2)) is None
    assert after_round(run(), before, scored("prefix", 0.5, failed=1)) is None
    assert after_round(run(), before, scored("prefix", 0.5, failed=2)).rule == "no-progress"  # type: ignore
    assert after_round(run(rounds=3), before, before).text == "no improvement in the last round"  # type: ignore
    assert after_round(run(rounds=3), before, scored("prefix", 0.5, failed=2)) is None  # a new pick, as before


def test_probes_take_refused_calls_to_read_only_tools_only_unless_destructive_calls_are_allowed() -> None:
    schema = {"type": "object", "properties": {"station": {"type": "string"}, "unit": {"type": "string"}}}
    catalog = Catalog("gauges", (ToolDef("get_flow", "", schema, annotations={"readOnlyHint": True}),
                                 ToolDef("flag_flow", "", schema, annotations={"readOnlyHint": False}),
                                 ToolDef("note_flow", "", schema)))
    calls = tuple(CallSeen(tool, tool, {"station": "s", "unit": "cm"}, True, "invalid request")
                  for tool in ("get_flow", "flag_flow", "note_flow"))
    failed = EpisodeSeen("t1", "m", "p", False, ("get_flow",), (), ("get_flow",), calls, "", "")
    assert [t[0] for t in refused_calls(catalog, [failed], [], allow_destructive=False)] == ["get_flow"]
    assert {t[0] for t in refused_calls(catalog, [failed], [], allow_destructive=True)} == {
        "get_flow", "flag_flow", "note_flow"}
    done = [Probe("get_flow", {"station": "s", "unit": "cm"}, "invalid request")]
    assert refused_calls(catalog, [failed], done, allow_destructive=False) == []  # probed before: never again
    passed = EpisodeSeen("t2", "m", "p", True, ("get_flow",), (), ("get_flow",), calls, "", "")
    assert refused_calls(catalog, [passed], [], allow_destructive=False) == []  # only failed episodes' calls


def test_rounds_take_a_number_or_auto() -> None:
    import pytest
    from pydantic import ValidationError

    from optimizer.optimize import OptimizeConfig

    def rounds(value: Any) -> Any:
        return OptimizeConfig(server="s", tasks="t", models=("m",), rounds=value).rounds

    assert rounds("auto") == "auto" and rounds("3") == 3 and rounds(2) == 2
    assert OptimizeConfig(server="s", tasks="t", models=("m",)).rounds == "auto"  # the default
    for bad in ("0", "1.5", "lots", -1):
        with pytest.raises(ValidationError, match="a whole number of rounds"):
            rounds(bad)
