"""Values in text, read as their kinds (emails, ids, dates, amounts, paths, quoted strings …), and the kinds a
parameter asks for. Shared by the offline agents (which fill arguments with them) and the proposers (which read
what an agent sent and what a description shows); neither owns it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from optimizer.text import words

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
