"""The optimization rounds: baseline → (propose → screen → search → select)* → held-out → gate → outputs.

Contracts:
- Proposers see evidence from TRAIN episodes only; held-out tasks are evaluated only for the
  baseline and the final winner, after the search has finished.
- Every episode goes through the run's store, so a resumed or re-run run repeats no finished episode;
  proposals are stored too, so it asks the proposer nothing it asked before.
- Candidates that break lint errors the original did not, that fail to apply, or that copy literal
  values or distinctive phrases from train prompts (unless `allow_leakage`) never reach an eval;
  they are listed in the summary with the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from optimizer.definitions import Candidate, Catalog, DefinitionError, apply, canonical_json, digest
from optimizer.evaluate import EvalResult, EvalSettings, Progress, evaluate
from optimizer.gate import ModelVerdict, judge
from optimizer.judge import make_judge
from optimizer.models.base import ModelUnavailable
from optimizer.patch import overlay_from_json
from optimizer.propose.base import Proposer
from optimizer.run import EvalConfig, OpenRun, RunError, episode_config, open_run
from optimizer.search import ChunkScore, SearchConfig, SearchResult, pool_from, search
from optimizer.tasks import Task
from optimizer.text import estimate_tokens

Notice = Callable[[str], None]


class OptimizeConfig(EvalConfig):
    """Settings of one optimization run (everything `eval` takes, plus the search)."""

    rounds: int = Field(2, ge=1, description="Rounds of propose and search.")
    trials: int = Field(12, ge=1, description="Optuna trials per round (whole proposals first).")
    candidates: int = Field(4, ge=1, description="Candidates the proposer writes per round.")
    chunks: int = Field(3, ge=1, description="Growing chunks of train tasks; hopeless trials stop early.")
    max_episodes: int | None = Field(None, ge=1, description="Stop proposing once this many episodes ran.")
    objective: Literal["mean", "min"] = Field("mean", description="Train accuracy over models: mean or worst.")
    pareto: bool = Field(False, description="Accuracy against definition tokens as two objectives.")
    max_drop: float = Field(0.0, ge=0, le=1, description="Largest held-out accuracy drop the gate allows.")
    alpha: float = Field(0.05, gt=0, lt=1, description="Significance level of the gate.")
    evidence_tokens: int = Field(12_000, ge=500, description="Token budget of the proposer's evidence.")
    proposer: str = Field("rules", description="rules (offline) or a Claude model name.")
    allow_leakage: bool = Field(False, description="Keep candidates that copy text from train prompts.")
    storage: str | None = Field(None, description="Optuna storage URL; default the run's SQLite file.")
    source: str | None = Field(None, description="Server source directory: also write source.patch.")


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
    episodes: int = 0
    proposer: dict[str, Any] = field(default_factory=dict)
    """What the proposer reported (requested, received, repaired, dropped, rejected, rationales, error)."""


@dataclass
class Outcome:
    """Everything the outputs are made from."""

    run: OpenRun
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


def definition_tokens(catalog: Catalog, candidate: Candidate) -> int:
    """Estimated tokens of the exposed definitions (what every request pays for the tools)."""
    return sum(estimate_tokens(canonical_json(t.canonical())) for t in apply(catalog, candidate).tools)


class Evaluator:
    """Evaluates candidates on task lists through the run's store, counting episodes."""

    def __init__(self, run: OpenRun, progress: Progress | None) -> None:
        self.run = run
        self.progress = progress
        self.episodes = {"run": 0, "cached": 0, "infra_errors": 0}
        self.settings = EvalSettings(epochs=1, seed=run.config.seed, max_connections=run.config.max_connections,
                                     episode=episode_config(run), judge=make_judge(run.config, run))

    async def __call__(self, candidate: Candidate, tasks: Sequence[Task], epochs: int = 1) -> EvalResult:
        settings = EvalSettings(epochs=epochs, seed=self.settings.seed,
                                max_connections=self.settings.max_connections, episode=self.settings.episode,
                                judge=self.settings.judge)
        result = await evaluate(pool=self.run.pool, store=self.run.store, catalog=self.run.catalog,
                                candidate=candidate, tasks=tasks, models=self.run.models, settings=settings,
                                progress=self.progress)
        for key in self.episodes:
            self.episodes[key] += getattr(result, key)
        return result


