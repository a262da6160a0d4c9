"""Opening a run: its settings, directory, server, tools, tasks and models — shared by the verbs.

`run_eval` is the library behind `optimizer eval`: it resolves a resumed run's settings, checks
everything it can before the first episode (task files, tool names, destructive tools, overlay),
evaluates, and writes `eval.json` and the transcripts into the run directory.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from optimizer.budget import Budget, BudgetedAgent, BudgetExceeded
from optimizer.definitions import Candidate, Catalog, DefinitionError
from optimizer.episode import EpisodeConfig
from optimizer.evaluate import EvalResult, EvalSettings, Progress, evaluate
from optimizer.judge import make_judge
from optimizer.models import ProviderSettings, close_models, is_offline, load_models
from optimizer.models.base import AgentModel, ModelAccessError, ModelSpecError, ModelUnavailable
from optimizer.patch import load_overlay
from optimizer.prices import PriceError, PriceTable, load_prices
from optimizer.prompt_files import load_prompt
from optimizer.scoring import accuracy_table, confusion
from optimizer.servers import ServerError, ServerPool, ServerSpec
from optimizer.store import RunStore, StoreError
from optimizer.tasks import TaskError, TaskSet, load_tasks

Notice = Callable[[str], None]


RESUMABLE_CHANGES = frozenset({"max_usd", "max_connections", "prices", "openai_base_url"})
"""Settings a resumed run may change: they affect spending and speed, never an episode's result."""


class RunError(RuntimeError):
    """A usage or operational error the CLI shows as it is and exits 2 for."""


class EvalConfig(BaseModel):
    """Settings of one eval run. Stored in the run so that `--resume` needs nothing else."""

    model_config = ConfigDict(frozen=True)

    server: str = Field(description="Command line (stdio) or http(s) URL of the MCP server.")
    tasks: str = Field(description="Task file or directory.")
    models: tuple[str, ...] = Field(description="Model strings, e.g. sim:lexical.")
    overlay: str | None = Field(None, description="Overlay file applied to the definitions.")
    epochs: int = Field(1, ge=1, description="Runs of each task per model.")
    heldout: float = Field(0.3, ge=0, le=1, description="Share of tasks held out when a task sets no split.")
    seed: int = Field(0, description="Seed for the offline agents' noise and every sampled choice.")
    max_connections: int = Field(4, ge=1, description="Concurrent model requests.")
    server_instances: int | None = Field(None, ge=1, description="Server connections; default min(4, max_connections).")
    tool_timeout: float = Field(60.0, gt=0, description="Seconds before a tool call is abandoned.")
    connect_timeout: float = Field(30.0, gt=0, description="Seconds allowed for the MCP handshake.")
    max_turns: int = Field(12, ge=1, description="Model turns per episode.")
    allow_destructive: bool = Field(False, description="Let agents call tools annotated destructiveHint: true.")
    system_prompt: str | None = Field(None, description="The deployment's own system prompt, included verbatim.")
    thinking: str | None = Field(None, description="Claude extended thinking: a token budget or 'adaptive'.")
    batch: bool = Field(False, description="Send Claude turns through the Message Batches API (half price).")
    max_usd: float | None = Field(None, gt=0, description="Stop cleanly before spending more than this (USD).")
    prices: str | None = Field(None, description="Price table file overriding the built-in one.")
    judge: str | None = Field(None, description="Model that grades `match: judge` answers.")
    openai_base_url: str | None = Field(None, description="OpenAI-compatible server for openai: models.")
    headers: dict[str, str] = Field(default_factory=dict, exclude=True, description="HTTP headers (never stored).")


@dataclass
class OpenRun:
    config: EvalConfig
    store: RunStore
    pool: ServerPool
    catalog: Catalog
    taskset: TaskSet
    models: list[AgentModel]
    candidate: Candidate
    notices: list[str]
    budget: Budget | None = None

    @property
    def offline(self) -> bool:
        return all(is_offline(m) for m in self.models)


