"""`optimizer regress`: the cross-model release gate for CI.

Exit codes: 0 no model regressed; 1 a model regressed (accuracy dropped significantly at --alpha after
Holm's correction across models, or by more than --max-drop when given); 2 usage or operational error."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from optimizer.cli.common import (
    BatchOpt,
    OpenAIBaseUrlOpt,
    SystemPromptOpt,
    ThinkingOpt,
    err,
    exits_on_errors,
    out,
    read_system_prompt,
)
from optimizer.cli.views import OFFLINE_LABEL, EvalProgress
from optimizer.config import RunError
from optimizer.models import parse_models
from optimizer.models.base import ModelSpecError
from optimizer.regress import RegressConfig, run_regress
from optimizer.regress.outputs import check_outputs, markdown, write


def regress_command(
    server: Annotated[str | None, typer.Option("--server", help="MCP server (the new version): command line or "
                                               "http(s)://…/mcp URL.")] = None,
    tasks: Annotated[Path | None, typer.Option("--tasks", help="Task file or directory.")] = None,
    models: Annotated[str | None, typer.Option("--models", help="Comma-separated models, e.g. "
                                               "claude-haiku-5-5,claude-sonnet-5-5 or sim:lexical,sim:skim.")] = None,
    candidate: Annotated[Path | None, typer.Option("--candidate", help="Overlay with the new definitions (omit to "
                                                   "compare the server's own definitions).")] = None,
    baseline: Annotated[str, typer.Option("--baseline", help="'original' (the server's definitions) or an overlay "
                                          "file.")] = "original",
    baseline_server: Annotated[str | None, typer.Option("--baseline-server", help="The old server version to "
                                                        "compare against, on the same tasks.")] = None,
    split: Annotated[str, typer.Option("--split", help="heldout, train or all.")] = "heldout",
    epochs: Annotated[int, typer.Option("--epochs", min=1, help="Runs per task; more than one uses a bootstrap "
                                        "clustered by task and reports pass^k.")] = 1,
    max_drop: Annotated[float | None, typer.Option("--max-drop", min=0, max=1, help="Also fail on any accuracy "
                                                   "drop larger than this (0.05 = 5 points), significant or not. "
                                                   "Default: only significant drops fail.")] = None,
    alpha: Annotated[float, typer.Option("--alpha", help="Significance level, Holm-adjusted across models.")] = 0.05,
    outputs: Annotated[list[Path] | None, typer.Option("-o", "--output", help="Write the verdict: FILE.json, "
                                                       "FILE.junit.xml or FILE.md (repeatable).")] = None,
    heldout: Annotated[float, typer.Option("--heldout", min=0, max=1, help="Held-out share.")] = 0.3,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    max_connections: Annotated[int, typer.Option("--max-connections", min=1)] = 4,
    allow_destructive: Annotated[bool, typer.Option("--allow-destructive")] = False,
    thinking: ThinkingOpt = None,
    openai_base_url: OpenAIBaseUrlOpt = None,
    batch: BatchOpt = False,
    system_prompt: SystemPromptOpt = None,
    runs_dir: Annotated[Path, typer.Option("--runs-dir")] = Path("runs"),
    run_id: Annotated[str | None, typer.Option("--run-id")] = None,
    resume: Annotated[str | None, typer.Option("--resume", help="Finish an interrupted regress run.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the verdict as JSON on stdout.")] = False,
) -> None:
    """Compare new definitions (--candidate) or a new server version against the baseline, per model, paired
    per task on the same tasks. Exit 0 pass, 1 regression, 2 error. With GITHUB_STEP_SUMMARY set, the Markdown
    table is appended there too."""
    config = None
    with exits_on_errors(RunError, ModelSpecError, ValueError, OSError):
        check_outputs(outputs or [])
        if not resume or server or tasks:
            if server is None or tasks is None or models is None:
                raise RunError("--server, --tasks and --models are required (or --resume RUN_ID alone)")
            if split not in ("heldout", "train", "all"):
                raise RunError(f"--split must be heldout, train or all, not {split!r}")
            config = RegressConfig(
                server=server, tasks=str(tasks), models=tuple(parse_models(models)),
                candidate=str(candidate) if candidate else "original", baseline=baseline,
                baseline_server=baseline_server, split=split, epochs=epochs, max_drop=max_drop, alpha=alpha,
                heldout=heldout, seed=seed, max_connections=max_connections, allow_destructive=allow_destructive,
                thinking=thinking, openai_base_url=openai_base_url, batch=batch,
                system_prompt=read_system_prompt(system_prompt),
            )
        progress = EvalProgress(err, enabled=not as_json or err.is_terminal)
        with progress:
            report = asyncio.run(run_regress(config, runs_dir=runs_dir, run_id=run_id, resume=resume,
                                             progress=progress.advance, on_start=progress.start))
        for path in outputs or []:
            write(path, report)
        summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary_file:
            with open(summary_file, "a", encoding="utf-8") as handle:
                handle.write(markdown(report) + "\n")
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2, sort_keys=True) + "\n")
    else:
        _print(report)
    raise typer.Exit(0 if report["passed"] else 1)


def _print(report: dict[str, Any]) -> None:
    if report["offline"]:
        out.print(f"[bold yellow]{OFFLINE_LABEL}[/]")
    table = Table(title=f"regress {report['run_id']} — {report['split']} tasks, {report['epochs']} epoch(s)")
    for column in ("model", "tasks", "before", "after", "change", "p (Holm)", "flipped down", "verdict"):
        table.add_column(column)
    for model, r in report["results"].items():
        table.add_row(model, str(r["n_tasks"]), f"{r['before']:.0%}", f"{r['after']:.0%}", f"{r['delta']:+.0%}",
                      f"{r.get('p_holm', 1.0):.3g}", ", ".join(r["flipped_down"]) or "–",
                      "pass" if r["passed"] else f"[bold red]FAIL[/] {r['reason']}")
    out.print(table)
    out.print("[bold green]PASSED[/]" if report["passed"] else "[bold red]REGRESSION[/]")
