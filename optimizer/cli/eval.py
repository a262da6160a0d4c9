"""`optimizer eval`: run the tasks against a server's tools and report accuracy per model and split."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from optimizer.cli.common import (
    BatchOpt,
    HeaderOpt,
    JudgeOpt,
    MaxUsdOpt,
    OpenAIBaseUrlOpt,
    OverlayOpt,
    PricesOpt,
    ServerOpt,
    SystemPromptOpt,
    ThinkingOpt,
    err,
    exits_on_errors,
    fail,
    out,
    parse_headers,
    read_system_prompt,
    resume_overrides,
)
from optimizer.cli.views import EvalProgress, print_eval
from optimizer.config import EvalConfig, RunError
from optimizer.evaluation import run_eval
from optimizer.models import OFFLINE_DEFAULT, parse_models
from optimizer.models.base import ModelSpecError


def eval_command(
    server: ServerOpt = None,
    tasks: Annotated[Path | None, typer.Option("--tasks", help="Task file or directory (YAML, JSONL, XML).")] = None,
    models: Annotated[str, typer.Option("--models", help="Comma-separated models: claude-haiku-5-5,claude-sonnet-5-5 "
                                        "(needs ANTHROPIC_API_KEY; ANTHROPIC_BASE_URL is honoured) or the offline "
                                        "stand-ins sim:lexical,sim:skim (options ?seed=N&noise=0.2&latency_ms=50).")]
    = ",".join(OFFLINE_DEFAULT),
    overlay: OverlayOpt = None,
    epochs: Annotated[int, typer.Option("--epochs", min=1, help="Runs of each task per model.")] = 1,
    heldout: Annotated[float, typer.Option("--heldout", min=0, max=1,
                                           help="Share of tasks held out when a task sets no split.")] = 0.3,
    seed: Annotated[int, typer.Option("--seed", help="Seed for every random choice (offline noise).")] = 0,
    max_connections: Annotated[int, typer.Option("--max-connections", min=1,
                                                 help="Concurrent model requests.")] = 4,
    server_instances: Annotated[int | None, typer.Option("--server-instances", min=1,
                                help="Server connections kept open (default min(4, max-connections)).")] = None,
    tool_timeout: Annotated[float, typer.Option("--tool-timeout", help="Seconds before a tool call is abandoned.")]
    = 60.0,
    max_turns: Annotated[int, typer.Option("--max-turns", min=1, help="Model turns per task.")] = 12,
    allow_destructive: Annotated[bool, typer.Option("--allow-destructive",
                                 help="Let agents call tools annotated destructiveHint: true.")] = False,
    runs_dir: Annotated[Path, typer.Option("--runs-dir", help="Where run directories go.")] = Path("runs"),
    run_id: Annotated[str | None, typer.Option("--run-id", help="Name the new run (default: a timestamp).")] = None,
    resume: Annotated[str | None, typer.Option("--resume", help="Finish an interrupted run; finished episodes "
                                               "are not repeated.")] = None,
    header: HeaderOpt = None,
    thinking: ThinkingOpt = None,
    openai_base_url: OpenAIBaseUrlOpt = None,
    batch: BatchOpt = False,
    system_prompt: SystemPromptOpt = None,
    max_usd: MaxUsdOpt = None,
    prices: PricesOpt = None,
    judge: JudgeOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON on stdout.")] = False,
) -> None:
    """Run the eval tasks against a server's tools with one or more agents, and report accuracy per
    model and split, the tool-selection confusion matrix, and where the transcripts are."""
    if resume and run_id:
        raise fail("give either --run-id (a new run) or --resume (an existing one), not both")
    config = None
    if server is not None or tasks is not None or not resume:
        if server is None or tasks is None:
            raise fail("--server and --tasks are required (or --resume RUN_ID alone to finish a run)")
        try:
            config = EvalConfig(
                server=server, tasks=str(tasks), models=tuple(parse_models(models)),
                overlay=str(overlay) if overlay else None, epochs=epochs, heldout=heldout, seed=seed,
                max_connections=max_connections, server_instances=server_instances, tool_timeout=tool_timeout,
                max_turns=max_turns, allow_destructive=allow_destructive, headers=parse_headers(header),
                thinking=thinking, openai_base_url=openai_base_url, batch=batch,
                system_prompt=read_system_prompt(system_prompt),
                max_usd=max_usd, prices=str(prices) if prices else None, judge=judge,
            )
        except ModelSpecError as exc:
            raise fail(str(exc)) from None
    progress = EvalProgress(err, enabled=not as_json or err.is_terminal)
    with exits_on_errors(RunError), progress:
        report = asyncio.run(run_eval(config, runs_dir=runs_dir, run_id=run_id, resume=resume,
                                      progress=progress.advance, on_start=progress.start,
                                      overrides=resume_overrides(max_usd, prices)))
    for notice in report["notices"]:
        err.print(f"[yellow]note:[/] {notice}", soft_wrap=True)
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2, sort_keys=True) + "\n")
    else:
        print_eval(out, report)
