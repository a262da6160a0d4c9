"""The parts of one optimization round: score a candidate on train tasks, ask the proposer (once per run for
the same input), and search the screened candidates with optuna on growing chunks of the train tasks.

Contracts:
- Everything here evaluates TRAIN tasks only; held-out tasks are for the gate, after the search.
- Every episode goes through the run's store, so a resumed or re-run optimization repeats no finished episode;
  proposals are stored too, so it asks the proposer nothing it asked before.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from optimizer.definitions import Candidate, Catalog, ToolEdit, digest
from optimizer.files.patch import overlay_from_json
from optimizer.gate import ModelVerdict
from optimizer.models.base import ModelUnavailable
from optimizer.optimize.config import OptimizeConfig
from optimizer.optimize.tokens import definition_tokens, tokens_per_tool
from optimizer.propose.base import Evidence, Proposer
from optimizer.propose.lean import leaned
from optimizer.run.evaluate import EvalResult
from optimizer.run.harness import Harness
from optimizer.search.pool import candidate_from, pool_from, smallest_choice
from optimizer.search.study import ChunkScore, SearchConfig, SearchResult, search
from optimizer.stats.efficiency import efficiency_cell
from optimizer.stats.paired import within_noise
from optimizer.tasks import Task

OptimizeRun = Harness[OptimizeConfig]


@dataclass
class Scored:
    candidate: Candidate
    accuracy: float
    tokens: int
    result: EvalResult


@dataclass
class RoundLog:
    round: int
    proposed: int
    rejected: list[dict[str, str]] = field(default_factory=list)
    trials: int = 0
    pruned: int = 0
    best_accuracy: float = 0.0
    improved: bool = False
    schemes: list[str] = field(default_factory=list)
    scheme_accuracy: dict[str, float] = field(default_factory=dict)
    """Per namespace scheme, the best train accuracy of the round's complete trials under it (in context when the run
    has context servers: what a prefix or suffix is worth beside them)."""
    episodes: int = 0
    proposer: dict[str, Any] = field(default_factory=dict)
    """What the proposer reported (requested, received, repaired, dropped, rejected, rationales, error)."""
    unfit: list[dict[str, str]] = field(default_factory=list)
    """Candidates the search made that failed the final screen ({candidate, reason}): never selected."""
    front: list[dict[str, Any]] = field(default_factory=list)
    """The round's accuracy-vs-tokens front on train, best first: {candidate, accuracy, tokens, within_noise (None:
    not compared), current (the best before the round), selected}."""
    smallest_mix: str | None = None
    """A shrink's extra trial: the key of the candidate taking every tool's smallest edit of the pool (None when
    that is one of the proposals or the current best)."""
    lean_only: str | None = None
    """A shrink's other extra trial: the key of the current best's texts with lean schemas (None when that is one of
    the proposals or the current best)."""
    probes: list[dict[str, Any]] = field(default_factory=list)
    """The round's probes of refused calls (`probes.Probe.to_json`): the calls made, with their results, and what
    they settled."""
    probing_stopped: str | None = None
    """Why the round's probing ended early (a server fault), or None."""
    refused_at_start: dict[str, dict[str, int]] = field(default_factory=dict)
    """Refused calls in the best candidate's failed train episodes when the round started, by tool and parameter
    ("?": no error or probe said which)."""
    spent: float = 0.0
    """USD the round's proposal and search cost (0 without prices or with offline models)."""


@dataclass(frozen=True)
class Stop:
    """Why the rounds stopped: a rule name for machines (`stopping.RULES`) and a sentence for people."""

    rule: str
    text: str

    def to_json(self) -> dict[str, str]:
        return {"rule": self.rule, "text": self.text}


