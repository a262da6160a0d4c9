"""Probes: which argument a refused call was refused for, asked of the server itself when its error does not say.

A probe takes one refused train call and calls the same tool again with ONE argument changed at a time:
- from an argument set the server accepted for the tool (one a call passed with, or the refused call with every
  argument it has another value for swapped to that value, when that passes): the refused call's value put back in,
  one argument at a time — a pass names it accepted, an error that quotes it or reads as the probed refusal names it
  refused, any other error (a clash with the set's other arguments) settles nothing;
- with no accepted set: the refused call with one argument swapped to another value — a pass or a different error
  names the swapped argument as the one refused.
"Another value" for a parameter is one the ledger holds: accepted for it, accepted for a parameter of the same name
of another tool, or shown in results under a field named like it (`ledger.py`), never one it refused.

Contracts:
- Only tools annotated read-only are probed, or any tool with --allow-destructive; never one that may write
  otherwise. `probe_calls` makes at most `limit` calls, one at a time, in a deterministic order (so an offline or
  replayed run makes the same calls as the run it repeats).
- Every call is kept with its result (`Probe.calls`) for the report; a server that fails during a probe ends the
  round's probing, with the reason.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from optimizer.definitions import Catalog, ToolDef
from optimizer.optimize.config import PROBE_CALLS
from optimizer.propose.base import CallSeen, EpisodeSeen
from optimizer.propose.ledger import Ledger, ranked
from optimizer.propose.refusals import ProbeVerdict, error_parts, refused_arguments
from optimizer.servers import CallOutcome, ServerCrashed

RESULT_CHARS = 2000
"""Of a probe call's result, what is kept (the report shows less)."""

CallTool = Callable[[str, dict[str, Any]], Awaitable[CallOutcome]]


@dataclass(frozen=True)
class ProbeCall:
    arguments: dict[str, Any]
    changed: str
    """the argument this call changed ("*": every argument another value was known for)"""
    is_error: bool
    result: str


@dataclass
class Probe:
    """One refused call, probed: the calls made and what they settled."""

    tool: str
    arguments: dict[str, Any]
    error: str
    calls: list[ProbeCall] = field(default_factory=list)
    refused: dict[str, Any] = field(default_factory=dict)
    accepted: dict[str, Any] = field(default_factory=dict)

    def verdict(self) -> ProbeVerdict:
        passed = tuple(CallSeen(self.tool, self.tool, c.arguments, False, c.result) for c in self.calls
                       if not c.is_error)
        return ProbeVerdict(self.tool, self.arguments, dict(self.refused), dict(self.accepted), passed)

    def to_json(self) -> dict[str, Any]:
        return {"tool": self.tool, "arguments": self.arguments, "error": self.error,
                "calls": [vars(c) for c in self.calls], "refused": self.refused, "accepted": self.accepted}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Probe:
        return cls(data["tool"], dict(data["arguments"]), data["error"], [ProbeCall(**c) for c in data["calls"]],
                   dict(data["refused"]), dict(data["accepted"]))


def probeable(tool: ToolDef, *, allow_destructive: bool) -> bool:
    """A tool annotated read-only, or any tool when the user allowed destructive calls."""
    return allow_destructive or tool.hint("readOnlyHint") is True


def refused_calls(catalog: Catalog, episodes: Sequence[EpisodeSeen], done: Sequence[Probe], *,
                  allow_destructive: bool) -> list[tuple[str, dict[str, Any], str]]:
    """The refused calls of failed episodes worth a probe, distinct, in the order to probe them: calls no error
    settled first, then the rest with two or more arguments (a refusal the error named may hide another argument's),
    by tool and arguments; never a call probed before, nor one to a tool `probeable` refuses."""
    seen = {(p.tool, _key(p.arguments)) for p in done}
    out: dict[tuple[str, str], tuple[int, str, dict[str, Any], str]] = {}
    for episode in episodes:
        if episode.passed:
            continue
        for call in episode.calls:
            if call.tool is None or not call.arguments or (call.tool, _key(call.arguments)) in seen:
                continue
            if call.tool not in catalog.names or not probeable(catalog.get(call.tool),
                                                               allow_destructive=allow_destructive):
                continue
            named = refused_arguments(call, parameters=list(catalog.get(call.tool).properties))
            if named == [] or (named is not None and len(call.arguments) == 1):
                continue  # not refused, or refused for its one argument: nothing a probe could add
            out.setdefault((call.tool, _key(call.arguments)),
                           (0 if named is None else 1, call.tool, call.arguments, error_parts(call.result)[1]))
    return [(tool, args, error) for _, tool, args, error in sorted(out.values(), key=lambda x: (x[0], x[1],
                                                                                                 _key(x[2])))]


async def probe_calls(call: CallTool, catalog: Catalog, ledger: Ledger,
                      targets: Sequence[tuple[str, dict[str, Any], str]], *, limit: int = PROBE_CALLS,
                      ) -> tuple[list[Probe], str | None]:
    """Probe `targets` in order with at most `limit` calls; the probes made, and why probing stopped early (a server
    fault) or None."""
    made: list[Probe] = []
    left = limit
    for tool, arguments, error in targets:
        if left <= 0:
            break
        probe = Probe(tool, dict(arguments), error)
        try:
            left -= await _probe_one(call, catalog.get(tool), ledger, probe, left)
        except ServerCrashed as exc:
            if probe.calls:
                made.append(probe)
            return made, f"the server failed during a probe of {tool}: {exc}"
        if probe.calls:
            made.append(probe)
    return made, None


