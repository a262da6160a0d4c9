"""Values in text, read as their kinds (emails, ids, dates, amounts, paths, quoted strings …), and the kinds a
parameter asks for. Shared by the offline agents (which fill arguments with them) and the proposers (which read
what an agent sent and what a description shows); neither owns it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from optimizer.text.tokens import words

_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?"
_AMPM = r"(?:[AaPp]\.?[Mm]\.?)(?![A-Za-z])"
_CURRENCY = "$€£¥"
NUMBER_WORDS = {w: i for i, w in enumerate(
    ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"), start=1)}
_HOUR_WORD = f"(?:{'|'.join(NUMBER_WORDS)})"
_DAYPART = rf"(?:in the (?:morning|afternoon|evening)|at night|{_AMPM})"
# IANA zone areas (the tz database's own top level), so that America/New_York reads as a zone, not a path
TZ_AREAS = ("Africa", "America", "Antarctica", "Arctic", "Asia", "Atlantic", "Australia", "Europe", "Indian",
            "Pacific", "Etc")
PATTERNS: dict[str, re.Pattern[str]] = {
    "email": re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"),
    "url": re.compile(r"https?://[^\s\"'<>]+"),
    "datetime": re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?(?![\w:])"),
    "date": re.compile(r"\b\d{4}-\d{2}-\d{2}\b"),
    "money": re.compile(r"\$\s?\d[\d,]*(?:\.\d+)?"),
    "hash_id": re.compile(r"#\d{3,}\b"),
    "uuid": re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"),
    "prefixed_id": re.compile(r"\b[A-Za-z]{1,6}-\d{1,8}\b"),
    "date_text": re.compile(
        rf"\b(?:{_MONTH} \d{{1,2}}(?:st|nd|rd|th)?,? \d{{4}}"
        rf"|\d{{1,2}}(?:st|nd|rd|th)?(?: of)? {_MONTH},? \d{{4}})(?!\d)"
    ),
    "time": re.compile(
        rf"(?<![\w:.])(?:(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d)?(?:\s?{_AMPM})?(?![\w:])"
        rf"|(?:1[0-2]|0?[1-9])\s?{_AMPM}"
        rf"|(?:(?:half|quarter) (?:past|to) )?{_HOUR_WORD}(?: o'clock)?(?: {_DAYPART})(?!\w)"
        rf"|(?:half|quarter) (?:past|to) {_HOUR_WORD}(?: o'clock)?(?!\w)|{_HOUR_WORD} o'clock(?!\w)"
        rf"|\b(?:noon|midnight)\b)",
        re.IGNORECASE,
    ),
    "timezone": re.compile(rf"\b(?:{'|'.join(TZ_AREAS)})/[A-Z][A-Za-z_+-]*(?:/[A-Z][A-Za-z_+-]*)?(?![\w/])"),
    "phone": re.compile(r"\+?\d[\d\-\s().]{7,}\d"),
    "code": re.compile(r"\b(?:(?=[A-Za-z0-9]*\d)(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{8,}"
                       r"|(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7})\b"),
    # absolute, home (~/x), dotted (./x, ../x) and relative paths with a slash, a folder with its trailing slash
    # (web/), bare file names with an extension
    "path": re.compile(
        r"(?<![\w@:/~.-])(?:(?:~|\.{1,2})?/[\w.~-]*[\w~](?:/[\w.~-]+)*/?|~(?![\w/])"
        r"|[\w.-]*[A-Za-z_][\w.-]*(?:/[\w.-]+)+/?|[\w.-]*[A-Za-z_][\w.-]+/(?![\w.])"
        r"|[\w-]+(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{0,5}(?![\w/@-]))"
    ),
    "quoted": re.compile(r"\"([^\"]{1,200})\"|(?<!\w)'([^']{2,200})'(?!\w)|“([^”]{1,200})”|‘([^’]{1,200})’(?!\w)"
                         r"|`([^`]{1,200})`"),
    "number": re.compile(r"(?<![\w#$-])-?\d+(?:\.\d+)?\b(?![-/])"),
}
PRECISE: dict[str, re.Pattern[str]] = {
    **PATTERNS,
    # a currency sign before the amount ($1,200.50, €12.50, £1,200) or after it (12,50 €)
    "money": re.compile(rf"[{_CURRENCY}]\s?\d+(?:[.,]\d+)*|(?<![\w.,])\d+(?:[.,]\d+)*\s?[{_CURRENCY}]"),
    # P-0042, INV-2026-0052; not the tail of a longer hyphenated name (pg-main-1)
    "prefixed_id": re.compile(r"(?<![\w-])[A-Za-z]{1,6}-\d{1,8}(?:-\d{1,8})*\b"),
    "date_text": re.compile(
        PATTERNS["date_text"].pattern
        # day, month and year in digits with dots or slashes (07.12.2026, 13/10/2026), the same separator twice
        + r"|(?<![\w.,/-])(?:0?[1-9]|[12]\d|3[01])([./])(?:0?[1-9]|1[0-2])\1\d{4}(?![\w.,/-]*\d)"
    ),
    "code": re.compile(
        PATTERNS["code"].pattern
        # three or more parts joined by dots, one with a digit (4.2.1, AB.12.7, v1.2.3): not a number
        + r"|(?<![\w.])(?=[A-Za-z0-9.]*\d)[A-Za-z0-9]+(?:\.[A-Za-z0-9]+){2,}(?![\w]|\.\w)"
    ),
}
"""Values read as what they are where `PATTERNS` reads them as something else: € and £ amounts, ids of several
parts, dotted and slashed day-first dates, dotted codes. Task generation reads with it (`find_values(...,
precise=True)`). The proposers' evidence and the leakage guard still read with `PATTERNS`: moving them over changes
the requests every bundled recording holds, so it waits for the recordings to be made again."""
# paths before dates and ids: notes/standup-2026-05-04.md is one path
_ORDER = ("email", "url", "timezone", "path", "datetime", "date", "date_text", "time", "money", "hash_id", "uuid",
          "prefixed_id", "code", "phone", "quoted", "number")
# web domains are not file names (example.com); two one-letter parts are an abbreviation (e.g, i.e)
_NOT_FILES = re.compile(r"(?:[^/]*\.(?:com|org|net|edu|gov|io|co|uk|de|fr|jp))$|^\w\.\w$", re.IGNORECASE)
_FILE_NAME = re.compile(r"[^/.~]\.[A-Za-z][A-Za-z0-9]{0,5}$")
KIND_WORDS: dict[str, frozenset[str]] = {
    "email": frozenset({"email", "mail", "e-mail"}),
    "url": frozenset({"url", "link", "uri", "website"}),
    "date": frozenset({"date", "day", "yyyy", "iso", "deadline", "due", "when", "start", "end", "since"}),
    "phone": frozenset({"phone", "telephone", "mobile"}),
    "time": frozenset({"time", "clock", "hh"}),
    "timezone": frozenset({"timezone", "tz", "iana"}),
    "path": frozenset({"path", "folder", "directory", "file", "filename"}),
    "money": frozenset({"amount", "price", "cents", "dollars", "usd", "total", "cost"}),
}
ID_WORDS = frozenset({"id", "ids", "key", "number", "ref", "reference", "identifier", "code", "no", "slug", "handle",
                      "uuid"})
FREE_TEXT_WORDS = frozenset(
    {"query", "q", "search", "text", "keywords", "keyword", "term", "terms", "filter", "question", "topic"}
)
PROSE_WORDS = frozenset({"title", "summary", "body", "description", "subject", "reason", "note", "notes",
                         "message", "comment", "content", "details", "name"})


ENTITY_KINDS = ("email", "hash_id", "uuid", "prefixed_id", "code", "phone", "path", "url", "date", "datetime",
                "date_text")
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
                "hash_id": "number", "prefixed_id": "id",
                "uuid": "id", "datetime": "date", "code": "number", "phone": "phone", "path": "path"}


def describe_values(text: str) -> str:
    """The text with each recognisable value replaced by the word for its kind, as a reader sees it:
    `jane@x.com` reads as "email", `#10007` as "number"."""
    pieces, last = [], 0
    for f in sorted(find_values(text, 0), key=lambda f: f.position):
        word = _path_word(f.value) if f.kind == "path" else KIND_AS_WORD.get(f.kind)
        if word is None:
            continue
        start = text.find(f.value, f.position)
        if start < last:
            continue
        pieces += [text[last:start], f" {word} "]
        last = start + len(f.value)
    return "".join(pieces) + text[last:]


def _path_word(path: str) -> str:
    """How a reader names a path by its shape: one whose last part has an extension names a file
    (`docs/setup.md`), one with a trailing slash a folder (`web/`); any other is just a path."""
    if path.endswith("/"):
        return "folder path"
    return "file path" if names_a_file(path) else "path"


def names_a_file(path: str) -> bool:
    """Whether a path's last part has a file extension (`docs/setup.md`, not `docs`, `.bashrc` or `web/`)."""
    return bool(_FILE_NAME.search(path))


