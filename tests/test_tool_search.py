"""Tool search: the index (bm25 and regex), the agent loop behind it (only the search tool at first, loaded tools
after, deferred tools not callable), what the offline agents search for, and eval/optimize with --tool-search."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import small_tasks
from fakes.sim import SimAgent
from test_episode import FakeServer, ScriptedModel, answer, call, calls_turn

from optimizer.definitions import Candidate, Catalog, ToolDef, apply
from optimizer.run.episode import EpisodeConfig, run_episode
from optimizer.tasks import Expect, Task
from optimizer.tool_search import SEARCH_TOOL, TOP_K, ToolSearch

ROOT = Path(__file__).resolve().parent.parent
SUPPORT = f"{sys.executable} {ROOT / 'examples/support/server.py'}"
TASKS = str(ROOT / "examples/support/tasks")
Cli = Callable[..., Any]

SHOP = Catalog("shop", (
    ToolDef("get_customer", "Look up a customer by email; returns their tier and address."),
    ToolDef("lookup_order", "Look up an order by number; returns items and total.",
            {"type": "object", "properties": {"order_id": {"type": "string", "description": "Order number #NNNNN."}}}),
    ToolDef("track_shipment", "Track a parcel in transit: carrier and latest scan."),
    *(ToolDef(f"report_{n}", f"Monthly report number {n}.") for n in range(8)),
))
EXPOSED = apply(SHOP, Candidate())


def test_bm25_ranks_by_name_description_and_parameters_and_returns_at_most_five() -> None:
    search = ToolSearch(EXPOSED, "bm25")
    assert search.search("where is my parcel").names == ("track_shipment",)
    assert search.search("order number").names[0] == "lookup_order"
    assert len(search.search("monthly report").names) == TOP_K
    assert search.search("zebra").names == ()


def test_regex_matches_names_and_descriptions_and_a_bad_pattern_says_so() -> None:
    search = ToolSearch(EXPOSED, "regex")
    assert search.search("parcel|customer").names == ("get_customer", "track_shipment")
    found = search.search("(unclosed")
    assert found.names == () and "regular expression" in (found.error or "")
    assert "regular expression" in search.tool.input_schema["properties"]["query"]["description"]


def test_the_agent_sees_the_search_tool_first_then_what_it_loaded_and_cannot_call_the_rest() -> None:
    model = ScriptedModel([
        calls_turn(call("c1", "get_customer", email="a@b.c")),  # deferred and not loaded
        calls_turn(call("s1", SEARCH_TOOL, query="parcel in transit")),
        calls_turn(call("c2", "track_shipment")),
        answer("on its way"),
    ])
    server = FakeServer()
    task = Task(id="t", prompt="Where is my parcel?", expect=Expect(tools=("track_shipment",)), split="train")
    episode = asyncio.run(run_episode(task, model, EXPOSED, server, EpisodeConfig(),
                                      search=ToolSearch(EXPOSED, "bm25")))
    assert model.seen[0]["tools"] == [SEARCH_TOOL] and model.seen[1]["tools"] == [SEARCH_TOOL]
    assert model.seen[2]["tools"] == [SEARCH_TOOL, "track_shipment"]
    assert server.calls == [("track_shipment", {})]  # the unloaded call never reached the server
    assert episode.called_tools == ["track_shipment"]  # ... and does not count as called
    assert episode.calls[0].is_error and "not loaded" in episode.calls[0].result
    assert episode.searches == [{"query": "parcel in transit", "found": ["track_shipment"]}]


def test_offline_agents_search_each_clause_then_call_what_they_found() -> None:
    search = ToolSearch(EXPOSED, "bm25")
    task = Task(id="t", prompt="Where is my parcel? Track the shipment of order #10007.", expect=Expect(),
                split="train")
    episode = asyncio.run(run_episode(task, SimAgent("lexical"), EXPOSED, FakeServer(), EpisodeConfig(),
                                      search=search))
    assert episode.searches and all(s["query"] and SEARCH_TOOL not in s["query"] for s in episode.searches)
    assert "track_shipment" in episode.loaded and episode.called_tools[:1] == ["track_shipment"]


@pytest.mark.slow
def test_eval_with_tool_search_reports_recall_and_does_not_reuse_episodes_run_without_it(
    run_cli: Cli, tmp_path: Path
) -> None:
    args = ["eval", "--server", SUPPORT, "--tasks", TASKS, "--models", "sim:lexical", "--server-instances", "1",
            "--runs-dir", str(tmp_path), "--json"]
    plain = json.loads(run_cli(*args, "--run-id", "plain").stdout)
    result = run_cli(*args, "--run-id", "searched", "--tool-search", "bm25")
    assert result.returncode == 0, result.stderr[-3000:]
    searched = json.loads(result.stdout)
    assert "search" not in plain and searched["tool_search"] == "bm25"
    row = searched["search"]["sim:lexical"]
    assert row["n"] == 66 and 0 < row["found"] < row["n"] and row["recall"] == round(row["found"] / 66, 4)
    assert 0 < row["called"] <= row["found"]  # an agent can only call what its searches loaded
    assert searched["results"] != plain["results"]  # the agent worked behind the search, not from a cache
    unfound = searched["unfound"]
    assert unfound and all(1 <= len(queries) <= 5 for queries in unfound.values())
    assert len(unfound) <= row["n"] - row["found"]
    line = (tmp_path / "searched" / "transcripts").glob("*.jsonl").__next__().read_text(encoding="utf-8")
    assert '"searches"' in line and '"search_found"' in line


@pytest.mark.slow
def test_optimize_with_tool_search_reports_recall_before_and_after(run_cli: Cli, tmp_path: Path) -> None:
    result = run_cli("--server", SUPPORT, "--tasks", small_tasks(tmp_path), "--offline",
                     "--models", "sim:lexical,sim:skim", "--tool-search", "bm25",
                     "--rounds", "1",
                     "--trials", "6", "--server-instances", "1", "--heldout-candidates", "1", "--runs-dir",
                     str(tmp_path), "--run-id", "s", "--json", script="optimize")
    assert result.returncode in (0, 1), result.stderr[-3000:]
    summary = json.loads(result.stdout)
    for side in ("baseline", "winner"):
        assert set(summary["search"][side]) == {"sim:lexical", "sim:skim"}
        assert all(row["n"] == summary["splits"]["heldout"] for row in summary["search"][side].values())
    assert "## Tool search" in (tmp_path / "s" / "report.md").read_text(encoding="utf-8")


def test_claude_uses_the_api_server_side_search_through_the_fake(run_cli: Cli, tmp_path: Path) -> None:
    from fakes.anthropic_api import FakeAnthropicAPI, SimPolicy
    from fakes.anthropic_tool_search import ServerToolSearch

    policy = ServerToolSearch(SimPolicy("lexical"))
    with FakeAnthropicAPI(policy) as api:
        result = run_cli("eval", "--server", SUPPORT, "--tasks", TASKS, "--models", "claude-haiku-5-5",
                         "--tool-search", "bm25", "--server-instances", "1", "--runs-dir", str(tmp_path), "--run-id",
                         "claude", "--json", env={"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": api.base_url},
                         cwd=tmp_path)
        bodies = [r["body"] for r in api.requests if r["path"] == "/v1/messages"]
        errors = list(api.policy_errors)
    assert result.returncode == 0, result.stderr[-3000:]
    assert errors == []
    # the wire: the server-side search tool first, every MCP tool deferred behind it
    tools = bodies[0]["tools"]
    assert tools[0] == {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
    assert len(tools) == 13 and all(t["defer_loading"] is True for t in tools[1:])
    assert policy.searches, "the model never searched"
    # the API's search blocks come back in the history, and the run counts what they found
    assert any(b.get("type") == "tool_search_tool_result" for body in bodies for m in body["messages"]
               if m["role"] == "assistant" for b in m["content"] if isinstance(b, dict))
    report = json.loads(result.stdout)
    row = report["search"]["claude-haiku-5-5"]
    assert row["n"] == 66 and row["found"] > 0
    episodes = [json.loads(line) for path in (tmp_path / "claude" / "transcripts").glob("*.jsonl")
                for line in path.read_text(encoding="utf-8").splitlines()]
    assert sum(len(e["searches"]) for e in episodes) == len(policy.searches)
    assert sum(report["results"]["claude-haiku-5-5"][s]["passed"] for s in ("train", "heldout")) > 0
