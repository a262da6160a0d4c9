"""What every CLI module shares: the two consoles, the error exit, and option parsing helpers."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

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
    """Settings a resumed run takes from the command line (spending only; see run.RESUMABLE_CHANGES)."""
    return {"max_usd": max_usd, "prices": str(prices) if prices else None}