def aggregate(result: EvalResult, models: Sequence[str], how: str) -> float:
    """Train accuracy over models: the mean of per-model accuracies, or the worst one."""
    per_model = []
    for model in models:
        outcomes = [o.passed for o in result.outcomes if o.model == model]
        per_model.append(sum(outcomes) / len(outcomes) if outcomes else 0.0)
    if not per_model:
        return 0.0
    return min(per_model) if how == "min" else sum(per_model) / len(per_model)


def chunked(tasks: Sequence[Task], chunks: int) -> list[list[Task]]:
    """Cumulative prefixes of the train tasks: chunk i holds the first (i+1)/chunks of them."""
    n = len(tasks)
    ends = sorted({max(1, round(n * (i + 1) / chunks)) for i in range(chunks)})
    return [list(tasks[:end]) for end in ends]


async def _score(evaluator: Evaluator, candidate: Candidate, tasks: Sequence[Task]) -> Scored:
    run = evaluator.run
    result = await evaluator(candidate, tasks)
    models = [m.id for m in run.models]
    return Scored(candidate, aggregate(result, models, run.config.objective),  # type: ignore[attr-defined]
                  definition_tokens(run.catalog, candidate), result)


def _better(new: float, new_tokens: int, old: Scored) -> bool:
    return new > old.accuracy + 1e-12 or (abs(new - old.accuracy) <= 1e-12 and new_tokens < old.tokens)


async def _round(
    number: int, evaluator: Evaluator, proposer: Proposer, best: Scored, train: Sequence[Task],
    screen: Callable[[Sequence[Candidate]], tuple[list[Candidate], list[dict[str, str]]]],
    evidence_for: Callable[[Scored], Any],
) -> tuple[RoundLog, SearchResult | None]:
    run = evaluator.run
    config: OptimizeConfig = run.config  # type: ignore[assignment]
    proposals, report = await propose_cached(run, proposer, best.candidate, evidence_for(best),
                                             k=config.candidates, seed=config.seed + number)
    accepted, rejected = screen(proposals)
    log = RoundLog(round=number, proposed=len(proposals), rejected=rejected, proposer=report)
    if not accepted:
        return log, None
    chunks = chunked(train, config.chunks)
    before = dict(evaluator.episodes)
    storage = config.storage or f"sqlite:///{run.store.dir / 'run.db'}"
    context = {"runs_dir": str(run.store.dir.parent.resolve()), "run_id": run.store.run_id}
    outcome = await search(pool_from(best.candidate, accepted), accepted, make_objective(evaluator, train),
                           SearchConfig(trials=config.trials, chunks=len(chunks), seed=config.seed,
                                        pareto=config.pareto, storage=storage, context=context,
                                        study_name=f"optimize-{run.store.run_id}", round=number))
    log.trials = len(outcome.trials)
    log.pruned = sum(not t.complete for t in outcome.trials)
    log.best_accuracy = outcome.best.accuracy
    log.schemes = sorted({t.candidate.scheme for t in outcome.trials})
    log.episodes = evaluator.episodes["run"] - before["run"]
    return log, outcome


