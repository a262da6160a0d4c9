"""Claude over the Anthropic Messages API: the only module that imports `anthropic`.

`AnthropicAgent` takes agent turns with native tool use. The system prompt and the tool list carry
prompt-cache breakpoints (the tools are the same for every task of a candidate, so each candidate
pays one cache write and then reads). Thinking is off, a token budget, or adaptive. Every stop reason
maps onto `Turn.stop_reason`; a turn's content blocks travel back unchanged in `Turn.raw`, so
thinking signatures survive the next request.

Failures: the SDK retries 408/409/429/5xx with backoff and `retry-after`; on top of that a shared
`RateGate` lowers the number of requests in flight after a 429 or 529 and raises it again as requests
succeed, so sustained rate limits slow a run down instead of failing it. When the provider still
gives up, the turn raises `ModelUnavailable` (the episode becomes an infrastructure error, retried
later in the run). A bad key, an unknown model or a forbidden request raises `ModelAccessError`,
which stops the run: no episode could succeed.

`AnthropicClient` is the thin, provider-facing part shared with the Claude proposer and the judge:
one `create()` returning a provider-neutral `Reply`.
"""

from __future__ import annotations

import asyncio
import json
import os
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, cast, get_args

import anthropic
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from anthropic.types.messages.batch_create_params import Request

from optimizer.definitions import ToolDef
from optimizer.models.base import (
    Message,
    MessagesAPI,
    ModelAccessError,
    ModelSpecError,
    ModelUnavailable,
    Reply,
    StopReason,
    Turn,
    Usage,
)
from optimizer.models.defaults import check_model_name
from optimizer.models.limits import RateGate, retry_after

DEFAULT_MAX_TOKENS = 4096
GIVE_UP_AFTER = 6
"""Rate-limited attempts (each with the SDK's own retries inside) before a turn is given up."""
_STOP: dict[str, StopReason] = {
    "end_turn": "end_turn", "stop_sequence": "end_turn", "tool_use": "tool_use", "max_tokens": "max_tokens",
    "refusal": "refusal", "pause_turn": "pause_turn", "model_context_window_exceeded": "context_exceeded",
}
_TOO_LONG = ("prompt is too long", "context window", "too many tokens")


def known_models() -> frozenset[str]:
    """The model names the installed SDK lists."""
    from anthropic.types.model import Model

    return frozenset(name for arg in get_args(Model) for name in get_args(arg))


class AnthropicClient:
    """One `AsyncAnthropic` client (key and base URL from the environment unless given) plus a `RateGate`."""

    def __init__(self, *, api_key: str | None = None, base_url: str | None = None, max_connections: int = 16,
                 max_retries: int = 2, timeout: float = 600.0, give_up_after: int = GIVE_UP_AFTER) -> None:
        key = api_key or os.environ.get("ANTHROPIC_API_KEY")
        if not key:
            raise ModelAccessError("ANTHROPIC_API_KEY is not set; set it, or run with --offline")
        self.sdk = anthropic.AsyncAnthropic(api_key=key, base_url=base_url, max_retries=max_retries,
                                            timeout=timeout)
        self.gate = RateGate(max_connections)
        self.give_up_after = give_up_after
        self._batcher: Batcher | None = None

    async def create(self, **params: Any) -> Reply:
        """`messages.create` with the gate and patience described in the module docstring."""
        wait = 1.0
        for attempt in range(1, self.give_up_after + 1):
            try:
                async with self.gate:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", DeprecationWarning)  # checked once in check_model_name
                        message = await self.sdk.messages.create(**params)
                self.gate.succeeded()
                return _reply(message)
            except (anthropic.RateLimitError, anthropic.InternalServerError) as exc:
                if attempt == self.give_up_after:
                    raise ModelUnavailable(f"{_describe(exc)} after {attempt} attempts") from None
                if isinstance(exc, anthropic.RateLimitError) or exc.status_code == 529:
                    self.gate.slow_down()
                await asyncio.sleep(retry_after(exc.response.headers) or wait)
                wait = min(wait * 2, 60.0)
            except (anthropic.AuthenticationError, anthropic.PermissionDeniedError, anthropic.NotFoundError) as exc:
                raise ModelAccessError(f"{_describe(exc)} (model {params.get('model')})") from None
            except anthropic.BadRequestError as exc:
                if any(marker in str(exc).lower() for marker in _TOO_LONG):
                    return Reply((), "context_exceeded", Usage(), str(params.get("model", "")))
                raise ModelUnavailable(_describe(exc)) from None
            except (anthropic.APIConnectionError, anthropic.APIStatusError) as exc:
                raise ModelUnavailable(_describe(exc)) from None
            except ValueError as exc:  # a reply body that is not the Messages shape
                raise ModelUnavailable(f"unreadable reply: {type(exc).__name__}: {exc}") from None
        raise AssertionError("unreachable")

    async def batched(self, params: dict[str, Any]) -> Reply:
        """The reply to one request sent through the Message Batches API with others pending now."""
        if self._batcher is None:
            self._batcher = Batcher(self.sdk, flush_at=self.gate.limit)
        return await self._batcher.submit(params)

    async def count_tokens(self, **params: Any) -> int:
        """Input tokens of a request (free); used to check the key and model before a run starts."""
        try:
            result = await self.sdk.messages.count_tokens(**params)
        except (anthropic.AuthenticationError, anthropic.PermissionDeniedError, anthropic.NotFoundError) as exc:
            raise ModelAccessError(f"{_describe(exc)} (model {params.get('model')})") from None
        except anthropic.APIError as exc:
            raise ModelUnavailable(_describe(exc)) from None
        return int(result.input_tokens)

    async def close(self) -> None:
        await self.sdk.close()


