"""Answers a paraphrase would miss: `phrase_answer`, used by `tasks check` and by both generators.

A task that expects a tool and checks its answer with `contains` or `exact` passes only when the agent writes the
expected text. A value (an id, an amount, a date, a name, a status, a title the result holds) survives being
answered in other words; a phrase of the result's wording ("no customer matches", "cannot be refunded until it is
delivered", "3 orders for Julia Souza") does not: a correct episode fails and looks like a definition problem.

The rule, on the answer alone: it starts lower-case, with a digit, or with a verb in the past tense (a tool
reporting what it did: "Updated email"; other titles, names and messages start with a capital); it reads as words,
not code; and once its values are set aside (anything with a digit or an inner `@ / . _ #`, capitalised words,
all-caps codes) at least two plain words remain of which one is a function word (`no`, `to`, `for`, `until` …)
that does not end the answer or the first is that past-tense verb, or three or more remain: a clause, not a short
noun ("side door") or a command ("devbox up").

With the replayed result (`tasks check --replay`), an answer that is a whole value there (a JSON field, the value of
a `Label: value` line, a line of its own) is a value whatever its words. `suggestion` says what to write instead:
the values the answer holds, else the values on the result's line that holds it, else `match: judge`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from optimizer.scoring import Expect
from optimizer.text.results import parse_literal
from optimizer.text.tokens import STOPWORDS
from optimizer.text.values import find_values

CHECKED_MATCHES = ("contains", "exact")
_CODE = re.compile(r"[(){}\[\]=<>`|\\]")
_PLAIN = re.compile(r"[a-z][a-z'’-]*")
_VALUE_TOKEN = re.compile(r".*\d.*|.*\w[@/._#]\w.*|[A-Z].*")
_REPORTED = re.compile(r"[A-Za-z]{3,}[^e\W]ed\b")
"""A first word in the past tense ("Updated email", "Cancelled order"): a tool reporting what it did."""
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")


def plain_words(answer: str) -> list[tuple[int, str]]:
    """The answer's words once its values are set aside (see the module docstring), with their token positions."""
    out = []
    for index, token in enumerate(answer.split()):
        token = token.strip(",.;:!?\"'")
        if not token:
            continue
        if index == 0 and re.fullmatch(r"[A-Z][a-z'’-]*", token):  # a sentence's first word
            token = token.lower()
        if _VALUE_TOKEN.fullmatch(token) or not _PLAIN.fullmatch(token):
            continue
        out.append((index, token))
    return out


def is_phrase(answer: str) -> bool:
    """Whether the answer reads as a phrase of a result's wording rather than a value (module docstring)."""
    text = answer.strip()
    reports = bool(_REPORTED.match(text))
    if not text or not (text[0].islower() or text[0].isdigit() or reports) or _CODE.search(text):
        return False
    plain = plain_words(text)
    last = len(text.split()) - 1
    return len(plain) >= 3 or len(plain) == 2 and (reports or any(w in STOPWORDS and i < last for i, w in plain))


def phrase_answer(expect: Expect, result: str | None = None) -> bool:
    """Whether a task's answer is a phrase a paraphrase would miss: it expects a tool, checks its answer with
    `contains` or `exact`, and the answer is a phrase that is not a whole value of the replayed `result`."""
    if expect.answer is None or expect.match not in CHECKED_MATCHES or not expect.tools:
        return False
    return is_phrase(expect.answer) and not (result is not None and whole_value(expect.answer, result))


def whole_value(answer: str, result: str) -> bool:
    """Whether the result holds the answer as one whole value: a JSON field, a `Label: value` line's value, a line."""
    wanted = answer.strip()
    data = parse_literal(result.strip())
    if data is not None:
        return any(str(v).strip() == wanted for v in _scalars(data))
    for line in result.splitlines():
        line = _BULLET.sub("", line).strip().rstrip(".")
        if line == wanted or line.partition(": ")[2].strip() == wanted:
            return True
    return False


def _scalars(data: Any) -> Iterator[Any]:
    if isinstance(data, dict):
        for value in data.values():
            yield from _scalars(value)
    elif isinstance(data, list):
        for item in data:
            yield from _scalars(item)
    elif data is not None:
        yield data


def answer_values(answer: str) -> list[str]:
    """The values inside a phrase answer: recognised values, numbers and runs of capitalised words."""
    found = [f.value for f in find_values(answer, 2)]
    found += re.findall(r"(?<![\w.])\d+(?:[.,]\d+)*(?![\w.])", answer)
    found += re.findall(r"(?<!^)(?<![.!?] )\b[A-Z][a-z][\w’'-]*(?: [A-Z][a-z][\w’'-]*)*", answer)
    return [v for v in dict.fromkeys(found) if not any(v != other and v in other for other in found)]


def suggestion(answer: str, result: str | None = None) -> str:
    """What to write instead of a phrase answer (see the module docstring)."""
    values = answer_values(answer)
    if not values and result is not None:
        line = next((line for line in result.splitlines() if answer.strip() in line), "")
        values = [v for v in answer_values(line) if v not in answer]
    if values:
        shown = ", ".join(repr(v) for v in values[:3])
        return (f"answer with the value {shown}" if len(values) == 1 else
                f"answer with one value ({shown}), or a regex that needs each") + ", or set match: judge"
    return "set match: judge (or a regex of the wordings that mean it)"
