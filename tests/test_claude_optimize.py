"""`optimize` and `eval` with Claude models and the Claude proposer, end to end through the real SDK and the local
fake Messages API: the proposer's candidates reach winning.patch, costs are counted, --max-usd stops and resumes."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import small_tasks
from fakes.anthropic_api import FakeAnthropicAPI, SimPolicy, tool_use_reply

pytestmark = pytest.mark.slow  # end-to-end runs: scheduled first (see conftest.py)

ROOT = Path(__file__).resolve().parent.parent
SUPPORT = f"{sys.executable} {ROOT / 'examples/support/server.py'}"
TASKS = str(ROOT / "examples/support/tasks")
KEY = "sk-ant-test-fedcba9876543210"
Cli = Callable[..., Any]
REFERENCE = json.loads((ROOT / "examples/support/reference-overlay.json").read_text(encoding="utf-8"))


def without_values(edit: dict[str, Any]) -> dict[str, Any]:
    """The hand-written overlay quotes example values of the train prompts, which the leakage guard rightly
    refuses."""
    def clean(text: str) -> str:
        return re.sub(r"[#$]?\w*\d[\w.-]*", "N", text)

    return {**edit, "description": clean(edit["description"]),
            "parameters": {k: clean(v) for k, v in edit.get("parameters", {}).items()}}


class Router:
    """Agent turns go to the offline agent; the proposer's forced `submit_candidates` call gets the reference
    overlay as its one candidate (a stand-in for what Claude would write)."""

    def __init__(self) -> None:
        self.agent = SimPolicy("lexical")
        self.proposals = 0

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        if (request.get("tool_choice") or {}).get("name") == "submit_candidates":
            self.proposals += 1
            tools = [{"tool": name, **without_values(edit)} for name, edit in REFERENCE["tools"].items()]
            return tool_use_reply("submit_candidates", {"candidates": [
                {"rationale": "Say what each tool is for and where its neighbours take over.",
                 "namespace": {"scheme": "none"}, "tools": tools}]})
        return self.agent(request)


@pytest.fixture
def run(run_cli: Callable[..., Any]) -> Callable[..., Any]:
    """`run(ARGS..., api=FAKE, cwd=DIR)`: `optimize ARGS` (or `optimizer ARGS` with script="optimizer") in this
    process, with the key and base URL of the fake Messages API."""

    def run(*args: str, api: FakeAnthropicAPI, cwd: Path, script: str = "optimize") -> Any:
        return run_cli(*args, cwd=cwd, script=script,
                       env={"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.base_url})

    return run


def test_optimize_with_claude_models_and_proposer(run: Cli, tmp_path: Path) -> None:
    router = Router()
    with FakeAnthropicAPI(router) as api:
        result = run("--server", SUPPORT, "--tasks", str(small_tasks(tmp_path)), "--rounds", "1", "--trials", "2",
                     "--max-connections", "16", "--server-instances", "1", "--heldout-candidates", "1",
                     "--runs-dir", str(tmp_path), "--run-id", "claude", "--json", api=api, cwd=tmp_path)
        assert result.returncode in (0, 1), result.stderr[-3000:]
        summary = json.loads(result.stdout)
        again = run("--resume", "claude", "--runs-dir", str(tmp_path), "--json", api=api, cwd=tmp_path)
        usage = api.usage_totals()
    assert summary["models"] == ["claude-haiku-5-5", "claude-sonnet-5-5"] and summary["offline"] is False
    assert summary["proposer"] == "claude-opus-5-5" and router.proposals == 1
    assert summary["rounds"][0]["proposer"]["returned"] == 1
    shipped = (tmp_path / "claude" / "winning.patch").read_text(encoding="utf-8")
    report = (tmp_path / "claude" / "report.md").read_text(encoding="utf-8")
    assert summary["winner"]["candidate"] != summary["baseline"]["candidate"]
    assert "Check the status of a refund already issued" in (shipped or report)  # the proposer's words reached it
    assert bool(shipped) == (summary["shipped"]["reason"] is None)  # a larger winner ships only for a held-out gain
    held_back = tmp_path / "claude" / "candidate-overlay.json"
    assert held_back.exists() == bool(summary["shipped"]["reason"])  # a held-back winner is kept to try by hand
    assert summary["shipped"]["candidate_overlay"] == (str(held_back) if held_back.exists() else None)
    cost = summary["cost"]
    assert cost["usd"] > 0 and cost["proposer"]["model"] == "claude-opus-5-5" and cost["proposer"]["usd"] > 0
    assert set(cost["by_model"]) == {"claude-haiku-5-5", "claude-sonnet-5-5"}
    read = usage["cache_read_input_tokens"]
    assert read > 0.7 * (read + usage["input_tokens"] + usage["cache_creation_input_tokens"])
    assert again.returncode == result.returncode and router.proposals == 1  # a re-run asks nothing again
    assert json.loads(again.stdout)["episodes"]["run"] == 0
    assert "proposer's rationale" in report and "OFFLINE" not in report


def test_max_usd_stops_cleanly_and_resume_continues(run: Cli, tmp_path: Path) -> None:
    with FakeAnthropicAPI(SimPolicy("lexical")) as api:
        args = ["eval", "--server", SUPPORT, "--tasks", TASKS, "--models", "claude-haiku-5-5", "--runs-dir",
                str(tmp_path), "--json", "--server-instances", "1"]  # one server process is enough here
        stopped = run(*args, "--run-id", "budget", "--max-usd", "0.02", api=api, cwd=tmp_path, script="optimizer")
        assert stopped.returncode == 2 and "--max-usd" in stopped.stderr and "--resume budget" in stopped.stderr
        finished = run("eval", "--resume", "budget", "--runs-dir", str(tmp_path), "--max-usd", "5", "--json",
                       api=api, cwd=tmp_path, script="optimizer")
    assert finished.returncode == 0, finished.stderr[-2000:]
    report = json.loads(finished.stdout)
    assert report["episodes"]["cached"] > 0 and report["episodes"]["run"] > 0
