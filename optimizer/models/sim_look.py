"""Looking before acting: when a call lacks a required value that the request does not give (the table to query,
the table to describe), the offline agents first call the tool that lists such things, as anyone new to a server
does, and fill the call from what it returned. One look per step of the plan, and only with a tool that takes no
required argument and does not change anything."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from optimizer.definitions import ToolDef
from optimizer.text import stem, words
from optimizer.values import wanted_things


def wanted(schema: Mapping[str, Any], args: Mapping[str, Any]) -> set[str]:
    """Stems of the things the call's missing required parameters name (`values.wanted_things`)."""
    props = schema.get("properties") or {}
    out: set[str] = set()
    for name in schema.get("required") or []:
        prop = props.get(name)
        if name not in args and isinstance(prop, Mapping):
            out |= wanted_things(name, prop)
    return out


def lister(tools: Sequence[ToolDef], own: str, things: set[str], writes: Callable[[str], bool]) -> str | None:
    """The tool to look with: not `own`, takes no required argument, its name does not say it writes, and its name
    names one of `things` (`list_tables` for a table). Of several, the one whose name is shortest."""
    fitting = [t.name for t in tools if t.name != own and not t.required
               and not writes(t.name) and {stem(w) for w in words(t.name)} & things]
    return min(fitting, key=lambda name: (len(words(name)), name)) if fitting else None
