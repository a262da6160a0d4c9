"""The facts the rules proposer may state about a parameter, each one the server itself showed.

A fact comes from one of:
- a validation error about the parameter: the kinds of value it asks for (with the shape of its own example), a
  closed list of values, a short value-free requirement ("a positive whole number"), read by `formats`;
- the results of calls that took it: an amount sent as 1250 that came back as 12.50 is in cents;
- the schema's enum or format, for a parameter calls got wrong although the schema said it;
- the values it accepted, when they all share one shape (an id like C-2468), for a parameter calls got wrong;
- the values the server's own results show under a field named like a parameter whose values it refused, or that a
  probe saw it accept (the run's ledger, `ledger.py`): values the server itself showed, listed as they are.

Examples are invented in the value's shape; no text holds a value a call sent, a value a train prompt holds, or
anything else from a successful result's text (names, field labels, other values).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from optimizer.definitions import Catalog, ToolDef
from optimizer.propose.base import EpisodeSeen
from optimizer.propose.evidence import ArgumentNote, argument_notes
from optimizer.propose.formats import NOUNS, Alternative, Format, read_gloss, read_message
from optimizer.propose.leakage import leaked_phrases
from optimizer.propose.ledger import Ledger, vocabulary
from optimizer.text.tokens import terms, words
from optimizer.text.values import ENTITY_KINDS, FREE_TEXT_WORDS, find_values, property_kinds

GENERIC_PARAMETERS = frozenset(("id", "value", "data", "q", "query", "input", "text", "key", "name", "type", "item",
                               "arg", "args", "params", "payload", "body", "content", "object", "string", "number",
                               "field", "target", "source"))
_SCHEMA_FORMATS = {"date": ("date", "ISO date"), "date-time": ("date", "ISO 8601 date-time"),
                   "email": ("email", "email address"), "uri": ("url", "URL"), "url": ("url", "URL")}


def parameter_facts(
    catalog: Catalog, episodes: Sequence[EpisodeSeen], prompts: Sequence[str], *, examples: bool = True,
    ledger: Ledger | None = None,
) -> dict[str, dict[str, str]]:
    """Tool -> parameter -> the grounded facts as a sentence or two, only for parameters the evidence shows
    something about; a parameter's own description is never repeated. Same-named parameters of other tools
    with the same schema type take the fact when they have none (a server names one thing one way)."""
    notes = argument_notes(episodes, {t.name: list(t.properties) for t in catalog.tools})
    grounded = set(ledger.grounded()) if ledger is not None else set()
    sent = {str(v) for ep in episodes for call in ep.calls for v in call.arguments.values()} - grounded
    facts: dict[str, dict[str, str]] = defaultdict(dict)
    for tool in catalog.tools:
        for name, prop in tool.properties.items():
            note = (notes.get(tool.name) or {}).get(name) or ArgumentNote()
            found = grounded_format(name, prop, note)
            if ledger is not None and not found.options:
                found.listed = server_values(ledger, tool.name, name)
            text = found.text(prompts, sent, examples=examples)
            if text and not leaked_phrases(text, prompts, known_text=grounded) and not _holds(text, sent):
                facts[tool.name][name] = text
    _share(catalog, facts)
    return {tool.name: said for tool in catalog.tools
            if (said := {name: text for name, text in sorted(facts[tool.name].items())
                         if not _said_already(tool, name, text)})}


def grounded_format(name: str, prop: Mapping[str, Any], note: ArgumentNote) -> Format:
    """What the errors, the results and (for a parameter calls got wrong) the schema and the accepted values say
    of one parameter's values; an empty Format when they say nothing."""
    out = Format()
    for gloss in note.glosses[:1]:
        _merge(out, read_gloss(gloss))
    for message in note.errors[:2]:
        if not (out.alternatives or out.options or out.constraint):
            _merge(out, read_message(message, [*note.rejected, *note.accepted]))
    out.cents = note.scaled > 0
    if not note.rejected:
        return out
    enum = prop.get("enum")
    if isinstance(enum, list) and enum and not out.options:
        out.options = [str(e) for e in enum]
    kind, noun = _SCHEMA_FORMATS.get(str(prop.get("format") or ""), ("", ""))
    if kind and not any(a.kind == kind for a in out.alternatives):
        out.alternatives.append(Alternative(noun, kind, "2031-05-17T09:30:00Z" if "time" in noun else ""))
    if not out.known() and not set(words(name)) & FREE_TEXT_WORDS:
        out.alternatives = _accepted(name, note)
    return out


