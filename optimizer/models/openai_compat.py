"""OpenAI-compatible Chat Completions endpoints (OpenAI, vLLM, Ollama, llama.cpp, …): the only module that
imports `openai`, an optional extra (`pip install "mcp-tool-optimizer[openai]"`).

Model strings are `openai:MODEL` with the option `?max_tokens=N` (default 4096); MODEL is passed on as is, so
`openai:meta-llama/Llama-3.1-8B-Instruct` and `openai:llama3.1:8b` work. The agent's id is `openai:MODEL`; its
settings (part of the episode cache key) hold the token cap. The server's address is not in them: a run resumed
against the same model on another port reuses its episodes.

Credentials and address: the key is OPENAI_API_KEY and the address OPENAI_BASE_URL (or `base_url=`, which
wins), default the OpenAI API. Local servers take any key, so with a base URL and no key the key is
"not-needed"; with neither, `OpenAIClient` raises `ModelAccessError` saying what to set.

Requests (`chat.completions.create`, no streaming): the system prompt is the first message (role "system"; left
out when empty), then the user's task, the assistant turns with their `tool_calls`, and one `{"role": "tool",
"tool_call_id", "content"}` message per tool result. Tools go as `{"type": "function", "function": {name,
description, parameters}}` with `tool_choice: "auto"`; both are left out when a turn offers no tools (OpenAI
refuses `tool_choice` without tools). No temperature or seed is sent: the server's defaults apply, and the
`seed` of `turn()` is ignored as the `AgentModel` protocol says. The token cap goes as `max_completion_tokens`
to api.openai.com (its reasoning models refuse `max_tokens`) and as `max_tokens` to any other server (what
vLLM, Ollama and llama.cpp all read).

Tool names: OpenAI accepts function names matching `^[a-zA-Z0-9_-]{1,64}$`, MCP names may also hold dots. Such
a name goes out with every other character replaced by `_` (made unique within the turn's tools), and calls
come back under the exposed name.

Replies: `finish_reason` stop → end_turn, tool_calls (or the old function_call) → tool_use, length →
max_tokens, content_filter → refusal; a reply that calls tools is tool_use even when the server says "stop"
(Ollama does), and a `refusal` without content is a refusal. Usage: `prompt_tokens` counts cached tokens, so
`input_tokens` is prompt_tokens minus `prompt_tokens_details.cached_tokens` (→ `cache_read_tokens`) and minus
`cache_write_tokens` when a server reports them; completion_tokens → `output_tokens`; a reply without usage
counts zero. The assistant message as the server sent it travels in `Turn.raw`.

Arguments that are not a JSON object: a call's `arguments` string is decoded; an empty string is {}. Invalid
JSON, or JSON that is not an object, gives `ToolCall.arguments == {}` — the contract's type holds, and the
episode runs the call with no arguments, which a server answers with an error when the tool needs any — while
the raw string stays in `Turn.raw`. When the conversation is sent back, that call goes out with arguments "{}"
(what actually ran; vLLM, for one, refuses to re-read invalid JSON), and its tool result starts with an
"Error:" note quoting the raw string, so the model learns what went wrong and can try again.

Failures: the SDK retries 408/409/429/5xx and connection errors with backoff and `retry-after`; on top of that
a shared `RateGate` lowers the requests in flight after a 429 or 503 and raises it again as requests succeed,
and a turn is tried `give_up_after` times before `ModelUnavailable` (the episode becomes an infrastructure
error). 401, 403 and 404 (bad key, no permission, unknown model) raise `ModelAccessError`, which stops the run.
A 400 that says the prompt is too long gives a turn with stop reason `context_exceeded`; any other 400/422, a
connection failure and a reply that is not a chat completion raise `ModelUnavailable`. Error messages never
hold the key.

`check_access()` sends a 1-token completion: the one probe every compatible server answers (`/models` lists
only loaded models on vLLM and Ollama, and llama.cpp serves any name), and it checks the key and the model name
together for a few tokens.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl

import openai

from optimizer.definitions import ToolDef
from optimizer.models.base import (
    Message,
    ModelAccessError,
    ModelSpecError,
    ModelUnavailable,
    StopReason,
    ToolCall,
    ToolResult,
    Turn,
    Usage,
)
from optimizer.models.limits import RateGate, retry_after
from optimizer.secrets import redact_text

PREFIX = "openai:"
DEFAULT_MAX_TOKENS = 4096
GIVE_UP_AFTER = 6
"""Rate-limited attempts (each with the SDK's own retries inside) before a turn is given up."""
LOCAL_KEY = "not-needed"
"""The key sent to a server at a custom base URL when OPENAI_API_KEY is not set (local servers take any key)."""
OPENAI_HOST = "api.openai.com"
_STOP: dict[str, StopReason] = {"stop": "end_turn", "tool_calls": "tool_use", "function_call": "tool_use",
                                "length": "max_tokens", "content_filter": "refusal"}
_TOO_LONG = ("context_length_exceeded", "maximum context length", "context window", "prompt is too long",
             "too many tokens")
_FUNCTION_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


class ContextExceeded(Exception):
    """The server refused the prompt as too long (a turn that ends with stop reason `context_exceeded`)."""


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """`openai:MODEL?max_tokens=N` as (MODEL, {"max_tokens": N}); raises ModelSpecError with a fix-it message."""
    name, _, query = spec.strip().removeprefix(PREFIX).partition("?")
    if not name.strip():
        raise ModelSpecError(f"{spec}: name the model, for example openai:gpt-4.1-mini or openai:llama3.1:8b")
    options = dict(parse_qsl(query, keep_blank_values=True)) if query else {}
    unknown = sorted(set(options) - {"max_tokens"})
    if unknown:
        raise ModelSpecError(f"{spec}: unknown option(s) {', '.join(unknown)}; allowed: max_tokens")
    out: dict[str, Any] = {}
    if "max_tokens" in options:
        try:
            out["max_tokens"] = int(options["max_tokens"])
        except ValueError:
            raise ModelSpecError(f"{spec}: max_tokens must be a whole number") from None
        if out["max_tokens"] < 1:
            raise ModelSpecError(f"{spec}: max_tokens must be at least 1")
    return name.strip(), out


class OpenAIClient:
    """One `AsyncOpenAI` client plus a `RateGate`, shared by every `openai:` model of a run.

    `create()` returns a chat completion as JSON (a dict, as the server sent it); failures are mapped as the
    module docstring says."""

    def __init__(self, *, api_key: str | None = None, base_url: str | None = None, max_connections: int = 16,
                 max_retries: int = 2, timeout: float = 600.0, give_up_after: int = GIVE_UP_AFTER) -> None:
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        key = api_key or os.environ.get("OPENAI_API_KEY") or (LOCAL_KEY if base_url else None)
        if not key:
            raise ModelAccessError("OPENAI_API_KEY is not set; set it for the OpenAI API, or set OPENAI_BASE_URL to an "
                                   "OpenAI-compatible server (vLLM, Ollama, llama.cpp), or run with --offline")
        self.sdk = openai.AsyncOpenAI(api_key=key, base_url=base_url, max_retries=max_retries, timeout=timeout)
        self.gate = RateGate(max_connections)
        self.give_up_after = give_up_after
        self.token_limit_param = "max_completion_tokens" if self.sdk.base_url.host == OPENAI_HOST else "max_tokens"
        self._secrets = (key,)

    async def create(self, **params: Any) -> dict[str, Any]:
        """`chat.completions.create` with the gate and patience described in the module docstring. Raises
        ModelUnavailable, ModelAccessError or ContextExceeded."""
        wait = 1.0
        for attempt in range(1, self.give_up_after + 1):
            try:
                async with self.gate:
                    completion = await self.sdk.chat.completions.create(**params)
                self.gate.succeeded()
                return _completion_json(completion)
            except (openai.RateLimitError, openai.InternalServerError) as exc:
                if attempt == self.give_up_after:
                    raise ModelUnavailable(f"{self._describe(exc)} after {attempt} attempts") from None
                if isinstance(exc, openai.RateLimitError) or exc.status_code == 503:
                    self.gate.slow_down()
                await asyncio.sleep(min(retry_after(exc.response.headers) or wait, 60.0))
                wait = min(wait * 2, 60.0)
            except (openai.AuthenticationError, openai.PermissionDeniedError, openai.NotFoundError) as exc:
                raise ModelAccessError(f"{self._describe(exc)} (model {params.get('model')})") from None
            except openai.BadRequestError as exc:
                if any(marker in f"{exc.code} {exc.message}".lower() for marker in _TOO_LONG):
                    raise ContextExceeded(self._describe(exc)) from None
                raise ModelUnavailable(self._describe(exc)) from None
            except openai.APIError as exc:  # connection errors, timeouts, other statuses, unreadable bodies
                raise ModelUnavailable(self._describe(exc)) from None
            except ValueError as exc:  # a body that is not JSON
                raise ModelUnavailable(f"unreadable reply: {type(exc).__name__}: {exc}") from None
        raise AssertionError("unreachable")

    async def ping(self, model: str) -> None:
        """A 1-token completion; raises ModelAccessError when the server refuses the key, the model or the request
        and ModelUnavailable when it does not answer."""
        params: dict[str, Any] = {"model": model, "messages": [{"role": "user", "content": "ping"}],
                                  self.token_limit_param: 1}
        try:
            await self.sdk.chat.completions.create(**params)
        except (openai.AuthenticationError, openai.PermissionDeniedError, openai.NotFoundError,
                openai.BadRequestError, openai.UnprocessableEntityError) as exc:
            raise ModelAccessError(f"{self._describe(exc)} (model {model})") from None
        except openai.APIError as exc:
            raise ModelUnavailable(self._describe(exc)) from None

    async def close(self) -> None:
        await self.sdk.close()

    def _describe(self, exc: openai.APIError) -> str:
        status = getattr(exc, "status_code", None)
        body = exc.body
        detail = body.get("message") if isinstance(body, dict) else None
        text = f"OpenAI API {type(exc).__name__}" + (f" {status}" if status else "") + (f": {detail}" if detail else "")
        return redact_text(text, self._secrets)


class OpenAIAgent:
    """A model behind an OpenAI-compatible Chat Completions endpoint, as an `AgentModel`."""

    offline = False
    batch = False

    def __init__(self, name: str, client: OpenAIClient, *, max_tokens: int | None = None) -> None:
        self.name, self.client = name, client
        self.max_tokens = max_tokens or DEFAULT_MAX_TOKENS
        self.id = f"{PREFIX}{name}"
        self.settings: dict[str, Any] = {"max_tokens": self.max_tokens}

    async def check_access(self) -> None:
        """Raise ModelAccessError when the key or the model name does not work (a 1-token request)."""
        await self.client.ping(self.name)

    async def turn(
        self, system: str, tools: Sequence[ToolDef], messages: Sequence[Message], *, seed: int = 0
    ) -> Turn:
        """One assistant turn (`seed` is ignored); raises ModelUnavailable or ModelAccessError as documented."""
        names = wire_names(tools)
        try:
            completion = await self.client.create(**self.request(system, tools, messages, names))
        except ContextExceeded:
            return Turn(stop_reason="context_exceeded")
        return turn_from_completion(completion, {wire: name for name, wire in names.items()})

    def request(self, system: str, tools: Sequence[ToolDef], messages: Sequence[Message],
                names: Mapping[str, str] | None = None) -> dict[str, Any]:
        """The `chat.completions.create` parameters of one turn."""
        names = wire_names(tools) if names is None else names
        params: dict[str, Any] = {"model": self.name, "messages": message_params(system, messages, names),
                                  self.client.token_limit_param: self.max_tokens}
        if tools:
            params["tools"] = tool_params(tools, names)
            params["tool_choice"] = "auto"
        return params


def wire_names(tools: Sequence[ToolDef]) -> dict[str, str]:
    """Exposed name -> the function name sent: the same when OpenAI accepts it, else with the other characters
    replaced by `_` and a suffix when that name is taken."""
    taken = {t.name for t in tools if _FUNCTION_NAME.fullmatch(t.name)}
    out: dict[str, str] = {}
    for tool in tools:
        if _FUNCTION_NAME.fullmatch(tool.name):
            out[tool.name] = tool.name
            continue
        base = re.sub(r"[^A-Za-z0-9_-]", "_", tool.name)[:64] or "tool"
        name, n = base, 2
        while name in taken:
            suffix = f"_{n}"
            name, n = base[: 64 - len(suffix)] + suffix, n + 1
        taken.add(name)
        out[tool.name] = name
    return out


def tool_params(tools: Sequence[ToolDef], names: Mapping[str, str]) -> list[dict[str, Any]]:
    """Tools as Chat Completions function tools."""
    return [{"type": "function", "function": {"name": names.get(t.name, t.name), "description": t.description,
                                              "parameters": dict(t.input_schema) or {"type": "object",
                                                                                     "properties": {}}}}
            for t in tools]


def message_params(system: str, messages: Sequence[Message], names: Mapping[str, str]) -> list[dict[str, Any]]:
    """Provider-neutral messages as Chat Completions messages (see the module docstring)."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    problems: dict[str, str] = {}
    for m in messages:
        if m.role == "user":
            out.append({"role": "user", "content": m.text})
        elif m.role == "assistant":
            out.append(_assistant_params(m, names, problems))
        else:
            out += [{"role": "tool", "tool_call_id": r.call_id, "content": _result_text(r, problems.get(r.call_id))}
                    for r in m.tool_results]
    return out


def _assistant_params(m: Message, names: Mapping[str, str], problems: dict[str, str]) -> dict[str, Any]:
    """An assistant turn; notes in `problems` the calls whose raw arguments were not a JSON object."""
    entry: dict[str, Any] = {"role": "assistant", "content": m.text or (None if m.tool_calls else "")}
    if not m.tool_calls:
        return entry
    raw_calls = _raw_calls(m)
    calls = []
    for i, call in enumerate(m.tool_calls):
        raw = raw_calls[i] if len(raw_calls) == len(m.tool_calls) else None
        arguments = json.dumps(call.arguments, ensure_ascii=False)
        if raw is not None:
            decoded, problem = decode_arguments(raw)
            if problem:
                problems[call.id] = f"{problem}; you sent {_clip(raw)}"
            elif isinstance(raw, str) and raw.strip() and decoded == call.arguments:
                arguments = raw  # exactly as the model wrote it, which keeps the server's prefix cache warm
        calls.append({"id": call.id, "type": "function",
                      "function": {"name": names.get(call.name, call.name), "arguments": arguments}})
    entry["tool_calls"] = calls
    return entry


def _raw_calls(m: Message) -> list[Any]:
    """The raw `arguments` of the function calls in an assistant turn's provider message, in order."""
    message = m.raw[0] if m.raw else {}
    return [(c.get("function") or {}).get("arguments") for c in message.get("tool_calls") or []
            if isinstance(c, dict) and c.get("type", "function") == "function"]


def _result_text(result: ToolResult, problem: str | None) -> str:
    if problem:
        return (f"Error: the arguments of this call were not a JSON object ({problem}), so the tool was called with "
                f"no arguments. It returned: {result.content}")
    if result.is_error and not result.content.lstrip().lower().startswith("error"):
        return f"Error: {result.content}"
    return result.content


def _clip(raw: Any, limit: int = 300) -> str:
    text = raw if isinstance(raw, str) else json.dumps(raw)
    return repr(text if len(text) <= limit else text[:limit] + "…")


def decode_arguments(raw: Any) -> tuple[dict[str, Any], str | None]:
    """A call's arguments as an object, and what was wrong with them (None when nothing was): an empty string is
    {}; invalid JSON or JSON that is not an object gives {} and a reason."""
    if isinstance(raw, dict):  # a few servers send the object itself
        return raw, None
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}, None
    if not isinstance(raw, str):
        return {}, f"a JSON {type(raw).__name__} instead of a string"
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return {}, f"invalid JSON: {exc.msg} at character {exc.pos}"
    if not isinstance(value, dict):
        return {}, f"JSON {type(value).__name__}, not an object"
    return value, None


