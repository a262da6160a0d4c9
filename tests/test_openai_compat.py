"""OpenAI-compatible models with the real `openai` SDK over HTTP against the local fake Chat Completions API:
request shape, tool call round trips, arguments that are not JSON, finish reasons, usage, faults, access errors,
model strings, and `optimizer eval --models openai:…` end to end."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest
from fakes.openai_api import FakeOpenAIAPI, ScriptedPolicy, SimPolicy, text_reply, tool_call_reply

from optimizer.definitions import ToolDef
from optimizer.models import Providers, ProviderSettings, load_models
from optimizer.models.base import Message, ModelAccessError, ModelSpecError, ModelUnavailable, ToolResult, Turn

pytest.importorskip("openai")
from optimizer.models.openai_compat import OpenAIAgent, OpenAIClient  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SUPPORT = f"{sys.executable} {ROOT / 'examples/support/server.py'}"
KEY = "sk-openai-test-0123456789abcdef"
Cli = Callable[..., Any]
TOOLS = (
    ToolDef("lookup_order", "Look up an order by its number, like #12345: items, total, status.",
            {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}),
    ToolDef("weather.forecast", "Weather forecast for a city.",
            {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
)
TASK = [Message("user", "What is in order #10007?")]
T = TypeVar("T")


def agent(api: FakeOpenAIAPI, name: str = "gpt-test", **options: Any) -> OpenAIAgent:
    return OpenAIAgent(name, OpenAIClient(api_key=KEY, base_url=api.base_url, max_connections=4), **options)


def run(model: OpenAIAgent, work: Coroutine[Any, Any, T]) -> T:
    """Run one coroutine of `model` in a fresh event loop and close its client (the SDK binds to the loop)."""
    async def go() -> T:
        try:
            return await work
        finally:
            await model.client.close()

    return asyncio.run(go())


def turn(model: OpenAIAgent, messages: list[Message] = TASK, tools: tuple[ToolDef, ...] = TOOLS,
         system: str = "Be helpful.") -> Turn:
    return run(model, model.turn(system, tools, messages))


def follow_up(api: FakeOpenAIAPI, model: OpenAIAgent, first: Turn, *results: ToolResult) -> Turn:
    """The second turn of a conversation, on a new client (the first one is closed with its loop)."""
    model.client = OpenAIClient(api_key=KEY, base_url=api.base_url)
    return turn(model, [*TASK, Message("assistant", first.text, first.tool_calls, raw=first.raw),
                        Message("tool", tool_results=results)])


def completions(api: FakeOpenAIAPI) -> list[dict[str, Any]]:
    return [r["body"] for r in api.requests if r["route"] == "/v1/chat/completions"]


# --- requests and replies -------------------------------------------------------------------------------


def test_a_turn_sends_system_first_function_tools_and_auto_choice() -> None:
    with FakeOpenAIAPI(ScriptedPolicy([tool_call_reply("lookup_order", {"order_id": "#10007"})])) as api:
        result = turn(agent(api, max_tokens=512))
        request = api.requests[-1]
    body = request["body"]
    assert body["model"] == "gpt-test" and body["max_tokens"] == 512 and "max_completion_tokens" not in body
    assert body["messages"] == [{"role": "system", "content": "Be helpful."},
                                {"role": "user", "content": "What is in order #10007?"}]
    assert body["tool_choice"] == "auto"
    assert body["tools"][0] == {"type": "function", "function": {
        "name": "lookup_order", "description": TOOLS[0].description, "parameters": TOOLS[0].input_schema}}
    assert not {"temperature", "seed", "stream", "parallel_tool_calls"} & set(body)
    assert request["headers"]["content-type"] == "application/json" and "authorization" not in request["headers"]
    assert result.stop_reason == "tool_use" and result.tool_calls[0].name == "lookup_order"
    assert result.tool_calls[0].arguments == {"order_id": "#10007"}
    assert result.raw[0]["tool_calls"][0]["function"]["arguments"] == '{"order_id": "#10007"}'
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0


def test_without_tools_or_system_neither_is_sent() -> None:
    with FakeOpenAIAPI(ScriptedPolicy([text_reply("hello")])) as api:
        result = turn(agent(api), tools=(), system="")
        body = api.requests[-1]["body"]
    assert "tools" not in body and "tool_choice" not in body
    assert body["messages"] == [{"role": "user", "content": "What is in order #10007?"}]
    assert result.text == "hello" and result.stop_reason == "end_turn" and not result.tool_calls


def test_names_openai_refuses_go_out_sanitized_and_come_back_exposed() -> None:
    with FakeOpenAIAPI(ScriptedPolicy([tool_call_reply("weather_forecast", {"city": "Oslo"}),
                                       text_reply("rain")])) as api:
        model = agent(api)
        first = turn(model)
        assert [c.name for c in first.tool_calls] == ["weather.forecast"]
        follow_up(api, model, first, ToolResult(first.tool_calls[0].id, "rain"))
        sent = completions(api)
    assert [t["function"]["name"] for t in sent[0]["tools"]] == ["lookup_order", "weather_forecast"]
    assert sent[1]["messages"][2]["tool_calls"][0]["function"]["name"] == "weather_forecast"


def test_a_tool_call_round_trip_with_error_results() -> None:
    reply = tool_call_reply("lookup_order", {"order_id": "12"})
    reply["message"]["tool_calls"].append(
        {"id": "call_second", "type": "function",
         "function": {"name": "lookup_order", "arguments": '{"order_id":"#1"}'}})
    with FakeOpenAIAPI(ScriptedPolicy([reply, text_reply("<response>a lamp</response>")])) as api:
        model = agent(api)
        first = turn(model)
        one, two = first.tool_calls
        second = follow_up(api, model, first, ToolResult(one.id, "no such order", True),
                           ToolResult(two.id, "Error: order ids look like #12345.", True))
        sent = completions(api)[-1]["messages"]
    assert second.stop_reason == "end_turn" and "a lamp" in second.text and not second.tool_calls
    assert sent[2] == {"role": "assistant", "content": None, "tool_calls": [
        {"id": one.id, "type": "function", "function": {"name": "lookup_order", "arguments": '{"order_id": "12"}'}},
        {"id": "call_second", "type": "function",
         "function": {"name": "lookup_order", "arguments": '{"order_id":"#1"}'}}]}  # as the model wrote it
    assert sent[3] == {"role": "tool", "tool_call_id": one.id, "content": "Error: no such order"}
    assert sent[4] == {"role": "tool", "tool_call_id": "call_second", "content": "Error: order ids look like #12345."}


@pytest.mark.parametrize("raw", ['{"order_id": "#100', '["#10007"]', "null"])
def test_arguments_that_are_not_a_json_object_become_empty_and_an_error_note(raw: str) -> None:
    with FakeOpenAIAPI(ScriptedPolicy([tool_call_reply("lookup_order", raw), text_reply("sorry")])) as api:
        model = agent(api)
        first = turn(model)
        call = first.tool_calls[0]
        follow_up(api, model, first, ToolResult(call.id, "Error: order_id is required", True))
        sent = completions(api)[-1]["messages"]
    assert call.arguments == {} and first.raw[0]["tool_calls"][0]["function"]["arguments"] == raw
    assert sent[2]["tool_calls"][0]["function"]["arguments"] == "{}"  # what actually ran
    note = sent[3]["content"]
    assert note.startswith("Error: the arguments of this call were not a JSON object") and repr(raw) in note
    assert note.endswith("It returned: Error: order_id is required")


def test_empty_arguments_are_an_empty_object_not_an_error() -> None:
    with FakeOpenAIAPI(ScriptedPolicy([tool_call_reply("lookup_order", ""), text_reply("ok")])) as api:
        model = agent(api)
        first = turn(model)
        follow_up(api, model, first, ToolResult(first.tool_calls[0].id, "fine"))
        sent = completions(api)[-1]["messages"]
    assert first.tool_calls[0].arguments == {} and sent[3]["content"] == "fine"


@pytest.mark.parametrize(("finish", "expected"), [("stop", "end_turn"), ("length", "max_tokens"),
                                                  ("content_filter", "refusal"), ("something_new", "end_turn")])
def test_finish_reasons_map(finish: str, expected: str) -> None:
    with FakeOpenAIAPI(ScriptedPolicy([text_reply("partial", finish_reason=finish)])) as api:
        assert turn(agent(api)).stop_reason == expected


def test_tool_calls_are_tool_use_even_when_the_server_says_stop_and_a_refusal_is_a_refusal() -> None:
    calling = tool_call_reply("lookup_order", {"order_id": "#10007"}) | {"finish_reason": "stop"}
    refusing = {"message": {"content": None, "refusal": "I can't help with that."}, "finish_reason": "stop"}
    with FakeOpenAIAPI(ScriptedPolicy([calling, refusing])) as api:
        assert turn(agent(api)).stop_reason == "tool_use"
        refused = turn(agent(api))
    assert refused.stop_reason == "refusal" and refused.text == "I can't help with that."


def test_usage_separates_cached_prompt_tokens() -> None:
    with FakeOpenAIAPI(SimPolicy("lexical"), min_cached_tokens=0) as api:
        model = agent(api)

        async def twice() -> list[Turn]:
            return [await model.turn("Be helpful.", TOOLS, TASK) for _ in range(2)]

        first, second = run(model, twice())
        prompt_tokens = api.usage_totals()["prompt_tokens"] // 2
    assert first.usage.cache_read_tokens == 0 and first.usage.input_tokens == prompt_tokens
    assert second.usage.cache_read_tokens == prompt_tokens and second.usage.input_tokens == 0


def test_reported_cache_writes_are_not_counted_as_input() -> None:
    usage = {"prompt_tokens": 1000, "completion_tokens": 7, "total_tokens": 1007,
             "prompt_tokens_details": {"cached_tokens": 600, "cache_write_tokens": 300}}
    with FakeOpenAIAPI(ScriptedPolicy([text_reply("ok") | {"usage": usage}])) as api:
        result = turn(agent(api))
    assert (result.usage.input_tokens, result.usage.cache_read_tokens, result.usage.cache_write_tokens,
            result.usage.output_tokens) == (100, 600, 300, 7)


# --- faults and access ------------------------------------------------------------------------------------


def test_rate_limits_are_retried_and_slow_the_gate_down() -> None:
    with FakeOpenAIAPI(ScriptedPolicy([text_reply("ok")])) as api:
        api.inject(status=429, retry_after=0.01, times=4)  # the SDK's own 2 retries, then ours
        model = agent(api)
        assert turn(model).text == "ok"
        assert model.client.gate.allowed < model.client.gate.limit and api.pending_faults == 0


@pytest.mark.parametrize("status", [429, 500])
def test_an_api_that_keeps_failing_gives_model_unavailable(status: int) -> None:
    with FakeOpenAIAPI(ScriptedPolicy([text_reply("never")])) as api:
        api.inject(status=status, retry_after=0.01, message=f"busy (key {KEY})", times=50)
        model = agent(api)
        model.client.give_up_after = 2
        with pytest.raises(ModelUnavailable, match=f"{status}.* after 2 attempts") as info:
            turn(model)
        assert api.calls["/v1/chat/completions"] == 6  # 2 attempts x (1 + 2 SDK retries)
    assert KEY not in str(info.value)


def test_a_malformed_body_is_model_unavailable_not_a_crash() -> None:
    with FakeOpenAIAPI(ScriptedPolicy([text_reply("never")])) as api:
        api.inject(malformed=True)
        with pytest.raises(ModelUnavailable, match="unreadable reply"):
            turn(agent(api))


def test_a_prompt_that_is_too_long_ends_the_turn() -> None:
    with FakeOpenAIAPI(ScriptedPolicy([text_reply("never")])) as api:
        api.inject(status=400, message="This model's maximum context length is 8192 tokens.",
                   code="context_length_exceeded")
        result = turn(agent(api))
    assert result.stop_reason == "context_exceeded" and not result.tool_calls


def test_another_bad_request_is_model_unavailable() -> None:
    with FakeOpenAIAPI(ScriptedPolicy([text_reply("never")])) as api:
        api.inject(status=400, message="Invalid 'messages[1]'.")
        with pytest.raises(ModelUnavailable, match="BadRequestError 400"):
            turn(agent(api))


def test_a_rejected_key_or_unknown_model_is_an_access_error() -> None:
    with FakeOpenAIAPI(SimPolicy("lexical"), rejected_keys=[KEY]) as api:
        with pytest.raises(ModelAccessError, match="AuthenticationError 401") as info:
            turn(agent(api))
        model = agent(api)
        with pytest.raises(ModelAccessError, match="AuthenticationError"):
            run(model, model.check_access())
    assert KEY not in str(info.value)
    with FakeOpenAIAPI(SimPolicy("lexical"), known_models=["gpt-test"]) as api:
        with pytest.raises(ModelAccessError, match="NotFoundError 404.*gpt-missing"):
            turn(agent(api, "gpt-missing"))
        model = agent(api)
        run(model, model.check_access())
        probe = api.requests[-1]["body"]
    assert probe["model"] == "gpt-test" and probe["max_tokens"] == 1 and "tools" not in probe


def test_credentials_and_address(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ModelAccessError, match="OPENAI_API_KEY is not set.*OPENAI_BASE_URL"):
        OpenAIClient()
    with pytest.raises(ModelAccessError, match="OPENAI_API_KEY"):
        load_models(["openai:gpt-test"])
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    local = OpenAIClient()
    assert local.sdk.api_key == "not-needed" and local.token_limit_param == "max_tokens"
    monkeypatch.delenv("OPENAI_BASE_URL")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    hosted = OpenAIClient()
    assert str(hosted.sdk.base_url).startswith("https://api.openai.com/")
    assert hosted.token_limit_param == "max_completion_tokens"
    asyncio.run(local.close())
    asyncio.run(hosted.close())


def test_model_strings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    small, local = load_models(["openai:gpt-test", "openai:llama3.1:8b?max_tokens=256"],
                               Providers(ProviderSettings(max_connections=3, openai_base_url="http://127.0.0.1:9/v1")))
    assert small.client is local.client and small.client.gate.limit == 3  # type: ignore[attr-defined]
    assert str(small.client.sdk.base_url) == "http://127.0.0.1:9/v1/"  # type: ignore[attr-defined]
    assert (small.id, small.settings) == ("openai:gpt-test", {"max_tokens": 4096})
    assert (local.id, local.settings, local.offline) == ("openai:llama3.1:8b", {"max_tokens": 256}, False)
    asyncio.run(small.client.close())  # type: ignore[attr-defined]
    for bad, message in [("openai:", "name the model"), ("openai:gpt-test?temperature=1", "unknown option"),
                         ("openai:gpt-test?max_tokens=lots", "whole number"),
                         ("openai:gpt-test?max_tokens=0", "at least 1")]:
        with pytest.raises(ModelSpecError, match=message):
            load_models([bad])


def test_without_the_openai_package_the_model_string_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)  # import openai raises ImportError
    monkeypatch.delitem(sys.modules, "optimizer.models.openai_compat")
    with pytest.raises(ModelSpecError, match=r"mcp-tool-optimizer\[openai\]"):
        load_models(["openai:gpt-test"], Providers(ProviderSettings(openai_base_url="http://127.0.0.1:9/v1")))


def test_the_fake_refuses_what_openai_refuses() -> None:
    import openai

    async def ask(**params: Any) -> None:
        async with openai.AsyncOpenAI(api_key=KEY, base_url=api.base_url, max_retries=0) as sdk:
            await sdk.chat.completions.create(model="gpt-test", **params)

    user = {"role": "user", "content": "hi"}
    orphan = {"role": "tool", "tool_call_id": "call_1", "content": "x"}
    unanswered = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}
    with FakeOpenAIAPI(ScriptedPolicy([])) as api:
        for params, message in [({"messages": [user, orphan]}, "must be a response"),
                                ({"messages": [user, unanswered, user]}, "must be followed by tool messages"),
                                ({"messages": [user], "tool_choice": "auto"}, "only allowed when 'tools'"),
                                ({"messages": [user], "tools": [{"type": "function", "function": {"name": "a.b"}}]},
                                 "does not match pattern")]:
            with pytest.raises(openai.BadRequestError, match=message):
                asyncio.run(ask(**params))
        assert all("authorization" not in r["headers"] for r in api.requests)


# --- the CLI end to end ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_eval_with_an_openai_compatible_model_through_the_fake(run_cli: Cli, tmp_path: Path) -> None:
    with FakeOpenAIAPI(SimPolicy("lexical"), known_models=["gpt-test"]) as api:
        env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": api.base_url}
        result = run_cli("eval", "--server", SUPPORT, "--tasks", str(ROOT / "examples/support/tasks"),
                         "--models", "openai:gpt-test", "--max-connections", "8", "--runs-dir", str(tmp_path),
                         "--server-instances", "1",
                         "--run-id", "openai", "--json", env=env, cwd=tmp_path)
        assert result.returncode == 0, result.stderr[-3000:]
        assert api.policy_errors == []
    report = json.loads(result.stdout)
    assert report["offline"] is False and report["models"] == ["openai:gpt-test"]
    assert report["episodes"]["infra_errors"] == 0 and report["episodes"]["run"] > 0
    results = report["results"]["openai:gpt-test"]
    assert sum(results[s]["n"] for s in results) == report["episodes"]["run"]
    assert sum(results[s]["passed"] for s in results) > 0
    leaked = [p for p in (tmp_path / "openai").rglob("*") if p.is_file() and KEY.encode() in p.read_bytes()]
    assert leaked == [] and KEY not in result.stdout + result.stderr


def test_eval_with_a_rejected_key_stops_before_any_episode(run_cli: Cli, tmp_path: Path) -> None:
    with FakeOpenAIAPI(SimPolicy("lexical"), rejected_keys=[KEY]) as api:
        result = run_cli("eval", "--server", SUPPORT, "--tasks", str(ROOT / "examples/support/tasks"),
                         "--models", "openai:gpt-test", "--runs-dir", str(tmp_path),
                         env={"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": api.base_url}, cwd=tmp_path)
        assert api.calls["/v1/chat/completions"] == 1  # the access check only
    assert result.returncode == 2
    assert "openai:gpt-test" in result.stderr and "AuthenticationError" in result.stderr and KEY not in result.stderr
