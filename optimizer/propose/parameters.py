"""Parameter descriptions the rules proposer writes: the format and an invented example, from what validation errors
ask of a parameter and call it (read for their facts, see `formats`), amounts that came back in cents, the schema,
the kinds of value it accepted and same-named parameters of other tools. No error text and no value an agent sent
or a train prompt holds is ever written."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from optimizer.definitions import Candidate, Catalog, ToolDef
from optimizer.propose.base import EpisodeSeen
from optimizer.propose.evidence import ArgumentNote, argument_notes
from optimizer.propose.formats import NOUNS, Alternative, Format, read_gloss, read_message
from optimizer.propose.leakage import leaked_phrases
from optimizer.text import stem, terms, words
from optimizer.values import ENTITY_KINDS, FREE_TEXT_WORDS, find_values, names_a_file, property_kinds

GENERIC_PARAMETERS = frozenset(("id", "value", "data", "q", "query", "input", "text", "key", "name", "type", "item",
                               "arg", "args", "params", "payload", "body", "content", "object", "string", "number",
                               "field", "target", "source"))


def parameter_hints(
    catalog: Catalog, episodes: Sequence[EpisodeSeen], prompts: Sequence[str],
    tasks_by_tool: Mapping[str, Sequence[str]] | None = None, known: Candidate | None = None,
) -> dict[str, dict[str, str]]:
    """Tool -> parameter -> description, for parameters something is known about, strongest first: the facts of
    its errors, cents and its schema (`format_of`); descriptions `known` already gives; same-named parameters
    of other tools (`_borrow`). A description naming another parameter's list ("the new status") gets that list.
    Examples are invented; no description holds a value any call sent or anything `leaked_phrases` finds."""
    notes = argument_notes(episodes, {t.name: list(t.properties) for t in catalog.tools})
    sent = {str(v) for ep in episodes for call in ep.calls for v in call.arguments.values()}
    hints: dict[str, dict[str, str]] = defaultdict(dict)
    for name, edit in (known.edits if known else {}).items():
        hints[name].update(edit.parameters)
    for tool in catalog.tools:
        for name, prop in tool.properties.items():
            note = (notes.get(tool.name) or {}).get(name, ArgumentNote())
            hint = format_of(name, prop, note).text(prompts, sent)
            hints[tool.name].update({name: hint} if hint else {})
    _borrow(catalog, hints, tasks_by_tool or {})
    lists = {name: "one of:" + hint[hint.lower().index("one of:") + 7 :].rstrip(".") for tool in catalog.tools
             for name, hint in hints[tool.name].items() if "one of:" in hint.lower()}
    for tool in catalog.tools:
        for name, hint in list(hints[tool.name].items()):
            last = (words(hint) or [""])[-1]
            if "one of" not in hint.lower() and last in lists and last != name:
                hints[tool.name][name] = f"{hint.rstrip('.')}, {lists[last]}."
    return {tool.name: {name: _final(tool, name, _fitted(tool, hint)) for name, hint in sorted(hints[tool.name].items())
                        if not leaked_phrases(hint, prompts) and not _holds(hint, sent)}
            for tool in catalog.tools if hints[tool.name]}


def format_of(name: str, prop: Mapping[str, Any], note: ArgumentNote) -> Format:
    """What the evidence and the schema say about one parameter's values."""
    out = Format()
    for gloss in note.glosses[:1]:
        _merge(out, read_gloss(gloss))
    for message in note.errors[:2]:
        if not (out.alternatives or out.options or out.constraint):
            _merge(out, read_message(message, [*note.rejected, *note.accepted]))
    out.cents = note.scaled > 0
    enum = prop.get("enum")
    if isinstance(enum, list) and enum and not out.options:
        out.options = [str(e) for e in enum]
    fmt = str(prop.get("format") or "")
    kind = {"date": "date", "date-time": "date", "email": "email", "uri": "url", "url": "url"}.get(fmt)
    if kind and not any(a.kind == kind for a in out.alternatives):
        out.alternatives.append(Alternative("ISO 8601 date-time" if fmt == "date-time" else NOUNS[kind], kind,
                                            "2031-05-17T09:30:00Z" if fmt == "date-time" else ""))
    if not out.known() and not set(words(name)) & FREE_TEXT_WORDS:  # free text accepts anything
        out.alternatives = _accepted(name, note)
    return out


def _merge(into: Format, more: Format) -> None:
    into.gloss = into.gloss or more.gloss
    into.alternatives += [a for a in more.alternatives if a.noun not in {b.noun for b in into.alternatives}]
    into.options = into.options or more.options
    into.constraint = into.constraint or more.constraint


