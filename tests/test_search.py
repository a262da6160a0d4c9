"""The optuna search over a candidate pool, driven by synthetic async objectives."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from optimizer.definitions import Candidate, ToolEdit
from optimizer.search.pool import Pool, candidate_from, choice_of, combinations, pool_from
from optimizer.search.study import MEMORY_STORAGE as MEMORY
from optimizer.search.study import (
    ChunkScore,
    SearchConfig,
    SearchError,
    SearchResult,
    load_trials,
    search,
    trial_candidate,
)

TOOLS = ("t0", "t1", "t2", "t3")


def good(tool: str) -> ToolEdit:
    return ToolEdit(description=f"Good, long and precise description of {tool}. Use it when asked about {tool}.")


def bad(tool: str) -> ToolEdit:
    return ToolEdit(description=f"bad {tool}")


def proposal(goods: set[str], scheme: str = "none") -> Candidate:
    return Candidate(edits={t: good(t) if t in goods else bad(t) for t in TOOLS}, scheme=scheme)  # type: ignore[arg-type]


PROPOSALS = [proposal({"t0", "t1"}), proposal({"t2", "t3"}, "suffix"), proposal(set(), "prefix")]


class Objective:
    """Accuracy = share of tools on their good edit, plus the prefix scheme, over len(TOOLS) + 1; noise-free, so
    every chunk reports the same cumulative accuracy. Tokens = description characters. Records every call."""

    def __init__(self, *, fail_after: int | None = None) -> None:
        self.calls: list[tuple[str, int]] = []
        self.fail_after = fail_after

    def accuracy(self, candidate: Candidate) -> float:
        goods = sum(1 for t in TOOLS if candidate.edits.get(t) == good(t))
        return (goods + (candidate.scheme == "prefix")) / (len(TOOLS) + 1)

    async def __call__(self, candidate: Candidate, chunk: int) -> ChunkScore:
        if self.fail_after is not None and len(self.calls) >= self.fail_after:
            raise RuntimeError("objective broke")
        await asyncio.sleep(0)
        self.calls.append((candidate.key, chunk))
        tokens = sum(len(e.description or "") for e in candidate.edits.values()) + 10 * (candidate.scheme != "none")
        return ChunkScore(accuracy=self.accuracy(candidate), tokens=tokens, episodes=5)


def run(pool: Pool, objective: Objective, config: SearchConfig, proposals: list[Candidate] | None = None
        ) -> SearchResult:
    return asyncio.run(search(pool, PROPOSALS if proposals is None else proposals, objective, config))


def test_pool_from_dedups_and_keeps_current_first() -> None:
    current = Candidate(edits={"t0": bad("t0")})
    pool = pool_from(current, [*PROPOSALS, PROPOSALS[0]])
    assert list(pool.edits) == list(TOOLS)
    assert pool.edits["t0"] == (bad("t0"), good("t0"))  # current's edit first, duplicates gone
    assert pool.edits["t1"] == (ToolEdit(), good("t1"), bad("t1"))  # empty edit first when current has none
    assert pool.schemes == ("none", "prefix", "suffix")
    assert combinations(pool) == 2 * 3 * 3 * 3 * 3


def test_pool_word_comes_from_current_then_proposals() -> None:
    assert pool_from(Candidate(), [Candidate(scheme="prefix", word="shop")]).word == "shop"
    assert pool_from(Candidate(word="own"), [Candidate(word="shop")]).word == "own"


def test_candidate_from_round_trip() -> None:
    pool = pool_from(Candidate(), PROPOSALS)
    for cand in PROPOSALS:
        choice, scheme = choice_of(pool, cand)
        assert candidate_from(pool, choice, scheme).key == cand.key
    assert candidate_from(pool, {}, "none").is_baseline
    with pytest.raises(ValueError):
        candidate_from(pool, {"t0": 9}, "none")
    with pytest.raises(ValueError):
        candidate_from(pool, {"nope": 0}, "none")
    with pytest.raises(ValueError):
        choice_of(pool, Candidate(edits={"t0": ToolEdit(name="unseen")}))


def test_proposals_are_the_first_trials_in_order_and_duplicates_run_once() -> None:
    objective = Objective()
    pool = pool_from(Candidate(), PROPOSALS)
    result = run(pool, objective, SearchConfig(trials=5), [PROPOSALS[0], PROPOSALS[0], *PROPOSALS[1:]])
    assert [t.candidate.key for t in result.trials[:3]] == [p.key for p in PROPOSALS]
    assert len(result.trials) == 5


def test_repeated_candidates_are_not_evaluated_again() -> None:
    pool = Pool(edits={"t0": (ToolEdit(), good("t0"))}, schemes=("none",))
    objective = Objective()
    result = run(pool, objective, SearchConfig(trials=8, chunks=2), [])
    assert len(result.trials) == 8
    assert max(Counter(objective.calls).values()) == 1  # each (candidate, chunk) scored once
    assert len({t.candidate.key for t in result.trials}) <= 2
    assert result.episodes == 5 * len(objective.calls)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_search_finds_the_best_mix_with_fewer_calls_than_the_space(seed: int) -> None:
    pool = pool_from(Candidate(), PROPOSALS)
    objective = Objective()
    result = run(pool, objective, SearchConfig(trials=50, seed=seed))
    # every tool good (mixing proposals 0 and 1) with the prefix scheme: in no proposal, one of 243 combinations
    assert result.best.accuracy == 1.0
    assert result.best.complete and result.best.chunks_run == 3
    assert objective.accuracy(result.best.candidate) == 1.0
    assert len(objective.calls) < combinations(pool)  # calls count every chunk, too


def test_hopeless_trials_are_pruned_and_the_winner_is_kept() -> None:
    best = proposal(set(TOOLS), "prefix")
    pool = pool_from(Candidate(), [best, *PROPOSALS])
    objective = Objective()
    result = run(pool, objective, SearchConfig(trials=10, chunks=3), [best, *PROPOSALS])
    pruned = [t for t in result.trials if not t.complete]
    assert pruned and all(t.chunks_run < 3 for t in pruned)
    assert all(t.accuracy < 1.0 for t in pruned)  # a repeat of the winner replays complete, never pruned
    assert result.best.candidate.key == best.key
    assert all(t.number != result.best.number for t in pruned)


def test_pruning_never_drops_a_candidate_that_could_still_win() -> None:
    pool = pool_from(Candidate(), PROPOSALS)
    result = run(pool, Objective(), SearchConfig(trials=12, chunks=3))
    first = result.trials[0]  # accuracy 0.4: a later 0.0 at chunk 0 could still reach 2/3 > 0.4
    assert first.complete
    assert all(t.complete for t in result.trials[1:3])


def test_pareto_front_is_non_dominated() -> None:
    pool = pool_from(Candidate(), PROPOSALS)
    result = run(pool, Objective(), SearchConfig(trials=16, pareto=True, seed=3))
    assert all(t.complete and t.chunks_run == 3 for t in result.trials)

    def dominates(a: object, b: object) -> bool:
        return (a.accuracy >= b.accuracy and a.tokens <= b.tokens  # type: ignore[attr-defined]
                and (a.accuracy > b.accuracy or a.tokens < b.tokens))  # type: ignore[attr-defined]

    assert result.front
    for member in result.front:
        assert not any(dominates(other, member) for other in result.trials)
    for trial in result.trials:
        assert any(dominates(m, trial) or m.candidate.key == trial.candidate.key for m in result.front)
    assert result.best == max(result.front, key=lambda t: (t.accuracy, -t.tokens))


def test_same_seed_same_sequence_in_a_fresh_study() -> None:
    pool = pool_from(Candidate(), PROPOSALS)
    sequences = [[t.candidate.key for t in run(pool, Objective(), SearchConfig(trials=15, seed=7)).trials]
                 for _ in range(2)]
    assert sequences[0] == sequences[1]
    other = [t.candidate.key for t in run(pool, Objective(), SearchConfig(trials=15, seed=8)).trials]
    assert other != sequences[0]


def test_pareto_is_deterministic_too() -> None:
    pool = pool_from(Candidate(), PROPOSALS)
    config = SearchConfig(trials=10, pareto=True, seed=2)
    keys = [[t.candidate.key for t in run(pool, Objective(), config).trials] for _ in range(2)]
    assert keys[0] == keys[1]


def test_stored_study_reloads_and_resumes(tmp_path: Path) -> None:
    storage = f"sqlite:///{tmp_path / 'run.db'}"
    pool = pool_from(Candidate(), PROPOSALS)
    first = run(pool, Objective(), SearchConfig(trials=5, storage=storage, round=2))
    rows = load_trials(storage, "optimize-r2")
    assert [r["number"] for r in rows] == [t.number for t in first.trials]
    assert [trial_candidate(r).key for r in rows] == [t.candidate.key for t in first.trials]
    assert rows[0]["user_attrs"]["proposal"] == 0 and rows[0]["state"] == "COMPLETE"
    assert set(rows[3]["params"]) == {f"r2/{t}" for t in TOOLS} | {"r2/scheme"}

    again = Objective()
    second = run(pool, again, SearchConfig(trials=9, storage=storage, round=2))
    assert len(second.trials) == 9
    assert second.trials[:5] == first.trials
    assert not any(key in {t.candidate.key for t in first.trials} for key, _ in again.calls)
    assert sum("proposal" in r["user_attrs"] for r in load_trials(storage, "optimize-r2")) == len(PROPOSALS)
    assert second.episodes == 5 * len(again.calls)


def test_a_failing_objective_marks_the_trial_failed_and_the_study_resumes(tmp_path: Path) -> None:
    storage = f"sqlite:///{tmp_path / 'run.db'}"
    pool = pool_from(Candidate(), PROPOSALS)
    with pytest.raises(RuntimeError, match="objective broke"):
        run(pool, Objective(fail_after=4), SearchConfig(trials=6, storage=storage))
    states = [r["state"] for r in load_trials(storage, "optimize-r1")]
    assert states.count("FAIL") == 1 and "RUNNING" not in states
    result = run(pool, Objective(), SearchConfig(trials=6, storage=storage))
    assert len(result.trials) == 6
    assert {p.key for p in PROPOSALS} <= {t.candidate.key for t in result.trials}


class Killed(Objective):
    """Ends its process without a word (as SIGKILL would) at its n-th call, leaving that trial RUNNING."""

    def __init__(self, at: int) -> None:
        super().__init__()
        self.at = at

    async def __call__(self, candidate: Candidate, chunk: int) -> ChunkScore:
        if len(self.calls) == self.at:
            os._exit(9)
        return await super().__call__(candidate, chunk)


def finished_keys(result: SearchResult) -> list[str]:
    return [t.candidate.key for t in result.trials]


def _run_killed(pool: Pool, config: SearchConfig, at: int) -> None:
    run(pool, Killed(at), config)


def _run_dying_after_asking(pool: Pool, config: SearchConfig, at: int) -> None:
    """End the process (as SIGKILL would) right after its `at`-th ask, before the trial's owner is written: the
    trial stays RUNNING with no owner."""
    import optimizer.search.study as search_module

    asked = {"n": 0}
    owner = search_module.owner

    def dying_owner() -> dict:
        asked["n"] += 1
        if asked["n"] == at:
            os._exit(9)
        return owner()

    search_module.owner = dying_owner  # type: ignore[assignment]
    run(pool, Objective(), config)


@pytest.mark.parametrize(("killer", "at"), [
    (_run_killed, 1), (_run_killed, 4), (_run_killed, 9),  # mid-trial: in the proposals, after them, sampled
    (_run_dying_after_asking, 3), (_run_dying_after_asking, 7),  # between ask and owner: a proposal, a sampled one
])
def test_a_killed_study_resumes_to_the_same_sequence(
    tmp_path: Path, killer: Callable[[Pool, SearchConfig, int], None], at: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    import optimizer.search.trial_owner

    monkeypatch.setattr(optimizer.search.trial_owner, "UNCLAIMED_S", 0.5)
    pool = pool_from(Candidate(), PROPOSALS)
    config = SearchConfig(trials=10, chunks=2, seed=3)
    uninterrupted = run(pool, Objective(), config)
    storage = f"sqlite:///{tmp_path / 'run.db'}"
    child = multiprocessing.get_context("fork").Process(target=killer,
                                                        args=(pool, replace(config, storage=storage), at))
    child.start()
    child.join()
    assert child.exitcode == 9
    assert "RUNNING" in [r["state"] for r in load_trials(storage, "optimize-r1")]
    resumed = run(pool, Objective(), replace(config, storage=storage))
    assert finished_keys(resumed) == finished_keys(uninterrupted)
    assert [t.complete for t in resumed.trials] == [t.complete for t in uninterrupted.trials]
    assert "RUNNING" not in [r["state"] for r in load_trials(storage, "optimize-r1")]


def test_a_failed_proposal_is_evaluated_again_in_its_place(tmp_path: Path) -> None:
    pool = pool_from(Candidate(), PROPOSALS)
    config = SearchConfig(trials=8, chunks=1, seed=5, storage=f"sqlite:///{tmp_path / 'run.db'}")
    with pytest.raises(RuntimeError, match="objective broke"):
        run(pool, Objective(fail_after=1), config)  # the second proposal fails
    resumed = run(pool, Objective(), config)
    assert finished_keys(resumed) == finished_keys(run(pool, Objective(), replace(config, storage=MEMORY)))


def test_a_study_refuses_another_pool(tmp_path: Path) -> None:
    storage = f"sqlite:///{tmp_path / 'run.db'}"
    run(pool_from(Candidate(), PROPOSALS), Objective(), SearchConfig(trials=3, storage=storage))
    with pytest.raises(SearchError, match="different pool"):
        run(pool_from(Candidate(), PROPOSALS[:1]), Objective(), SearchConfig(trials=3, storage=storage), [])
    with pytest.raises(SearchError, match="no study"):
        load_trials(storage, "missing")


def test_a_tool_named_scheme_does_not_collide() -> None:
    pool = Pool(edits={"scheme": (ToolEdit(), ToolEdit(description="x"), ToolEdit(description="y"))})

    async def objective(candidate: Candidate, chunk: int) -> ChunkScore:
        return ChunkScore(accuracy=float(candidate.edits.get("scheme") == ToolEdit(description="y")), tokens=1,
                          episodes=1)

    result = asyncio.run(search(pool, [], objective, SearchConfig(trials=6, chunks=1)))
    assert len(result.trials) == 6


def test_twelve_trials_with_a_trivial_objective_are_quick() -> None:
    pool = pool_from(Candidate(), PROPOSALS)
    start = time.perf_counter()
    run(pool, Objective(), SearchConfig(trials=12))
    assert time.perf_counter() - start < 5.0


def test_at_equal_accuracy_the_search_ranks_fewer_failed_calls_first_then_fewer_tokens() -> None:
    from optimizer.search.study import TrialResult, _ranked

    def trial(number: int, accuracy: float, tokens: int, failed: float) -> TrialResult:
        return TrialResult(number, Candidate({"t": ToolEdit(description=f"d{number}")}), accuracy, tokens, True, 3,
                           failed)

    assert _ranked((trial(0, 1.0, 100, 0.5), trial(1, 1.0, 200, 0.0)), 0).best.number == 1  # type: ignore[union-attr]
    assert _ranked((trial(0, 1.0, 100, 0.0), trial(1, 1.0, 200, 0.0)), 0).best.number == 0  # type: ignore[union-attr]
    assert _ranked((trial(0, 0.9, 100, 0.0), trial(1, 1.0, 200, 3.0)), 0).best.number == 1  # type: ignore[union-attr]