def resolve_config(
    config: EvalConfig | None, store: RunStore, config_type: type[EvalConfig] = EvalConfig,
    overrides: dict[str, Any] | None = None,
) -> EvalConfig:
    """On resume, the stored settings win; settings given again must agree with them, except
    RESUMABLE_CHANGES, which `config` or `overrides` may change."""
    stored = store.get_meta("config")
    if stored is None:
        if config is None:
            raise RunError(f"run {store.run_id} has no stored settings; start it again without --resume")
        return config
    saved = config_type.model_validate(stored)
    changes = {k: v for k, v in (overrides or {}).items() if k in RESUMABLE_CHANGES and v is not None}
    saved = saved.model_copy(update=changes) if changes else saved
    if config is not None:
        theirs = config.model_dump(exclude={"headers"})
        clash = sorted(k for k, v in saved.model_dump().items()
                       if theirs.get(k) not in (None, v) and k != "tasks" and k not in RESUMABLE_CHANGES)
        if clash:
            raise RunError(f"--resume {store.run_id}: these settings differ from the stored run: {', '.join(clash)}")
        changed = {k: theirs[k] for k in RESUMABLE_CHANGES if theirs.get(k) is not None}
        saved = saved.model_copy(update={"headers": config.headers, **changed})
    return saved


@contextlib.asynccontextmanager
async def open_run(
    config: EvalConfig | None, *, runs_dir: Path, run_id: str | None = None, resume: str | None = None,
    config_type: type[EvalConfig] = EvalConfig, overrides: dict[str, Any] | None = None,
) -> AsyncIterator[OpenRun]:
    """Check everything, open the store and the server pool; close both on exit."""
    try:
        store = RunStore.open_existing(runs_dir, resume) if resume else RunStore.create(runs_dir, run_id)
    except StoreError as exc:
        raise RunError(str(exc)) from None
    async with contextlib.AsyncExitStack() as stack, _opened(config, store, stack, config_type, overrides) as run:
        yield run


@contextlib.asynccontextmanager
async def _opened(
    config: EvalConfig | None, store: RunStore, stack: contextlib.AsyncExitStack, config_type: type[EvalConfig],
    overrides: dict[str, Any] | None,
) -> AsyncIterator[OpenRun]:
    try:
        config = resolve_config(config, store, config_type, overrides)
        taskset = _load_tasks(config)
        models = _load_models(config)
        stack.push_async_callback(close_models, models)
        budget = _budget(config, store)
        models = [BudgetedAgent(m, budget) for m in models] if budget else models
        await _check_access(models)
        store.set_meta("config", config.model_dump())
        spec = _spec(config)
        instances = config.server_instances or min(4, config.max_connections)
        pool = ServerPool(spec, instances=instances, log_path=store.server_log,
                          tool_timeout=config.tool_timeout, connect_timeout=config.connect_timeout)
        try:
            await pool.__aenter__()
        except ServerError as exc:
            raise RunError(str(exc)) from None
        try:
            catalog = await pool.list_tools()
            notices = _safety(catalog, config)
            candidate = _candidate(config, catalog)
            try:
                taskset.check_tools(catalog.names)
            except TaskError as exc:
                raise RunError(str(exc)) from None
            store.set_meta("catalog", [t.canonical() for t in catalog.tools])
            try:
                yield OpenRun(config, store, pool, catalog, taskset, models, candidate, notices, budget)
            except BudgetExceeded as exc:
                raise RunError(f"{exc}. Episodes finished so far are saved; continue with --resume {store.run_id} "
                               "and a higher --max-usd") from None
            except ModelAccessError as exc:
                raise RunError(f"the model provider refused the run: {exc}. Episodes finished so far are saved; "
                               f"fix it and continue with --resume {store.run_id}") from None
        finally:
            await pool.__aexit__(None, None, None)
    finally:
        store.close()


def _spec(config: EvalConfig) -> ServerSpec:
    try:
        return ServerSpec.parse(config.server, headers=config.headers)
    except ServerError as exc:
        raise RunError(str(exc)) from None


def _load_tasks(config: EvalConfig) -> TaskSet:
    try:
        return load_tasks(Path(config.tasks), heldout=config.heldout)
    except TaskError as exc:
        raise RunError(f"the task set has problems; nothing was run:\n{exc}") from None
    except OSError as exc:
        raise RunError(f"cannot read tasks from {config.tasks}: {exc}") from None


def _load_models(config: EvalConfig) -> list[AgentModel]:
    settings = ProviderSettings(max_connections=config.max_connections, thinking=config.thinking,
                                openai_base_url=config.openai_base_url,
                                batch=config.batch)
    try:
        return load_models(config.models, settings)
    except (ModelSpecError, ModelAccessError) as exc:
        raise RunError(str(exc)) from None


