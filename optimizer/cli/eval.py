"""`optimizer eval`: run the tasks against a server's tools and report accuracy per model and split."""

from __future__ import annotations

import json
import sys
from typing import Any

import typer

from optimizer.cli.common import err, exits_on_errors, fail, out, resume_overrides, run_job
from optimizer.cli.costs import DryRun, dry_run_exit, on_estimate
from optimizer.cli.options import config_options, option, run_options, with_options
from optimizer.cli.settings import MODELS_HELP, build_config, models_option
from optimizer.cli.views import EvalProgress, print_eval
from optimizer.evaluation import run_eval
from optimizer.models import OFFLINE_DEFAULT, offline_spec
from optimizer.models.tape import RecordingError, open_recording
from optimizer.run.config import EvalConfig, RunError


@with_options(config_options(EvalConfig, skip={"models"}), [
    models_option(None, MODELS_HELP + f" Default: {','.join(OFFLINE_DEFAULT)}; with --replay, the recording's agents."),
    option("offline", bool, False, ["--offline"], "Only offline models (the readers reader:bm25,reader:embed unless "
           "--models names other reader: models); no API calls. Results are labelled OFFLINE."),
], run_options("eval"))
def eval_command(**options: Any) -> None:
    """Run the eval tasks against a server's tools with one or more agents, and report accuracy per
    model and split, the tool-selection confusion matrix, and where the transcripts are."""
    resume, run_id, as_json = options["resume"], options["run_id"], options["as_json"]
    if resume and run_id:
        raise fail("give either --run-id (a new run) or --resume (an existing one), not both")
    config = None
    if options["server"] is not None or options["tasks"] is not None or not resume:
        if options["server"] is None or options["tasks"] is None:
            raise fail("--server and --tasks are required (or --resume RUN_ID alone to finish a run)")
        options["models"] = options["models"] or default_eval_models(options["replay"])
        if options["offline"] and not all(offline_spec(m) for m in options["models"].split(",")):
            raise fail("--offline runs only offline readers (reader:…); drop --offline "
                       "or the other --models")
        config = build_config(EvalConfig, options)
    runs_dir, max_usd, prices = options["runs_dir"], options["max_usd"], options["prices"]
    progress = EvalProgress(err, enabled=(not as_json or err.is_terminal) and not options["dry_run"])
    with exits_on_errors(RunError), progress:
        try:
            report = run_job(run_eval(config, runs_dir=runs_dir, run_id=run_id, resume=resume,
                                      progress=progress.advance, on_start=progress.start,
                                      overrides=resume_overrides(max_usd, prices),
                                      on_estimate=on_estimate(err, dry_run=options["dry_run"], as_json=as_json)))
        except DryRun as stop:
            raise dry_run_exit(stop, out, as_json=as_json) from None
    for notice in [*report["notices"], *([report["state"]["note"]] if report["state"]["note"] else [])]:
        err.print(f"[yellow]note:[/] {notice}", soft_wrap=True)
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2, sort_keys=True) + "\n")
    else:
        print_eval(out, report)
    episodes = report["episodes"]
    if episodes["infra_errors"] and not episodes["run"] + episodes["cached"]:
        err.print(f"[red]error:[/] no episode was scored: all {episodes['infra_errors']} ended in an infrastructure "
                  f"error (the server or a model failed; see {report.get('run_dir') or 'the run directory'}'s "
                  "server.log and transcripts)", soft_wrap=True)
        raise typer.Exit(2)


def default_eval_models(replay: Any) -> str:
    """--models when none is given: the recording's agents with --replay, else the offline readers."""
    if replay:
        try:
            agents = open_recording(str(replay)).agents
        except RecordingError as exc:
            raise fail(f"--replay: {exc}") from None
        if agents:
            return ",".join(agents)
    return ",".join(OFFLINE_DEFAULT)
