"""The agent loop for one (task, model, candidate, epoch).

Contract: `run_episode` never raises for one task's failure. A model that answers wrongly, calls an
unknown tool or runs out of turns gives a completed episode that scores as failed; a server that
died or a provider that gave up gives an episode with status `infra_error`, which is never scored
against the model and is retried later in the run.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field
from typing import Any, Literal

from optimizer.definitions import Exposed
from optimizer.models.base import (
    AgentModel,
    Message,
    ModelAccessError,
    ModelUnavailable,
    ReplayMissing,
    ToolCall,
    ToolResult,
    Usage,
)
from optimizer.models.reader import TOP as READING_TOP
from optimizer.models.reader import ToolRanker
from optimizer.servers import CallOutcome, ServerCrashed
from optimizer.tasks import Task
from optimizer.tool_search import SEARCH_TOOL, ToolSearch

Status = Literal["completed", "max_turns", "infra_error"]
CallTool = Callable[[str, dict[str, Any]], Awaitable[CallOutcome]]


@dataclass(frozen=True)
class EpisodeConfig:
    system_prompt: str = ""
    max_turns: int = 12
    max_result_chars: int = 20_000
    blocked_tools: Collection[str] = ()
    """Original names of tools the agent may not call (destructive tools without --allow-destructive)."""


@dataclass
class CallRecord:
    id: str
    name: str
    original: str | None
    arguments: dict[str, Any]
    result: str
    is_error: bool
    duration_s: float
    truncated: bool = False


@dataclass
class Episode:
    task_id: str
    model: str
    status: Status = "completed"
    answer: str = ""
    calls: list[CallRecord] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    turns: int = 0
    duration_s: float = 0.0
    model_seconds: float = 0.0
    error: str | None = None
    searches: list[dict[str, Any]] = field(default_factory=list)
    """With a tool search: each search the agent ran, {"query", "found": [exposed names], "error"?}, in order."""
    loaded: list[str] = field(default_factory=list)
    """With a tool search: the exposed names loaded so far, in the order they were found."""
    reading: list[str] | None = None
    """A reader's episode (`optimizer.models.reader`): the original names of its top-ranked tools, best first; None
    for an agent."""

    @property
    def called_tools(self) -> list[str]:
        """Original names of the tools called, in order (unknown names left out)."""
        return [c.original for c in self.calls if c.original]

    @property
    def first_tool(self) -> str | None:
        return self.calls[0].original or f"?{self.calls[0].name}" if self.calls else None


async def run_episode(
    task: Task,
    model: AgentModel,
    exposed: Exposed,
    call_tool: CallTool,
    config: EpisodeConfig,
    *,
    seed: int = 0,
    turn_slot: asyncio.Semaphore | None = None,
    search: ToolSearch | None = None,
) -> Episode:
    """Run one task to an answer. `turn_slot` bounds concurrent model requests across episodes. With `search`, the
    agent sees only the search tool and the tools its searches loaded. A reader (`ToolRanker`) takes no turns: its
    episode is a reading of the exposed tools, and nothing is called."""
    episode = Episode(task_id=task.id, model=model.id, messages=[Message("user", task.prompt)])
    started = time.perf_counter()
    try:
        if isinstance(model, ToolRanker):
            _read(episode, model, exposed, task.prompt)
        else:
            await _loop(episode, model, exposed, call_tool, config, seed, turn_slot, search)
    except ReplayMissing as exc:
        raise ReplayMissing(f"task {task.id}: {exc}") from None
    except ModelAccessError:
        raise
    except (ServerCrashed, ModelUnavailable) as exc:
        episode.status, episode.error = "infra_error", f"{type(exc).__name__}: {exc}"
    except Exception as exc:  # noqa: BLE001 - a harness fault must not be scored as the model's
        episode.status, episode.error = "infra_error", f"unexpected {type(exc).__name__}: {exc}"
    episode.duration_s = time.perf_counter() - started
    return episode


async def _loop(
    episode: Episode,
    model: AgentModel,
    exposed: Exposed,
    call_tool: CallTool,
    config: EpisodeConfig,
    seed: int,
    turn_slot: asyncio.Semaphore | None,
    search: ToolSearch | None,
) -> None:
    server_side = search is not None and bool(getattr(model, "searches_tools", False))
    local = None if server_side else search  # a provider that searches itself is shown every tool, deferred
    for _ in range(config.max_turns):
        t0 = time.perf_counter()
        tools = local.visible(episode.loaded) if local else exposed.tools
        if turn_slot is None:
            turn = await model.turn(config.system_prompt, tools, episode.messages, seed=seed)
        else:
            async with turn_slot:
                turn = await model.turn(config.system_prompt, tools, episode.messages, seed=seed)
        episode.model_seconds += time.perf_counter() - t0
        episode.turns += 1
        episode.usage = episode.usage + turn.usage
        episode.messages.append(Message("assistant", turn.text, turn.tool_calls, raw=turn.raw))
        for query, found in turn.searches:
            _record_search(episode, query, [n for n in found if exposed.original(n)])
        if turn.stop_reason == "pause_turn" and not turn.tool_calls:
            continue
        if not turn.tool_calls:
            episode.answer = turn.text
            return
        results = [_search(call, local, episode) if local and call.name == SEARCH_TOOL
                   else await _execute(call, exposed, call_tool, config, episode, local) for call in turn.tool_calls]
        episode.messages.append(Message("tool", tool_results=tuple(results)))
    episode.status = "max_turns"
    episode.answer = next((m.text for m in reversed(episode.messages) if m.role == "assistant"), "")


def _read(episode: Episode, reader: ToolRanker, exposed: Exposed, prompt: str) -> None:
    """A reader's choice: the exposed tools ranked for the prompt, the top hit recorded as an uncalled call."""
    ranked = [name for name in reader.rank(exposed.tools, prompt) if exposed.original(name)]
    episode.reading = [exposed.routing[name] for name in ranked[:READING_TOP]]
    episode.messages.append(Message("assistant", "ranked: " + (", ".join(ranked[:READING_TOP]) or "nothing found")))
    if ranked:
        episode.calls.append(CallRecord("reading", ranked[0], exposed.original(ranked[0]), {},
                                        "(the reader's choice; readers call nothing)", False, 0.0))


