"""Train episodes as a proposer sees them: the calls an agent made, with their results, and the outcome."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CallSeen:
    """One tool call an agent made in a train episode (original tool name)."""

    tool: str | None
    exposed_name: str
    arguments: dict[str, Any]
    is_error: bool
    result: str


@dataclass(frozen=True)
class EpisodeSeen:
    """A train episode as the proposer may see it."""

    task_id: str
    model: str
    prompt: str
    passed: bool
    expected_tools: tuple[str, ...]
    forbidden_tools: tuple[str, ...]
    chosen_tools: tuple[str, ...]
    calls: tuple[CallSeen, ...]
    answer: str
    reason: str
    searches: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """With a tool search: each query the agent ran and the tools it found (exposed names)."""
