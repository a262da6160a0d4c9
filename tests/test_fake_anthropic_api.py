"""The fake Anthropic Messages API, driven by the real `anthropic` SDK (no network beyond 127.0.0.1)."""

from __future__ import annotations

import asyncio
import json
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest
from anthropic.types import TextBlock, ToolUseBlock
from fakes.anthropic_api import FakeAnthropicAPI, ScriptedPolicy, SimPolicy, text_reply, tool_use_reply

KEY = "test-key"
MODEL = "claude-haiku-5-5"
TOOLS: list[dict[str, Any]] = [
    {
        "name": "lookup_order",
        "description": "Look up an order by its number #NNNNN: status, total and customer.",
        "input_schema": {
            "type": "object",
            "properties": {"order_number": {"type": "string", "description": "The order number, like #10007."}},
            "required": ["order_number"],
        },
    },
    {
        "name": "get_weather",
        "description": "Get the current weather forecast for a city.",
        "input_schema": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "City name, like Paris."}},
            "required": ["city"],
        },
    },
]
USER = [{"role": "user", "content": "What is the status of order #10007?"}]


@pytest.fixture
def api() -> Iterator[FakeAnthropicAPI]:
    with FakeAnthropicAPI(ScriptedPolicy([])) as fake:
        yield fake


@pytest.fixture
def client(api: FakeAnthropicAPI) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(api_key=KEY, base_url=api.base_url, max_retries=0) as sdk:
        yield sdk


def script(api: FakeAnthropicAPI, *replies: dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    api.policy = ScriptedPolicy(replies)


def create(client: anthropic.Anthropic, **kwargs: Any) -> anthropic.types.Message:
    return client.messages.create(**{"model": MODEL, "max_tokens": 256, "messages": USER, **kwargs})


def test_text_reply_parses_into_a_message_with_usage(api: FakeAnthropicAPI, client: anthropic.Anthropic) -> None:
    script(api, text_reply("Hello there."))
    message = create(client)
    assert message.type == "message" and message.role == "assistant" and message.model == MODEL
    assert message.id.startswith("msg_") and message.stop_reason == "end_turn"
    assert message.content == [TextBlock(type="text", text="Hello there.")]
    assert message.usage.input_tokens > 0 and message.usage.output_tokens > 0
    assert message.usage.cache_read_input_tokens == 0 and message.usage.cache_creation_input_tokens == 0
    totals = api.usage_totals()
    assert totals["messages"] == 1 and totals["input_tokens"] == message.usage.input_tokens
    assert api.calls["/v1/messages"] == 1
    assert api.requests[0]["body"]["messages"] == USER


def test_tool_use_reply_parses_with_input_and_unique_ids(api: FakeAnthropicAPI, client: anthropic.Anthropic) -> None:
    script(api, tool_use_reply("lookup_order", {"order_number": "#10007"}, text="Checking."),
           tool_use_reply("lookup_order", {"order_number": "#10008"}))
    first, second = create(client, tools=TOOLS), create(client, tools=TOOLS)
    assert first.stop_reason == "tool_use"
    assert isinstance(first.content[0], TextBlock) and first.content[0].text == "Checking."
    call = first.content[1]
    assert isinstance(call, ToolUseBlock)
    assert call.name == "lookup_order" and call.input == {"order_number": "#10007"}
    assert call.id.startswith("toolu_") and call.id != second.content[0].id


def test_forced_tool_choice_passes_scripted_replies_through(api: FakeAnthropicAPI, client: anthropic.Anthropic) -> None:
    script(api, text_reply("not a tool call"))
    message = create(client, tools=TOOLS, tool_choice={"type": "tool", "name": "get_weather"})
    assert message.content == [TextBlock(type="text", text="not a tool call")]


def test_sim_policy_calls_the_right_tool_then_answers_from_its_result() -> None:
    async def episode(api: FakeAnthropicAPI) -> tuple[anthropic.types.Message, anthropic.types.Message]:
        async with anthropic.AsyncAnthropic(api_key=KEY, base_url=api.base_url, max_retries=0) as sdk:
            first = await sdk.messages.create(model=MODEL, max_tokens=256, tools=TOOLS, messages=USER)
            call = next(b for b in first.content if isinstance(b, ToolUseBlock))
            history = [
                *USER,
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "An order question.", "signature": "sig"},
                    *(b.model_dump(exclude_none=True) for b in first.content),
                ]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id,
                                              "content": [{"type": "text", "text": "Order #10007: shipped"}]}]},
            ]
            second = await sdk.messages.create(model=MODEL, max_tokens=256, tools=TOOLS, messages=history)
            return first, second

    with FakeAnthropicAPI(SimPolicy("lexical")) as api:
        first, second = asyncio.run(episode(api))
    calls = [b for b in first.content if isinstance(b, ToolUseBlock)]
    assert first.stop_reason == "tool_use" and [c.name for c in calls] == ["lookup_order"]
    assert calls[0].input == {"order_number": "#10007"}
    assert second.stop_reason == "end_turn"
    assert not any(isinstance(b, ToolUseBlock) for b in second.content)
    assert "shipped" in second.content[0].text


