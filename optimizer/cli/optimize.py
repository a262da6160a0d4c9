"""`optimize` (and `optimizer optimize`): propose, search, select and write the patch."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from optimizer.cli.common import err, exits_on_errors, out, resume_overrides, run_job
from optimizer.cli.costs import DryRun, dry_run_exit, on_estimate
from optimizer.cli.options import config_options, option, run_options, with_options
from optimizer.cli.settings import build_config, models_option
from optimizer.cli.views import EvalProgress
from optimizer.gate import change_text, power_text, underpowered_note
from optimizer.models import CLAUDE_PROPOSER, CLAUDE_TASK_MODELS, banners, parse_models
from optimizer.models.base import ModelSpecError
from optimizer.optimize import OptimizeConfig, default_models, default_proposer, run_optimize
from optimizer.optimize.report_learning import refused_text, shipped_lines
from optimizer.run.config import RunError
from optimizer.stats.efficiency import cost_change
from optimizer.text.tokens import points

CHOICE_OPTIONS = [
    models_option(None, "Comma-separated models (default: Claude when ANTHROPIC_API_KEY is set; --offline for "
                  "the readers reader:bm25,reader:embed)."),
    option("offline", bool, False, ["--offline"], "Offline readers (tool search and an embedding router: they "
           "measure findability, not agent accuracy) and the rules proposer; no API calls. Results are labelled "
           "OFFLINE."),
    option("proposer", str | None, None, ["--proposer"], "Who writes candidates: a Claude model (default "
           "claude-opus-5-5 when ANTHROPIC_API_KEY is set) or rules (offline, deterministic)."),
]


@with_options(config_options(OptimizeConfig, skip={"models", "proposer", "split"}), CHOICE_OPTIONS,
              run_options("optimize"))
def optimize_command(**options: Any) -> None:
    """Find better tool definitions: baseline, rounds of propose and search on the train tasks, then the
    winner against the baseline on held-out tasks for every model (the gate). Writes summary.json,
    report.md, overlay.json and winning.patch into the run directory. Exit 0 when the gate passes,
    1 when it fails, 2 on errors."""
    resume, as_json, dry_run = options["resume"], options["as_json"], options["dry_run"]
    config = None
    with exits_on_errors(RunError, ModelSpecError, ValueError):
        if not resume or options["server"] or options["tasks"]:
            if options["server"] is None or options["tasks"] is None:
                raise RunError("--server and --tasks are required (or --resume RUN_ID alone)")
            offline = options["offline"]
            replay = str(options["replay"]) if options["replay"] else None
            models = parse_models(options["models"]) if options["models"] else None
            if dry_run and not (models or offline or replay or os.environ.get("ANTHROPIC_API_KEY")):
                models, options["proposer"] = list(CLAUDE_TASK_MODELS), options["proposer"] or CLAUDE_PROPOSER
            chosen = default_models(offline=offline, models=models, replay=replay)
            proposer = default_proposer(offline=offline, proposer=options["proposer"], replay=replay)
            config = build_config(OptimizeConfig, {**options, "models": ",".join(chosen), "proposer": proposer})
        progress = EvalProgress(err, enabled=(not as_json or err.is_terminal) and not dry_run)
        with progress:
            try:
                data = run_job(run_optimize(config, runs_dir=options["runs_dir"], run_id=options["run_id"],
                                            resume=resume, progress=progress.advance,
                                            overrides=resume_overrides(options["max_usd"], options["prices"]),
                                            on_start=lambda run: progress.start(run, 0), on_stage=progress.stage,
                                            on_estimate=on_estimate(err, dry_run=dry_run, as_json=as_json)))
            except DryRun as stop:
                raise dry_run_exit(stop, out, as_json=as_json) from None
    if as_json:
        sys.stdout.write(json.dumps(data, indent=2, sort_keys=True) + "\n")
    else:
        print_summary(out, data)
    raise typer.Exit(0 if data["gate"]["passed"] else 1)


def print_summary(console: Console, data: dict[str, Any]) -> None:
    for banner in banners(data):
        console.print(f"[bold yellow]{escape(banner)}[/]", soft_wrap=True)
    table = Table(title=f"optimize {data['run_id']} — baseline → winner")
    for column in ("model", "split", "baseline", "winner", "change", "calls/task", "failed calls/task"):
        table.add_column(column, justify="left" if column in ("model", "split") else "right")
    for model in data["models"]:
        for split in ("train", "heldout"):
            b, w = data["baseline"][split][model], data["winner"][split][model]
            table.add_row(model, split, f"{b['passed']}/{b['n']}", f"{w['passed']}/{w['n']}",
                          points(w['accuracy'] - b['accuracy']), cost_change(b, w, "calls_per_task"),
                          cost_change(b, w, "failed_calls_per_task"))
    console.print(table)
    gate = data["gate"]
    verdict = "[green]PASSED[/]" if gate["passed"] else "[red]FAILED[/]"
    console.print(f"gate: {verdict}  " + ", ".join(
        f"{m} {points(v['delta'])}, {change_text(v, gate['alpha'])} (Holm p={v['p_holm']:.3g}; "
        f"{escape(power_text(v))}; {v['verdict']})"
        for m, v in gate["models"].items()))
    note = underpowered_note(gate["models"])
    if note:
        console.print(f"[yellow]{escape(note)}[/]", soft_wrap=True)
    stalled = any(data["winner"]["heldout"][m]["accuracy"] <= data["baseline"]["heldout"][m]["accuracy"]
                  for m in data["models"])
    for sentence in data["diagnosis"]["heldout_winner"]["sentences"] if stalled else []:
        console.print(f"why: {sentence}", soft_wrap=True)
    tokens = data["definition_tokens"]
    saved = tokens.get("saved_per_1000_requests", 0)
    per_thousand = f" ({abs(saved):,} {'saved' if saved >= 0 else 'added'} per 1,000 requests)" if saved else ""
    console.print(f"definition tokens {tokens['baseline']} → {tokens['winner']}{per_thousand}; goal: "
                  f"{data.get('goal', 'accuracy')}")
    console.print(f"rounds: {len(data['rounds'])} (--rounds {data['rounds_setting']}); stopped: "
                  f"{escape(data['stop_reason'])}; refused calls left: {escape(refused_text(data['refused_left']))}",
                  soft_wrap=True)
    for line in shipped_lines(data):
        console.print(f"[bold]{escape(line)}[/]", soft_wrap=True)
    if data["state"]["note"]:
        console.print(f"state: {escape(data['state']['note'])}", soft_wrap=True)
    run_dir = data["run_dir"]
    if data.get("source_patch"):
        sp = data["source_patch"]
        console.print(f"source patch: {sp['path']} ({len(sp['changed'])} tool(s) placed, {len(sp['unlocated'])} "
                      "field(s) not located — listed in report.md)")
    console.print(f"review: {run_dir}/report.md · patch: {run_dir}/winning.patch · overlay: {run_dir}/overlay.json"
                  f" · summary: {run_dir}/summary.json")
    console.print(f"decide what ships: optimizer review {run_dir}")
    console.print(f"report: {data['report_html']}")