def _search(call: ToolCall, search: ToolSearch, episode: Episode) -> ToolResult:
    """Run the agent's tool search and load what it found (kept apart from the tool calls that are scored)."""
    query = call.arguments.get("query") if isinstance(call.arguments, dict) else None
    if not isinstance(query, str) or not query.strip():
        return ToolResult(call.id, "Error: give a non-empty 'query'.", True)
    found = search.search(query)
    _record_search(episode, query, list(found.names), found.error)
    return ToolResult(call.id, search.result_text(found), bool(found.error))


def _record_search(episode: Episode, query: str, found: list[str], error: str | None = None) -> None:
    """One search, ours or the provider's: what it found is loaded from now on."""
    episode.loaded += [n for n in found if n not in episode.loaded]
    episode.searches.append({"query": query, "found": found, **({"error": error} if error else {})})


async def _execute(
    call: ToolCall, exposed: Exposed, call_tool: CallTool, config: EpisodeConfig, episode: Episode,
    search: ToolSearch | None = None,
) -> ToolResult:
    original = exposed.original(call.name)
    if original is not None and search is not None and call.name not in episode.loaded:
        original = None  # a deferred tool the agent never loaded: not callable, and not counted as called
        outcome = CallOutcome(f"Error: {call.name} is not loaded; find it with {SEARCH_TOOL} first.", True)
    elif original is None:
        outcome = CallOutcome(f"Error: there is no tool named {call.name!r}.", True)
    elif original in config.blocked_tools:
        outcome = CallOutcome(
            f"Error: {call.name} is marked destructive and this evaluation does not allow destructive tools.", True
        )
    elif not isinstance(call.arguments, dict):
        outcome = CallOutcome("Error: tool arguments must be a JSON object.", True)
    else:
        outcome = await call_tool(original, call.arguments)
    text, truncated = _truncate(outcome.text, config.max_result_chars)
    episode.calls.append(
        CallRecord(call.id, call.name, original, dict(call.arguments or {}), text, outcome.is_error,
                   round(outcome.duration_s, 6), truncated)
    )
    return ToolResult(call.id, text, outcome.is_error)


def _truncate(text: str, limit: int) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    note = (
        f"\n[truncated: the result had {len(text):,} characters and only the first {limit:,} are shown. "
        "Ask for less — a narrower query, a filter or a smaller page — to see the rest.]"
    )
    return text[:limit] + note, True
