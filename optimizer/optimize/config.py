"""Settings of an optimization run, and the models and proposer it uses when none are named."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import Field, field_validator

from optimizer.models import CLAUDE_PROPOSER, CLAUDE_TASK_MODELS, OFFLINE_DEFAULT
from optimizer.models.tape import Recording, RecordingError, open_recording
from optimizer.run.config import EvalConfig, RunError

ROUNDS_CAP = 6
"""The most rounds `--rounds auto` runs."""
PROBE_CALLS = 24
"""Probe calls per round at most."""
SHRINK_MARGIN = 0.1
"""The non-inferiority margin of a shrink's gate when --margin is not given: a drop of 10 points or more regresses."""


class OptimizeConfig(EvalConfig):
    """Settings of one optimization run (everything `eval` takes, plus the search)."""

    epochs: int = Field(1, ge=1, description="Held-out runs per task for the gate.")
    rounds: int | Literal["auto"] = Field("auto", description="Rounds of propose and search: a number (at most "
                                          "that many; fewer when one brings no improvement), or auto: another "
                                          "round while the last raised train accuracy or cut failed calls per task "
                                          "and, past the second, failed train episodes still hold calls the server "
                                          f"refused; at most {ROUNDS_CAP}.")
    probe: bool = Field(True, description="Probe refused train calls to read-only tools (any tool with "
                        "--allow-destructive): call again with one argument changed at a time to a value the server "
                        f"took elsewhere, to name the argument it refused; at most {PROBE_CALLS} calls a round, "
                        "listed in the report. --no-probe: never.")
    trials: int = Field(12, ge=1, description="Search trials per round (whole proposals first).")
    candidates: int = Field(4, ge=1, description="Candidates proposed per round.")
    chunks: int = Field(3, ge=1, description="Growing chunks of train tasks; hopeless trials stop early.")
    max_episodes: int | None = Field(None, ge=1, description="Stop proposing after this many episodes.")
    goal: Literal["accuracy", "shrink"] = Field("accuracy", description="accuracy: the most accurate definitions "
                                                "(fewer tokens on ties). shrink: the smallest definitions whose "
                                                "train accuracy is within the noise of the server's own for every "
                                                "model; proposers cut what a model does not need, the search "
                                                "trades accuracy against tokens, and the gate tests non-inferiority "
                                                f"(--margin, default {SHRINK_MARGIN:g}) and fails a significant "
                                                "drop.")
    objective: Literal["mean", "min", "efficiency"] = Field(
        "mean", description="mean: mean train accuracy over models; min: the worst model's; efficiency: the mean "
        "less 10 points per failed call per task, for servers where every candidate passes: the search then steers "
        "toward fewer failed calls.")
    pareto: bool = Field(False, description="Search accuracy against definition tokens and report the front.")
    max_drop: float = Field(0.0, ge=0, le=1, description="Largest held-out accuracy drop per model the gate allows.")
    alpha: float = Field(0.05, gt=0, lt=1, description="Significance level of the gate (Holm-adjusted across "
                                                       "models).")
    margin: float | None = Field(None, gt=0, le=1, description="Non-inferiority margin (0.05 = 5 points): a model "
                                 "passes only when its drop's upper confidence bound is below it; a drop of the "
                                 "margin or more regresses, anything between is inconclusive.")
    fail_on: Literal["regressed", "inconclusive"] = Field("regressed", description="'inconclusive' also fails "
                                                          "models whose non-inferiority could not be shown.")
    heldout_candidates: int = Field(5, ge=1, le=20, description="Candidates scored on held-out after the gate, "
                                    "the winner first, then the best of the fronts (never used to select; each "
                                    "costs a held-out evaluation). 1: only the winner.")
    token_tolerance: float = Field(0.5, ge=0, description="How far below the most accurate candidate's train score "
                                   "a smaller candidate may be and still win, in standard errors of their paired "
                                   "difference (0: only exact ties).")
    max_definition_tokens: int | None = Field(None, ge=1, description="Hard budget: candidates whose definitions "
                                              "take more estimated tokens than this are rejected before any eval.")
    evidence_tokens: int = Field(12_000, ge=500, description="Token budget of the proposer's evidence.")
    proposer: str = Field("rules", description="rules (offline) or a Claude model name.")
    allow_leakage: bool = Field(False, description="Keep candidates that copy text from train prompts.")
    storage: str | None = Field(None, description="Optuna storage URL (default: the run's SQLite file).")
    source: str | None = Field(None, description="The server's source directory: also write source.patch, the "
                               "winner's texts rewritten where they stand in the code (for git apply).")

    @field_validator("rounds", mode="before")
    @classmethod
    def _rounds(cls, value: Any) -> Any:
        """A number of rounds (1 or more), or "auto"; from the command line both come as text."""
        if isinstance(value, str) and value.strip().lower() == "auto":
            return "auto"
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise ValueError("a whole number of rounds (1 or more), or auto") from None
        if number < 1 or str(number) != str(value).strip():
            raise ValueError("a whole number of rounds (1 or more), or auto")
        return number

    def roles(self) -> dict[str, Any]:
        return {**super().roles(), "proposer": self.proposer}


def recorded(folder: str) -> Recording:
    """The recording --replay names, opened; its problems as a RunError."""
    try:
        return open_recording(folder)
    except RecordingError as exc:
        raise RunError(f"--replay: {exc}") from None


def gate_settings(config: OptimizeConfig) -> tuple[float | None, float | None]:
    """(max_drop, margin) the gate uses: as given; for a shrink, the non-inferiority margin SHRINK_MARGIN when none
    is given, and no --max-drop of its own unless one is set (a drop fails when significant, or the margin or
    more)."""
    if config.goal != "shrink":
        return config.max_drop, config.margin
    return (config.max_drop or None), (config.margin or SHRINK_MARGIN)


def default_models(*, offline: bool, models: Sequence[str] | None, replay: str | None = None) -> tuple[str, ...]:
    """The models to use: as given; the offline readers with --offline; a recording's agents with --replay; Claude
    with a key; else stop with what to do."""
    if models:
        return tuple(models)
    if offline:
        return OFFLINE_DEFAULT
    agents = recorded(replay).agents if replay else None
    if agents:
        return tuple(agents)
    if os.environ.get("ANTHROPIC_API_KEY"):
        return CLAUDE_TASK_MODELS
    raise RunError("no models to evaluate with: set ANTHROPIC_API_KEY to use Claude, pass --models (an "
                   "OpenAI-compatible local server works), or pass --offline to measure findability with the "
                   f"offline readers ({','.join(OFFLINE_DEFAULT)}) and the rules proposer.")


def default_proposer(*, offline: bool, proposer: str | None, replay: str | None = None) -> str:
    """The proposer: as given; a recording's with --replay; rules with --offline or without a key; else Claude."""
    if proposer:
        return proposer
    chosen = recorded(replay).proposer if replay and not offline else None
    if chosen:
        return chosen
    return "rules" if offline or not os.environ.get("ANTHROPIC_API_KEY") else CLAUDE_PROPOSER
