"""Exploring a server without a model, for `tasks generate --offline`: which values exist, and where they show.

Contract of `explore`: in up to ROUNDS rounds, each tool it may call (the others are in `refused`) is called with
arguments filled from evidence only: the schema's enum, default and examples, values earlier results showed (under
a label that shares a word other than an id word with the parameter first, then of the kind the parameter asks for;
among equals, under a label naming what the tool is about), then values the parameter's own description shows. An
error result is never a value source: nothing it shows is passed to a call or asked about (its text goes to
calls.jsonl, where the coverage report reads what would help). Values the user knows (`tasks generate --known`) are
evidence like a result's, tried before results' values of the same fit; a task still comes only from a call that
succeeded. At most PER_TOOL argument sets per tool, each called twice (`Observation.stable`: both results equal). An
absolute path argument is shortened to the shortest trailing part the server answers the same for. `harvest` reads
the values of one result with their labels (a label that is itself a value, or the item the call asked for, names
the item, not a field); `fitting` gives the arguments a request that is not run can show (only values results
showed).
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from optimizer.definitions import Catalog, ToolDef
from optimizer.servers import CallOutcome
from optimizer.text.results import LINKS, clean_label, parse_literal, says_error, substantive
from optimizer.text.tokens import STOPWORDS, stem, words
from optimizer.text.values import ENTITY_KINDS, FREE_TEXT_WORDS, ID_WORDS, find_values, property_kinds

ROUNDS = 4
_ID_KINDS = frozenset(("prefixed_id", "hash_id", "uuid", "code"))
PER_TOOL = 3
MAX_VALUE_CHARS = 80
SYNTHESISED = {"time": "14:30"}
"""A value of a kind no evidence shows, when the parameter asks for that kind by name or format."""
CallTool = Callable[[str, dict[str, Any]], Awaitable[CallOutcome]]
_SENTENCE_END = re.compile(r"(?:(?<=[A-Za-z]{4})|(?<=[\d>)\]\"'`]))\.[ \t]+(?=[A-Z])")
"""Where a sentence ends inside a line ("Owner: Ana <a@b.c>. Updated …"): not after a short abbreviation (Dr. Lund)."""
_LABELLED_LINE = re.compile(r"(?:^|(?<=[.!?] ))[ \t]*([A-Za-z][A-Za-z0-9 _-]{0,30}?)[ \t]*:[ \t]+(\S[^\n]{0,100}?)\s*$",
                            re.MULTILINE)


@dataclass(frozen=True)
class Seen:
    """A value a result showed: under which label (words, "" for none), for which item (the first text field of the
    object it sits in), and whether other values share its label in that result."""

    value: str | int | float
    label: str
    kind: str
    anchor: str | None = None
    shared: bool = False
    source: Observation | None = None
    given: bool = False
    """the user gave it (`tasks generate --known`)"""


@dataclass(frozen=True)
class Observation:
    """One successful call, made twice."""

    tool: str
    arguments: Mapping[str, Any]
    text: str
    stable: bool
    """both calls returned the same text"""
    fed: Mapping[str, Seen] = field(default_factory=dict)
    """arguments filled from another call's result, by parameter"""


@dataclass
class Exploration:
    """What exploring found: the successful calls, every value seen (in successful results, and the user's known
    values without a source; never an error's), every call made (for calls.jsonl), and the argument sets tried."""

    observations: list[Observation] = field(default_factory=list)
    seen: list[Seen] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    tried: set[tuple[str, str]] = field(default_factory=set)


async def explore(catalog: Catalog, call: CallTool, refused: Mapping[str, str], *, seed: int = 0,
                  known: Sequence[Seen] = ()) -> Exploration:
    """Call the tools it may call with arguments from evidence (see the module docstring), the values the user
    knows (`known`, without a source) first among equals."""
    run = Exploration(seen=list(known))
    rng = random.Random(seed)
    for _ in range(ROUNDS):
        before = len(run.calls)
        for tool in catalog.tools:
            if tool.name in refused or sum(o.tool == tool.name for o in run.observations) >= PER_TOOL:
                continue
            for arguments, fed in fillings(tool, run.seen, rng):
                key = (tool.name, json.dumps(arguments, sort_keys=True))
                if key in run.tried:
                    continue
                run.tried.add(key)
                await _observe(tool, arguments, fed, call, run)
                if sum(o.tool == tool.name for o in run.observations) >= PER_TOOL:
                    break
        if len(run.calls) == before:
            break
    return run


