"""`optimizer regress`: the cross-model release gate for CI."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from optimizer.cli.common import err, exits_on_errors, out, run_job
from optimizer.cli.costs import DryRun, dry_run_exit, on_estimate
from optimizer.cli.options import config_options, option, run_options, with_options
from optimizer.cli.settings import MODELS_HELP, build_config, models_option
from optimizer.cli.views import EvalProgress
from optimizer.gate import power_text, underpowered_note, verdict_text
from optimizer.models import OFFLINE_DEFAULT, banners, offline_spec
from optimizer.models.base import ModelSpecError
from optimizer.regress import RegressConfig, run_regress
from optimizer.regress.outputs import check_outputs, markdown, write
from optimizer.run.config import RunError
from optimizer.stats.call_change import call_change_text, calls_cell
from optimizer.text.tokens import points

REGRESS_OPTIONS = [
    models_option(None, MODELS_HELP),
    option("offline", bool, False, ["--offline"], "Only offline models (the readers reader:bm25,reader:embed unless "
           "--models names other reader: models); no API calls. Results are labelled OFFLINE."),
    option("outputs", list[Path] | None, None, ["-o", "--output"], "Write the verdict: FILE.json, FILE.junit.xml or "
           "FILE.md (repeatable).", env=False),
]


@with_options(config_options(RegressConfig, skip={"models", "overlay"}), REGRESS_OPTIONS, run_options("regress"))
def regress_command(**options: Any) -> None:
    """Compare new definitions (--candidate) or a new server version against the baseline, per model, paired
    per task on the same tasks. Exit 0 pass, 1 regression, 2 error. With GITHUB_STEP_SUMMARY set, the Markdown
    table is appended there too."""
    resume, as_json, outputs = options["resume"], options["as_json"], options["outputs"]
    config = None
    with exits_on_errors(RunError, ModelSpecError, ValueError, OSError):
        check_outputs(outputs or [])
        if not resume or options["server"] or options["tasks"]:
            if options["offline"]:
                options["models"] = options["models"] or ",".join(OFFLINE_DEFAULT)
                if not all(offline_spec(m) for m in options["models"].split(",")):
                    raise RunError("--offline runs only offline readers (reader:…); "
                                   "drop --offline or the other --models")
            if options["server"] is None or options["tasks"] is None or options["models"] is None:
                raise RunError("--server, --tasks and --models (or --offline) are required (or --resume RUN_ID "
                               "alone)")
            config = build_config(RegressConfig, options)
        progress = EvalProgress(err, enabled=(not as_json or err.is_terminal) and not options["dry_run"])
        with progress:
            try:
                report = run_job(run_regress(config, runs_dir=options["runs_dir"], run_id=options["run_id"],
                                             resume=resume, progress=progress.advance, on_start=progress.start,
                                             on_estimate=on_estimate(err, dry_run=options["dry_run"],
                                                                     as_json=as_json)))
            except DryRun as stop:
                raise dry_run_exit(stop, out, as_json=as_json) from None
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
    for banner in banners(report):
        out.print(f"[bold yellow]{escape(banner)}[/]", soft_wrap=True)
    table = Table(title=f"regress {report['run_id']} — {report['split']} tasks, {report['epochs']} epoch(s)")
    for column in ("model", "tasks", "before", "after", "change", "p (Holm)", "can see", "failed calls/task",
                   "flipped down", "verdict"):
        table.add_column(column)
    for model, r in report["results"].items():
        verdict = escape(verdict_text(r))
        table.add_row(model, str(r["n_tasks"]), f"{r['before']:.0%}", f"{r['after']:.0%}", points(r['delta']),
                      f"{r.get('p_holm', 1.0):.3g}", escape(power_text(r)), calls_cell(r.get("failed_calls")),
                      ", ".join(r["flipped_down"]) or "–", f"[bold red]{verdict}[/]" if not r["passed"] else verdict)
    out.print(table)
    for model, r in report["results"].items():
        out.print(f"{escape(model)}: {escape(call_change_text(r.get('failed_calls')))}", soft_wrap=True)
    note = underpowered_note(report["results"])
    if note:
        out.print(f"[yellow]{escape(note)}[/]", soft_wrap=True)
    if report["state"]["note"]:
        out.print(f"state: {escape(report['state']['note'])}", soft_wrap=True)
    out.print("[bold green]PASSED[/]" if report["passed"] else "[bold red]REGRESSION[/]")
    out.print(f"report: {escape(report['report_html'])}")
