"""Offline readers as run models (`reader:bm25`, `reader:embed`): a tool search or an embedding router, the real
systems of `optimizer.readers`, standing where an agent would.

Contract: a reader takes no turns and calls nothing. Its episode (`optimizer.run.episode`) ranks the exposed tools for
the task's prompt; the top hit is its choice, recorded as an uncalled first call, and the episode passes when that is
the task's first expected tool (none chosen, for a task that expects no tool). The top five are kept, so runs report
recall at 5. What it measures is findability — how a tool search or a router finds the tool for a request — never
agent accuracy, which needs a model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from optimizer.definitions import ToolDef
from optimizer.models.base import Message, ModelSpecError, Turn
from optimizer.readers import READERS, load_reader

TOP = 5


@runtime_checkable
class ToolRanker(Protocol):
    """A model that ranks tools instead of taking turns: its episodes are readings."""

    id: str

    def rank(self, tools: Sequence[ToolDef], request: str) -> list[str]:
        """The names of the tools found for the request, best first."""
        ...


class ReaderModel:
    """One reader of `optimizer.readers` as a run model."""

    offline = True
    batch = False

    def __init__(self, name: str) -> None:
        """Raises ModelSpecError for a name that is no reader."""
        if name not in READERS:
            raise ModelSpecError(f"unknown reader reader:{name}; choose one of: "
                                 + ", ".join(f"reader:{r}" for r in READERS))
        self.reader = load_reader(name)
        self.id = f"reader:{name}"
        self.settings: dict[str, Any] = {}

    async def check_access(self) -> None:
        """Nothing to check: no provider, no key."""

    def rank(self, tools: Sequence[ToolDef], request: str) -> list[str]:
        return self.reader.rank(tools, request)

    async def turn(self, system: str, tools: Sequence[ToolDef], messages: Sequence[Message], *,
                   seed: int = 0) -> Turn:
        raise NotImplementedError(f"{self.id} ranks tools and takes no turns; its episodes are readings")
