"""What every CLI module shares: the two consoles, the error exit, and option parsing helpers."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from optimizer.cli.views import make_console
from optimizer.config import EvalConfig

err = make_console(stderr=True)
out = make_console()


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print an error on stderr and return the Exit to raise (2: usage or operational error)."""
    err.print(f"[bold red]error:[/] {escape(message)}", soft_wrap=True)
    return typer.Exit(code)


def parse_headers(values: list[str] | None) -> dict[str, str]:
    """--header 'Name: value' options as a dict; a malformed one exits 2."""
    headers = {}
    for value in values or []:
        name, sep, text = value.partition(":")
        if not sep or not name.strip():
            raise fail(f"--header {value!r} is not of the form 'Name: value'")
        headers[name.strip()] = text.strip()
    return headers


ServerOpt = Annotated[str | None, typer.Option("--server", help=EvalConfig.model_fields["server"].description)]
HeaderOpt = Annotated[list[str] | None, typer.Option("--header", help=EvalConfig.model_fields["headers"].description)]
OverlayOpt = Annotated[Path | None, typer.Option("--overlay", help=EvalConfig.model_fields["overlay"].description)]
"""Options of commands that open a server without a run (dump, lint, serve); help from the run settings."""


def read_system_prompt(path: Path | None) -> str | None:
    """The --system-prompt file's text; an unreadable file exits 2 naming it."""
    if path is None:
        return None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise fail(f"--system-prompt {path}: cannot read it ({exc})") from None


def resume_overrides(max_usd: float | None, prices: Path | None) -> dict[str, object]:
    """Settings a resumed run takes from the command line (spending only; see config.RESUMABLE_CHANGES)."""
    return {"max_usd": max_usd, "prices": str(prices) if prices else None}


@contextlib.contextmanager
def exits_on_errors(*expected: type[Exception]) -> Iterator[None]:
    """Errors of the `expected` kinds exit 2 with their message; any other exception exits 2 as an internal error
    with its traceback on stderr — never 1, which means a check failed."""
    try:
        yield
    except typer.Exit:
        raise
    except expected as exc:
        raise fail(str(exc)) from None
    except Exception as exc:  # noqa: BLE001 - exit 2 for every operational failure, with the traceback
        err.print_exception()
        raise fail(f"internal error: {type(exc).__name__}: {exc}") from None
