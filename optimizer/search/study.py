"""The optuna study over one round's candidate pool. The only module that imports optuna.

Contracts:
- One study per round, named `f"{config.study_name}-r{config.round}"`, in `config.storage`; a second `search` call
  with the same storage and name continues the study (resume) until it holds `config.trials` finished trials.
- Parameters are named per round with fixed choices: `r{round}/{tool}` is an index into `pool.edits[tool]` (only for
  tools with more than one edit; index 0, the current edit, is used otherwise) and `r{round}/scheme` the namespace
  scheme (only when the pool has more than one). A study refuses a different pool under the same name.
- Whole proposals are evaluated first, in order (enqueued trials); then the sampler mixes per-tool edits and schemes.
- The objective is awaited at most once per (candidate key, chunk) within a search; a repeated candidate reuses the
  earlier scores (0 episodes) and is still told to the study.
- Every trial carries user attributes `candidate` (the overlay JSON, read back with `trial_candidate`), `key` and
  `score` ({accuracy, tokens, chunks_run, by_chunk: [[chunk, accuracy, fraction], ...]}), so results survive a
  restart and reports need nothing but the storage.
- Same seed, same pool and same objective values give the same sequence of candidates in a fresh study, and in a
  study resumed after a crash or kill: the sampler is reseeded from (seed, finished trials) before every ask, trials
  left RUNNING by a dead process on this host are failed, and the proposals not yet evaluated are queued again in
  their order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, cast

import optuna
from optuna.storages import BaseStorage
from optuna.study import Study
from optuna.trial import FrozenTrial, Trial, TrialState

from optimizer.definitions import Candidate, Scheme
from optimizer.files.patch import overlay_from_json
from optimizer.search.pool import Pool, candidate_from, choice_of, pool_from_json, pool_to_json
from optimizer.search.storage import MEMORY_STORAGE, StorageOpenError, close_storage, open_storage, quiet
from optimizer.search.trial_owner import abandoned_on_error, orphaned, owner, unclaimed_wait

optuna.logging.set_verbosity(optuna.logging.WARNING)  # the core does not print; callers report progress

TOKEN_TIE_BREAK = 1e-9
"""Per definition token, subtracted from accuracy in the single-objective value so the sampler prefers shorter
definitions among equally accurate ones. `SearchResult.best` compares (accuracy, tokens) exactly instead."""
_EPS = 1e-9
_FINISHED = (TrialState.COMPLETE, TrialState.PRUNED)


class SearchError(ValueError):
    """A study that cannot be used as asked (a different pool under the same name, no such study, …)."""


def tool_param(round_: int, tool: str) -> str:
    """The study parameter of a tool's edit index (`r2/get_customer`; a tool named `scheme` gets `r2/tool:scheme`
    so it cannot collide with the scheme parameter)."""
    return f"r{round_}/{tool}" if tool != "scheme" else f"r{round_}/tool:scheme"


def scheme_param(round_: int) -> str:
    return f"r{round_}/scheme"


@dataclass(frozen=True)
class ChunkScore:
    """A candidate's score on train chunks 0..i (cumulative), already aggregated over models."""

    accuracy: float
    tokens: int
    """definition tokens of the candidate"""
    episodes: int
    """episodes this call actually ran (0 when cached)"""
    fraction: float | None = None
    """share of all train results (tasks x models x epochs) this score covers; None means (i + 1) / chunks"""
    failed: float = 0.0
    """failed calls per result over the results this score covers: equal accuracy, fewer failed calls wins"""


Objective = Callable[[Candidate, int], Awaitable[ChunkScore]]
"""(candidate, chunk index) -> score on chunks 0..chunk; the last index covers every train task."""


@dataclass(frozen=True)
class SearchConfig:
    trials: int = 12
    """finished (complete or pruned) trials the study should hold, proposals included"""
    chunks: int = 3
    """evaluate on growing chunks of the train tasks; prune trials that can no longer win"""
    seed: int = 0
    pareto: bool = False
    """accuracy (max) vs definition tokens (min) as two objectives, no pruning; report the front"""
    storage: str = MEMORY_STORAGE
    """the loop passes sqlite:///runs/<id>/run.db; any SQLAlchemy URL works for many workers"""
    study_name: str = "optimize"
    round: int = 1
    context: Mapping[str, Any] | None = None
    """JSON stored with the study so that `optimizer worker` processes can rebuild the objective"""

    @property
    def round_study_name(self) -> str:
        """The study this round uses (what `load_trials` wants)."""
        return f"{self.study_name}-r{self.round}"


