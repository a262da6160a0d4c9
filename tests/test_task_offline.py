"""`optimizer tasks generate --offline`: the stand-in generator explores with evidence only, writes tasks that replay,
covers every tool, never calls a tool it may not, and its task set runs through `optimize`."""

from __future__ import annotations

import asyncio
import json
import random
import re
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from optimizer.definitions import Catalog, ToolDef
from optimizer.scoring import Expect
from optimizer.servers import CallOutcome, ServerPool, ServerSpec
from optimizer.tasks import Task, load_tasks
from optimizer.tasks.explore import Observation, Seen, accepted, fillings, harvest
from optimizer.tasks.generate import Generation, generate_offline
from optimizer.tasks.offline import question
from optimizer.tasks.validate import NOT_THE_FIELD, Asked, not_the_field, validate

ROOT = Path(__file__).resolve().parent.parent
PROJECTS = f"{sys.executable} {ROOT / 'tests/servers/projects_server.py'}"
RELABEL = ROOT / "tests/servers/relabel_server.py"
READ = {"readOnlyHint": True}
RECORD = "Patient P-0042: Lena Vogt\nBorn: 1984-03-02\nInsurance number: KV-552-918\nPrimary doctor: D-17\nRoom: 2.14"
HISTORY = "History — patient P-0042\n07.12.2026 check-up\n14.01.2027 blood test"
Cli = Callable[..., Any]


def test_harvest_reads_labels_items_and_prose() -> None:
    listing = harvest('[{"code": "PRJ-7", "title": "Harbour bridge survey"}, {"code": "PRJ-9", "title": "Roof"}]')
    code = next(s for s in listing if s.value == "PRJ-7")
    assert code.label == "code" and code.anchor == "Harbour bridge survey" and code.shared
    prose = harvest("Billing account C-1003 (Chloe Park): balance due $18.00, next invoice 2026-04-17.")
    assert {(s.label, s.value, s.anchor) for s in prose} >= {("balance due", "$18.00", "C-1003"),
                                                            ("next invoice", "2026-04-17", "C-1003")}
    topics = harvest("No policy matches 'x'. Topics: returns, refunds, price-match.")
    assert [s.value for s in topics if s.label == "topics"] == ["returns", "refunds", "price-match"]


def test_a_label_whose_value_is_not_on_its_line_labels_nothing() -> None:
    status = harvest('Untracked files:\n  (use "git add <file>..." to include)\n\tnotes.txt\nBranch: main')
    assert [(s.label, s.value) for s in status if s.label] == [("branch", "main")]


def test_a_request_for_a_tool_never_called_gives_the_value_the_server_took_for_that_parameter() -> None:
    schema = {"type": "object", "properties": {"repo_path": {"type": "string"}, "message": {"type": "string"}},
              "required": ["repo_path", "message"]}
    commit = ToolDef("git_commit", "Record changes.", schema)
    took = Observation("git_status", {"repo_path": "/srv/repo"}, "On branch main", stable=True)
    assert accepted(commit, [took, took]) == {"repo_path": "/srv/repo"}
    assert accepted(commit, [Observation("count", {"repo_path": 3}, "3", stable=True)]) == {}  # not a string


def test_arguments_come_from_labels_that_share_a_word_with_the_parameter() -> None:
    schema = {"type": "object", "properties": {"project_code": {"type": "string"}}, "required": ["project_code"]}
    tool = ToolDef("get_project", "Get a project.", schema)
    seen = [Seen("Harbour bridge survey", "title", "text"), Seen("PRJ-7", "code", "prefixed_id")]
    arguments, _ = next(iter(fillings(tool, seen, random.Random(0))))
    assert arguments == {"project_code": "PRJ-7"}
    assert list(fillings(ToolDef("f", "", {"type": "object", "properties": {"n": {"type": "integer"}},
                                           "required": ["n"]}), seen, random.Random(0))) == []


def test_no_answer_from_an_argument_a_changing_result_or_the_calendar() -> None:
    today = datetime.now(UTC).date().isoformat()
    text = json.dumps({"code": "PRJ-7", "read_at": f"{today}T10:00:00", "status": "active"})
    observation = Observation("get_project", {"code": "PRJ-7"}, text, stable=True)
    asked = question(observation, harvest(text), random.Random(0))
    assert asked is not None and asked.answer == "active" and "status" in asked.text
    assert question(Observation("get_project", {"code": "PRJ-7"}, text, stable=False), harvest(text),
                    random.Random(0)) is None


