"""The ledger: what the server accepted and refused, per tool and parameter, over a whole optimization run.

Built from every TRAIN call the run has seen (every round, every candidate) and the harness's probes (`ProbeVerdict`):
- `accepted`: values a call carried when the server answered without an error, and values a probe saw it take;
- `refused`: values the server refused for this parameter, with the error; a refusal is put on a parameter by a
  probe, else by the error naming the parameter or quoting the value, else when the call had one argument — a
  refused call none of these settles stays `unsettled` under its tool;
- `shown`: values the server's own results show under a field named like the parameter (`named_like`: a result's
  `unit` for a `unit` parameter, `level_code` for `level`), by the tool and field that showed them.

A refusal is an error result that is not labelled a business, permission or transient error (those refuse the
request, not a value). A value both accepted and refused for a parameter counts as accepted.

`text` condenses it for the proposer (shapes and short samples, fenced as untrusted data, within a token budget);
`grounded` is what a definition may state as a value without copying a task (`screening`); `teaching_refused` finds
a refused value a text states for its parameter. The ledger is plain data: `to_json`/`from_json` keep it in a run."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from optimizer.definitions import Catalog
from optimizer.prompt_files import fence
from optimizer.propose.refusals import ProbeVerdict, error_parts, refused_arguments, value_text
from optimizer.propose.seen import CallSeen, EpisodeSeen
from optimizer.text.results import result_fields
from optimizer.text.tokens import estimate_tokens, words
from optimizer.text.values import find_values, names_a_file

VALUE_CHARS = 40
"""Longer values are text, not values: never sampled, never grounded."""
SAMPLES = 3
"""Accepted values shown per parameter."""
SHOWN_SAMPLES = 8
"""Values shown per result field."""
PASSED_SETS = 5
"""Argument sets kept per tool that the server accepted whole."""
REFUSED_SAMPLES = 4
"""Refused values shown per parameter (with the first one's error)."""
ERROR_CHARS = 120
GENERIC = frozenset({"id", "ids", "code", "name", "type", "value", "key", "number", "no", "ref", "item", "data"})
"""Words that say what kind of field it is, not what it is about: `id` alone is not `patient_id`."""
_NEGATED = re.compile(r"\b(?:not|never|no|don't|do not|instead of|rather than|unlike|except|avoid|refused|rejected|"
                      r"invalid|wrong)\b", re.IGNORECASE)


@dataclass
class ParameterRecord:
    accepted: Counter[str] = field(default_factory=Counter)
    """value -> how many calls (and probes) it passed in"""
    tasks: dict[str, set[str]] = field(default_factory=dict)
    """accepted value -> the train tasks whose calls carried it ("probe" for a probe)"""
    refused: dict[str, str] = field(default_factory=dict)
    """value -> the error the server gave (the first seen)"""
    shown: dict[str, Counter[str]] = field(default_factory=dict)
    """"tool.field" -> value -> how many results showed it"""

    def refused_only(self) -> dict[str, str]:
        """Refused values the server never accepted for this parameter."""
        return {v: e for v, e in self.refused.items() if v not in self.accepted}


@dataclass
class Ledger:
    tools: dict[str, dict[str, ParameterRecord]] = field(default_factory=dict)
    """original tool name -> parameter -> what the server did with its values"""
    unsettled: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """tool -> refused calls no error, probe or single argument put on a parameter: {arguments, error}"""
    passed: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """tool -> argument sets calls passed with (distinct, the first PASSED_SETS): what a probe starts from"""
    calls: int = 0
    """train calls read"""

    def record(self, tool: str, parameter: str) -> ParameterRecord:
        return self.tools.setdefault(tool, {}).setdefault(parameter, ParameterRecord())

    # --- what screening reads ---------------------------------------------------------------------------

    def grounded(self, answers: Iterable[str | None] = ()) -> list[str]:
        """Values the server itself showed as a parameter's: shown in its results under a field named like the
        parameter, accepted from a probe, or accepted in calls of two or more train tasks (a value only one task's
        prompt gave is that task's, not the server's). Only its vocabulary (`vocabulary`: a unit, a code, a status),
        never a record's value (a name, an id, a date), and never a train answer or part of one."""
        said = [a.lower() for a in answers if a]
        out: set[str] = set()
        for params in self.tools.values():
            for rec in params.values():
                out.update(v for shown in rec.shown.values() for v in shown)
                out.update(v for v, tasks in rec.tasks.items() if "probe" in tasks or len(tasks) >= 2)
        return sorted(v for v in out if vocabulary(v) and not any(v.lower() in a for a in said))

    def teaching_refused(self, tool: str, texts: Mapping[str, str]) -> list[str]:
        """For one tool's edited texts (parameter name -> its new description, "" -> the tool's description), each
        refused value a text states for its parameter: in the parameter's own description, or in a sentence of the
        tool's description naming the parameter — not in a sentence that says what not to send, nor in one that also
        names a value the server accepted or showed for the parameter (there the refused word glosses or maps to it:
        "STD (standard)"). One line each."""
        out = []
        for name, rec in sorted((self.tools.get(tool) or {}).items()):
            refused = {v: e for v, e in rec.refused_only().items() if _teachable(v)}
            if not refused:
                continue
            places = [texts.get(name, "")] + [s for s in _sentences(texts.get("", "")) if _names(s, name)]
            sentences = [s for p in places for s in _sentences(p) if not _NEGATED.search(s) and not _glosses(s, rec)]
            for value, error in sorted(refused.items()):
                pattern = re.compile(rf"(?<![\w/.-]){re.escape(value)}(?![\w/-])", re.IGNORECASE)
                if any(pattern.search(s) for s in sentences):
                    out.append(f"states {value!r} as a value of {tool}.{name}, which the server refused in this run "
                               f"({_clip(error, ERROR_CHARS)})")
        return out

    # --- the proposer's view -----------------------------------------------------------------------------

    def text(self, budget: int, tools: Collection[str] | None = None) -> str:
        """The ledger for the proposer within `budget` tokens, fenced; parameters with refusals first, then those
        whose values results show, then the rest; "" when there is nothing. `tools`: only these tools'."""
        lines = self._lines(tools)
        if not lines:
            return ""
        head = ("## What the server accepted and refused\nEvery train call of the run so far (all rounds and "
                "candidates) and the harness's probes, per tool and parameter: values it refused with its error, "
                "values its own results show under a field named like the parameter, and the shapes of values it "
                "accepted (A: a capital, a: a small letter, 9: a digit). A value it refused is no value to teach.")
        kept: list[str] = []
        for line in lines:
            if estimate_tokens("\n".join([head, *kept, line])) + 60 > budget:
                break
            kept.append(line)
        if not kept:
            return ""
        left = len(lines) - len(kept)
        note = f"\n({left} more lines left out for the token budget)" if left else ""
        return head + "\n" + fence("server ledger", "\n".join(kept)) + note

    def _lines(self, tools: Collection[str] | None) -> list[str]:
        rows = []
        for tool, params in sorted(self.tools.items()):
            if tools is not None and tool not in tools:
                continue
            for name, rec in sorted(params.items()):
                parts = []
                refused = rec.refused_only()
                if refused:
                    values = sorted(refused, key=lambda v: (-len(v), v))[:REFUSED_SAMPLES]
                    first = refused[values[0]]
                    parts.append(f"refused {len(refused)} value(s): {', '.join(_quoted(v) for v in values)} "
                                 f"(error: {_clip(first, ERROR_CHARS)})")
                for where, shown in sorted(rec.shown.items()):
                    values = ranked(shown)[:SHOWN_SAMPLES]
                    more = f" and {len(shown) - len(values)} more" if len(shown) > len(values) else ""
                    parts.append(f"results of {where} show {', '.join(_quoted(v) for v in values)}{more}")
                if rec.accepted:
                    parts.append(_accepted_part(rec))
                elif refused:
                    parts.append("no value accepted yet")
                rank = 0 if refused else 1 if rec.shown else 2
                rows.append((rank, f"{tool}.{name}: " + "; ".join(parts)))
        for tool, calls in sorted(self.unsettled.items()):
            if tools is not None and tool not in tools:
                continue
            sample = "; ".join(f"{_clip(json.dumps(c['arguments'], sort_keys=True, ensure_ascii=False), 160)} -> "
                               f"{_clip(c['error'], ERROR_CHARS)}" for c in calls[:2])
            rows.append((0, f"{tool}: {len(calls)} refused call(s) whose refused argument neither the error nor a "
                              f"probe named: {sample}"))
        return [line for _, line in sorted(rows, key=lambda r: r[0])]

    # --- storage ----------------------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {"calls": self.calls, "unsettled": self.unsettled, "passed": self.passed,
                "tools": {tool: {name: {"accepted": dict(rec.accepted),
                                        "tasks": {v: sorted(t) for v, t in rec.tasks.items()},
                                        "refused": rec.refused,
                                        "shown": {w: dict(c) for w, c in rec.shown.items()}}
                                 for name, rec in params.items()} for tool, params in self.tools.items()}}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Ledger:
        ledger = cls(calls=int(data.get("calls", 0)), unsettled={t: list(c) for t, c in data["unsettled"].items()},
                     passed={t: list(s) for t, s in data["passed"].items()})
        for tool, params in data["tools"].items():
            for name, rec in params.items():
                ledger.tools.setdefault(tool, {})[name] = ParameterRecord(
                    Counter(rec["accepted"]), {v: set(t) for v, t in rec["tasks"].items()}, dict(rec["refused"]),
                    {w: Counter(c) for w, c in rec["shown"].items()})
        return ledger


