"""`optimizer tasks check`: what a task set needs before money is spent on it (see `optimizer.tasks.check`).
Exit codes: 0 no problem; 1 a problem was found; 2 usage or operational error (bad task file, server that does
not start)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from optimizer.cli.common import HeaderOpt, err, fail, out, parse_headers, run_job
from optimizer.cli.costs import DryRun, dry_run_exit, on_estimate
from optimizer.cli.settings import check_recording
from optimizer.models import banners
from optimizer.models.base import ModelAccessError, ModelSpecError, ModelUnavailable
from optimizer.models.defaults import CLAUDE_PROPOSER, check_model_name
from optimizer.run.config import CONFIRM_USD, RunError
from optimizer.servers import ServerError, ServerSpec, one_connection
from optimizer.tasks import TaskError, TaskSet, load_tasks
from optimizer.tasks.check import CheckReport, check_tasks, replay
from optimizer.tasks.generate import GenerateError, GenerateSettings, run_generation
from optimizer.tasks.known import KnownError, load_known

tasks_app = typer.Typer(help="Work with task sets: generate one for a server that has none (Claude), check one "
                        "before spending on it.",
                        no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)


@tasks_app.command("check")
def check_command(
    tasks: Annotated[Path, typer.Argument(help="Task file or directory (YAML, JSONL, evaluation XML).")],
    server: Annotated[str, typer.Option("--server", help="MCP server: a command line run over stdio (\"python "
                                        "server.py\"), or an http(s)://…/mcp URL.")],
    heldout: Annotated[float, typer.Option("--heldout", min=0, max=1, help="Share of tasks held out when a task "
                                           "sets no split.")] = 0.3,
    header: HeaderOpt = None,
    replay: Annotated[bool, typer.Option("--replay", help="Also run each task's expect.calls against the server "
                                         "and check that the answer is still in their results.")] = False,
    allow_destructive: Annotated[bool, typer.Option("--allow-destructive", help="Let --replay call tools "
                                                    "annotated destructiveHint: true.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON on stdout.")] = False,
) -> None:
    """Check a task set against a server's tools: tools no task expects, tasks per tool and split, tools the
    server lacks, prompts that name a tool, duplicate and near-duplicate prompts, answers that are a phrase of the
    result's wording (a correct answer in other words would fail), tasks that need destructive tools, and with
    --replay answers the expected calls no longer return. Exit 1 when a problem is found."""
    try:
        taskset = load_tasks(tasks, heldout=heldout)
        spec = ServerSpec.parse(server, headers=parse_headers(header))
        report = asyncio.run(_check(taskset, spec, replay, allow_destructive))
    except (TaskError, ServerError) as exc:
        raise fail(str(exc)) from None
    if as_json:
        sys.stdout.write(json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n")
    else:
        print_check(out, report)
    if report.problems:
        err.print(f"[bold red]{len(report.problems)} problem(s) in the task set[/]")
        raise typer.Exit(1)


async def _check(taskset: TaskSet, spec: ServerSpec, replaying: bool, allow_destructive: bool) -> CheckReport:
    async with one_connection(spec) as pool:
        catalog = await pool.list_tools()
        report = check_tasks(taskset, catalog)
        if replaying:
            known = [t for t in taskset.tasks if all(tool in catalog for tool, _ in t.expect.calls)]
            await replay(known, pool.call, report, destructive=set(catalog.hinted("destructiveHint")),
                         allow_destructive=allow_destructive)
        return report


@tasks_app.command("generate")
def generate_command(
    server: Annotated[str, typer.Option("--server", help="MCP server: a command line run over stdio (\"python "
                                        "server.py\"), or an http(s)://…/mcp URL.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Directory for generated.yaml (made if missing; an "
                                          "existing generated.yaml is never overwritten).")],
    model: Annotated[str, typer.Option("--model", help="The Claude model that explores and writes (needs "
                                       "ANTHROPIC_API_KEY; ANTHROPIC_BASE_URL is honoured).")] = CLAUDE_PROPOSER,
    offline: Annotated[bool, typer.Option("--offline", help="No model: an OFFLINE stand-in calls the read-only "
                                          "tools with values found in other results and phrases requests from the "
                                          "tools' descriptions (easier tasks than Claude writes).")] = False,
    seed: Annotated[int, typer.Option("--seed", help="Which found values --offline picks.")] = 0,
    max_usd: Annotated[float | None, typer.Option("--max-usd", min=0, help="Spending limit for Claude: submitting "
                                                  "is forced once 80% of it is spent.")] = None,
    resume: Annotated[str | None, typer.Option("--resume", help="Continue a generation that stopped (its run id "
                                               "under --runs-dir): Claude's finished turns are replayed, not paid "
                                               "again.")] = None,
    n: Annotated[int, typer.Option("--n", min=1, help="Most tasks to ask for.")] = 40,
    heldout: Annotated[float, typer.Option("--heldout", min=0, max=1, help="Share of tasks held out.")] = 0.3,
    explore: Annotated[str | None, typer.Option("--explore", help="Comma-separated tools the model may call "
                                                "though they are not annotated read-only.")] = None,
    allow_destructive: Annotated[bool, typer.Option("--allow-destructive", help="Let the model call any tool, "
                                                    "destructive ones included.")] = False,
    known: Annotated[Path | None, typer.Option("--known", help="Facts you know about the server's data, one a "
                                               "line, `label: value` where you can (`Patient id: P-0042 (Lena "
                                               "Vogt)`, `Order: #10023`); exploring starts from them. For servers "
                                               "whose records no tool lists.")] = None,
    max_turns: Annotated[int, typer.Option("--max-turns", min=1, help="Model turns before submitting is "
                                           "forced.")] = 20,
    runs_dir: Annotated[Path, typer.Option("--runs-dir", help="Where the run directory (every call, the "
                                           "summary) goes.")] = Path("runs"),
    header: HeaderOpt = None,
    record: Annotated[Path | None, typer.Option("--record", help="Keep every answer Claude gives in this folder "
                                                "(plain JSON with its provenance, never a key), for --replay.")] = None,
    replay: Annotated[Path | None, typer.Option("--replay", help="Answer from a folder --record made instead of "
                                                "Claude: no key, no API call; a turn it lacks stops the run (exit "
                                                "2).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON on stdout.")] = False,
    confirm_usd: Annotated[float, typer.Option("--confirm-usd", min=0, envvar="OPTIMIZER_CONFIRM_USD",
                                               help="Ask before a generation whose estimate may pass this many USD; "
                                               "with nobody to ask, stop (exit 2) unless --max-usd is set.")]
    = CONFIRM_USD,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Connect to the server, print what the generation "
                                          "would cost; send nothing to a model, exit 0.")] = False,
) -> None:
    """Write a task set for a server that has none: Claude (or, with --offline, a stand-in without a model) explores
    the server with the tools it may call and writes tasks whose answers come from real results; every task is
    replayed on a fresh start of the server and kept only when it holds. It reports how many tools a task with an
    answer covers and, for each other tool, its errors and what would help (--known, --explore). Exit 0 when tasks
    were written, 1 when none held, 2 on errors."""
    target = out_dir / "generated.yaml"
    if target.exists():
        raise fail(f"{target} exists; choose another --out or move it away (nothing was changed)")
    try:
        check_recording(str(record) if record else None, str(replay) if replay else None)
        facts = tuple(fact.text for fact in load_known(known)) if known else ()
        if not offline:
            check_model_name(model)
        spec = ServerSpec.parse(server, headers=parse_headers(header))
        settings = GenerateSettings(model, n=n, heldout=heldout, max_turns=max_turns, offline=offline, seed=seed,
                                    max_usd=max_usd, confirm_usd=confirm_usd, allow_destructive=allow_destructive,
                                    known=facts,
                                    record=str(record) if record else None, replay=str(replay) if replay else None,
                                    explore=tuple(t.strip() for t in (explore or "").split(",") if t.strip()))
        with err.status("connecting to the server", spinner="dots") as status:
            summary = run_job(run_generation(spec, settings, out_dir, runs_dir, resume=resume,
                                             progress=lambda m: status.update(escape(m)),
                                             on_estimate=on_estimate(err, dry_run=dry_run, as_json=as_json)))
    except DryRun as stop:
        raise dry_run_exit(stop, out, as_json=as_json) from None
    except (ServerError, GenerateError, KnownError, ModelAccessError, ModelUnavailable, ModelSpecError,
            OSError, RunError) as exc:
        raise fail(str(exc)) from None
    if as_json:
        sys.stdout.write(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    else:
        for banner in banners(summary):
            out.print(f"[bold yellow]{escape(banner)}[/]", soft_wrap=True)
        kinds = ", ".join(f"{k} {v}" for k, v in summary["mix"].items() if v)
        cost = "OFFLINE stand-in, no model" if summary["offline"] else f"USD {summary['usd']:.4f}"
        out.print(f"wrote {summary['written']} of {summary['submitted']} submitted task(s) to {escape(str(target))} "
                  f"({kinds or 'none'}; {summary['splits']['train']} train, {summary['splits']['heldout']} "
                  f"held-out); {summary['calls']} exploration calls, {cost}")
        for drop in summary["dropped"]:
            out.print(f"  dropped {escape(drop['task'])}: {escape(drop['reason'])}", soft_wrap=True)
        print_coverage(out, summary)
        out.print(f"every call made: {escape(summary['run_dir'])}/calls.jsonl")
    if not summary["written"]:
        raise typer.Exit(1)


def print_coverage(console: Console, summary: dict[str, Any]) -> None:
    """How many tools a task with an answer covers, and for each other tool why and what would help."""
    coverage = summary["coverage"]
    style = "green" if coverage["answered"] == coverage["tools"] else "yellow"
    console.print(f"[{style}]{coverage['answered']} of {coverage['tools']} tools have a task with an answer[/]"
                  + (f" ({summary['known']} known fact(s) given)" if summary["known"] else ""))
    for entry in summary["uncovered"]:
        console.print(f"  [bold]{escape(entry['tool'])}[/]: {escape(entry['why'])}", soft_wrap=True)
        for error in entry["errors"]:
            console.print(f"    error: {escape(error)}", soft_wrap=True)
        console.print(f"    would help: {escape(entry['help'])}", soft_wrap=True)


def print_check(console: Console, report: CheckReport) -> None:
    splits = ", ".join(f"{n} {name}" for name, n in report.splits.items())
    table = Table(title=f"tasks check: {report.tasks} tasks ({splits}) against {report.server}", title_justify="left")
    for column in ("tool", "train", "heldout"):
        table.add_column(column, justify="left" if column == "tool" else "right")
    for tool, counts in report.per_tool.items():
        style = "bold red" if not sum(counts.values()) else ""
        table.add_row(escape(tool), str(counts.get("train", 0)), str(counts.get("heldout", 0)), style=style)
    console.print(table)
    for problem in report.problems:
        where = f"{problem.source}: " if problem.source else ""
        console.print(f"[red]{problem.kind}[/] {escape(where + problem.message)}", soft_wrap=True)
    for note in report.notes:
        console.print(f"[yellow]note:[/] {escape(note)}", soft_wrap=True)
    if not report.problems:
        console.print("[green]no problems found[/]")