async def propose_cached(
    run: OpenRun, proposer: Proposer, current: Candidate, evidence: Any, *, k: int, seed: int
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
    stats = getattr(proposer, "stats", None)
    report: dict[str, Any] = stats.to_json() if stats is not None else {}
    if run.budget is not None:
        run.budget.add(proposer.name, report.get("usage") or {})
    rationales = getattr(proposer, "rationales", {})
    report["rationales"] = {c.key: rationales[c.key] for c in proposals if c.key in rationales}
    run.store.set_meta(key, {"candidates": [c.to_json() for c in proposals], "report": report})
    return proposals, report


def make_objective(evaluator: Evaluator, train: Sequence[Task]) -> Callable[[Candidate, int], Any]:
    """The search objective: a candidate's aggregated accuracy on train chunks 0..i, and its tokens."""
    run = evaluator.run
    config: OptimizeConfig = run.config  # type: ignore[assignment]
    chunks = chunked(train, config.chunks)
    models = [m.id for m in run.models]

    async def objective(candidate: Candidate, chunk: int) -> ChunkScore:
        start = evaluator.episodes["run"]
        tasks = chunks[min(chunk, len(chunks) - 1)]
        result = await evaluator(candidate, tasks)
        return ChunkScore(accuracy=aggregate(result, models, config.objective),
                          tokens=definition_tokens(run.catalog, candidate),
                          episodes=evaluator.episodes["run"] - start, fraction=len(tasks) / len(train))

    return objective


def _stop_reason(best: Scored, config: OptimizeConfig, evaluator: Evaluator) -> str | None:
    if best.accuracy >= 1.0 - 1e-12:
        return "train accuracy reached 100%"
    if config.max_episodes is not None and evaluator.episodes["run"] >= config.max_episodes:
        return f"episode budget of {config.max_episodes} reached"
    return None


async def optimize(
    run: OpenRun, proposer: Proposer, *, screen: Callable[..., Any], evidence_for: Callable[[Scored], Any],
    progress: Progress | None = None,
) -> Outcome:
    """Run the rounds on an open run and judge the winner on held-out tasks."""
    config: OptimizeConfig = run.config  # type: ignore[assignment]
    train, heldout = run.taskset.split("train"), run.taskset.split("heldout")
    if not train:
        raise RunError("no train tasks: lower --heldout, or mark fewer tasks `split: heldout`")
    evaluator = Evaluator(run, progress)
    baseline = best = await _score(evaluator, run.candidate, train)
    rounds: list[RoundLog] = []
    stop = None
    for number in range(1, config.rounds + 1):
        stop = _stop_reason(best, config, evaluator)
        if stop:
            break
        log, outcome = await _round(number, evaluator, proposer, best, train, screen, evidence_for)
        rounds.append(log)
        if outcome is None:
            stop = log.proposer.get("error") or "no valid candidates were proposed"
            break
        top = outcome.best
        if top.complete and _better(top.accuracy, top.tokens, best):
            best = await _score(evaluator, top.candidate, train)
            log.improved = True
        else:
            stop = "no improvement in the last round"
            break
    stop = stop or _stop_reason(best, config, evaluator) or f"{config.rounds} round(s) done"
    before = await evaluator(baseline.candidate, heldout, epochs=config.epochs)
    after = await evaluator(best.candidate, heldout, epochs=config.epochs)
    passed, verdicts = judge([m.id for m in run.models], before.episodes, after.episodes,
                             max_drop=config.max_drop, alpha=config.alpha, seed=config.seed)
    return Outcome(run, config, baseline, best, before, after, passed, verdicts, rounds, stop,
                   dict(evaluator.episodes))


def open_optimize_run(
    config: OptimizeConfig | None, *, runs_dir: Path, run_id: str | None, resume: str | None,
    overrides: dict[str, Any] | None = None,
) -> Any:
    return open_run(config, runs_dir=runs_dir, run_id=run_id, resume=resume, config_type=OptimizeConfig,
                    overrides=overrides)


def check_candidate(catalog: Catalog, candidate: Candidate) -> str | None:
    """Why a candidate cannot be used as it is, or None."""
    try:
        apply(catalog, candidate)
    except DefinitionError as exc:
        return str(exc)
    return None