def find_values(text: str, origin: int, *, precise: bool = False) -> list[Found]:
    """Values in reading order (then by kind precedence where spans would overlap); `precise` reads with
    `PRECISE`."""
    return list(_find_values(text, origin, precise))


@lru_cache(maxsize=16_384)
def _find_values(text: str, origin: int, precise: bool = False) -> tuple[Found, ...]:
    patterns = PRECISE if precise else PATTERNS
    found: list[Found] = []
    taken: list[tuple[int, int]] = []
    for match in patterns["quoted"].finditer(text):  # a quoted phrase is one value, unless it is one value inside
        value = next((g for g in match.groups() if g), "").strip()
        if value and not _one_value(value, patterns):
            taken.append(match.span())
            found.append(Found("quoted", value, origin, match.start()))
    for kind in _ORDER:
        for match in patterns[kind].finditer(text) if kind != "quoted" else ():
            value = match.group(0)
            if kind == "path":
                value = value.rstrip(".,")
                if not _is_path(value):
                    continue
            span = (match.start(), match.start() + len(value))
            if any(span[0] < end and start < span[1] for start, end in taken):
                continue
            taken.append(span)
            found.append(Found(kind, value.strip(), origin, span[0]))
    return tuple(sorted(found, key=lambda f: f.position))