@dataclass(frozen=True)
class TrialResult:
    number: int
    candidate: Candidate
    accuracy: float
    """cumulative accuracy over the chunks run (all train tasks when complete)"""
    tokens: int
    complete: bool
    """False for a pruned trial"""
    chunks_run: int
    failed: float = 0.0
    """failed calls per result over the chunks run"""


@dataclass(frozen=True)
class SearchResult:
    trials: tuple[TrialResult, ...]
    """every finished trial of the study, by number (earlier calls and other workers included)"""
    best: TrialResult
    """highest accuracy among complete trials; ties: fewer failed calls, then fewer tokens, then the earlier trial"""
    front: tuple[TrialResult, ...]
    """complete trials no other complete trial beats on both accuracy and tokens, one per candidate, best first"""
    episodes: int
    """episodes run by this call (sum of ChunkScore.episodes)"""


class BoundPruner(optuna.pruners.BasePruner):
    """Prune a trial only when it cannot beat the best complete trial even if it passes every remaining task.

    After chunk i the candidate's best possible final accuracy is `acc_i * f + (1 - f)`, f the share of results
    covered so far. Pruning when that bound is below the best complete accuracy (or equal, when the failed calls
    already made, `failed_i * f`, cannot end below the best's, and it has no fewer tokens to win on) never discards
    a candidate that could have won, so pruning changes the cost of a search, not its winner; a
    median rule would, with ~30 tasks per chunk, drop slow starters on noise. Reads scores from the study, so it
    works across workers sharing a storage.
    """

    def prune(self, study: Study, trial: FrozenTrial) -> bool:
        score = trial.user_attrs.get("score")
        best = _best_score(study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)))
        if not score or best is None:
            return False
        _, accuracy, fraction = score["by_chunk"][-1]
        bound = accuracy * fraction + (1.0 - fraction)
        best_accuracy, best_failed, best_tokens = best
        if bound < best_accuracy - _EPS:
            return True
        if bound > best_accuracy + _EPS:
            return False
        floor = float(score.get("failed", 0.0)) * fraction  # the failed calls per result it ends with, at least
        tokens: int = score["tokens"]
        return floor > best_failed + _EPS or (floor >= best_failed - _EPS and tokens >= best_tokens)


def _best_score(trials: Sequence[FrozenTrial]) -> tuple[float, float, int] | None:
    """(accuracy, failed calls per result, tokens) of the best complete trial, as `SearchResult.best` ranks them."""
    scores = [(s["accuracy"], float(s.get("failed", 0.0)), s["tokens"]) for s in
              (t.user_attrs.get("score") for t in trials) if s]
    return max(scores, key=lambda s: (s[0], -s[1], -s[2]), default=None)


def _storage(url: str) -> BaseStorage:
    """The storage behind a URL; raises SearchError saying why it cannot be opened."""
    try:
        return open_storage(url)
    except StorageOpenError as exc:
        raise SearchError(str(exc)) from exc.__cause__  # store.no_room reads the cause


def check_storage(url: str) -> None:
    """Open and close the storage (made if missing, as a search would); raises SearchError when it cannot be."""
    close_storage(_storage(url))


