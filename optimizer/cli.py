"""Command line: `optimizer <verb>` and `optimize`. Typer commands only — parse options, build a
config, call one library function, print with rich. Exit codes: 0 done, 1 a check failed
(where a verb has one), 2 usage or operational error."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from optimizer.cli_common import (
    BatchOpt,
    JudgeOpt,
    MaxUsdOpt,
    OpenAIBaseUrlOpt,
    PricesOpt,
    SystemPromptOpt,
    ThinkingOpt,
    err,
    fail,
    out,
    parse_headers,
    read_system_prompt,
    resume_overrides,
)
from optimizer.definitions import Candidate, DefinitionError
from optimizer.models import OFFLINE_DEFAULT, parse_models
from optimizer.models.base import ModelSpecError
from optimizer.run import EvalConfig, RunError, run_eval
from optimizer.servers import ServerError, ServerPool, ServerSpec
from optimizer.views import EvalProgress, print_eval

app = typer.Typer(
    name="optimizer",
    help="Measure and improve MCP tool definitions with eval tasks. Offline agents (sim:*) are stand-ins.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

ServerOpt = Annotated[
    str | None,
    typer.Option("--server", help="MCP server: a command line run over stdio (\"python server.py\"), "
                 "or an http(s)://…/mcp URL."),
]
HeaderOpt = Annotated[
    list[str] | None,
    typer.Option("--header", help="HTTP header for URL servers, 'Name: value' (repeatable; never stored)."),
]
OverlayOpt = Annotated[
    Path | None, typer.Option("--overlay", help="Overlay JSON applied to the definitions (format: see README).")
]




@app.command("eval")
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
    try:
        with progress:
            report = asyncio.run(run_eval(config, runs_dir=runs_dir, run_id=run_id, resume=resume,
                                          progress=progress.advance, on_start=progress.start,
                                          overrides=resume_overrides(max_usd, prices)))
    except RunError as exc:
        raise fail(str(exc)) from None
    except Exception as exc:  # noqa: BLE001 - exit 2 for every operational failure, with the traceback
        err.print_exception()
        raise fail(f"internal error: {type(exc).__name__}: {exc}") from None
    for notice in report["notices"]:
        err.print(f"[yellow]note:[/] {notice}", soft_wrap=True)
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2, sort_keys=True) + "\n")
    else:
        print_eval(out, report)


@app.command("dump")
def dump_command(
    server: ServerOpt = None,
    out_dir: Annotated[Path, typer.Option("--out-dir", help="Directory for one <tool>.json per tool.")] = Path("."),
    overlay: OverlayOpt = None,
    header: HeaderOpt = None,
) -> None:
    """Write the server's tool definitions (optionally under an overlay) as canonical JSON files —
    the text that `winning.patch` and `reviewed.patch` apply to."""
    if server is None:
        raise fail("--server is required")
    from optimizer.patch import dump_definitions, load_overlay

    async def dump() -> list[Path]:
        spec = ServerSpec.parse(server, headers=parse_headers(header))
        async with ServerPool(spec, instances=1) as pool:
            catalog = await pool.list_tools()
        candidate = load_overlay(overlay, catalog) if overlay else Candidate()
        return dump_definitions(catalog, candidate, out_dir)

    try:
        written = asyncio.run(dump())
    except (ServerError, DefinitionError) as exc:
        raise fail(str(exc)) from None
    err.print(f"wrote {len(written)} definition file(s) to {out_dir}")


@app.command("worker")
def worker_command(
    storage: Annotated[str, typer.Option("--storage", help="The optuna storage URL the optimize run uses "
                                         "(default there: sqlite:///runs/<id>/run.db).")],
    study: Annotated[str, typer.Option("--study", help="The round's study, e.g. optimize-<run id>-r1.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print what this worker did as JSON.")] = False,
) -> None:
    """Help a running `optimize` evaluate one round's search trials from another process (or machine,
    with a shared run directory and a storage URL both can reach). Exits when the round is full."""
    from optimizer.worker import run_worker

    try:
        report = asyncio.run(run_worker(storage, study))
    except RunError as exc:
        raise fail(str(exc)) from None
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2, sort_keys=True) + "\n")
    else:
        out.print(f"worker done: {report['episodes']['run']} episodes run for {report['study']} "
                  f"({report['trials_in_study']} trials in the study)")


def main() -> Any:
    return app()


from optimizer.cli_lint import lint_command  # noqa: E402 - commands register after the app exists
from optimizer.cli_optimize import optimize_command  # noqa: E402
from optimizer.cli_regress import regress_command  # noqa: E402
from optimizer.cli_review import review_command  # noqa: E402
from optimizer.cli_serve import serve_command  # noqa: E402

app.command("lint")(lint_command)
app.command("optimize")(optimize_command)
app.command("review")(review_command)
app.command("serve")(serve_command)
app.command("regress")(regress_command)
optimize_app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
optimize_app.command()(optimize_command)


def optimize_main() -> Any:
    return optimize_app()