async def _observe(tool: ToolDef, arguments: dict[str, Any], fed: Mapping[str, Seen], call: CallTool,
                   run: Exploration) -> None:
    first = await _logged(tool.name, arguments, call, run)
    if first.is_error or not first.text.strip() or says_error(first.text):
        return  # an error is no value source: what it shows ("invalid value ''", "not found: X") is never an argument
    arguments = await _shortened(tool, arguments, first.text, call, run)
    second = await _logged(tool.name, arguments, call, run)
    if second.is_error:
        return
    observation = Observation(tool.name, arguments, first.text, first.text == second.text, fed)
    if substantive([first.text]):  # "No tickets match …" still shows values (what there is), but is no observation
        run.observations.append(observation)
    sent = {str(v) for v in arguments.values()}
    run.seen += [s for s in harvest(first.text, observation) if str(s.value) not in sent]


async def _logged(tool: str, arguments: dict[str, Any], call: CallTool, run: Exploration) -> CallOutcome:
    outcome = await call(tool, arguments)
    run.calls.append({"tool": tool, "arguments": arguments, "is_error": outcome.is_error,
                      "result": outcome.text[:2000]})
    return outcome


async def _shortened(tool: ToolDef, arguments: dict[str, Any], text: str, call: CallTool,
                     run: Exploration) -> dict[str, Any]:
    """Each absolute path argument replaced by its shortest trailing part that gives the same result."""
    for name, value in list(arguments.items()):
        if not isinstance(value, str) or not value.startswith("/") or "path" not in _kinds(tool, name):
            continue
        parts = value.strip("/").split("/")
        for start in range(len(parts) - 1, 0, -1):
            shorter = {**arguments, name: "/".join(parts[start:])}
            outcome = await _logged(tool.name, shorter, call, run)
            if not outcome.is_error and outcome.text == text:
                arguments = shorter
                break
    return arguments


def _kinds(tool: ToolDef, name: str) -> set[str]:
    kinds, shapes, _ = property_kinds(name, tool.properties.get(name) or {})
    return kinds | shapes


def harvest(text: str, source: Observation | None = None) -> list[Seen]:
    """The values a result shows, with their labels: every scalar of a JSON or Python-literal result, else each
    "Label: value" line and each value `find_values` reads (ids, paths, emails, dates, quoted text …)."""
    data = parse_literal(text.strip())
    found: list[Seen] = []
    asked = {str(v).strip().lower() for v in (source.arguments.values() if source else ()) if str(v).strip()}
    if data is not None:
        _walk(data, "", None, found, source, asked)
    else:
        for match in _LABELLED_LINE.finditer(_SENTENCE_END.sub(".\n", text)):
            label, value = " ".join(words(match.group(1))), match.group(2).strip().rstrip(".")
            items = [item.strip() for item in value.split(",")]
            if not label or len(label.split()) > 4 or names_item(match.group(1), asked):
                continue
            if len(items) > 1 and all(0 < len(item.split()) <= 3 for item in items):
                found += [Seen(item, label, kind_of(item), source=source) for item in items]
            else:
                found.append(Seen(value, label, kind_of(value), source=source))
        found += _prose_pairs(text, source)
        labelled = {str(s.value) for s in found}
        found += [Seen(f.value, "", f.kind, source=source) for f in find_values(text, 2, precise=True)
                  if (f.kind in ENTITY_KINDS or f.kind in ("quoted", "timezone")) and f.value not in labelled]
    counts: dict[str, int] = {}
    for seen in found:
        counts[seen.label] = counts.get(seen.label, 0) + 1
    return [Seen(s.value, s.label, s.kind, s.anchor, counts[s.label] > 1, s.source) for s in found]


def _prose_pairs(text: str, source: Observation | None) -> list[Seen]:
    """Values in prose with the one to three lower-case words right before them in their clause ("balance due
    $18.00", "opened 2026-01-24"), each anchored to the id, code or email that opens its record (a line, or a part
    between semicolons). Words joined to the value by a link ("customer since …", "belongs to …") label it only
    as far as they follow the last link ("… to patient P-0203": patient); words that end a capitalised name
    ("Company holidays 2026") and a number that begins one ("88 Cedar Court") label nothing."""
    out = []
    anchor: str | None = None
    record: int | None = None
    for found in find_values(text, 2, precise=True):
        start = max(text.rfind("\n", 0, found.position), text.rfind(";", 0, found.position))
        opens = start != record
        record = start
        if opens:
            anchor = found.value if found.kind in _ID_KINDS | {"email"} else None
        if found.kind == "quoted" or found.value == anchor:
            continue
        if found.kind == "number" and re.match(r"[ \t]+[A-Z]", text[found.position + len(found.value):]):
            continue
        label = _prose_label(_words_before(text, found.position), found.kind)
        if label:
            out.append(Seen(found.value, label, found.kind, anchor, source=source))
    return out


def _words_before(text: str, position: int) -> list[str]:
    """The lower-case words right before a position in its clause; none when they end a capitalised name."""
    clause = re.split(r"[,;:()\[\]\n]|[.!?]\s|\s[-–—]\s", text[:position])[-1]
    tokens = clause.split()
    head: list[str] = []
    for token in reversed(tokens):
        if len(head) == 3:
            break
        if not re.fullmatch(r"[a-z][a-z-]*", token):
            return [] if head and token[:1].isupper() else head
        head.insert(0, token)
    return head


