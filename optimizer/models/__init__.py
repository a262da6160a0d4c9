"""Model strings to agents. `reader:bm25` and `reader:embed` are offline readers (real systems that rank tools;
`models/reader.py`); `claude-…` or `anthropic:NAME?…` are Claude models over the Messages API;
`openai:NAME?max_tokens=N` are models behind an OpenAI-compatible Chat Completions endpoint (the `openai` extra).
Each vendor SDK is imported in its own module only, and only when a model string needs it. The tests' simulated
agents (`sim:…`) do not ship; they load only where a test or bench has registered them (`register_agents`).

The defaults and the retired models live in `defaults.py` and nowhere else."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

from optimizer.models.base import AgentModel, MessagesAPI, ModelSpecError
from optimizer.models.defaults import (
    CLAUDE_JUDGE,
    CLAUDE_PROPOSER,
    CLAUDE_TASK_MODELS,
    OFFLINE_DEFAULT,
    RETIRED_MODELS,
    check_model_name,
)

if TYPE_CHECKING:
    from optimizer.models.openai_compat import OpenAIClient

__all__ = ["CLAUDE_JUDGE", "CLAUDE_PROPOSER", "CLAUDE_TASK_MODELS", "OFFLINE_DEFAULT", "RETIRED_MODELS",
           "check_model_name"]


@dataclass(frozen=True)
class ProviderSettings:
    """Run-wide settings for real providers: requests in flight, thinking, Message Batches, the OpenAI-compatible
    server's address."""

    max_connections: int = 4
    thinking: str | None = None
    batch: bool = False
    openai_base_url: str | None = None
    """Base URL of the OpenAI-compatible server for `openai:` models; None: OPENAI_BASE_URL, else the OpenAI API."""
    tool_search: str = "off"
    """bm25 or regex: Claude models defer the tools behind the API's server-side tool search."""
    record: str | None = None
    """A folder: keep every Messages API answer the run receives there (`tape.py`)."""
    replay: str | None = None
    """A recording folder: answer every Messages API request from it, with no key and no API call."""
    command: str = ""
    """The command whose answers a recording keeps (its provenance)."""
    roles: Mapping[str, Any] = field(default_factory=dict)
    """Who answers what in the run ({"agents": [...], "proposer": ..., "judge": ...}), for a recording's provenance."""


def is_claude(spec: str) -> bool:
    return spec.startswith(("anthropic:", "claude-"))


class Providers:
    """The run's API clients, each made on first use and shared by the agents, the proposer and the judge (one
    connection pool and one rate gate per provider). `close()` closes what was made."""

    def __init__(self, settings: ProviderSettings = ProviderSettings()) -> None:
        self.settings = settings
        self._anthropic: MessagesAPI | None = None
        self._openai: OpenAIClient | None = None

    def anthropic(self) -> MessagesAPI:
        """The Messages API client: with `replay`, a recording's answers (no key needed); else the API, its answers
        kept in `record` when set. Raises ModelAccessError without ANTHROPIC_API_KEY, RecordingError for a folder
        that is no recording or cannot be written."""
        if self._anthropic is None:
            self._anthropic = self._messages_client()
        return self._anthropic

    def _messages_client(self) -> MessagesAPI:
        from optimizer.models import tape

        if self.settings.replay:
            return tape.ReplayClient(Path(self.settings.replay))
        from optimizer.models.anthropic import AnthropicClient

        client = AnthropicClient(max_connections=self.settings.max_connections)
        if not self.settings.record:
            return client
        return tape.RecordingClient(client, Path(self.settings.record), tape.provenance(self.settings.command,
                                                                                       self.settings.roles))

    @property
    def replaying(self) -> dict[str, Any] | None:
        """Where a replayed run's answers come from (`tape.replay_source`), or None when nothing is replayed."""
        if not self.settings.replay:
            return None
        from optimizer.models import tape

        return tape.replay_source(Path(self.settings.replay))

    def openai(self) -> OpenAIClient:
        """The OpenAI-compatible client; raises ModelSpecError without the `openai` extra."""
        if self._openai is None:
            try:
                from optimizer.models.openai_compat import OpenAIClient
            except ImportError as exc:
                raise ModelSpecError(f"openai: models need the openai package ({exc}); install it with "
                                     "pip install 'mcp-tool-optimizer[openai]'") from None
            self._openai = OpenAIClient(base_url=self.settings.openai_base_url,
                                        max_connections=self.settings.max_connections)
        return self._openai

    async def close(self) -> None:
        for client in (self._anthropic, self._openai):
            if client is not None:
                await client.close()
        self._anthropic = self._openai = None


def load_models(specs: Sequence[str], providers: Providers | None = None) -> list[AgentModel]:
    """Agents for model strings; real ones share `providers`' clients (a new `Providers()` when None). Raises
    ModelSpecError for a bad string (or a missing `openai` extra) and ModelAccessError for missing credentials."""
    providers = providers or Providers()
    out: list[AgentModel] = []
    for spec in specs:
        if is_claude(spec):
            from optimizer.models.anthropic import AnthropicAgent

            name, options = _claude_options(spec, providers.settings)
            out.append(AnthropicAgent(name, providers.anthropic(), **options))
        elif spec.strip().startswith("openai:"):
            client = providers.openai()
            from optimizer.models.openai_compat import OpenAIAgent, parse_spec

            name, openai_options = parse_spec(spec)
            out.append(OpenAIAgent(name, client, **openai_options))
        else:
            out.append(load_model(spec))
    return out