def test_prompt_cache_writes_then_reads_the_same_prefix(api: FakeAnthropicAPI, client: anthropic.Anthropic) -> None:
    script(api, *[text_reply("ok")] * 3)
    tools = [*TOOLS[:-1], {**TOOLS[-1], "cache_control": {"type": "ephemeral"}}]
    first = create(client, tools=tools).usage
    second = create(client, tools=tools).usage
    changed = [tools[0], {**tools[1], "description": "Weather forecasts for a city, today and tomorrow."}]
    third = create(client, tools=changed).usage
    assert first.cache_creation_input_tokens and first.cache_creation_input_tokens > 0
    assert first.cache_read_input_tokens == 0
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens
    assert second.cache_creation_input_tokens == 0
    assert second.input_tokens == first.input_tokens > 0  # the messages after the breakpoint are not cached
    assert third.cache_creation_input_tokens and third.cache_creation_input_tokens > 0
    assert third.cache_read_input_tokens == 0
    stats = api.cache_stats()
    assert stats["hits"] == 1 and stats["writes"] == 2 and stats["entries"] == 2
    assert stats["cache_read_input_tokens"] == second.cache_read_input_tokens


def test_429_with_retry_after_is_retried_then_succeeds(api: FakeAnthropicAPI) -> None:
    script(api, text_reply("finally"))
    api.inject(status=429, retry_after=0.05, times=2)
    with anthropic.Anthropic(api_key=KEY, base_url=api.base_url, max_retries=2) as sdk:
        started = time.perf_counter()
        message = create(sdk)
    assert message.content[0].text == "finally"
    assert api.calls["/v1/messages"] == 3 and time.perf_counter() - started >= 0.1
    assert [r["headers"]["x-stainless-retry-count"] for r in api.requests] == ["0", "1", "2"]


def test_429_without_retries_raises_rate_limit_error(api: FakeAnthropicAPI, client: anthropic.Anthropic) -> None:
    api.inject(status=429, retry_after=3)
    with pytest.raises(anthropic.RateLimitError) as caught:
        create(client)
    assert caught.value.status_code == 429 and caught.value.response.headers["retry-after"] == "3"
    assert caught.value.body["error"]["type"] == "rate_limit_error"  # type: ignore[index]


def test_529_and_500_raise_the_sdk_error_classes(api: FakeAnthropicAPI, client: anthropic.Anthropic) -> None:
    api.inject(status=529)
    api.inject(status=500)
    with pytest.raises(anthropic.OverloadedError) as overloaded:
        create(client)
    assert overloaded.value.body["error"]["type"] == "overloaded_error"  # type: ignore[index]
    with pytest.raises(anthropic.InternalServerError) as internal:
        create(client)
    assert type(internal.value) is anthropic.InternalServerError
    assert internal.value.body["error"]["type"] == "api_error"  # type: ignore[index]


def test_malformed_body_raises_json_decode_error_without_retry(api: FakeAnthropicAPI) -> None:
    script(api, text_reply("cut short"), text_reply("whole"))
    api.inject(malformed=True)
    with anthropic.Anthropic(api_key=KEY, base_url=api.base_url, max_retries=2) as sdk:
        with pytest.raises(json.JSONDecodeError):  # the SDK does not wrap it and does not retry it
            create(sdk)
        assert api.calls["/v1/messages"] == 1
        assert create(sdk).content[0].text == "whole"


def test_delay_latency_and_concurrency() -> None:
    async def burst(api: FakeAnthropicAPI, n: int) -> float:
        async with anthropic.AsyncAnthropic(api_key=KEY, base_url=api.base_url, max_retries=0) as sdk:
            started = time.perf_counter()
            await asyncio.gather(*(sdk.messages.create(model=MODEL, max_tokens=16, messages=USER) for _ in range(n)))
            return time.perf_counter() - started

    with FakeAnthropicAPI(lambda request: text_reply("ok"), latency_s=0.1) as api:
        assert asyncio.run(burst(api, 6)) >= 0.1
        assert api.max_concurrency_seen >= 2  # the six requests overlapped
        api.inject(delay=0.2)
        assert asyncio.run(burst(api, 1)) >= 0.3  # the injected delay, then the latency