@dataclass
class Outcome:
    """Everything the outputs are made from."""

    run: OptimizeRun
    config: OptimizeConfig
    baseline: Scored
    winner: Scored
    heldout_before: EvalResult
    heldout_after: EvalResult
    gate_passed: bool
    verdicts: list[ModelVerdict]
    rounds: list[RoundLog]
    stop_reason: str
    episodes: dict[str, int]
    alone: tuple[EvalResult, EvalResult] | None = None
    """With context servers: baseline and winner on held-out without them (how the winner does alone)."""
    candidates: list[dict[str, Any]] = field(default_factory=list)
    """The winner and the best front members on train and held-out ({id, train, heldout, tokens, selected}); held-out
    was not used to select."""
    stop: Stop | None = None
    """Why the rounds stopped (`stop_reason` is its text)."""
    refused_left: dict[str, dict[str, int]] = field(default_factory=dict)
    """Refused calls left in the winner's failed train episodes, by tool and parameter ("?": not settled)."""
    shipped: Any = None
    """What ships (`shipping.Shipped`): the winner, or the baseline with why."""


FAILED_CALL_COST = 0.1
"""What one failed call per task costs under `--objective efficiency`, in accuracy (10 points)."""


def aggregate(result: EvalResult, models: Sequence[str], how: str) -> float:
    """The search's value of a candidate on train: the mean of per-model accuracies (`mean`), the worst one (`min`),
    or the mean less FAILED_CALL_COST per failed call per task (`efficiency`). Every result scores at most 1 either
    way, so the search's bound on what a pruned trial could still reach holds for all three."""
    per_model = []
    for model in models:
        outcomes = [o.passed for o in result.outcomes if o.model == model]
        per_model.append(sum(outcomes) / len(outcomes) if outcomes else 0.0)
    if not per_model:
        return 0.0
    if how == "min":
        return min(per_model)
    mean = sum(per_model) / len(per_model)
    return mean - FAILED_CALL_COST * failed_calls(result) if how == "efficiency" else mean


def chunked(tasks: Sequence[Task], chunks: int) -> list[list[Task]]:
    """Cumulative prefixes of the train tasks: chunk i holds the first (i+1)/chunks of them."""
    n = len(tasks)
    ends = sorted({max(1, round(n * (i + 1) / chunks)) for i in range(chunks)})
    return [list(tasks[:end]) for end in ends]


async def score(run: OptimizeRun, candidate: Candidate, tasks: Sequence[Task]) -> Scored:
    """A candidate's aggregated accuracy on `tasks` and its definition tokens."""
    result = await run.evaluate(candidate, tasks)
    return Scored(candidate, aggregate(result, run.model_ids, run.config.objective),
                  definition_tokens(run.catalog, candidate), result)


def better(new: float, new_tokens: int, old: Scored) -> bool:
    """Higher accuracy wins; at equal accuracy, fewer definition tokens."""
    return new > old.accuracy + 1e-12 or (abs(new - old.accuracy) <= 1e-12 and new_tokens < old.tokens)


def outcomes_by_item(result: EvalResult) -> dict[str, list[bool]]:
    """`model/task` -> pass/fail per epoch: the paired items two candidates are compared on."""
    runs: dict[str, list[bool]] = {}
    for o in result.outcomes:
        runs.setdefault(f"{o.model}/{o.task_id}", []).append(o.passed)
    return runs


async def select(
    run: OptimizeRun, outcome: SearchResult, current: Scored, train: Sequence[Task], log: RoundLog
) -> Scored:
    """The round's pick among the current best, the round's accuracy-vs-tokens front and its other complete trials.
    THE SELECTION RULE:
    accuracy first; among the candidates whose train results are within the noise of the most accurate
    (`stats.within_noise`, paired per model and task, at most `config.token_tolerance` standard errors below), the one
    whose agents made the fewest failed calls per task on the same tasks (`failed_calls`), then the one with the
    fewest definition tokens. Returns `current` when nothing beats it. Front members are re-read from the store (no
    new episode). Fills `log.front`."""
    top = outcome.best
    reference = current
    if top.complete and better(top.accuracy, top.tokens, current):
        reference = await score(run, top.candidate, train)
    items = outcomes_by_item(reference.result)
    members = {m.candidate.key: (m.candidate, m.accuracy, m.tokens) for m in outcome.front}
    members.setdefault(current.candidate.key, (current.candidate, current.accuracy, current.tokens))
    entries = {key: {"candidate": key, "accuracy": accuracy, "tokens": tokens, "current": key == current.candidate.key,
                     "within_noise": True if key == reference.candidate.key else None, "selected": False}
               for key, (_, accuracy, tokens) in members.items()}
    # beyond the front: a complete trial the front leaves out for its tokens may still make fewer failed calls
    others = {t.candidate.key: (t.candidate, t.accuracy, t.tokens) for t in outcome.trials
              if t.complete and t.candidate.key not in members}
    within = [reference]
    for key, (candidate, _, _) in sorted({**members, **others}.items(), key=lambda item: item[1][2]):
        if key == reference.candidate.key:
            continue
        scored = current if key == current.candidate.key else await score(run, candidate, train)
        close = within_noise(items, outcomes_by_item(scored.result), run.config.token_tolerance)
        if key in entries:
            entries[key]["within_noise"] = close
        if close:
            within.append(scored)
    chosen = min(within, key=lambda s: (failed_calls(s.result), s.tokens))
    entries.setdefault(chosen.candidate.key, {"candidate": chosen.candidate.key, "accuracy": chosen.accuracy,
                                              "tokens": chosen.tokens, "current": False, "within_noise": True})
    entries[chosen.candidate.key]["selected"] = True
    log.front = sorted(entries.values(), key=lambda e: (-e["accuracy"], e["tokens"]))
    return chosen