def _claude_options(spec: str, settings: ProviderSettings) -> tuple[str, dict[str, Any]]:
    name, _, query = spec.removeprefix("anthropic:").partition("?")
    options = dict(parse_qsl(query, keep_blank_values=True)) if query else {}
    unknown = sorted(set(options) - {"thinking", "max_tokens"})
    if unknown:
        raise ModelSpecError(f"{spec}: unknown option(s) {', '.join(unknown)}; allowed: thinking, max_tokens")
    out: dict[str, Any] = {"thinking": options.get("thinking", settings.thinking), "batch": settings.batch,
                           "tool_search": settings.tool_search}
    if "max_tokens" in options:
        try:
            out["max_tokens"] = int(options["max_tokens"])
        except ValueError:
            raise ModelSpecError(f"{spec}: max_tokens must be a whole number") from None
    return name, out


def parse_models(text: str) -> list[str]:
    """A comma-separated --models value as a list of distinct, non-empty model strings."""
    out: list[str] = []
    for part in text.split(","):
        part = part.strip()
        if part and part not in out:
            out.append(part)
    if not out:
        raise ModelSpecError("--models is empty; for example --models reader:bm25,reader:embed")
    return out


def load_model(spec: str) -> AgentModel:
    """Build the agent a model string names. Raises ModelSpecError with a fix-it message."""
    provider, _, rest = spec.partition(":")
    name, _, query = rest.partition("?")
    options = dict(parse_qsl(query, keep_blank_values=True, strict_parsing=False)) if query else {}
    if provider in _REGISTERED:
        return _REGISTERED[provider](spec, name, options)
    if provider == "sim":
        raise ModelSpecError(f"{spec}: the simulated agents are test doubles and do not ship; offline, use the "
                             f"readers {','.join(OFFLINE_DEFAULT)} (findability), or a real model (Claude, or "
                             "openai:NAME behind a local OpenAI-compatible server)")
    if provider == "reader":
        from optimizer.models.reader import ReaderModel

        if options:
            raise ModelSpecError(f"{spec}: readers take no options")
        return ReaderModel(name)
    raise ModelSpecError(
        f"unknown model {spec!r}: Claude models are claude-NAME or anthropic:NAME (for example "
        f"{','.join(CLAUDE_TASK_MODELS)}); models behind an OpenAI-compatible endpoint are openai:NAME "
        "(OPENAI_BASE_URL for vLLM, Ollama or llama.cpp; option ?max_tokens=N); offline readers are reader:bm25 "
        "and reader:embed"
    )


AgentLoader = Callable[[str, str, dict[str, str]], AgentModel]
"""(the whole model string, the name after the prefix, its ?options) -> the agent."""
_REGISTERED: dict[str, AgentLoader] = {}


def register_agents(prefix: str, loader: AgentLoader) -> None:
    """Let `PREFIX:NAME?options` model strings load agents the product does not ship: the tests' and benches'
    simulated agents (`tests/fakes/sim`, prefix `sim`) register here before they run."""
    _REGISTERED[prefix] = loader


def is_offline(model: AgentModel) -> bool:
    return model.offline


OFFLINE_PREFIXES = ("reader:", "sim:")
"""Model strings that need no provider: the offline readers and the simulated agents."""


def offline_spec(spec: str) -> bool:
    return spec.strip().startswith(OFFLINE_PREFIXES)


AGREEMENT_FILE = Path(__file__).resolve().parent.parent / "data" / "reader_agreement.json"
"""How often each offline reader's first tool is a real model's, as `bench/calibration.py --write` last measured."""


@functools.cache
def reader_agreement() -> dict[str, Any]:
    """AGREEMENT_FILE's content: {measured, tasks, agreement: {reader: share}, how}."""
    return dict(json.loads(AGREEMENT_FILE.read_text(encoding="utf-8")))


def banners(data: Mapping[str, Any]) -> list[str]:
    """What an output of a run's `data` (summary, eval or regress report) says first: REPLAY when its answers were
    replayed, OFFLINE when its models are offline (an output without models, such as `tasks generate --offline`'s,
    says OFFLINE in its own words)."""
    out = []
    if data.get("replay"):
        from optimizer.models.tape import replay_banner

        out.append(replay_banner(data["replay"]))
    if data.get("offline") and data.get("models"):
        out.append(offline_banner(data["models"]))
    return out


def offline_banner(model_ids: Sequence[str]) -> str:
    """What every output that shows offline results says first, by the kinds of offline model it shows; for the
    readers, with their measured agreement with a real model."""
    parts = []
    readers = [m for m in model_ids if m.startswith("reader:")]
    if readers:
        measured = reader_agreement()
        shares = [f"{m} on {measured['agreement'][m]:.0%}" for m in readers if m in measured["agreement"]]
        agree = (f" (they pick a real model's first tool: {', '.join(shares)} of {measured['tasks']:,} calibration "
                 "tasks)") if shares else ""
        parts.append("the readers (reader:*) measure findability, how a tool search or a router finds a tool, not "
                     f"agent accuracy, which needs a model{agree}")
    if any(m.startswith("sim:") for m in model_ids):
        parts.append("the simulated agents (sim:*) are test doubles, not quality evidence")
    return "OFFLINE — " + ("; ".join(parts) or "no real model") + "."
