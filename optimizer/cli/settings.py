"""Options to configs: the few settings whose command-line form is not the config's (model lists, header lines,
files whose text is stored), and one error exit for settings the config refuses."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from optimizer.cli.common import fail, parse_headers, read_system_prompt
from optimizer.cli.options import config_values, option
from optimizer.models import parse_models
from optimizer.models.base import ModelSpecError
from optimizer.models.tape import RecordingError, open_recording

Config = TypeVar("Config", bound=BaseModel)

MODELS_HELP = ("Comma-separated models: claude-haiku-5-5,claude-sonnet-5-5 (needs ANTHROPIC_API_KEY; "
               "ANTHROPIC_BASE_URL is honoured), openai:MODEL behind an OpenAI-compatible server, the offline readers "
               "reader:bm25,reader:embed (findability: they rank tools and call nothing).")


def models_option(default: str | None, help: str) -> inspect.Parameter:
    """--models: a comma-separated list on the command line, a tuple in the config."""
    return option("models", str | None, default, ["--models"], help)


def build_config(config: type[Config], options: Mapping[str, Any]) -> Config:
    """The config the options describe; exits 2 naming the option for a value the config refuses."""
    values = config_values(options, config)
    try:
        if "models" in values:
            values["models"] = tuple(parse_models(values["models"]))
        if "headers" in values:
            values["headers"] = parse_headers(values["headers"])
        if "context" in values:
            values["context"] = tuple(n.strip() for n in values["context"].split(",") if n.strip())
        if "context_servers" in values:
            values["context_servers"] = tuple(values["context_servers"])
        if "system_prompt" in values:
            values["system_prompt"] = read_system_prompt(Path(values["system_prompt"]))
        if "source" in values:
            values["source"] = source_dir(Path(values["source"]))
        check_recording(values.get("record"), values.get("replay"))
        return config(**values)
    except ModelSpecError as exc:
        raise fail(str(exc)) from None
    except ValidationError as exc:
        raise fail("; ".join(_problem(error) for error in exc.errors())) from None


def check_recording(record: str | None, replay: str | None) -> None:
    """--record and --replay: not both; a replay folder that is a recording."""
    if record and replay:
        raise fail("give --record (keep a run's answers) or --replay (answer from a recording), not both")
    if replay:
        try:
            open_recording(replay)
        except RecordingError as exc:
            raise fail(f"--replay: {exc}") from None


def source_dir(path: Path) -> str:
    """--source: an existing directory, stored as an absolute path."""
    if not path.is_dir():
        raise fail(f"--source {path}: not a directory")
    return str(path.resolve())


def _problem(error: Mapping[str, Any]) -> str:
    name = str(error["loc"][0]) if error.get("loc") else "settings"
    flag = {"headers": "--header", "context_servers": "--context-server"}.get(name, "--" + name.replace("_", "-"))
    return f"{flag}: {error['msg']} (got {error.get('input')!r})"

