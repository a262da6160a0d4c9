"""`optimizer tasks check`: a task set against a server's tools, before any money is spent."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from optimizer.definitions import Catalog, ToolDef
from optimizer.tasks import load_tasks
from optimizer.tasks.check import check_tasks

ROOT = Path(__file__).resolve().parent.parent
SUPPORT = f"{sys.executable} {ROOT / 'examples/support/server.py'}"
Cli = Callable[..., Any]

CATALOG = Catalog("shop", (
    ToolDef("lookup_order", "Look up an order."),
    ToolDef("track_shipment", "Track a parcel."),
    ToolDef("refund_order", "Refund an order.", annotations={"destructiveHint": True}),
    ToolDef("search", "Search everything."),
    ToolDef("find", "Search everything. DEPRECATED: use search instead."),
))
TASKS = """\
- {id: total, prompt: "How much was order #10007?", expect: {tools: [lookup_order]}, split: train}
- {id: total-again, prompt: "How much was order #10007 ?!", expect: {tools: [lookup_order]}, split: heldout}
- {id: parcel, prompt: "Where is my parcel for order #10007 right now?", expect: {tools: [track_shipment]}}
- {id: parcel-near, prompt: "Where is my parcel for order #10007 right now, please?", expect: {tools: [track_shipment]}}
- {id: named, prompt: "Call lookup_order for #10008 and search for it.", expect: {tools: [lookup_order]}}
- {id: ghost, prompt: "Cancel my subscription.", expect: {tools: [cancel_plan], forbid: [refund_order]}}
- {id: money, prompt: "Give me my money back for #10009.", expect: {tools: [refund_order]}}
"""


def report_for(tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "tasks.yaml"
    path.write_text(TASKS, encoding="utf-8")
    return check_tasks(load_tasks(path), CATALOG).to_json()


def test_every_kind_of_problem_is_found_with_its_source(tmp_path: Path) -> None:
    report = report_for(tmp_path)
    kinds = [(p["kind"], p.get("tool"), (p.get("source") or "").rpartition(":")[2]) for p in report["problems"]]
    assert kinds == [
        ("unknown-tool", "cancel_plan", "6"),
        ("untested-tool", "search", ""),
        ("tool-named", "lookup_order", "5"),  # `search` is an ordinary word: not a tool's identifier
        ("duplicate", None, "2"),
        ("near-duplicate", None, "4"),
    ]
    assert report["passed"] is False
    deprecated, destructive = report["notes"]
    assert "task money expects refund_order" in destructive and "--allow-destructive" in destructive
    assert deprecated == "no task expects find, which its description calls deprecated"


def test_counts_per_tool_and_split(tmp_path: Path) -> None:
    report = report_for(tmp_path)
    assert report["tasks"] == 7 and sum(report["splits"].values()) == 7
    assert sum(report["per_tool"]["lookup_order"].values()) == 3
    assert report["per_tool"]["search"] == {"train": 0, "heldout": 0}


def test_the_bundled_examples_pass_and_a_bad_set_exits_1_and_a_bad_file_2(run_cli: Cli, tmp_path: Path) -> None:
    good = run_cli("tasks", "check", str(ROOT / "examples/support/tasks"), "--server", SUPPORT, "--json")
    assert good.returncode == 0, good.stderr[-2000:]
    report = json.loads(good.stdout)
    assert report["passed"] and report["tasks"] == 66 and all(sum(c.values()) for c in report["per_tool"].values())
    bad_dir = tmp_path / "bad"
    bad_dir.mkdir()
    (bad_dir / "t.yaml").write_text(
        "- {id: a, prompt: 'Use get_customer for jane@x.com', expect: {tools: [get_customer]}}\n", encoding="utf-8")
    bad = run_cli("tasks", "check", str(bad_dir), "--server", SUPPORT)
    assert bad.returncode == 1
    assert "tool-named" in bad.stdout and "untested-tool" in bad.stdout and "problem(s)" in bad.stderr
    (bad_dir / "t.yaml").write_text("- {id: a, prompt: [oops]}\n", encoding="utf-8")
    broken = run_cli("tasks", "check", str(bad_dir), "--server", SUPPORT)
    assert broken.returncode == 2 and "t.yaml:1" in broken.stderr


REPLAYED = """\
- id: still-true
  prompt: "What did order #10007 cost?"
  expect: {answer: "$219.40", tools: [lookup_order], calls: [{tool: lookup_order, arguments: {order_id: "#10007"}}]}
- id: gone-stale
  prompt: "When did order #10007 ship?"
  expect: {answer: "2029-01-01", tools: [lookup_order], calls: [{tool: lookup_order, arguments: {order_id: "#10007"}}]}
- id: bad-arguments
  prompt: "What about order 10007?"
  expect: {answer: "x", tools: [lookup_order], calls: [{tool: lookup_order, arguments: {}}]}
- id: hand-written
  prompt: "Track my order #10007."
  expect: {tools: [track_shipment]}
"""


def test_replay_runs_the_expected_calls_and_flags_answers_they_no_longer_return(run_cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(REPLAYED, encoding="utf-8")
    result = run_cli("tasks", "check", str(tmp_path / "t.yaml"), "--server", SUPPORT, "--replay", "--json")
    assert result.returncode == 1, result.stderr[-2000:]
    report = json.loads(result.stdout)
    replayed = [p for p in report["problems"] if p["kind"] == "replay-failed"]
    assert [p["source"].rpartition(":")[2] for p in replayed] == ["4", "7"]
    assert "'2029-01-01' is not in what the expected calls return now" in replayed[0]["message"]
    assert "lookup_order returned an error" in replayed[1]["message"]
    assert "1 task(s) have no expect.calls (or no answer) to replay" in report["notes"]
    without = json.loads(run_cli("tasks", "check", str(tmp_path / "t.yaml"), "--server", SUPPORT, "--json").stdout)
    assert not [p for p in without["problems"] if p["kind"] == "replay-failed"]
