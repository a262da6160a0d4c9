"""What a task set needs before money is spent on it, checked against the server's tools: `check_tasks`.

Problems (each with the task's `path:line` where there is one):
- `unknown-tool`: a task expects or forbids a tool the server does not list;
- `untested-tool`: a tool no task expects (a tool its description calls deprecated only gets a note);
- `tool-named`: a prompt names a tool by its identifier (`lookup_order`, `getCustomer`), which tells the agent
  what to call instead of testing whether the definitions lead it there;
- `duplicate` / `near-duplicate`: prompts equal once case, punctuation and spacing are ignored, or at least
  NEAR_DUPLICATE similar (difflib's ratio over those normalised texts);
- `phrase-answer`: a task that expects a tool checks a phrase of the result's wording (`contains`/`exact`), which
  a correct answer in other words misses (`optimizer.tasks.answers`), with what to write instead.
Notes (not problems): tasks that expect a tool annotated `destructiveHint: true` (they need --allow-destructive).
Counts: tasks per split, and per tool the tasks that expect it, by split.

`replay` runs each task's `expect.calls` against the server, in order, and reports `replay-failed` when a call
errors or the expected answer is not in their results (a `judge` answer cannot be replayed: a note). A phrase answer
that the results hold as one whole value is no longer a problem; for the others the suggestion names the values
of the result's line that holds it.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from optimizer.definitions import Catalog
from optimizer.scoring import Expect, ScoringError, verify_answer
from optimizer.servers import CallOutcome
from optimizer.tasks import Task, TaskSet
from optimizer.tasks.answers import phrase_answer, suggestion

NEAR_DUPLICATE = 0.9
_DEPRECATED = re.compile(r"\bdeprecated\b", re.IGNORECASE)
_IDENTIFIER = re.compile(r"[a-z0-9]+(?:[_-][a-z0-9]+)+|[a-z]+(?:[A-Z][a-z0-9]*)+")


@dataclass(frozen=True)
class Problem:
    kind: str
    message: str
    source: str | None = None
    tool: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in vars(self).items() if v is not None}


@dataclass
class CheckReport:
    server: str
    tasks: int
    splits: dict[str, int]
    per_tool: dict[str, dict[str, int]]
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"server": self.server, "tasks": self.tasks, "splits": self.splits, "per_tool": self.per_tool,
                "problems": [p.to_json() for p in self.problems], "notes": self.notes, "passed": not self.problems}


def check_tasks(taskset: TaskSet, catalog: Catalog) -> CheckReport:
    """Every check of the module docstring, problems in the order listed there, then by task source."""
    tasks = taskset.tasks
    per_tool = {name: {"train": 0, "heldout": 0} for name in catalog.names}
    report = CheckReport(catalog.server_name, len(tasks), taskset.counts(), per_tool)
    for task in tasks:
        for name in dict.fromkeys(task.expect.tools):
            if name in per_tool:
                per_tool[name][task.split] = per_tool[name].get(task.split, 0) + 1
        for name in sorted(set(task.expect.tools) | set(task.expect.forbid)):
            if name not in catalog:
                report.problems.append(Problem("unknown-tool", f"task {task.id} names {name!r}, which the server "
                                               "does not list", task.source, name))
    untested = [name for name, counts in per_tool.items() if not sum(counts.values())]
    deprecated = {t.name for t in catalog.tools if _DEPRECATED.search(t.description or "")}
    report.problems += [Problem("untested-tool", f"no task expects {name}", tool=name)
                        for name in untested if name not in deprecated]
    report.notes += [f"no task expects {name}, which its description calls deprecated" for name in untested
                     if name in deprecated]
    report.problems += _named_tools(tasks, catalog)
    report.problems += _duplicates(tasks)
    report.problems += [_phrase(task) for task in tasks if phrase_answer(task.expect)]
    destructive = set(catalog.hinted("destructiveHint"))
    for task in tasks:
        hits = sorted(destructive & set(task.expect.tools))
        if hits:
            report.notes.append(f"{task.source}: task {task.id} expects {', '.join(hits)}, annotated destructive: "
                                "it runs only with --allow-destructive")
    return report


def _named_tools(tasks: Sequence[Task], catalog: Catalog) -> list[Problem]:
    """Prompts that write a tool's identifier (only names that read as identifiers: `lookup_order`, not `search`)."""
    named = {n.lower(): n for n in catalog.names if _IDENTIFIER.fullmatch(n)}
    out = []
    for task in tasks:
        found = sorted({named[w.lower()] for w in re.findall(r"[A-Za-z0-9_-]+", task.prompt) if w.lower() in named})
        if found:
            out.append(Problem("tool-named", f"task {task.id}'s prompt names the tool {', '.join(found)}: write what "
                               "the user wants, not what to call", task.source, found[0]))
    return out