def failed_calls(result: EvalResult) -> float:
    """Failed calls per task over a candidate's train episodes (the candidates compared ran the same tasks), to two
    decimals: a difference smaller than that is no difference."""
    return efficiency_cell(o.cost for o in result.outcomes)["failed_calls_per_task"]


async def select_smaller(
    run: OptimizeRun, outcome: SearchResult, baseline: Scored, current: Scored, train: Sequence[Task], log: RoundLog
) -> Scored:
    """A shrink's pick: the smallest of the round's accuracy-vs-tokens front (and the current best) whose train
    results are within the noise of the BASELINE's for every model (`stats.within_noise`, paired per task, at most
    `config.token_tolerance` standard errors below). Returns `current` when nothing smaller qualifies. Fills
    `log.front`."""
    members = {m.candidate.key: (m.candidate, m.accuracy, m.tokens) for m in outcome.front}
    members.setdefault(current.candidate.key, (current.candidate, current.accuracy, current.tokens))
    entries = {key: {"candidate": key, "accuracy": accuracy, "tokens": tokens, "current": key == current.candidate.key,
                     "within_noise": None, "selected": False} for key, (_, accuracy, tokens) in members.items()}
    chosen = current
    reference = outcomes_by_item(baseline.result)
    for key, (candidate, _, tokens) in sorted(members.items(), key=lambda item: (item[1][2], item[0])):
        if tokens >= current.tokens:
            break
        scored = await score(run, candidate, train)
        items = outcomes_by_item(scored.result)
        entries[key]["within_noise"] = all(
            within_noise(_of(reference, model), _of(items, model), run.config.token_tolerance)
            for model in run.model_ids)
        if entries[key]["within_noise"]:
            chosen = scored
            break
    entries[chosen.candidate.key]["selected"] = True
    log.front = sorted(entries.values(), key=lambda e: (e["tokens"], -e["accuracy"]))
    return chosen


def _of(items: dict[str, list[bool]], model: str) -> dict[str, list[bool]]:
    """The paired items of one model (`model/task` keys)."""
    return {key: runs for key, runs in items.items() if key.startswith(f"{model}/")}


async def propose_cached(
    run: OptimizeRun, proposer: Proposer, current: Candidate, evidence: Evidence, *, k: int, seed: int
) -> tuple[list[Candidate], dict[str, Any]]:
    """The proposer's candidates for this input, asked once per run: a resumed or re-run optimization reads them
    from the store (a model proposer is neither free nor deterministic). A proposer that is unavailable gives no
    candidates this round, with the error in the report; an access error stops the run."""
    key = "proposals:" + digest({"proposer": proposer.name, "current": current.to_json(), "k": k, "seed": seed,
                                 "evidence": evidence.text})[:24]
    stored = run.store.get_meta(key)
    if stored is not None:
        return [overlay_from_json(c) for c in stored["candidates"]], stored["report"]
    if run.budget is not None:
        run.budget.check(proposer.name)
    try:
        proposals = await proposer.propose(run.catalog, current, evidence, k=k, seed=seed)
    except ModelUnavailable as exc:
        return [], {"error": f"the proposer failed: {exc}"}
    report = proposer.last_report()
    if run.budget is not None:
        run.budget.add(proposer.name, report.get("usage") or {})
    rationales = {c.key: proposer.rationale(c.key) for c in proposals}
    report["rationales"] = {key: text for key, text in rationales.items() if text is not None}
    run.store.set_meta(key, {"candidates": [c.to_json() for c in proposals], "report": report})
    return list(proposals), report


