"""The pure parts of an optimization round: chunks of train tasks, the aggregate over models, what counts as
better, and the token cost of a candidate's definitions."""

from __future__ import annotations

from optimizer.definitions import Candidate, Catalog, ToolDef, ToolEdit
from optimizer.evaluate import EvalResult, Outcome
from optimizer.optimize.outputs import split_table
from optimizer.optimize.rounds import Scored, aggregate, better, chunked
from optimizer.optimize.tokens import definition_tokens, tokens_per_tool
from optimizer.scoring import Expect
from optimizer.tasks import Task


def tasks(n: int) -> list[Task]:
    return [Task(f"t{i}", f"prompt {i}", Expect(), "train") for i in range(n)]


def outcome(model: str, task: str, passed: bool) -> Outcome:
    return Outcome(task, model, "train", 0, passed, False, None, None, 1, 10, 5)


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


def test_split_table_counts_per_model() -> None:
    result = EvalResult("c", [outcome("a", "t1", True), outcome("a", "t2", False)])
    assert split_table(result, ["a", "b"]) == {"a": {"accuracy": 0.5, "passed": 1, "n": 2},
                                               "b": {"accuracy": 0.0, "passed": 0, "n": 0}}


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