async def _probe_one(call: CallTool, tool: ToolDef, ledger: Ledger, probe: Probe, budget: int) -> int:
    """Probe one refused call within `budget` calls; returns the calls made."""
    arguments = probe.arguments
    others = {name: value for name in sorted(arguments)
              if (value := _other_value(tool, name, arguments[name], ledger)) is not None}
    base = _accepted_set(tool.name, arguments, ledger)
    if base is None and len(others) >= 2 and budget > 1:  # with one other value, this is the swap below
        swapped = {**arguments, **others}
        if not (await _call(call, probe, swapped, "*")).is_error:
            base = swapped
            probe.accepted.update(others)
    if base is not None:
        for name in sorted(arguments):
            if len(probe.calls) >= budget:
                break
            if base.get(name) != arguments[name]:
                outcome = await _call(call, probe, {**base, name: arguments[name]}, name)
                if not outcome.is_error:
                    probe.accepted[name] = arguments[name]
                elif _about(outcome.text, arguments[name], probe.error):
                    probe.refused[name] = arguments[name]
        return len(probe.calls)
    named = refused_arguments(CallSeen(tool.name, tool.name, arguments, True, probe.error), None, list(tool.properties))
    for name in [n for n in others if named is None or n in named]:
        if len(probe.calls) >= budget:
            break
        swapped = {**arguments, name: others[name]}
        outcome = await _call(call, probe, swapped, name)
        if not outcome.is_error:  # the swapped argument was the one refused; the others passed
            probe.refused[name] = arguments[name]
            probe.accepted.update({k: v for k, v in swapped.items() if k not in probe.refused})
            break
        if error_parts(outcome.text)[1] != probe.error:  # it passed the check that refused the call: the next says
            probe.refused[name] = arguments[name]
            after = refused_arguments(CallSeen(tool.name, tool.name, swapped, True, outcome.text), None,
                                      list(tool.properties)) or []
            probe.refused.update({k: arguments[k] for k in after if k != name})
            break
    return len(probe.calls)


def _about(error: str, value: Any, refusal: str) -> bool:
    """Whether an error refuses this value: it quotes it, or it reads as the refusal being probed with its quoted
    values left out ("invalid value 'x'" is "invalid value 'y'"). Another error ("not found": the value clashed with
    the accepted set's other arguments) settles nothing."""
    message = error_parts(error)[1]
    text = value if isinstance(value, str) else json.dumps(value)
    return f"'{text}'" in message or f'"{text}"' in message or _unquoted(message) == _unquoted(refusal)


def _unquoted(message: str) -> str:
    return re.sub(r"'[^']*'|\"[^\"]*\"", "''", message).strip()


async def _call(call: CallTool, probe: Probe, arguments: dict[str, Any], changed: str) -> CallOutcome:
    outcome = await call(probe.tool, arguments)
    text = " ".join(outcome.text.split())
    probe.calls.append(ProbeCall(arguments, changed, outcome.is_error,
                                 text if len(text) <= RESULT_CHARS else text[:RESULT_CHARS] + "…"))
    return outcome


def _accepted_set(tool: str, arguments: Mapping[str, Any], ledger: Ledger) -> dict[str, Any] | None:
    """An argument set a call of this tool passed with, over the same arguments, sharing the most values with the
    refused call (the first such in the ledger on ties)."""
    sets = [dict(s) for s in ledger.passed.get(tool, []) if set(s) == set(arguments)]
    if not sets:
        return None
    return max(sets, key=lambda s: sum(s[k] == arguments[k] for k in s))


def _other_value(tool: ToolDef, name: str, value: Any, ledger: Ledger) -> Any:
    """Another value for this parameter the ledger holds (see the module docstring), typed as the schema asks; None
    when there is none."""
    own = ledger.tools.get(tool.name, {}).get(name)
    refused = set(own.refused_only()) if own else set()
    texts: list[str] = []
    if own is not None:
        texts += ranked(own.accepted)
    for other in sorted(ledger.tools):
        rec = ledger.tools[other].get(name)
        if other != tool.name and rec is not None:
            texts += ranked(rec.accepted)
    if own is not None:
        texts += [v for where in sorted(own.shown) for v in ranked(own.shown[where])]
    kind = str((tool.properties.get(name) or {}).get("type") or "string")
    current = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    for text in texts:
        if text == current or text in refused:
            continue
        typed = _typed(text, kind)
        if typed is not None:
            return typed
    return None


def _typed(text: str, kind: str) -> Any:
    if kind == "string":
        return text
    try:
        value = json.loads(text)
    except ValueError:
        return None
    expected = {"integer": int, "number": int | float, "boolean": bool}.get(kind)
    if expected is None or (isinstance(value, bool) and kind != "boolean"):
        return None if expected is not None else value
    return value if isinstance(value, expected) else None


def _key(arguments: Mapping[str, Any]) -> str:
    return json.dumps(arguments, sort_keys=True, ensure_ascii=False)
