"""The offline proposer of the shrink goal: it removes only text it can prove redundant, and writes nothing.

Redundant, for one tool as the current candidate shows it:
- a sentence after the first whose content words all stand in the tool's name (it says the name again);
- a sentence whose content words all stand in another sentence the description keeps (it says that sentence
  again);
- a parameter description whose content words all stand in the parameter's name, the tool's name and the schema
  of the parameter (its type, allowed values, default, "required"/"optional");
- with the `catalog` variant, a sentence that at least half the tools' descriptions end or begin with, word for
  word ("Only works within allowed directories."), kept on the first tool that has it: a caveat a model reading
  the whole list sees once.

It needs no evidence, so it works behind the offline readers. Schema metadata is not its to cut: the shrink goal's
`LeanSchemas` drops it from every candidate (`lean.py`). Contract as in `rules`: up to k distinct candidates,
none equal to `current`, each built on `current`, deterministic; with nothing redundant, none.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from optimizer.definitions import Candidate, Catalog, ToolDef, ToolEdit, apply, parameter_paths
from optimizer.propose.base import Evidence, OfflineProposer
from optimizer.text.tokens import sentences, terms

SCHEMA_WORDS = frozenset(terms("string number integer boolean array object list of required optional default "
                               "value values one either true false null the a an"))
"""What a parameter's schema already says in words."""


@dataclass(frozen=True)
class Cut:
    """One way of cutting: which kinds of redundant text go."""

    sentences: bool = True
    parameters: bool = True
    catalog: bool = False

    def summary(self) -> str:
        parts = [*(["sentences that repeat the name or another sentence"] if self.sentences else []),
                 *(["parameter descriptions that repeat the name or the schema"] if self.parameters else []),
                 *(["a caveat every tool repeats, kept once"] if self.catalog else [])]
        return "shrink: " + ", ".join(parts)


CUTS = (Cut(catalog=True), Cut(), Cut(parameters=False), Cut(sentences=False))


class ShrinkProposer(OfflineProposer):
    """Deterministic, offline proposer of the shrink goal (see the module docstring); the seed rotates the cuts."""

    def __init__(self, cuts: Sequence[Cut] = CUTS) -> None:
        super().__init__(cuts)

    def write(self, way: Cut, catalog: Catalog, current: Candidate, evidence: Evidence) -> Candidate:
        shown = apply(catalog, replace(current, scheme="none"))
        tools = {original.name: tool for original, tool in zip(catalog.tools, shown.tools, strict=True)}
        return _cut(catalog, current, tools, way)


def _cut(catalog: Catalog, current: Candidate, shown: Mapping[str, ToolDef], cut: Cut) -> Candidate:
    edits = dict(current.edits)
    common = _catalog_caveats(shown) if cut.catalog else {}
    for name, tool in shown.items():
        edit = edits.get(name) or ToolEdit()
        description = edit.description
        if cut.sentences or common:
            kept = kept_sentences(tool, drop=[c for c, first in common.items() if first != name],
                                  repeats=cut.sentences)
            if kept != tool.description:
                description = kept
        parameters = dict(edit.parameters)
        if cut.parameters:
            for path, prop in parameter_paths(tool.input_schema):
                if redundant_parameter(tool, path, prop):
                    parameters[path] = ""
        if description != edit.description or parameters != dict(edit.parameters):
            edits[name] = replace(edit, description=description, parameters=parameters)
    return Candidate(edits=edits, scheme=current.scheme, word=current.word)


def kept_sentences(tool: ToolDef, *, drop: Sequence[str] = (), repeats: bool = True) -> str:
    """The description without the sentences in `drop` and, with `repeats`, those after the first that say the
    name or a kept sentence again."""
    said = sentences(tool.description)
    kept: list[str] = []
    own = set(terms(tool.name))
    for index, sentence in enumerate(said):
        words = set(terms(sentence))
        if sentence in drop:
            continue
        if repeats and index and (words <= own or any(words <= set(terms(other)) for other in kept)):
            continue
        kept.append(sentence)
    return " ".join(kept) if kept else tool.description


def redundant_parameter(tool: ToolDef, path: str, prop: Mapping[str, Any]) -> bool:
    """Whether a parameter's description says nothing its name, the tool's name and its schema do not."""
    text = str(prop.get("description") or "")
    if not text:
        return False
    schema = [str(v) for v in prop.get("enum") or ()] + [str(prop.get("default", "")), str(prop.get("type", ""))]
    known = set(terms(path)) | set(terms(tool.name)) | set(terms(" ".join(schema))) | SCHEMA_WORDS
    return set(terms(text)) <= known


def _catalog_caveats(shown: Mapping[str, ToolDef]) -> dict[str, str]:
    """Sentence -> the (original name of the) first tool that keeps it, for each sentence after the first that at
    least half the tools' descriptions (and at least three) hold word for word."""
    counts = Counter(s for tool in shown.values() for s in set(sentences(tool.description)[1:]))
    floor = max(3, (len(shown) + 1) // 2)
    common = [s for s, n in counts.items() if n >= floor]
    return {s: next(name for name, t in shown.items() if s in sentences(t.description)[1:]) for s in common}
