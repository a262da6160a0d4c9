"""What the simulated agents (test doubles) fill one call's arguments from: the clause asking for the call, the whole
prompt, earlier successful tool results, the values found in each, and what earlier parameters took."""

from __future__ import annotations

import re
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

from optimizer.text.values import Found, find_values


@dataclass
class Reading:
    """The texts of one call and the values in them (`Found.origin`: 0 clause, 1 prompt, 2 results); the
    shapes the error `error` asked for (`prefer`); the tool's own name terms (`skip`, never a topic); the
    values parameters already took (`used`); which numeric parameter each number in the clause belongs
    to (`claims`), how many numeric parameters the call has, and their names (`siblings`)."""

    clause: str
    prompt: str
    results: list[str]
    prefer: AbstractSet[str]
    skip: frozenset[str]
    used: set[str] = field(default_factory=set)
    found: list[Found] = field(default_factory=list)
    claims: dict[int, str] = field(default_factory=dict)
    numeric: int = 0
    error: str = ""
    siblings: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        self.found = find_values(self.clause, 0) + find_values(self.prompt, 1)
        for text in self.results:  # successful results only: an error's example value is not data
            self.found += find_values(text, 2)

    def free(self, kind: str, origin: int = 0) -> list[Found]:
        """Values of a kind from one text that no parameter took yet."""
        return [f for f in self.found if f.kind == kind and f.origin == origin and f.value not in self.used]

    def prefers(self, name: str, kinds: AbstractSet[str]) -> AbstractSet[str]:
        """The shapes an error asked for, for a parameter it names, or — when it names none of the call's
        parameters — for a parameter that asks for no kind of its own."""
        named = {n for n in self.siblings if re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", self.error)}
        return self.prefer if name in named or (not named and not kinds) else frozenset()

    def unused(self, value: str | None) -> str | None:
        return value if value and value not in self.used else None

    def masked(self) -> str:
        """The clause with the values other parameters took blanked out."""
        text = self.clause
        for value in sorted(self.used, key=len, reverse=True):
            text = re.sub(rf"(?<!\w){re.escape(value)}(?!\w)", " ", text)
        return text

    def narrowed(self, text: str) -> Reading:
        """The same call read from part of its clause only (what follows "excluding …")."""
        return Reading(text, "", [], self.prefer, self.skip, used=self.used, error=self.error)


def flat(prop: Mapping[str, Any]) -> Mapping[str, Any]:
    """A nullable or one-of parameter read as its first non-null form, its own words kept."""
    for key in ("anyOf", "oneOf"):
        forms = [f for f in prop.get(key) or [] if isinstance(f, Mapping) and f.get("type") != "null"]
        if forms:
            return {**forms[0], **{k: v for k, v in prop.items() if k != key}}
    kind = prop.get("type")
    if isinstance(kind, list):
        return {**prop, "type": next((k for k in kind if k != "null"), "string")}
    return prop
