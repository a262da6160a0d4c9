"""How well a tool's parameters take the values a request gives, for the simulated agents (test doubles): handed two
file paths they reach for the tool that takes a list of paths, handed a clock time for the tool that has a time to
fill.

Only the kinds of value a parameter names (`values.KIND_WORDS`: a path, a time, a date, an email, …) count, and only
those some offered tool takes; identifiers and free text do not tell tools apart here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from optimizer.definitions import ToolDef
from optimizer.text.tokens import inflection_base, words
from optimizer.text.values import KIND_WORDS, find_values, property_kinds

UNUSED = 0.75
"""The score factor of a tool that takes none of the request's values (one that takes all of them keeps its score)."""
_SAME_KIND = {"date_text": "date", "datetime": "date"}
_MANY = 1_000


def capacity(tool: ToolDef, *, read_descriptions: bool) -> dict[str, int]:
    """Kind → how many values of it the tool's parameters take (a list parameter takes any number)."""
    out: Counter[str] = Counter()
    for name, prop in tool.properties.items():
        plain = " ".join(inflection_base(w) for w in words(name))  # "paths" names a path
        named, _shown, _hint = property_kinds(plain, {})
        if read_descriptions and isinstance(prop, Mapping):  # what its examples show ("e.g. notes/a.md"), not every
            named |= property_kinds(plain, prop)[1]  # word it says ("the last N lines of the file")
        many = isinstance(prop, Mapping) and prop.get("type") == "array"
        for kind in named & KIND_WORDS.keys():
            out[kind] += _MANY if many else 1
    return dict(out)


def fit_factors(clause: str, capacities: Mapping[str, Mapping[str, int]]) -> dict[str, float]:
    """Tool → score factor, from 1.0 (its parameters take every value of the clause that some tool takes) down to
    UNUSED (they take none); every factor is 1.0 when the clause gives no such value."""
    offered = set().union(*(set(c) for c in capacities.values())) if capacities else set()
    given = Counter(k for f in find_values(clause, 0) if (k := _SAME_KIND.get(f.kind, f.kind)) in offered)
    total = sum(given.values())
    if not total:
        return {name: 1.0 for name in capacities}
    return {name: UNUSED + (1 - UNUSED) * sum(min(n, takes.get(k, 0)) for k, n in given.items()) / total
            for name, takes in capacities.items()}
