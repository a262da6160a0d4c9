"""The default models, and the Claude models this project refuses. One place: change a default here."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from optimizer.models.base import ModelSpecError

OFFLINE_DEFAULT = ("reader:bm25", "reader:embed")
CLAUDE_TASK_MODELS = ("claude-haiku-5-5", "claude-sonnet-5-5")
CLAUDE_PROPOSER = "claude-opus-5-5"
CLAUDE_JUDGE = "claude-haiku-5-5"


@dataclass(frozen=True)
class Retirement:
    """When a Claude model stops (or stopped) being served, and what to use instead."""

    end_of_life: date
    replacement: str


RETIRED_MODELS: dict[str, Retirement] = {
    "claude-sonnet-4-5": Retirement(date(2026, 11, 30), "claude-sonnet-5-5"),
    "claude-sonnet-4-5-20250929": Retirement(date(2026, 11, 30), "claude-sonnet-5-5"),
    "claude-mythos-preview": Retirement(date(2026, 6, 30), "claude-mythos-5"),
    "claude-opus-4-5": Retirement(date(2027, 1, 22), "claude-opus-5-5"),
    "claude-opus-4-5-20251101": Retirement(date(2027, 1, 22), "claude-opus-5-5"),
}
"""Claude models this project refuses: retired ones, and deprecated ones (the API warns on every request until
their end of life). Kept here rather than read from the SDK, whose private table drops models once retired."""


def check_model_name(name: str, *, today: date | None = None) -> None:
    """Raise ModelSpecError for a retired or deprecated Claude model, naming the date and a replacement. Names not
    in RETIRED_MODELS pass (newer models, private deployments); the API checks those itself."""
    retired = RETIRED_MODELS.get(name.removeprefix("anthropic:"))
    if retired is None:
        return
    when = retired.end_of_life.isoformat()
    if retired.end_of_life <= (today or date.today()):
        raise ModelSpecError(f"{name} is retired (end of life {when}); use {retired.replacement} instead")
    raise ModelSpecError(f"{name} is deprecated (end of life {when}); use {retired.replacement} instead")
