"""Command line: `optimizer <command>` and `optimize`. One module per command, each a thin typer function that
turns options into a config, calls one library function and prints with rich. Exit codes: 0 done, 1 a check
failed (where a command has one), 2 usage or operational error."""

from __future__ import annotations

from typing import Any

import typer
import typer.core

from optimizer.cli.common import fail, internal_error
from optimizer.cli.dump import dump_command
from optimizer.cli.eval import eval_command
from optimizer.cli.lint import lint_command
from optimizer.cli.optimize import optimize_command
from optimizer.cli.options import ProjectSettingsError, project_defaults
from optimizer.cli.pin import pin_command
from optimizer.cli.regress import regress_command
from optimizer.cli.review import review_command
from optimizer.cli.serve import serve_command
from optimizer.cli.tasks import tasks_app
from optimizer.cli.worker import worker_command

app = typer.Typer(
    name="optimizer",
    help="Measure and improve MCP tool definitions with eval tasks. Offline readers (reader:*) measure findability, "
         "not agent accuracy.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("eval")(eval_command)
app.command("dump")(dump_command)
app.command("worker")(worker_command)
app.command("lint")(lint_command)
app.command("pin")(pin_command)
app.command("optimize")(optimize_command)
app.command("review")(review_command)
app.command("serve")(serve_command)
app.command("regress")(regress_command)
app.add_typer(tasks_app, name="tasks")

optimize_app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
optimize_app.command()(optimize_command)


@app.callback()
def _project_settings(ctx: typer.Context) -> None:
    ctx.default_map = _defaults(ctx.command)


def _defaults(group: object) -> dict[str, dict[str, Any]]:
    """`[tool.optimizer]` of the nearest pyproject.toml as click's defaults per command; exits 2 when unusable."""
    commands = group.commands if isinstance(group, typer.core.TyperGroup) else {}
    names = {name: {p.name for p in command.params if p.name} for name, command in commands.items()}
    try:
        return project_defaults(names)
    except ProjectSettingsError as exc:
        raise fail(str(exc)) from None


def main() -> Any:
    """The `optimizer` console script. An exception no command expected is a bug: exit 2 with one line and the
    path of a log holding the traceback (`common.internal_error`)."""
    try:
        return app()
    except Exception as exc:  # noqa: BLE001 - the last line of defence: no traceback on the user's screen
        internal_error(exc)
        raise SystemExit(2) from None


def optimize_main() -> Any:
    """The `optimize` console script: the optimize command alone, with `[tool.optimizer]` defaults."""
    command = typer.main.get_command(optimize_app)
    try:
        defaults = project_defaults({"optimize": {p.name for p in command.params if p.name}})
    except ProjectSettingsError as exc:
        fail(str(exc))
        raise SystemExit(2) from None
    try:
        return command.main(default_map=defaults.get("optimize"), prog_name="optimize")
    except Exception as exc:  # noqa: BLE001 - as in main()
        internal_error(exc)
        raise SystemExit(2) from None
