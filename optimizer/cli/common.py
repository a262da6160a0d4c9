"""What every CLI module shares: the two consoles, the error exit, and option parsing helpers."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer

from optimizer.cli.views import make_console

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

ThinkingOpt = Annotated[str | None, typer.Option(
    "--thinking", help="Claude extended thinking: a token budget (1024 or more) or 'adaptive'. Default off.")]
BatchOpt = Annotated[bool, typer.Option(
    "--batch", help="Send Claude turns through the Message Batches API: half price, slower turnaround.")]
SystemPromptOpt = Annotated[Path | None, typer.Option(
    "--system-prompt", help="Your agent's own system prompt, included verbatim: test descriptions under the "
    "prompt they will ship with.")]

MaxUsdOpt = Annotated[float | None, typer.Option(
    "--max-usd", min=0.0, help="Stop cleanly before spending more than this many US dollars; finished work is "
    "kept, and --resume RUN_ID --max-usd HIGHER continues.")]
PricesOpt = Annotated[Path | None, typer.Option(
    "--prices", help="JSON price table (USD per million tokens per model) laid over the built-in one.")]
JudgeOpt = Annotated[str | None, typer.Option(
    "--judge", help="Model that grades `match: judge` answers (default claude-haiku-5-5 with Claude models, "
    "sim:judge offline).")]
OpenAIBaseUrlOpt = Annotated[str | None, typer.Option(
    "--openai-base-url", help="OpenAI-compatible server for openai:MODEL models (vLLM, Ollama, llama.cpp, OpenAI); "
    "default OPENAI_BASE_URL, else the OpenAI API. The key is OPENAI_API_KEY.")]


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
