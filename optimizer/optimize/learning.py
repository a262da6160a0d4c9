"""What a run has learned of its server, round by round: before each round's proposal, the ledger of every train
call so far (`propose/ledger.py`) and the round's probes of refused calls (`probes.py`).

Contract: a round's ledger and probes are kept in the run (meta `ledger:r<N>`) the first time they are made, and read
from there after: a resumed run proposes from the ledger the interrupted run had, and repeats no probe."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from optimizer.files.store import StoredEpisode
from optimizer.optimize.config import OptimizeConfig
from optimizer.optimize.probes import Probe, probe_calls, refused_calls
from optimizer.propose.evidence import train_seen
from optimizer.propose.ledger import Ledger, build_ledger, refused_in
from optimizer.propose.refusals import ProbeVerdict
from optimizer.run.harness import Harness


@dataclass
class Learned:
    ledger: Ledger
    probes: list[Probe] = field(default_factory=list)
    """this round's probes"""
    earlier: list[ProbeVerdict] = field(default_factory=list)
    """what every earlier round's probes settled"""
    stopped: str | None = None
    """why this round's probing ended early (a server fault), or None"""

    def verdicts(self) -> list[ProbeVerdict]:
        return [*self.earlier, *(p.verdict() for p in self.probes)]

    def to_json(self) -> dict[str, Any]:
        return {"ledger": self.ledger.to_json(), "probes": [p.to_json() for p in self.probes], "stopped": self.stopped}


async def learn(run: Harness[OptimizeConfig], best: list[StoredEpisode], number: int) -> Learned:
    """Round `number`'s ledger: every train episode the run stored, and the probes of earlier rounds and of this one
    (the refused calls of `best`, the current best candidate's train episodes, unless --no-probe)."""
    earlier = [Probe.from_json(p) for n in range(1, number)
               for p in (run.store.get_meta(f"ledger:r{n}") or {}).get("probes", [])]
    verdicts = [p.verdict() for p in earlier]
    stored = run.store.get_meta(f"ledger:r{number}")
    if stored is not None:
        return Learned(Ledger.from_json(stored["ledger"]), [Probe.from_json(p) for p in stored["probes"]], verdicts,
                       stored.get("stopped"))
    seen = train_seen(run.store.episodes(), _tasks(run))
    ledger = build_ledger(run.catalog, seen, verdicts)
    learned = Learned(ledger, earlier=verdicts)
    if run.config.probe:
        targets = refused_calls(run.catalog, train_seen(best, _tasks(run)), earlier,
                                allow_destructive=run.config.allow_destructive)
        learned.probes, learned.stopped = await probe_calls(run.pool.call, run.catalog, ledger, targets)
        if learned.probes:
            learned.ledger = build_ledger(run.catalog, seen, learned.verdicts())
    run.store.set_meta(f"ledger:r{number}", learned.to_json())
    return learned


def refused_left(run: Harness[OptimizeConfig], best: list[StoredEpisode], verdicts: list[ProbeVerdict]
                 ) -> dict[str, dict[str, int]]:
    """Refused calls in the best candidate's failed train episodes, by tool and parameter ("?": not settled)."""
    return refused_in(train_seen(best, _tasks(run)), verdicts, run.catalog)


def _tasks(run: Harness[OptimizeConfig]) -> dict[str, Any]:
    return {t.id: t for t in run.taskset.tasks}
