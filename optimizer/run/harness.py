"""One open run: its directory and store, server pool, tools, tasks, models and their provider clients, budget
and judge — and one `evaluate(candidate, tasks)` that `eval`, `optimize` and `regress` all use.

`open_harness` checks everything it can before the first episode (settings against a resumed run, task files,
models and their access, prices, the server, tool names, destructive tools, the overlay) and raises RunError
with a message for the user; it closes the pool, the provider clients and the store on exit. Budget and access
errors raised while the run is open become RunErrors that say how to continue.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from optimizer.cost.budget import Budget, BudgetedAgent, BudgetExceeded
from optimizer.cost.estimate import DEFAULT_SHAPE, Estimate, Plan, estimate
from optimizer.cost.history import earlier_shape
from optimizer.cost.prices import PriceError, PriceTable, load_prices
from optimizer.definitions import Candidate, Catalog, DefinitionError, ToolDef, apply
from optimizer.files.patch import load_overlay
from optimizer.files.store import RunStore, StoreError, no_room
from optimizer.judge import Grader, JudgeSetupError, make_judge
from optimizer.lint.rules_description import definition_tokens as tool_tokens
from optimizer.models import Providers, ProviderSettings, load_models
from optimizer.models.base import AgentModel, ModelAccessError, ModelSpecError, ModelUnavailable, ReplayMissing
from optimizer.models.tape import RecordingError
from optimizer.prompt_files import load_prompt
from optimizer.run.config import ConfigT, EvalConfig, RunError, resolve_config
from optimizer.run.context import Context, ContextError, context_specs, open_context
from optimizer.run.episode import EpisodeConfig
from optimizer.run.evaluate import EvalResult, EvalSettings, Progress, evaluate
from optimizer.search.study import SearchError, check_storage
from optimizer.servers import ServerError, ServerPool, ServerSpec
from optimizer.tasks import Task, TaskError, TaskSet, load_tasks
from optimizer.text.tokens import estimate_tokens

T = TypeVar("T")


@dataclass
class Harness(Generic[ConfigT]):
    """An open run, typed by its settings. `episodes` counts what `evaluate` did since the run was opened."""

    config: ConfigT
    store: RunStore
    pool: ServerPool
    catalog: Catalog
    taskset: TaskSet
    models: list[AgentModel]
    providers: Providers
    candidate: Candidate
    notices: list[str]
    budget: Budget | None = None
    judge: Grader | None = None
    progress: Progress | None = None
    episode: EpisodeConfig = field(default_factory=EpisodeConfig)
    """How every episode of the run goes (system prompt, turns, blocked tools); read once when the run opens."""
    episodes: dict[str, int] = field(default_factory=lambda: {"run": 0, "cached": 0, "infra_errors": 0,
                                                              "infra_retried": 0, "changed_state": 0})
    context: Context = field(default_factory=Context)
    """The servers standing beside the target (`--mcp-config`/`--context`, `--context-server`), opened."""
    stage: Callable[[str, int | None], None] = field(default=lambda label, total: None)
    """Called by a job as it enters a stage (label, episodes it may run, or None when unknown), for progress."""

    @property
    def offline(self) -> bool:
        return all(m.offline for m in self.models)

    @property
    def model_ids(self) -> list[str]:
        return [m.id for m in self.models]

    def settings(self, epochs: int = 1) -> EvalSettings:
        return EvalSettings(epochs=epochs, seed=self.config.seed, max_connections=self.config.max_connections,
                            episode=self.episode, judge=self.judge, tool_search=self.config.tool_search,
                            isolate=self.config.isolate)

    async def evaluate(
        self, candidate: Candidate, tasks: Sequence[Task], *, epochs: int = 1, pool: ServerPool | None = None,
        catalog: Catalog | None = None, alone: bool = False,
    ) -> EvalResult:
        """Every (task, model, epoch) episode of `candidate` through the run's store (see `evaluate.evaluate`);
        `pool` and `catalog` default to the run's own server (regress passes another server's). The agent sees
        the run's context servers beside it unless `alone`, under the run's client naming."""
        result = await evaluate(pool=pool or self.pool, store=self.store, catalog=catalog or self.catalog,
                                candidate=candidate, tasks=tasks, models=self.models, settings=self.settings(epochs),
                                progress=self.progress, context=None if alone else self.context,
                                naming=self.config.client_naming)
        for key in self.episodes:
            self.episodes[key] += getattr(result, key)
        return result


@dataclass(frozen=True)
class Costing:
    """How a command's run says what it will cost before its first paid request: `plan` (settings, tasks, whether
    context servers stand beside the target -> Plan) and `announce` (estimate, USD already spent, the run's
    settings), which may stop the run by raising (a refusal, a dry run)."""

    plan: Callable[[Any, TaskSet, bool], Plan]
    announce: Callable[[Estimate, float, Any], None] | None = None


@contextlib.asynccontextmanager
async def open_harness(
    config: ConfigT | None, config_type: type[ConfigT], *, runs_dir: Path, run_id: str | None = None,
    resume: str | None = None, overrides: dict[str, Any] | None = None, progress: Progress | None = None,
    costing: Costing | None = None,
) -> AsyncIterator[Harness[ConfigT]]:
    """Check everything, open the store, the providers and the server pool; close them all on exit. A new run
    that stops before its first episode leaves no directory behind; a resume of a run another command made is
    refused. A run whose directory runs out of room (disk full) stops with a RunError saying so; every episode
    stored before is kept for --resume."""
    try:
        store = RunStore.open_existing(runs_dir, resume) if resume else RunStore.create(runs_dir, run_id)
    except StoreError as exc:
        raise RunError(str(exc)) from None
    opened = finished = False
    try:
        kind = store.get_meta("command")
        if kind is not None and kind != config_type.__name__:
            raise RunError(f"run {store.run_id} was made by `{_COMMANDS.get(kind, kind)}`, not "
                           f"`{_COMMANDS.get(config_type.__name__, config_type.__name__)}`; resume it with that "
                           "command")
        resolved = resolve_config(config, store.get_meta("config"), config_type, run_id=store.run_id,
                                  overrides=overrides)
        _check_settings(resolved)
        providers = Providers(ProviderSettings(max_connections=resolved.max_connections, thinking=resolved.thinking,
                                               openai_base_url=resolved.openai_base_url, batch=resolved.batch,
                                               tool_search=resolved.tool_search, record=resolved.record,
                                               replay=resolved.replay, command=_COMMANDS[config_type.__name__],
                                               roles=resolved.roles()))
        try:
            async with _opened(resolved, store, providers, progress, costing) as harness:
                opened = True
                yield harness
                finished = True
        finally:
            await providers.close()
    except Exception as exc:
        reason = no_room(exc, store.dir)
        if reason is None:
            raise
        raise RunError(_full(store, reason, kept=bool(resume) or (opened and store.count() > 0))) from None
    finally:
        empty = not resume and not finished and (not opened or next(iter(store.episodes()), None) is None)
        store.close()
        if empty:
            shutil.rmtree(store.dir, ignore_errors=True)  # nothing ran: do not leave an empty run behind


def _full(store: RunStore, reason: str, *, kept: bool) -> str:
    """The message for a run whose directory ran out of room; `kept`: the run directory stays (a resumed run, or one
    with stored episodes), else it is removed as empty."""
    where = f"cannot write to the run directory {store.dir}: {reason}."
    if not kept:
        return f"{where} Nothing was stored (the run directory is removed); make room, then start the run again."
    return (f"{where} The {store.count()} episodes finished so far are saved; make room, then continue with the same "
            f"command and --resume {store.run_id}")


@contextlib.asynccontextmanager
async def _opened(
    config: ConfigT, store: RunStore, providers: Providers, progress: Progress | None, costing: Costing | None
) -> AsyncIterator[Harness[ConfigT]]:
    taskset = _load_tasks(config)
    prices = _prices(config)
    # without an estimate to make first, check the models before starting the server
    models = _load_models(config, providers) if costing is None else []
    async with _pool(config, store) as pool, _context(config, store) as context:
        catalog = await pool.list_tools()
        notices = _safety(catalog, config)
        candidate = _candidate(config, catalog)
        if context:
            notices += context.expose(apply(catalog, candidate), config.client_naming, catalog.server_name)[1]
        try:
            taskset.check_tools(catalog.names)
        except TaskError as exc:
            raise RunError(str(exc)) from None
        budget = _budget(config, store, prices)
        if costing is not None:
            _announce(costing, config, store, taskset, apply(catalog, candidate).tools, prices, budget,
                      in_context=bool(context))
            models = _load_models(config, providers)
        models = [BudgetedAgent(m, budget) for m in models] if budget else models
        await _check_access(models)
        store.set_meta("config", config.model_dump())
        store.set_meta("command", type(config).__name__)
        store.set_meta("catalog", [t.canonical() for t in catalog.tools])
        harness = Harness(config, store, pool, catalog, taskset, models, providers, candidate, notices, budget,
                          progress=progress, episode=episode_config(config, catalog), context=context)
        try:
            harness.judge = make_judge(config.judge, tasks=taskset.split("all"), models=models,
                                       model_specs=config.models, store=store, providers=providers,
                                       notices=notices)
            yield harness
        except JudgeSetupError as exc:
            raise RunError(str(exc)) from None
        except BudgetExceeded as exc:
            raise RunError(f"{exc}. Episodes finished so far are saved; continue with --resume {store.run_id} "
                           "and a higher --max-usd") from None
        except ReplayMissing as exc:
            raise RunError(f"{exc}. Episodes finished so far are saved") from None
        except ModelAccessError as exc:
            raise RunError(f"the model provider refused the run: {exc}. Episodes finished so far are saved; "
                           f"fix it and continue with --resume {store.run_id}") from None


@contextlib.asynccontextmanager
async def _pool(config: EvalConfig, store: RunStore) -> AsyncIterator[ServerPool]:
    spec = _spec(config)
    instances = config.server_instances or min(4, config.max_connections)
    pool = ServerPool(spec, instances=instances, log_path=store.server_log, tool_timeout=config.tool_timeout,
                      connect_timeout=config.connect_timeout)
    async with _connected(pool) as opened:
        yield opened


@contextlib.asynccontextmanager
async def _context(config: EvalConfig, store: RunStore) -> AsyncIterator[Context]:
    try:
        specs = context_specs(config.mcp_config, config.context, config.context_servers, headers=config.headers)
    except ContextError as exc:
        raise RunError(str(exc)) from None
    async with _connected(open_context(specs, log_dir=store.dir, tool_timeout=config.tool_timeout,
                                       connect_timeout=config.connect_timeout)) as context:
        yield context


@contextlib.asynccontextmanager
async def _connected(manager: contextlib.AbstractAsyncContextManager[T]) -> AsyncIterator[T]:
    """Enter `manager` (server connections), a ServerError while connecting becoming a RunError; errors raised
    later, inside the run, pass through unchanged."""
    try:
        value = await manager.__aenter__()
    except ServerError as exc:
        raise RunError(str(exc)) from None
    try:
        yield value
    finally:
        await manager.__aexit__(None, None, None)


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


def _load_models(config: EvalConfig, providers: Providers) -> list[AgentModel]:
    try:
        return load_models(config.models, providers)
    except (ModelSpecError, ModelAccessError, RecordingError) as exc:
        raise RunError(str(exc)) from None


def _prices(config: EvalConfig) -> PriceTable:
    """The run's price table (--prices over the built-in one); a bad file is a RunError naming it."""
    try:
        return load_prices(Path(config.prices)) if config.prices else PriceTable.default()
    except PriceError as exc:
        raise RunError(str(exc)) from None


