"""Pinned tool definitions: a lock file of what a server exposes, and what changed since, by kind.

MCP clients and scanners treat a changed tool definition as a possible rug pull. A lock lets a user show that the
definitions they run are the reviewed ones, and notice when an upstream changes under them.

Contracts:
- `lock_of(catalog)`: {"version": 1, "server", "sha256", "tools": {name: {"sha256", "definition"}}}; a tool's hash
  covers its name, description, input schema and annotations as exposed (`ToolDef.canonical` without the output
  schema and title), the whole hash covers every tool's hash in name order. `load_lock` raises LockError.
- `differences(lock, catalog)`: every difference, each with one KIND: a tool added or removed; in new text, a link
  (`new-url`), an instruction aimed at the agent (`agent-instruction`), one to keep something from the user
  (`conceal-instruction`), a name of another tool or a `mcp__`/`server:tool` reference (`tool-reference`), invisible
  characters (`invisible-characters`); a weakened annotation (destructiveHint true → not true, readOnlyHint not
  true → true, idempotentHint or openWorldHint turned around); a schema that accepts more (`schema-loosened`: a
  required parameter dropped, additionalProperties opened, an enum widened or removed, a parameter added) or less
  (`schema-tightened`); and otherwise a plain `text-edit`. Only `text-edit` is harmless by default (`BLOCKING`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from optimizer.definitions import Catalog, ToolDef, digest
from optimizer.files.atomic import atomic_write
from optimizer.propose.safety import agent_instructions, invisible_characters, links_in

VERSION = 1
KINDS = ("tool-added", "tool-removed", "new-url", "agent-instruction", "conceal-instruction", "tool-reference",
         "invisible-characters", "annotation-weakened", "schema-loosened", "schema-tightened", "text-edit")
BLOCKING = frozenset(KINDS) - {"text-edit"}
_CONCEAL = re.compile(r"\b(?:tell|inform|mention|reveal|show|notify|alert|disclos|hide|conceal|secret)", re.I)
_FOREIGN = re.compile(r"\bmcp__\w+|\b[\w-]+:[a-z_][\w-]*\b(?!//)")


class LockError(ValueError):
    """A lock file that cannot be used; the message names the file."""


@dataclass(frozen=True)
class Difference:
    tool: str
    kind: str
    detail: str

    def to_json(self) -> dict[str, str]:
        return {"tool": self.tool, "kind": self.kind, "detail": self.detail}


def pinned(tool: ToolDef) -> dict[str, Any]:
    """What a lock pins of a tool."""
    out = {"name": tool.name, "description": tool.description, "input_schema": dict(tool.input_schema)}
    if tool.annotations:
        out["annotations"] = dict(tool.annotations)
    return out


def lock_of(catalog: Catalog) -> dict[str, Any]:
    """The lock of what `catalog` exposes (see the module docstring)."""
    tools = {t.name: {"sha256": digest(pinned(t)), "definition": pinned(t)} for t in catalog.tools}
    return {"version": VERSION, "server": catalog.server_name,
            "sha256": digest([tools[name]["sha256"] for name in sorted(tools)]), "tools": tools}


def write_lock(path: Path, catalog: Catalog) -> dict[str, Any]:
    """Write `lock_of(catalog)` to `path` (atomically); return it."""
    lock = lock_of(catalog)
    atomic_write(path, json.dumps(lock, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    return lock


def load_lock(path: Path) -> dict[str, Any]:
    """A lock written by `write_lock`; raises LockError naming the file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise LockError(f"{path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise LockError(f"{path}: not JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("tools"), dict):
        raise LockError(f"{path}: not a tools lock of version {VERSION} (write one with `optimizer pin`)")
    return data


