"""One repair round per optimize round: tool edits the screen rejected go back to a model proposer once, with the
reasons, and what it rewrites is screened again (`RepairingProposer`, `Screen`).

Contracts:
- At most one request per round, and none when nothing was rejected edit by edit or the proposer cannot repair.
- A repaired edit replaces the rejected one inside its own proposal: the proposal's kept edits plus the repaired
  ones form the candidate screened again. Edits the proposer left as they were, or rewrote for other tools, are
  ignored; what fails screening again is dropped for good.
- The reply is stored in the run, so a resumed run asks nothing again; an unavailable proposer leaves the round's
  candidates as screened, with the error in the report.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from optimizer.definitions import Candidate, digest
from optimizer.files.patch import overlay_from_json
from optimizer.models.base import ModelUnavailable
from optimizer.optimize.config import OptimizeConfig
from optimizer.optimize.screening import Screen, Screened
from optimizer.propose.base import Evidence, Proposer, RepairingProposer
from optimizer.run.harness import Harness


async def repair_round(
    run: Harness[OptimizeConfig], proposer: Proposer, screen: Screen, screened: list[Screened], current: Candidate,
    evidence: Evidence,
) -> tuple[list[Screened], dict[str, Any] | None]:
    """`screened` with the rejected edits repaired where the proposer could, and the repair's report (None when no
    request was due)."""
    needing = [s for s in screened if s.dropped]
    if not needing or proposer.offline or not isinstance(proposer, RepairingProposer):
        return screened, None
    asked = [(s.proposal, s.dropped) for s in needing]
    key = "repairs:" + digest({"proposer": proposer.name, "current": current.to_json(), "evidence": evidence.text,
                               "asked": [(p.to_json(), sorted(r.items())) for p, r in asked]})[:24]
    stored = run.store.get_meta(key)
    if stored is None:
        if run.budget is not None:
            run.budget.check(proposer.name)
        try:
            written = list(await proposer.repair(run.catalog, current, evidence, asked))
        except ModelUnavailable as exc:
            return screened, {"requests": 1, "error": f"the repair request failed: {exc}"}
        report = {"requests": 1, **(proposer.last_report().get("screening_repair") or {})}
        if run.budget is not None:
            run.budget.add(proposer.name, report.get("usage") or {})
        stored = {"candidates": [c.to_json() for c in written], "report": report,
                  "items": [_item(proposer.rationale(c.key)) for c in written]}
        run.store.set_meta(key, stored)
    repaired = [(overlay_from_json(c), item) for c, item in zip(stored["candidates"], stored["items"], strict=True)]
    merged = _merged(needing, repaired, current)
    pairs = [(s, m) for s, m in zip(needing, merged, strict=True) if m is not None]
    again = {id(s): r for (s, _), r in zip(pairs, screen.screen([m for _, m in pairs], evidence), strict=True)}
    out = [again.get(id(s), s) for s in screened]
    report = {**stored["report"], "repaired_edits": sum(len(s.dropped) - len(again[id(s)].dropped)
                                                        for s in needing if id(s) in again and again[id(s)].kept)}
    return out, report


def _merged(needing: Sequence[Screened], repaired: Sequence[tuple[Candidate, int | None]],
            current: Candidate) -> list[Candidate | None]:
    """Per proposal that lost edits (item i + 1 of the request): its proposal with each rejected edit replaced by
    the rewrite of the candidate labelled with its item, or else of the first unlabelled one that rewrites one of
    those tools (None when no rewrite fits). Unfixed rejected edits stay as they were, so that screening drops
    them again with their reason."""
    labelled = {item: c for c, item in repaired if item is not None}
    unlabelled = [c for c, item in repaired if item is None]
    out: list[Candidate | None] = []
    for number, s in enumerate(needing, start=1):
        match = labelled.get(number)
        if match is None:
            match = next((c for c in unlabelled if any(_rewrote(c, current, tool) for tool in s.dropped)), None)
            if match is not None:
                unlabelled.remove(match)
        if match is None or not any(_rewrote(match, current, tool) for tool in s.dropped):
            out.append(None)
            continue
        edits = dict(s.proposal.edits)
        edits.update({tool: match.edits[tool] for tool in s.dropped if _rewrote(match, current, tool)})
        out.append(replace(s.proposal, edits=edits))
    return out


def _item(rationale: str | None) -> int | None:
    """The item number a repaired candidate's rationale starts with ("item 2: …"), if any."""
    found = re.match(r"\s*item\s+(\d+)\b", rationale or "", re.IGNORECASE)
    return int(found.group(1)) if found else None


def _rewrote(candidate: Candidate, current: Candidate, tool: str) -> bool:
    edit = candidate.edits.get(tool)
    return edit is not None and not edit.empty and edit != current.edits.get(tool)