def _one_value(text: str, patterns: Mapping[str, re.Pattern[str]] = PATTERNS) -> bool:
    """The whole text is a single value of a kind other than a quoted string or a number."""
    return any(kind not in ("quoted", "number") and (m := patterns[kind].fullmatch(text)) is not None
               and (kind != "path" or _is_path(m.group(0))) for kind in _ORDER)


def _is_path(value: str) -> bool:
    if not re.search(r"[A-Za-z~]", value):  # 2024/01/05, 1/2
        return False
    return "/" in value or value == "~" or not _NOT_FILES.search(value)


def amount(text: str) -> float | None:
    """The number a money value states, whatever its currency sign and separators: `$1,200.50`, `£1,200` and
    `12,50 €` read as 1200.5, 1200 and 12.5 (the last comma or dot is the decimal point unless three digits follow
    it; the others group thousands)."""
    digits = re.sub(rf"[\s{_CURRENCY}]", "", text)
    if not re.fullmatch(r"-?\d+(?:[.,]\d+)*", digits):
        return None
    last = re.search(r"[.,](\d+)$", digits)
    decimal = last is not None and (len(last.group(1)) != 3 or re.fullmatch(r"-?0", digits[:last.start()]))
    whole, fraction = (digits[:last.start()], last.group(1)) if last is not None and decimal else (digits, "")
    return float(re.sub(r"[.,]", "", whole) + ("." + fraction if fraction else ""))


def shapes_in(text: str) -> set[str]:
    """Which value kinds a description or error message shows by example (`C-1042`, `#12345`, ISO dates)."""
    kinds = {f.kind for f in find_values(text, 0) if f.kind not in ("quoted", "number")}
    lowered = text.lower()
    if "yyyy-mm-dd" in lowered or "iso 8601" in lowered or "iso date" in lowered:
        kinds.add("date")
    if re.search(r"#\s?n{3,}|#\d|with the #|leading #", lowered):
        kinds.add("hash_id")
    if re.search(r"\bhh:mm\b", lowered):
        kinds.add("time")
    if re.search(r"\bdate-?time\b|\btimestamp\b|yyyy-mm-ddthh", lowered):
        kinds.add("datetime")
    return kinds


def wants_cents(hint: str) -> bool:
    return bool(re.search(r"\bcents?\b|minor units|smallest currency unit", hint.lower()))


def property_kinds(name: str, prop: Mapping[str, Any]) -> tuple[set[str], set[str], str]:
    """(kinds named by the parameter, kinds shown by example in its description, its hint text)."""
    kinds, shapes, hint = _property_kinds(name, str(prop.get("description") or ""), str(prop.get("format") or ""),
                                          str(prop.get("title") or ""), str(prop.get("pattern") or ""))
    return set(kinds), set(shapes), hint


@lru_cache(maxsize=16_384)
def _property_kinds(name: str, description: str, fmt: str, title: str,
                    pattern: str) -> tuple[frozenset[str], frozenset[str], str]:
    hint = " ".join([name, description, fmt, title])
    tokens = set(words(hint))
    kinds = {kind for kind, vocab in KIND_WORDS.items() if tokens & vocab}
    if "timezone" in kinds or {"time", "zone"} <= tokens:  # a zone is asked for, not a clock time
        kinds = (kinds - {"time"}) | {"timezone"}
    if fmt in ("date", "date-time"):
        kinds.add("date")
    if fmt in ("date-time", "time"):
        kinds.add("datetime" if fmt == "date-time" else "time")
    if fmt == "email":
        kinds.add("email")
    if fmt in ("uri", "url"):
        kinds.add("url")
    shapes = shapes_in(description) | shapes_in(pattern.replace("\\d", "1"))
    if fmt in ("date", "date-time"):  # a format is a shape asked for, like an example in the description
        shapes.add("date")
    return frozenset(kinds), frozenset(shapes), hint


def takes_sql(hint: str) -> bool:
    """Whether a parameter's hint text asks for an SQL statement ("SQL query", "SELECT query to run")."""
    lowered = hint.lower()
    return "sql" in lowered.split() or ("select" in lowered and ("sql" in lowered or "query" in lowered))
