"""--record and --replay: a run's Claude answers kept as plain JSON, and replayed with no key and no API call.

Recording goes through the real SDK to the fake Messages API; replaying runs with no key and no base URL, so a
request that reached for the network would fail."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fakes.anthropic_api import FakeAnthropicAPI, SimPolicy

from optimizer.models import tape

ROOT = Path(__file__).resolve().parent.parent
SUPPORT = f"{sys.executable} {ROOT / 'examples/support/server.py'}"
KEY = "sk-ant-test-replay-0123456789abcdef"
NO_API = {"ANTHROPIC_API_KEY": None, "ANTHROPIC_BASE_URL": None}
Cli = Callable[..., Any]


def tasks_in(folder: Path, *names: str) -> Path:
    out = folder / "tasks"
    out.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copy(ROOT / "examples/support/tasks" / name, out / name)
    return out


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One `eval` of two support task files by a Claude model (the fake API's offline agent answering), recorded."""
    from typer.testing import CliRunner

    from optimizer.cli import app

    folder = tmp_path_factory.mktemp("recorded")
    tasks = tasks_in(folder, "orders.yaml", "policies.yaml")
    recording = folder / "recording"
    with FakeAnthropicAPI(SimPolicy("lexical")) as api:
        result = CliRunner().invoke(app, [
            "eval", "--server", SUPPORT, "--tasks", str(tasks), "--models", "claude-haiku-5-5",
            "--runs-dir", str(folder / "runs"), "--run-id", "live", "--record", str(recording), "--json"],
            env={"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.base_url,
                 "OPTIMIZER_ANSWERED_BY": "the fake Messages API's offline agent"})
        asked = len([r for r in api.requests if r["path"] == "/v1/messages"])
    assert result.exit_code == 0, result.output[-3000:]
    return {"folder": folder, "tasks": tasks, "recording": recording, "asked": asked,
            "report": json.loads(result.stdout)}


def replay_eval(run_cli: Cli, recorded: dict[str, Any], cwd: Path, *extra: str, tasks: Path | None = None) -> Any:
    return run_cli("eval", "--server", SUPPORT, "--tasks", str(tasks or recorded["tasks"]), "--models",
                   "claude-haiku-5-5", "--runs-dir", str(cwd / "runs"), "--replay", str(recorded["recording"]),
                   *extra, cwd=cwd, env=NO_API)


def test_a_replayed_eval_gives_the_recorded_results_without_a_key(run_cli: Cli, recorded: dict[str, Any],
                                                                 tmp_path: Path) -> None:
    result = replay_eval(run_cli, recorded, tmp_path, "--json")
    assert result.returncode == 0, result.stderr[-3000:]
    report, live = json.loads(result.stdout), recorded["report"]
    assert report["results"] == live["results"] and report["confusion"] == live["confusion"]
    assert report["replay"]["from"] == str(recorded["recording"]) and live["replay"] is None
    assert report["replay"]["answered_by"] == "the fake Messages API's offline agent"
    assert report["replay"]["agents"] == ["claude-haiku-5-5"] and report["replay"]["command"] == "optimizer eval"
    assert report["episodes"]["run"] == live["episodes"]["run"] > 0
    (tmp_path / "again").mkdir()
    shown = replay_eval(run_cli, recorded, tmp_path / "again")
    assert shown.returncode == 0 and shown.stdout.startswith("REPLAY — every model answer comes from the recording")


