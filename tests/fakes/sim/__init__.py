"""The simulated agents (`sim:lexical`, `sim:skim`): test doubles for the harness, never quality evidence. They do
not ship: the tests and benches that run them call `register()` first, which makes `sim:NAME?seed=N&noise=X&
latency_ms=Y` model strings load them (`optimizer.models.register_agents`)."""

from __future__ import annotations

from optimizer.models import register_agents
from optimizer.models.base import AgentModel, ModelSpecError

from .agent import SimAgent

__all__ = ["SimAgent", "register"]

OPTIONS = {"seed": int, "noise": float, "latency_ms": float}


def load(spec: str, name: str, options: dict[str, str]) -> AgentModel:
    """The agent `sim:NAME?options` names; ModelSpecError for an unknown option or a bad value."""
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ModelSpecError(f"{spec}: unknown option(s) {', '.join(unknown)}; allowed: seed, noise, latency_ms")
    try:
        kwargs = {k: OPTIONS[k](v) for k, v in options.items()}
    except ValueError as exc:
        raise ModelSpecError(f"{spec}: bad option value ({exc})") from None
    agent = SimAgent(name, **kwargs)
    agent.id = spec.strip()
    return agent


def register() -> None:
    """Make `sim:` model strings load the simulated agents in this process."""
    register_agents("sim", load)
