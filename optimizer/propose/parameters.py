"""Parameter descriptions the rules proposer writes: from what validation errors call a parameter and ask of
it, amounts that came back in cents, the schema, same-named parameters of other tools, and the shapes a parameter
accepted. Values shown by example are synthesised, never copied from train prompts."""

from __future__ import annotations

import itertools
import re
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from optimizer.definitions import Candidate, Catalog, ToolDef
from optimizer.propose.base import EpisodeSeen
from optimizer.propose.evidence import ArgumentNote, argument_notes, listing
from optimizer.propose.leakage import leaked_phrases
from optimizer.text import words
from optimizer.values import find_values, property_kinds

GENERIC_PARAMETERS = frozenset(("id", "value", "data", "q", "query", "input", "text", "key", "name", "type", "item",
                               "arg", "args", "params", "payload", "body", "content", "object", "string", "number",
                               "field", "target", "source"))
PROSE = "A short title or summary in plain words."


def parameter_hints(
    catalog: Catalog, episodes: Sequence[EpisodeSeen], prompts: Sequence[str],
    tasks_by_tool: Mapping[str, Sequence[str]] | None = None, known: Candidate | None = None,
) -> dict[str, dict[str, str]]:
    """Tool -> parameter -> description, for parameters something is known about, strongest first: what
    errors call it and ask of it, cents, the schema (`_own_hint`); descriptions `known` already gives;
    same-named parameters of other tools (`_borrow`); "a short title" for a vague parameter that took a
    value another parameter of the call needed (`_misrouted`); the shapes it accepted. A description
    naming another parameter's list ("the new status") gets that list. Values shown are synthesised
    shapes, and no description leaks anything from `prompts`."""
    notes = argument_notes(episodes, {t.name: list(t.properties) for t in catalog.tools})
    hints: dict[str, dict[str, str]] = defaultdict(dict)
    for name, edit in (known.edits if known else {}).items():
        hints[name].update(edit.parameters)
    for tool in catalog.tools:
        for name, prop in tool.properties.items():
            hint = _own_hint(prop, (notes.get(tool.name) or {}).get(name, ArgumentNote()), prompts)
            hints[tool.name].update({name: hint} if hint else {})
    _borrow(catalog, hints, tasks_by_tool or {})
    for tool_name, name in _misrouted(catalog, episodes, hints):
        hints[tool_name][name] = PROSE
    for tool in catalog.tools:
        for name in tool.properties:  # last and weakest: the shapes it was seen to accept
            shown = _shapes((notes.get(tool.name) or {}).get(name, ArgumentNote()).shapes(), prompts)
            if shown and name not in hints[tool.name]:
                hints[tool.name][name] = f"{shown[:1].upper()}{shown[1:]}."
    lists = {name: "one of:" + hint[hint.lower().index("one of:") + 7 :].rstrip(".") for tool in catalog.tools
             for name, hint in hints[tool.name].items() if "one of:" in hint.lower()}
    for tool in catalog.tools:
        for name, hint in list(hints[tool.name].items()):
            last = (words(hint) or [""])[-1]
            if "one of" not in hint.lower() and last in lists and last != name:
                hints[tool.name][name] = f"{hint.rstrip('.')}, {lists[last]}."
    return {tool.name: {name: _final(tool, name, hint) for name, hint in sorted(hints[tool.name].items())
                        if not leaked_phrases(hint, prompts)} for tool in catalog.tools if hints[tool.name]}


def _own_hint(prop: Mapping[str, Any], note: ArgumentNote, prompts: Sequence[str]) -> str:
    """A parameter's description from what errors call it and ask of it, cents and its schema."""
    parts = [_shapes(text, prompts) for text in (note.glosses[:1] + [note.asked()]) if text]
    if note.scaled:
        parts.append("Amount in cents (minor units): multiply dollars by 100")
    enum = prop.get("enum")
    if isinstance(enum, list) and enum and not any("one of" in p.lower() for p in parts):
        parts.append(f"One of: {listing([str(e) for e in enum])}")
    fmt = str(prop.get("format") or "")
    if fmt in ("date", "date-time") and not any("YYYY" in p for p in parts):
        parts.append("An ISO date YYYY-MM-DD" if fmt == "date" else "An ISO 8601 date-time")
    elif fmt == "email" and not parts:
        parts.append("An email address like name@example.com")
    text = "; ".join(parts)
    return f"{text[:1].upper()}{text[1:]}." if text else ""


