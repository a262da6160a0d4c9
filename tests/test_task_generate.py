"""`optimizer tasks generate` through the real anthropic SDK against the local fake Messages API: the model explores
with the calls it may make, submits tasks with a forced tool call, and validation keeps only what the server holds."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fakes.anthropic_api import FakeAnthropicAPI, ScriptedPolicy, text_reply, tool_use_reply

from optimizer.tasks import load_tasks

ROOT = Path(__file__).resolve().parent.parent
SUPPORT = f"{sys.executable} {ROOT / 'examples/support/server.py'}"
Cli = Callable[..., Any]
ORDER = {"tool": "lookup_order", "arguments": {"order_id": "#10007"}}
SUBMITTED = [
    {"prompt": "How much did order #10007 cost in total?", "answer": "$219.40", "tools": ["lookup_order"],
     "calls": [ORDER], "kind": "lookup"},
    {"prompt": "When was order #10007 delivered?", "answer": "2029-01-01", "tools": ["lookup_order"],  # planted
     "calls": [ORDER], "kind": "lookup"},
    {"prompt": "Use lookup_order on #10007 and tell me the carrier.", "answer": "UPS", "tools": ["lookup_order"],
     "calls": [ORDER], "kind": "near_miss"},
    {"prompt": "What is the order_id of Dana's walnut table order?", "answer": "#10007", "tools": ["lookup_order"],
     "calls": [ORDER], "kind": "parameter_trap"},
    {"prompt": "Refund order #10007.", "answer": "refund", "tools": ["refund_order"],
     "calls": [{"tool": "refund_order", "arguments": {"order": "#10007", "amount": 1}}], "kind": "lookup"},
    {"prompt": "Which carrier ships order #10007?", "answer": "UPS", "tools": ["ghost_tool"], "calls": [ORDER],
     "kind": "lookup"},
]


@pytest.mark.slow
def test_claude_explores_submits_and_only_tasks_that_hold_are_written(run_cli: Cli, tmp_path: Path) -> None:
    policy = ScriptedPolicy([
        tool_use_reply("lookup_order", {"order_id": "#10007"}),
        tool_use_reply("refund_order", {"order": "#10007", "amount": 1}),  # not read-only: refused
        text_reply("I have seen enough."),  # no tool call: submitting is forced next
        tool_use_reply("submit_tasks", {"tasks": SUBMITTED}),
    ])
    with FakeAnthropicAPI(policy) as api:
        result = run_cli("tasks", "generate", "--server", SUPPORT, "--out", str(tmp_path / "tasks"), "--runs-dir",
                         str(tmp_path / "runs"), "--json",
                         env={"ANTHROPIC_API_KEY": "sk-test-generate", "ANTHROPIC_BASE_URL": api.base_url})
        bodies = [r["body"] for r in api.requests if r["path"] == "/v1/messages"]
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads(result.stdout)
    assert summary["submitted"] == 6 and summary["written"] == 1 and summary["usd"] > 0
    reasons = {d["task"]: d["reason"] for d in summary["dropped"]}
    assert "not in what the expected calls return now" in reasons["lookup-2"]  # the planted wrong answer
    assert "tool-named" in reasons["near-miss-3"] and "parameter order_id" in reasons["parameter-trap-4"]
    assert "refund_order, which the generator may not call" in reasons["lookup-5"]
    assert "ghost_tool" in reasons["entry 6"]
    # the wire: the server's tools fenced as data, the read-only ones callable, submitting forced after a text turn
    assert "<untrusted" in bodies[0]["messages"][0]["content"]
    assert {t["name"] for t in bodies[0]["tools"]} >= {"lookup_order", "submit_tasks"}
    assert "tool_choice" not in bodies[0] and bodies[3]["tool_choice"] == {"type": "tool", "name": "submit_tasks"}
    refused = bodies[2]["messages"][-1]["content"][0]
    assert refused["is_error"] and "not available while writing tasks" in refused["content"]
    run_dir = Path(summary["run_dir"])
    calls = [json.loads(line) for line in (run_dir / "calls.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [c["tool"] for c in calls] == ["lookup_order", "refund_order"] and "sk-test" not in result.stdout
    tasks = load_tasks(tmp_path / "tasks" / "generated.yaml").tasks
    assert [t.id for t in tasks] == ["lookup-1"] and dict(tasks[0].provenance)["model"] == "claude-opus-5-5"
    assert tasks[0].expect.calls == (("lookup_order", '{"order_id": "#10007"}'),)
    again = run_cli("tasks", "check", str(tmp_path / "tasks"), "--server", SUPPORT, "--replay", "--json")
    kinds = {p["kind"] for p in json.loads(again.stdout)["problems"]}
    assert kinds == {"untested-tool"}  # one task covers one tool; what was written replays cleanly


def test_without_a_key_it_says_what_to_set(run_cli: Cli, tmp_path: Path) -> None:
    result = run_cli("tasks", "generate", "--server", SUPPORT, "--out", str(tmp_path), "--runs-dir", str(tmp_path),
                     env={"ANTHROPIC_API_KEY": None})
    assert result.returncode == 2 and "ANTHROPIC_API_KEY" in result.stderr


@pytest.mark.slow
def test_max_usd_forces_the_submission_once_most_of_it_is_spent(run_cli: Cli, tmp_path: Path) -> None:
    policy = ScriptedPolicy([tool_use_reply("lookup_order", {"order_id": "#10007"}),
                             tool_use_reply("submit_tasks", {"tasks": SUBMITTED[:1]})])
    with FakeAnthropicAPI(policy) as api:
        result = run_cli("tasks", "generate", "--server", SUPPORT, "--out", str(tmp_path / "tasks"), "--runs-dir",
                         str(tmp_path / "runs"), "--max-usd", "0.000001", "--json",
                         env={"ANTHROPIC_API_KEY": "sk-test-generate", "ANTHROPIC_BASE_URL": api.base_url})
        bodies = [r["body"] for r in api.requests if r["path"] == "/v1/messages"]
    assert result.returncode == 0, result.stderr[-3000:]
    assert "tool_choice" not in bodies[0]  # nothing spent yet
    assert bodies[1]["tool_choice"] == {"type": "tool", "name": "submit_tasks"}  # the first reply spent the budget
    assert json.loads(result.stdout)["written"] == 1


@pytest.mark.slow
def test_a_stopped_generation_resumes_without_asking_again_for_its_turns(run_cli: Cli, tmp_path: Path) -> None:
    runs, env = tmp_path / "runs", {"ANTHROPIC_API_KEY": "sk-test-generate"}
    args = ["tasks", "generate", "--server", SUPPORT, "--out", str(tmp_path / "tasks"), "--runs-dir", str(runs)]
    with FakeAnthropicAPI(ScriptedPolicy([tool_use_reply("lookup_order", {"order_id": "#10007"})])) as api:
        failed = run_cli(*args, env={**env, "ANTHROPIC_BASE_URL": api.base_url})  # the second request fails
    assert failed.returncode == 2
    (run_dir,) = runs.iterdir()
    assert len((run_dir / "turns.jsonl").read_text(encoding="utf-8").splitlines()) == 1
    other = run_cli(*args, "--resume", run_dir.name, "--n", "5", env=env)
    assert other.returncode == 2 and "n was 40, now 5" in other.stderr
    with FakeAnthropicAPI(ScriptedPolicy([tool_use_reply("submit_tasks", {"tasks": SUBMITTED[:1]})])) as api:
        resumed = run_cli(*args, "--resume", run_dir.name, "--json", env={**env, "ANTHROPIC_BASE_URL": api.base_url})
        bodies = [r["body"] for r in api.requests if r["path"] == "/v1/messages"]
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert len(bodies) == 1  # the first turn came from the journal, with its tool result
    assert bodies[0]["messages"][2]["content"][0]["type"] == "tool_result"
    summary = json.loads(resumed.stdout)
    assert summary["written"] == 1 and summary["calls"] == 1 and summary["run_dir"] == str(run_dir)
    again = run_cli(*args[:5], str(tmp_path / "elsewhere"), *args[6:], "--resume", run_dir.name, env=env)
    assert again.returncode == 2 and "has finished" in again.stderr
