"""What an episode cost on its way to an answer, and the means per model and split.

A capable model often passes whatever the definitions say, by retrying; what the definitions still change is the
way there, and users pay for every call. Per episode (`EpisodeCost.of`): the tool calls, the failed calls (an error
result: a tool error, a schema rejection, an unknown tool, a call blocked as destructive), the model turns and the
agent's tokens (input of every kind, and output). Every stored episode also keeps its wall time (`duration_s`),
left out here so that results stay reproducible. A reader's episode (it ranks tools and calls nothing) costs
nothing here.

`efficiency_cell` gives the means over a group of episodes under stable keys: `calls_per_task`,
`failed_calls_per_task`, `turns_per_task` and `tokens_per_task` (per episode: with several epochs a task counts once
per epoch).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

KEYS = ("calls_per_task", "failed_calls_per_task", "turns_per_task", "tokens_per_task")
"""The efficiency figures of every results cell, in order."""
_TOKEN_KINDS = ("input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens")


@dataclass(frozen=True)
class EpisodeCost:
    calls: int = 0
    failed_calls: int = 0
    turns: int = 0
    tokens: int = 0

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> EpisodeCost:
        """The cost of one stored episode (its data as the store keeps it)."""
        if data.get("reading") is not None:
            return cls()
        calls = data.get("calls") or []
        usage = data.get("usage") or {}
        return cls(calls=len(calls), failed_calls=sum(bool(c.get("is_error")) for c in calls),
                   turns=int(data.get("turns") or 0), tokens=sum(int(usage.get(k) or 0) for k in _TOKEN_KINDS))


def efficiency_cell(costs: Iterable[EpisodeCost]) -> dict[str, float]:
    """The means of `costs` under KEYS (0 for no episode), to two decimals (tokens whole)."""
    rows = list(costs)
    n = len(rows) or 1
    return {"calls_per_task": round(sum(c.calls for c in rows) / n, 2),
            "failed_calls_per_task": round(sum(c.failed_calls for c in rows) / n, 2),
            "turns_per_task": round(sum(c.turns for c in rows) / n, 2),
            "tokens_per_task": round(sum(c.tokens for c in rows) / n)}


def efficiency_table(rows: Iterable[tuple[str, str, EpisodeCost]]) -> dict[str, dict[str, dict[str, float]]]:
    """(model, split, cost) rows -> {model: {split: efficiency_cell}}."""
    groups: dict[tuple[str, str], list[EpisodeCost]] = {}
    for model, split, cost in rows:
        groups.setdefault((model, split), []).append(cost)
    table: dict[str, dict[str, dict[str, float]]] = {}
    for (model, split), costs in sorted(groups.items()):
        table.setdefault(model, {})[split] = efficiency_cell(costs)
    return table


def cost_change(before: Mapping[str, Any], after: Mapping[str, Any], key: str) -> str:
    """One figure before → after ("5.6 → 0"), or "–" when a side lacks it (a summary written before it existed)."""
    if key not in before or key not in after:
        return "–"
    return f"{_number(before[key])} → {_number(after[key])}"


def cost_figure(cell: Mapping[str, Any], key: str) -> str:
    return _number(cell[key]) if key in cell else "–"


def _number(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 or float(value).is_integer() else f"{value:.1f}"
