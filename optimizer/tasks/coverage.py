"""What a generation missed, and what would help: `uncovered` (and `without_tasks`, the tools no task expects).

A tool is covered when a kept task with an answer expects it (its calls were replayed and returned the answer); a
tool-choice request alone does not cover it. For each tool that is not covered, `uncovered` says from the calls the
generator made (calls.jsonl) why, and what the user can give:
- a tool the generator may not call: `--explore TOOL` (when it only reads), or for one annotated destructive
  `--allow-destructive`, only against a server whose data may change;
- a tool never called: nothing known fitted a required parameter: `--known` with that kind of value;
- a tool whose every call failed: the errors it got, and `--known` with the kind of value the parameters it was
  given reject (the values tried are shown);
- a tool whose calls succeeded: why its tasks were dropped, and `--known` with a record it returns more about.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from optimizer.definitions import Catalog, ToolDef
from optimizer.tasks import Task
from optimizer.text.results import says_error
from optimizer.text.tokens import words
from optimizer.text.values import KIND_AS_WORD, property_kinds

MAX_ERRORS = 3
MAX_TRIED = 4


def without_tasks(tasks: Sequence[Task], catalog: Catalog, refused: Mapping[str, str]) -> dict[str, str]:
    """Tools no kept task expects, with why when the generator could not call them."""
    used = {name for t in tasks for name in t.expect.tools}
    return {name: refused.get(name, "no task for it held") for name in catalog.names if name not in used}


def answered(tasks: Sequence[Task]) -> set[str]:
    """Tools a task with an answer expects."""
    return {name for task in tasks if task.expect.answer is not None for name in task.expect.tools}


def uncovered(catalog: Catalog, tasks: Sequence[Task], calls: Sequence[Mapping[str, Any]],
              refused: Mapping[str, str], dropped: Sequence[Mapping[str, str]]) -> list[dict[str, Any]]:
    """One entry per tool not covered, in the server's order: tool, calls, failed, errors, why, help."""
    covered = answered(tasks)
    out = []
    for tool in catalog.tools:
        if tool.name in covered:
            continue
        made = [c for c in calls if c.get("tool") == tool.name]
        failed = [c for c in made if _failed(c)]
        errors = list(dict.fromkeys(" ".join(str(c.get("result") or "").split())[:160] for c in failed))
        entry: dict[str, Any] = {"tool": tool.name, "calls": len(made), "failed": len(failed),
                                 "errors": errors[:MAX_ERRORS]}
        if tool.name in refused:
            entry["why"] = f"not called: {refused[tool.name].split(':')[0]}"
            entry["help"] = ("--allow-destructive, only against a server whose data may change"
                             if tool.hint("destructiveHint") is True else f"--explore {tool.name} (if it only reads)")
        elif not made:
            wanted = _describe(tool, tool.required) or "its parameters"
            entry["why"] = f"never called: no value was known for {wanted}"
            entry["help"] = f"--known with {wanted} the server holds"
        elif len(failed) == len(made):
            rejected = _describe(tool, _sent(failed) or list(tool.properties)[:3]) or "its parameters"
            entry["why"] = f"all {len(made)} call(s) failed (tried {_tried(failed)})"
            entry["help"] = f"--known with {rejected} the server holds, in the form it takes"
        else:
            slug = f"-{tool.name.replace('_', '-')}-"  # the offline generator's task ids name the tool
            reasons = [d["reason"] for d in dropped if tool.name in d.get("reason", "") or slug in d.get("task", "")]
            entry["why"] = (f"{len(made) - len(failed)} call(s) succeeded, but no kept task asks about its results"
                            + (f" ({reasons[0][:160]})" if reasons else ""))
            entry["help"] = f"--known with a record {tool.name} returns details for"
        out.append(entry)
    return out


def _failed(call: Mapping[str, Any]) -> bool:
    return bool(call.get("is_error")) or says_error(str(call.get("result") or ""))


def _sent(calls: Sequence[Mapping[str, Any]]) -> list[str]:
    names: dict[str, None] = {}
    for call in calls:
        names.update(dict.fromkeys(call.get("arguments") or {}))
    return list(names)


def _tried(calls: Sequence[Mapping[str, Any]]) -> str:
    shown = list(dict.fromkeys(json.dumps(c.get("arguments") or {}, ensure_ascii=False) for c in calls))
    return ", ".join(shown[:MAX_TRIED]) + (f" and {len(shown) - MAX_TRIED} more" if len(shown) > MAX_TRIED else "")


def _describe(tool: ToolDef, names: Sequence[str]) -> str:
    """The parameters as the kinds of value they take: `a patient id (patient_id), a date (on)`."""
    out = []
    for name in names:
        kinds, shapes, _ = property_kinds(name, tool.properties.get(name) or {})
        said = " ".join(words(name))
        named = [KIND_AS_WORD[k] for k in sorted(kinds | shapes) if k in KIND_AS_WORD]
        kind = next((word for word in named if word in said.split()), named[0] if named else None)
        noun = said if kind is None or kind in said.split() else kind
        out.append(f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun} ({name})")
    return ", ".join(out)