def _accepted(name: str, note: ArgumentNote) -> list[Alternative]:
    """The kinds of value a parameter accepted, when two or more distinct values were all entities of at most
    three kinds (an id's noun from the parameter's name: `customer` + C-1 -> "customer id"); only the kind its
    name asks for when it names one (a `path` that accepted a date is still a path)."""
    seen: dict[str, list[str]] = defaultdict(list)
    for value in note.accepted:
        found = [f for f in find_values(value, 0) if f.kind in ENTITY_KINDS and f.value == value.strip()]
        if not found:
            return []
        seen[found[0].kind].append(found[0].value)
    kinds = {kind: _typical(values) for kind, values in seen.items()}
    if len(set(note.accepted)) < 2 or len(kinds) > 3:
        return []
    named = [w for w in words(name) if w not in GENERIC_PARAMETERS]
    asked = property_kinds(name, {})[0]  # a parameter named for a kind ("path") takes that kind only
    kinds = {kind: value for kind, value in kinds.items() if not asked or kind in asked}
    out = []
    for kind, value in sorted(kinds.items()):
        noun = NOUNS[kind]
        if kind in ("prefixed_id", "hash_id", "code") and named:
            noun = " ".join([*named, *(w for w in noun.split() if w not in named)])
        out.append(Alternative(noun, kind, value))
    return out


def _typical(values: Sequence[str]) -> str:
    """The first of the values of the commonest form: a file name (with an extension) or not. A file reader that
    agents also handed a folder now and then still shows a file in its example."""
    common = Counter(names_a_file(v) for v in values).most_common(1)[0][0]
    return next(v for v in values if names_a_file(v) == common)


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


def _kinds(name: str, prop: Mapping[str, Any], hint: str) -> set[str]:
    """Kinds of value a parameter asks for by its name, schema and description, as `property_kinds`
    reads them (a date also as written out, "March 10, 2026")."""
    kinds, shapes, _ = property_kinds(name, {**prop, "description": f"{prop.get('description', '')} {hint}"})
    return kinds | shapes | ({"date_text"} if "date" in kinds else set())


def _shape(kind: str, value: str) -> str:
    """A value's kind; for a prefixed id with its letters ("prefixed_id:ENG"), which tell ids apart. Invented
    examples keep the letters of the server's own."""
    return f"{kind}:{value.split('-')[0].upper()}" if kind == "prefixed_id" else kind


def _holds(text: str, sent: set[str]) -> bool:
    """Whether a text shows a value some call sent (an id, an email, a date …)."""
    return any(f.value in sent for f in find_values(text, 0) if f.kind not in ("quoted", "number"))


_FOLDER_STEMS = frozenset(("directory", "folder", "dir"))
_LOOKING_STEMS = frozenset(stem(w) for w in ("search", "find", "list", "glob"))
"""Verbs of tools that look for files inside a folder: their path is where to look."""


def _fitted(tool: ToolDef, hint: str) -> str:
    """The hint with its example paths made folders' (no file extension) when the tool's name speaks of folders
    and not of files, and files' when it speaks of files and not of folders: `create_directory` gets "e.g.
    folder/example", not the "example.md" that a same-named parameter of a file tool lent it; `read_text_file`
    gets "folder/example.txt", not a listing tool's folder (a tool that searches for files looks in a folder)."""
    named = {stem(w) for w in words(tool.name)}
    head, sep, examples = hint.partition("e.g. ")
    folders, files = bool(named & _FOLDER_STEMS), stem("file") in named and not named & _LOOKING_STEMS
    if not sep or folders == files:
        return hint
    end = "." if examples.endswith(".") else ""
    fit = _folder if folders else _file
    return head + sep + " or ".join(fit(e) for e in examples.removesuffix(".").split(" or ")) + end


def _file(example: str) -> str:
    """A folder path example as a file's: "notes/drafts" -> "notes/drafts.txt"; anything else as is."""
    return example + ".txt" if re.fullmatch(r"[\w-]+(?:/[\w-]+)+", example) else example


def _folder(example: str) -> str:
    """A file path example as a folder's: "notes/a.md" -> "notes/a", "a.md" -> "folder/a"; anything else as is."""
    stripped = re.sub(r"(?<=[A-Za-z0-9_-])\.[A-Za-z][A-Za-z0-9]{0,4}$", "", example)
    if stripped == example or re.search(r"[@:\s$]", example):
        return example
    return stripped if "/" in stripped else f"folder/{stripped}"


def _final(tool: ToolDef, name: str, hint: str) -> str:
    """The description after the parameter's old one (unless it holds it; when the old one states the format, only
    the example), "Optional." first when it is."""
    old = str(tool.properties[name].get("description") or "").strip().rstrip(".")
    said = re.match(r"(?:Optional\.\s*)?(.*?)(?:,?\s+e\.g\.\s+(.+?))?\.?$", hint)
    if old and said and set(terms(said.group(1))) <= set(terms(old)):  # the old one states the format already
        text = f"{old}, e.g. {said.group(2)}." if said.group(2) and said.group(2) not in old else f"{old}."
    else:
        text = hint if not old or old.lower() in hint.lower() else f"{old}. {hint}"
    return text if name in tool.required or text.lower().startswith("optional") else f"Optional. {text}"
