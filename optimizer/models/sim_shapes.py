"""Value shapes the offline agents write a parameter in, as any real model would: clock times in the form a
description asks for, ISO dates and date-times, time zones by their IANA names (a place named in the text maps
to its zone through the standard library's time zone database), glob patterns and simple SQL reads. Each
builder reads the parameter's own hint (name, description, format) and the text; nothing here knows a server."""

from __future__ import annotations

import re
import unicodedata
import zoneinfo
from functools import lru_cache

from optimizer.models.sim_zones import database_places
from optimizer.text import stem, words
from optimizer.values import MONTHS, NUMBER_WORDS, TZ_AREAS, find_values


def clock(text: str) -> tuple[int, int, int] | None:
    """(hour, minute, second) of a time as `optimizer.values` reads it: 14:30, 2:30 pm, 9am, noon,
    "half past three in the afternoon", "quarter to five"."""
    lowered = text.lower().strip()
    if lowered in ("noon", "midday"):
        return 12, 0, 0
    if lowered == "midnight":
        return 0, 0, 0
    digits = re.match(r"(\d{1,2})(?::(\d{2}))?(?::(\d{2}))?", lowered)
    if digits:
        hour, minute, second = int(digits.group(1)), int(digits.group(2) or 0), int(digits.group(3) or 0)
    else:
        named = re.search(r"(?:(half|quarter) (past|to) )?(" + "|".join(NUMBER_WORDS) + r")\b", lowered)
        if not named:
            return None
        hour, minute, second = NUMBER_WORDS[named.group(3)], 0, 0
        if named.group(1):
            minute = 30 if named.group(1) == "half" else 15
            if named.group(2) == "to":
                hour, minute = (hour - 1) % 12 or 12, 60 - minute
    later = re.search(r"\bp\.?m\b|afternoon|evening|night", lowered)
    earlier = re.search(r"\ba\.?m\b|morning", lowered)
    if later and hour < 12:
        hour += 12
    elif earlier and hour == 12:
        hour = 0
    return (hour, minute, second) if hour < 24 and minute < 60 and second < 60 else None


def format_time(hms: tuple[int, int, int], hint: str) -> str:
    """The time in the form the hint asks for: HH:MM:SS, 12-hour with AM/PM, else 24-hour HH:MM."""
    hour, minute, second = hms
    lowered = hint.lower()
    if re.search(r"hh:mm:ss", lowered):
        return f"{hour:02d}:{minute:02d}:{second:02d}"
    if re.search(r"12-?\s?hour|\bam/pm\b|\bh:mm\s?a\b", lowered):
        return f"{hour % 12 or 12}:{minute:02d} {'PM' if hour >= 12 else 'AM'}"
    return f"{hour:02d}:{minute:02d}"


def iso_date(text: str) -> str | None:
    """YYYY-MM-DD of an ISO date or date-time, or of a written date ("March 4, 2026", "4th of March 2026")."""
    iso = re.match(r"\d{4}-\d{2}-\d{2}", text)
    if iso:
        return iso.group(0)
    parts = re.findall(r"[A-Za-z]+|\d+", text)
    month = next((MONTHS[p[:3].lower()] for p in parts if p[:3].lower() in MONTHS), None)
    numbers = [int(p) for p in parts if p.isdigit()]
    year = next((n for n in numbers if n > 31), None)
    day = next((n for n in numbers if 1 <= n <= 31), None)
    if month is None or year is None or day is None:
        return None
    return f"{year:04d}-{month:02d}-{day:02d}"


def iso_datetime(date: str, hms: tuple[int, int, int] | None) -> str:
    hour, minute, second = hms or (0, 0, 0)
    return f"{date}T{hour:02d}:{minute:02d}:{second:02d}"


def zones_in(text: str) -> list[tuple[int, str]]:
    """(position, IANA zone) for every zone the text names: IANA names themselves, UTC/GMT, and places
    whose name is a zone's location ("Tokyo" → Asia/Tokyo, "New York" → America/New_York)."""
    folded = _fold(text)
    out: list[tuple[int, str]] = []
    taken: list[tuple[int, int]] = []
    for match in _zone_pattern().finditer(folded):
        name = match.group(0)
        if not name[0].isupper() or any(s < match.end() and match.start() < e for s, e in taken):
            continue
        zone = _places().get(name.lower().replace(" ", "_"))
        if zone:
            taken.append(match.span())
            out.append((match.start(), zone))
    return out


