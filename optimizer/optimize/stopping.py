"""When the rounds stop, and why: the rules `optimize` checks before each round and after each selection.

`--rounds N`: at most N rounds, fewer when a round's pick is the candidate it started from. `--rounds auto` (the
default): another round while the last one made progress — train accuracy up, or failed calls per task down — and,
past the second round, failed train episodes still hold calls the server refused (what a later round can learn from
the server); at most ROUNDS_CAP. Either way a run stops when train is perfect without a failed call, when
`--max-episodes` is spent, or when another round and the held-out gate would pass `--max-usd`.

Every stop is a `Stop`: a short rule name for machines (summary.json's `stop.rule`) and a sentence for people."""

from __future__ import annotations

from dataclasses import dataclass

from optimizer.optimize.config import ROUNDS_CAP, OptimizeConfig
from optimizer.optimize.rounds import Scored, Stop, failed_calls
from optimizer.run.harness import Harness

RULES = ("perfect", "no-progress", "nothing-refused", "cap", "rounds", "max-usd", "max-episodes", "no-candidates",
         "proposer-error", "unfit")
"""Every `Stop.rule`, in the order docs/commands.md explains them."""


@dataclass(frozen=True)
class Spending:
    """What the run paid so far, for the --max-usd rule: USD spent, what the last round cost, and what the held-out
    gate is expected to cost (the baseline's train episodes' price per episode, times the gate's episodes)."""

    spent: float
    last_round: float
    gate: float


def before_round(run: Harness[OptimizeConfig], number: int, best: Scored, spending: Spending | None) -> Stop | None:
    """Why round `number` should not start, or None (`nothing_refused` is checked once the round's ledger is made)."""
    config = run.config
    if config.goal != "shrink" and best.accuracy >= 1.0 - 1e-12 and not failed_calls(best.result):
        return Stop("perfect", "train accuracy reached 100% without a failed call")
    limit = config.max_episodes
    if limit is not None and run.episodes["run"] >= limit:
        return Stop("max-episodes", f"episode budget of {limit} reached")
    if config.rounds != "auto" and number > config.rounds:
        return Stop("rounds", f"{config.rounds} round(s) done")
    if config.rounds == "auto" and number > ROUNDS_CAP:
        return Stop("cap", f"the cap of {ROUNDS_CAP} rounds (--rounds auto) reached")
    if spending is not None and run.budget is not None and number > 1:
        ahead = spending.last_round + spending.gate
        if spending.spent + ahead > run.budget.limit:
            return Stop("max-usd", f"another round (about USD {spending.last_round:.2f}, as the last one) and the "
                                   f"held-out gate (about USD {spending.gate:.2f}) would pass --max-usd "
                                   f"{run.budget.limit:g} (USD {spending.spent:.2f} spent)")
    return None


def nothing_refused(run: Harness[OptimizeConfig], number: int, refused: int) -> Stop | None:
    """Under auto, past the second round: a stop when no failed train episode of the best candidate holds a call the
    server refused (`refused` such calls)."""
    if run.config.rounds == "auto" and number > 2 and not refused and run.config.goal != "shrink":
        return Stop("nothing-refused", "no failed train episode holds a call the server refused: nothing left for a "
                                       "later round to learn from the server")
    return None


def after_round(run: Harness[OptimizeConfig], before: Scored, chosen: Scored) -> Stop | None:
    """Why no round should follow the one that moved the best from `before` to `chosen`, or None: under a number of
    rounds, a pick that is the candidate the round started from; under auto, no progress (accuracy up or failed
    calls per task down; a shrink's progress is fewer definition tokens)."""
    if run.config.rounds != "auto" or run.config.goal == "shrink":
        if chosen.candidate.key == before.candidate.key:
            return Stop("no-progress", "no improvement in the last round")
        return None
    if chosen.accuracy > before.accuracy + 1e-12 or failed_calls(chosen.result) < failed_calls(before.result):
        return None
    return Stop("no-progress", "the last round raised neither train accuracy nor cut failed calls per task")
