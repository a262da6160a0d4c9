"""Source patch: rewrite a candidate's names and descriptions where they stand in the server's own code.

`source_patch(source_dir, catalog, candidate)` scans the Python and TypeScript/JavaScript files under
`source_dir` for the places that declare tools (`python.py`, `typescript.py`), finds each edited
tool's declaration, and rewrites only the literals that hold its ORIGINAL name, description and
parameter descriptions.

Contract:
- Declarations match by name (a name literal, or the decorated function's name); one whose name is not
  a literal matches by its description alone, and only when that description is unique among the
  listed tools and in source.
- Never guess. A field is rewritten only when its declaration is found exactly once and the text in
  source yields exactly what the server lists (`catalog`). Anything else — not found, found in more
  than one place, a description built from an expression or a `${}` template, a parameter with no
  description in source — is a line in `SourcePatch.unlocated`, and that field is left alone.
- A rewritten literal keeps its quote style (and a docstring its layout) and is checked by reading it
  back: Python literals with `ast.literal_eval` and the normalisation the original docstring went
  through (as written, `inspect.cleandoc`, or Python 3.13's dedent), JS literals with a JS decoder.
- The new text is what `definitions.apply` exposes without a namespace: the namespace scheme is not
  written into source (one line in `unlocated` says so), nor is a lean schema (the schema generator writes the
  metadata it drops; one line per tool).
- `SourcePatch.text` is a unified diff with `a/` and `b/` paths relative to `source_dir`, for
  `git apply` run there (`--directory=<path>` from the top when it is a subdirectory of a repository)
  or `patch -p1 -d source_dir`; it is empty when nothing was placed. Nothing is written to disk.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from optimizer.definitions import Candidate, Catalog, DefinitionError, ToolDef, apply, parameter_paths
from optimizer.schema_metadata import lean_schema
from optimizer.source.python import scan_python
from optimizer.source.sites import Edit, Outcome, Site, StringAt
from optimizer.source.typescript import scan_js

NAMESPACE_NOTE = "namespace scheme is applied by clients/serve, not in source"
LEAN_SCHEMA_NOTE = ("lean schema: not a source edit (the schema generator writes what it drops); serve the overlay, "
                    "or have the generator leave it out")
PY_SUFFIXES = (".py",)
JS_SUFFIXES = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")
SKIP_DIRS = {"node_modules", "dist", "build", "out", "venv", "site-packages", "__pycache__", "coverage"}
"""Directories never scanned (besides hidden ones): dependencies and build output would duplicate the source."""
MAX_FILE_CHARS = 2_000_000


@dataclass(frozen=True)
class SourcePatch:
    """What `source_patch` placed. `changed`: original names of tools with at least one field rewritten;
    `unlocated`: one human-readable line per field that was not (and why), plus notes."""

    text: str
    changed: list[str]
    unlocated: list[str]


def source_patch(source_dir: Path, catalog: Catalog, candidate: Candidate) -> SourcePatch:
    """Rewrite the candidate's edits where the original names and descriptions stand under `source_dir`.

    `catalog` is what the unpatched server lists; edits are keyed by its (original) tool names.
    Raises DefinitionError when `source_dir` is not a directory or the candidate does not apply."""
    if not source_dir.is_dir():
        raise DefinitionError(f"{source_dir}: not a directory of server source")
    exposed = apply(catalog, replace(candidate, scheme="none"))
    texts = dict(_read_sources(source_dir))
    sites: list[Site] = []
    strings: list[StringAt] = []
    notes: list[str] = []
    for rel, text in texts.items():
        scan = scan_python if rel.endswith(PY_SUFFIXES) else scan_js
        try:
            found, literals = scan(rel, text)
        except (SyntaxError, ValueError) as exc:
            notes.append(f"{rel}: not scanned ({type(exc).__name__}: {exc})")
            continue
        sites += found
        strings += literals
    planner = _Planner(catalog, sites, strings)
    for tool, after in zip(catalog.tools, exposed.tools, strict=True):
        planner.plan(tool, after, candidate)
    unlocated = ([NAMESPACE_NOTE] if candidate.scheme != "none" else []) + planner.unlocated
    if planner.unlocated and notes:
        unlocated += notes
    return SourcePatch(text=_diff(texts, planner.edits), changed=planner.changed, unlocated=unlocated)


class _Planner:
    """Finds each edited tool's declaration and collects its edits; a field that cannot be placed
    becomes a line in `unlocated`."""

    def __init__(self, catalog: Catalog, sites: list[Site], strings: list[StringAt]) -> None:
        self.sites, self.strings = sites, strings
        self.listed = [t.description for t in catalog.tools]
        self.edits: list[Edit] = []
        self.changed: list[str] = []
        self.unlocated: list[str] = []

    def plan(self, tool: ToolDef, after: ToolDef, candidate: Candidate) -> None:
        edit = candidate.edits.get(tool.name)
        if edit is None:
            return
        if edit.lean_schema and lean_schema(tool.name, dict(tool.input_schema)).dropped:
            self.unlocated.append(f"{tool.name} {LEAN_SCHEMA_NOTE}")
        fields: list[tuple[str, Callable[[Site], Outcome]]] = []
        if edit.name is not None and edit.name != tool.name:
            fields.append(("name", lambda site: self._rename(site, tool.name, after.name)))
        if edit.description is not None and after.description != tool.description:
            fields.append(("description", lambda site: site.describe(tool.description, after.description)))
        listed = dict(parameter_paths(tool.input_schema))
        for path, text in sorted(edit.parameters.items()):
            old = listed[path].get("description")
            if old == text:
                continue
            if not isinstance(old, str):
                fields.append((f"parameter {path}", _no_description))
            else:
                fields.append((f"parameter {path}", _parameter_edit(path, old, text)))
        if not fields:
            return
        site = self._find(tool)
        placed = False
        for label, make in fields:
            outcome = make(site) if isinstance(site, Site) else site
            if isinstance(outcome, Edit) and self._free(outcome):
                self.edits.append(outcome)
                placed = True
            else:
                reason = outcome if isinstance(outcome, str) else "overlaps another edit in the same place"
                where = f" ({site.where})" if isinstance(site, Site) else ""
                self.unlocated.append(f"{tool.name} {label}{where}: {reason}")
        if placed:
            self.changed.append(tool.name)

    def _find(self, tool: ToolDef) -> Site | str:
        named = [s for s in self.sites if s.name == tool.name]
        if len(named) > 1:
            named = [s for s in named if s.describes(tool.description)] or named
        if len(named) == 1:
            return named[0]
        if named:
            return f"declared in more than one place ({', '.join(s.where for s in named)}); not rewritten"
        if tool.description and self.listed.count(tool.description) == 1:
            anonymous = [s for s in self.sites if s.name is None and s.describes(tool.description)]
            if len(anonymous) == 1:
                return anonymous[0]
            if anonymous:
                return f"its description stands in more than one place ({', '.join(s.where for s in anonymous)})"
        return "not found in source (no declaration with this name, nor one with this description alone)"

    def _rename(self, site: Site, old: str, new: str) -> Outcome:
        if site.name != old:
            return "the name is not a literal in this declaration"
        if site.list_entry:
            group = PY_SUFFIXES if site.path.endswith(PY_SUFFIXES) else JS_SUFFIXES
            others = [f"{s.path}:{s.line}" for s in self.strings if s.value == old and s.path.endswith(group)
                      and (s.path, s.start) != (site.path, site.name_start)]
            if others:
                return (f"the name also stands as a string at {', '.join(others[:5])} (a call dispatcher?); "
                        "rename it there and here by hand")
        return site.rename(new)

    def _free(self, edit: Edit) -> bool:
        """No edit planned so far touches the same characters or inserts at the same point."""
        for other in self.edits:
            same_file = other.path == edit.path
            if same_file and (other.start == edit.start or (other.start < edit.end and edit.start < other.end)):
                return False
        return True


def _parameter_edit(path: str, listed: str, new: str) -> Callable[[Site], Outcome]:
    return lambda site: site.parameter(path, listed, new)


def _no_description(_site: Site) -> Outcome:
    return "has no description in source to rewrite (adding one is new code: Field(description=...) or .describe(...))"


def _read_sources(root: Path) -> Iterator[tuple[str, str]]:
    """(relative posix path, text with its own newlines) for every scannable file, sorted."""
    found: list[Path] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
        for name in files:
            if name.endswith(PY_SUFFIXES + JS_SUFFIXES) and not name.endswith((".d.ts", ".min.js")):
                found.append(Path(folder) / name)
    for path in sorted(found):
        try:
            with open(path, encoding="utf-8", newline="") as handle:
                text = handle.read(MAX_FILE_CHARS + 1)
        except (OSError, UnicodeDecodeError):
            continue
        if len(text) <= MAX_FILE_CHARS:
            yield path.relative_to(root).as_posix(), text


def _diff(texts: dict[str, str], edits: list[Edit]) -> str:
    chunks: list[str] = []
    for rel in sorted({e.path for e in edits}):
        old = texts[rel]
        new = old
        for edit in sorted((e for e in edits if e.path == rel), key=lambda e: e.start, reverse=True):
            new = new[:edit.start] + edit.new + new[edit.end:]
        body = difflib.unified_diff(_lines(old), _lines(new), fromfile=f"a/{rel}", tofile=f"b/{rel}", n=3)
        text = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in body)
        chunks.append(f"diff --git a/{rel} b/{rel}\n{text}")
    return "".join(chunks)


def _lines(text: str) -> list[str]:
    return re.findall(r"[^\n]*\n|[^\n]+\Z", text)
