"""What an `optimize` run will play, before it plays it: the episodes of each phase per agent model, low and high,
and the proposer's requests (`optimizer.cost.estimate` prices them).

Low: the baseline, one round whose whole proposals stop after the first chunk of train tasks, the gate. High: every
round the settings allow (`--rounds N`, or the auto cap), each with all its trials on every train task and a
repair request, the gate, and every held-out candidate scored on train and held-out.
"""

from __future__ import annotations

import math

from optimizer.cost.estimate import Phase, Plan
from optimizer.optimize.config import ROUNDS_CAP, OptimizeConfig


def optimize_plan(config: OptimizeConfig, *, train: int, heldout: int, judge: str | None = None, judged: int = 0,
                  in_context: bool = False) -> Plan:
    """The plan of one `optimize` on `train` and `heldout` tasks (`judged`: tasks `judge` grades; `in_context`: the
    run scores baseline and winner alone too)."""
    epochs = config.epochs
    rounds = ROUNDS_CAP if config.rounds == "auto" else int(config.rounds)
    first_chunk = max(1, math.ceil(train / config.chunks))
    extra = max(0, config.heldout_candidates - 1)
    gate = 2 * heldout * epochs * (2 if in_context else 1)
    phases: tuple[Phase, ...] = (
        Phase("baseline on train", (train * epochs,) * 2),
        Phase(f"search: 1 to {rounds} round{'s' if rounds != 1 else ''} of at most {config.trials} trials",
              (min(config.candidates, config.trials) * first_chunk * epochs, rounds * config.trials * train * epochs),
              (min(config.candidates, config.trials), rounds * config.trials)),
        Phase("held-out gate: baseline and winner", (gate, gate), (2, 2)),
        Phase("held-out candidates (not used to select)", (0, extra * (train + heldout) * epochs), (0, extra)),
    )
    if config.max_episodes is not None:
        cap = config.max_episodes
        phases = tuple(p if not p.name.startswith("search") else
                       Phase(p.name, (min(p.episodes[0], cap), min(p.episodes[1], cap)), p.definition_sets)
                       for p in phases)
    offline = config.proposer == "rules"
    judged_low = judged * epochs * (1 + 2 * (heldout > 0))
    judged_high = judged * epochs * (1 + rounds * config.trials + 2 + 2 * extra)
    notes = [f"--rounds {config.rounds}: the rounds stop on a rule, usually after 1 to 3; the high end is all "
             f"{rounds}"] if config.rounds == "auto" else []
    return Plan("optimize", phases, tuple(config.models), proposer=None if offline else config.proposer,
                proposer_requests=(0, 0) if offline else (1, 2 * rounds), judge=judge,
                judged_episodes=(judged_low, judged_high) if judged else (0, 0), notes=tuple(notes),
                tasks=(("train", train), ("heldout", heldout)))
