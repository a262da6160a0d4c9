"""What an episode paid on its way to an answer: calls, failed calls, turns and tokens per task, beside accuracy."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fakes.anthropic_api import FakeAnthropicAPI, ScriptedPolicy, text_reply, tool_use_reply

from optimizer.stats.efficiency import EpisodeCost, cost_change, efficiency_cell

ROOT = Path(__file__).resolve().parent.parent
SUPPORT = f"{sys.executable} {ROOT / 'examples/support/server.py'}"
Cli = Callable[..., Any]
TASK = """- id: order-charged
  prompt: "How much was I charged for order #10007?"
  expect:
    answer: "$219.40"
    tools: [lookup_order]
  split: heldout
"""


def test_eval_counts_the_calls_the_failed_calls_turns_and_tokens_of_each_task(run_cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "one.yaml").write_text(TASK, encoding="utf-8")
    policy = ScriptedPolicy([tool_use_reply("find_order", {"order_id": "#10007"}),  # no such tool: a failed call
                             tool_use_reply("lookup_order", {"order_id": "#10007"}),
                             text_reply("<response>$219.40</response>")])
    with FakeAnthropicAPI(policy) as api:
        result = run_cli("eval", "--server", SUPPORT, "--tasks", str(tmp_path / "tasks"), "--models",
                         "claude-haiku-5-5", "--runs-dir", str(tmp_path), "--json",
                         env={"ANTHROPIC_API_KEY": "sk-test-efficiency", "ANTHROPIC_BASE_URL": api.base_url})
        usage = api.usage_totals()
    assert result.returncode == 0, result.stderr[-3000:]
    cell = json.loads(result.stdout)["results"]["claude-haiku-5-5"]["heldout"]
    assert cell["passed"] == 1
    assert (cell["calls_per_task"], cell["failed_calls_per_task"], cell["turns_per_task"]) == (2, 1, 3)
    assert cell["tokens_per_task"] == sum(usage[k] for k in ("input_tokens", "output_tokens", "cache_read_input_tokens",
                                                             "cache_creation_input_tokens"))


def test_a_reader_calls_nothing_and_the_means_are_per_episode() -> None:
    reading = {"reading": ["lookup_order"], "calls": [{"name": "lookup_order", "is_error": False}], "turns": 0}
    assert EpisodeCost.of(reading) == EpisodeCost()
    episode = {"calls": [{"is_error": True}, {"is_error": False}], "turns": 3,
               "usage": {"input_tokens": 10, "cache_read_tokens": 90, "output_tokens": 5}}
    assert EpisodeCost.of(episode) == EpisodeCost(calls=2, failed_calls=1, turns=3, tokens=105)
    cell = efficiency_cell([EpisodeCost.of(episode), EpisodeCost(calls=1, turns=2, tokens=100)])
    assert cell == {"calls_per_task": 1.5, "failed_calls_per_task": 0.5, "turns_per_task": 2.5, "tokens_per_task": 102}
    key = "failed_calls_per_task"
    assert cost_change({key: 5.6}, {key: 0}, key) == "5.6 → 0"
    assert cost_change({}, {"calls_per_task": 1}, "calls_per_task") == "–"


ORDERS = [("10007", "Dana Whitfield", "train"), ("10011", "Julia Souza", "train"), ("10022", "Julia Souza", "train"),
          ("10025", "Ben Okafor", "train"), ("10029", "Julia Souza", "heldout"), ("10012", "Dana Whitfield", "heldout")]
CLEAR = "Look up one order by its number; order numbers start with #."


def careful_agent(request: dict[str, Any]) -> dict[str, Any]:
    """A fake agent that always gets there: it calls lookup_order at once when the tool says how order numbers are
    written, and otherwise first tries a tool that does not exist (a failed call); it answers with the result. The
    proposer's forced request gets two candidates that pass alike: a short one, and a longer one that says it."""
    if (request.get("tool_choice") or {}).get("name") == "submit_candidates":
        return tool_use_reply("submit_candidates", {"candidates": [
            {"rationale": "shorter", "namespace": {"scheme": "none"},
             "tools": [{"tool": "lookup_order", "description": "Look up one order by its number."}]},
            {"rationale": "say the format", "namespace": {"scheme": "none"},
             "tools": [{"tool": "lookup_order", "description": CLEAR}]}]})
    messages = request["messages"]
    results = [b for m in messages if isinstance(m["content"], list) for b in m["content"]
               if b.get("type") == "tool_result"]
    told = any("start with #" in (t.get("description") or "") for t in request["tools"])
    number = next(o for o, _, _ in ORDERS if o in str(messages[0]["content"]))
    if results and not results[-1].get("is_error"):
        content = results[-1]["content"]
        return text_reply(f"<response>{content if isinstance(content, str) else content[0]['text']}</response>")
    if not results and not told:
        return tool_use_reply("find_order", {"number": number})
    return tool_use_reply("lookup_order", {"order_id": f"#{number}"})


