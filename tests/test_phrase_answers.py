"""Answers a paraphrase would miss: `tasks check` flags a phrase of the result's wording (and says what to write
instead), leaves values alone, clears a phrase the replayed result holds as one whole value, and both generators
drop phrase answers. The bundled task sets have none."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from optimizer.definitions import Catalog, ToolDef
from optimizer.scoring import Expect
from optimizer.servers import CallOutcome
from optimizer.tasks import Task, load_tasks
from optimizer.tasks.answers import is_phrase, phrase_answer, suggestion, whole_value
from optimizer.tasks.generate import validate

ROOT = Path(__file__).resolve().parent.parent
CLINIC = f"{sys.executable} {ROOT / 'examples/clinic/server.py'}"
FIXTURE = ROOT / "tests/fixtures/phrase_tasks"
Cli = Callable[..., Any]


@pytest.mark.parametrize("answer", ["no customer matches", "Updated email", "3 orders for Julia Souza",
                                    "cannot be refunded until it is delivered", "invites sent to omar@acme.dev",
                                    "not published yet", "claims start at 100"])
def test_phrases_of_a_tools_wording_are_flagged(answer: str) -> None:
    assert is_phrase(answer)


@pytest.mark.parametrize("answer", ["T-503", "$42.10", "Julia Souza", "2026-03-04", "suspended", "side door",
                                    "30 days", "devbox up", "Add config file loading", "Vendor call: Fastlane CDN",
                                    "if not text or not text.strip():", "Mastercard ending 7719", "14 days"])
def test_values_names_titles_and_code_are_not(answer: str) -> None:
    assert not is_phrase(answer)


def test_only_answers_checked_literally_in_tasks_that_expect_a_tool_count() -> None:
    phrase = "no customer matches"
    assert phrase_answer(Expect(answer=phrase, tools=("get_customer",)))
    assert not phrase_answer(Expect(answer=phrase, tools=()))  # answered without a tool: no result to paraphrase
    assert not phrase_answer(Expect(answer=phrase, match="regex", tools=("get_customer",)))
    assert not phrase_answer(Expect(answer=phrase, match="judge", tools=("get_customer",)))


def test_a_whole_value_of_the_result_is_a_value_and_suggestions_name_values() -> None:
    assert whole_value("20 mg once daily", "Prescription RX-1\nDose: 20 mg once daily\nRefills left: 2")
    assert whole_value("out for delivery", '{"status": "out for delivery", "eta": "today"}')
    assert not whole_value("out for delivery", "The parcel is out for delivery since 07:45.")
    assert "'omar@acme.dev'" in suggestion("invites sent to omar@acme.dev")
    assert "match: judge" in suggestion("no customer matches")
    assert "'P-0117'" in suggestion("belongs to the patient", "KV-310-775 belongs to the patient P-0117, Tomasz.")


def test_tasks_check_flags_the_fixture_phrases_with_their_lines(run_cli: Cli) -> None:
    result = run_cli("tasks", "check", str(FIXTURE), "--server", CLINIC, "--json")
    assert result.returncode == 1
    flagged = {p["message"].split("'")[0].removeprefix("task ").removesuffix("s answer "): p
               for p in json.loads(result.stdout)["problems"] if p["kind"] == "phrase-answer"}
    assert set(flagged) == {"coverage-phrase", "insurance-phrase", "unknown-phrase", "reported-phrase",
                            "dose-whole-value"}
    assert flagged["unknown-phrase"]["source"].endswith("clinic.yaml:16")
    assert "match: judge" in flagged["unknown-phrase"]["message"]
    assert "'P-0117'" in flagged["insurance-phrase"]["message"]


def test_with_replay_a_whole_value_is_cleared_and_the_result_suggests_a_value(run_cli: Cli) -> None:
    result = run_cli("tasks", "check", str(FIXTURE), "--server", CLINIC, "--replay", "--json")
    problems = [p for p in json.loads(result.stdout)["problems"] if p["kind"] == "phrase-answer"]
    messages = {p["message"].split("'")[0].removeprefix("task ").removesuffix("s answer "): p["message"]
                for p in problems}
    assert set(messages) == {"coverage-phrase", "insurance-phrase", "unknown-phrase", "reported-phrase"}
    assert "'PR-210'" in messages["coverage-phrase"]  # from the replayed result's line
    assert not [p for p in json.loads(result.stdout)["problems"] if p["kind"] == "replay-failed"]


@pytest.mark.parametrize("folder", sorted(str(p.parent.relative_to(ROOT)) for p in ROOT.glob("examples/**/tasks/")
                                          if p.is_dir()))
def test_the_bundled_task_sets_have_no_phrase_answer(folder: str) -> None:
    flagged = [t.id for t in load_tasks(ROOT / folder / "tasks").tasks if phrase_answer(t.expect)]
    assert flagged == []


def test_generators_drop_a_phrase_answer_the_result_holds_in_running_text() -> None:
    catalog = Catalog("s", (ToolDef("get_ticket", "Get a ticket.", annotations={"readOnlyHint": True}),))

    async def call(tool: str, arguments: dict[str, Any]) -> CallOutcome:
        return CallOutcome("Ticket T-501 is closed and cannot be escalated.\nStatus: closed and archived", False)

    def task(task_id: str, prompt: str, answer: str) -> Task:
        calls = (("get_ticket", json.dumps({"key": "T-501"})),)
        return Task(task_id, prompt, Expect(answer=answer, tools=("get_ticket",), calls=calls), "train", (),
                    f"<generated>:{task_id}")

    dropped: list[dict[str, str]] = []
    kept = asyncio.run(validate([task("a", "Can ticket T-501 still be escalated?", "is closed and cannot be escalated"),
                                 task("b", "What state is T-501 in?", "closed and archived"),
                                 task("c", "Which ticket is closed for good?", "T-501")], catalog, call, {}, dropped))
    assert [t.id for t in kept] == ["b", "c"]
    assert dropped[0]["task"] == "a" and dropped[0]["reason"].startswith("phrase-answer")
