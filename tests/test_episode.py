"""The agent loop (`run_episode`) with a scripted fake model, a fake tool executor and the in-memory
mini server: calls, errors, refusals, truncation, turn limits, infrastructure faults, usage, routing."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest
from helpers import mini_server

from optimizer.definitions import Candidate, Catalog, Exposed, ToolDef, ToolEdit, apply
from optimizer.models import load_model
from optimizer.models.base import Message, ModelUnavailable, ToolCall, Turn, Usage
from optimizer.run.episode import Episode, EpisodeConfig, run_episode
from optimizer.servers import CallOutcome, ServerCrashed, ServerPool, ServerSpec
from optimizer.tasks import Expect, Task

TASK = Task(id="t1", prompt="Find the customer jane@x.com, then list their orders.", expect=Expect(), split="train")


class ScriptedModel:
    """A fake AgentModel: returns the scripted turns (or raises scripted exceptions) in order and
    records what it was given each time."""

    offline = True

    def __init__(self, script: Sequence[Turn | BaseException], model_id: str = "fake:scripted") -> None:
        self.script = list(script)
        self.id = model_id
        self.settings: dict[str, Any] = {}
        self.seen: list[dict[str, Any]] = []

    async def turn(self, system: str, tools: Sequence[ToolDef], messages: Sequence[Message], *, seed: int = 0) -> Turn:
        self.seen.append({"system": system, "tools": [t.name for t in tools], "messages": list(messages),
                          "seed": seed})
        if not self.script:
            raise AssertionError("the episode asked for more turns than scripted")
        item = self.script.pop(0)
        if isinstance(item, BaseException):
            raise item
        return item


class FakeServer:
    """A `call_tool` coroutine with canned answers and a log of what reached it."""

    def __init__(self, answers: dict[str, CallOutcome | BaseException] | None = None) -> None:
        self.answers = answers or {}
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def __call__(self, name: str, arguments: dict[str, Any]) -> CallOutcome:
        self.calls.append((name, arguments))
        answer = self.answers.get(name, CallOutcome(f"{name} ok", False))
        if isinstance(answer, BaseException):
            raise answer
        return answer


CATALOG = Catalog("mini", (
    ToolDef("get_customer", "Get customer info"),
    ToolDef("lookup_order", "Get order details"),
    ToolDef("delete_customer", "Delete a customer", annotations={"destructiveHint": True}),
))
EXPOSED = apply(CATALOG, Candidate())


def call(call_id: str, name: str, **arguments: Any) -> ToolCall:
    return ToolCall(call_id, name, arguments)


def calls_turn(*calls: ToolCall, usage: Usage | None = None) -> Turn:
    return Turn("calling", tuple(calls), usage or Usage(), "tool_use")


def answer(text: str, usage: Usage | None = None) -> Turn:
    return Turn(text, (), usage or Usage(), "end_turn")


def run(model: ScriptedModel, call_tool: Any, exposed: Exposed = EXPOSED, config: EpisodeConfig | None = None,
        task: Task = TASK, seed: int = 0) -> Episode:
    return asyncio.run(run_episode(task, model, exposed, call_tool, config or EpisodeConfig(), seed=seed))


def test_several_calls_in_one_turn_are_all_executed_and_answered_in_order() -> None:
    model = ScriptedModel([
        calls_turn(call("a", "lookup_order", order_id="#1"), call("b", "get_customer", email="j@x.com"),
                   call("c", "lookup_order", order_id="#2")),
        answer("done"),
    ])
    server = FakeServer({"get_customer": CallOutcome("Jane", False)})
    episode = run(model, server, config=EpisodeConfig(system_prompt="Be brief."))
    assert server.calls == [("lookup_order", {"order_id": "#1"}), ("get_customer", {"email": "j@x.com"}),
                            ("lookup_order", {"order_id": "#2"})]
    assert episode.status == "completed"
    assert episode.answer == "done"
    assert episode.turns == 2
    results = model.seen[1]["messages"][-1]
    assert results.role == "tool"
    assert [(r.call_id, r.content, r.is_error) for r in results.tool_results] == [
        ("a", "lookup_order ok", False), ("b", "Jane", False), ("c", "lookup_order ok", False)]
    assert [m.role for m in episode.messages] == ["user", "assistant", "tool", "assistant"]
    assert episode.messages[0].text == TASK.prompt
    assert episode.called_tools == ["lookup_order", "get_customer", "lookup_order"]
    assert episode.first_tool == "lookup_order"
    assert [c.id for c in episode.calls] == ["a", "b", "c"]
    # the model saw the system prompt and the exposed tools every turn
    assert {s["system"] for s in model.seen} == {"Be brief."}
    assert model.seen[0]["tools"] == ["get_customer", "lookup_order", "delete_customer"]


def test_error_results_are_passed_back_as_errors() -> None:
    model = ScriptedModel([calls_turn(call("a", "lookup_order", order_id="1")), answer("sorry")])
    server = FakeServer({"lookup_order": CallOutcome("validation: order_id must look like #12345", True)})
    episode = run(model, server)
    result = model.seen[1]["messages"][-1].tool_results[0]
    assert (result.content, result.is_error) == ("validation: order_id must look like #12345", True)
    assert episode.calls[0].is_error
    assert episode.status == "completed"


def test_unknown_tool_gets_an_error_result_and_the_episode_completes() -> None:
    model = ScriptedModel([calls_turn(call("a", "find_order", order_id="#1")), answer("no luck")])
    server = FakeServer()
    episode = run(model, server)
    assert server.calls == []
    assert episode.status == "completed"
    assert episode.answer == "no luck"
    result = model.seen[1]["messages"][-1].tool_results[0]
    assert result.is_error
    assert "no tool named 'find_order'" in result.content
    assert episode.calls[0].original is None
    assert episode.called_tools == []
    assert episode.first_tool == "?find_order"


def test_blocked_tool_is_refused_and_never_reaches_the_server() -> None:
    model = ScriptedModel([calls_turn(call("a", "delete_customer", customer_id="C-1"),
                                      call("b", "get_customer", email="j@x.com")), answer("ok")])
    server = FakeServer()
    episode = run(model, server, config=EpisodeConfig(blocked_tools={"delete_customer"}))
    assert server.calls == [("get_customer", {"email": "j@x.com"})]
    refused = model.seen[1]["messages"][-1].tool_results[0]
    assert refused.is_error and "destructive" in refused.content
    assert episode.calls[0].original == "delete_customer"
    assert episode.status == "completed"


def test_oversized_result_is_truncated_with_a_note() -> None:
    model = ScriptedModel([calls_turn(call("a", "lookup_order")), answer("ok")])
    server = FakeServer({"lookup_order": CallOutcome("x" * 5000, False)})
    episode = run(model, server, config=EpisodeConfig(max_result_chars=1000))
    record = episode.calls[0]
    assert record.truncated is True
    assert record.result.startswith("x" * 1000)
    assert "x" * 1001 not in record.result
    assert "[truncated: the result had 5,000 characters and only the first 1,000 are shown." in record.result
    assert model.seen[1]["messages"][-1].tool_results[0].content == record.result


def test_a_result_at_the_limit_is_not_truncated() -> None:
    model = ScriptedModel([calls_turn(call("a", "lookup_order")), answer("ok")])
    episode = run(model, FakeServer({"lookup_order": CallOutcome("y" * 1000, False)}),
                  config=EpisodeConfig(max_result_chars=1000))
    assert episode.calls[0].truncated is False
    assert episode.calls[0].result == "y" * 1000


def test_running_out_of_turns_gives_max_turns() -> None:
    model = ScriptedModel([Turn(f"step {i}", (call(f"c{i}", "lookup_order"),), Usage(), "tool_use")
                           for i in range(3)])
    server = FakeServer()
    episode = run(model, server, config=EpisodeConfig(max_turns=3))
    assert episode.status == "max_turns"
    assert episode.turns == 3
    assert len(server.calls) == 3
    assert episode.answer == "step 2"
    assert episode.error is None


def test_pause_turn_without_calls_continues() -> None:
    model = ScriptedModel([Turn("thinking", (), Usage(), "pause_turn"), answer("final")])
    episode = run(model, FakeServer())
    assert episode.status == "completed"
    assert episode.answer == "final"
    assert episode.turns == 2


@pytest.mark.parametrize(
    ("model_script", "answers", "fragment"),
    [
        ([calls_turn(call("a", "lookup_order"))], {"lookup_order": ServerCrashed("connection lost")},
         "ServerCrashed: connection lost"),
        ([ModelUnavailable("overloaded after 5 retries")], {}, "ModelUnavailable: overloaded after 5 retries"),
        ([calls_turn(call("a", "lookup_order")), ModelUnavailable("gave up")], {}, "ModelUnavailable: gave up"),
        ([calls_turn(call("a", "lookup_order"))], {"lookup_order": RuntimeError("bug in harness")},
         "unexpected RuntimeError: bug in harness"),
    ],
)
def test_infrastructure_faults_are_recorded_not_raised(model_script: list, answers: dict, fragment: str) -> None:
    episode = run(ScriptedModel(model_script), FakeServer(answers))
    assert episode.status == "infra_error"
    assert episode.error == fragment
    assert episode.duration_s >= 0


def test_usage_is_summed_over_turns() -> None:
    model = ScriptedModel([
        calls_turn(call("a", "lookup_order"), usage=Usage(100, 10, 5, 1)),
        calls_turn(call("b", "lookup_order"), usage=Usage(200, 20, 50, 0)),
        answer("ok", usage=Usage(300, 30, 0, 2)),
    ])
    episode = run(model, FakeServer())
    assert episode.usage == Usage(600, 60, 55, 3)
    assert episode.usage.to_json() == {"input_tokens": 600, "output_tokens": 60, "cache_read_tokens": 55,
                                       "cache_write_tokens": 3}


def test_the_episode_seed_reaches_the_model() -> None:
    model = ScriptedModel([answer("ok")])
    run(model, FakeServer(), seed=1234)
    assert model.seen[0]["seed"] == 1234


def test_turn_slot_bounds_concurrent_model_turns() -> None:
    active = 0
    peak = 0

    class SlowModel(ScriptedModel):
        async def turn(self, system: str, tools: Sequence[ToolDef], messages: Sequence[Message], *,
                       seed: int = 0) -> Turn:
            nonlocal active, peak
            active += 1
            peak = max(peak, active)
            await asyncio.sleep(0.01)
            active -= 1
            return answer("ok")

    async def main() -> list[Episode]:
        slot = asyncio.Semaphore(2)
        return await asyncio.gather(*(
            run_episode(TASK, SlowModel([]), EXPOSED, FakeServer(), EpisodeConfig(), turn_slot=slot)
            for _ in range(6)))

    episodes = asyncio.run(main())
    assert [e.status for e in episodes] == ["completed"] * 6
    assert peak == 2


# --- with the in-memory mini server ---------------------------------------------------------------


async def with_mini(model: Any, candidate: Candidate, config: EpisodeConfig, task: Task = TASK) -> Episode:
    async with ServerPool(ServerSpec(inproc=mini_server.server)) as pool:
        catalog = await pool.list_tools()
        exposed = apply(catalog, candidate)
        return await run_episode(task, model, exposed, pool.call, config)


@pytest.fixture(autouse=True)
def _fresh_mini_server() -> None:
    mini_server.reset()


def test_renamed_and_namespaced_names_are_routed_to_the_original_tool() -> None:
    candidate = Candidate(edits={"lookup_order": ToolEdit(name="find_order")}, scheme="prefix", word="shop")
    model = ScriptedModel([calls_turn(call("a", "shop_find_order", order_id="#10007")), answer("ok")])
    episode = asyncio.run(with_mini(model, candidate, EpisodeConfig()))
    assert mini_server.CALLS == [("lookup_order", {"order_id": "#10007"})]
    assert "shop_find_order" in model.seen[0]["tools"]
    assert "lookup_order" not in model.seen[0]["tools"]
    record = episode.calls[0]
    assert (record.name, record.original, record.is_error) == ("shop_find_order", "lookup_order", False)
    assert '"status": "shipped"' in record.result
    # the original name is not callable under the candidate
    model = ScriptedModel([calls_turn(call("a", "lookup_order", order_id="#10007")), answer("ok")])
    episode = asyncio.run(with_mini(model, candidate, EpisodeConfig()))
    assert episode.calls[0].is_error and episode.calls[0].original is None


def test_server_errors_come_back_as_error_results() -> None:
    model = ScriptedModel([calls_turn(call("a", "lookup_order", order_id="10007")), answer("ok")])
    episode = asyncio.run(with_mini(model, Candidate(), EpisodeConfig()))
    assert episode.calls[0].is_error
    assert "validation: order_id must look like #12345" in episode.calls[0].result
    assert episode.status == "completed"


def test_destructive_tool_blocked_before_the_mini_server() -> None:
    model = ScriptedModel([calls_turn(call("a", "delete_customer", customer_id="C-1042")), answer("ok")])
    episode = asyncio.run(with_mini(model, Candidate(), EpisodeConfig(blocked_tools={"delete_customer"})))
    assert mini_server.CALLS == []
    assert episode.calls[0].is_error


def test_large_mini_server_result_is_truncated() -> None:
    model = ScriptedModel([calls_turn(call("a", "export_log", lines=2000)), answer("ok")])
    episode = asyncio.run(with_mini(model, Candidate(), EpisodeConfig(max_result_chars=500)))
    assert mini_server.CALLS == [("export_log", {"lines": 2000})]
    assert episode.calls[0].truncated
    assert episode.calls[0].result.startswith("line 0: all quiet\nline 1: all quiet")


def test_sim_agent_end_to_end_on_the_mini_server() -> None:
    model = load_model("sim:lexical")
    episode = asyncio.run(with_mini(model, Candidate(), EpisodeConfig()))
    assert episode.status == "completed"
    assert mini_server.CALLS == [("get_customer", {"email": "jane@x.com"}), ("list_orders", {"customer_id": "C-1042"})]
    assert episode.called_tools == ["get_customer", "list_orders"]
    assert "#10007" in episode.answer and "#10008" in episode.answer
    assert episode.turns == 3
    assert episode.usage.input_tokens > 0
