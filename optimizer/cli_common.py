"""What every CLI module shares: the two consoles, the error exit, and option parsing helpers."""

from __future__ import annotations

import typer

from optimizer.views import make_console

err = make_console(stderr=True)
out = make_console()


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print an error on stderr and return the Exit to raise (2: usage or operational error)."""
    err.print(f"[bold red]error:[/] {message}", soft_wrap=True)
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