def _budget(config: EvalConfig, store: RunStore) -> Budget | None:
    """The run's --max-usd budget, counting what its stored episodes cost; checks a --prices file either way."""
    try:
        table = load_prices(Path(config.prices)) if config.prices else PriceTable.default()
    except PriceError as exc:
        raise RunError(str(exc)) from None
    if config.max_usd is None:
        return None
    stored = ((e.model, e.data.get("usage") or {}, e.data.get("batch") is True) for e in store.episodes())
    return Budget.for_run(config.max_usd, table, stored)


async def _check_access(models: list[AgentModel]) -> None:
    """Ask each real provider, for free, whether the key and the model name work, before any episode."""
    for model in models:
        check = getattr(model, "check_access", None)
        if check is None:
            continue
        try:
            await check()
        except ModelAccessError as exc:
            raise RunError(f"{model.id}: {exc}") from None
        except ModelUnavailable as exc:
            raise RunError(f"{model.id}: the API is not answering ({exc}); nothing was run") from None


def _safety(catalog: Catalog, config: EvalConfig) -> list[str]:
    destructive = [t.name for t in catalog.tools if t.hint("destructiveHint") is True]
    if destructive and not config.allow_destructive:
        raise RunError(
            "these tools are annotated destructiveHint: true, so agents could change or delete real data: "
            f"{', '.join(destructive)}. Run against a disposable server, then pass --allow-destructive."
        )
    bare = [t.name for t in catalog.tools if not t.annotations]
    notices = []
    if bare:
        notices.append(
            f"{len(bare)} tool(s) have no annotations, so nothing says whether they are safe to call: "
            + ", ".join(bare)
        )
    return notices


def _candidate(config: EvalConfig, catalog: Catalog) -> Candidate:
    if not config.overlay:
        return Candidate()
    try:
        return load_overlay(Path(config.overlay), catalog)
    except DefinitionError as exc:
        raise RunError(str(exc)) from None


def episode_config(run: OpenRun) -> EpisodeConfig:
    blocked = () if run.config.allow_destructive else tuple(
        t.name for t in run.catalog.tools if t.hint("destructiveHint") is True
    )
    return EpisodeConfig(system_prompt=system_prompt(run.config.system_prompt), max_turns=run.config.max_turns,
                         blocked_tools=blocked)


def system_prompt(own: str | None) -> str:
    """The agent's system prompt: the deployment's own (verbatim) first, then how to work and report."""
    ours = load_prompt("agent_system")
    return f"{own.strip()}\n\n{ours}" if own and own.strip() else ours


async def run_eval(
    config: EvalConfig | None, *, runs_dir: Path, run_id: str | None = None, resume: str | None = None,
    progress: Progress | None = None, on_start: Callable[[OpenRun, int], None] | None = None,
    overrides: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Run (or resume) an eval and return the report that `--json` prints."""
    async with open_run(config, runs_dir=runs_dir, run_id=run_id, resume=resume, overrides=overrides) as run:
        tasks = run.taskset.split("all")
        if on_start is not None:
            on_start(run, len(tasks) * len(run.models) * run.config.epochs)
        settings = EvalSettings(epochs=run.config.epochs, seed=run.config.seed,
                                max_connections=run.config.max_connections, episode=episode_config(run),
                                judge=make_judge(run.config, run))
        result = await evaluate(pool=run.pool, store=run.store, catalog=run.catalog, candidate=run.candidate,
                                tasks=tasks, models=run.models, settings=settings, progress=progress)
        report = eval_report(run, result)
        run.store.write_json("eval.json", report)
        run.store.export_transcripts()
        return report


def eval_report(run: OpenRun, result: EvalResult) -> dict[str, Any]:
    return {
        "run_id": run.store.run_id,
        "run_dir": str(run.store.dir),
        "server": run.pool.spec.display,
        "offline": run.offline,
        "models": [m.id for m in run.models],
        "candidate": result.candidate,
        "splits": run.taskset.counts(),
        "results": accuracy_table((o.model, o.split, o.passed) for o in result.outcomes),
        "confusion": {
            model.id: confusion((o.expected_first, o.chosen_first) for o in result.outcomes
                                if o.model == model.id and o.expected_first is not None)
            for model in run.models
        },
        "episodes": {"run": result.run, "cached": result.cached, "infra_errors": result.infra_errors},
        "server_restarts": run.pool.restarts,
        "notices": run.notices,
    }