def differences(lock: Mapping[str, Any], catalog: Catalog) -> list[Difference]:
    """Every difference between the lock and the catalog, tools in the catalog's order, then removed ones."""
    locked = {name: ToolDef.from_canonical(entry["definition"]) for name, entry in lock["tools"].items()}
    out: list[Difference] = []
    names = set(catalog.names) | set(locked)
    for tool in catalog.tools:
        before = locked.get(tool.name)
        if before is None:
            out.append(Difference(tool.name, "tool-added", "a tool the lock does not have"))
        elif digest(pinned(before)) != digest(pinned(tool)):
            out += compare(before, tool, names)
    out += [Difference(name, "tool-removed", "the lock has it; the server no longer lists it")
            for name in locked if name not in catalog]
    return out


def compare(before: ToolDef, after: ToolDef, names: set[str]) -> list[Difference]:
    """How one tool's pinned definition changed, by kind (see the module docstring)."""
    old_text, new_text = _texts(before), _texts(after)
    added = "\n".join(t for t in new_text if t not in old_text)
    out = [Difference(after.name, "new-url", url) for url in links_in(added) if url not in "\n".join(old_text)]
    for phrase in agent_instructions(added):
        kind = "conceal-instruction" if _CONCEAL.search(phrase) else "agent-instruction"
        out.append(Difference(after.name, kind, phrase))
    others = {n for n in names if n != after.name and n != before.name}
    referenced = sorted({n for n in others if re.search(rf"\b{re.escape(n)}\b", added)
                         and not re.search(rf"\b{re.escape(n)}\b", "\n".join(old_text))})
    referenced += sorted({m for m in _FOREIGN.findall(added) if m not in "\n".join(old_text)})
    out += [Difference(after.name, "tool-reference", ref) for ref in referenced]
    out += [Difference(after.name, "invisible-characters", c) for c in invisible_characters(added)]
    out += _annotations(before, after) + _schema(before, after)
    if not out and (old_text != new_text):
        out.append(Difference(after.name, "text-edit", "name or description text changed"))
    return out


def _texts(tool: ToolDef) -> list[str]:
    texts = [tool.name, tool.description]
    for prop in tool.properties.values():
        texts.append(str(prop.get("description") or ""))
    return texts


def _annotations(before: ToolDef, after: ToolDef) -> list[Difference]:
    out: list[Difference] = []
    if before.hint("destructiveHint") is True and after.hint("destructiveHint") is not True:
        out.append(Difference(after.name, "annotation-weakened", "destructiveHint no longer true"))
    if before.hint("readOnlyHint") is not True and after.hint("readOnlyHint") is True:
        out.append(Difference(after.name, "annotation-weakened", "readOnlyHint now true"))
    for hint in ("idempotentHint", "openWorldHint"):
        if before.hint(hint) is not None and after.hint(hint) != before.hint(hint):
            change = f"{hint} {before.hint(hint)} → {after.hint(hint)}"
            out.append(Difference(after.name, "annotation-weakened", change))
    return out


def _schema(before: ToolDef, after: ToolDef) -> list[Difference]:
    old_req, new_req = set(before.required), set(after.required)
    old_props, new_props = set(before.properties), set(after.properties)
    loose = [f"{p} no longer required" for p in sorted(old_req - new_req)]
    loose += [f"new parameter {p}" for p in sorted(new_props - old_props)]
    tight = [f"{p} now required" for p in sorted(new_req - old_req)]
    tight += [f"parameter {p} removed" for p in sorted(old_props - new_props)]
    if before.input_schema.get("additionalProperties") is False and after.input_schema.get("additionalProperties") \
            is not False:
        loose.append("additionalProperties opened")
    for name in sorted(old_props & new_props):
        was, now = before.properties[name].get("enum"), after.properties[name].get("enum")
        if was is not None and (now is None or set(map(str, now)) - set(map(str, was))):
            loose.append(f"{name} accepts values outside its old enum")
        elif now is not None and (was is None or set(map(str, was)) - set(map(str, now))):
            tight.append(f"{name} accepts fewer values")
        if before.properties[name].get("type") != after.properties[name].get("type"):
            loose.append(f"{name} type {before.properties[name].get('type')} → {after.properties[name].get('type')}")
    return ([Difference(after.name, "schema-loosened", d) for d in loose]
            + [Difference(after.name, "schema-tightened", d) for d in tight])
