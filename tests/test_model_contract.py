"""The `AgentModel` contract, one suite for every provider: the offline agents directly, Claude through the
real SDK against the local fake Messages API, and an OpenAI-compatible model through the real `openai` SDK
against the local fake Chat Completions API (both fakes' replies come from the offline agent)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import get_args

import pytest
from fakes.anthropic_api import FakeAnthropicAPI, SimPolicy
from fakes.openai_api import FakeOpenAIAPI
from fakes.openai_api import SimPolicy as OpenAISimPolicy

from optimizer.definitions import ToolDef
from optimizer.models import load_model
from optimizer.models.anthropic import AnthropicAgent, AnthropicClient
from optimizer.models.base import AgentModel, Message, StopReason, ToolResult, Turn

TOOLS = (
    ToolDef("lookup_order", "Look up an order by its number, like #12345: items, total and status.",
            {"type": "object", "properties": {"order_id": {"type": "string", "description": "An order number."}},
             "required": ["order_id"]}),
    ToolDef("get_weather", "The weather forecast for a city.",
            {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
)
TASK = Message("user", "What is the total of order #10007?")


@pytest.fixture(params=["sim:lexical", "sim:skim", "claude-haiku-5-5", "openai:gpt-test"])
def model(request: pytest.FixtureRequest) -> Iterator[AgentModel]:
    if request.param.startswith("sim:"):
        yield load_model(request.param)
        return
    if request.param.startswith("openai:"):
        pytest.importorskip("openai")  # the optional extra (part of dev)
        from optimizer.models.openai_compat import OpenAIAgent, OpenAIClient

        with FakeOpenAIAPI(OpenAISimPolicy("lexical")) as openai_api:
            yield OpenAIAgent("gpt-test", OpenAIClient(api_key="contract-key", base_url=openai_api.base_url))
        return
    with FakeAnthropicAPI(SimPolicy("lexical")) as api:
        yield AnthropicAgent(request.param, AnthropicClient(api_key="contract-key", base_url=api.base_url))


def take(model: AgentModel, messages: list[Message], tools: tuple[ToolDef, ...] = TOOLS) -> Turn:
    async def go() -> Turn:
        turn = await model.turn("Answer the task with the tools.", tools, messages, seed=1)
        client = getattr(model, "client", None)
        if client is not None:
            await client.close()
            model.client = type(client)(api_key="contract-key", base_url=str(client.sdk.base_url))  # type: ignore
        return turn

    return asyncio.run(go())


def test_identity_is_json_for_the_cache_key(model: AgentModel) -> None:
    assert isinstance(model.id, str) and model.id
    json.dumps(model.settings, sort_keys=True)
    assert isinstance(model.offline, bool)


def test_a_task_gets_a_call_to_an_offered_tool_then_an_answer(model: AgentModel) -> None:
    first = take(model, [TASK])
    assert first.stop_reason in get_args(StopReason) and first.stop_reason == "tool_use"
    assert [c.name for c in first.tool_calls] == ["lookup_order"]
    assert all(isinstance(c.arguments, dict) for c in first.tool_calls)
    assert len({c.id for c in first.tool_calls}) == len(first.tool_calls)
    assert first.usage.input_tokens + first.usage.cache_read_tokens + first.usage.cache_write_tokens > 0
    results = tuple(ToolResult(c.id, "Order #10007: total $219.40, status shipped.") for c in first.tool_calls)
    second = take(model, [TASK, Message("assistant", first.text, first.tool_calls, raw=first.raw),
                          Message("tool", tool_results=results)])
    assert second.stop_reason == "end_turn" and not second.tool_calls
    assert "219.40" in second.text


def test_without_tools_the_turn_is_an_answer(model: AgentModel) -> None:
    turn = take(model, [TASK], tools=())
    assert not turn.tool_calls and turn.stop_reason == "end_turn"


def test_an_error_result_is_read_not_fatal(model: AgentModel) -> None:
    first = take(model, [TASK])
    failed = tuple(ToolResult(c.id, "Error: order_id must look like #12345.", True) for c in first.tool_calls)
    turn = take(model, [TASK, Message("assistant", first.text, first.tool_calls, raw=first.raw),
                        Message("tool", tool_results=failed)])
    assert turn.stop_reason in ("tool_use", "end_turn")
    assert all(c.name in {t.name for t in TOOLS} for c in turn.tool_calls)
