"""Rich renderings for the terminal: progress on stderr, result tables on stdout."""

from __future__ import annotations

import os
from typing import Any

from rich.console import Console, ConsoleDimensions
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from optimizer.models import banners
from optimizer.run.evaluate import Outcome
from optimizer.stats.efficiency import cost_figure
from optimizer.text.tokens import points

PIPED_WIDTH = 140


class CliConsole(Console):
    """A console that decides its width each time it prints, not when it is made (the CLI's consoles are made at
    import): the COLUMNS variable, else the terminal's width, else PIPED_WIDTH for a file or a pipe."""

    @property
    def size(self) -> ConsoleDimensions:
        columns = os.environ.get("COLUMNS", "")
        if columns.isdigit() and int(columns) > 0:
            return ConsoleDimensions(int(columns), super().size.height)
        if not self.is_terminal:
            return ConsoleDimensions(PIPED_WIDTH, super().size.height)
        return super().size

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size


def make_console(*, stderr: bool = False) -> Console:
    """A console for the CLI on stdout or stderr (whatever they are when it prints); see `CliConsole`."""
    return CliConsole(stderr=stderr, highlight=False)


class EvalProgress:
    """Episodes done, accuracy so far and ETA, on stderr; silent when disabled."""

    def __init__(self, console: Console, *, enabled: bool = True) -> None:
        self.enabled = enabled
        self.passed = 0
        self.done = 0
        self._bar = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("accuracy {task.fields[accuracy]}"), TextColumn("cached {task.fields[cached]}"),
            TimeElapsedColumn(), TimeRemainingColumn(), console=console, transient=False, disable=not enabled,
        )
        self._task: Any = None
        self.cached = 0
        self.run_id: str | None = None
        self._console = console

    def __enter__(self) -> EvalProgress:
        self._bar.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        self._bar.__exit__(None, None, None)
        if kind is not None and issubclass(kind, KeyboardInterrupt) and self.run_id:
            self._console.print(f"[yellow]interrupted:[/] finished episodes are saved; continue with the same "
                                f"command and --resume {self.run_id}", soft_wrap=True)

    def start(self, run: Any, total: int) -> None:
        self.run_id = run.store.run_id
        label = (f"eval {run.store.run_id}" + (" [REPLAY]" if run.providers.replaying else "")
                 + (" [OFFLINE]" if run.offline else ""))
        self._task = self._bar.add_task(label, total=total or None, accuracy="–", cached=0)

    def stage(self, label: str, total: int | None) -> None:
        """A new stage of a job: its own label, total (None: unknown), count and accuracy (of what it runs)."""
        self.passed = self.done = 0
        if self._task is not None:
            self._bar.update(self._task, description=label, total=total, completed=0, accuracy="–")

    def advance(self, outcome: Outcome) -> None:
        self.done += 1
        self.passed += outcome.passed
        self.cached += outcome.cached
        if self._task is not None:
            self._bar.update(self._task, advance=1, accuracy=f"{self.passed / self.done:.0%}", cached=self.cached)


def print_eval(console: Console, report: dict[str, Any]) -> None:
    for banner in banners(report):
        console.print(f"[bold yellow]{escape(banner)}[/]", soft_wrap=True)
    alone = (report.get("alone") or {}).get("results")
    beside = ", ".join(report.get("context") or [])
    title = f"Accuracy — run {report['run_id']}" + (f" (beside {beside})" if beside else "")
    table = Table(title=title, show_lines=False)
    columns = ("model", "split", "passed", "accuracy", "95% CI", "calls/task", "failed calls/task", "turns/task",
               *(("alone", "change") if alone else ()))
    for column in columns:
        table.add_column(column, justify="right" if column != "model" else "left")
    for model, splits in report["results"].items():
        for split, row in splits.items():
            cells = [model, split, f"{row['passed']}/{row['n']}", f"{row['accuracy']:.1%}",
                     f"{row['ci_low']:.0%}–{row['ci_high']:.0%}",
                     *(cost_figure(row, key) for key in ("calls_per_task", "failed_calls_per_task", "turns_per_task"))]
            if alone:
                solo = alone[model][split]
                cells += [f"{solo['passed']}/{solo['n']}", points(row['accuracy'] - solo['accuracy'])]
            table.add_row(*cells)
    console.print(table)
    for model, matrix in report["confusion"].items():
        print_confusion(console, model, matrix)
    for model, row in (report.get("search") or {}).items():
        console.print(f"tool search ({report['tool_search']}): {model} found the expected tool in {row['found']} of "
                      f"{row['n']} episodes ({row['recall']:.0%})")
    for model, row in (report.get("readers") or {}).items():
        console.print(f"{model}: the expected first tool among its top 5 in {row['found']} of {row['n']} tasks "
                      f"({row['recall']:.0%})")
    for tool, queries in (report.get("unfound") or {}).items():
        console.print(f"  searches that never found {tool}: " + ", ".join(repr(q) for q in queries))
    if report.get("cross_server"):
        confusions = Table(title="Cross-server confusions (first call to a context server's tool where a tool of "
                           "the server under test was expected)")
        for column in ("model", "expected", "called", "episodes"):
            confusions.add_column(column, justify="right" if column == "episodes" else "left")
        for row in report["cross_server"]:
            confusions.add_row(row["model"], row["expected"], row["chosen"], str(row["count"]))
        console.print(confusions)
    episodes = report["episodes"]
    console.print(
        f"episodes: {episodes['run']} run, {episodes['cached']} cached, {episodes['infra_errors']} infrastructure"
        f" errors (not scored); server restarts: {report['server_restarts']}"
    )
    console.print(f"transcripts and results: {report['run_dir']}/ (eval.json, transcripts/*.jsonl, server.log)")


def print_confusion(console: Console, model: str, matrix: dict[str, dict[str, int]]) -> None:
    """Rows: the expected first tool; columns: the first tool called. Off-diagonal cells are wrong picks."""
    chosen = sorted({c for row in matrix.values() for c in row})
    if not matrix:
        return
    table = Table(title=f"Tool selection — {model} (rows expected, columns chosen first)", title_justify="left")
    table.add_column("expected \\ chosen")
    for name in chosen:
        table.add_column(name, justify="right")
    for expected in sorted(matrix):
        cells = []
        for name in chosen:
            count = matrix[expected].get(name, 0)
            style = "green" if name == expected else "red"
            cells.append(f"[{style}]{count}[/]" if count else "·")
        table.add_row(expected, *cells)
    console.print(table)