def _budget(config: EvalConfig, store: RunStore, table: PriceTable) -> Budget | None:
    """The run's --max-usd budget, counting what its stored episodes cost."""
    if config.max_usd is None:
        return None
    stored = ((e.model, e.data.get("usage") or {}, e.data.get("batch") is True) for e in store.episodes())
    return Budget.for_run(config.max_usd, table, stored)


def _announce(costing: Costing, config: Any, store: RunStore, taskset: TaskSet, tools: Sequence[ToolDef],
              prices: PriceTable, budget: Budget | None, *, in_context: bool) -> None:
    """Make the run's cost estimate, keep it (meta `estimate`) and hand it to `costing.announce` with what the run
    has already spent (a resumed run's stored episodes)."""
    shape = earlier_shape(store.dir.parent, config.server, skip=store.run_id) or DEFAULT_SHAPE
    found = estimate(costing.plan(config, taskset, in_context), shape, prices,
                     definition_tokens=sum(tool_tokens(t) for t in tools),
                     system_tokens=estimate_tokens(system_prompt(config.system_prompt)),
                     evidence_tokens=int(getattr(config, "evidence_tokens", 12_000)),
                     candidates=int(getattr(config, "candidates", 4)))
    store.set_meta("estimate", found.to_json())
    if costing.announce is not None:
        spent = budget.spent if budget is not None else sum(
            prices.usd(e.model, e.data.get("usage") or {}, batch=e.data.get("batch") is True) or 0.0
            for e in store.episodes())
        costing.announce(found, spent, config)


