"""What a candidate's definitions cost every request: lint's local token estimate of each exposed definition,
per original tool and in total."""

from __future__ import annotations

from optimizer.definitions import Candidate, Catalog, apply
from optimizer.lint.rules_description import definition_tokens as tool_tokens


def tokens_per_tool(catalog: Catalog, candidate: Candidate) -> dict[str, int]:
    """Original tool name -> estimated tokens of the definition the model sees under `candidate`."""
    exposed = apply(catalog, candidate)
    return {exposed.routing[t.name]: tool_tokens(t) for t in exposed.tools}


def definition_tokens(catalog: Catalog, candidate: Candidate) -> int:
    """Estimated tokens of all exposed definitions (what every request pays for the tools)."""
    return sum(tokens_per_tool(catalog, candidate).values())