def _phrase(task: Task, result: str | None = None) -> Problem:
    answer = task.expect.answer or ""
    return Problem("phrase-answer", f"task {task.id}'s answer {answer!r} is a phrase of the result's wording, which "
                   f"a correct answer in other words misses: {suggestion(answer, result)}", task.source)


def _normal(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def _duplicates(tasks: Sequence[Task]) -> list[Problem]:
    out = []
    normal = [_normal(t.prompt) for t in tasks]
    for j, later in enumerate(tasks):
        for i in range(j):
            if normal[i] == normal[j]:
                out.append(Problem("duplicate", f"task {later.id}'s prompt repeats task {tasks[i].id}'s",
                                   later.source))
                break
            matcher = difflib.SequenceMatcher(None, normal[i], normal[j], autojunk=False)
            if matcher.real_quick_ratio() >= NEAR_DUPLICATE and matcher.quick_ratio() >= NEAR_DUPLICATE \
                    and matcher.ratio() >= NEAR_DUPLICATE:
                out.append(Problem("near-duplicate", f"task {later.id}'s prompt is {matcher.ratio():.0%} like task "
                                   f"{tasks[i].id}'s", later.source))
                break
    return out


async def replay(tasks: Sequence[Task], call: Callable[[str, dict[str, Any]], Awaitable[CallOutcome]],
                 report: CheckReport, *, destructive: set[str], allow_destructive: bool) -> None:
    """Run every task's expected calls and add what failed to `report` (see the module docstring); a task whose
    calls need a destructive tool is replayed only with `allow_destructive`."""
    unreplayable = 0
    for task in tasks:
        expect = task.expect
        if not expect.calls or expect.answer is None:
            unreplayable += 1
            continue
        if expect.match == "judge" or (not allow_destructive and destructive & {t for t, _ in expect.calls}):
            report.notes.append(f"{task.source}: task {task.id} was not replayed ("
                                f"{'a judge grades it' if expect.match == 'judge' else 'it calls a destructive tool'})")
            continue
        texts, failed = [], None
        for tool, arguments in expect.calls:
            outcome = await call(tool, json.loads(arguments))
            texts.append(outcome.text)
            if outcome.is_error:
                failed = f"{tool} returned an error: {outcome.text.strip()[:200]}"
                break
        if failed is None and not _holds(expect, "\n".join(texts)):
            failed = f"its answer {expect.answer!r} is not in what the expected calls return now"
        if failed:
            report.problems.append(Problem("replay-failed", f"task {task.id}: {failed}", task.source))
        else:
            _phrase_in(task, "\n".join(texts), report)
    if unreplayable:
        report.notes.append(f"{unreplayable} task(s) have no expect.calls (or no answer) to replay")


def _phrase_in(task: Task, result: str, report: CheckReport) -> None:
    """The task's phrase-answer problem, read again against its replayed result: gone when the result holds the
    answer as one whole value, else with the result's values in its suggestion."""
    flagged = [i for i, p in enumerate(report.problems) if p.kind == "phrase-answer" and p.source == task.source
               and f"task {task.id}'s" in p.message]
    for index in reversed(flagged):
        if phrase_answer(task.expect, result):
            report.problems[index] = _phrase(task, result)
        else:
            del report.problems[index]


def _holds(expect: Expect, text: str) -> bool:
    try:
        return verify_answer(text, expect.answer or "", expect.match)
    except ScoringError:
        return False
