"""How the offline agents fill tool arguments: values found in the task text (then in earlier tool
results), matched to parameters by type, enum, format, pattern, name and description — the same
things a real model reads."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from optimizer.text import STOPWORDS, terms, words

PATTERNS: dict[str, re.Pattern[str]] = {
    "email": re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"),
    "url": re.compile(r"https?://[^\s\"'<>]+"),
    "date": re.compile(r"\b\d{4}-\d{2}-\d{2}\b"),
    "money": re.compile(r"\$\s?\d[\d,]*(?:\.\d+)?"),
    "hash_id": re.compile(r"#\d{3,}\b"),
    "prefixed_id": re.compile(r"\b[A-Za-z]{1,6}-\d{1,8}\b"),
    "date_text": re.compile(
        r"\b(?:(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.? \d{1,2}(?:st|nd|rd|th)?,? \d{4}"
        r"|\d{1,2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]* \d{4})\b"
    ),
    "phone": re.compile(r"\+?\d[\d\-\s().]{7,}\d"),
    "code": re.compile(r"\b(?=[A-Za-z0-9]*\d)(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{8,}\b"),
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


ENTITY_KINDS = ("email", "hash_id", "prefixed_id", "code", "phone", "path", "url", "date", "date_text")
MONTHS = {m: i for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), start=1)}


@dataclass(frozen=True)
class Found:
    """A value seen in text, with its kind and where it came from (0 = clause, 1 = prompt, 2 = results)."""

    kind: str
    value: str
    origin: int
    position: int = 0


KIND_AS_WORD = {"email": "email", "url": "link", "date": "date", "date_text": "date", "money": "amount",
                "hash_id": "number", "prefixed_id": "id", "code": "number", "phone": "phone", "path": "path"}


def describe_values(text: str) -> str:
    """The text with each recognisable value replaced by the word for its kind, as a reader sees it:
    `jane@x.com` reads as "email", `#10007` as "number"."""
    pieces, last = [], 0
    for f in sorted(find_values(text, 0), key=lambda f: f.position):
        word = KIND_AS_WORD.get(f.kind)
        if word is None:
            continue
        start = text.find(f.value, f.position)
        if start < last:
            continue
        pieces += [text[last:start], f" {word} "]
        last = start + len(f.value)
    return "".join(pieces) + text[last:]


def find_values(text: str, origin: int) -> list[Found]:
    """Values in reading order (then by kind precedence where spans would overlap)."""
    return list(_find_values(text, origin))


@lru_cache(maxsize=16_384)
def _find_values(text: str, origin: int) -> tuple[Found, ...]:
    found: list[Found] = []
    taken: list[tuple[int, int]] = []
    for kind in ("email", "url", "date", "date_text", "money", "hash_id", "prefixed_id", "path", "code", "phone",
                 "quoted", "number"):
        for match in PATTERNS[kind].finditer(text):
            span = match.span()
            if any(span[0] < end and start < span[1] for start, end in taken):
                continue
            value = next((g for g in match.groups() if g), None) if kind == "quoted" else match.group(0)
            taken.append(span)
            found.append(Found(kind, (value or "").strip(), origin, span[0]))
    return tuple(sorted(found, key=lambda f: f.position))


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
    schema: Mapping[str, Any], clause: str, prompt: str, results: Sequence[str], prefer: AbstractSet[str] = frozenset()
) -> dict[str, Any]:
    """Arguments for a call: every required parameter, plus optional ones with a confident value.
    Parameters that ask for a kind of value (an email, a date, an id shape) choose first, so a vague
    parameter listed before them cannot take the value they name."""
    found = find_values(clause, 0) + find_values(prompt, 1)
    for text in results:  # successful results only: an error's example value is not data
        found += find_values(text, 2)
    props: Mapping[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    args: dict[str, Any] = {}
    used: set[str] = set()
    typed = {name: bool(set().union(*property_kinds(name, prop)[:2])) for name, prop in props.items()
             if isinstance(prop, Mapping)}
    for name in sorted(typed, key=lambda n: not typed[n]):
        value = _value_for(name, props[name], found, used, clause, prefer, required=name in required)
        if value is not None:
            args[name] = value
            used.add(str(value))
    return {name: args[name] for name in props if name in args}


def _value_for(
    name: str, prop: Mapping[str, Any], found: list[Found], used: set[str], clause: str, prefer: AbstractSet[str],
    *, required: bool,
) -> Any:
    kinds, shapes, hint = property_kinds(name, prop)
    ptype = prop.get("type")
    if "enum" in prop:
        return _enum_value(prop["enum"], clause, required)
    if ptype == "boolean":
        return None
    if ptype in ("integer", "number"):
        return _numeric_value(found, ptype, hint, kinds, required)
    listed = _listed_options(str(prop.get("description") or ""))
    if listed:
        return _enum_value(listed, clause, required=False) or (_keywords(clause) if required else None)
    shaped = shapes | prefer
    wanted = shaped | (kinds - {"money"})
    pool = [f for f in found if f.value not in used and f.kind not in ("number", "money")]
    ranked = sorted(pool, key=lambda f: (f.origin, f.position))
    for f in ranked:
        if f.kind in shaped:
            return f.value
    converted = _convert(found, shaped)
    if converted is not None:
        return converted
    for f in ranked:
        if f.kind in wanted or (f.kind == "date_text" and "date" in wanted):
            return f.value
    tokens = set(words(name))
    if wanted and not required:
        return None
    entities = [f for f in ranked if f.kind in ENTITY_KINDS]
    if tokens & FREE_TEXT_WORDS:
        quoted = [f.value for f in found if f.kind == "quoted" and f.origin == 0]
        local = [f.value for f in entities if f.origin == 0]
        return quoted[0] if quoted else local[0] if local else _keywords(clause)
    if tokens & PROSE_WORDS and not wanted:
        quoted = [f.value for f in found if f.kind == "quoted" and f.value not in used]
        return quoted[0] if quoted else (clause.strip() if required else None)
    if entities and (required or tokens & ID_WORDS):
        return entities[0].value
    return _keywords(clause) if required else None


def _convert(found: list[Found], shaped: set[str]) -> str | None:
    """Reformat a value toward a shape the definition or an error asked for (`#` ids, ISO dates)."""
    for f in sorted(found, key=lambda f: f.origin):
        if "hash_id" in shaped and f.kind == "number" and re.fullmatch(r"\d{3,}", f.value):
            return f"#{f.value}"
        if "date" in shaped and f.kind == "date_text":
            return _iso(f.value)
    return None


def _iso(text: str) -> str:
    parts = re.findall(r"[A-Za-z]+|\d+", text)
    month = next(MONTHS[p[:3].lower()] for p in parts if p[:3].lower() in MONTHS)
    numbers = [int(p) for p in parts if p.isdigit()]
    year = next(n for n in numbers if n > 31)
    day = next(n for n in numbers if n <= 31)
    return f"{year:04d}-{month:02d}-{day:02d}"


def _listed_options(description: str) -> list[str]:
    """Values a description offers as a closed list ("one of: a, b or c")."""
    match = re.search(r"\b(?:one of|either|must be|can be)[:\s]+([^.;()]+)", description, re.IGNORECASE)
    if not match:
        return []
    options = [o.strip(" '\"`") for o in re.split(r",|\bor\b", match.group(1))]
    return [o for o in options if o and len(o.split()) <= 3]


def _enum_value(options: Sequence[Any], clause: str, required: bool) -> Any:
    lowered = set(terms(clause))
    for option in options:
        if isinstance(option, str) and set(terms(option)) and set(terms(option)) <= lowered:
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