def make_objective(run: OptimizeRun, train: Sequence[Task]) -> Callable[[Candidate, int], Awaitable[ChunkScore]]:
    """The search objective: a candidate's aggregated accuracy on train chunks 0..i, and its tokens."""
    chunks = chunked(train, run.config.chunks)

    async def objective(candidate: Candidate, chunk: int) -> ChunkScore:
        start = run.episodes["run"]
        tasks = chunks[min(chunk, len(chunks) - 1)]
        result = await run.evaluate(candidate, tasks)
        return ChunkScore(accuracy=aggregate(result, run.model_ids, run.config.objective), failed=failed_calls(result),
                          tokens=definition_tokens(run.catalog, candidate),
                          episodes=run.episodes["run"] - start, fraction=len(tasks) / len(train))

    return objective


def smallest_mix(catalog: Catalog, current: Candidate, accepted: Sequence[Candidate]) -> Candidate | None:
    """The candidate that takes, of every tool's edits in the pool of `current` and `accepted`, the one whose
    definition costs the fewest tokens, under `current`'s scheme; None when that is `current` or one of `accepted`."""
    pool = pool_from(current, accepted)

    def size(tool: str, edit: ToolEdit) -> int:  # the tool alone: one tool's definition does not read the others
        alone = Catalog(catalog.server_name, (catalog.get(tool),))
        return tokens_per_tool(alone, Candidate(edits={} if edit.empty else {tool: edit}, scheme=current.scheme,
                                                word=pool.word))[tool]

    mix = candidate_from(pool, smallest_choice(pool, size), current.scheme)
    return None if mix.key in {current.key, *(c.key for c in accepted)} else mix


async def search_round(
    run: OptimizeRun, number: int, best: Scored, accepted: Sequence[Candidate], train: Sequence[Task],
    log: RoundLog,
) -> SearchResult:
    """Round `number`'s optuna study over the pool made of `best` and the accepted candidates (for a shrink, also
    `best`'s texts with lean schemas, so that every tool can keep its text and lose its schema metadata, and then
    the smallest mix of them all: `smallest_mix`); fills `log`."""
    config = run.config
    chunks = chunked(train, config.chunks)
    before = run.episodes["run"]
    storage = config.storage or f"sqlite:///{run.store.dir / 'run.db'}"
    context = {"runs_dir": str(run.store.dir.parent.resolve()), "run_id": run.store.run_id}
    if config.goal == "shrink":
        lean = leaned(run.catalog, best.candidate)
        if lean.key not in {best.candidate.key, *(c.key for c in accepted)}:
            accepted, log.lean_only = [*accepted, lean], lean.key
        mix = smallest_mix(run.catalog, best.candidate, accepted)
        if mix is not None:
            accepted, log.smallest_mix = [*accepted, mix], mix.key
    outcome = await search(pool_from(best.candidate, accepted), accepted, make_objective(run, train),
                           SearchConfig(trials=config.trials, chunks=len(chunks), seed=config.seed,
                                        pareto=config.pareto or config.goal == "shrink", storage=storage,
                                        context=context,
                                        study_name=f"optimize-{run.store.run_id}", round=number))
    log.trials = len(outcome.trials)
    log.pruned = sum(not t.complete for t in outcome.trials)
    log.best_accuracy = outcome.best.accuracy
    log.schemes = sorted({t.candidate.scheme for t in outcome.trials})
    for trial in (t for t in outcome.trials if t.complete):
        scheme = trial.candidate.scheme
        log.scheme_accuracy[scheme] = max(log.scheme_accuracy.get(scheme, 0.0), trial.accuracy)
    log.episodes = run.episodes["run"] - before
    return outcome
