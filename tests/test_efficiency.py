"""What an episode paid on its way to an answer: calls, failed calls, turns and tokens per task, beside accuracy."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fakes.anthropic_api import FakeAnthropicAPI, ScriptedPolicy, text_reply, tool_use_reply

from optimizer.efficiency import EpisodeCost, cost_change, efficiency_cell

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
