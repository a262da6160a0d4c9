"""`optimize` (and `optimizer optimize`): propose, search, select and write the patch."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from optimizer.cli.common import (
    BatchOpt,
    JudgeOpt,
    MaxUsdOpt,
    OpenAIBaseUrlOpt,
    PricesOpt,
    SystemPromptOpt,
    ThinkingOpt,
    err,
    exits_on_errors,
    out,
    read_system_prompt,
    resume_overrides,
)
from optimizer.cli.views import OFFLINE_LABEL, EvalProgress
from optimizer.config import RunError
from optimizer.models import parse_models
from optimizer.models.base import ModelSpecError
from optimizer.optimize import OptimizeConfig, default_models, default_proposer, run_optimize


def optimize_command(
    server: Annotated[str | None, typer.Option("--server", help="MCP server command line or http(s)://…/mcp URL.")]
    = None,
    tasks: Annotated[Path | None, typer.Option("--tasks", help="Task file or directory.")] = None,
    models: Annotated[str | None, typer.Option("--models", help="Comma-separated models (default: Claude when "
                                               "ANTHROPIC_API_KEY is set; --offline for sim:lexical,sim:skim).")]
    = None,
    offline: Annotated[bool, typer.Option("--offline", help="Simulated agents and the rules proposer; no API "
                                          "calls. Results are labelled OFFLINE.")] = False,
    overlay: Annotated[Path | None, typer.Option("--overlay", help="Start from these definitions.")] = None,
    rounds: Annotated[int, typer.Option("--rounds", min=1, help="Rounds of propose and search.")] = 2,
    trials: Annotated[int, typer.Option("--trials", min=1, help="Search trials per round.")] = 12,
    candidates: Annotated[int, typer.Option("--candidates", min=1, help="Candidates proposed per round.")] = 4,
    max_episodes: Annotated[int | None, typer.Option("--max-episodes", min=1, help="Stop proposing after this "
                                                     "many episodes.")] = None,
    objective: Annotated[str, typer.Option("--objective", help="mean: mean train accuracy over models; min: the "
                                           "worst model's.")] = "mean",
    pareto: Annotated[bool, typer.Option("--pareto", help="Search accuracy against definition tokens and "
                                         "report the front.")] = False,
    epochs: Annotated[int, typer.Option("--epochs", min=1, help="Held-out runs per task for the gate.")] = 1,
    heldout: Annotated[float, typer.Option("--heldout", min=0, max=1, help="Held-out share.")] = 0.3,
    max_drop: Annotated[float, typer.Option("--max-drop", min=0, max=1, help="Largest held-out drop per model "
                                            "the gate allows.")] = 0.0,
    alpha: Annotated[float, typer.Option("--alpha", help="Significance level of the gate.")] = 0.05,
    proposer: Annotated[str | None, typer.Option("--proposer", help="Who writes candidates: a Claude model "
                                                 "(default claude-opus-5-5 when ANTHROPIC_API_KEY is set) or "
                                                 "rules (offline, deterministic).")] = None,
    allow_leakage: Annotated[bool, typer.Option("--allow-leakage", help="Keep candidates that copy text from "
                                                "train prompts.")] = False,
    storage: Annotated[str | None, typer.Option("--storage", help="Optuna storage URL (default: the run's "
                                                "SQLite file).")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed for the search and the offline agents.")] = 0,
    max_connections: Annotated[int, typer.Option("--max-connections", min=1)] = 4,
    tool_timeout: Annotated[float, typer.Option("--tool-timeout")] = 60.0,
    allow_destructive: Annotated[bool, typer.Option("--allow-destructive")] = False,
    runs_dir: Annotated[Path, typer.Option("--runs-dir")] = Path("runs"),
    run_id: Annotated[str | None, typer.Option("--run-id")] = None,
    resume: Annotated[str | None, typer.Option("--resume", help="Continue an interrupted run.")] = None,
    source: Annotated[Path | None, typer.Option("--source", help="The server's source directory: also write "
                                                "source.patch, the winner's texts rewritten where they stand in "
                                                "the code (for git apply).")] = None,
    thinking: ThinkingOpt = None,
    openai_base_url: OpenAIBaseUrlOpt = None,
    batch: BatchOpt = False,
    system_prompt: SystemPromptOpt = None,
    max_usd: MaxUsdOpt = None,
    prices: PricesOpt = None,
    judge: JudgeOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print summary.json on stdout.")] = False,
) -> None:
    """Find better tool definitions: baseline, rounds of propose and search on the train tasks, then the
    winner against the baseline on held-out tasks for every model (the gate). Writes summary.json,
    report.md, overlay.json and winning.patch into the run directory. Exit 0 when the gate passes,
    1 when it fails, 2 on errors."""
    config = None
    with exits_on_errors(RunError, ModelSpecError, ValueError):
        if not resume or server or tasks:
            if server is None or tasks is None:
                raise RunError("--server and --tasks are required (or --resume RUN_ID alone)")
            chosen = default_models(offline=offline, models=parse_models(models) if models else None)
            config = OptimizeConfig(
                server=server, tasks=str(tasks), models=chosen, overlay=str(overlay) if overlay else None,
                epochs=epochs, heldout=heldout, seed=seed, max_connections=max_connections,
                tool_timeout=tool_timeout, allow_destructive=allow_destructive, rounds=rounds, trials=trials,
                candidates=candidates, max_episodes=max_episodes, objective=objective, pareto=pareto,
                max_drop=max_drop, alpha=alpha, proposer=default_proposer(offline=offline, proposer=proposer),
                allow_leakage=allow_leakage, storage=storage, thinking=thinking, batch=batch,
                openai_base_url=openai_base_url,
                system_prompt=read_system_prompt(system_prompt), max_usd=max_usd,
                prices=str(prices) if prices else None, judge=judge, source=_source_dir(source),
            )
        progress = EvalProgress(err, enabled=not as_json or err.is_terminal)
        with progress:
            data = asyncio.run(run_optimize(config, runs_dir=runs_dir, run_id=run_id, resume=resume,
                                            progress=progress.advance, overrides=resume_overrides(max_usd, prices),
                                            on_start=lambda run: progress.start(run, 0)))
    if as_json:
        sys.stdout.write(json.dumps(data, indent=2, sort_keys=True) + "\n")
    else:
        print_summary(out, data)
    raise typer.Exit(0 if data["gate"]["passed"] else 1)


def _source_dir(path: Path | None) -> str | None:
    if path is None:
        return None
    if not path.is_dir():
        raise RunError(f"--source {path}: not a directory")
    return str(path.resolve())


def print_summary(console: Console, data: dict[str, Any]) -> None:
    if data["offline"]:
        console.print(f"[bold yellow]{OFFLINE_LABEL}[/]")
    table = Table(title=f"optimize {data['run_id']} — baseline → winner")
    for column in ("model", "split", "baseline", "winner", "change"):
        table.add_column(column, justify="left" if column in ("model", "split") else "right")
    for model in data["models"]:
        for split in ("train", "heldout"):
            b, w = data["baseline"][split][model], data["winner"][split][model]
            table.add_row(model, split, f"{b['passed']}/{b['n']}", f"{w['passed']}/{w['n']}",
                          f"{w['accuracy'] - b['accuracy']:+.0%}")
    console.print(table)
    gate = data["gate"]
    verdict = "[green]PASSED[/]" if gate["passed"] else "[red]FAILED[/]"
    console.print(f"gate: {verdict}  " + ", ".join(
        f"{m} {v['delta']:+.0%} (p={v['p_value']:.3g})" for m, v in gate["models"].items()))
    tokens = data["definition_tokens"]
    console.print(f"definition tokens {tokens['baseline']} → {tokens['winner']}; stopped: {data['stop_reason']}")
    run_dir = data["run_dir"]
    if data.get("source_patch"):
        sp = data["source_patch"]
        console.print(f"source patch: {sp['path']} ({len(sp['changed'])} tool(s) placed, {len(sp['unlocated'])} "
                      "field(s) not located — listed in report.md)")
    console.print(f"review: {run_dir}/report.md · patch: {run_dir}/winning.patch · overlay: {run_dir}/overlay.json"
                  f" · summary: {run_dir}/summary.json")
