"""`--max-usd`: a run stops cleanly before its spending would pass a limit.

`Budget` keeps what the run has spent (its stored episodes when it opens, then every model turn and
proposer call as they finish) and refuses to start a request when the spend so far plus the last
request's cost of that model would pass the limit. `BudgetedAgent` puts an agent behind it. The
refusal is a `BudgetExceeded`: the run stops, every finished episode stays stored, and `--resume`
with a higher `--max-usd` continues it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from optimizer.cost.prices import PriceTable
from optimizer.definitions import ToolDef
from optimizer.models.base import AgentModel, Message, ModelAccessError, Turn


class BudgetExceeded(ModelAccessError):
    """The next request could take the run past --max-usd."""


class Budget:
    def __init__(self, limit: float, prices: PriceTable, spent: float = 0.0) -> None:
        self.limit, self.prices, self.spent = limit, prices, spent
        self._last: dict[str, float] = {}

    @classmethod
    def for_run(cls, limit: float, prices: PriceTable, stored: Iterable[tuple[str, Mapping[str, Any], bool]]) -> Budget:
        """A budget that counts what stored (model, usage, batch) episodes already cost."""
        return cls(limit, prices, sum(prices.usd(model, usage, batch=batch) or 0.0 for model, usage, batch in stored))

    def check(self, model: str) -> None:
        """Raise BudgetExceeded unless one more request like the last one of `model` fits."""
        if self.spent + self._last.get(model, 0.0) > self.limit:
            raise BudgetExceeded(f"stopped before passing --max-usd {self.limit:g}: USD {self.spent:.4f} spent, and "
                                 f"the next {model} request would cost about USD {self._last.get(model, 0.0):.4f}")

    def add(self, model: str, usage: Mapping[str, Any], *, batch: bool = False) -> None:
        usd = self.prices.usd(model, usage, batch=batch) or 0.0
        self.spent += usd
        self._last[model] = usd


class BudgetedAgent:
    """An agent whose turns go through a `Budget`; it is the agent it wraps in everything else."""

    def __init__(self, inner: AgentModel, budget: Budget) -> None:
        self._inner, self._budget = inner, budget
        self.id, self.settings, self.offline, self.batch = inner.id, inner.settings, inner.offline, inner.batch

    @property
    def inner(self) -> AgentModel:
        return self._inner

    @property
    def searches_tools(self) -> bool:
        """Whether the wrapped agent's provider runs the tool search itself (see `AnthropicAgent`)."""
        return bool(getattr(self._inner, "searches_tools", False))

    async def check_access(self) -> None:
        await self._inner.check_access()

    async def turn(
        self, system: str, tools: Sequence[ToolDef], messages: Sequence[Message], *, seed: int = 0
    ) -> Turn:
        self._budget.check(self._inner.id)
        turn = await self._inner.turn(system, tools, messages, seed=seed)
        self._budget.add(self._inner.id, turn.usage.to_json(), batch=self._inner.batch)
        return turn
