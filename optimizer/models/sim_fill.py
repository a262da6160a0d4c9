"""How the offline agents fill tool arguments: values found in the task text (then in earlier tool
results), matched to parameters by type, enum, format, pattern, name and description — the same
things a real model reads."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from optimizer.text import STOPWORDS, words

PATTERNS: dict[str, re.Pattern[str]] = {
    "email": re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"),
    "url": re.compile(r"https?://[^\s\"'<>]+"),
    "date": re.compile(r"\b\d{4}-\d{2}-\d{2}\b"),
    "money": re.compile(r"\$\s?\d[\d,]*(?:\.\d+)?"),
    "hash_id": re.compile(r"#\d{3,}\b"),
    "prefixed_id": re.compile(r"\b[A-Za-z]{1,6}-\d{1,8}\b"),
    "phone": re.compile(r"\+?\d[\d\-\s().]{7,}\d"),
    "path": re.compile(r"\b[\w.-]+(?:/[\w.-]+)+\b"),
    "quoted": re.compile(r"\"([^\"]{1,200})\"|'([^']{2,200})'|“([^”]{1,200})”"),
    "number": re.compile(r"(?<![\w#$-])-?\d+(?:\.\d+)?\b(?![-/])"),
}
KIND_WORDS: dict[str, frozenset[str]] = {
    "email": frozenset({"email", "mail", "e-mail"}),
    "url": frozenset({"url", "link", "uri", "website"}),
    "date": frozenset({"date", "day", "yyyy", "iso", "deadline", "due", "when", "start", "end", "since"}),
    "phone": frozenset({"phone", "telephone", "mobile"}),
    "path": frozenset({"path", "folder", "directory", "file", "filename"}),
    "money": frozenset({"amount", "price", "cents", "dollars", "usd", "total", "cost"}),
}
ID_WORDS = frozenset({"id", "ids", "key", "number", "ref", "reference", "identifier", "code", "no"})
FREE_TEXT_WORDS = frozenset(
    {"query", "q", "search", "text", "keywords", "keyword", "term", "terms", "filter", "question", "topic"}
)
PROSE_WORDS = frozenset({"title", "summary", "body", "description", "subject", "reason", "note", "notes",
                         "message", "comment", "content", "details", "name"})


@dataclass(frozen=True)
class Found:
    """A value seen in text, with its kind and where it came from (0 = clause, 1 = prompt, 2 = results)."""

    kind: str
    value: str
    origin: int


def find_values(text: str, origin: int) -> list[Found]:
    found: list[Found] = []
    taken: list[tuple[int, int]] = []
    for kind in ("email", "url", "date", "money", "hash_id", "prefixed_id", "path", "phone", "quoted", "number"):
        for match in PATTERNS[kind].finditer(text):
            span = match.span()
            if any(span[0] < end and start < span[1] for start, end in taken):
                continue
            value = next((g for g in match.groups() if g), None) if kind == "quoted" else match.group(0)
            taken.append(span)
            found.append(Found(kind, (value or "").strip(), origin))
    return found


def shapes_in(text: str) -> set[str]:
    """Which value kinds a description or error message shows by example (`C-1042`, `#12345`, ISO dates)."""
    kinds = {f.kind for f in find_values(text, 0) if f.kind not in ("quoted", "number")}
    lowered = text.lower()
    if "yyyy-mm-dd" in lowered or "iso 8601" in lowered or "iso date" in lowered:
        kinds.add("date")
    if re.search(r"#\s?n{3,}|#\d|with the #|leading #", lowered):
        kinds.add("hash_id")
    return kinds


def wants_cents(hint: str) -> bool:
    return bool(re.search(r"\bcents?\b|minor units|smallest currency unit", hint.lower()))


def property_kinds(name: str, prop: Mapping[str, Any]) -> tuple[set[str], set[str], str]:
    """(kinds named by the parameter, kinds shown by example in its description, its hint text)."""
    description = str(prop.get("description") or "")
    hint = " ".join([name, description, str(prop.get("format") or ""), str(prop.get("title") or "")])
    tokens = set(words(hint))
    kinds = {kind for kind, vocab in KIND_WORDS.items() if tokens & vocab}
    fmt = str(prop.get("format") or "")
    if fmt in ("date", "date-time"):
        kinds.add("date")
    if fmt == "email":
        kinds.add("email")
    if fmt in ("uri", "url"):
        kinds.add("url")
    shapes = shapes_in(description) | shapes_in(str(prop.get("pattern") or "").replace("\\d", "1"))
    return kinds, shapes, hint


def fill_arguments(
    schema: Mapping[str, Any], clause: str, prompt: str, results: Sequence[str], prefer: set[str] = frozenset()
) -> dict[str, Any]:
    """Arguments for a call: every required parameter, plus optional ones with a confident value."""
    found = find_values(clause, 0) + find_values(prompt, 1)
    for text in results:
        found += find_values(text, 2)
    props: Mapping[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    args: dict[str, Any] = {}
    used: set[str] = set()
    for name, prop in props.items():
        if not isinstance(prop, Mapping):
            continue
        value = _value_for(name, prop, found, used, clause, prefer, required=name in required)
        if value is not None:
            args[name] = value
            used.add(str(value))
    return args


def _value_for(
    name: str, prop: Mapping[str, Any], found: list[Found], used: set[str], clause: str, prefer: set[str],
    *, required: bool,
) -> Any:
    kinds, shapes, hint = property_kinds(name, prop)
    ptype = prop.get("type")
    if "enum" in prop:
        return _enum_value(prop["enum"], clause, required)
    if ptype == "boolean":
        return None
    if ptype in ("integer", "number") or "money" in kinds:
        return _numeric_value(found, ptype, hint, kinds, required)
    wanted = (shapes | prefer | (kinds - {"money"})) or set()
    pool = [f for f in found if f.value not in used and f.kind not in ("number", "money")]
    ranked = sorted(pool, key=lambda f: (f.origin, 0))
    for f in ranked:
        if f.kind in wanted:
            return f.value
    tokens = set(words(name))
    if wanted and not required:
        return None
    entities = [f for f in ranked if f.kind in ("email", "hash_id", "prefixed_id", "phone", "path", "url", "date")]
    if tokens & FREE_TEXT_WORDS:
        quoted = [f.value for f in found if f.kind == "quoted" and f.origin == 0]
        local = [f.value for f in entities if f.origin == 0]
        return quoted[0] if quoted else local[0] if local else _keywords(clause)
    if tokens & PROSE_WORDS and not wanted:
        quoted = [f.value for f in found if f.kind == "quoted"]
        return quoted[0] if quoted else (clause.strip() if required else None)
    if entities and (required or tokens & ID_WORDS):
        return entities[0].value
    return _keywords(clause) if required else None


def _enum_value(options: Sequence[Any], clause: str, required: bool) -> Any:
    lowered = set(words(clause))
    for option in options:
        if isinstance(option, str) and set(words(option)) and set(words(option)) <= lowered:
            return option
    return options[0] if required and options else None


def _numeric_value(found: list[Found], ptype: Any, hint: str, kinds: set[str], required: bool) -> Any:
    money = [f for f in found if f.kind == "money" and f.origin < 2]
    numbers = [f for f in found if f.kind == "number" and f.origin < 2]
    if money and ("money" in kinds or not numbers):
        amount = float(money[0].value.replace("$", "").replace(",", "").strip())
        if wants_cents(hint):
            return int(round(amount * 100))
        return int(amount) if ptype == "integer" else amount
    if numbers:
        value = float(numbers[0].value)
        return int(value) if ptype == "integer" else value
    return None if not required else 1


def _keywords(text: str) -> str:
    kept = [w.strip(".,") for w in re.findall(r"[\w@.#/-]+", text) if w.lower().strip(".,") not in STOPWORDS]
    return " ".join(kept[:8]) or text.strip()