def build_ledger(catalog: Catalog, episodes: Iterable[EpisodeSeen], probes: Sequence[ProbeVerdict] = ()) -> Ledger:
    """The ledger of these TRAIN episodes and probes (see the module docstring)."""
    ledger = Ledger()
    settled = {_call_key(p.tool, p.arguments): p for p in probes}
    parameters = {t.name: list(t.properties) for t in catalog.tools}
    fields: dict[str, list[tuple[str, str]]] = {}
    for episode in episodes:
        for call in episode.calls:
            if call.tool is None or call.tool not in parameters:
                continue
            ledger.calls += 1
            _read_call(ledger, episode.task_id, call, settled.get(_call_key(call.tool, call.arguments)),
                       parameters[call.tool])
            if not call.is_error:
                _read_result(ledger, call, parameters, fields)
    for probe in probes:
        for name, value in probe.accepted.items():
            _accept(ledger, probe.tool, name, value, "probe")
        for call in probe.passed:
            _read_result(ledger, call, parameters, fields)
            _keep_passed(ledger, probe.tool, call.arguments)
    return ledger


def named_like(label: str, parameter: str) -> bool:
    """Whether a result's field (its label's words) names what a parameter takes: the same words, or one holds the
    other's with at most one word more where the fewer say what it is about (not only `id` or `code`)."""
    a, b = _name_words(label), _name_words(parameter)
    if not a or not b:
        return False
    if a == b:
        return True
    small, large = (a, b) if len(a) <= len(b) else (b, a)
    return small <= large and len(large) - len(small) <= 1 and bool(small - GENERIC)