LISTED = 12
"""The most values a parameter's description lists from the server's results."""


def server_values(ledger: Ledger, tool: str, name: str) -> list[str]:
    """For a parameter whose values the server refused: the values a probe saw it accept and those its results show
    under the field named like it that shows the most, when every one is a term of the server's vocabulary
    (`ledger.vocabulary`: no record's name, id or path) — at most LISTED, two or more unless a probe saw one pass;
    else []."""
    record = (ledger.tools.get(tool) or {}).get(name)
    if record is None or not record.refused_only():
        return []
    probed = {v for v, tasks in record.tasks.items() if "probe" in tasks}
    fields = sorted(record.shown.items(), key=lambda kv: (-sum(kv[1].values()), kv[0]))
    values = sorted(probed | (set(fields[0][1]) if fields else set()))
    if not all(vocabulary(v) for v in values):
        return []
    return values if (probed or len(values) >= 2) and len(values) <= LISTED else []


def _merge(into: Format, more: Format) -> None:
    into.gloss = into.gloss or more.gloss
    into.alternatives += [a for a in more.alternatives if a.noun not in {b.noun for b in into.alternatives}]
    into.options = into.options or more.options
    into.constraint = into.constraint or more.constraint


def _accepted(name: str, note: ArgumentNote) -> list[Alternative]:
    """The one kind of value a parameter accepted, when two or more distinct accepted values were all entities of
    that kind and the kind is the one its name asks for, if it names one (an id's noun from the parameter's name:
    `customer` + C-1 -> "customer id")."""
    kinds: set[str] = set()
    shape = ""
    for value in note.accepted:
        found = [f for f in find_values(value, 0) if f.kind in ENTITY_KINDS and f.value == value.strip()]
        if not found:
            return []
        kinds.add(found[0].kind)
        shape = shape or found[0].value
    asked = property_kinds(name, {})[0]
    if len(set(note.accepted)) < 2 or len(kinds) != 1 or (asked and not kinds <= asked):
        return []
    kind = kinds.pop()
    named = [w for w in words(name) if w not in GENERIC_PARAMETERS]
    noun = NOUNS[kind]
    if kind in ("prefixed_id", "hash_id", "code") and named:
        noun = " ".join([*named, *(w for w in noun.split() if w not in named)])
    return [Alternative(noun, kind, shape)]


def _share(catalog: Catalog, facts: dict[str, dict[str, str]]) -> None:
    """A specific parameter name ("employee_id", not "id") without a fact takes the commonest fact of the
    same-named parameters of other tools whose schema type is the same."""
    offers: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for tool in catalog.tools:
        for name, text in facts[tool.name].items():
            offers[(name, str(tool.properties[name].get("type")))][text] += 1
    for tool in catalog.tools:
        for name, prop in tool.properties.items():
            offered = offers.get((name, str(prop.get("type"))))
            if offered and name not in facts[tool.name] and name.lower() not in GENERIC_PARAMETERS:
                facts[tool.name][name] = offered.most_common(1)[0][0]


def _said_already(tool: ToolDef, name: str, text: str) -> bool:
    """Whether the parameter's own description already holds every word of the fact."""
    old = str(tool.properties[name].get("description") or "")
    return bool(old) and set(terms(re.sub(r"e\.g\..*", "", text))) <= set(terms(old))


def _holds(text: str, sent: set[str]) -> bool:
    """Whether a text shows a value some call sent (an id, an email, a date …)."""
    return any(f.value in sent for f in find_values(text, 0) if f.kind not in ("quoted", "number"))
