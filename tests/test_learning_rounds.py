"""A server learned whole: `--rounds auto` goes on while a round makes progress and refused calls remain, the ledger of
what the server accepted and refused is kept for the whole run (and a resume), probes name the refused argument and
never call a tool that may write, and screening flags an edit that teaches a value the server refused.

The server (tests/servers/layered_server.py) checks a unit, then a band, then a window and names only the first bad
value; each layer has train tasks of its own, so fixing one format passes some tasks and uncovers the next."""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fakes.anthropic_api import FakeAnthropicAPI
from fakes.layered_agent import LayeredAgent, LedgerProposer

from optimizer.definitions import Candidate, Catalog, ToolDef, ToolEdit
from optimizer.optimize.screening import Screen
from optimizer.propose.base import CallSeen, EpisodeSeen, Evidence
from optimizer.propose.ledger import build_ledger
from optimizer.scoring import Expect
from optimizer.tasks import Task

ROOT = Path(__file__).resolve().parent.parent
SERVER = f"{sys.executable} {ROOT / 'tests/servers/layered_server.py'}"
TASKS = str(ROOT / "tests/fixtures/layered_tasks")
KEY = "sk-ant-test-0123456789abcdef"
Cli = Callable[..., Any]


def optimize(run_cli: Cli, tmp_path: Path, policy: Any, *args: str, run_id: str = "run") -> dict[str, Any]:
    with FakeAnthropicAPI(policy) as api:
        result = run_cli("--server", SERVER, "--tasks", TASKS, "--models", "claude-haiku-5-5", "--trials", "4",
                         "--candidates", "1", "--heldout-candidates", "1", "--runs-dir", str(tmp_path), "--run-id",
                         run_id, "--json", *args, script="optimize",
                         env={"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.base_url})
    assert result.returncode in (0, 1), result.stderr[-3000:]
    return json.loads(result.stdout)


def train(summary: dict[str, Any]) -> float:
    return summary["winner"]["train"]["claude-haiku-5-5"]["accuracy"]


def test_auto_rounds_learn_three_layered_formats_and_remember_round_one(run_cli: Cli, tmp_path: Path) -> None:
    proposer = LedgerProposer(LayeredAgent())
    summary = optimize(run_cli, tmp_path, proposer, "--proposer", "claude-opus-5-5", "--no-probe")
    assert len(summary["rounds"]) == 3 and summary["rounds_setting"] == "auto"
    assert [r["refused_at_start"] for r in summary["rounds"]] == [
        {"get_flow": {"unit": 6}}, {"get_flow": {"band": 4}}, {"get_flow": {"window": 2}}]
    assert train(summary) == 1.0 and summary["stop"]["rule"] == "perfect" and summary["refused_left"] == {}
    assert summary["winner"]["heldout"]["claude-haiku-5-5"]["passed"] == 2
    third = proposer.requests[2]  # round 3's request still holds what round 1's episodes showed
    assert "get_flow.unit:" in third and "'cubic metres'" in third and "'litres'" in third
    report = (tmp_path / "run" / "report.md").read_text(encoding="utf-8")
    assert "3 round(s) run (--rounds auto); stopped: train accuracy reached 100%" in report


def test_rounds_two_stops_at_two_and_says_what_is_left(run_cli: Cli, tmp_path: Path) -> None:
    summary = optimize(run_cli, tmp_path, LedgerProposer(LayeredAgent()), "--proposer", "claude-opus-5-5",
                       "--no-probe", "--rounds", "2")
    assert len(summary["rounds"]) == 2 and summary["stop"] == {"rule": "rounds", "text": "2 round(s) done"}
    assert summary["refused_left"] == {"get_flow": {"window": 2}} and train(summary) < 1.0


def test_the_rules_proposer_learns_the_layers_offline_from_the_ledger(run_cli: Cli, tmp_path: Path) -> None:
    summary = optimize(run_cli, tmp_path, LayeredAgent(), "--proposer", "rules", "--no-probe")
    assert len(summary["rounds"]) == 3 and train(summary) == 1.0
    patch = (tmp_path / "run" / "winning.patch").read_text(encoding="utf-8")
    assert "cubic-metres or litres-per-second" in patch and "high-flow or low-flow" in patch


def test_probes_name_every_refused_argument_at_once_and_never_call_a_writing_tool(run_cli: Cli,
                                                                                  tmp_path: Path) -> None:
    agent = LayeredAgent()
    summary = optimize(run_cli, tmp_path, agent, "--proposer", "rules")
    probes = [p for r in summary["rounds"] for p in r["probes"]]
    assert probes and {p["tool"] for p in probes} == {"get_flow"}  # flag_flow may write: never probed
    first = summary["rounds"][0]["probes"]
    assert {name for p in first for name in p["refused"]} == {"unit", "band", "window"}
    assert len(summary["rounds"]) == 1 and train(summary) == 1.0  # every layer was learned in round 1
    assert sum(len(p["calls"]) for p in first) <= 24
    report = (tmp_path / "run" / "report.md").read_text(encoding="utf-8")
    assert "Probes (a refused train call made again" in report and "changed band" in report


def test_probes_call_a_writing_tool_only_when_destructive_calls_are_allowed(run_cli: Cli, tmp_path: Path) -> None:
    from optimizer.optimize.probes import probeable

    writer = ToolDef("flag_flow", "", {"type": "object", "properties": {}}, annotations={"readOnlyHint": False})
    unmarked = ToolDef("get_flow", "", {"type": "object", "properties": {}})
    reader = ToolDef("list_stations", "", {"type": "object", "properties": {}}, annotations={"readOnlyHint": True})
    assert [probeable(t, allow_destructive=False) for t in (writer, unmarked, reader)] == [False, False, True]
    assert all(probeable(t, allow_destructive=True) for t in (writer, unmarked, reader))


def test_a_resumed_run_proposes_from_the_ledger_it_kept(run_cli: Cli, tmp_path: Path) -> None:
    proposer = LedgerProposer(LayeredAgent())
    summary = optimize(run_cli, tmp_path, proposer, "--proposer", "claude-opus-5-5", "--no-probe")
    assert len(proposer.requests) == 3
    db = tmp_path / "run" / "run.db"
    with sqlite3.connect(db) as conn:
        kept = dict(conn.execute("SELECT key, value FROM meta WHERE key LIKE 'ledger:%'").fetchall())
    assert set(kept) == {"ledger:r1", "ledger:r2", "ledger:r3"}
    third = json.loads(kept["ledger:r3"])
    assert "cubic metres" in third["ledger"]["tools"]["get_flow"]["unit"]["refused"]

    def resume() -> dict[str, Any]:
        with FakeAnthropicAPI(proposer) as api:
            again = run_cli("--resume", "run", "--runs-dir", str(tmp_path), "--json", script="optimize",
                            env={"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.base_url})
        assert again.returncode in (0, 1), again.stderr[-3000:]
        return dict(json.loads(again.stdout))

    resumed = resume()  # the store now holds round 3's episodes too: the kept ledger, not a new one, is read
    assert resumed["episodes"]["run"] == 0 and resumed["winner"] == summary["winner"] and len(proposer.requests) == 3
    third["ledger"]["tools"]["get_flow"]["unit"]["refused"]["kept-marker"] = "invalid value 'kept-marker'"
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'ledger:r3'", (json.dumps(third),))
    resume()
    assert len(proposer.requests) == 4 and "'kept-marker'" in proposer.requests[3]


CATALOG = Catalog("gauges", (ToolDef("get_flow", "Get flow.", {
    "type": "object", "properties": {"station": {"type": "string"}, "unit": {"type": "string"}},
    "required": ["station", "unit"]}), ToolDef("list_stations", "List stations.",
                                               {"type": "object", "properties": {}})))


def seen(*calls: CallSeen, passed: bool = False) -> EpisodeSeen:
    return EpisodeSeen("t1", "m", "What is the flow at north-weir in cubic metres?", passed, ("get_flow",), (),
                       ("get_flow",), calls, "", "")


def test_screening_flags_an_edit_that_teaches_a_refused_value_and_grounds_what_the_server_showed() -> None:
    listing = CallSeen("list_stations", "list_stations", {}, False,
                       '[{"station": "north-weir", "unit": "mmol-per-s"}, {"station": "old-ford", "unit": "litres"}]')
    refused = CallSeen("get_flow", "get_flow", {"station": "north-weir", "unit": "cubic metres"}, True,
                       "invalid value 'cubic metres'")
    ledger = build_ledger(CATALOG, [seen(listing, refused)])
    evidence = Evidence("", (seen(listing, refused),), (), {}, ledger=ledger)
    screen = Screen(CATALOG, [Task("t1", "What is the flow at north-weir in mmol-per-s?", Expect(), "train")],
                    allow_leakage=False)
    teaching = Candidate({"get_flow": ToolEdit(parameters={"unit": "The unit, e.g. cubic metres or gallons."})})
    grounded = Candidate({"get_flow": ToolEdit(parameters={"unit": "The unit: mmol-per-s or litres."})})
    warned = Candidate({"get_flow": ToolEdit(parameters={"unit": "The unit's code, not its name (not cubic "
                                                                  "metres): mmol-per-s or litres."})})
    glossed = Candidate({"get_flow": ToolEdit(parameters={"unit": "The unit's code: litres (for litres per "
                                                                  "second) or mmol-per-s."})})
    wrapped = Candidate({"get_flow": ToolEdit(description="Get the mean flow at a station. The unit is cubic metres "
                                                          "or gallons.")})
    screened = screen.screen([teaching, grounded, warned, glossed, wrapped], evidence)
    assert screened[0].kept is None and "states 'cubic metres' as a value of get_flow.unit, which the server " \
        "refused in this run (invalid value 'cubic metres')" in (screened[0].reason or "")
    assert screened[1].kept == grounded  # mmol-per-s is in a train prompt, and the server's results show it
    assert screened[2].kept == warned and screened[3].kept == glossed  # a warning; a gloss beside a shown value
    assert screened[4].kept is None  # a sentence of the description naming the parameter
