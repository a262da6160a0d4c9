"""Evaluate one candidate: every (task, model, epoch) episode, cached, concurrent, retried on
infrastructure faults. Shared by `eval`, `optimize` and `regress`.

Contract: finished episodes are stored one transaction each as they complete; an episode already
in the store (same cache key) is never run again; episodes that end in an infrastructure fault
are retried up to `infra_retries` times and otherwise counted apart, never scored.

`match: judge` tasks: a completed episode's answer is graded by `settings.judge` (an object with
`async grade(question, expected, answer) -> JudgeVerdict`, normally the run's `JudgeCache`) before it
is stored; the reason lands in `data["verdict"]["judge"]`. A judge that raises `ModelUnavailable` makes
the episode an infrastructure fault (retried like the others), never a failed answer.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from optimizer.definitions import Candidate, Catalog, Exposed, apply, digest
from optimizer.files.store import RunStore, StoredEpisode, episode_key
from optimizer.judge import Grader, JudgeVerdict
from optimizer.models.base import AgentModel, Message, ModelUnavailable
from optimizer.run.context import ClientNaming, Context, client_names
from optimizer.run.episode import CallTool, Episode, EpisodeConfig, run_episode
from optimizer.scoring import choice_verdict, confusion, response_text, score
from optimizer.servers import ServerPool
from optimizer.servers.leases import Lease, Leases, may_change_state
from optimizer.stats.efficiency import EpisodeCost
from optimizer.tasks import Task
from optimizer.tool_search import SearchMode, ToolSearch

Progress = Callable[["Outcome"], None]


@dataclass(frozen=True)
class Outcome:
    """One scored (task, model, epoch) result, fresh or from the cache."""

    task_id: str
    model: str
    split: str
    epoch: int
    passed: bool
    cached: bool
    expected_first: str | None
    chosen_first: str | None
    cost: EpisodeCost = EpisodeCost()
    """What the episode paid on its way: calls, failed calls, turns, tokens, seconds (`efficiency.py`)."""
    found: bool | None = None
    """With a tool search: whether a search found (and so loaded) the expected first tool (None without one)."""
    called_expected: bool = False
    """Whether the expected first tool was called at all (first or later)."""


@dataclass
class EvalResult:
    candidate: str
    outcomes: list[Outcome] = field(default_factory=list)
    episodes: list[StoredEpisode] = field(default_factory=list)
    """Every scored episode of this evaluation, fresh or cached (cached ones may be stored under the
    key of another candidate with the same exposed definitions)."""
    run: int = 0
    cached: int = 0
    infra_errors: int = 0
    """episodes an infrastructure fault kept from being scored, after every retry"""
    infra_retried: int = 0
    """episodes an infrastructure fault (a server crash, an API that gave up) stopped at least once, then retried"""
    changed_state: int = 0
    """episodes run here that made a successful call to a tool that may change the server's state"""


@dataclass(frozen=True)
class EvalSettings:
    epochs: int = 1
    seed: int = 0
    max_connections: int = 4
    infra_retries: int = 2
    episode: EpisodeConfig = field(default_factory=EpisodeConfig)
    judge: Grader | None = None
    """Grades `match: judge` answers (see judge.py)."""
    tool_search: SearchMode = "off"
    """Defer every tool behind a search tool (see tool_search.py)."""
    isolate: bool = False
    """Restart the server after each episode that changed its state, which runs alone (see servers/leases.py)."""


@dataclass(frozen=True)
class _Job:
    task: Task
    model: AgentModel
    epoch: int
    key: str