class Batcher:
    """Collects requests and sends them as one Message Batch when `flush_at` are pending or `window_s`
    after the first; polls (after `poll_s`, doubling up to 30 s) until the batch ends and answers each
    request from its result."""

    def __init__(self, sdk: anthropic.AsyncAnthropic, *, flush_at: int, window_s: float = 0.5,
                 poll_s: float = 0.5) -> None:
        self.sdk, self.flush_at, self.window_s, self.poll_s = sdk, max(1, flush_at), window_s, poll_s
        self._pending: dict[str, tuple[dict[str, Any], asyncio.Future[Reply]]] = {}
        self._timer: asyncio.Task[None] | None = None
        self._count = 0
        self._tasks: set[asyncio.Task[None]] = set()

    async def submit(self, params: dict[str, Any]) -> Reply:
        self._count += 1
        future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        self._pending[f"r{self._count}"] = (params, future)
        if len(self._pending) >= self.flush_at:
            self._flush()
        elif self._timer is None:
            self._timer = asyncio.create_task(self._flush_later())
        return await future

    async def _flush_later(self) -> None:
        await asyncio.sleep(self.window_s)
        self._timer = None
        self._flush()

    def _flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        batch, self._pending = self._pending, {}
        if batch:
            task = asyncio.create_task(self._send(batch))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _send(self, batch: dict[str, tuple[dict[str, Any], asyncio.Future[Reply]]]) -> None:
        try:
            # Each `params` is what `AnthropicAgent.request` builds: the Messages API parameters as JSON.
            requests = [Request(custom_id=cid, params=cast(MessageCreateParamsNonStreaming, params))
                        for cid, (params, _) in batch.items()]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                created = await self.sdk.messages.batches.create(requests=requests)
            status, wait = created, self.poll_s
            while status.processing_status != "ended":
                await asyncio.sleep(wait)
                wait = min(wait * 2, 30.0)
                status = await self.sdk.messages.batches.retrieve(created.id)
            async for item in await self.sdk.messages.batches.results(created.id):
                entry = batch.get(item.custom_id)
                if entry is None or entry[1].done():
                    continue
                if item.result.type == "succeeded":
                    entry[1].set_result(_reply(item.result.message))
                else:
                    entry[1].set_exception(ModelUnavailable(f"batch request {item.result.type}"))
        except anthropic.APIError as exc:
            error: Exception = ModelUnavailable(f"Message Batches: {_describe(exc)}")
        else:
            error = ModelUnavailable("Message Batches: no result for this request")
        for _, future in batch.values():
            if not future.done():
                future.set_exception(error)


SERVER_SEARCH = {"bm25": ("tool_search_tool_bm25_20251119", "tool_search_tool_bm25"),
                 "regex": ("tool_search_tool_regex_20251119", "tool_search_tool_regex")}
"""--tool-search mode -> the API's server-side search tool (type, name)."""