def shape(value: str) -> str:
    """A value's shape: capitals A, small letters a, digits 9, the rest as it is; long text as its length."""
    if len(value) > VALUE_CHARS:
        return f"text of {len(value)} characters"
    return re.sub(r"[a-z]", "a", re.sub(r"[A-Z]", "A", re.sub(r"\d", "9", value)))


def _read_call(ledger: Ledger, task: str, call: CallSeen, probe: ProbeVerdict | None,
               parameters: Sequence[str]) -> None:
    assert call.tool is not None
    if not call.is_error:
        _keep_passed(ledger, call.tool, call.arguments)
        for name, value in call.arguments.items():
            _accept(ledger, call.tool, name, value, task)
        return
    refused = refused_arguments(call, probe, parameters)
    _, message = error_parts(call.result)
    if refused is None:
        entry = {"arguments": call.arguments, "error": message}
        if entry not in ledger.unsettled.setdefault(call.tool, []):
            ledger.unsettled[call.tool].append(entry)
        return
    for name in refused:
        if name in call.arguments:
            ledger.record(call.tool, name).refused.setdefault(value_text(call.arguments[name]), message)


def _accept(ledger: Ledger, tool: str, name: str, value: Any, task: str) -> None:
    """A value the server took for a parameter, in a call of `task` ("probe" for a probe)."""
    rec = ledger.record(tool, name)
    rec.accepted[value_text(value)] += 1
    rec.tasks.setdefault(value_text(value), set()).add(task)


def _keep_passed(ledger: Ledger, tool: str, arguments: Mapping[str, Any]) -> None:
    sets = ledger.passed.setdefault(tool, [])
    if arguments and arguments not in sets and len(sets) < PASSED_SETS:
        sets.append(dict(arguments))


def _read_result(ledger: Ledger, call: CallSeen, parameters: Mapping[str, Sequence[str]],
                 fields: dict[str, list[tuple[str, str]]]) -> None:
    """Values the result shows under fields named like any tool's parameters (`fields`: each label's parameters,
    filled as labels are met)."""
    for label, value in result_fields(call.result):
        text = value_text(value)
        if not _short(text):
            continue
        if label not in fields:
            fields[label] = [(tool, name) for tool, names in parameters.items() for name in names
                             if named_like(label, name)]
        where = f"{call.tool}.{'_'.join(words(label))}"
        for tool, name in fields[label]:
            ledger.record(tool, name).shown.setdefault(where, Counter())[text] += 1


