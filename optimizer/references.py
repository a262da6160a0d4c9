"""Which tool an edit's text points at when it names a sibling by the new name its own candidate gives it — and the
same edit pointed at the names another candidate gives, so that edits can leave their candidate without naming a
tool that is not there.

Contracts:
- `given_names(candidate)` is every new name the candidate gives a tool, mapped to the tool's ORIGINAL name.
- `references(edit, names)` is each name of `names` that the edit's texts (description, parameter descriptions)
  mention, mapped to its tool (see `optimizer.text.mentions` for what counts as a mention).
- `repointed(edit, refs, candidate)` rewrites each referenced name to the name `candidate` gives that tool (its new
  name, else the original; a plain word in backticks, so that it still reads as a name); names already right are
  left as they are. `apply()` then adds the namespace.
- `settled(candidate, source)`: `candidate` with every edit repointed from the names `source` gives tools.
- `unexposed(catalog, candidate, names)`: the tool names among `names` (and the catalog's own), with or without a
  namespace, that the candidate's exposed texts mention but the candidate does not expose.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import replace

from optimizer.definitions import (
    SCHEMES,
    Candidate,
    Catalog,
    ToolDef,
    ToolEdit,
    apply,
    namespace_word,
    namespaced,
    parameter_paths,
)
from optimizer.text.mentions import mentioned, renamed


def given_names(candidate: Candidate) -> dict[str, str]:
    """New name -> original tool name, for every edit of `candidate` that renames its tool."""
    return {edit.name: tool for tool, edit in candidate.edits.items() if edit.name and edit.name != tool}


def edit_texts(edit: ToolEdit) -> list[str]:
    return [t for t in (edit.description, *edit.parameters.values()) if t]


def references(edit: ToolEdit, names: Mapping[str, str]) -> dict[str, str]:
    """Mentioned name -> original tool, for the names of `names` (name -> tool) the edit's texts mention."""
    found: dict[str, str] = {}
    for text in edit_texts(edit):
        for name in mentioned(text, names):
            found.setdefault(name, names[name])
    return found


def repointed(edit: ToolEdit, refs: Mapping[str, str], candidate: Candidate) -> ToolEdit:
    """`edit` with each referenced name (`refs`: name -> tool) replaced by the name `candidate` gives that tool."""
    mapping = {name: _name_in(candidate, tool) for name, tool in refs.items()}
    mapping = {name: new for name, new in mapping.items() if new != name}
    if not mapping:
        return edit
    def point(text: str) -> str:
        return renamed(text, mapping, mark_plain=True)

    return replace(edit, description=None if edit.description is None else point(edit.description),
                   parameters={path: point(text) for path, text in edit.parameters.items()})


def settled(candidate: Candidate, source: Candidate) -> Candidate:
    """`candidate` with every text that names a tool by a name `source` gives it pointed at `candidate`'s name for
    that tool (for an edit judged outside its proposal, or a proposal less some of its edits)."""
    names = given_names(source)
    if not names:
        return candidate
    edits = {tool: repointed(edit, references(edit, names), candidate) for tool, edit in candidate.edits.items()}
    return candidate if edits == dict(candidate.edits) else replace(candidate, edits=edits)


def _name_in(candidate: Candidate, tool: str) -> str:
    edit = candidate.edits.get(tool)
    return edit.name if edit is not None and edit.name else tool


def unexposed(catalog: Catalog, candidate: Candidate, names: Collection[str] = ()) -> list[str]:
    """Tool names that `candidate`'s exposed texts mention but it does not expose, sorted: any of `names` (names
    proposals gave tools) or of the catalog's own names, bare or under any namespace scheme."""
    word = namespace_word(catalog, candidate)
    every = {namespaced(name, scheme, word) for name in {*names, *catalog.names} for scheme in SCHEMES}
    exposed = apply(catalog, candidate).tools
    said = {name for tool in exposed for text in tool_texts(tool) for name in mentioned(text, every)}
    return sorted(said - {tool.name for tool in exposed})


def tool_texts(tool: ToolDef) -> list[str]:
    """A tool's description and every parameter description, in schema order."""
    params = [str(node["description"]) for _, node in parameter_paths(tool.input_schema) if node.get("description")]
    return [tool.description, *params]
