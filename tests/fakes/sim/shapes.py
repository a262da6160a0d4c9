"""Value shapes the simulated agents (test doubles) write a parameter in: clock times in the form a description asks
for, ISO dates and date-times, a glob or an SQL statement the text writes out. Each builder reads the parameter's
own hint (name, description, format) and the text; nothing here knows a server."""

from __future__ import annotations

import re

from optimizer.text.values import MONTHS, NUMBER_WORDS, find_values


def clock(text: str) -> tuple[int, int, int] | None:
    """(hour, minute, second) of a time as `optimizer.text.values` reads it: 14:30, 2:30 pm, 9am, noon,
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


def glob_for(text: str) -> str | None:
    """A glob the text writes out (`*.md`), else a file name it gives whole (`setup.md`)."""
    written = re.search(r"(?<!\S)[\w./-]*\*[\w.*?/-]*", text)
    if written:
        return written.group(0).rstrip(".,")
    return next((f.value for f in find_values(text, 0) if f.kind == "path" and "/" not in f.value), None)


def sql_statement(text: str, hint: str) -> str | None:
    """An SQL statement written out in the text, of the kind the hint asks for (SELECT, INSERT …)."""
    verbs = [v for v in ("SELECT", "INSERT", "UPDATE", "DELETE", "CREATE") if re.search(rf"\b{v}\b", hint, re.I)]
    for match in re.finditer(r"\b(SELECT|WITH|INSERT|UPDATE|DELETE|CREATE)\s[^;?\n]+", text):
        statement = match.group(0).strip().rstrip(".")
        if not verbs or match.group(1) in verbs or (match.group(1) == "WITH" and "SELECT" in verbs):
            return statement
    return None