class AnthropicAgent:
    """A Claude model as an `AgentModel`."""

    offline = False

    def __init__(self, name: str, client: MessagesAPI, *, thinking: int | str | None = None,
                 max_tokens: int | None = None, batch: bool = False, tool_search: str = "off") -> None:
        check_model_name(name)
        self.name, self.client, self.batch = name, client, batch
        self.thinking = _thinking(thinking)
        budget = self.thinking.get("budget_tokens", 0) if self.thinking else 0
        self.max_tokens = max_tokens or max(DEFAULT_MAX_TOKENS, budget + 2048)
        self.id = name
        self.settings: dict[str, Any] = {"max_tokens": self.max_tokens, "thinking": self.thinking}
        if tool_search != "off":
            if tool_search not in SERVER_SEARCH:
                raise ModelSpecError(f"tool search must be one of {', '.join(SERVER_SEARCH)}, not {tool_search!r}")
            self.settings["tool_search"] = tool_search

    async def check_access(self) -> None:
        """Raise ModelAccessError when the key or the model name does not work (a free token count)."""
        await self.client.count_tokens(model=self.name, messages=[{"role": "user", "content": "ping"}])

    async def turn(
        self, system: str, tools: Sequence[ToolDef], messages: Sequence[Message], *, seed: int = 0
    ) -> Turn:
        params = self.request(system, tools, messages)
        reply = await (self.client.batched(params) if self.batch else self.client.create(**params))
        return Turn(text=reply.text, tool_calls=reply.tool_calls, usage=reply.usage, stop_reason=reply.stop_reason,
                    raw=reply.content, searches=server_searches(reply.content))

    @property
    def searches_tools(self) -> bool:
        """Whether the API runs the tool search itself: the episode then shows every tool, deferred."""
        return "tool_search" in self.settings

    def request(self, system: str, tools: Sequence[ToolDef], messages: Sequence[Message]) -> dict[str, Any]:
        """The Messages API parameters of one turn (also what a batch request carries). With a tool search, every
        tool is sent with `defer_loading` behind the server-side search tool."""
        mode = self.settings.get("tool_search")
        listed = tool_params(tools, deferred=bool(mode))
        if mode:
            kind, tool_name = SERVER_SEARCH[mode]
            listed.insert(0, {"type": kind, "name": tool_name})
        params: dict[str, Any] = {
            "model": self.name, "max_tokens": self.max_tokens,
            "system": [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
            "tools": listed, "messages": message_params(messages),
        }
        if self.thinking:
            params["thinking"] = self.thinking
        return params


def tool_params(tools: Sequence[ToolDef], *, deferred: bool = False) -> list[dict[str, Any]]:
    """Tools in the API's shape, a cache breakpoint on the last one; `deferred`: each marked `defer_loading`."""
    out: list[dict[str, Any]] = [{"name": t.name, "description": t.description, "input_schema": dict(t.input_schema),
                                  **({"defer_loading": True} if deferred else {})} for t in tools]
    if out:
        out[-1]["cache_control"] = {"type": "ephemeral"}
    return out


def server_searches(content: Sequence[Mapping[str, Any]]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(query, loaded tool names) of each server-side tool search in a reply: a `server_tool_use` of a search
    tool and the `tool_search_tool_result` that answers it (an error result loads nothing)."""
    queries = {b.get("id"): str((b.get("input") or {}).get("query") or (b.get("input") or {}).get("pattern") or "")
               for b in content if b.get("type") == "server_tool_use"
               and b.get("name") in {name for _, name in SERVER_SEARCH.values()}}
    out = []
    for block in content:
        if block.get("type") == "tool_search_tool_result" and block.get("tool_use_id") in queries:
            result = block.get("content") or {}
            names = tuple(str(r.get("tool_name")) for r in result.get("tool_references") or [])
            out.append((queries[block["tool_use_id"]], names))
    return tuple(out)


def message_params(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Provider-neutral messages as Messages API turns: tool results go back as a user turn."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "user":
            out.append({"role": "user", "content": m.text})
        elif m.role == "assistant":
            blocks = list(m.raw) or [*([{"type": "text", "text": m.text}] if m.text else []),
                                     *({"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}
                                       for c in m.tool_calls)]
            out.append({"role": "assistant", "content": blocks or [{"type": "text", "text": "(no reply)"}]})
        else:
            out.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": r.call_id, "content": r.content, "is_error": r.is_error}
                for r in m.tool_results]})
    return out


def _thinking(value: int | str | None) -> dict[str, Any] | None:
    if value in (None, "", 0, "off"):
        return None
    if value == "adaptive":
        return {"type": "adaptive"}
    try:
        budget = int(value)
    except ValueError:
        raise ModelSpecError(f"thinking must be a token budget (1024 or more) or 'adaptive', not {value!r}") from None
    if budget < 1024:
        raise ModelSpecError(f"a thinking budget must be at least 1024 tokens, not {budget}")
    return {"type": "enabled", "budget_tokens": budget}


def _reply(message: Any) -> Reply:
    usage = message.usage
    return Reply(
        content=tuple(_plain(block) for block in message.to_param()["content"]),
        stop_reason=_STOP.get(str(message.stop_reason), "end_turn"),
        usage=Usage(input_tokens=usage.input_tokens or 0, output_tokens=usage.output_tokens or 0,
                    cache_read_tokens=usage.cache_read_input_tokens or 0,
                    cache_write_tokens=usage.cache_creation_input_tokens or 0),
        model=str(message.model),
    )


def _plain(block: Any) -> dict[str, Any]:
    """A content block as plain JSON (the SDK's params may still hold models inside, e.g. a tool search result)."""
    return cast(dict[str, Any], json.loads(json.dumps(
        dict(block), default=lambda value: value.model_dump(mode="json", exclude_none=True))))


def reply_from_json(body: Mapping[str, Any]) -> Reply:
    """A Reply from a message's JSON (batch results arrive that way)."""
    return _reply(anthropic.types.Message.model_validate(body))


def _describe(exc: anthropic.APIError) -> str:
    status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    detail = body.get("error", {}).get("message") if isinstance(body, dict) else None
    return f"Anthropic API {type(exc).__name__}" + (f" {status}" if status else "") + (f": {detail}" if detail else "")
