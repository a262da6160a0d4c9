"""`optimizer regress` end to end on the support example (offline agents), its outputs, and the false alarm rate
of its statistics under pure noise."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.browser import CHROMIUM, colours, screenshot

from optimizer.files.store import StoredEpisode
from optimizer.gate import judge

ROOT = Path(__file__).resolve().parent.parent
SUPPORT = f"{sys.executable} {ROOT / 'examples/support/server.py'}"
TASKS = str(ROOT / "examples/support/tasks")
REFERENCE = ROOT / "examples/support/reference-overlay.json"
Cli = Callable[..., Any]


@pytest.fixture
def regress(run_cli: Callable[..., Any]) -> Callable[..., Any]:
    """`regress(ARGS..., cwd=DIR, env=...)`: `optimizer regress` on the support example with runs under DIR/runs,
    in this process (conftest's run_cli), one episode at a time: one server process (each costs about a second of
    CPU to start) instead of four."""

    def run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return run_cli("regress", "--server", SUPPORT, "--tasks", TASKS, "--runs-dir", str(cwd / "runs"),
                       "--max-connections", "1", *args, cwd=cwd, env=env)

    return run


def overlay(tmp_path: Path, name: str, change: dict[str, str]) -> Path:
    """The reference overlay with some tools' descriptions replaced."""
    tools = json.loads(REFERENCE.read_text(encoding="utf-8"))["tools"]
    for tool, description in change.items():
        tools[tool] = {**tools[tool], "description": description}
    path = tmp_path / name
    path.write_text(json.dumps({"tools": tools}), encoding="utf-8")
    return path


