"""`optimizer tasks generate --offline`: a stand-in task generator that needs no model; its tasks say OFFLINE.

From what `explore.explore` found:
- `lookup`: one call, a question on one value of its result (a labelled field, an item's field named by the item,
  or a value a listing shows) that was the same in both calls, is not an argument and does not name today; the
  question names the field the answer is the value of ("What is the status of PRJ-7?"), or the kind of value it is
  ("Which dates does it show?") when no label names it, and prefers a value of the kind its field is named for
  (`validate.fits`); each task carries what it asks (`Draft.asked`) so that `validate` drops one whose answer the
  replayed result does not show as that field's value;
- `multi_step`: a value one result shows in one place is the argument of another tool's call;
- `tool_choice`: which tool a request needs, no answer, for a tool it could not call or whose tasks do not hold.
Every tool gets a task before any gets a second; at most `n`. Prompts are built from the tool's description (its
first sentence) and the arguments in plain words: they never write a tool's or a parameter's identifier.
Validation is `validate.validate`, as for Claude's tasks.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from optimizer.definitions import Catalog, ToolDef
from optimizer.scoring import Expect
from optimizer.tasks import Task, assign_split
from optimizer.tasks.explore import Exploration, Observation, Seen, accepted, fitting, harvest
from optimizer.tasks.validate import NOUNS, Asked, fits
from optimizer.text.results import substantive
from optimizer.text.tokens import STOPWORDS, first_sentence, words

PURPOSE_WORDS = 14
OFFLINE_KINDS = ("lookup", "multi_step", "tool_choice")


@dataclass(frozen=True)
class Question:
    text: str
    answer: str
    match: str
    plain: str = ""
    """the question without naming the item (for a chained task, where the first call finds the item)"""
    asked: Asked | None = None


def question(observation: Observation, seen: Sequence[Seen], rng: random.Random) -> Question | None:
    """A question its result answers with one value that was the same in both calls and is not an argument."""
    given = {json.dumps(v) for v in observation.arguments.values()} | {str(v) for v in observation.arguments.values()}
    if not observation.stable or not substantive([observation.text]):
        return None
    ranked = []
    for s in seen:
        text = str(s.value)
        if text in given or len(text) < 2 or text not in observation.text or _dated(text):
            continue
        if s.label and s.anchor and s.anchor != text:
            rank = 0
        elif s.label and not s.shared:
            rank = 1
        elif (s.label and s.shared) or s.kind in NOUNS:  # a field's values, or a value of a kind a word names
            rank = 2
        else:
            continue
        ranked.append(((bool(s.label) and not fits(s.label, s.value), rank), s))
    if not ranked:
        return None
    best = min(key for key, _ in ranked)
    pick = rng.choice([s for key, s in ranked if key == best])
    numeric = isinstance(pick.value, int | float) or pick.kind == "number"
    match = "number" if numeric else "contains"
    be = _be(pick.label)
    if best[1] == 0:
        return Question(f"What {be} the {pick.label} of {_quoted(pick.anchor or '')}?", str(pick.value), match,
                        f"What {be} the {pick.label}?", Asked(pick.label, pick.anchor))
    if best[1] == 1:
        return Question(f"What {be} the {pick.label}?", str(pick.value), match, asked=Asked(pick.label))
    if pick.label:
        return Question(f"Which {pick.label} values does it show?", str(pick.value), match, asked=Asked(pick.label))
    noun = NOUNS.get(pick.kind, "value")
    return Question(f"Which {_plural(noun)} does it show?", str(pick.value), match, asked=Asked(noun, by_kind=True))


def _dated(value: str) -> bool:
    """Whether a value names the day it was read (today's date or weekday, a day either side for time zones): an
    answer that changes with the calendar."""
    today = datetime.now(UTC).date()
    days = [today + timedelta(days=d) for d in (-1, 0, 1)]
    lowered = value.lower()
    return any(d.isoformat() in value or d.strftime("%A").lower() in lowered for d in days)


def _be(label: str) -> str:
    """"are" for a label that reads as a plural noun ("allergies", "linked issues"), else "is"."""
    return "are" if re.search(r"[^su]s$", label) else "is"


def _plural(noun: str) -> str:
    return noun if noun.endswith("s") else noun + "s"


def _quoted(value: Any) -> str:
    text = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
    return f'"{text}"' if " " in text else text


def purpose(tool: ToolDef, catalog: Catalog) -> str:
    """What the tool does, from its description's first sentence (at most PURPOSE_WORDS words), else its name; a
    sentence that writes a tool's name falls back to the name's words."""
    sentence = first_sentence(tool.description or "").rstrip(".!:")
    sentence = re.sub(r"\s*\([^)]*\)", "", sentence)
    tokens = sentence.split()
    if len(tokens) > PURPOSE_WORDS:
        tokens = tokens[:PURPOSE_WORDS]
        while tokens and tokens[-1].lower().strip(",;") in STOPWORDS:
            tokens.pop()
    text = " ".join(tokens).rstrip(",;")
    names = {n for n in catalog.names if "_" in n or re.search(r"[a-z][A-Z]", n)}
    if not text or any(n in text for n in names):
        text = " ".join(words(tool.name))
    return text[:1].upper() + text[1:]


def _request(tool: ToolDef, catalog: Catalog, arguments: Mapping[str, Any], skip: Iterable[str] = ()) -> str:
    shown = [f"{' '.join(words(name))} {_quoted(value)}" for name, value in arguments.items()
             if name not in skip and value not in ("", [""])]
    return purpose(tool, catalog) + (" — " + ", ".join(shown) if shown else "")


@dataclass(frozen=True)
class Draft:
    """One task before ordering and validation: its kind, prompt and expectation, and what its question asks about
    (None for a tool-choice request, which has no answer)."""

    kind: str
    prompt: str
    expect: Expect
    asked: Asked | None = None


@dataclass
class Drafts:
    """Tasks per tool (lookups, or a tool-choice request when none), and the multi-step ones."""

    per_tool: dict[str, list[Draft]] = field(default_factory=dict)
    multi: list[Draft] = field(default_factory=list)
    fallback: dict[str, Draft] = field(default_factory=dict)
    """a tool-choice request per tool, for tools whose other tasks do not hold"""


def draft(catalog: Catalog, run: Exploration, *, seed: int = 0) -> Drafts:
    """Every task the exploration supports (kind, prompt, expect), before ordering and validation."""
    rng = random.Random(seed)
    drafts = Drafts({name: [] for name in catalog.names})
    for observation in run.observations:
        tool = catalog.get(observation.tool)
        asked = question(observation, harvest(observation.text, observation), rng)
        if asked is None:
            continue
        calls = ((observation.tool, json.dumps(dict(observation.arguments), sort_keys=True, ensure_ascii=False)),)
        prompt = f"{_request(tool, catalog, observation.arguments)}. {asked.text}"
        drafts.per_tool[tool.name].append(Draft("lookup", prompt, Expect(answer=asked.answer, match=asked.match,
                                                                          tools=(tool.name,), calls=calls),
                                                asked.asked))
        chained = _chained(observation, tool, catalog, asked)
        if chained is not None:
            drafts.multi.append(chained)
    for tool in catalog.tools:
        fit = fitting(tool, run.seen)
        known = {k: v for k, v in accepted(tool, run.observations).items() if k in fit or k in tool.required}
        arguments = {**fit, **known}
        drafts.fallback[tool.name] = Draft("tool_choice", _request(tool, catalog, arguments) + ".",
                                           Expect(tools=(tool.name,)))
        if not drafts.per_tool[tool.name]:
            drafts.per_tool[tool.name].append(drafts.fallback[tool.name])
    return drafts


def _chained(observation: Observation, tool: ToolDef, catalog: Catalog, asked: Question) -> Draft | None:
    """A two-call task when one argument came from another tool's result, in one place of it."""
    for name, seen in observation.fed.items():
        source = seen.source
        if source is None or source.tool == tool.name or not source.stable or (seen.shared and not seen.anchor):
            continue
        where = f" for {_quoted(seen.anchor)}" if seen.anchor and seen.anchor != str(seen.value) else ""
        first = _request(catalog.get(source.tool), catalog, source.arguments)
        then = _request(tool, catalog, observation.arguments, skip=(name,))
        label = seen.label or " ".join(words(name))
        prompt = (f"{first}. Then, with the {label} it shows{where}: {then[:1].lower()}{then[1:]}. "
                  f"{asked.plain or asked.text}")
        calls = tuple((o.tool, json.dumps(dict(o.arguments), sort_keys=True, ensure_ascii=False))
                      for o in (source, observation))
        return Draft("multi_step", prompt, Expect(answer=asked.answer, match=asked.match,
                                                  tools=(source.tool, tool.name), calls=calls), asked.asked)
    return None


def ordered(drafts: Drafts, n: int) -> list[Draft]:
    """Every tool's first task, then one multi-step task and every tool's next task in turn, up to n."""
    out: list[Draft] = []
    depth = max([len(v) for v in drafts.per_tool.values()] + [len(drafts.multi)], default=0)
    for index in range(depth):
        if index > 0 and index - 1 < len(drafts.multi):
            out.append(drafts.multi[index - 1])
        out += [tasks[index] for tasks in drafts.per_tool.values() if index < len(tasks)]
    out += drafts.multi[max(depth - 1, 0):]
    unique: dict[str, Draft] = {}
    for item in out:
        unique.setdefault(item.prompt, item)  # the first task with a prompt
    return list(unique.values())[:n]


def offline_tasks(items: Sequence[Draft], heldout: float, made: Mapping[str, str], *, start: int = 1) -> list[Task]:
    """Tasks with ids `<kind>-<tool>-<number>` (numbers from `start`), tagged generated, offline and the kind."""
    tasks = []
    for number, item in enumerate(items, start=start):
        task_id = f"{item.kind.replace('_', '-')}-{item.expect.tools[-1].replace('_', '-')}-{number}"
        tasks.append(Task(task_id, item.prompt, item.expect, assign_split(task_id, heldout),
                          ("generated", "offline", item.kind), f"<generated>:{number}", tuple(made.items())))
    return tasks
