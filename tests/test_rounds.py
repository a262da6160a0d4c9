"""The pure parts of an optimization round: chunks of train tasks, the aggregate over models, what counts as
better, and the token cost of a candidate's definitions."""

from __future__ import annotations

from dataclasses import replace

from optimizer.definitions import Candidate, Catalog, ToolDef, ToolEdit
from optimizer.optimize.outputs import split_table
from optimizer.optimize.rounds import Scored, aggregate, better, chunked
from optimizer.optimize.tokens import definition_tokens, tokens_per_tool
from optimizer.run.evaluate import EvalResult, Outcome
from optimizer.scoring import Expect
from optimizer.tasks import Task


def tasks(n: int) -> list[Task]:
    return [Task(f"t{i}", f"prompt {i}", Expect(), "train") for i in range(n)]


def outcome(model: str, task: str, passed: bool) -> Outcome:
    return Outcome(task, model, "train", 0, passed, False, None, None)


def test_chunks_are_growing_prefixes_ending_with_every_task() -> None:
    chunks = chunked(tasks(10), 3)
    assert [len(c) for c in chunks] == [3, 7, 10] and chunks[-1] == tasks(10)
    assert [len(c) for c in chunked(tasks(2), 3)] == [1, 2]  # never an empty or repeated chunk


def test_aggregate_is_the_mean_or_the_worst_model() -> None:
    result = EvalResult("c", [outcome("a", "t1", True), outcome("a", "t2", True), outcome("b", "t1", True),
                              outcome("b", "t2", False)])
    assert aggregate(result, ["a", "b"], "mean") == 0.75
    assert aggregate(result, ["a", "b"], "min") == 0.5
    assert aggregate(result, ["a", "missing"], "min") == 0.0
    assert aggregate(result, [], "mean") == 0.0


def test_better_prefers_accuracy_then_fewer_tokens() -> None:
    old = Scored(Candidate(), 0.5, 100, EvalResult("c"))
    assert better(0.6, 500, old) and not better(0.4, 10, old)
    assert better(0.5, 99, old) and not better(0.5, 100, old)


def test_definition_tokens_follow_the_exposed_definitions() -> None:
    catalog = Catalog("demo", (ToolDef("get_order", "Get an order.", {"type": "object", "properties": {}}),))
    longer = Candidate({"get_order": ToolEdit(description="Look up one order by its number, e.g. #10007, and "
                                                          "return its status, items and total.")})
    assert definition_tokens(catalog, longer) > definition_tokens(catalog, Candidate()) > 0
    renamed = Candidate({"get_order": ToolEdit(name="lookup_order")}, scheme="prefix")
    assert list(tokens_per_tool(catalog, renamed)) == ["get_order"]


def test_split_table_counts_per_model_with_what_its_episodes_paid() -> None:
    from optimizer.stats.efficiency import EpisodeCost

    paid = {"t1": EpisodeCost(calls=1, turns=2, tokens=100), "t2": EpisodeCost(calls=4, failed_calls=3, turns=5,
                                                                                tokens=401)}
    result = EvalResult("c", [replace(outcome("a", t, t == "t1"), cost=paid[t]) for t in ("t1", "t2")])
    nothing = {"calls_per_task": 0.0, "failed_calls_per_task": 0.0, "turns_per_task": 0.0, "tokens_per_task": 0}
    assert split_table(result, ["a", "b"]) == {
        "a": {"accuracy": 0.5, "passed": 1, "n": 2, "calls_per_task": 2.5, "failed_calls_per_task": 1.5,
              "turns_per_task": 3.5, "tokens_per_task": 250},
        "b": {"accuracy": 0.0, "passed": 0, "n": 0, **nothing}}


def test_screening_rejects_candidates_over_the_token_budget() -> None:
    from optimizer.optimize.screening import Screen

    catalog = Catalog("demo", (ToolDef("get_order", "Get an order.", {"type": "object", "properties": {}}),))
    longer = Candidate({"get_order": ToolEdit(description="Look up one order by its number and return its status, "
                                                          "items and total; use it when someone asks about an order.")})
    budget = definition_tokens(catalog, longer) - 1
    accepted, rejected = Screen(catalog, [], allow_leakage=True, max_tokens=budget)([longer])
    assert accepted == [] and f"over --max-definition-tokens {budget}" in rejected[0]["reason"]
    accepted, _ = Screen(catalog, [], allow_leakage=True, max_tokens=budget + 1)([longer])
    assert accepted == [longer]