async def evaluate(
    *,
    pool: ServerPool,
    store: RunStore,
    catalog: Catalog,
    candidate: Candidate,
    tasks: Sequence[Task],
    models: Sequence[AgentModel],
    settings: EvalSettings,
    progress: Progress | None = None,
    context: Context | None = None,
    naming: ClientNaming = "plain",
) -> EvalResult:
    """`context`: servers whose tools the agent sees beside the candidate's (their read-only tools run);
    `naming`: how the client names the tools it shows (see context.py)."""
    exposed = apply(catalog, candidate)
    leases = Leases(pool, [t.name for t in catalog.tools if may_change_state(t)], isolate=settings.isolate)

    def calls(lease: Lease) -> CallTool:
        return context.call(lease.call) if context else lease.call

    if context:
        exposed, _ = context.expose(exposed, naming, catalog.server_name)
    else:
        exposed = client_names(exposed, naming, catalog.server_name)
    search = ToolSearch(exposed, settings.tool_search) if settings.tool_search != "off" else None
    exposed_digest = exposed.digest if search is None else digest([exposed.digest, "tool-search", search.mode])
    result = EvalResult(candidate=candidate.key)
    jobs: list[_Job] = []
    task_digests = {task.id: task.digest() for task in tasks}
    for model in models:
        for task in tasks:
            for epoch in range(settings.epochs):
                key = episode_key(model=model.id, settings=model.settings, system_prompt=settings.episode.system_prompt,
                                  exposed_digest=exposed_digest, task_digest=task_digests[task.id], epoch=epoch)
                stored = store.get(key)
                if stored is not None:
                    result.cached += 1
                    result.episodes.append(stored)
                    _record(result, _outcome(stored, task, cached=True), progress)
                else:
                    jobs.append(_Job(task, model, epoch, key))
    turn_slot = asyncio.Semaphore(max(1, settings.max_connections))
    for attempt in range(settings.infra_retries + 1):
        if not jobs:
            break
        # Retries run one at a time, so an episode that crashes the server cannot take others with it.
        workers = max(1, settings.max_connections) * 2 if attempt == 0 else 1
        jobs = await _run_jobs(jobs, leases, calls, store, exposed, candidate, settings, turn_slot, result, progress,
                               workers, search)
        if attempt == 0:
            result.infra_retried = len(jobs)
    result.infra_errors = len(jobs)
    result.changed_state = leases.changed
    result.outcomes.sort(key=lambda o: (o.model, o.split, o.task_id, o.epoch))
    return result


async def _run_jobs(
    jobs: list[_Job], leases: Leases, calls: Callable[[Lease], CallTool], store: RunStore, exposed: Exposed,
    candidate: Candidate,
    settings: EvalSettings, turn_slot: asyncio.Semaphore, result: EvalResult, progress: Progress | None,
    workers: int, search: ToolSearch | None,
) -> list[_Job]:
    queue: asyncio.Queue[_Job] = asyncio.Queue()
    for job in jobs:
        queue.put_nowait(job)
    failed: list[_Job] = []

    async def worker() -> None:
        while not queue.empty():
            job = queue.get_nowait()
            async with leases.episode() as lease:
                episode = await run_episode(job.task, job.model, exposed, calls(lease), settings.episode,
                                            seed=_episode_seed(settings.seed, job), turn_slot=turn_slot, search=search)
            if episode.status == "infra_error":
                store.record_fault(job.key, job.model.id, job.task.id, episode.error or "infrastructure fault")
                failed.append(job)
                continue
            try:
                judged = await _judge(job, episode, settings.judge)
            except ModelUnavailable as exc:
                store.record_fault(job.key, job.model.id, job.task.id, f"judge: {exc}")
                failed.append(job)
                continue
            stored = _to_stored(job, episode, candidate, judged, exposed if search else None)
            store.put(stored)
            result.run += 1
            result.episodes.append(stored)
            _record(result, _outcome(stored, job.task, cached=False), progress)

    running = [asyncio.ensure_future(worker()) for _ in range(min(workers, len(jobs)))]
    try:
        await asyncio.gather(*running)
    except BaseException:  # a worker failed (the store cannot write, the budget is spent): stop the others with it
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        raise
    return failed


def _episode_seed(seed: int, job: _Job) -> int:
    text = f"{seed}:{job.model.id}:{job.task.id}:{job.epoch}"
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


async def _judge(job: _Job, episode: Episode, judge: Grader | None) -> JudgeVerdict | None:
    """The judge's verdict for a `match: judge` task (None for other tasks, or without a judge, so that `score`
    says what is missing); an episode that did not complete is not sent to the judge. Raises ModelUnavailable."""
    expect = job.task.expect
    if expect.match != "judge" or expect.answer is None or judge is None:
        return None
    if episode.status != "completed":
        return JudgeVerdict(False, "not graded: the episode ended before a final answer")
    return await judge.grade(job.task.prompt, expect.answer, response_text(episode.answer))