def _sampler(config: SearchConfig, finished: int) -> optuna.samplers.BaseSampler:
    """The sampler for the trial asked after `finished` finished trials. A fresh, seeded sampler per ask makes each
    suggestion a function of the seed and the study's history only, not of how many asks this process made."""
    seed = (config.seed * 1_000_003 + finished) % 2**32
    if config.pareto:
        return optuna.samplers.NSGAIISampler(seed=seed, population_size=max(4, config.trials // 3))
    # Startup trials are random; a third of the budget (proposals count) leaves most trials to the model.
    return optuna.samplers.TPESampler(seed=seed, n_startup_trials=max(2, min(10, config.trials // 3)))


def _open_study(pool: Pool, config: SearchConfig, storage: BaseStorage) -> Study:
    directions: list[Literal["maximize", "minimize"]] = ["maximize", "minimize"] if config.pareto else ["maximize"]
    with quiet():
        study = optuna.create_study(storage=storage, study_name=config.round_study_name, load_if_exists=True,
                                    directions=directions, sampler=_sampler(config, 0), pruner=BoundPruner())
        fingerprint = f"{pool.fingerprint}/{'pareto' if config.pareto else 'single'}/{config.chunks}"
        stored = study.user_attrs.get("pool")
        if stored is None:
            study.set_user_attr("pool", fingerprint)
            study.set_user_attr("pool_json", pool_to_json(pool))
            study.set_user_attr("settings", {"trials": config.trials, "chunks": config.chunks, "seed": config.seed,
                                             "pareto": config.pareto, "round": config.round,
                                             "study_name": config.study_name})
            if config.context is not None:
                study.set_user_attr("context", dict(config.context))
        elif stored != fingerprint:
            raise SearchError(f"study {config.round_study_name!r} in {config.storage} was made for a different pool, "
                              "objective or number of chunks; use another round or study name")
    return study


class _Run:
    """One `search` call: memo of (candidate key, chunk) -> score, episode count, the trial driver."""

    def __init__(self, pool: Pool, objective: Objective, config: SearchConfig, study: Study) -> None:
        self.pool, self.objective, self.config, self.study = pool, objective, config, study
        self.episodes = 0
        self.memo: dict[tuple[str, int], ChunkScore] = {}
        for trial in study.get_trials(deepcopy=False, states=_FINISHED):
            score: dict[str, Any] = trial.user_attrs.get("score") or {}
            failed = dict(score.get("failed_by_chunk", []))
            for chunk, accuracy, fraction in score.get("by_chunk", []):
                self.memo[(trial.user_attrs["key"], chunk)] = ChunkScore(accuracy, score["tokens"], 0, fraction,
                                                                         failed.get(chunk, 0.0))

    def finished(self) -> int:
        return len(self.study.get_trials(deepcopy=False, states=_FINISHED))

    async def fail_orphans(self) -> int:
        """Fail the trials a process on this host left RUNNING when it died (`trial_owner`); return how many."""
        failed = 0
        where = (self.config.storage, self.study.study_name)
        for trial in self.study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
            wait = unclaimed_wait(trial, where)
            if wait:
                await asyncio.sleep(wait)
                trial = next(t for t in self.study.get_trials(deepcopy=False) if t.number == trial.number)
            if orphaned(trial, where):
                with quiet():
                    self.study.tell(trial.number, state=TrialState.FAIL, skip_if_finished=True)
                failed += 1
        return failed

    def enqueue(self, proposals: Sequence[Candidate]) -> None:
        """Queue the proposals not yet evaluated, in their order, within the remaining budget. A queue left in
        another order (a proposal that failed or was orphaned, then re-queued) is failed and queued again."""
        done = {key for key, _ in self.memo}
        running = [t.system_attrs.get("fixed_params", t.params)
                   for t in self.study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))]
        budget = self.config.trials - self.finished() - len(running)
        wanted: list[tuple[int, dict[str, Any]]] = []
        for index, proposal in enumerate(proposals):
            params = self._params(proposal)
            if len(wanted) < budget and proposal.key not in done and params not in running \
                    and params not in (w for _, w in wanted):
                wanted.append((index, params))
        queued = self.study.get_trials(deepcopy=False, states=(TrialState.WAITING,))
        if [t.system_attrs.get("fixed_params", t.params) for t in queued] == [w for _, w in wanted][:len(queued)]:
            wanted = wanted[len(queued):]
        else:
            for _ in queued:  # ask pops the queue in order; nothing is suggested, so nothing is sampled
                with quiet():
                    self.study.tell(self.study.ask(), state=TrialState.FAIL)
        for index, params in wanted:
            with quiet():
                self.study.enqueue_trial(params, user_attrs={"proposal": index})

    def _params(self, candidate: Candidate) -> dict[str, Any]:
        choice, scheme = choice_of(self.pool, candidate)
        params: dict[str, Any] = {tool_param(self.config.round, tool): choice[tool]
                                  for tool, options in self.pool.edits.items() if len(options) > 1}
        if len(self.pool.schemes) > 1:
            params[scheme_param(self.config.round)] = scheme
        return params

    def _suggest(self, trial: Trial) -> Candidate:
        choice = {tool: trial.suggest_categorical(tool_param(self.config.round, tool), list(range(len(options))))
                  for tool, options in self.pool.edits.items() if len(options) > 1}
        scheme = self.pool.schemes[0]
        if len(self.pool.schemes) > 1:
            # optuna returns one of the choices, so one of the pool's schemes.
            scheme = cast(Scheme, trial.suggest_categorical(scheme_param(self.config.round), list(self.pool.schemes)))
        return candidate_from(self.pool, choice, scheme)

    async def _score(self, candidate: Candidate, chunk: int) -> ChunkScore:
        cached = self.memo.get((candidate.key, chunk))
        if cached is not None:
            return replace(cached, episodes=0)
        score = await self.objective(candidate, chunk)
        if score.fraction is None:
            score = replace(score, fraction=(chunk + 1) / self.config.chunks)
        self.memo[(candidate.key, chunk)] = score
        self.episodes += score.episodes
        return score

    async def trial(self) -> None:
        """Ask, evaluate chunk by chunk (only the last chunk with pareto), tell. A failing objective marks the
        trial FAIL and the exception propagates."""
        with quiet():
            self.study.sampler = _sampler(self.config, self.finished())
            trial = self.study.ask()
            with abandoned_on_error((self.config.storage, self.study.study_name), trial.number):
                trial.set_user_attr("owner", owner())
            candidate = self._suggest(trial)
            trial.set_user_attr("candidate", candidate.to_json())
            trial.set_user_attr("key", candidate.key)
        last = self.config.chunks - 1
        by_chunk: list[list[float]] = []
        failed_by_chunk: list[list[float]] = []
        spent = 0
        try:
            for chunk in [last] if self.config.pareto else range(self.config.chunks):
                score = await self._score(candidate, chunk)
                spent += score.episodes
                by_chunk.append([chunk, score.accuracy, score.fraction or 1.0])
                failed_by_chunk.append([chunk, score.failed])
                with quiet():
                    trial.set_user_attr("score", {"accuracy": score.accuracy, "tokens": score.tokens,
                                                  "failed": score.failed, "chunks_run": chunk + 1,
                                                  "by_chunk": by_chunk, "failed_by_chunk": failed_by_chunk})
                    trial.set_user_attr("episodes", spent)
                    if self.config.pareto:
                        self.study.tell(trial, [score.accuracy, score.tokens])
                        return
                    trial.report(score.accuracy, chunk)
                    replay = (candidate.key, last) in self.memo  # a repeat of a complete candidate stays complete
                    if chunk < last and not replay and trial.should_prune():
                        self.study.tell(trial, state=TrialState.PRUNED)
                        return
            with quiet():
                self.study.tell(trial, score.accuracy - score.tokens * TOKEN_TIE_BREAK)
        except BaseException:
            with quiet():
                self.study.tell(trial, state=TrialState.FAIL, skip_if_finished=True)
            raise


async def search(pool: Pool, proposals: Sequence[Candidate], objective: Objective, config: SearchConfig
                 ) -> SearchResult:
    """Run (or continue) this round's study until it holds `config.trials` finished trials; see the module
    docstring for the contracts. Proposals must lie inside the pool (`pool_from` makes sure); raises ValueError
    otherwise, and SearchError when the stored study belongs to another pool."""
    if config.trials < 1 or config.chunks < 1:
        raise ValueError("search needs at least one trial and one chunk")
    storage = _storage(config.storage)
    try:
        study = _open_study(pool, config, storage)
        run = _Run(pool, objective, config, study)
        await run.fail_orphans()
        run.enqueue(proposals)
        while run.finished() < config.trials:
            await run.trial()
        return _result(study, run.episodes)
    finally:
        close_storage(storage)


def _result(study: Study, episodes: int) -> SearchResult:
    results = tuple(_trial_result(t) for t in study.get_trials(deepcopy=False, states=_FINISHED))
    ranked = _ranked(results, episodes)
    if ranked is None:
        raise SearchError("the study has no complete trial")
    return ranked


def without(result: SearchResult, keys: set[str]) -> SearchResult | None:
    """`result` less the trials of the candidates with these keys, its best and front taken again from the rest;
    None when no complete trial is left."""
    if not keys:
        return result
    return _ranked(tuple(t for t in result.trials if t.candidate.key not in keys), result.episodes)


def _ranked(trials: tuple[TrialResult, ...], episodes: int) -> SearchResult | None:
    complete = [t for t in trials if t.complete]
    if not complete:
        return None
    best = max(complete, key=lambda r: (r.accuracy, -r.failed, -r.tokens, -r.number))
    return SearchResult(trials=trials, best=best, front=pareto_front(complete), episodes=episodes)


def _trial_result(trial: FrozenTrial) -> TrialResult:
    score = trial.user_attrs["score"]
    return TrialResult(number=trial.number, candidate=overlay_from_json(trial.user_attrs["candidate"]),
                       accuracy=score["accuracy"], tokens=score["tokens"],
                       complete=trial.state == TrialState.COMPLETE, chunks_run=score["chunks_run"],
                       failed=score.get("failed", 0.0))


def pareto_front(results: Sequence[TrialResult]) -> tuple[TrialResult, ...]:
    """Results no other result beats on both accuracy (higher) and tokens (fewer), one per candidate key (the
    earliest), sorted best first. With pareto this is the study's `best_trials`, deduplicated."""
    front: dict[str, TrialResult] = {}
    for r in sorted(results, key=lambda r: (-r.accuracy, r.tokens, r.number)):
        dominated = any(o.accuracy >= r.accuracy and o.tokens <= r.tokens
                        and (o.accuracy > r.accuracy or o.tokens < r.tokens) for o in results)
        if not dominated:
            front.setdefault(r.candidate.key, r)
    return tuple(front.values())


def study_setup(storage: str, study_name: str) -> tuple[Pool, SearchConfig]:
    """The pool and settings a round's study was made with (for `optimizer worker`); the settings carry the
    context the loop stored. Raises SearchError when there is no such study or it was not made by a search."""
    backend = _storage(storage)
    try:
        with quiet():
            study = optuna.load_study(study_name=study_name, storage=backend)
        attrs = dict(study.user_attrs)
    except KeyError:
        raise SearchError(f"no study {study_name!r} in {storage}") from None
    finally:
        close_storage(backend)
    if "pool_json" not in attrs or "settings" not in attrs:
        raise SearchError(f"study {study_name!r} was not made by `optimize` (it has no stored pool)")
    settings = attrs["settings"]
    config = SearchConfig(trials=settings["trials"], chunks=settings["chunks"], seed=settings["seed"],
                          pareto=settings["pareto"], storage=storage, study_name=settings["study_name"],
                          round=settings["round"], context=attrs.get("context"))
    return pool_from_json(attrs["pool_json"]), config


def load_trials(storage: str, study_name: str) -> list[dict[str, Any]]:
    """Every trial of a stored study, by number: {number, state (e.g. "COMPLETE"), values (list or None), params,
    user_attrs}. Raises SearchError when the storage holds no such study."""
    backend = _storage(storage)
    try:
        with quiet():
            study = optuna.load_study(study_name=study_name, storage=backend)
        return [{"number": t.number, "state": t.state.name, "values": None if t.values is None else list(t.values),
                 "params": dict(t.params), "user_attrs": dict(t.user_attrs)}
                for t in study.get_trials(deepcopy=False)]
    except KeyError:
        raise SearchError(f"no study {study_name!r} in {storage}") from None
    finally:
        close_storage(backend)


def trial_candidate(row: Mapping[str, Any]) -> Candidate:
    """The candidate of a `load_trials` row."""
    return overlay_from_json(row["user_attrs"]["candidate"])
