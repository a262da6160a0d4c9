"""Overlay files and canonical definition files.

An overlay (DESIGN, Files) is a hand-writable JSON file of edits keyed by original tool name plus an
optional namespace scheme. Canonical definition files (`optimizer dump`) are one JSON file per tool,
sorted keys, 2-space indent, trailing newline — the exact text later patches are made against.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from optimizer.definitions import (
    SCHEMES,
    Candidate,
    Catalog,
    DefinitionError,
    ToolDef,
    ToolEdit,
    apply,
    canonical_json,
)
from optimizer.files.atomic import atomic_write

TOOL_KEYS = {"name", "description", "parameters", "lean_schema"}


def load_overlay(path: Path, catalog: Catalog | None = None) -> Candidate:
    """Read and validate an overlay. With a catalog, unknown tools or parameters are errors too.

    Raises DefinitionError whose message starts with the file name."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DefinitionError(f"{path}: overlay file not found") from None
    except json.JSONDecodeError as exc:
        raise DefinitionError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    try:
        candidate = overlay_from_json(raw)
        if catalog is not None:
            apply(catalog, candidate)
    except DefinitionError as exc:
        raise DefinitionError(f"{path}: {exc}") from None
    return candidate


def overlay_from_json(raw: Any) -> Candidate:
    if not isinstance(raw, dict):
        raise DefinitionError("an overlay is a JSON object with optional 'namespace' and 'tools'")
    unknown = sorted(set(raw) - {"namespace", "tools"})
    if unknown:
        raise DefinitionError(f"unknown top-level key(s) {', '.join(unknown)}; expected 'namespace' and 'tools'")
    scheme, word = _namespace(raw.get("namespace"))
    tools = raw.get("tools") or {}
    if not isinstance(tools, dict):
        raise DefinitionError("'tools' must be an object keyed by original tool name")
    edits = {name: _edit(name, spec) for name, spec in tools.items()}
    return Candidate(edits=edits, scheme=scheme, word=word)


def _namespace(value: Any) -> tuple[Any, str | None]:
    if value is None:
        return "none", None
    if not isinstance(value, dict):
        raise DefinitionError("'namespace' must be an object like {\"scheme\": \"prefix\", \"word\": \"support\"}")
    scheme = value.get("scheme", "none")
    if scheme not in SCHEMES:
        raise DefinitionError(f"namespace scheme {scheme!r} is not one of {', '.join(SCHEMES)}")
    word = value.get("word")
    if word is not None and (not isinstance(word, str) or not word.strip()):
        raise DefinitionError("namespace word must be a non-empty string")
    return scheme, word


def _edit(name: str, spec: Any) -> ToolEdit:
    if not isinstance(spec, dict):
        raise DefinitionError(f"tools.{name} must be an object with name, description, parameters and/or "
                              "lean_schema")
    unknown = sorted(set(spec) - TOOL_KEYS)
    if unknown:
        raise DefinitionError(f"tools.{name}: unknown key(s) {', '.join(unknown)}")
    for key in ("name", "description"):
        if key in spec and not isinstance(spec[key], str):
            raise DefinitionError(f"tools.{name}.{key} must be a string")
    params = spec.get("parameters") or {}
    if not isinstance(params, dict) or not all(isinstance(v, str) for v in params.values()):
        raise DefinitionError(f"tools.{name}.parameters maps parameter names to description strings")
    lean = spec.get("lean_schema", False)
    if not isinstance(lean, bool):
        raise DefinitionError(f"tools.{name}.lean_schema must be true or false")
    return ToolEdit(name=spec.get("name"), description=spec.get("description"), parameters=params, lean_schema=lean)


def save_overlay(path: Path, candidate: Candidate) -> None:

    atomic_write(path, canonical_json(candidate.to_json()))


def canonical_files(tools: Iterable[ToolDef]) -> dict[str, str]:
    """File name -> canonical text, one file per tool (`<tool>.json`)."""
    return {f"{tool.name}.json": canonical_json(tool.canonical()) for tool in tools}


def dump_definitions(catalog: Catalog, candidate: Candidate, out_dir: Path) -> list[Path]:
    """Write the exposed definitions under a candidate, one canonical file per tool."""

    exposed = apply(catalog, candidate)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in canonical_files(exposed.tools).items():
        path = out_dir / name
        atomic_write(path, text)
        written.append(path)
    return written


def load_definitions(directory: Path) -> list[ToolDef]:
    """Read a directory written by `optimizer dump` back into tool definitions (sorted by file name)."""
    if not directory.is_dir():
        raise DefinitionError(f"{directory}: not a directory of tool definitions")
    tools = []
    for path in sorted(directory.glob("*.json")):
        try:
            tools.append(ToolDef.from_canonical(json.loads(path.read_text(encoding="utf-8"))))
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise DefinitionError(f"{path}: not a canonical tool definition ({exc})") from None
    return tools


def definitions_diff(catalog: Catalog, candidate: Candidate) -> str:
    """A unified diff, one file per changed tool, from `optimizer dump`'s files to the candidate's.

    Renamed tools carry git-style `rename from/to` headers, which `patch -p1` and `git apply` both
    follow; the `a/` side is exactly what `optimizer dump` writes for the original definitions."""
    exposed = apply(catalog, candidate)
    chunks: list[str] = []
    for before, after in zip(catalog.tools, exposed.tools, strict=True):
        old_name, new_name = f"{before.name}.json", f"{after.name}.json"
        old_text, new_text = canonical_json(before.canonical()), canonical_json(after.canonical())
        if old_text == new_text:
            continue
        header = [f"diff --git a/{old_name} b/{new_name}\n"]
        if old_name != new_name:
            header += [f"rename from {old_name}\n", f"rename to {new_name}\n"]
        body = difflib.unified_diff(old_text.splitlines(keepends=True), new_text.splitlines(keepends=True),
                                    fromfile=f"a/{old_name}", tofile=f"b/{new_name}", n=3)
        chunks.append("".join(header) + "".join(body))
    return "".join(chunks)
