"""Options come from the config types, and settings resolve: command line > OPTIMIZER_* environment >
[tool.optimizer.<command>] > [tool.optimizer] in the nearest pyproject.toml > the config's default."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from optimizer.cli import app, optimize_app
from optimizer.cli.options import ProjectSettingsError, project_defaults
from optimizer.optimize import OptimizeConfig
from optimizer.regress import RegressConfig
from optimizer.run.config import EvalConfig

GROUP = typer.main.get_command(app)
COMMANDS = {name: GROUP.commands[name] for name in ("eval", "optimize", "regress")}  # type: ignore[attr-defined]
NAMES = {name: {p.name for p in command.params} for name, command in COMMANDS.items()}


def params(command: str, args: list[str], default_map: dict[str, Any] | None = None) -> dict[str, Any]:
    ctx = COMMANDS[command].make_context(command, args, default_map=default_map)
    return dict(ctx.params)


@pytest.mark.parametrize(("command", "config"), [("eval", EvalConfig), ("optimize", OptimizeConfig),
                                                 ("regress", RegressConfig)])
def test_every_setting_is_an_option_with_the_fields_help_and_default(command: str, config: Any) -> None:
    options = {p.name: p for p in COMMANDS[command].params}
    for name, field in config.model_fields.items():
        if (command, name) == ("regress", "overlay"):  # its two sides are --baseline and --candidate
            assert name not in options
            with pytest.raises(ValueError, match="--candidate"):
                config(server="s", tasks="t", models=("sim:lexical",), overlay="o.json")
            continue
        if (command, name) == ("optimize", "split"):  # optimize always runs both splits: train, then held-out
            assert name not in options
            continue
        assert name in options, f"{command} lacks an option for {name}"
        option = options[name]
        assert option.envvar == f"OPTIMIZER_{name.upper()}"
        if name not in ("models", "proposer"):  # their defaults are chosen by the command (offline, API key)
            assert option.help == field.description
            default = None if field.is_required() else field.get_default(call_default_factory=True)
            assert option.default == (None if default in ({}, None, ()) else default)


def test_shared_settings_read_the_same_on_every_command() -> None:
    for name in ("max_connections", "tool_timeout", "system_prompt", "max_usd"):
        helps = {COMMANDS[c].params[[p.name for p in COMMANDS[c].params].index(name)].help for c in COMMANDS}
        assert len(helps) == 1


def test_command_line_beats_environment_beats_project_beats_default(monkeypatch: pytest.MonkeyPatch) -> None:
    base = ["--server", "s", "--tasks", "t"]
    assert params("eval", base)["epochs"] == 1
    assert params("eval", base, {"epochs": 4})["epochs"] == 4
    monkeypatch.setenv("OPTIMIZER_EPOCHS", "3")
    assert params("eval", base, {"epochs": 4})["epochs"] == 3
    assert params("eval", [*base, "--epochs", "2"], {"epochs": 4})["epochs"] == 2


def write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(text, encoding="utf-8")
    inner = tmp_path / "sub" / "dir"
    inner.mkdir(parents=True)
    return inner


def test_project_defaults_command_tables_win_and_lists_of_models_are_joined(tmp_path: Path) -> None:
    start = write(tmp_path, '[tool.optimizer]\nmax-connections = 8\nmodels = ["sim:lexical", "sim:skim"]\n'
                  "rounds = 3\n[tool.optimizer.eval]\nmax_connections = 2\n")
    defaults = project_defaults(NAMES, start)
    assert defaults["eval"] == {"max_connections": 2, "models": "sim:lexical,sim:skim"}
    assert defaults["optimize"]["max_connections"] == 8 and defaults["optimize"]["rounds"] == 3
    assert "rounds" not in defaults["regress"]


def test_project_defaults_refuse_unknown_settings_and_bad_toml(tmp_path: Path) -> None:
    start = write(tmp_path, "[tool.optimizer]\nmax_conections = 8\n[tool.optimizer.evaluate]\nepochs = 2\n")
    with pytest.raises(ProjectSettingsError, match=r"max_conections, evaluate"):
        project_defaults(NAMES, start)
    (tmp_path / "pyproject.toml").write_text("[tool.optimizer\n", encoding="utf-8")
    with pytest.raises(ProjectSettingsError, match="pyproject.toml"):
        project_defaults(NAMES, start)
    assert project_defaults(NAMES, Path("/")) == {}


def test_the_cli_reads_the_project_table_and_exits_2_on_a_bad_one(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(write(tmp_path, "[tool.optimizer.eval]\nepochs = 5\n"))
    result = CliRunner().invoke(app, ["eval", "--help"], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert result.exit_code == 0 and "[default: 5]" in result.output
    (tmp_path / "pyproject.toml").write_text("[tool.optimizer]\nepoch = 5\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["eval", "--server", "s", "--tasks", "t"])
    assert result.exit_code == 2 and "[tool.optimizer] has settings no command takes: epoch" in result.output
    assert CliRunner().invoke(optimize_app, ["--help"]).exit_code == 0


def test_a_value_the_config_refuses_names_the_option(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["eval", "--server", "s", "--tasks", str(tmp_path), "--heldout", "1.5"],
                                env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert result.exit_code == 2 and "--heldout" in result.output
