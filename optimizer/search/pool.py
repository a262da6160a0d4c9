"""A search round's choices: per tool the distinct edits the proposals made, and the namespace schemes. A choice
of one edit per tool plus a scheme is a candidate; pools travel as JSON with their study (for workers).

An edit may name a sibling tool by the new name its own proposal gives it ("use list_loans instead"). The pool
keeps, per edit, which tool each such name stands for (`references`), and a candidate mixed from several proposals
names every tool as that candidate does (`optimizer.references.repointed`): no mixed candidate names a tool it
does not expose."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from optimizer.definitions import SCHEMES, Candidate, Scheme, ToolEdit, digest
from optimizer.files.patch import overlay_from_json
from optimizer.references import given_names, references, repointed


@dataclass(frozen=True)
class Pool:
    """One round's choices: per original tool the distinct edits seen (index 0 = the current edit, kept when
    nothing is chosen), and the namespace schemes to try. `word` is the namespace word of every candidate."""

    edits: dict[str, tuple[ToolEdit, ...]]
    schemes: tuple[Scheme, ...] = SCHEMES
    word: str | None = None
    references: dict[str, tuple[dict[str, str], ...]] = field(default_factory=dict)
    """per tool with any, aligned with `edits[tool]`: the names an edit's texts give sibling tools -> the tool"""

    @property
    def fingerprint(self) -> str:
        """Content hash of the choices; a stored study must have been made for the same pool."""
        edits = {tool: [edit.to_json() for edit in options] for tool, options in self.edits.items()}
        extra = {"references": self.references} if self.references else {}
        return digest({"edits": edits, "schemes": list(self.schemes), "word": self.word, **extra})[:16]


def pool_from(current: Candidate, proposals: Sequence[Candidate]) -> Pool:
    """Every distinct edit per tool (tools sorted by name; current's edit first, the empty edit when current has
    none), all three schemes; the word is current's, else the first proposal's that has one. A proposal that does
    not mention a tool proposes that tool's original definition (the empty edit). Each edit's references are read
    with the names of the first proposal that made it."""
    everyone = [current, *proposals]
    names = [given_names(cand) for cand in everyone]
    tools = sorted({tool for cand in everyone for tool in cand.edits})
    edits: dict[str, tuple[ToolEdit, ...]] = {}
    refs: dict[str, tuple[dict[str, str], ...]] = {}
    for tool in tools:
        seen: dict[str, tuple[ToolEdit, dict[str, str]]] = {}
        for cand, given in zip(everyone, names, strict=True):
            edit = cand.edits.get(tool, ToolEdit())
            key = digest(edit.to_json())
            if key not in seen:
                seen[key] = (edit, references(edit, given))
        edits[tool] = tuple(edit for edit, _ in seen.values())
        if any(found for _, found in seen.values()):
            refs[tool] = tuple(found for _, found in seen.values())
    word = current.word or next((p.word for p in proposals if p.word), None)
    return Pool(edits=edits, schemes=SCHEMES, word=word, references=refs)


def candidate_from(pool: Pool, choice: Mapping[str, int], scheme: Scheme) -> Candidate:
    """The candidate for per-tool edit indices (missing tools: index 0) and a scheme, its texts naming every tool as
    it does (see the module docstring). Raises ValueError for an unknown tool, an index out of range or a scheme the
    pool does not try."""
    unknown = sorted(set(choice) - set(pool.edits))
    if unknown:
        raise ValueError(f"the pool has no edits for {', '.join(unknown)}")
    if scheme not in pool.schemes:
        raise ValueError(f"scheme {scheme!r} is not one of the pool's {', '.join(pool.schemes)}")
    edits: dict[str, ToolEdit] = {}
    for tool, options in pool.edits.items():
        index = choice.get(tool, 0)
        if not 0 <= index < len(options):
            raise ValueError(f"{tool}: edit index {index} is outside 0..{len(options) - 1}")
        if not options[index].empty:
            edits[tool] = options[index]
    chosen = Candidate(edits=edits, scheme=scheme, word=pool.word)
    pointed = {tool: repointed(edit, pool.references[tool][choice.get(tool, 0)], chosen) if tool in pool.references
               else edit for tool, edit in edits.items()}
    return Candidate(edits=pointed, scheme=scheme, word=pool.word)


def smallest_choice(pool: Pool, size: Callable[[str, ToolEdit], int]) -> dict[str, int]:
    """Per tool, the index of its edit that `size(tool, edit)` finds smallest (the earliest on a tie, so the current
    edit when nothing is smaller): with `candidate_from`, the token end of a shrink's search, which sampling seldom
    reaches when the pool is large."""
    return {tool: min(range(len(options)), key=lambda i: (size(tool, options[i]), i))
            for tool, options in pool.edits.items()}


def choice_of(pool: Pool, candidate: Candidate) -> tuple[dict[str, int], Scheme]:
    """The inverse of `candidate_from`: edit indices for every tool of the pool, and the scheme (the namespace
    word is always the pool's). Raises ValueError when the candidate holds an edit or scheme the pool lacks."""
    unknown = sorted(set(candidate.edits) - set(pool.edits))
    if unknown or candidate.scheme not in pool.schemes:
        raise ValueError(f"the candidate is outside the pool (tools {unknown}, scheme {candidate.scheme!r})")
    choice: dict[str, int] = {}
    for tool, options in pool.edits.items():
        wanted = candidate.edits.get(tool, ToolEdit()).to_json()
        indices = [i for i, edit in enumerate(options) if edit.to_json() == wanted]
        if not indices:
            raise ValueError(f"{tool}: the candidate's edit is not in the pool")
        choice[tool] = indices[0]
    return choice, candidate.scheme


def combinations(pool: Pool) -> int:
    """The size of the full space: every edit of every tool times every scheme."""
    return math.prod(len(options) for options in pool.edits.values()) * len(pool.schemes)


def pool_to_json(pool: Pool) -> dict[str, Any]:
    return {"edits": {tool: [edit.to_json() for edit in options] for tool, options in pool.edits.items()},
            "schemes": list(pool.schemes), "word": pool.word,
            **({"references": {tool: list(refs) for tool, refs in pool.references.items()}} if pool.references
               else {})}


def pool_from_json(data: Mapping[str, Any]) -> Pool:
    edits = {}
    for tool, options in data["edits"].items():
        edits[tool] = tuple(overlay_from_json({"tools": {tool: o}}).edits.get(tool, ToolEdit()) for o in options)
    refs = {tool: tuple(dict(r) for r in found) for tool, found in (data.get("references") or {}).items()}
    return Pool(edits=edits, schemes=tuple(data["schemes"]), word=data.get("word"), references=refs)