@pytest.mark.slow
def test_a_planted_regression_fails_with_the_tasks_it_broke(regress: Cli, tmp_path: Path) -> None:
    tools = json.loads(REFERENCE.read_text(encoding="utf-8"))["tools"]
    swapped = overlay(tmp_path, "swap.json", {"track_shipment": tools["lookup_order"]["description"],
                                              "lookup_order": tools["track_shipment"]["description"]})
    summary = tmp_path / "step-summary.md"
    result = regress("--models", "sim:lexical,sim:skim", "--baseline", str(REFERENCE), "--candidate", str(swapped),
                     "--split", "all", "--max-drop", "0.02", "-o", "out/verdict.json", "-o", "out/verdict.junit.xml",
                     "-o", "out/verdict.md", cwd=tmp_path, env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert result.returncode == 1, result.stderr[-2000:]
    report = json.loads((tmp_path / "out/verdict.json").read_text(encoding="utf-8"))
    assert report["passed"] is False and report["offline"] is True
    lexical = report["results"]["sim:lexical"]
    assert not lexical["passed"] and lexical["delta"] < 0
    assert lexical["flipped_down"] and all(t.startswith(("order-", "track-")) for t in lexical["flipped_down"])
    suite = ET.parse(tmp_path / "out/verdict.junit.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("tests") == "2" and suite.get("failures") == "2"
    failure = suite.find("testcase[@name='sim:lexical']/failure")
    assert failure is not None and lexical["flipped_down"][0] in (failure.text or "")
    markdown = (tmp_path / "out/verdict.md").read_text(encoding="utf-8")
    assert "REGRESSION" in markdown and "| sim:lexical |" in markdown
    assert summary.read_text(encoding="utf-8") .startswith(markdown.rstrip("\n"))


@pytest.mark.slow
def test_a_margin_fails_a_drop_the_significance_test_cannot_see(regress: Cli, tmp_path: Path) -> None:
    """Two tools' descriptions swapped, 20 held-out tasks: a 5-point drop no paired test on 20 tasks can call
    significant. Without a margin that passes as underpowered (tests/test_gate.py); with --margin 0.05 it regresses."""
    tools = json.loads(REFERENCE.read_text(encoding="utf-8"))["tools"]
    swapped = overlay(tmp_path, "swap.json", {"track_shipment": tools["lookup_order"]["description"],
                                              "lookup_order": tools["track_shipment"]["description"]})
    result = regress("--models", "sim:lexical,sim:skim", "--baseline", str(REFERENCE), "--candidate", str(swapped),
                     "--margin", "0.05", "-o", "out/verdict.json", "-o", "out/verdict.md", cwd=tmp_path)
    assert result.returncode == 1, result.stderr[-2000:]
    report = json.loads((tmp_path / "out/verdict.json").read_text(encoding="utf-8"))
    assert report["margin"] == 0.05
    for row in report["results"].values():
        assert row["verdict"] == "regressed" and row["p_holm"] > 0.05 and row["underpowered"]
        assert row["detectable_drop"] > 0.05 and row["tasks_needed"] > 20
    markdown = (tmp_path / "out/verdict.md").read_text(encoding="utf-8")
    assert "non-inferiority" in markdown and "UNDERPOWERED" in markdown and "Underpowered for" in markdown
    page = Path(report["report_html"])
    assert page.exists() and "Changed definitions" in page.read_text(encoding="utf-8")
    assert f"report: {page}" in result.stdout.replace("\n", "")  # the last thing regress prints
    if CHROMIUM is not None:
        shot = tmp_path / "regress.png"
        console = screenshot(page, shot)
        assert not [m for m in console if re.search(r"error|uncaught|warn", m, re.IGNORECASE)], console
        assert colours(shot) > 50


@pytest.mark.slow
def test_same_behaviour_passes_and_a_rerun_costs_nothing(regress: Cli, run_cli: Cli, tmp_path: Path) -> None:
    tools = json.loads(REFERENCE.read_text(encoding="utf-8"))["tools"]
    reworded = overlay(tmp_path, "same.json", {"get_policy": tools["get_policy"]["description"] + " "})
    args = ["--models", "sim:lexical?noise=0.2", "--baseline", str(REFERENCE), "--candidate", str(reworded),
            "--epochs", "2", "--run-id", "same", "--json"]
    first = regress(*args, cwd=tmp_path)
    assert first.returncode == 0, first.stderr[-2000:]
    row = json.loads(first.stdout)["results"]["sim:lexical?noise=0.2"]
    assert row["method"] == "bootstrap" and set(row["pass_k"]) == {"before", "after"} and row["steps"]["after"] > 0
    again = run_cli("regress", "--resume", "same", "--runs-dir", str(tmp_path / "runs"), "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["episodes"]["run"] == 0


def test_bad_output_name_and_missing_options_exit_2(regress: Cli, tmp_path: Path) -> None:
    assert regress("--models", "sim:lexical", "-o", "verdict.txt", cwd=tmp_path).returncode == 2
    missing = regress(cwd=tmp_path)
    assert missing.returncode == 2 and "--models" in missing.stderr


def _episodes(side: str, model: str, rates: dict[str, float], epochs: int, rng: random.Random) -> list[StoredEpisode]:
    return [StoredEpisode(f"{side}-{task}-{e}", model, task, "heldout", side, e, "completed", rng.random() < p,
                          {"turns": 2, "usage": {}}) for task, p in rates.items() for e in range(epochs)]


@pytest.mark.slow
@pytest.mark.parametrize("epochs", [1, 3])
def test_false_alarm_rate_under_noise_stays_at_or_below_alpha(epochs: int) -> None:
    """Identical definitions, independent noisy outcomes on both sides: how often does the gate cry wolf?"""
    alarms, trials, alpha = 0, 100, 0.05
    for seed in range(trials):
        rng = random.Random(seed)
        rates = {f"t{i}": rng.choice([0.1, 0.5, 0.7, 0.9]) for i in range(30)}
        before, after = [], []
        for model in ("m1", "m2"):
            before += _episodes("a", model, rates, epochs, rng)
            after += _episodes("b", model, rates, epochs, rng)
        passed, _ = judge(["m1", "m2"], before, after, max_drop=None, alpha=alpha, seed=seed)
        alarms += not passed
    assert alarms / trials <= alpha, f"{alarms} false alarms in {trials}"


@pytest.mark.slow
def test_regress_with_an_openai_compatible_model_through_its_fake(regress: Cli, tmp_path: Path) -> None:
    pytest.importorskip("openai")
    from fakes.openai_api import FakeOpenAIAPI, SimPolicy

    tools = json.loads(REFERENCE.read_text(encoding="utf-8"))["tools"]
    swapped = overlay(tmp_path, "swap.json", {"track_shipment": tools["lookup_order"]["description"],
                                              "lookup_order": tools["track_shipment"]["description"]})
    with FakeOpenAIAPI(SimPolicy("lexical"), known_models=["gpt-test"]) as api:
        result = regress("--models", "openai:gpt-test", "--openai-base-url", api.base_url, "--baseline",
                         str(REFERENCE), "--candidate", str(swapped), "--split", "all", "--max-drop", "0.02",
                         "--json", cwd=tmp_path, env={"OPENAI_API_KEY": "sk-test-regress"})
        assert api.calls["/v1/chat/completions"] > 0
    assert result.returncode == 1, result.stderr[-2000:]
    row = json.loads(result.stdout)["results"]["openai:gpt-test"]
    assert not row["passed"] and row["flipped_down"]