def test_an_answer_that_changes_with_each_start_of_the_server_is_dropped() -> None:
    async def scenario() -> tuple[list[Task], list[dict[str, str]]]:
        spec = ServerSpec.parse(PROJECTS)
        async with ServerPool(spec, instances=1) as pool:
            catalog = await pool.list_tools()
            session = json.loads((await pool.call("get_project", {"code": "PRJ-7"})).text)["session"]
        calls = (("get_project", '{"code": "PRJ-7"}'),)
        tasks = [Task("token", "What session does project PRJ-7 show?", Expect(answer=session, tools=("get_project",),
                                                                               calls=calls), "train", source="t:1"),
                 Task("lead", "Who leads project PRJ-7?", Expect(answer="Mina Sol", tools=("get_project",),
                                                                 calls=calls), "train", source="t:2")]
        dropped: list[dict[str, str]] = []
        async with ServerPool(spec, instances=1) as fresh:
            return await validate(tasks, catalog, fresh.call, {}, dropped), dropped

    kept, dropped = asyncio.run(scenario())
    assert [t.id for t in kept] == ["lead"]
    assert dropped[0]["task"] == "token" and "replay-failed" in dropped[0]["reason"]


def _strings(*names: str) -> dict[str, Any]:
    return {"type": "object", "properties": {n: {"type": "string"} for n in names}, "required": list(names)}


def test_an_error_result_is_never_an_argument_or_an_answer() -> None:
    catalog = Catalog("c", (ToolDef("get_history", "A patient's visits.", _strings("patient_id"), annotations=READ),
                            ToolDef("find_patient", "Find a patient by name.", _strings("name"), annotations=READ)))
    said = {"get_history": CallOutcome("invalid value ''. Patient ids look like P-0042.", True),
            "find_patient": CallOutcome("Error: invalid value ''. Try: Lena Vogt, P-0042", False)}  # unflagged

    async def call(tool: str, arguments: dict[str, Any]) -> CallOutcome:
        return said[tool]

    made = asyncio.run(generate_offline(catalog, call, n=10, heldout=0.0, refused={}, seed=0, run=Generation()))
    assert {json.dumps(c["arguments"]) for c in made.calls} == {'{"patient_id": ""}', '{"name": ""}'}  # probes only
    assert made.tasks and all(t.expect.answer is None and "P-0042" not in t.prompt for t in made.tasks)


def test_an_answer_the_replayed_call_shows_only_in_an_error_is_dropped_as_not_the_field() -> None:
    catalog = Catalog("c", (ToolDef("get_patient", "Get a patient.", _strings("patient_id"), annotations=READ),))

    async def call(tool: str, arguments: dict[str, Any]) -> CallOutcome:
        return CallOutcome("Error: no patient P-0042 with insurance KV-552-918", False)

    calls = (("get_patient", '{"patient_id": "P-0042"}'),)
    task = Task("t", "Get patient P-0042. What is the insurance number?", Expect(
        answer="KV-552-918", tools=("get_patient",), calls=calls), "train", source="t:1")
    dropped: list[dict[str, str]] = []
    kept = asyncio.run(validate([task], catalog, call, {}, dropped, asked={"t": Asked("insurance number")}))
    assert kept == [] and dropped[0]["reason"].startswith(NOT_THE_FIELD) and "error result" in dropped[0]["reason"]


@pytest.mark.parametrize("text", [RECORD, HISTORY, json.dumps(
    {"patient": "P-0203", "phone": "07.12.2026", "mobile": "+44 20 7946 0100", "copay": "€10.00"})])
def test_a_question_names_the_field_its_answer_is_a_value_of(text: str) -> None:
    observation = Observation("get_patient", {"patient_id": "P-0042"}, text, stable=True)
    for seed in range(8):
        asked = question(observation, harvest(text, observation), random.Random(seed))
        assert asked is not None and asked.asked is not None
        assert asked.asked.field in asked.text and "phone" not in asked.text  # a date under "phone" is not asked
        assert not_the_field(text, "get_patient", observation.arguments, asked.asked, asked.answer) is None


def test_a_day_first_dotted_date_is_asked_about_as_a_date() -> None:
    observation = Observation("get_history", {"patient_id": "P-0042"}, HISTORY, stable=True)
    asked = question(observation, harvest(HISTORY, observation), random.Random(0))
    assert asked is not None and asked.text == "Which dates does it show?"
    assert asked.answer in ("07.12.2026", "14.01.2027") and asked.asked == Asked("date", by_kind=True)


