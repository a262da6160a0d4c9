"""The test bed under a real model, replayed: the published servers' recorded runs (examples/published/*/recorded/,
every answer written by a Claude model) give their recorded results with no key. Here: every server has a recording,
a changed task prompt stops a sample's replay (time's `optimize`) naming the request, and a replay that differs from
its outcome.json is named. `.ci/run` replays every recording whole (`python bench/testbed.py --replay`, which fails
on any replay that stops or differs from its recording): a whole replay takes 20 s to 10 min a server, too long
for `pytest -q`."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

pytestmark = [pytest.mark.slow, pytest.mark.published]

REPO = Path(__file__).resolve().parent.parent
PUBLISHED = REPO / "examples" / "published"
NO_API = {"ANTHROPIC_API_KEY": None, "ANTHROPIC_BASE_URL": None}
SAMPLE = "time"
Cli = Callable[..., Any]


def bench_module() -> Any:
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import testbed_real as module
    finally:
        sys.path.remove(str(REPO / "bench"))
    return module


def needs_time_server() -> None:
    if not Path(sys.executable).with_name("mcp-server-time").exists():
        pytest.skip("mcp-server-time is not installed (tests/installs.py installs it)")
    sys.path.insert(0, str(PUBLISHED))
    try:
        import launch
    finally:
        sys.path.remove(str(PUBLISHED))
    if not any(Path(p).is_file() for p in launch.FAKETIME_LIBRARIES):
        pytest.skip("libfaketime is missing: apt-get install faketime (tests/installs.py installs it as root)")


def cli_args(argv: list[str], runs: Path) -> tuple[str, list[str]]:
    """A recorded command as run_cli's script and arguments, into `runs`."""
    return argv[0], [*argv[1:], "--runs-dir", str(runs), "--run-id", "replay"]


NOT_YET_RECORDED: dict[str, str] = {}
"""Servers whose recording is being made (again), with why: each is an expected failure until it lands."""


@pytest.mark.parametrize("name", sorted(bench_module().FLAGS))
def test_every_published_server_has_a_recorded_real_model_run(name: str) -> None:
    if name in NOT_YET_RECORDED:
        pytest.xfail(NOT_YET_RECORDED[name])
    recording = PUBLISHED / name / "recorded" / "optimize"
    provenance = json.loads((recording / "provenance.json").read_text(encoding="utf-8"))
    assert provenance["command"] == "optimize" and provenance["answered_by"]
    assert (recording / "outcome.json").is_file() and (recording / "answers.jsonl").is_file()


def test_a_server_not_yet_recorded_is_one_without_a_recording() -> None:
    for name in NOT_YET_RECORDED:
        assert not (PUBLISHED / name / "recorded" / "optimize").exists(), f"{name} is recorded: drop it from the list"


def test_a_changed_task_prompt_stops_the_replay_naming_the_request(run_cli: Cli, tmp_path: Path) -> None:
    needs_time_server()
    tasks = tmp_path / "tasks"
    shutil.copytree(PUBLISHED / SAMPLE / "tasks", tasks)
    first = sorted(tasks.glob("*.yaml"))[0]
    loaded = yaml.safe_load(first.read_text(encoding="utf-8"))
    loaded[0]["prompt"] = "Quick question, reworded: " + loaded[0]["prompt"]
    first.write_text(yaml.safe_dump(loaded, sort_keys=False), encoding="utf-8")
    argv = bench_module().command(SAMPLE, "optimize")
    argv[argv.index("--tasks") + 1] = str(tasks)
    script, args = cli_args(argv, tmp_path / "runs")
    result = run_cli(*args, script=script, env=NO_API)
    assert result.returncode == 2, result.stderr[-3000:]
    assert "no recorded answer in" in result.stderr and "Quick question, reworded" in result.stderr


def test_a_replay_that_differs_from_its_outcome_is_named() -> None:
    bench = bench_module()
    recorded = {"baseline": {"heldout": {"m": {"passed": 3, "n": 10}}}, "candidates": [{"id": "a"}]}
    replayed = {"baseline": {"heldout": {"m": {"passed": 4, "n": 10, "added": 1}}}, "candidates": [{"id": "a"}]}
    assert bench.differences(replayed, recorded) == ["baseline.heldout.m.passed: recorded 3, replayed 4"]
    assert bench.differences({**replayed, "baseline": recorded["baseline"]}, recorded) == []
    assert bench.differences({"candidates": []}, {"candidates": [{"id": "a"}]}) == [
        "candidates: recorded [{'id': 'a'}], replayed []"]
