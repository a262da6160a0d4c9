"""Which generated tasks hold, for both generators of `optimizer tasks generate`.

Contract of `validate`: a task is dropped, with the reason, when its calls use a tool the generator may not call,
when its prompt names a tool or a parameter, when it repeats (or nearly repeats) another, when its answer is a phrase
of the result's wording rather than a value (`answers.phrase_answer`), when it uses a value the user gave (`--known`)
that no exploration call succeeded with, when replaying its calls does not return its answer (`check.replay`), or —
for a task that says which field it asks about (`Asked`, the offline generator's) — when its answer is not a value
of that field in the replayed result (`not_the_field`; such reasons start with NOT_THE_FIELD, so a summary can count
them). `generate.run_generation` replays on a fresh server connection, so answers that change with each start of the
server (a temporary directory, a clock, a generated id) are dropped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from optimizer.definitions import Catalog
from optimizer.servers import CallOutcome
from optimizer.tasks import Task, TaskSet
from optimizer.tasks.check import check_tasks, replay
from optimizer.tasks.explore import Observation, harvest, kind_of
from optimizer.tasks.known import Fact
from optimizer.text.results import says_error
from optimizer.text.values import KIND_AS_WORD, property_kinds

NOT_THE_FIELD = "not-the-field"
NOUNS = {**KIND_AS_WORD, "code": "code", "timezone": "time zone"}
"""The word a question uses for a value it asks about by kind (a dotted or alphanumeric code is a code)."""
_FAMILIES = ({"date", "datetime", "date_text", "time"}, {"money", "number"}, {"email"}, {"url"}, {"phone"},
             {"path"}, {"timezone"})
"""Kinds one field may hold interchangeably: a time field may show a date, an amount field a bare number."""
CallTool = Callable[[str, dict[str, Any]], Awaitable[CallOutcome]]


@dataclass(frozen=True)
class Asked:
    """What a task's question asks about: the field (a result's label, or with `by_kind` the word for a kind of
    value, "date"), and the item whose field it is (`None`: the result's only one)."""

    field: str
    item: str | None = None
    by_kind: bool = False


def fits(field: str, value: str | int | float) -> bool:
    """Whether a value can be what a field holds, by kind: a field named for a kind of value ("phone", "due date",
    "price") holds a value of that kind or plain text, never a value that reads as another kind (a date under
    "phone"); a field named for no kind holds anything."""
    wanted, _, _ = property_kinds(field, {})
    kind = "number" if isinstance(value, int | float) else kind_of(str(value))
    if not wanted or kind == "text":
        return True
    return any(kind in family and wanted & family for family in _FAMILIES)


def not_the_field(text: str, tool: str, arguments: Mapping[str, Any], asked: Asked, answer: str) -> str | None:
    """Why `answer` is not a value of the field `asked` names in one call's result `text`, or None when it is: the
    result is an error, it shows the answer under no such field (for that item), or the answer's kind is not one the
    field holds."""
    if says_error(text):
        return f"{NOT_THE_FIELD}: its answer {answer!r} comes from an error result"
    seen = harvest(text, Observation(tool, arguments, text, True))
    if asked.by_kind:
        shown = any(str(s.value) == answer and NOUNS.get(s.kind) == asked.field for s in seen)
    else:
        shown = any(str(s.value) == answer and s.label == asked.field and asked.item in (None, s.anchor)
                    for s in seen)
    where = f"{asked.field} of {asked.item}" if asked.item else asked.field
    if not shown:
        return f"{NOT_THE_FIELD}: its answer {answer!r} is not what the result shows as the {where}"
    if not asked.by_kind and not fits(asked.field, answer):
        return f"{NOT_THE_FIELD}: its answer {answer!r} reads as a {kind_of(answer)}, not a {asked.field}"
    return None


async def validate(tasks: list[Task], catalog: Catalog, call: CallTool, refused: Mapping[str, str],
                   dropped: list[dict[str, str]], *, known: Sequence[Fact] = (),
                   calls: Sequence[Mapping[str, Any]] = (), asked: Mapping[str, Asked] | None = None) -> list[Task]:
    """The tasks that hold (see the module docstring); the others go to `dropped` with their reason. `asked` gives,
    by task id, the field a task's question asks about."""
    reasons: dict[str, str] = dict(_unproven(tasks, known, calls))
    params = {p for t in catalog.tools for p in t.properties if re.search(r"[_A-Z]", p)}
    for task in tasks:
        barred = sorted({tool for tool, _ in task.expect.calls} & set(refused))
        said = sorted(set(re.findall(r"[A-Za-z0-9_]+", task.prompt)) & params)
        if task.id in reasons:
            continue
        if barred:
            reasons[task.id] = f"calls {', '.join(barred)}, which the generator may not call"
        elif said:
            reasons[task.id] = f"its prompt names the parameter {', '.join(said)}"
    results: dict[tuple[str, str], str] = {}

    async def kept(tool: str, arguments: dict[str, Any]) -> CallOutcome:
        outcome = await call(tool, arguments)
        results[(tool, json.dumps(arguments, sort_keys=True, ensure_ascii=False))] = outcome.text
        return outcome

    report = check_tasks(TaskSet(tuple(t for t in tasks if t.id not in reasons)), catalog)
    await replay([t for t in tasks if t.id not in reasons], kept, report, destructive=set(), allow_destructive=True)
    for problem in report.problems:
        task_id = next((t.id for t in tasks if problem.source and t.source == problem.source), None)
        if task_id and problem.kind in ("replay-failed", "duplicate", "near-duplicate", "tool-named", "phrase-answer"):
            reasons.setdefault(task_id, f"{problem.kind}: {problem.message}")
    for task in tasks:
        question = (asked or {}).get(task.id)
        if task.id in reasons or question is None or not task.expect.calls or task.expect.answer is None:
            continue
        tool, arguments = task.expect.calls[-1]  # the answer comes from the last call's result
        text = results.get((tool, json.dumps(json.loads(arguments), sort_keys=True, ensure_ascii=False)), "")
        reason = not_the_field(text, tool, json.loads(arguments), question, task.expect.answer)
        if reason:
            reasons[task.id] = reason
    dropped += [{"task": k, "reason": v} for k, v in reasons.items()]
    return [t for t in tasks if t.id not in reasons]


def _unproven(tasks: Sequence[Task], known: Sequence[Fact], calls: Sequence[Mapping[str, Any]]
              ) -> Iterable[tuple[str, str]]:
    """Tasks that use a value the user gave (`--known`) that no exploration call succeeded with or returned."""
    values = {str(s.value) for fact in known for s in fact.seen() if len(str(s.value)) >= 3}
    proven = " ".join(json.dumps(c.get("arguments"), ensure_ascii=False) + " " + str(c.get("result") or "")
                      for c in calls if not c.get("is_error"))
    for task in tasks:
        used = task.prompt + " " + " ".join(arguments for _, arguments in task.expect.calls)
        unproven = sorted(v for v in values if v in used and v not in proven)
        if unproven:
            yield task.id, f"uses the known value {unproven[0]!r}, which no exploration call succeeded with"
