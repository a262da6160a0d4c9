"""report.md's account of what the rounds learned of the server: how many ran and why they stopped, the refused calls
left, and every probe the harness made with its results (`probes.py`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def refused_text(left: Mapping[str, Mapping[str, int]]) -> str:
    """"get_readings.unit ×3, get_readings (argument not settled) ×1", or "none"."""
    parts = [f"{tool} (argument not settled) ×{n}" if name == "?" else f"{tool}.{name} ×{n}"
             for tool, row in sorted(left.items()) for name, n in sorted(row.items())]
    return ", ".join(parts) or "none"


def shipped_lines(data: Mapping[str, Any]) -> list[str]:
    """What the terminal and report.md say of what ships, when it is not simply the winner."""
    shipped = data.get("shipped") or {}
    if shipped.get("nothing_to_fix"):
        return ["nothing to fix: the server's own definitions passed every train task without a failed call, so no "
                "round ran; `--goal shrink` looks for the same from fewer definition tokens"]
    if shipped.get("reason"):
        kept = (f"; the candidate's overlay is {shipped['candidate_overlay']} (optimizer eval --overlay it, or ship "
                "it by hand)") if shipped.get("candidate_overlay") else ""
        return [f"shipped: the server's own definitions — {shipped['reason']}{kept}"]
    return []


def learning_section(data: Mapping[str, Any]) -> list[str]:
    stop = data.get("stop") or {}
    rounds = data.get("rounds") or []
    setting = data.get("rounds_setting", "auto")
    lines = ["## Rounds and what they learned of the server", "",
             f"{len(rounds)} round(s) run (--rounds {setting}); stopped: {stop.get('text', data['stop_reason'])} "
             f"(`{stop.get('rule', '?')}`).",
             f"Refused calls left in the winner's failed train episodes: {refused_text(data.get('refused_left', {}))}."]
    for r in rounds:
        if r.get("refused_at_start"):
            lines.append(f"- round {r['round']} started with refused calls: {refused_text(r['refused_at_start'])}")
    probes = [(r["round"], p) for r in rounds for p in r.get("probes", [])]
    stopped = [(r["round"], r["probing_stopped"]) for r in rounds if r.get("probing_stopped")]
    if probes or stopped:
        lines += ["", "Probes (a refused train call made again with one argument changed at a time, to name the "
                  "argument the server refused; read-only tools only unless --allow-destructive):", ""]
        for number, probe in probes:
            lines += _probe_lines(number, probe)
        lines += [f"- round {n}: probing stopped — {_code(why)}" for n, why in stopped]
    return [*lines, ""]


def _probe_lines(number: int, probe: Mapping[str, Any]) -> list[str]:
    settled = ", ".join([*(f"{k} refused" for k in sorted(probe["refused"])),
                         *(f"{k} accepted {_code(_value(v))}" for k, v in sorted(probe["accepted"].items()))])
    head = (f"- round {number}: {probe['tool']}({_code(json.dumps(probe['arguments'], sort_keys=True))}) was "
            f"refused ({_code(probe['error'])}); settled: {settled or 'nothing'}")
    calls = [f"  - changed {call['changed']}: {_code(json.dumps(call['arguments'], sort_keys=True))} → "
             f"{'error' if call['is_error'] else 'ok'}: {_code(call['result'])}" for call in probe["calls"]]
    return [head, *calls]


def _value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _code(text: str, limit: int = 200) -> str:
    """Server or task text for Markdown: one line, no backticks or HTML, cut, in code quotes."""
    flat = " ".join(str(text).split()).replace("`", "'").replace("<", "‹").replace(">", "›")
    return f"`{flat[:limit]}{'…' if len(flat) > limit else ''}`"