def test_an_answer_that_is_not_a_value_of_its_field_is_refused_with_the_reason() -> None:
    text = "Phone: 07.12.2026\nBorn: 1984-03-02\nPatient: P-0042"
    assert not_the_field(text, "t", {}, Asked("phone"), "07.12.2026") == (
        f"{NOT_THE_FIELD}: its answer '07.12.2026' reads as a date_text, not a phone")
    assert "not what the result shows as the phone" in str(not_the_field(text, "t", {}, Asked("phone"), "1984-03-02"))
    assert "the born of P-0117" in str(not_the_field(text, "t", {}, Asked("born", "P-0117"), "1984-03-02"))
    assert not_the_field(text, "t", {}, Asked("born"), "1984-03-02") is None


@pytest.mark.slow
def test_a_task_whose_answer_moved_to_another_field_is_dropped_and_counted(run_cli: Cli, tmp_path: Path) -> None:
    server = f"{sys.executable} {RELABEL} {tmp_path / 'starts'}"  # each start names the field anew
    result = run_cli("tasks", "generate", "--offline", "--server", server, "--out", str(tmp_path / "tasks"),
                     "--runs-dir", str(tmp_path / "runs"), "--json")
    assert result.returncode in (0, 1), result.stderr[-3000:]
    summary = json.loads(result.stdout)
    moved = [d for d in summary["dropped"] if d["reason"].startswith(NOT_THE_FIELD)]
    assert summary["not_the_field"] == len(moved) >= 1
    assert "+44 20 7946 0100" in moved[0]["reason"] and summary["coverage"]["answered"] == 0


@pytest.mark.slow
def test_generate_offline_covers_every_tool_safely_and_the_set_optimizes(run_cli: Cli, tmp_path: Path) -> None:
    result = run_cli("tasks", "generate", "--offline", "--server", PROJECTS, "--out", str(tmp_path / "tasks"),
                     "--runs-dir", str(tmp_path / "runs"), "--json")
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads(result.stdout)
    assert summary["offline"] and summary["usd"] == 0 and summary["tools_without_tasks"] == {}
    assert summary["mix"]["lookup"] >= 2 and summary["mix"]["multi_step"] >= 1
    calls = [json.loads(line) for line in (Path(summary["run_dir"]) / "calls.jsonl").read_text().splitlines()]
    assert {c["tool"] for c in calls} == {"list_projects", "get_project"}  # not the unannotated or destructive ones
    written = (tmp_path / "tasks" / "generated.yaml").read_text(encoding="utf-8")
    assert written.startswith("# OFFLINE")
    tasks = load_tasks(tmp_path / "tasks").tasks
    for task in tasks:
        assert dict(task.provenance)["model"] == "none" and "offline" in task.tags
        assert not re.search(r"list_projects|get_project|archive_project|delete_project", task.prompt)
        assert task.expect.answer is None or not re.fullmatch(r"[0-9a-f]{12}", task.expect.answer)
    choice = {t.expect.tools[0]: t for t in tasks if "tool_choice" in t.tags}
    assert set(choice) == {"archive_project", "delete_project"} and not choice["delete_project"].expect.calls
    chained = next(t for t in tasks if "multi_step" in t.tags)
    assert [tool for tool, _ in chained.expect.calls] == ["list_projects", "get_project"]
    assert "PRJ-" not in chained.prompt  # the first call finds the code
    checked = run_cli("tasks", "check", str(tmp_path / "tasks"), "--server", PROJECTS, "--replay", "--json")
    assert checked.returncode == 0, checked.stdout[-2000:]
    assert yaml.safe_load(written)  # a plain YAML list a person can read and edit
    optimized = run_cli("--server", PROJECTS, "--tasks", str(tmp_path / "tasks"), "--offline", "--rounds", "1",
                        "--trials", "3", "--heldout-candidates", "1", "--allow-destructive", "--runs-dir",
                        str(tmp_path / "runs"), "--json", script="optimize")  # the generated set runs end to end
    assert optimized.returncode == 0, optimized.stderr[-3000:]
    assert json.loads(optimized.stdout)["episodes"]["run"] > 0


@pytest.mark.parametrize("flag", [["--offline", "--n", "0"]])
def test_bad_settings_are_refused_before_anything_runs(run_cli: Cli, tmp_path: Path, flag: list[str]) -> None:
    result = run_cli("tasks", "generate", *flag, "--server", PROJECTS, "--out", str(tmp_path / "t"),
                     "--runs-dir", str(tmp_path / "runs"))
    assert result.returncode == 2 and not (tmp_path / "runs").exists()
