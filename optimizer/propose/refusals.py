"""Which argument a refused call was refused for, read from the error: the category a server labels it with, the
argument it names or quotes, and what a probe settled (`ProbeVerdict`)."""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from optimizer.propose.seen import CallSeen

NOT_REFUSALS = frozenset({"business", "permission", "transient"})
"""Error categories that refuse the request, not a value."""
_TOOL_PREFIX = re.compile(r"^\s*error executing tool [^:]*:\s*", re.IGNORECASE)
_CATEGORY = re.compile(r"^\s*(validation|business|permission|transient)\s*:\s*", re.IGNORECASE)
_GOT = re.compile(r"\(got\s+'?([^')]*)'?", re.IGNORECASE)
@dataclass(frozen=True)
class ProbeVerdict:
    """What probing one refused call settled: the arguments the server refused (parameter -> the call's value) and
    values it accepted (parameter -> value) when one argument at a time was changed."""

    tool: str
    arguments: dict[str, Any]
    refused: dict[str, Any] = field(default_factory=dict)
    accepted: dict[str, Any] = field(default_factory=dict)
    passed: tuple[CallSeen, ...] = ()
    """the probe's calls that passed: read as calls the server accepted, their results as results"""


_QUOTED = re.compile(r"'([^']{1,80})'|\"([^\"]{1,80})\"")


def error_parts(result: str) -> tuple[str, str]:
    """An error result as (its category: validation, business, permission, transient or "", the message without
    the tool prefix and the category)."""
    text = _TOOL_PREFIX.sub("", result.strip())
    labelled = _CATEGORY.match(text)
    return (labelled[1].lower() if labelled else ""), _CATEGORY.sub("", text)


def blamed_argument(message: str, arguments: Mapping[str, Any]) -> str | None:
    """The argument a validation message is about: named in its first words (outside quotes), else quoted after
    "got", else the only argument when the message reads like a format complaint about a value."""
    leading: list[str] = re.findall(r"[A-Za-z_][\w.]*", _QUOTED.sub("''", message))[:3]  # not the value's words
    for word in leading:
        if word in arguments:
            return word
    got = _GOT.search(message)
    if got:
        for name, value in arguments.items():
            if str(value).strip() == got.group(1).strip():
                return name
    about_value = got or re.search(r"\b(must|expected|invalid|format|should be)\b", message, re.IGNORECASE)
    return next(iter(arguments)) if len(arguments) == 1 and about_value else None


def refused_arguments(call: CallSeen, probe: ProbeVerdict | None = None,
                      parameters: Collection[str] = ()) -> list[str] | None:
    """The arguments a refused call was refused for: a probe's verdict, else the one the error names or quotes, else
    the only argument — unless the error names another of the tool's `parameters`, one the call left out (then it
    is about that one); None when nothing settles it, [] when the call was not refused."""
    category, message = error_parts(call.result)
    if not call.is_error or category in NOT_REFUSALS:
        return []
    if probe is not None and probe.refused:
        return sorted(probe.refused)
    named = blamed_argument(message, call.arguments)
    if named is not None:
        return [named]
    quoted = {text for pair in _QUOTED.findall(message) for text in pair if text}
    hits = [name for name, value in call.arguments.items() if value_text(value) in quoted]
    if len(hits) == 1:
        return hits
    if len(call.arguments) != 1 or _names_another(message, call.arguments, parameters):
        return None
    return list(call.arguments)


def _names_another(message: str, arguments: Mapping[str, Any], parameters: Collection[str]) -> bool:
    """Whether the message names, as a word, a parameter of the tool that the call did not send."""
    said = set(re.findall(r"[A-Za-z_]\w*", message))
    return any(name in said for name in parameters if name not in arguments)




def value_text(value: Any) -> str:
    """An argument's value as text: a string as it is, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)