def _prose_label(head: Sequence[str], kind: str) -> str:
    """The label the words before a value give it: those after the last link word; with none after it, a lone
    participle before the links names a date ("placed on 2026-01-02": placed date)."""
    cut = max((i for i, w in enumerate(head) if w in LINKS or w in STOPWORDS), default=-1)
    if cut < len(head) - 1:
        return clean_label(head[cut + 1:], kind, False)
    label = clean_label([w for w in head if w not in LINKS and w not in STOPWORDS][-1:], kind, False)
    return label if label.endswith(" date") else ""


def names_item(label: str, asked: Iterable[str] = ()) -> bool:
    """Whether a label is itself a value (an id, a date, a number, a path …) or the item the call asked for (an
    argument's value): it names which record the values are about, not a field of it."""
    return label.strip().lower() in asked or any(f.kind != "quoted" for f in find_values(label, 2, precise=True))


def _walk(data: Any, label: str, anchor: str | None, out: list[Seen], source: Observation | None,
          asked: Iterable[str]) -> None:
    if isinstance(data, dict):
        names = [v for v in data.values() if isinstance(v, str) and 0 < len(v) <= MAX_VALUE_CHARS]
        for key, value in data.items():
            own = next((v for v in names if v != value), None)  # the item, named by another of its fields
            item = str(key) if names_item(str(key), asked) else None  # {"E-00042": {…}}: a key that is a record
            name = "" if item else " ".join(w for w in words(str(key)))
            if name and set(name.split()) <= STOPWORDS | LINKS:
                name = ""
            if isinstance(value, dict | list):
                _walk(value, name, item or (names[0] if names else anchor), out, source, asked)
            elif _scalar(value):
                out.append(Seen(value, name, kind_of(str(value)), item or own or anchor, source=source))
    elif isinstance(data, list):
        for entry in data[:50]:
            if isinstance(entry, dict | list):
                _walk(entry, label, anchor, out, source, asked)
            elif _scalar(entry):
                out.append(Seen(entry, label, kind_of(str(entry)), anchor, source=source))


def _scalar(value: Any) -> bool:
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, str):
        return 0 < len(value.strip()) <= MAX_VALUE_CHARS and "\n" not in value
    return isinstance(value, int | float)


def kind_of(value: str) -> str:
    """The kind `find_values` gives a value that is one value, else number or text."""
    found = find_values(value, 2, precise=True)
    if len(found) == 1 and found[0].value == value.strip():
        return found[0].kind
    return "number" if re.fullmatch(r"-?\d+(?:\.\d+)?", value.strip()) else "text"


def fillings(tool: ToolDef, seen: Sequence[Seen], rng: random.Random) -> Iterable[tuple[dict[str, Any],
                                                                                          dict[str, Seen]]]:
    """Up to PER_TOOL argument sets for the tool's required parameters, best evidence first, then the same sets with
    every optional parameter a value the user gave fits (a repository path the tool would otherwise go without), and
    with each of them alone when there are several (a known tag that also fits `ref` does not hide the path alone);
    none when a required parameter has no candidate value."""
    options = {name: _candidates(name, tool.properties.get(name) or {}, seen, tool=tool.name)
               for name in tool.required}
    if any(not values for values in options.values()):
        return
    given = {name: found[0] for name in tool.properties if name not in options and (found := [
        option for option in _candidates(name, tool.properties.get(name) or {}, seen, tool=tool.name)
        if option[1] and option[1].given])}
    widest = max((len(values) for values in options.values()), default=1)
    sets = []
    for index in range(min(PER_TOOL * 2, widest)):
        picked = {name: values[min(index, len(values) - 1)] if index < PER_TOOL else rng.choice(values)
                  for name, values in options.items()}
        sets.append(picked)
        yield ({name: value for name, (value, _) in picked.items()},
               {name: seen for name, (_, seen) in picked.items() if seen is not None})
    extras = [given, *([{name: value} for name, value in given.items()] if len(given) > 1 else [])]
    for picked in sets[:PER_TOOL] if given else []:
        for extra in extras:
            both = {**picked, **extra}
            yield ({name: value for name, (value, _) in both.items()},
                   {name: seen for name, (_, seen) in both.items() if seen is not None})


def accepted(tool: ToolDef, observations: Sequence[Observation]) -> dict[str, Any]:
    """For each parameter of `tool`, the value successful calls (of any tool) passed most often to a parameter of the
    same name and JSON type: what the server is known to take there (`repo_path` accepted by one tool is the
    repository another tool's `repo_path` wants)."""
    out = {}
    for name, prop in tool.properties.items():
        taken = Counter(json.dumps(value) for o in observations if (value := o.arguments.get(name)) not in (None, "")
                        and not isinstance(value, dict | list) and _same_type(value, prop.get("type")))
        if taken:
            out[name] = json.loads(max(taken, key=lambda k: (taken[k], k)))
    return out


