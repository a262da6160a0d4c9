"""What every CLI module shares: the two consoles, the error exit, and option parsing helpers."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import tempfile
import time
import traceback
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.markup import escape

from optimizer.cli.views import make_console
from optimizer.run.config import EvalConfig
from optimizer.secrets import redact_text, secret_values

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
    except Exception as exc:  # noqa: BLE001 - exit 2 for every operational failure; the traceback goes to a log
        raise internal_error(exc) from None


def internal_error(exc: BaseException) -> typer.Exit:
    """A bug: its traceback (secrets redacted) goes to a log file in the temporary directory, and the user gets one
    line naming the error and the log; exit 2. Call it while `exc` is being handled."""
    log = Path(tempfile.gettempdir()) / f"optimizer-internal-error-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
    try:
        log.write_text(redact_text(traceback.format_exc(), secret_values()), encoding="utf-8")
        where = f"the details are in {log}"
    except OSError as write_error:
        where = f"its details could not be written to {log} ({write_error})"
    return fail(f"internal error (a bug in the optimizer, not in your input): {type(exc).__name__}: {exc}; {where}")


T = TypeVar("T")
RECANCEL_S = 0.2


def run_job(job: Coroutine[Any, Any, T]) -> T:
    """Run a command's async job; Ctrl-C stops it promptly and for sure. The first SIGINT cancels the job, and the
    cancellation is repeated every RECANCEL_S while it still runs (a library that drops one cancellation, as when
    an answer and the cancellation arrive together, cannot keep the run going); the command then ends in
    KeyboardInterrupt, which its progress view turns into "continue with --resume"."""
    interrupted = False

    async def main() -> T:
        task, loop = asyncio.current_task(), asyncio.get_running_loop()

        def cancel() -> None:
            nonlocal interrupted
            interrupted = True
            if task is not None and not task.done():
                task.cancel()
                loop.call_later(RECANCEL_S, cancel)

        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # not the main thread: as before
            loop.add_signal_handler(signal.SIGINT, cancel)
        try:
            return await job
        finally:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.remove_signal_handler(signal.SIGINT)

    try:
        result = asyncio.run(main())
    except asyncio.CancelledError:
        if interrupted:
            raise KeyboardInterrupt from None
        raise
    if interrupted:
        raise KeyboardInterrupt
    return result