def test_count_tokens(api: FakeAnthropicAPI, client: anthropic.Anthropic) -> None:
    small = client.messages.count_tokens(model=MODEL, messages=USER)
    large = client.messages.count_tokens(model=MODEL, messages=USER, tools=TOOLS, system="Be brief.")
    assert 0 < small.input_tokens < large.input_tokens
    assert api.calls["/v1/messages/count_tokens"] == 2 and api.usage_totals()["messages"] == 0


def test_batches_end_after_polls_and_stream_results(client: anthropic.Anthropic, api: FakeAnthropicAPI) -> None:
    api.finish_after_polls = 2
    script(api, *(text_reply(f"answer {i}") for i in range(3)))
    requests = [{"custom_id": f"task-{i}", "params": {"model": MODEL, "max_tokens": 64, "messages": USER}}
                for i in range(3)]
    batch = client.messages.batches.create(requests=requests)
    assert batch.processing_status == "in_progress" and batch.results_url is None
    assert batch.request_counts.processing == 3
    polls = 0
    while batch.processing_status != "ended":
        batch = client.messages.batches.retrieve(batch.id)
        polls += 1
    assert polls == 2 and batch.request_counts.succeeded == 3 and batch.ended_at is not None
    assert batch.results_url == f"{api.base_url}/v1/messages/batches/{batch.id}/results"
    results = list(client.messages.batches.results(batch.id))
    assert [r.custom_id for r in results] == ["task-0", "task-1", "task-2"]
    assert all(r.result.type == "succeeded" for r in results)
    assert [r.result.message.content[0].text for r in results] == ["answer 0", "answer 1", "answer 2"]  # type: ignore[union-attr]
    assert results[0].result.message.usage.service_tier == "batch"  # type: ignore[union-attr]


def test_a_failing_request_in_a_batch_is_errored(client: anthropic.Anthropic, api: FakeAnthropicAPI) -> None:
    api.finish_after_polls = 0
    script(api, text_reply("only one"))
    requests = [{"custom_id": c, "params": {"model": MODEL, "max_tokens": 64, "messages": USER}} for c in "ab"]
    batch = client.messages.batches.create(requests=requests)
    assert batch.processing_status == "ended" and batch.request_counts.errored == 1
    results = {r.custom_id: r.result for r in client.messages.batches.results(batch.id)}
    assert results["a"].type == "succeeded" and results["b"].type == "errored"
    assert "no replies left" in results["b"].error.error.message  # type: ignore[union-attr]


def test_missing_credentials_give_401_and_the_key_is_never_recorded(
    api: FakeAnthropicAPI, client: anthropic.Anthropic
) -> None:
    script(api, text_reply("with a bearer key"), text_reply("with x-api-key"))
    with pytest.raises(anthropic.AuthenticationError) as caught:
        create(client, extra_headers={"Authorization": anthropic.Omit()})
    assert caught.value.body["error"]["type"] == "authentication_error"  # type: ignore[index]
    assert create(client).content[0].text == "with a bearer key"
    body = json.dumps({"model": MODEL, "max_tokens": 16, "messages": USER}).encode()
    request = urllib.request.Request(f"{api.base_url}/v1/messages", data=body, method="POST",
                                     headers={"x-api-key": KEY, "content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=5) as response:
        assert json.load(response)["content"][0]["text"] == "with x-api-key"
    with pytest.raises(urllib.error.HTTPError) as unauthorized:
        urllib.request.urlopen(urllib.request.Request(f"{api.base_url}/v1/messages", data=body), timeout=5)
    assert unauthorized.value.code == 401
    unauthorized.value.close()
    recorded = json.dumps(api.requests)
    assert len(api.requests) == 4 and KEY not in recorded and "Bearer" not in recorded


def test_runs_as_a_process(background: Callable[..., Any], free_port: Callable[[], int]) -> None:
    port = free_port()
    argv = [sys.executable, "-m", "tests.fakes.anthropic_api", "--port", str(port), "--policy", "echo"]
    with background(argv, port=port, cwd=Path(__file__).parent.parent), \
            anthropic.Anthropic(api_key=KEY, base_url=f"http://127.0.0.1:{port}", max_retries=0) as sdk:
        assert create(sdk).content[0].text == "ok"


def test_inject_rejects_a_fault_that_is_no_fault(api: FakeAnthropicAPI) -> None:
    with pytest.raises(ValueError):
        api.inject()
    with pytest.raises(ValueError):
        api.inject(status=200)
    api.inject(status=500, times=3)
    assert api.pending_faults == 3