def _same_type(value: Any, kind: Any) -> bool:
    expected = {"string": str, "integer": int, "number": int | float, "boolean": bool}.get(str(kind))
    return expected is None or (isinstance(value, expected) and not (kind != "boolean" and isinstance(value, bool)))


def fitting(tool: ToolDef, seen: Sequence[Seen]) -> dict[str, Any]:
    """For a request that is not run: each parameter (required first) with the value the best evidence gives, only
    where a label shares a word with it, the value is of the kind it asks for, or its schema lists the value."""
    out = {}
    for name in tool.properties:
        values = _candidates(name, tool.properties.get(name) or {}, seen, strict=True, tool=tool.name)
        if values and (name in tool.required or values[0][1] is not None):
            out[name] = values[0][0]
    return out


def _candidates(name: str, prop: Mapping[str, Any], seen: Sequence[Seen], *, strict: bool = False, tool: str = ""
                ) -> list[tuple[Any, Seen | None]]:
    """Values for one parameter, best evidence first, without repeats; `strict` keeps only values that fit. A label
    shares a word with the parameter by what it names, not by an id word ("insurance number" is no `rx_number`);
    among values that fit as well, one whose label names what the tool is about comes first ("prescription" for
    `get_prescription`'s `rx_number`)."""
    kind = prop.get("type")
    if kind == "array":
        item = prop.get("items") or {}
        return [([value], origin) for value, origin in _candidates(name, item, seen, strict=strict, tool=tool)
                if not isinstance(value, list | dict)] if item.get("type", "string") != "object" else []
    if kind == "object":
        return []
    out: list[tuple[Any, Seen | None]] = [(v, None) for v in prop.get("enum") or []]
    out += [(prop[key], None) for key in ("default", "const") if prop.get(key) is not None]
    out += [(v, None) for v in prop.get("examples") or []]
    if kind == "boolean":
        return [*out, (False, None)]
    wanted, shapes, _ = property_kinds(name, prop)
    named = {stem(w) for w in words(name) if w not in ID_WORDS} - STOPWORDS
    about = {stem(w) for w in words(tool) if w not in ID_WORDS} - STOPWORDS - named
    free_text = bool(set(words(name)) & FREE_TEXT_WORDS)
    names_id = bool(set(words(name)) & ID_WORDS)
    numeric = kind in ("integer", "number")
    scored = []
    for position, s in enumerate(seen):
        value = str(s.value)
        label = {stem(w) for w in s.label.split()}
        overlap = len(named & label)
        fits = s.kind in wanted | shapes or (names_id and s.kind in _ID_KINDS)
        if numeric != (isinstance(s.value, int | float) or s.kind == "number"):
            continue
        if free_text and (len(value.split()) > 4 or re.search(r"[,;()]", value)):
            continue
        if (wanted or shapes) and not fits and not overlap and not free_text:
            continue
        if not (overlap or fits or (free_text or s.kind in ENTITY_KINDS) and not strict):
            continue
        if strict and s.source is None:  # a value the user gave, which no result has shown yet
            continue
        scored.append((-(3 * overlap + 2 * fits), not about & label, position, s))
    for *_, s in sorted(scored, key=lambda item: item[:3]):
        out.append(((float(s.value) if kind == "number" else int(float(s.value))) if numeric else str(s.value), s))
    if free_text and not strict:
        out += [(word, None) for word in _common_words(seen)]
    description = str(prop.get("description") or "")
    out += [(f.value, None) for f in find_values(description, 2, precise=True)
            if kind not in ("integer", "number", "boolean") and (f.kind in wanted | shapes or f.kind == "quoted")]
    out += [(SYNTHESISED[k], None) for k in sorted(wanted) if k in SYNTHESISED]
    if not out and kind in (None, "string") and not strict:
        out.append(("", None))  # a probe: what the server answers (often an error that shows the format) is evidence
    unique: dict[str, tuple[Any, Seen | None]] = {}
    for value, origin in out:
        unique.setdefault(json.dumps(value, sort_keys=True), (value, origin))
    return list(unique.values())


def _common_words(seen: Sequence[Seen], top: int = 5) -> list[str]:
    """The content words results show most often (a search term that should find something)."""
    counts: dict[str, int] = {}
    for s in seen:
        if s.source is not None and s.kind == "text":
            for word in words(str(s.value)):
                if len(word) >= 4 and word not in STOPWORDS and not word.isdigit():
                    counts[word] = counts.get(word, 0) + 1
    return [w for w, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:top]]

