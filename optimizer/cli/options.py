"""Command-line options made from the config types: each setting's flag, help, default and environment variable
come from its field in `EvalConfig`, `OptimizeConfig` or `RegressConfig` (one place), so commands that share a
setting share its option.

A setting resolves, first found wins: the command line; the environment (`OPTIMIZER_<SETTING>`, e.g.
`OPTIMIZER_MAX_CONNECTIONS=8`); `[tool.optimizer.<command>]`, then `[tool.optimizer]` in the nearest
pyproject.toml above the working directory (`project_defaults`); the config's default. `--help` shows each
option's default and its variable.
"""

from __future__ import annotations

import inspect
import tomllib
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from pydantic import BaseModel
from pydantic.fields import FieldInfo

ENV_PREFIX = "OPTIMIZER_"
SECTION = "optimizer"
"""`[tool.optimizer]` in pyproject.toml."""

Command = TypeVar("Command", bound=Callable[..., Any])


class ProjectSettingsError(ValueError):
    """A `[tool.optimizer]` table that cannot be used (bad TOML, unknown setting, wrong shape)."""


@dataclass(frozen=True)
class Shape:
    """How a config field looks on the command line when it is not `--field-name VALUE` of the field's own type."""

    cli_type: Any
    flag: str | None = None


SHAPES: dict[str, Shape] = {
    "tasks": Shape(Path | None),
    "overlay": Shape(Path | None),
    "prices": Shape(Path | None),
    "system_prompt": Shape(Path | None),
    "source": Shape(Path | None),
    "headers": Shape(list[str] | None, flag="--header"),
    "mcp_config": Shape(Path | None),
    "context": Shape(str | None),
    "context_servers": Shape(list[str] | None, flag="--context-server"),
    "record": Shape(Path | None),
    "replay": Shape(Path | None),
    "rounds": Shape(str),
    "probe": Shape(bool, flag="--probe/--no-probe"),
}
"""Fields that are files on the command line (the config stores their path or text), or repeatable."""


def option(name: str, annotation: Any, default: Any, flags: Sequence[str], help: str, *,
           env: bool = True) -> inspect.Parameter:
    """One keyword parameter carrying its typer option (a default of None shows no default in --help)."""
    info = typer.Option(*flags, help=help, envvar=ENV_PREFIX + name.upper() if env else None,
                        show_default=default is not None and default != [])
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                             annotation=Annotated[annotation, info])


def config_options(config: type[BaseModel], *, skip: Collection[str] = ()) -> list[inspect.Parameter]:
    """An option per field of `config` (in field order), except `skip`: flag `--field-name`, help from the field's
    description, default from the field (None for required fields: the command checks them)."""
    out = []
    for name, info in config.model_fields.items():
        if name in skip:
            continue
        shape = SHAPES.get(name)
        annotation = shape.cli_type if shape else _optional(info)
        flag = shape.flag if shape and shape.flag else "--" + name.replace("_", "-")
        out.append(option(name, annotation, _cli_default(info, shape), [flag], info.description or ""))
    return out


def run_options(kind: str) -> list[inspect.Parameter]:
    """Where the run goes, and how results are printed: --runs-dir, --run-id, --resume, --json."""
    return [
        option("runs_dir", Path, Path("runs"), ["--runs-dir"], "Where run directories go."),
        option("run_id", str | None, None, ["--run-id"], "Name the new run (default: a timestamp).", env=False),
        option("resume", str | None, None, ["--resume"], f"Continue an interrupted {kind} run with the settings it "
               "was started with; finished episodes are not repeated.", env=False),
        option("as_json", bool, False, ["--json"], "Print the results as JSON on stdout.", env=False),
        option("dry_run", bool, False, ["--dry-run"], "Connect to the server, check the tasks, print the plan and "
               "what the run would cost; send nothing to a model, keep no run, exit 0 (--json for machines).",
               env=False),
    ]


def with_options(*groups: Sequence[inspect.Parameter]) -> Callable[[Command], Command]:
    """Give a `**options` command function the signature typer reads its options from."""
    params = [p for group in groups for p in group]
    names = [p.name for p in params]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"options defined twice: {', '.join(duplicates)}")

    def decorate(func: Command) -> Command:
        func.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]  # read by typer's inspect
        return func

    return decorate


def config_values(options: Mapping[str, Any], config: type[BaseModel]) -> dict[str, Any]:
    """The options that are fields of `config`, without the ones left unset (None), paths as text: what the config
    is built from (the command converts fields whose text needs reading, such as a system prompt file)."""
    values = {}
    for name in config.model_fields:
        value = options.get(name)
        if value is None:
            continue
        values[name] = str(value) if isinstance(value, Path) else value
    return values


def _optional(info: FieldInfo) -> Any:
    """The field's type; for a required field also None, which the command reports as missing."""
    annotation: Any = info.annotation
    return annotation if not info.is_required() else annotation | None


def _cli_default(info: FieldInfo, shape: Shape | None) -> Any:
    if info.is_required():
        return None
    default = info.get_default(call_default_factory=True)
    if shape is not None and default in ({}, None, ()):
        return None
    return default


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml in `start` or above it."""
    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def project_defaults(commands: Mapping[str, Collection[str]], start: Path | None = None) -> dict[str, dict[str, Any]]:
    """Per command, the defaults `[tool.optimizer]` sets in the nearest pyproject.toml: top-level keys for every
    command that has that option, `[tool.optimizer.<command>]` keys for one command (they win). `commands` maps
    each command to its option names. Keys may use dashes or underscores. Raises ProjectSettingsError, naming
    the file, for bad TOML or a key no command has."""
    path = find_pyproject(start or Path.cwd())
    if path is None:
        return {}
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8")).get("tool", {}).get(SECTION, {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ProjectSettingsError(f"{path}: cannot read [tool.{SECTION}] ({exc})") from None
    if not isinstance(table, dict):
        raise ProjectSettingsError(f"{path}: [tool.{SECTION}] must be a table")
    shared = {_key(k): v for k, v in table.items() if not isinstance(v, dict)}
    sections = {k: v for k, v in table.items() if isinstance(v, dict)}
    known = {name for names in commands.values() for name in names}
    unknown = sorted(k for k in shared if k not in known)
    unknown += sorted(f"{c}" for c in sections if c not in commands)
    for command, values in sections.items():
        if command in commands:
            unknown += sorted(f"{command}.{k}" for k in map(_key, values) if k not in commands[command])
    if unknown:
        raise ProjectSettingsError(f"{path}: [tool.{SECTION}] has settings no command takes: {', '.join(unknown)}")
    out: dict[str, dict[str, Any]] = {}
    for command, names in commands.items():
        own = {_key(k): v for k, v in sections.get(command, {}).items()}
        merged = {k: _value(k, v) for k, v in {**shared, **own}.items() if k in names}
        if merged:
            out[command] = merged
    return out


def _key(key: str) -> str:
    aliases = {"header": "headers", "context-server": "context_servers", "context_server": "context_servers"}
    return aliases.get(key, key.replace("-", "_"))


def _value(key: str, value: Any) -> Any:
    """A TOML value as the option reads it: a list of models is the comma-separated text `--models` takes."""
    if isinstance(value, list) and key not in ("headers", "context_servers"):
        return ",".join(str(v) for v in value)
    return value