def test_select_picks_the_smallest_front_member_within_noise_of_the_most_accurate() -> None:
    import asyncio
    from types import SimpleNamespace

    from optimizer.optimize.rounds import RoundLog, select
    from optimizer.search.study import SearchResult, TrialResult

    catalog = Catalog("demo", (ToolDef("get_order", "Get an order.", {"type": "object", "properties": {}}),))
    def cand(text: str) -> Candidate:
        return Candidate({"get_order": ToolEdit(description=text)})
    top, close, far = cand("Look up one order " * 12), cand("Look up one order " * 6), cand("Look up an order.")
    failing = {top.key: 0, close.key: 1, far.key: 5}  # tasks failed, of 20

    async def evaluate(candidate: Candidate, tasks: list[Task]) -> EvalResult:
        n = failing.get(candidate.key, 10)
        return EvalResult(candidate.key, [outcome("m", t.id, i >= n) for i, t in enumerate(tasks)])

    settings = SimpleNamespace(objective="mean", token_tolerance=1.0)
    run = SimpleNamespace(evaluate=evaluate, catalog=catalog, model_ids=["m"], config=settings)
    trials = [TrialResult(i, c, 1 - failing[c.key] / 20, definition_tokens(catalog, c), True, 3)
              for i, c in enumerate((top, close, far))]
    baseline = asyncio.run(evaluate(Candidate(), tasks(20)))
    current = Scored(Candidate(), 0.5, definition_tokens(catalog, Candidate()), baseline)

    def pick(found: list[TrialResult], log: RoundLog) -> Scored:
        outcome = SearchResult(tuple(found), found[0], tuple(found), 0)
        return asyncio.run(select(run, outcome, current, tasks(20), log))  # type: ignore[arg-type]

    log = RoundLog(round=1, proposed=3)
    chosen = pick(trials, log)
    assert chosen.candidate == close and chosen.accuracy == 0.95
    marks = {e["candidate"]: (e["within_noise"], e["selected"], e["current"]) for e in log.front}
    assert marks[top.key] == (True, False, False) and marks[close.key] == (True, True, False)
    assert marks[far.key] == (False, False, False)  # smaller, but 5 of 20 worse: outside the noise
    assert marks[Candidate().key][2] is True

    run.config.token_tolerance = 0.5  # one task of 20 short is now outside the noise: the most accurate wins
    assert pick(trials, RoundLog(round=1, proposed=3)).candidate == top

    nothing_better = [TrialResult(0, far, 0.1, 10_000, True, 3)]
    log = RoundLog(round=2, proposed=1)
    kept = pick(nothing_better, log)
    assert kept is current and [e["selected"] for e in log.front if e["current"]] == [True]


def test_select_prefers_fewer_failed_calls_at_equal_accuracy_then_fewer_tokens() -> None:
    import asyncio
    from types import SimpleNamespace

    from optimizer.optimize.rounds import RoundLog, select
    from optimizer.search.study import SearchResult, TrialResult
    from optimizer.stats.efficiency import EpisodeCost

    catalog = Catalog("demo", (ToolDef("get_order", "Get an order.", {"type": "object", "properties": {}}),))
    short = Candidate({"get_order": ToolEdit(description="Look up an order.")})
    clear = Candidate({"get_order": ToolEdit(description="Look up an order by its number, which starts with #.")})
    failed = {short.key: 2, clear.key: 0, Candidate().key: 3}  # failed calls per task; every task passes

    async def evaluate(candidate: Candidate, tasks: list[Task]) -> EvalResult:
        return EvalResult(candidate.key, [replace(outcome("m", t.id, True), cost=EpisodeCost(
            calls=failed[candidate.key] + 1, failed_calls=failed[candidate.key])) for t in tasks])

    run = SimpleNamespace(evaluate=evaluate, catalog=catalog, model_ids=["m"],
                          config=SimpleNamespace(objective="mean", token_tolerance=0.5))
    found = [TrialResult(i, c, 1.0, definition_tokens(catalog, c), True, 3) for i, c in enumerate((short, clear))]
    assert found[0].tokens < found[1].tokens  # the front (accuracy vs tokens) holds only the short one
    current = Scored(Candidate(), 1.0, definition_tokens(catalog, Candidate()),
                     asyncio.run(evaluate(Candidate(), tasks(10))))
    log = RoundLog(round=1, proposed=2)
    outcome_ = SearchResult(tuple(found), found[0], (found[0],), 0)
    chosen = asyncio.run(select(run, outcome_, current, tasks(10), log))  # type: ignore[arg-type]
    assert chosen.candidate == clear
    assert [e["candidate"] for e in log.front if e["selected"]] == [clear.key]
    failed[clear.key] = 2  # as many failed calls as the short one: fewer tokens decide
    assert asyncio.run(select(run, outcome_, current, tasks(10), RoundLog(1, 2))).candidate == short  # type: ignore[arg-type]