def test_the_recording_is_readable_json_with_its_provenance_and_no_key(recorded: dict[str, Any]) -> None:
    folder = recorded["recording"]
    provenance = json.loads((folder / "provenance.json").read_text(encoding="utf-8"))
    assert provenance["command"] == "optimizer eval" and provenance["agents"] == ["claude-haiku-5-5"]
    assert provenance["endpoint"].startswith("http://127.0.0.1:") and provenance["models"] == ["claude-haiku-5-5"]
    lines = (folder / "answers.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == provenance["answers"] == recorded["asked"]  # every answer once: no two requests alike here
    first = json.loads(lines[0])
    assert set(first) == {"key", "about", "reply"} and first["about"]["turn"] >= 1
    assert [json.loads(line)["about"]["prompt"] for line in lines] == sorted(
        json.loads(line)["about"]["prompt"] for line in lines)  # sorted by what they answer: diffs stay small
    everything = "".join(p.read_text(encoding="utf-8") for p in folder.iterdir())
    assert KEY not in everything and "sk-ant" not in everything and "authorization" not in everything.lower()


def test_a_changed_task_prompt_stops_the_replay_naming_the_task(run_cli: Cli, recorded: dict[str, Any],
                                                                tmp_path: Path) -> None:
    tasks = tasks_in(tmp_path, "orders.yaml", "policies.yaml")
    text = (tasks / "policies.yaml").read_text(encoding="utf-8")
    changed = text.replace("How long does a customer have to send an item back?",
                           "How many days may a customer take to return an item?")
    assert changed != text
    (tasks / "policies.yaml").write_text(changed, encoding="utf-8")
    result = replay_eval(run_cli, recorded, tmp_path, tasks=tasks)
    assert result.returncode == 2, result.stdout[-2000:]
    message = " ".join(result.stderr.split())
    assert "task policy-return-window" in message and "no recorded answer" in message
    assert "turn 1" in message and "--record" in message and "not this conversation" in message


def test_replay_refuses_a_folder_that_is_no_recording_and_record_with_replay(run_cli: Cli, recorded: dict[str, Any],
                                                                             tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run_cli("eval", "--server", SUPPORT, "--tasks", str(recorded["tasks"]), "--models", "claude-haiku-5-5",
                     "--replay", str(empty), env=NO_API)
    assert result.returncode == 2 and "is not a recording" in result.stderr
    both = run_cli("eval", "--server", SUPPORT, "--tasks", str(recorded["tasks"]), "--models", "claude-haiku-5-5",
                   "--replay", str(recorded["recording"]), "--record", str(tmp_path / "r"), env=NO_API)
    assert both.returncode == 2 and "not both" in both.stderr


# --- the key -------------------------------------------------------------------------------------------------


def request(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "model": "claude-haiku-5-5", "max_tokens": 4096,
        "system": [{"type": "text", "text": "You are an agent.", "cache_control": {"type": "ephemeral"}}],
        "tools": [{"name": "lookup_order", "description": "Look up an order.", "input_schema": {"type": "object"},
                   "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": "Where is order #1?"}],
    }
    return {**base, **changes}


def test_the_key_leaves_out_our_own_wording_and_keeps_what_determines_the_answer() -> None:
    key = tape.answer_key(request())
    assert tape.answer_key(request(system=[{"type": "text", "text": "Reworded."}], max_tokens=99)) == key
    assert tape.answer_key(request(messages=[{"role": "user", "content": "Where is order #2?"}])) != key
    assert tape.answer_key(request(model="claude-sonnet-5-5")) != key
    changed = [{**request()["tools"][0], "description": "Find an order by its number."}]
    assert tape.answer_key(request(tools=changed)) != key
    assert tape.definitions_digest(request(tools=changed)) != tape.definitions_digest(request())
    from optimizer.prompt_files import fence

    def templated(wording: str, data: str) -> dict[str, Any]:
        text = f"{wording}\n\n{fence('evidence', data)}\n\nSubmit."
        return request(messages=[{"role": "user", "content": [{"type": "text", "text": text}]}])

    assert tape.answer_key(templated("Rewrite the tools.", "E1")) == tape.answer_key(templated("Improve them.", "E1"))
    assert tape.answer_key(templated("Rewrite the tools.", "E1")) != tape.answer_key(templated("Rewrite the tools.",
                                                                                               "E2"))


def test_the_endpoint_in_the_provenance_carries_no_credentials() -> None:
    assert tape.endpoint_of("https://user:secret@example.test:8443/v1?key=x") == "https://example.test:8443/v1"
    assert tape.endpoint_of(None) == "https://api.anthropic.com"


def test_a_generation_recorded_replays_with_the_same_tasks_and_no_key(run_cli: Cli, tmp_path: Path) -> None:
    from fakes.anthropic_api import ScriptedPolicy, tool_use_reply

    order = {"tool": "lookup_order", "arguments": {"order_id": "#10007"}}
    submitted = [{"prompt": "How much did order #10007 cost in total?", "answer": "$219.40", "tools": ["lookup_order"],
                  "calls": [order], "kind": "lookup"}]
    recording = tmp_path / "recording"
    policy = ScriptedPolicy([tool_use_reply("lookup_order", {"order_id": "#10007"}),
                             tool_use_reply("submit_tasks", {"tasks": submitted})])
    with FakeAnthropicAPI(policy) as api:
        live = run_cli("tasks", "generate", "--server", SUPPORT, "--out", str(tmp_path / "live"), "--runs-dir",
                       str(tmp_path / "runs"), "--record", str(recording), "--max-turns", "2", "--json",
                       env={"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.base_url})
    assert live.returncode == 0, live.stderr[-3000:]
    replayed = run_cli("tasks", "generate", "--server", SUPPORT, "--out", str(tmp_path / "again"), "--runs-dir",
                       str(tmp_path / "runs"), "--replay", str(recording), "--max-turns", "2", env=NO_API)
    assert replayed.returncode == 0, replayed.stderr[-3000:]
    assert replayed.stdout.startswith("REPLAY — every model answer comes from the recording")
    text = (tmp_path / "live" / "generated.yaml").read_text(encoding="utf-8").split("\n", 2)[2]
    assert (tmp_path / "again" / "generated.yaml").read_text(encoding="utf-8").split("\n", 2)[2] == text
    provenance = json.loads((recording / "provenance.json").read_text(encoding="utf-8"))
    assert provenance["command"] == "optimizer tasks generate" and provenance["generator"] == "claude-opus-5-5"


def test_a_recording_killed_mid_write_keeps_every_whole_answer(tmp_path: Path) -> None:
    (tmp_path / "answers.jsonl").write_text('{"key": "a", "reply": {}}\n{"key": "b", "rep', encoding="utf-8")
    assert [e["key"] for e in tape.read_answers(tmp_path)] == ["a"]
    (tmp_path / "answers.jsonl").write_text('{"key": "a"\n{"key": "b", "reply": {}}\n', encoding="utf-8")
    with pytest.raises(tape.RecordingError, match="answers.jsonl:1"):
        tape.read_answers(tmp_path)


def test_a_replayed_reply_keeps_the_key_order_the_model_wrote(tmp_path: Path) -> None:
    """A proposer's repair request lists problems in the order of the fields the model wrote; a recording that
    sorted them would replay a request the run never sent."""
    written = {"type": "tool_use", "id": "toolu_1", "name": "submit_candidates",
               "input": {"tools": [{"parameters": {"rule.type": "a", "rule.fill_color": "b"}}], "rationale": "r"}}

    class Answering:
        async def create(self, **params: Any) -> tape.Reply:
            return tape.Reply(content=(written,), stop_reason="tool_use", usage=tape.Usage(), model="m")

        async def close(self) -> None:
            return None

    params = {"model": "m", "messages": [{"role": "user", "content": "propose"}], "tools": []}

    async def record_then_replay() -> tape.Reply:
        recorder = tape.RecordingClient(Answering(), tmp_path, {"command": "optimize"})  # type: ignore[arg-type]
        await recorder.create(**params)
        await recorder.close()
        return await tape.ReplayClient(tmp_path).create(**params)

    replayed = asyncio.run(record_then_replay())
    given = replayed.content[0]["input"]
    assert list(given) == ["tools", "rationale"] and list(given["tools"][0]["parameters"]) == ["rule.type",
                                                                                             "rule.fill_color"]