def _to_stored(job: _Job, episode: Episode, candidate: Candidate, judged: JudgeVerdict | None = None,
               searched: Exposed | None = None) -> StoredEpisode:
    if episode.reading is not None:
        verdict = choice_verdict(job.task.expect, episode.called_tools[0] if episode.called_tools else None)
    else:
        verdict = score(job.task.expect, episode.answer, episode.called_tools,
                        judge=None if judged is None else (lambda _expected, _text: judged.passed))
    passed = verdict.passed and episode.status == "completed"
    data: dict[str, Any] = {
        "prompt": job.task.prompt,
        "status": episode.status,
        "answer": episode.answer,
        "verdict": {"passed": passed, "checks": verdict.checks, "reason": verdict.reason
                    if episode.status == "completed" else f"ran out of turns; {verdict.reason}"},
        "expected_tools": list(job.task.expect.tools),
        "calls": [vars(c).copy() for c in episode.calls],
        "messages": [_message_json(m) for m in episode.messages],
        "usage": episode.usage.to_json(),
        "turns": episode.turns,
        "duration_s": round(episode.duration_s, 4),
        "model_seconds": round(episode.model_seconds, 4),
        **({"batch": True} if job.model.batch else {}),
    }
    if episode.reading is not None:  # a reader's top five, by original name
        data["reading"] = list(episode.reading)
    if searched is not None:  # what the agent's searches found, by original name
        data["searches"] = episode.searches
        data["search_found"] = sorted({searched.routing[n] for s in episode.searches for n in s["found"]})
    if judged is not None:
        data["verdict"]["judge"] = judged.reason
    return StoredEpisode(job.key, job.model.id, job.task.id, job.task.split, candidate.key, job.epoch,
                         episode.status, passed, data)


def _message_json(message: Message) -> dict[str, object]:
    out: dict[str, object] = {"role": message.role}
    if message.text:
        out["text"] = message.text
    if message.tool_calls:
        out["tool_calls"] = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls]
    if message.tool_results:
        out["tool_results"] = [{"call_id": r.call_id, "content": r.content, "is_error": r.is_error}
                               for r in message.tool_results]
    return out


def _outcome(stored: StoredEpisode, task: Task, *, cached: bool) -> Outcome:
    calls = stored.data.get("calls", [])
    first = (calls[0].get("original") or f"?{calls[0].get('name')}") if calls else None
    return Outcome(
        task_id=task.id, model=stored.model, split=task.split, epoch=stored.epoch, passed=stored.passed,
        cached=cached, expected_first=task.expect.tools[0] if task.expect.tools else None, chosen_first=first,
        cost=EpisodeCost.of(stored.data), found=_found(stored.data, task),
        called_expected=bool(task.expect.tools) and task.expect.tools[0] in {c.get("original") for c in calls},
    )


def _found(data: dict[str, Any], task: Task) -> bool | None:
    """Whether a search or a reader found the task's first expected tool (None for an agent without a search)."""
    found = data.get("reading", data.get("search_found"))
    if found is None:
        return None
    return bool(task.expect.tools) and task.expect.tools[0] in found


def _record(result: EvalResult, outcome: Outcome, progress: Progress | None) -> None:
    result.outcomes.append(outcome)
    if progress is not None:
        progress(outcome)


def first_tool_confusion(outcomes: Sequence[Outcome], model: str | None = None) -> dict[str, dict[str, int]]:
    """Expected first tool -> chosen first tool -> count, over the outcomes that expect a tool (of one model when
    `model` is given)."""
    return confusion((o.expected_first, o.chosen_first) for o in outcomes
                     if o.expected_first is not None and (model is None or o.model == model))


def search_recall(outcomes: Sequence[Outcome]) -> dict[str, dict[str, Any]]:
    """Per model, over episodes that expected a tool: how many found (and so loaded) it with a search, how many
    called it, of how many, and the share found (`recall`)."""
    out: dict[str, dict[str, Any]] = {}
    for o in outcomes:
        if o.found is None or o.expected_first is None:
            continue
        row = out.setdefault(o.model, {"found": 0, "called": 0, "n": 0})
        row["found"] += o.found
        row["called"] += o.called_expected
        row["n"] += 1
    for row in out.values():
        row["recall"] = round(row["found"] / row["n"], 4) if row["n"] else 0.0
    return out


def unfound_queries(episodes: Sequence[StoredEpisode], limit: int = 5) -> dict[str, list[str]]:
    """Per expected first tool, the distinct search queries (at most `limit`, in order) of episodes whose searches
    never found it: what a tool's description would have to answer to be findable."""
    out: dict[str, list[str]] = {}
    for ep in episodes:
        expected = (ep.data.get("expected_tools") or [None])[0]
        if "search_found" not in ep.data or not expected or expected in ep.data["search_found"]:
            continue
        queries = out.setdefault(expected, [])
        for search in ep.data.get("searches") or []:
            if search["query"] not in queries and len(queries) < limit:
                queries.append(search["query"])
    return dict(sorted(out.items()))
