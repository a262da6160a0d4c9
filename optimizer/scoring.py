"""Verifiers for one answer, tool-use checks, and aggregation over many episodes.

Contracts:
- Verifiers are pure functions of text; higher is never "better" here, a check simply passes or not.
- If an answer holds `<response>…</response>` blocks (the Anthropic cookbook's format), only the inside
  of the LAST block is verified; otherwise the whole answer is.
- `number` tolerates formatting only (`$11,614.72` == `11614.72` == `11614.720`), never rounding.
- `score()` applies only the checks a task asks for; `Verdict.passed` is the AND of them.
- Aggregates are deterministic: dictionaries come back with sorted keys, floats rounded to 4 places.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, TypedDict

Judge = Callable[[str, str], bool]
"""`judge(expected, answer) -> passed`, e.g. a Claude grader built by the caller."""

NO_TOOL = "(no tool)"
_RESPONSE = re.compile(r"<response>(.*?)</response>", re.IGNORECASE | re.DOTALL)
_SPACE = re.compile(r"\s+")
_NUMBER = re.compile(
    r"(?<![\w.])(?P<sign>[-−–]\s?)?(?P<cur>[$€£¥]\s?)?(?P<sign2>-)?"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?P<exp>[eE][-+]?\d+)?(?![\d])"
)
_FENCE = re.compile(r"```(?:json)?\s*\n(.*?)```", re.IGNORECASE | re.DOTALL)
_REASON_WIDTH = 60


@dataclass(frozen=True)
class Expect:
    """What a task checks: an answer (with a verifier), tools that must / must not be called."""

    answer: str | None = None
    match: str = "contains"
    tools: tuple[str, ...] = ()
    forbid: tuple[str, ...] = ()
    calls: tuple[tuple[str, str], ...] = ()
    """Calls whose results hold the answer, (tool, arguments as canonical JSON), for replaying the task against
    the server (`tasks check --replay`); agents are not held to them."""

    def to_json(self) -> dict[str, Any]:
        """Plain JSON form (lists for tuples); `calls` only when there are some, so other tasks' digests stay."""
        out = {**asdict(self), "tools": list(self.tools), "forbid": list(self.forbid)}
        out.pop("calls")
        if self.calls:
            out["calls"] = [{"tool": tool, "arguments": json.loads(args)} for tool, args in self.calls]
        return out



class ScoringError(ValueError):
    """A verifier that cannot run (unknown match, judge without a model, bad expected value)."""


@dataclass(frozen=True)
class Verdict:
    """The outcome of scoring one answer: `checks` holds only the checks that applied."""

    passed: bool
    checks: dict[str, bool]
    reason: str


def response_text(answer_text: str) -> str:
    """The inside of the last `<response>…</response>` block, or the whole text when there is none."""
    blocks = _RESPONSE.findall(answer_text)
    return blocks[-1] if blocks else answer_text


