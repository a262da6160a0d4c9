"""`optimizer tasks check`: what a task set needs before money is spent on it (see `optimizer.task_check`).
Exit codes: 0 no problem; 1 a problem was found; 2 usage or operational error (bad task file, server that does
not start)."""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from optimizer.cli.common import HeaderOpt, err, fail, out, parse_headers
from optimizer.servers import ServerError, ServerPool, ServerSpec
from optimizer.task_check import CheckReport, check_tasks, replay
from optimizer.tasks import TaskError, TaskSet, load_tasks

tasks_app = typer.Typer(help="Work with task sets: check one against a server before spending on it.",
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
    server lacks, prompts that name a tool, duplicate and near-duplicate prompts, tasks that need destructive
    tools, and with --replay answers the expected calls no longer return. Exit 1 when a problem is found."""
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
    with tempfile.TemporaryDirectory(prefix="optimizer-tasks-") as tmp:
        async with ServerPool(spec, instances=1, log_path=Path(tmp) / "server.log") as pool:
            catalog = await pool.list_tools()
            report = check_tasks(taskset, catalog)
            if replaying:
                destructive = {t.name for t in catalog.tools if (t.annotations or {}).get("destructiveHint") is True}
                known = [t for t in taskset.tasks if all(tool in catalog for tool, _ in t.expect.calls)]
                await replay(known, pool.call, report, destructive=destructive, allow_destructive=allow_destructive)
            return report


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