@lru_cache(maxsize=1)
def _places() -> dict[str, str]:
    """Lower-cased locations (underscored) and zone names → the zone. A location goes to a zone in one of
    the database's areas before an old alias of the same place (Tokyo → Asia/Tokyo, not Japan)."""
    zones = sorted(zoneinfo.available_timezones() - {"Factory", "localtime"},
                   key=lambda z: (z.split("/")[0] not in TZ_AREAS, len(z), z))
    places: dict[str, str] = {}
    for zone in zones:
        if "/" in zone and not zone.startswith("Etc/"):
            places.setdefault(zone.rsplit("/", 1)[1].lower(), zone)
    for zone in zones:
        if len(zone) > 2:  # not GB or NZ, which read as units and words more often than as zones
            places.setdefault(zone.lower(), zone)
    for place, zone in database_places().items():  # "Beijing", "India", "JST"
        places.setdefault(place, zone)
    return places


@lru_cache(maxsize=1)
def _zone_pattern() -> re.Pattern[str]:
    keys = sorted(_places(), key=len, reverse=True)
    alternatives = "|".join(re.escape(k).replace("_", "[ _]") for k in keys)
    return re.compile(rf"(?<![\w/])(?:{alternatives})(?![\w/])", re.IGNORECASE)


def _fold(text: str) -> str:
    """Accents dropped, one character for one (São Paulo → Sao Paulo), so positions still match."""
    return "".join(unicodedata.normalize("NFKD", c)[0] for c in text)


_FILE_TYPES = {"markdown": "md", "python": "py", "text": "txt", "javascript": "js", "typescript": "ts",
               "yaml": "yaml", "json": "json", "csv": "csv", "html": "html", "log": "log", "image": "png"}


def glob_for(text: str, hint: str) -> str | None:
    """A glob for what the text names: a glob written out (*.md), a named extension or file type
    (".md files", "markdown files"), a file name, else a name to match ("files named report" → *report*). "**/" in front
    when the hint offers it and the text asks to look in every folder."""
    written = re.search(r"(?<!\S)[\w./-]*\*[\w.*?/-]*", text)
    if written:
        return written.group(0).rstrip(".,")
    pattern: str | None = None
    for typed in re.finditer(r"((?:\.?[A-Za-z0-9]+\s+){1,2})files?\b", text):
        for word in reversed(typed.group(1).split()):  # "JavaScript test files", "the md files", ".md files"
            bare = word.lstrip(".")
            plain = word.startswith(".") or (len(bare) <= 3 and bare.islower()) or (len(bare) <= 4 and bare.isupper())
            ext = _FILE_TYPES.get(bare.lower()) or (bare.lower() if plain and bare.lower() not in _NOT_TYPES else None)
            if ext:
                pattern = f"*.{ext}"
                break
        if pattern:
            break
    if pattern is None:  # a file name given whole: setup.md
        pattern = next((f.value for f in find_values(text, 0) if f.kind == "path" and "/" not in f.value), None)
    if pattern is None:
        named = re.search(r"\b(?:named|called|containing|matching|with)\s+['\"]?([\w.-]+)", text, re.IGNORECASE)
        pattern = f"*{named.group(1).strip('.')}*" if named else None
    if pattern and "**" in hint and _EVERYWHERE.search(text):
        pattern = "**/" + pattern
    return pattern


_EVERYWHERE = re.compile(r"recursiv|subfolder|sub-folder|subdirector|nested|anywhere|wherever|every folder|"
                         r"all folders|all directories|more than one", re.IGNORECASE)
_NOT_TYPES = frozenset({"the", "all", "any", "my", "our", "new", "old", "some", "its", "of", "two", "few", "many"})


def sql_statement(text: str, hint: str) -> str | None:
    """An SQL statement written out in the text, of the kind the hint asks for (SELECT, INSERT …)."""
    verbs = [v for v in ("SELECT", "INSERT", "UPDATE", "DELETE", "CREATE") if re.search(rf"\b{v}\b", hint, re.I)]
    for match in re.finditer(r"\b(SELECT|WITH|INSERT|UPDATE|DELETE|CREATE)\s[^;?\n]+", text):
        statement = match.group(0).strip().rstrip(".")
        if not verbs or match.group(1) in verbs or (match.group(1) == "WITH" and "SELECT" in verbs):
            return statement
    return None


def result_names(results: list[str], text: str) -> list[str]:
    """Identifiers quoted in earlier results (values, not keys) whose word the text uses: the table
    "orders" a listing returned, when the question is about orders."""
    return asked_names([m.group(1) for result in results
                        for m in re.finditer(r"['\"]([A-Za-z_][\w]*)['\"](?!\s*:)", result)], text)


def asked_names(names: list[str], text: str) -> list[str]:
    """The names, once each and in order, that share a word with the text."""
    asked = {stem(w) for w in words(text)}
    out: list[str] = []
    for name in names:
        if name not in out and {stem(w) for w in words(name)} & asked:
            out.append(name)
    return out
