"""Proposers: evidence from train episodes in, candidate definitions out (contract in `base.py`).
`load_proposer` turns a name into one: `rules` (offline) or a Claude model; for the shrink goal, with lean schemas
(`lean.py`)."""

from __future__ import annotations

from optimizer.models import CLAUDE_PROPOSER, Providers, check_model_name, is_claude
from optimizer.propose.base import Proposer


class ProposerError(ValueError):
    """A proposer name that names no proposer, or a retired model."""


def load_proposer(name: str, providers: Providers, *, goal: str = "accuracy") -> Proposer:
    """The proposer a name gives, working towards `goal` ("accuracy" or "shrink"): `rules`, or a Claude model on
    `providers`' shared Messages client; a shrink's with lean schemas on every candidate. Raises ProposerError for
    an unknown name or a retired model, ModelAccessError without a key."""
    proposer = _named(name, providers, goal)
    if goal == "shrink":
        from optimizer.propose.lean import LeanSchemas

        return LeanSchemas(proposer)
    return proposer


def _named(name: str, providers: Providers, goal: str) -> Proposer:
    if name == "rules":
        from optimizer.propose.rules import RulesProposer
        from optimizer.propose.shrink import ShrinkProposer

        return ShrinkProposer() if goal == "shrink" else RulesProposer()
    if is_claude(name):
        from optimizer.propose.claude import ClaudeProposer

        model = name.removeprefix("anthropic:")
        try:
            check_model_name(model)
        except ValueError as exc:
            raise ProposerError(f"--proposer: {exc}") from None
        return ClaudeProposer(model, providers.anthropic(), goal=goal)
    raise ProposerError(f"unknown proposer {name!r}: use rules (offline) or a Claude model such as {CLAUDE_PROPOSER}")