@pytest.mark.parametrize("objective", ["mean", "efficiency"])
def test_optimize_picks_the_candidate_with_fewer_failed_calls_when_accuracy_ties(run_cli: Cli, tmp_path: Path,
                                                                                 objective: str) -> None:
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "orders.yaml").write_text("".join(
        f'- id: who-{number}\n  prompt: "Who placed order {number}?"\n  expect:\n    answer: "{name}"\n'
        f"    tools: [lookup_order]\n  split: {split}\n" for number, name, split in ORDERS), encoding="utf-8")
    with FakeAnthropicAPI(careful_agent) as api:
        result = run_cli("--server", SUPPORT, "--tasks", str(tmp_path / "tasks"), "--models", "claude-haiku-5-5",
                         "--proposer", "claude-opus-5-5", "--rounds", "1", "--trials", "2", "--heldout-candidates", "1",
                         "--objective", objective,
                         "--runs-dir", str(tmp_path), "--run-id", "tie", "--json", script="optimize",
                         env={"ANTHROPIC_API_KEY": "sk-test-efficiency", "ANTHROPIC_BASE_URL": api.base_url})
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads(result.stdout)
    baseline, winner = (summary[side]["train"]["claude-haiku-5-5"] for side in ("baseline", "winner"))
    assert baseline["accuracy"] == winner["accuracy"] == 1.0  # every candidate passes: accuracy cannot choose
    assert (baseline["failed_calls_per_task"], winner["failed_calls_per_task"]) == (1, 0)
    overlay = json.loads((tmp_path / "tie" / "overlay.json").read_text(encoding="utf-8"))
    assert overlay["tools"]["lookup_order"]["description"] == CLEAR  # the longer text: fewer failed calls
    assert summary["winner"]["heldout"]["claude-haiku-5-5"]["failed_calls_per_task"] == 0
    front = summary["rounds"][0]["front"]
    if objective == "efficiency":  # the search's own value already ranks the clear text first: 1.0 against 0.9
        assert [round(e["accuracy"], 4) for e in front if e["selected"]] == [1.0]


def test_regress_reports_more_failed_calls_at_equal_accuracy_and_fails_on_them_when_asked(
        run_cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "orders.yaml").write_text("".join(
        f'- id: who-{number}\n  prompt: "Who placed order {number}?"\n  expect:\n    answer: "{name}"\n'
        f"    tools: [lookup_order]\n  split: heldout\n" for number, name, _ in ORDERS), encoding="utf-8")
    candidate = tmp_path / "candidate.json"  # a text that sends the fake agent to a wrong tool first
    candidate.write_text(json.dumps({"tools": {"lookup_order": {"description": "Look up one order by its number."}}}),
                         encoding="utf-8")

    def misled_agent(request: dict[str, Any]) -> dict[str, Any]:
        misled = any("by its number" in (t.get("description") or "") for t in request["tools"])
        tools = [{**t, "description": CLEAR if not misled and t["name"] == "lookup_order" else t.get("description")}
                 for t in request["tools"]]
        return careful_agent({**request, "tools": tools})

    args = ("regress", "--server", SUPPORT, "--tasks", str(tmp_path / "tasks"), "--models", "claude-haiku-5-5",
            "--candidate", str(candidate), "--runs-dir", str(tmp_path), "--json")
    env = {"ANTHROPIC_API_KEY": "sk-test-efficiency"}
    with FakeAnthropicAPI(misled_agent) as api:
        reported = run_cli(*args, env={**env, "ANTHROPIC_BASE_URL": api.base_url})
        failed = run_cli(*args, "--fail-on-failed-calls", "-o", str(tmp_path / "regress.md"),
                         env={**env, "ANTHROPIC_BASE_URL": api.base_url})
    assert reported.returncode == 0, reported.stderr[-3000:]
    row = json.loads(reported.stdout)["results"]["claude-haiku-5-5"]
    assert row["before"] == row["after"] == 1.0 and row["passed"]
    calls = row["failed_calls"]
    assert (calls["before"], calls["after"], calls["delta"]) == (0, 1, 1) and calls["raised"] and calls["ci"] == [1, 1]
    assert failed.returncode == 1, failed.stderr[-3000:]
    verdict = json.loads(failed.stdout)["results"]["claude-haiku-5-5"]
    assert not verdict["passed"] and verdict["reason"].startswith("failed calls rose significantly")
    table = (tmp_path / "regress.md").read_text(encoding="utf-8")
    assert "0.00 → 1.00 (+1.00, CI +1.00 to +1.00)" in table and "a significant rise in failed calls" in table
