"""The proposer contract: evidence from TRAIN episodes in, candidate definitions out.

Invariants:
- Evidence is built from train-split episodes only; held-out tasks never reach a proposer.
- Every text that came from a tool, a task or a model is untrusted: `Evidence.text` fences it (see
  `optimizer.prompt_files.fence`), so it cannot pose as the prompt's own instructions or delimiters.
- `Proposer.propose` returns up to `k` DISTINCT candidates, each a full proposal for the catalog
  (edits keyed by original tool name); it never returns the candidate it was given unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from optimizer.definitions import Candidate, Catalog
from optimizer.propose.ledger import Ledger
from optimizer.propose.seen import CallSeen, EpisodeSeen

__all__ = ["CallSeen", "EpisodeSeen", "Evidence", "OfflineProposer", "Proposer", "RepairingProposer"]


@dataclass(frozen=True)
class Evidence:
    """What a proposer may use. `text` is the concatenated, fenced evidence within the token budget."""

    text: str
    failures: tuple[EpisodeSeen, ...]
    successes: tuple[EpisodeSeen, ...]
    confusions: dict[str, dict[str, int]]
    """expected first tool -> chosen first tool -> count, over failed train episodes"""
    lint: tuple[dict[str, Any], ...] = ()
    """lint findings as dicts: rule, severity, tool, field, message"""
    prompts_by_tool: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """original tool name -> train prompts that expect it (all of them, passed or not)"""
    recovered: tuple[EpisodeSeen, ...] = ()
    """passed train episodes that got there after failed calls (an error result followed by more calls), ranked
    right after the failures: what they paid is what the definitions left out"""
    ledger: Ledger | None = None
    """what the server accepted and refused over the whole run so far (`ledger.py`), when the run keeps one"""


@runtime_checkable
class Proposer(Protocol):
    name: str
    offline: bool
    """True for the offline rules proposer; outputs that show its work say so."""

    async def propose(
        self, catalog: Catalog, current: Candidate, evidence: Evidence, *, k: int, seed: int
    ) -> Sequence[Candidate]: ...

    def last_report(self) -> dict[str, Any]:
        """What the last `propose` call reported as JSON (requests, usage, repairs, errors); {} when nothing."""
        ...

    def rationale(self, key: str) -> str | None:
        """The proposer's one-line reason for the candidate with this key, when it gave one."""
        ...


class OfflineProposer:
    """The loop of a deterministic offline proposer: it tries its ways of writing (`ways`, each with a `summary()`)
    in an order the seed rotates, and keeps up to k distinct candidates, none equal to `current`. A subclass gives
    `write(way, catalog, current, evidence)`."""

    name = "rules"
    offline = True

    def __init__(self, ways: Sequence[Any]) -> None:
        self.ways = tuple(ways)
        self._why: dict[str, str] = {}

    async def propose(
        self, catalog: Catalog, current: Candidate, evidence: Evidence, *, k: int, seed: int
    ) -> list[Candidate]:
        self.prepare(catalog, current, evidence)
        start = seed % len(self.ways)
        out: list[Candidate] = []
        keys = {current.key}
        for way in [*self.ways[start:], *self.ways[:start]]:
            if len(out) >= k:
                break
            candidate = self.write(way, catalog, current, evidence)
            if candidate.key not in keys:
                keys.add(candidate.key)
                out.append(candidate)
                self._why[candidate.key] = way.summary()
        return out

    def prepare(self, catalog: Catalog, current: Candidate, evidence: Evidence) -> None:
        """Read what every way needs, once per `propose` (nothing by default)."""

    def write(self, way: Any, catalog: Catalog, current: Candidate, evidence: Evidence) -> Candidate:
        raise NotImplementedError

    def last_report(self) -> dict[str, Any]:
        """Nothing to report: no requests, no cost."""
        return {}

    def rationale(self, key: str) -> str | None:
        """Which way of writing made the candidate."""
        return self._why.get(key)


@runtime_checkable
class RepairingProposer(Protocol):
    """A proposer that can rewrite tool edits the screen rejected (a model proposer; the offline one screens its own
    text as it writes)."""

    async def repair(
        self, catalog: Catalog, current: Candidate, evidence: Evidence,
        rejected: Sequence[tuple[Candidate, Mapping[str, str]]],
    ) -> Sequence[Candidate]:
        """Candidates built on `current` rewriting, for each (proposal, {tool: reason}) in `rejected`, the edits of
        those tools, ideally one candidate per item in order; `last_report()["screening_repair"]` then describes
        the request (counts and usage)."""
        ...