async def _check_access(models: Sequence[AgentModel]) -> None:
    """Ask each real provider, for free, whether the key and the model name work, before any episode."""
    for model in models:
        try:
            await model.check_access()
        except ModelAccessError as exc:
            raise RunError(f"{model.id}: {exc}") from None
        except ModelUnavailable as exc:
            raise RunError(f"{model.id}: the API is not answering ({exc}); nothing was run") from None


_COMMANDS = {"EvalConfig": "optimizer eval", "OptimizeConfig": "optimize", "RegressConfig": "optimizer regress"}


def _check_settings(config: EvalConfig) -> None:
    """Settings that can be checked before anything is spent (today: the search's storage URL)."""
    storage = getattr(config, "storage", None)
    if storage:
        try:
            check_storage(storage)
        except SearchError as exc:
            raise RunError(f"--storage: {exc}") from None


def _safety(catalog: Catalog, config: EvalConfig) -> list[str]:
    destructive = catalog.hinted("destructiveHint")
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


def episode_config(config: EvalConfig, catalog: Catalog) -> EpisodeConfig:
    blocked = () if config.allow_destructive else tuple(catalog.hinted("destructiveHint"))
    return EpisodeConfig(system_prompt=system_prompt(config.system_prompt), max_turns=config.max_turns,
                         blocked_tools=blocked)


def system_prompt(own: str | None) -> str:
    """The agent's system prompt: the deployment's own (verbatim) first, then how to work and report."""
    ours = load_prompt("agent_system")
    return f"{own.strip()}\n\n{ours}" if own and own.strip() else ours
