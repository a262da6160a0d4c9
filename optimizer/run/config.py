"""Settings of a run, as stored in it: the base every command's config extends, and how a resumed run's
stored settings meet the ones given again. Frozen pydantic models with a description per field."""

from __future__ import annotations

from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

RESUMABLE_CHANGES = frozenset({"max_usd", "confirm_usd", "max_connections", "prices", "openai_base_url", "record",
                               "replay"})
"""Settings a resumed run may change: they affect spending, speed and where answers are kept or come from, never
what an episode is asked."""


CONFIRM_USD = 10.0
"""The default --confirm-usd."""


class RunError(RuntimeError):
    """A usage or operational error the CLI shows as it is and exits 2 for."""


class EvalConfig(BaseModel):
    """Settings of one eval run. Stored in the run so that `--resume` needs nothing else."""

    model_config = ConfigDict(frozen=True)

    server: str = Field(description="MCP server: a command line run over stdio (\"python server.py\"), or an "
                        "http(s)://…/mcp URL.")
    tasks: str = Field(description="Task file or directory (YAML, JSONL, the cookbook's or the MCP-builder's "
                       "evaluation XML).")
    models: tuple[str, ...] = Field(description="Model strings, e.g. claude-sonnet-5-5 or reader:bm25.")
    overlay: str | None = Field(None, description="Overlay JSON applied to the definitions (format: docs/commands.md, "
                                "Overlays).")
    epochs: int = Field(1, ge=1, description="Runs of each task per model.")
    heldout: float = Field(0.3, ge=0, le=1, description="Share of tasks held out when a task sets no split.")
    split: Literal["all", "train", "heldout"] = Field("all", description="The tasks run: all, or one split.")
    seed: int = Field(0, description="Seed for every random choice (offline agents' noise, the search).")
    max_connections: int = Field(4, ge=1, description="Concurrent model requests.")
    server_instances: int | None = Field(None, ge=1, description="Server connections kept open (default "
                                         "min(4, max-connections)).")
    tool_timeout: float = Field(60.0, gt=0, description="Seconds before a tool call is abandoned.")
    connect_timeout: float = Field(30.0, gt=0, description="Seconds allowed for the MCP handshake.")
    mcp_config: str | None = Field(None, description="A client's MCP config file (the mcpServers JSON of Claude "
                                   "Desktop, Claude Code's .mcp.json or Cursor) that --context picks servers from.")
    context: tuple[str, ...] = Field((), description="Servers of --mcp-config that stand beside the server under "
                                     "test, comma-separated: the agent sees their tools too, unchanged, and only "
                                     "their read-only tools run.")
    context_servers: tuple[str, ...] = Field((), description="Another server beside the one under test, a command "
                                             "line or URL (repeatable); as --context.")
    client_naming: Literal["plain", "claude-code"] = Field("plain", description="How the client names tools: plain "
                                                           "(as listed) or claude-code (mcp__<server>__<tool>).")
    tool_search: Literal["off", "bm25", "regex"] = Field("off", description="Defer every tool (the target's and "
                                                         "the context's) behind a search tool, as clients with many "
                                                         "tools do: bm25 (words) or regex (a pattern); top 5 loaded.")
    max_turns: int = Field(12, ge=1, description="Model turns per task.")
    allow_destructive: bool = Field(False, description="Let agents call tools annotated destructiveHint: true.")
    isolate: bool = Field(False, description="Start every episode from a fresh server: an episode about to call a "
                          "tool that may change state waits to have its server process alone, which is restarted "
                          "after it when such a call succeeded. Exact for servers that start from the same state "
                          "each time; costs a restart per episode that wrote. Without it, later episodes may see "
                          "earlier ones' writes, and the summary counts the episodes that wrote.")
    system_prompt: str | None = Field(None, description="Your agent's own system prompt (a file), included "
                                      "verbatim: test descriptions under the prompt they will ship with.")
    thinking: str | None = Field(None, description="Claude extended thinking: a token budget (1024 or more) or "
                                 "'adaptive'. Default off.")
    batch: bool = Field(False, description="Send Claude turns through the Message Batches API: half price, slower "
                       "turnaround.")
    max_usd: float | None = Field(None, gt=0, description="Stop cleanly before spending more than this many US "
                                  "dollars; finished work is kept, and --resume RUN_ID --max-usd HIGHER continues.")
    confirm_usd: float = Field(CONFIRM_USD, ge=0, description="Ask before a run whose estimated cost may pass this "
                               "many US dollars (the estimate's upper end); without a terminal to ask, such a run "
                               "stops with exit 2 unless --max-usd bounds it.")
    prices: str | None = Field(None, description="JSON price table (USD per million tokens per model) laid over "
                               "the built-in one.")
    judge: str | None = Field(None, description="Model that grades `match: judge` answers (default "
                              "claude-haiku-5-5 with Claude models, sim:judge offline).")
    openai_base_url: str | None = Field(None, description="OpenAI-compatible server for openai:MODEL models (vLLM, "
                                        "Ollama, llama.cpp, OpenAI); default OPENAI_BASE_URL, else the OpenAI API. "
                                        "The key is OPENAI_API_KEY.")
    record: str | None = Field(None, description="Keep every Claude answer the run receives in this folder (plain "
                               "JSON with its provenance, never a key), to replay it with --replay.")
    replay: str | None = Field(None, description="Answer every Claude request from a folder --record made: no API "
                               "key, no API call; a request it has no answer for stops the run (exit 2). Outputs "
                               "say REPLAY.")
    headers: dict[str, str] = Field(default_factory=dict, exclude=True, description="HTTP header for URL servers, "
                                   "'Name: value' (repeatable; never stored).")


    def roles(self) -> dict[str, Any]:
        """Who answers what in the run, as a recording's provenance names them: the agents and the judge (and, in
        `optimize`, the proposer)."""
        return {"agents": list(self.models), **({"judge": self.judge} if self.judge else {})}


ConfigT = TypeVar("ConfigT", bound=EvalConfig)


def resolve_config(
    config: ConfigT | None, stored: dict[str, Any] | None, config_type: type[ConfigT], *, run_id: str,
    overrides: dict[str, Any] | None = None,
) -> ConfigT:
    """The settings a run uses. New run (`stored` None): `config`. On resume the stored settings win; settings
    given again must agree with them, except RESUMABLE_CHANGES, which `config` or `overrides` may change."""
    if stored is None:
        if config is None:
            raise RunError(f"run {run_id} has no stored settings; start it again without --resume")
        return config
    saved = config_type.model_validate(stored)
    changes = {k: v for k, v in (overrides or {}).items() if k in RESUMABLE_CHANGES and v is not None}
    saved = saved.model_copy(update=changes) if changes else saved
    if config is not None:
        theirs = config.model_dump(exclude={"headers"})
        clash = sorted(k for k, v in saved.model_dump().items()
                       if theirs.get(k) not in (None, v) and k != "tasks" and k not in RESUMABLE_CHANGES)
        if clash:
            raise RunError(f"--resume {run_id}: these settings differ from the stored run: {', '.join(clash)}")
        changed = {k: theirs[k] for k in RESUMABLE_CHANGES if theirs.get(k) is not None}
        saved = saved.model_copy(update={"headers": config.headers, **changed})
    return saved