def _squash(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def _numbers(text: str) -> list[float]:
    """Every number in `text`, read through currency symbols, thousands commas and signs."""
    found = []
    for m in _NUMBER.finditer(text):
        value = float(m["num"].replace(",", "") + (m["exp"] or ""))
        negative = bool(m["sign"]) != bool(m["sign2"])
        found.append(-value if negative else value)
    return found


def parse_number(text: str) -> float | None:
    """`text` read as exactly one number (currency, commas, `%` allowed), else None."""
    stripped = text.strip().rstrip("%").strip()
    m = _NUMBER.fullmatch(stripped)
    if m is None:
        return None
    return _numbers(stripped)[0]


def _first_json(text: str) -> tuple[bool, Any]:
    """(found, value): the whole text as JSON, else a fenced block, else the first object/array inside."""
    for candidate in (text.strip(), *(block.strip() for block in _FENCE.findall(text))):
        try:
            return True, json.loads(candidate)
        except ValueError:
            continue
    decoder = json.JSONDecoder()
    for m in re.finditer(r"[\[{]", text):
        try:
            return True, decoder.raw_decode(text, m.start())[0]
        except ValueError:
            continue
    return False, None


def _json_equal(a: Any, b: Any) -> bool:
    """Structural JSON equality; unlike Python's ==, `true` is not `1`."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return type(a) is type(b) and a == b


def expected_problem(expected: str, match: str) -> str | None:
    """Why `expected` cannot be verified with `match` (one line), or None when it can."""
    if not expected.strip():
        return "expect.answer is empty"
    if match == "regex":
        try:
            re.compile(expected)
        except re.error as exc:
            return f"expect.answer is not a valid regex: {exc}"
    elif match == "json":
        try:
            json.loads(expected)
        except ValueError as exc:
            return f"expect.answer is not valid JSON: {exc}"
    elif match == "number" and parse_number(expected) is None:
        return f"expect.answer is not a number: {expected!r}"
    return None


def verify_answer(answer_text: str, expected: str, match: str, *, judge: Judge | None = None) -> bool:
    """Whether `answer_text` satisfies `expected` under `match`; raises ScoringError if it cannot tell."""
    text = response_text(answer_text)
    if match == "contains":
        return _squash(expected).casefold() in _squash(text).casefold()
    if match == "exact":
        return _squash(expected) == _squash(text)
    if match == "regex":
        try:
            return re.search(expected, text, re.IGNORECASE | re.DOTALL) is not None
        except re.error as exc:
            raise ScoringError(f"expected regex does not compile: {exc}") from exc
    if match == "number":
        want = parse_number(expected)
        if want is None:
            raise ScoringError(f"expected value is not a number: {expected!r}")
        return any(math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9) for got in _numbers(text))
    if match == "json":
        try:
            want_json = json.loads(expected)
        except ValueError as exc:
            raise ScoringError(f"expected value is not valid JSON: {exc}") from exc
        found, got_json = _first_json(text)
        return found and _json_equal(want_json, got_json)
    if match == "judge":
        if judge is None:
            raise ScoringError("the judge verifier needs a Claude model")
        return bool(judge(expected, text))
    raise ScoringError(f"unknown match {match!r}")


def _short(text: str) -> str:
    text = _squash(text)
    return text if len(text) <= _REASON_WIDTH else text[: _REASON_WIDTH - 1] + "…"


def _answer_reason(expected: str, match: str) -> str:
    return {
        "contains": f"answer lacks '{_short(expected)}'",
        "exact": f"answer is not exactly '{_short(expected)}'",
        "regex": f"answer does not match /{_short(expected)}/",
        "number": f"answer lacks the number {_short(expected)}",
        "json": f"answer JSON differs from {_short(expected)}",
        "judge": f"judge rejected the answer (expected '{_short(expected)}')",
    }[match]


def _names(names: Sequence[str]) -> str:
    return ", ".join(names)


def score(
    expect: Expect, answer_text: str, called_tools: Sequence[str], judge: Judge | None = None
) -> Verdict:
    """Check one episode against a task's `Expect`: answer (if any), required and forbidden tools."""
    checks: dict[str, bool] = {}
    reasons: list[str] = []
    if expect.answer is not None:
        checks["answer"] = verify_answer(answer_text, expect.answer, expect.match, judge=judge)
        if not checks["answer"]:
            reasons.append(_answer_reason(expect.answer, expect.match))
    called = set(called_tools)
    if expect.tools:
        missing = [name for name in expect.tools if name not in called]
        checks["tools"] = not missing
        if missing:
            noun = "tool" if len(missing) == 1 else "tools"
            reasons.append(f"expected {noun} {_names(missing)} not called")
    if expect.forbid:
        used = [name for name in expect.forbid if name in called]
        checks["forbid"] = not used
        if used:
            noun = "tool" if len(used) == 1 else "tools"
            reasons.append(f"forbidden {noun} {_names(used)} called")
    passed = all(checks.values())
    return Verdict(
        passed=passed, checks=checks, reason="; ".join(reasons) if reasons else "all checks passed"
    )


def choice_verdict(expect: Expect, chosen: str | None) -> Verdict:
    """A reader's verdict: its choice (original name, None for nothing found) is the task's first expected tool, or
    nothing when the task expects no tool."""
    wanted = expect.tools[0] if expect.tools else None
    passed = chosen == wanted
    reason = ("the expected first tool ranked first" if passed
              else f"ranked {chosen or 'no tool'} first; expected {wanted or 'no tool'}")
    return Verdict(passed=passed, checks={"first_tool": passed}, reason=reason)


def wilson(passed: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson score interval for `passed` successes out of `n`; (0.0, 1.0) when n == 0."""
    if n < 0 or not 0 <= passed <= max(n, 0):
        raise ScoringError(f"wilson needs 0 <= passed <= n, got passed={passed}, n={n}")
    if n == 0:
        return 0.0, 1.0
    p = passed / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    margin = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - margin), min(1.0, centre + margin)


def confusion(pairs: Iterable[tuple[str | None, str | None]]) -> dict[str, dict[str, int]]:
    """Counts of (expected first tool -> chosen first tool); None is shown as "(no tool)"."""
    counts: Counter[tuple[str, str]] = Counter(
        (NO_TOOL if want is None else want, NO_TOOL if got is None else got) for want, got in pairs
    )
    table: dict[str, dict[str, int]] = {}
    for (want, got), count in sorted(counts.items()):
        table.setdefault(want, {})[got] = count
    return table


class AccuracyCell(TypedDict):
    """One model on one split: the pass rate, its 95% Wilson interval, the episodes and those passed."""

    accuracy: float
    ci_high: float
    ci_low: float
    n: int
    passed: int


def accuracy_table(rows: Iterable[tuple[str, str, bool]]) -> dict[str, dict[str, AccuracyCell]]:
    """(model, split, passed) rows -> {model: {split: {accuracy, ci_high, ci_low, n, passed}}}."""
    tally: dict[tuple[str, str], list[int]] = {}
    for model, split, passed in rows:
        cell = tally.setdefault((model, split), [0, 0])
        cell[0] += int(bool(passed))
        cell[1] += 1
    table: dict[str, dict[str, AccuracyCell]] = {}
    for (model, split), (passed_n, n) in sorted(tally.items()):
        low, high = wilson(passed_n, n)
        table.setdefault(model, {})[split] = {
            "accuracy": round(passed_n / n, 4),
            "ci_high": round(high, 4),
            "ci_low": round(low, 4),
            "n": n,
            "passed": passed_n,
        }
    return table