def turn_from_completion(completion: Mapping[str, Any], exposed: Mapping[str, str] | None = None) -> Turn:
    """A Turn from a chat completion's JSON; `exposed` maps sent function names back. Raises ModelUnavailable
    for a body that is not a chat completion."""
    try:
        choice = completion["choices"][0]
        message = dict(choice["message"])
        text = _content_text(message.get("content"))
        calls = _tool_calls(message.get("tool_calls") or [], exposed or {})
        refusal = message.get("refusal")
        if refusal and not text:
            text = str(refusal)
        stop = _stop_reason(choice.get("finish_reason"), bool(calls), bool(refusal))
        usage = usage_from(completion.get("usage") or {})
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        raise ModelUnavailable(f"unreadable reply: not a chat completion ({type(exc).__name__}: {exc})") from None
    return Turn(text=text, tool_calls=calls, usage=usage, stop_reason=stop, raw=(message,))


def _content_text(content: Any) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    return "".join(p.get("text", "") for p in content if p.get("type") == "text")


def _tool_calls(raw_calls: Sequence[Mapping[str, Any]], exposed: Mapping[str, str]) -> tuple[ToolCall, ...]:
    """Function calls as ToolCalls with distinct ids (a missing or repeated id gets `call_<index>`)."""
    out: list[ToolCall] = []
    seen: set[str] = set()
    for i, call in enumerate(c for c in raw_calls if c.get("type", "function") == "function"):
        function = call["function"]
        call_id = str(call.get("id") or "")
        if not call_id or call_id in seen:
            call_id = f"{call_id or 'call'}_{i}"
        seen.add(call_id)
        arguments, _ = decode_arguments(function.get("arguments"))
        name = str(function["name"])
        out.append(ToolCall(call_id, exposed.get(name, name), arguments))
    return tuple(out)


def _stop_reason(finish: Any, calls: bool, refusal: bool) -> StopReason:
    mapped = _STOP.get(str(finish))
    if calls and mapped in (None, "end_turn"):
        return "tool_use"
    if refusal and mapped in (None, "end_turn"):
        return "refusal"
    return mapped or "end_turn"


def usage_from(usage: Mapping[str, Any]) -> Usage:
    """Usage from a completion's `usage` (input_tokens excludes cache reads and writes, as `Usage` counts)."""
    details = usage.get("prompt_tokens_details") or {}
    read, written = int(details.get("cached_tokens") or 0), int(details.get("cache_write_tokens") or 0)
    prompt = int(usage.get("prompt_tokens") or 0)
    return Usage(input_tokens=max(0, prompt - read - written), output_tokens=int(usage.get("completion_tokens") or 0),
                 cache_read_tokens=read, cache_write_tokens=written)


def _completion_json(completion: Any) -> dict[str, Any]:
    if not hasattr(completion, "to_dict"):  # a 200 whose body was not JSON comes back as text
        raise ModelUnavailable(f"unreadable reply: {type(completion).__name__} instead of a chat completion")
    body: dict[str, Any] = completion.to_dict(mode="json")  # the SDK's models give dict[str, object]
    return body


