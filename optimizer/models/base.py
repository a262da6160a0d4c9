"""The provider-neutral agent contract.

An `AgentModel` takes one turn: given the system prompt, the exposed tools and the conversation so
far, it returns text and zero or more tool calls. It never executes tools itself. A turn without
tool calls ends the episode; its text is the answer.

Errors: a provider that gives up after its own retries raises `ModelUnavailable`; the episode runner
records that as an infrastructure fault, never as a model failure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from optimizer.definitions import ToolDef


class ModelUnavailable(RuntimeError):
    """The provider could not produce a turn (after retries); not the model's fault."""


class ModelAccessError(RuntimeError):
    """The provider refuses every request of this run (bad key, unknown model, no permission): the run stops."""


class ReplayMissing(ModelAccessError):
    """A replayed run asked something its recording has no answer for (`tape.py`): the run stops, saying what."""


class ModelSpecError(ValueError):
    """A model string that names no known provider or has bad options."""


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ToolResult:
    call_id: str
    content: str
    is_error: bool = False


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )

    def to_json(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
        }


@dataclass(frozen=True)
class Message:
    """One conversation entry: the user's task, an assistant turn, or the results of its calls."""

    role: Literal["user", "assistant", "tool"]
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_results: tuple[ToolResult, ...] = ()
    raw: tuple[dict[str, Any], ...] = field(default=(), compare=False, repr=False)
    """An assistant turn's content blocks as its provider sent them (thinking signatures included), JSON
    only, for re-sending the turn unchanged; empty for providers that do not need it."""


StopReason = Literal["end_turn", "tool_use", "max_tokens", "refusal", "pause_turn", "context_exceeded"]


@dataclass(frozen=True)
class Turn:
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    stop_reason: StopReason = "end_turn"
    raw: tuple[dict[str, Any], ...] = ()
    """The provider's content blocks as JSON (see `Message.raw`)."""
    searches: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Tool searches the provider ran itself in this turn (Claude's server-side tool search): (query, tool names
    it loaded)."""


@dataclass(frozen=True)
class Reply:
    """A Messages API response, provider-neutral: content blocks as JSON, stop reason, usage."""

    content: tuple[dict[str, Any], ...]
    stop_reason: StopReason
    usage: Usage
    model: str = ""

    @property
    def text(self) -> str:
        return "".join(b.get("text", "") for b in self.content if b.get("type") == "text")

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        return tuple(ToolCall(b["id"], b["name"], dict(b.get("input") or {}))
                     for b in self.content if b.get("type") == "tool_use")


class MessagesClient(Protocol):
    """A Messages-API client shared by Claude agents, the Claude proposer and the Claude judge."""

    async def create(self, **params: Any) -> Reply:
        """One request; raises ModelUnavailable when the provider gives up, ModelAccessError when it refuses."""
        ...

    async def close(self) -> None: ...


class MessagesAPI(MessagesClient, Protocol):
    """The whole client Claude agents take turns through: the API itself, or a recording of it (`tape.py`)."""

    async def batched(self, params: dict[str, Any]) -> Reply:
        """The reply to one request sent through the Message Batches API."""
        ...

    async def count_tokens(self, **params: Any) -> int:
        """Input tokens of a request (free); checks the key and the model."""
        ...


@runtime_checkable
class AgentModel(Protocol):
    """One configured model. `id` plus `settings` identify it in the episode cache key."""

    id: str
    settings: dict[str, Any]
    offline: bool
    """True for simulated stand-ins; every output that shows their results says so."""
    batch: bool
    """True when turns go through a provider's batch API (billed at batch prices)."""

    async def check_access(self) -> None:
        """Before any episode: raise ModelAccessError when the key or the model name cannot work, ModelUnavailable
        when the provider does not answer. Free of charge; offline agents return at once."""
        ...

    async def turn(
        self, system: str, tools: Sequence[ToolDef], messages: Sequence[Message], *, seed: int = 0
    ) -> Turn:
        """One assistant turn. `seed` varies stochastic offline agents per episode; real providers ignore it."""
        ...
