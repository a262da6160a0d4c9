"""Parameter descriptions that name what the server lists. A parameter refers to a kind of thing (an SQL statement
refers to tables: `values.wanted_things`), and a tool that takes no argument and changes nothing lists such things
(`list_tables`). When that tool returned a short list of names in train, the parameter's description names them
("Known tables: suppliers, products and orders (from list_tables).") so an agent can write the value without
looking first. The names are the server's own answer, never a value an agent sent."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from optimizer.definitions import Catalog, ToolDef
from optimizer.lint.rules_security import changes_state
from optimizer.propose.base import EpisodeSeen
from optimizer.text import stem, words
from optimizer.values import wanted_things

MAX_NAMES = 12
"""A listing longer than this is data to look up, not a closed set to name."""
_NAME = re.compile(r"""(?<![\w'"])['"]([A-Za-z_][\w.-]{0,39})['"](?!\s*:)""")
"""A quoted identifier that is a value, not a key (`{'name': 'orders'}` gives `orders`)."""
_KNOWN = re.compile(r"\s*Known [\w-]+: [^()]*\(from [\w.-]+\)\.")


def listed(catalog: Catalog, episodes: Sequence[EpisodeSeen]) -> dict[str, list[str]]:
    """Lister tool -> the names its successful train calls returned, first seen first, for the tools that take no
    required argument, do not change state and returned 2 to MAX_NAMES names."""
    out: dict[str, list[str]] = {}
    for tool in catalog.tools:
        if tool.required or changes_state(tool):
            continue
        names: list[str] = []
        for call in (c for e in episodes for c in e.calls if c.tool == tool.name and not c.is_error):
            names += [n for n in _NAME.findall(call.result) if n not in names]
        if 2 <= len(names) <= MAX_NAMES:
            out[tool.name] = names
    return out


def listing_hints(catalog: Catalog, episodes: Sequence[EpisodeSeen],
                  hints: Mapping[str, Mapping[str, str]]) -> dict[str, dict[str, str]]:
    """`hints` (tool -> parameter -> description) with a sentence naming the listed things added to each string
    parameter of a tool that does not change state, when the parameter refers to such things without being one of
    them: a query over tables, not `table_name`. A name is filled by calling the lister first, as agents do, and
    keeps the server's data out of the schema; a statement cannot be written without knowing what it may name. A
    parameter with no hint yet starts from its own description."""
    found = listed(catalog, episodes)
    out = {tool: dict(params) for tool, params in hints.items()}
    for tool in catalog.tools:
        if changes_state(tool):
            continue
        for param, prop in tool.properties.items():
            if prop.get("type") not in (None, "string"):
                continue
            sentence = _known(tool, wanted_things(param, prop) - {stem(w) for w in words(param)}, found)
            if sentence is None:
                continue
            base = (hints.get(tool.name) or {}).get(param) or str(prop.get("description") or "").strip()
            base = _KNOWN.sub("", base).strip()  # an earlier round's list gives way to this round's
            out.setdefault(tool.name, {})[param] = f"{base.rstrip('.')}. {sentence}" if base else sentence
    return out


def _known(tool: ToolDef, things: set[str], found: Mapping[str, list[str]]) -> str | None:
    for lister, names in sorted(found.items()):
        nouns = [w for w in words(lister) if stem(w) in things]
        if lister != tool.name and nouns:
            return f"Known {nouns[0]}: {', '.join(names[:-1])} and {names[-1]} (from {lister})."
    return None
