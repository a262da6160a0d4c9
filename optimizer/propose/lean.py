"""The shrink goal's proposer: any proposer, with lean schemas (`ToolEdit.lean_schema`) on what it writes.

Schema metadata a model gets nothing from (`optimizer.schema_metadata`) is no proposer's to judge: it is dropped on
every tool of every candidate, those a proposal leaves as they are included, so the search's choice per tool is
between texts, never between texts with and without it. Contract as in `base.Proposer`: up to k distinct
candidates, none equal to `current`. When the proposer returns fewer than k (an offline proposer that finds no
redundant text returns none), the current texts with lean schemas come next, room permitting.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

from optimizer.definitions import Candidate, Catalog, ToolEdit
from optimizer.propose.base import Evidence, Proposer, RepairingProposer
from optimizer.schema_metadata import lean_schema

LEAN_ONLY = "lean schemas only: the texts as they are, without schema metadata a model gets nothing from"


def leaned(catalog: Catalog, candidate: Candidate, only: Collection[str] | None = None) -> Candidate:
    """`candidate` with a lean schema on every tool (of `only`, when given) whose schema has metadata to drop."""
    edits = dict(candidate.edits)
    for tool in catalog.tools:
        if (only is None or tool.name in only) and lean_schema(tool.name, dict(tool.input_schema)).dropped:
            edits[tool.name] = replace(edits.get(tool.name) or ToolEdit(), lean_schema=True)
    return replace(candidate, edits=edits)


class LeanSchemas:
    """`inner` with lean schemas on every candidate it writes or repairs (see the module docstring)."""

    def __init__(self, inner: Proposer) -> None:
        self.inner = inner
        self.name = inner.name
        self.offline = inner.offline
        self._why: dict[str, str] = {}

    async def propose(
        self, catalog: Catalog, current: Candidate, evidence: Evidence, *, k: int, seed: int
    ) -> list[Candidate]:
        written = await self.inner.propose(catalog, current, evidence, k=k, seed=seed)
        out = self._leaned(catalog, written, exclude={current.key})
        lean_only = leaned(catalog, current)
        if len(out) < k and lean_only.key not in {current.key, *(c.key for c in out)}:
            out.append(lean_only)
            self._why[lean_only.key] = LEAN_ONLY
        return out

    async def repair(
        self, catalog: Catalog, current: Candidate, evidence: Evidence,
        rejected: Sequence[tuple[Candidate, Mapping[str, str]]],
    ) -> list[Candidate]:
        """The inner proposer's repairs with lean schemas on the tools each rewrites (the caller takes only those from
        it, and a tool it left as it was must still read as not rewritten); none when it cannot repair."""
        if not isinstance(self.inner, RepairingProposer):
            return []
        written = await self.inner.repair(catalog, current, evidence, rejected)
        return self._leaned(catalog, written, exclude=set(), rewritten_only=current)

    def last_report(self) -> dict[str, Any]:
        return self.inner.last_report()

    def rationale(self, key: str) -> str | None:
        return self._why.get(key)

    def _leaned(self, catalog: Catalog, written: Sequence[Candidate], exclude: set[str],
                rewritten_only: Candidate | None = None) -> list[Candidate]:
        """Each candidate with lean schemas (with `rewritten_only`, on the tools whose edit differs from its), in
        order, without duplicates or those in `exclude`; each keeps the inner proposer's rationale."""
        out: list[Candidate] = []
        for candidate in written:
            only = None if rewritten_only is None else [
                tool for tool, edit in candidate.edits.items() if edit != rewritten_only.edits.get(tool)]
            lean = leaned(catalog, candidate, only)
            if lean.key in exclude or any(lean.key == c.key for c in out):
                continue
            out.append(lean)
            why = self.inner.rationale(candidate.key)
            if why is not None:
                self._why[lean.key] = why
        return out
