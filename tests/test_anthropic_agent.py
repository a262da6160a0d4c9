"""The Claude agent with the real `anthropic` SDK over HTTP against the local fake Messages API: request
shape, prompt caching, thinking signatures, stop reasons, faults, batches, and `optimizer eval` end to end."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fakes.anthropic_api import FakeAnthropicAPI, ScriptedPolicy, SimPolicy, text_reply, tool_use_reply

from optimizer.definitions import ToolDef
from optimizer.models import Providers, ProviderSettings, load_models
from optimizer.models.anthropic import AnthropicAgent, AnthropicClient
from optimizer.models.base import Message, ModelAccessError, ModelSpecError, ModelUnavailable, ToolResult
from optimizer.models.limits import RateGate

ROOT = Path(__file__).resolve().parent.parent
SUPPORT = f"{sys.executable} {ROOT / 'examples/support/server.py'}"
KEY = "sk-ant-test-0123456789abcdef"
Cli = Callable[..., Any]
TOOLS = (
    ToolDef("lookup_order", "Look up an order by its number, like #12345: items, total, status.",
            {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}),
    ToolDef("get_weather", "Weather forecast for a city.",
            {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
)
TASK = [Message("user", "What is in order #10007?")]


def agent(api: FakeAnthropicAPI, name: str = "claude-haiku-5-5", **options: object) -> AnthropicAgent:
    client = AnthropicClient(api_key=KEY, base_url=api.base_url, max_connections=4)
    return AnthropicAgent(name, client, **options)  # type: ignore[arg-type]


def turn(model: AnthropicAgent, messages: list[Message] = TASK):  # noqa: ANN201 - a Turn
    async def go():  # noqa: ANN202
        try:
            return await model.turn("Be helpful.", TOOLS, messages)
        finally:
            await model.client.close()

    return asyncio.run(go())


def test_a_turn_sends_tools_system_and_cache_breakpoints_and_reads_the_tool_call() -> None:
    with FakeAnthropicAPI(ScriptedPolicy([tool_use_reply("lookup_order", {"order_id": "#10007"})])) as api:
        result = turn(agent(api))
        body = api.requests[-1]["body"]
    assert result.stop_reason == "tool_use" and result.tool_calls[0].name == "lookup_order"
    assert result.tool_calls[0].arguments == {"order_id": "#10007"}
    assert body["model"] == "claude-haiku-5-5" and "temperature" not in body
    assert [t["name"] for t in body["tools"]] == ["lookup_order", "get_weather"]
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"} and "cache_control" not in body["tools"][0]
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert result.usage.cache_write_tokens > 0 and result.usage.output_tokens > 0


def test_tool_results_go_back_as_a_user_turn_with_is_error() -> None:
    first = tool_use_reply("lookup_order", {"order_id": "12"})
    with FakeAnthropicAPI(ScriptedPolicy([first, text_reply("<response>a lamp</response>")])) as api:
        model = agent(api)
        one = turn(model)
        model.client = AnthropicClient(api_key=KEY, base_url=api.base_url)
        history = [*TASK, Message("assistant", one.text, one.tool_calls, raw=one.raw),
                   Message("tool", tool_results=(ToolResult(one.tool_calls[0].id, "bad order id", True),))]
        two = turn(model, history)
        sent = api.requests[-1]["body"]["messages"]
    assert two.stop_reason == "end_turn" and "a lamp" in two.text and not two.tool_calls
    assert sent[1]["role"] == "assistant" and sent[1]["content"][0]["type"] == "tool_use"
    assert sent[2] == {"role": "user", "content": [{"type": "tool_result", "tool_use_id": one.tool_calls[0].id,
                                                     "content": "bad order id", "is_error": True}]}


def test_thinking_blocks_come_back_with_their_signature() -> None:
    thought = {"type": "thinking", "thinking": "Order numbers start with #.", "signature": "sig-abc"}
    reply = tool_use_reply("lookup_order", {"order_id": "#10007"})
    reply["content"] = [thought, *reply["content"]]
    with FakeAnthropicAPI(ScriptedPolicy([reply, text_reply("done")])) as api:
        model = agent(api, thinking="2048")
        one = turn(model)
        model.client = AnthropicClient(api_key=KEY, base_url=api.base_url)
        turn(model, [*TASK, Message("assistant", one.text, one.tool_calls, raw=one.raw),
                     Message("tool", tool_results=(ToolResult(one.tool_calls[0].id, "ok"),))])
        first, second = api.requests[-2]["body"], api.requests[-1]["body"]
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 2048} and first["max_tokens"] > 2048
    assert second["messages"][1]["content"][0] == thought


@pytest.mark.parametrize(("reason", "expected"), [("max_tokens", "max_tokens"), ("refusal", "refusal"),
                                                  ("pause_turn", "pause_turn"),
                                                  ("model_context_window_exceeded", "context_exceeded")])
def test_every_stop_reason_maps(reason: str, expected: str) -> None:
    with FakeAnthropicAPI(ScriptedPolicy([text_reply("partial", stop_reason=reason)])) as api:
        assert turn(agent(api)).stop_reason == expected


def test_a_second_identical_prefix_is_read_from_the_cache() -> None:
    with FakeAnthropicAPI(SimPolicy("lexical")) as api:
        model = agent(api)

        async def twice():  # noqa: ANN202
            try:
                return [await model.turn("Be helpful.", TOOLS, TASK) for _ in range(2)]
            finally:
                await model.client.close()

        first, second = asyncio.run(twice())
    assert first.usage.cache_write_tokens > 0 and first.usage.cache_read_tokens == 0
    assert second.usage.cache_read_tokens == first.usage.cache_write_tokens and second.usage.cache_write_tokens == 0


def test_rate_limits_are_retried_and_slow_the_gate_down() -> None:
    with FakeAnthropicAPI(ScriptedPolicy([text_reply("ok")])) as api:
        api.inject(status=429, retry_after=0.01, times=4)  # the SDK's own 2 retries, then ours
        model = agent(api)
        assert turn(model).text == "ok"
        assert model.client.gate.allowed < model.client.gate.limit


def test_an_api_that_keeps_failing_gives_model_unavailable() -> None:
    with FakeAnthropicAPI(ScriptedPolicy([text_reply("never")])) as api:
        api.inject(status=500, times=50)
        model = agent(api)
        model.client.give_up_after = 2
        with pytest.raises(ModelUnavailable, match="InternalServerError"):
            turn(model)


def test_a_malformed_body_is_model_unavailable_not_a_crash() -> None:
    with FakeAnthropicAPI(ScriptedPolicy([text_reply("never")])) as api:
        api.inject(malformed=True)
        with pytest.raises(ModelUnavailable, match="unreadable reply"):
            turn(agent(api))


def test_rate_gate_halves_and_recovers() -> None:
    gate = RateGate(8, recover_after=2)
    gate.slow_down()
    gate.slow_down()
    assert gate.allowed == 2
    for _ in range(4):
        gate.succeeded()
    assert gate.allowed == 4


def test_model_strings_and_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    haiku, sonnet = load_models(["claude-haiku-5-5", "anthropic:claude-sonnet-5-5?thinking=adaptive"],
                                Providers(ProviderSettings(max_connections=3)))
    assert haiku.client is sonnet.client and haiku.client.gate.limit == 3  # type: ignore[attr-defined]
    assert sonnet.settings["thinking"] == {"type": "adaptive"} and haiku.settings["thinking"] is None
    with pytest.raises(ModelSpecError, match=r"retired \(end of life 2026-11-30\); use claude-sonnet-5-5"):
        load_models(["claude-sonnet-4-5"])
    with pytest.raises(ModelSpecError, match="unknown option"):
        load_models(["claude-haiku-5-5?temperature=1"])
    with pytest.raises(ModelSpecError, match="at least 1024"):
        load_models(["claude-haiku-5-5?thinking=10"])


def test_defaults_are_names_the_sdk_knows() -> None:
    from optimizer.models import CLAUDE_JUDGE, CLAUDE_PROPOSER, CLAUDE_TASK_MODELS, RETIRED_MODELS
    from optimizer.models.anthropic import known_models

    for name in (*CLAUDE_TASK_MODELS, CLAUDE_PROPOSER, CLAUDE_JUDGE):
        assert name in known_models() and name not in RETIRED_MODELS
    for retired in RETIRED_MODELS.values():
        assert retired.replacement in known_models() and retired.replacement not in RETIRED_MODELS


def test_retired_and_deprecated_models_are_refused_with_date_and_replacement() -> None:
    from datetime import date

    from optimizer.models import check_model_name

    with pytest.raises(ModelSpecError, match=r"claude-opus-4-5 is deprecated \(end of life 2027-01-22\); use "
                       "claude-opus-5-5"):
        check_model_name("claude-opus-4-5", today=date(2026, 12, 1))
    with pytest.raises(ModelSpecError, match="claude-opus-4-5 is retired"):
        check_model_name("anthropic:claude-opus-4-5", today=date(2027, 1, 22))
    check_model_name("claude-sonnet-5-5", today=date(2026, 12, 1))


def test_every_model_the_sdk_deprecates_is_in_our_table() -> None:
    """The SDK warns on each request to a deprecated model; our table must refuse those first."""
    data = pytest.importorskip("anthropic._data")
    from optimizer.models import RETIRED_MODELS

    assert set(data.DEPRECATED_MODELS) <= set(RETIRED_MODELS)


def test_a_missing_key_is_an_access_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ModelAccessError, match="ANTHROPIC_API_KEY"):
        AnthropicClient()


def test_batches_answer_each_pending_request() -> None:
    with FakeAnthropicAPI(SimPolicy("lexical"), finish_after_polls=1) as api:
        client = AnthropicClient(api_key=KEY, base_url=api.base_url, max_connections=3)
        model = AnthropicAgent("claude-haiku-5-5", client, batch=True)

        async def three():  # noqa: ANN202
            try:
                client._batcher = None
                tasks = [[Message("user", f"What is in order #1000{i}?")] for i in range(3)]
                from optimizer.models.anthropic import Batcher

                client._batcher = Batcher(client.sdk, flush_at=3, poll_s=0.01)
                return await asyncio.gather(*(model.turn("Be helpful.", TOOLS, t) for t in tasks))
            finally:
                await client.close()

        turns = asyncio.run(three())
        assert api.calls["/v1/messages/batches"] == 1 and api.calls.get("/v1/messages", 0) == 0
    assert [t.tool_calls[0].arguments["order_id"] for t in turns] == ["#10000", "#10001", "#10002"]


# --- the CLI end to end ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_eval_with_claude_models_through_the_fake(run_cli: Cli, tmp_path: Path) -> None:
    prompt = tmp_path / "deployment.md"
    prompt.write_text("You are Acme's support assistant. Be brief.\n", encoding="utf-8")
    with FakeAnthropicAPI(SimPolicy("lexical")) as api:
        env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.base_url}
        result = run_cli("eval", "--server", SUPPORT, "--tasks", str(ROOT / "examples/support/tasks"),
                         "--models", "claude-haiku-5-5,claude-sonnet-5-5", "--max-connections", "8",
                         "--server-instances", "1",
                         "--system-prompt", str(prompt), "--runs-dir", str(tmp_path), "--run-id", "claude",
                         "--json", env=env, cwd=tmp_path)
        assert result.returncode == 0, result.stderr[-3000:]
        report = json.loads(result.stdout)
        systems = {r["body"]["system"][0]["text"] for r in api.requests if r["path"] == "/v1/messages"}
        stats = api.cache_stats()
    assert report["offline"] is False and report["models"] == ["claude-haiku-5-5", "claude-sonnet-5-5"]
    assert report["episodes"]["infra_errors"] == 0
    assert sum(report["results"]["claude-haiku-5-5"][s]["passed"] for s in ("train", "heldout")) > 0
    assert len(systems) == 1 and next(iter(systems)).startswith("You are Acme's support assistant. Be brief.")
    assert stats["cache_read_input_tokens"] > stats["cache_creation_input_tokens"]
    leaked = [p for p in (tmp_path / "claude").rglob("*") if p.is_file() and KEY.encode() in p.read_bytes()]
    assert leaked == []


def test_a_rejected_key_stops_before_any_episode(run_cli: Cli, tmp_path: Path) -> None:
    with FakeAnthropicAPI(SimPolicy("lexical"), rejected_keys=[KEY]) as api:
        result = run_cli("eval", "--server", SUPPORT, "--tasks", str(ROOT / "examples/support/tasks"),
                         "--models", "claude-haiku-5-5", "--runs-dir", str(tmp_path),
                         env={"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.base_url}, cwd=tmp_path)
        assert api.calls.get("/v1/messages", 0) == 0
    assert result.returncode == 2
    assert "claude-haiku-5-5" in result.stderr and "AuthenticationError" in result.stderr


@pytest.mark.slow
def test_eval_with_batch_sends_message_batches(run_cli: Cli, tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.yaml"
    tasks.write_text("".join(f'- id: order-{i}\n  prompt: "What is the total of order #1000{i}?"\n'
                             f'  expect: {{tools: [lookup_order]}}\n' for i in range(1, 5)), encoding="utf-8")
    with FakeAnthropicAPI(SimPolicy("lexical")) as api:
        result = run_cli("eval", "--server", SUPPORT, "--tasks", str(tasks), "--models", "claude-haiku-5-5",
                         "--batch", "--max-connections", "8", "--runs-dir", str(tmp_path), "--run-id", "batch",
                         "--server-instances", "1",
                         "--json", env={"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.base_url}, cwd=tmp_path)
        calls = dict(api.calls)
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(result.stdout)
    assert calls.get("/v1/messages", 0) == 0 and calls["/v1/messages/batches"] >= 2  # one batch per turn round
    assert sum(r["passed"] for r in report["results"]["claude-haiku-5-5"].values()) == 4
    rows = sqlite3.connect(tmp_path / "batch" / "run.db").execute("SELECT data FROM episodes").fetchall()
    assert rows and all(json.loads(data)["batch"] is True for (data,) in rows)  # priced at the batch discount