RECORD_KINDS = frozenset({"email", "url", "uuid", "hash_id", "prefixed_id", "phone", "money", "date", "datetime",
                          "date_text"})
"""Kinds of value (`values.find_values`) that pick out one record, not a term of the server's vocabulary."""


def vocabulary(value: str) -> bool:
    """A short value that is a term, not a record's: no id, email, phone, amount, date, file path or number of three
    or more digits in it, and not a name (two or more capitalised words)."""
    if not _short(value) or re.search(r"\d{3,}", value):
        return False
    found = find_values(value, 0)
    if any(f.kind in RECORD_KINDS or (f.kind == "path" and names_a_file(f.value)) for f in found):
        return False
    return len(re.findall(r"\b[A-Z][a-z]", value)) < 2


def ranked(counts: Mapping[str, int]) -> list[str]:
    """The keys, most counted first, then in sorted order (the same whatever order the counts were made in)."""
    return sorted(counts, key=lambda key: (-counts[key], key))


def _accepted_part(rec: ParameterRecord) -> str:
    shapes = Counter(shape(v) for v in rec.accepted.elements())
    listed = ", ".join(f"{s} ×{shapes[s]}" for s in ranked(shapes)[:3])
    samples = [v for v in ranked(rec.accepted) if _short(v)][:SAMPLES]
    said = f" (e.g. {', '.join(_quoted(v) for v in samples)})" if samples else ""
    return f"accepted {sum(rec.accepted.values())} time(s), shapes {listed}{said}"


def _call_key(tool: str, arguments: Mapping[str, Any]) -> str:
    return tool + json.dumps(arguments, sort_keys=True, ensure_ascii=False)


def _name_words(name: str) -> frozenset[str]:
    return frozenset(w[:-1] if w.endswith("s") and len(w) > 3 and not w.endswith("ss") else w for w in words(name))


def _short(value: str) -> bool:
    return 0 < len(value.strip()) <= VALUE_CHARS and len(value.split()) <= 3


def _teachable(value: str) -> bool:
    """A refused value a text could state: a short value with a letter or digit, not one character alone."""
    return _short(value) and len(value.strip()) > 1 and bool(re.search(r"\w", value))


def _glosses(sentence: str, rec: ParameterRecord) -> bool:
    """Whether a sentence names a value the server accepted or showed for the parameter."""
    good = {v for v in rec.accepted if _teachable(v)} | {v for shown in rec.shown.values() for v in shown
                                                          if _teachable(v)}
    return any(re.search(rf"(?<![\w/.-]){re.escape(v)}(?![\w/-])", sentence) for v in good)


def _names(sentence: str, parameter: str) -> bool:
    own = _name_words(parameter) - GENERIC or _name_words(parameter)
    return bool(own) and own <= _name_words(sentence) | {parameter.lower()}


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?;])\s+|\n+", text) if s.strip()]


def _quoted(value: str) -> str:
    return repr(_clip(value, VALUE_CHARS))


def _clip(text: str, limit: int) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[:limit].rstrip() + "…"


def refused_in(episodes: Iterable[EpisodeSeen], probes: Sequence[ProbeVerdict] = (),
               catalog: Catalog | None = None) -> dict[str, dict[str, int]]:
    """Refused calls of the FAILED episodes among these, by tool and the parameter refused ("?" when nothing settles
    which): what a later round could still learn from the server. `catalog`: the tools' parameters, to read errors
    about a parameter a call left out."""
    parameters = {t.name: list(t.properties) for t in catalog.tools} if catalog is not None else {}
    settled = {_call_key(p.tool, p.arguments): p for p in probes}
    out: dict[str, dict[str, int]] = {}
    for episode in episodes:
        if episode.passed:
            continue
        for call in episode.calls:
            if call.tool is None:
                continue
            named = refused_arguments(call, settled.get(_call_key(call.tool, call.arguments)),
                                      parameters.get(call.tool, ()))
            for name in ["?"] if named is None else named:
                row = out.setdefault(call.tool, {})
                row[name] = row.get(name, 0) + 1
    return {tool: dict(sorted(row.items())) for tool, row in sorted(out.items())}
