"""Model strings to agents. `sim:NAME?opt=v&…` are offline stand-ins; other providers arrive as
their own modules (each vendor SDK imported in one module only)."""

from __future__ import annotations

from urllib.parse import parse_qsl

from optimizer.models.base import AgentModel, ModelSpecError

OFFLINE_DEFAULT = ("sim:lexical", "sim:skim")


def parse_models(text: str) -> list[str]:
    """A comma-separated --models value as a list of distinct, non-empty model strings."""
    out: list[str] = []
    for part in text.split(","):
        part = part.strip()
        if part and part not in out:
            out.append(part)
    if not out:
        raise ModelSpecError("--models is empty; for example --models sim:lexical,sim:skim")
    return out


def load_model(spec: str) -> AgentModel:
    """Build the agent a model string names. Raises ModelSpecError with a fix-it message."""
    provider, _, rest = spec.partition(":")
    name, _, query = rest.partition("?")
    options = dict(parse_qsl(query, keep_blank_values=True, strict_parsing=False)) if query else {}
    if provider == "sim":
        from optimizer.models.sim import SimAgent

        allowed = {"seed": int, "noise": float, "latency_ms": float}
        unknown = sorted(set(options) - set(allowed))
        if unknown:
            raise ModelSpecError(f"{spec}: unknown option(s) {', '.join(unknown)}; allowed: seed, noise, latency_ms")
        try:
            kwargs = {k: allowed[k](v) for k, v in options.items()}
        except ValueError as exc:
            raise ModelSpecError(f"{spec}: bad option value ({exc})") from None
        agent = SimAgent(name, **kwargs)
        agent.id = spec.strip()
        return agent
    raise ModelSpecError(
        f"unknown model {spec!r}: offline agents are sim:lexical and sim:skim "
        "(options ?seed=N&noise=0.2&latency_ms=50)"
    )


def is_offline(model: AgentModel) -> bool:
    return bool(getattr(model, "offline", False))
