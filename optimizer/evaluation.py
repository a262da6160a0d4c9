"""The library behind `optimizer eval`: run (or resume) every task with every model and write `eval.json`
and the transcripts into the run directory."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from optimizer.cost.estimate import Estimate, Plan, eval_plan, judged
from optimizer.models.base import AgentModel
from optimizer.models.reader import ToolRanker
from optimizer.models.tape import keep_outcome
from optimizer.run.config import EvalConfig
from optimizer.run.context import SEPARATOR
from optimizer.run.evaluate import EvalResult, Outcome, Progress, first_tool_confusion, search_recall, unfound_queries
from optimizer.run.harness import Costing, Harness, open_harness
from optimizer.scoring import accuracy_table
from optimizer.servers.leases import state_report
from optimizer.stats.efficiency import efficiency_table
from optimizer.tasks import TaskSet


async def run_eval(
    config: EvalConfig | None, *, runs_dir: Path, run_id: str | None = None, resume: str | None = None,
    progress: Progress | None = None, on_start: Callable[[Harness[EvalConfig], int], None] | None = None,
    overrides: dict[str, Any] | None = None, on_estimate: Callable[[Estimate, float, Any], None] | None = None,
) -> dict[str, Any]:
    """Run (or resume) an eval and return the report that `--json` prints. `on_estimate` hears the cost estimate
    before the first paid request (and may stop the run)."""
    async with open_harness(config, EvalConfig, runs_dir=runs_dir, run_id=run_id, resume=resume,
                            overrides=overrides, progress=progress, costing=Costing(planned, on_estimate)) as run:
        tasks = run.taskset.split(run.config.split)
        if on_start is not None:
            on_start(run, len(tasks) * len(run.models) * run.config.epochs * (2 if run.context else 1))
        result = await run.evaluate(run.candidate, tasks, epochs=run.config.epochs)
        report = eval_report(run, result)
        if run.context:  # the same run without the context servers, to show what standing beside them costs
            alone = await run.evaluate(run.candidate, tasks, epochs=run.config.epochs, alone=True)
            report["alone"] = {"results": _accuracy(alone), "confusion": _confusion(run, alone)}
            report["episodes"] = {k: report["episodes"][k] + getattr(alone, k) for k in report["episodes"]}
        run.store.write_json("eval.json", report)
        keep_outcome(run.config.record, report)
        run.store.export_transcripts()
        return report


def planned(config: EvalConfig, taskset: TaskSet, in_context: bool) -> Plan:
    """What the eval will play (for its cost estimate): the split once, and alone too beside context servers."""
    tasks = taskset.split(config.split)
    judge, graded = judged(config.judge, config.models, tasks)
    return eval_plan("eval", config.models, tasks=len(tasks), epochs=config.epochs,
                     sides=("eval", "alone") if in_context else ("eval",), judge=judge, judged=graded)


def eval_report(run: Harness[Any], result: EvalResult) -> dict[str, Any]:
    return {
        "run_id": run.store.run_id,
        "run_dir": str(run.store.dir),
        "server": run.pool.spec.display,
        "offline": run.offline,
        "replay": run.providers.replaying,
        "models": run.model_ids,
        "candidate": result.candidate,
        "splits": run.taskset.counts(),
        "results": _accuracy(result),
        "confusion": _confusion(run, result),
        "context": run.context.names,
        "client_naming": run.config.client_naming,
        "cross_server": cross_server(result.outcomes),
        **({"readers": reading_recall(run.models, result.outcomes)} if any(isinstance(m, ToolRanker)
                                                                          for m in run.models) else {}),
        **({"tool_search": run.config.tool_search, "search": search_recall(result.outcomes),
            "unfound": unfound_queries(result.episodes)} if run.config.tool_search != "off" else {}),
        "episodes": {"run": result.run, "cached": result.cached, "infra_errors": result.infra_errors,
                     "infra_retried": result.infra_retried, "changed_state": result.changed_state},
        "state": state_report(result.changed_state, result.run, isolate=run.config.isolate),
        "server_restarts": run.pool.restarts,
        "notices": run.notices,
        "estimate": run.store.get_meta("estimate"),
    }


def reading_recall(models: Sequence[AgentModel], outcomes: Sequence[Outcome]) -> dict[str, dict[str, Any]]:
    """Per reader, over tasks that expect a tool: in how many its top five held the first expected tool (`found`),
    of how many (`n`), and the share (`recall`, recall at 5)."""
    readers = {m.id for m in models if isinstance(m, ToolRanker)}
    return {model: row for model, row in search_recall(outcomes).items() if model in readers}


def _accuracy(result: EvalResult) -> dict[str, Any]:
    """{model: {split: accuracy cell and efficiency figures}}: pass rates and what the episodes paid, side by side."""
    table: dict[str, Any] = accuracy_table((o.model, o.split, o.passed) for o in result.outcomes)
    costs = efficiency_table((o.model, o.split, o.cost) for o in result.outcomes)
    return {model: {split: {**cell, **costs[model][split]} for split, cell in splits.items()}
            for model, splits in table.items()}


def _confusion(run: Harness[Any], result: EvalResult) -> dict[str, Any]:
    return {model: first_tool_confusion(result.outcomes, model) for model in run.model_ids}


def cross_server(outcomes: Sequence[Outcome]) -> list[dict[str, Any]]:
    """Episodes whose first call went to a context server's tool (`<server>:<tool>`) where a tool of the server
    under test was expected: per model, expected tool and chosen tool, how many, most first."""
    counts = Counter((o.model, o.expected_first, o.chosen_first) for o in outcomes
                     if o.expected_first and o.chosen_first and SEPARATOR in o.chosen_first)
    return [{"model": m, "expected": e, "chosen": c, "count": n}
            for (m, e, c), n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]