def _borrow(catalog: Catalog, hints: dict[str, dict[str, str]], tasks_by_tool: Mapping[str, Sequence[str]]) -> None:
    """Fill parameters without a description from same-named parameters of other tools (one server
    names one thing one way): a specific name ("user") takes the commonest description; a generic one
    ("value", "id") only one asking for a kind of value that the tasks needing this tool alone carry
    and no other parameter of the tool asks for (`find.value` gets `schedule.value`'s ISO date when
    find's own tasks mention dates; an id's letters count: DOC-1 is not ENG-1)."""
    offers: dict[str, Counter[str]] = defaultdict(Counter)
    for tool in catalog.tools:
        for name, hint in hints[tool.name].items():
            offers[name][hint] += 1
    owners = Counter(prompt for prompts in tasks_by_tool.values() for prompt in set(prompts))
    for tool in catalog.tools:
        alone = [prompt for prompt in tasks_by_tool.get(tool.name, ()) if owners[prompt] == 1]
        seen = {_shape(f.kind, f.value) for prompt in alone for f in find_values(prompt, 0)}
        for name, prop in tool.properties.items():
            ranked = [hint for hint, _ in offers[name].most_common()] if name not in hints[tool.name] else []
            if ranked and name.lower() not in GENERIC_PARAMETERS:
                hints[tool.name][name] = ranked[0]
                continue
            taken = set().union(*(_kinds(o, tool.properties[o], hints[tool.name].get(o, "")) for o in tool.properties
                                  if o != name))
            for hint in ranked:
                kinds = _kinds(name, prop, hint) - {"prefixed_id"}
                kinds |= {_shape(f.kind, f.value) for f in find_values(hint, 0) if f.kind == "prefixed_id"}
                if kinds & seen and not kinds & taken:
                    hints[tool.name][name] = hint
                    break


def _misrouted(
    catalog: Catalog, episodes: Sequence[EpisodeSeen], hints: Mapping[str, Mapping[str, str]]
) -> list[tuple[str, str]]:
    """(tool, parameter) pairs where a parameter with no description, whose name asks for no kind of
    value, was sent a value (an email, a date) of a kind another parameter of the call asks for and
    did not get: "data" took the email "user" needed."""
    out: list[tuple[str, str]] = []
    for call in (c for ep in episodes for c in ep.calls if c.tool in catalog):
        tool = catalog.get(str(call.tool))
        wants = {name: _kinds(name, prop, hints[tool.name].get(name, "")) for name, prop in tool.properties.items()}
        for name, value in call.arguments.items():
            if name not in wants or wants[name] or hints[tool.name].get(name) or (tool.name, name) in out:
                continue
            if any(_sent_kinds(value) & kinds and not _sent_kinds(call.arguments.get(other, "")) & kinds
                   for other, kinds in wants.items() if other != name):
                out.append((tool.name, name))
    return out


def _kinds(name: str, prop: Mapping[str, Any], hint: str) -> set[str]:
    """Kinds of value a parameter asks for by its name, schema and description, as `property_kinds`
    reads them (a date also as written out, "March 10, 2026")."""
    kinds, shapes, _ = property_kinds(name, {**prop, "description": f"{prop.get('description', '')} {hint}"})
    return kinds | shapes | ({"date_text"} if "date" in kinds else set())


def _sent_kinds(value: object) -> set[str]:
    text = str(value).strip()
    return {f.kind for f in find_values(text, 0) if f.value == text}


def _shape(kind: str, value: str) -> str:
    """A value's kind; for a prefixed id with its letters ("prefixed_id:ENG"), which tell ids apart."""
    return f"{kind}:{value.split('-')[0].upper()}" if kind == "prefixed_id" else kind


def _final(tool: ToolDef, name: str, hint: str) -> str:
    """The description after the parameter's old one (unless it holds it), "Optional." first when it is."""
    old = str(tool.properties[name].get("description") or "").strip().rstrip(".")
    text = hint if not old or old.lower() in hint.lower() else f"{old}. {hint}"
    return text if name in tool.required or text.lower().startswith("optional") else f"Optional. {text}"


def _shapes(text: str, prompts: Sequence[str]) -> str:
    """The text with every value replaced by a synthesised one of the same shape (`synthesise`)."""
    for found in sorted(find_values(text, 0), key=lambda f: -f.position):
        if found.kind not in ("quoted", "number", "money"):
            start = text.find(found.value, found.position)
            text = text[:start] + synthesise(found.value, found.kind, prompts) + text[start + len(found.value) :]
    return re.sub(r"(YYYY-MM-DD)(?:,? (?:e\.g\.|like|such as) YYYY-MM-DD)+", r"\1", text)


def synthesise(value: str, kind: str, prompts: Sequence[str]) -> str:
    """A value of the same shape as `value` that no prompt contains: dates as YYYY-MM-DD, `#` numbers
    as #NNNNN, emails as name@example.com, other values with their digits renumbered."""
    if kind in ("date", "date_text"):
        return "YYYY-MM-DD"
    if kind == "hash_id":
        return "#" + "N" * (len(value) - 1)
    if kind == "email":
        return "name@example.com"
    for shift in range(10):
        digits = itertools.cycle("1234567890"[shift:] + "1234567890"[:shift])
        made = _renumbered(value, digits)
        if not leaked_phrases(made, prompts):
            return made
    return re.sub(r"\d", "N", value)


def _renumbered(value: str, digits: Iterator[str]) -> str:
    """`value` with each digit replaced by the next one of `digits`."""
    return re.sub(r"\d", lambda _match: next(digits), value)
