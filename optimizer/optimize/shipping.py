"""What an optimize run ships: the winner, unless it would only add tokens.

A real model often passes a published server's tasks with its own definitions. The search may still pick a
candidate that scored higher on train; if held-out then shows no gain — no model more accurate, and no model paying
fewer failed calls per task without being less accurate — while the candidate's definitions cost more tokens, the
run ships the server's own definitions (an empty overlay and patch) and says why; the candidate stays in the report
and in summary.json's `winner`. A candidate that costs no more tokens ships as chosen (a shrink's smaller
definitions, or an equal-size rewrite), and the gate keeps judging whatever ships against the baseline.
When the rounds never started because train was already perfect, the winner is the baseline: nothing to fix."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from optimizer.optimize.rounds import Scored
from optimizer.run.evaluate import EvalResult
from optimizer.stats.efficiency import efficiency_cell


@dataclass(frozen=True)
class Shipped:
    scored: Scored
    reason: str | None = None
    """why the server's own definitions ship instead of the winner, or None"""


def to_ship(baseline: Scored, winner: Scored, before: EvalResult, after: EvalResult, models: Sequence[str]) -> Shipped:
    """The winner, or the baseline when the winner adds definition tokens for no held-out gain (module docstring)."""
    if winner.candidate.key == baseline.candidate.key or winner.tokens <= baseline.tokens:
        return Shipped(winner)
    gained = False
    for model in models:
        was, now = _cell(before, model), _cell(after, model)
        if now["accuracy"] < was["accuracy"] - 1e-12:
            continue
        if now["accuracy"] > was["accuracy"] + 1e-12 or now["failed"] < was["failed"]:
            gained = True
    if gained:
        return Shipped(winner)
    added = winner.tokens - baseline.tokens
    return Shipped(baseline, f"the best candidate adds {added:,} definition tokens and gained nothing on held-out (no "
                             "model more accurate, none with fewer failed calls per task): the server's own "
                             "definitions ship; the candidate is in the report")


def _cell(result: EvalResult, model: str) -> dict[str, float]:
    outcomes = [o for o in result.outcomes if o.model == model]
    accuracy = sum(o.passed for o in outcomes) / len(outcomes) if outcomes else 0.0
    return {"accuracy": accuracy, "failed": efficiency_cell(o.cost for o in outcomes)["failed_calls_per_task"]}
