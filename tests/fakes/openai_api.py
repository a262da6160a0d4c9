"""A local fake of an OpenAI-compatible Chat Completions API, for tests and benchmarks. Nothing leaves 127.0.0.1.

Contract:
- `FakeOpenAIAPI(policy=...)` serves on 127.0.0.1 at an OS-chosen port (a stdlib `ThreadingHTTPServer` in a
  daemon thread) while used as a context manager (or between `start()` and `stop()`). `api.base_url` ends in
  `/v1`, as OPENAI_BASE_URL does: `openai.AsyncOpenAI(api_key="test", base_url=api.base_url)`.
- One endpoint, `POST /v1/chat/completions` (no streaming), in the wire format the SDK parses. The request is
  checked the way OpenAI checks it, so an adapter bug shows up as the 400 a real server would give: `model` and
  a non-empty `messages` list are required; roles are system, developer, user, assistant or tool; tools are
  `{"type": "function", "function": {"name", "description"?, "parameters"?}}` with distinct names matching
  `^[a-zA-Z0-9_-]{1,64}$`; `tool_choice` needs `tools`; an assistant's `tool_calls` carry string `arguments`
  and must each be answered by the `tool` messages that follow it, and a `tool` message must answer one of them.
- Every request needs `Authorization: Bearer KEY` (else 401 `invalid_api_key`; so do keys in `rejected_keys`).
  With `known_models` given, any other model is a 404 `model_not_found`. Every request is recorded in
  `api.requests` as {method, path, route, headers, body}, credential headers removed: the key is never stored.
- Replies come from a policy, `policy(request_body) -> {"message": {...}, "finish_reason"?: ..., "usage"?: ...}`;
  the fake adds id, object, created, model, the choice's index and logprobs, `role: "assistant"` and usage (keys
  the reply has win; a missing finish_reason is "tool_calls" when the message has tool_calls, else "stop").
  `ScriptedPolicy` returns given replies in order; `SimPolicy` runs the project's offline agent. A policy that
  raises gives a 400 naming the exception, listed in `api.policy_errors`.
- Usage: ceil(len(compact JSON) / 4) tokens per tool and per message (deterministic). Prefix caching is
  automatic, as OpenAI's is: the prompt is the tools then the messages; the longest prefix, at a message
  boundary, that an earlier request of the same model already sent is reported as
  `prompt_tokens_details.cached_tokens` when it has at least `min_cached_tokens` tokens (default 1024, as
  OpenAI; no 128-token steps). `prompt_tokens` includes the cached tokens, as OpenAI's does.
- Faults, consumed in order by the next chat completion requests: `api.inject(status=429, retry_after=0.1,
  times=2)`, `inject(status=500)`, `inject(status=400, message="...", code="context_length_exceeded")`,
  `inject(malformed=True)` (a 200 whose JSON body is cut short), `inject(delay=2.0)`. Error bodies have the
  real shape `{"error": {"message", "type", "param", "code"}}`. `latency_s` delays every successful reply;
  `max_concurrency_seen` is the peak number of completions in flight.
- Counters: `api.calls` (requests per route), `api.usage_totals()`.

As a process, for benchmarks: `python -m tests.fakes.openai_api --port N [--latency-ms 200] [--policy sim]`
prints its base URL and serves until interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import itertools
import json
import re
import threading
import time
import uuid
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

from optimizer.definitions import ToolDef
from optimizer.models.base import Message, ToolCall, ToolResult, Turn

from .anthropic_api import PolicyError, ScriptedPolicy, estimate_tokens, stable_seed
from .sim import SimAgent

__all__ = ["FakeOpenAIAPI", "PolicyError", "ScriptedPolicy", "SimPolicy", "text_reply", "tool_call_reply"]

Request = dict[str, Any]
Reply = dict[str, Any]
Policy = Callable[[Request], Reply]

ROUTE = "/v1/chat/completions"
CREDENTIAL_HEADERS = frozenset({"authorization", "api-key", "x-api-key"})
FUNCTION_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
ERROR_TYPES = {400: "invalid_request_error", 401: "invalid_request_error", 403: "invalid_request_error",
               404: "invalid_request_error", 429: "requests"}
"""Error type per HTTP status; any other status gives `server_error`."""


def _new_id(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:24]}"


def _compact(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# --- replies and policies ---------------------------------------------------------------------------


def text_reply(text: str, finish_reason: str = "stop") -> Reply:
    """A reply with text content only."""
    return {"message": {"content": text}, "finish_reason": finish_reason}


def tool_call_reply(name: str, arguments: Mapping[str, Any] | str, text: str = "") -> Reply:
    """A reply calling one function. A string `arguments` is sent exactly as given (for broken JSON); the call id
    is new each time."""
    raw = arguments if isinstance(arguments, str) else json.dumps(dict(arguments))
    call = {"id": _new_id("call_"), "type": "function", "function": {"name": name, "arguments": raw}}
    return {"message": {"content": text or None, "tool_calls": [call]}, "finish_reason": "tool_calls"}


class SimPolicy:
    """Answers with the project's offline agent: the request's function tools and messages become `ToolDef`s and
    `Message`s, `SimAgent(name).turn(...)` runs with a seed derived from the first user message, and the `Turn`
    becomes an assistant message. A tool message whose content starts with "Error" counts as an error result
    (Chat Completions has no is_error flag). Arguments that are not a JSON object reach the agent as {}.

    `tool_choice` is approximated: `{"type": "function", "function": {"name": X}}` shows the agent only X,
    "none" shows it no tools, and with a named function or "required" a turn that calls tools has no text.
    """

    def __init__(self, name: str = "lexical", *, noise: float = 0.0, seed: int = 0) -> None:
        self.agent = SimAgent(name.removeprefix("sim:"), seed=seed, noise=noise)  # unknown names fail here
        self._lock = threading.Lock()
        self._tool_lists: dict[str, list[ToolDef]] = {}

    def _tools(self, request: Request) -> list[ToolDef]:
        """The same list object for the same tools, so the agent reads each tool list once."""
        key = hashlib.sha256(_compact(request.get("tools") or []).encode()).hexdigest()
        if key not in self._tool_lists:
            if len(self._tool_lists) > 256:
                self._tool_lists.clear()
            self._tool_lists[key] = request_tools(request)
        return self._tool_lists[key]

    def __call__(self, request: Request) -> Reply:
        choice = request.get("tool_choice") or "auto"
        with self._lock:
            tools = self._tools(request)
        if isinstance(choice, dict):
            tools = [t for t in tools if t.name == (choice.get("function") or {}).get("name")]
        elif choice == "none":
            tools = []
        system, messages = request_messages(request)
        seed = stable_seed(next((m.text for m in messages if m.role == "user"), ""))
        with self._lock:
            turn = asyncio.run(self.agent.turn(system, tools, messages, seed=seed))
        return turn_to_reply(turn, forced=isinstance(choice, dict) or choice == "required")


def request_tools(request: Request) -> list[ToolDef]:
    """The request's function tools as ToolDefs."""
    out = []
    for tool in request.get("tools") or []:
        function = tool.get("function") or {}
        schema = function.get("parameters") or {"type": "object", "properties": {}}
        out.append(ToolDef(name=function["name"], description=function.get("description") or "", input_schema=schema))
    return out


def _text(content: Any) -> str:
    """Message content as text: a string, or the text of a list of content parts."""
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") for p in content or [] if isinstance(p, dict) and p.get("type") == "text")


def _arguments(raw: Any) -> dict[str, Any]:
    try:
        value = json.loads(raw) if isinstance(raw, str) and raw.strip() else {}
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


_SIM_ID = re.compile(r"call_[0-9a-f]{12}_sim_(.+)")


def _sim_call_id(call_id: str) -> str:
    """The agent's own call id ("call_0_0") inside a call id this fake made, else the id as is."""
    match = _SIM_ID.fullmatch(call_id)
    return match.group(1) if match else call_id


def request_messages(request: Request) -> tuple[str, list[Message]]:
    """The system text (system and developer messages joined) and the rest as the agent's Messages; consecutive
    tool messages become one Message("tool")."""
    system: list[str] = []
    out: list[Message] = []
    for entry in request.get("messages") or []:
        role, text = entry.get("role"), _text(entry.get("content"))
        if role in ("system", "developer"):
            system.append(text)
        elif role == "assistant":
            calls = tuple(ToolCall(_sim_call_id(c["id"]), c["function"]["name"], _arguments(c["function"]["arguments"]))
                          for c in entry.get("tool_calls") or [])
            out.append(Message("assistant", text, calls))
        elif role == "tool":
            result = ToolResult(_sim_call_id(entry["tool_call_id"]), text, text.lstrip().lower().startswith("error"))
            if out and out[-1].role == "tool":
                out[-1] = Message("tool", tool_results=(*out[-1].tool_results, result))
            else:
                out.append(Message("tool", tool_results=(result,)))
        else:
            out.append(Message("user", text))
    return "\n\n".join(system), out


def turn_to_reply(turn: Turn, *, forced: bool = False) -> Reply:
    """Content when there is text (none when a forced choice made calls), one function tool call per call."""
    message: dict[str, Any] = {"content": None if forced and turn.tool_calls else (turn.text or None)}
    if turn.tool_calls:
        message["tool_calls"] = [
            {"id": f"call_{uuid.uuid4().hex[:12]}_sim_{c.id}", "type": "function",
             "function": {"name": c.name, "arguments": json.dumps(dict(c.arguments))}}
            for c in turn.tool_calls
        ]
    if message["content"] is None and not turn.tool_calls:
        message["content"] = ""
    return {"message": message, "finish_reason": "tool_calls" if turn.tool_calls else "stop"}


# --- request checks, usage and the prefix cache -----------------------------------------------------


class ApiError(Exception):
    """An error reply: HTTP status, message, error code and extra headers."""

    def __init__(self, status: int, message: str, code: str | None = None,
                 headers: Mapping[str, str] | None = None, param: str | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.param = status, code, param
        self.type = ERROR_TYPES.get(status, "server_error")
        self.headers = dict(headers or {})

    def body(self) -> dict[str, Any]:
        return {"error": {"message": str(self), "type": self.type, "param": self.param, "code": self.code}}


def check_request(body: Any) -> None:
    """Raise ApiError(400) where OpenAI would refuse the request (see the module docstring)."""
    if not isinstance(body, dict):
        raise ApiError(400, "the request body must be a JSON object")
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise ApiError(400, "you must provide a model parameter", param="model")
    if body.get("stream"):
        raise ApiError(400, "this fake does not stream", param="stream")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ApiError(400, "'messages' must be a non-empty array", param="messages")
    _check_tools(body)
    _check_messages(messages)


def _check_tools(body: Mapping[str, Any]) -> None:
    tools = body.get("tools")
    if "tool_choice" in body and not tools:
        raise ApiError(400, "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are "
                            "specified.", param="tool_choice")
    names: list[str] = []
    for i, tool in enumerate(tools or []):
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(tool, dict) or tool.get("type") != "function" or not isinstance(function, dict):
            raise ApiError(400, f"Invalid 'tools[{i}]': expected a function tool", param=f"tools[{i}]")
        name = function.get("name")
        if not isinstance(name, str) or not FUNCTION_NAME.fullmatch(name):
            raise ApiError(400, f"Invalid 'tools[{i}].function.name': string does not match pattern. Expected a "
                                "string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
                           param=f"tools[{i}].function.name")
        if "parameters" in function and not isinstance(function["parameters"], dict):
            raise ApiError(400, f"Invalid 'tools[{i}].function.parameters': expected an object")
        names.append(name)
    if len(set(names)) != len(names):
        raise ApiError(400, "tool names must be unique", param="tools")


def _check_messages(messages: list[Any]) -> None:
    open_calls: set[str] = set()
    for i, entry in enumerate(messages):
        role = entry.get("role") if isinstance(entry, dict) else None
        if role not in ROLES:
            raise ApiError(400, f"Invalid 'messages[{i}].role': {role!r}", param=f"messages[{i}].role")
        if role == "tool":
            call_id = entry.get("tool_call_id")
            if call_id not in open_calls:
                raise ApiError(400, "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
                                    "message with 'tool_calls'.", param=f"messages[{i}].role")
            open_calls.discard(call_id)
            continue
        if open_calls:
            raise ApiError(400, "An assistant message with 'tool_calls' must be followed by tool messages responding "
                                f"to each 'tool_call_id'. Not answered: {', '.join(sorted(open_calls))}",
                           param="messages")
        if role == "assistant":
            open_calls = _assistant_calls(entry, i)
        elif not isinstance(entry.get("content"), str | list):
            raise ApiError(400, f"Invalid 'messages[{i}].content': expected a string or an array",
                           param=f"messages[{i}].content")
    if open_calls:
        raise ApiError(400, "An assistant message with 'tool_calls' must be followed by tool messages responding to "
                            f"each 'tool_call_id'. Not answered: {', '.join(sorted(open_calls))}", param="messages")


def _assistant_calls(entry: Mapping[str, Any], i: int) -> set[str]:
    calls = entry.get("tool_calls") or []
    if entry.get("content") is None and not calls:
        raise ApiError(400, f"Invalid 'messages[{i}]': an assistant message needs content or tool_calls")
    ids: set[str] = set()
    for j, call in enumerate(calls):
        function = call.get("function") or {}
        if not call.get("id") or call.get("type") != "function" or not isinstance(function.get("arguments"), str):
            raise ApiError(400, f"Invalid 'messages[{i}].tool_calls[{j}]': needs an id, type 'function' and string "
                                "arguments", param=f"messages[{i}].tool_calls[{j}]")
        ids.add(call["id"])
    return ids


def prompt_segments(body: Mapping[str, Any]) -> list[Any]:
    """The prompt in order: each tool, then each message."""
    return [*(body.get("tools") or []), *body["messages"]]


class PrefixCache:
    """Prefixes (at segment boundaries) already sent, per model; thread-safe."""

    def __init__(self, min_cached_tokens: int) -> None:
        self.min_cached_tokens = min_cached_tokens
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def account(self, model: str, segments: list[Any]) -> tuple[int, int]:
        """(prompt tokens, cached tokens) for one request; remembers its prefixes."""
        counts = list(itertools.accumulate(estimate_tokens(s) for s in segments))
        digest, keys = hashlib.sha256(model.encode("utf-8")), []
        for segment in segments:
            digest.update(_compact(segment).encode("utf-8") + b"\x1e")
            keys.append(digest.hexdigest())
        with self._lock:
            hit = max((i for i, key in enumerate(keys) if key in self._seen), default=-1)
            self._seen.update(keys)
        cached = counts[hit] if hit >= 0 and counts[hit] >= self.min_cached_tokens else 0
        return (counts[-1] if counts else 0), cached


@dataclass(frozen=True)
class Fault:
    status: int | None = None
    retry_after: float | None = None
    malformed: bool = False
    delay: float = 0.0
    message: str | None = None
    code: str | None = None


# --- the server ------------------------------------------------------------------------------------


class FakeOpenAIAPI:
    """The fake API server; see the module docstring for the contract."""

    def __init__(self, policy: Policy | None = None, *, latency_s: float = 0.0, port: int = 0,
                 rejected_keys: Iterable[str] = (), known_models: Iterable[str] | None = None,
                 min_cached_tokens: int = 1024) -> None:
        self.policy: Policy = policy or ScriptedPolicy([])
        self.rejected_keys = frozenset(rejected_keys)
        self.known_models = None if known_models is None else frozenset(known_models)
        self.latency_s = latency_s
        self.port = port
        self.calls: Counter[str] = Counter()
        self.policy_errors: list[str] = []
        self.max_concurrency_seen = 0
        self._cache = PrefixCache(min_cached_tokens)
        self._requests: list[dict[str, Any]] = []
        self._faults: deque[Fault] = deque()
        self._usage: Counter[str] = Counter()
        self._in_flight = 0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> FakeOpenAIAPI:
        server = ThreadingHTTPServer(("127.0.0.1", self.port), _Handler)
        server.daemon_threads = True
        server.block_on_close = False
        server.api = self  # type: ignore[attr-defined]
        self._server = server
        self.port = int(server.server_address[1])
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02},
                                        name="fake-openai-api", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeOpenAIAPI:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """A snapshot of every request so far: {method, path, route, headers (no credentials), body}."""
        with self._lock:
            return list(self._requests)

    def usage_totals(self) -> dict[str, int]:
        """Summed usage of every completion answered."""
        with self._lock:
            return {k: self._usage[k] for k in ("completions", "prompt_tokens", "completion_tokens", "cached_tokens")}

    def inject(self, status: int | None = None, *, retry_after: float | None = None, malformed: bool = False,
               delay: float = 0.0, message: str | None = None, code: str | None = None, times: int = 1) -> None:
        """Queue a fault for each of the next `times` chat completion requests (after those queued before)."""
        if status is None and not malformed and not delay:
            raise ValueError("inject needs a status, malformed=True or a delay")
        if status is not None and status < 400:
            raise ValueError("an injected status must be an error status (>= 400)")
        with self._lock:
            self._faults.extend([Fault(status, retry_after, malformed, delay, message, code)] * times)

    @property
    def pending_faults(self) -> int:
        with self._lock:
            return len(self._faults)

    def _next_fault(self) -> Fault:
        with self._lock:
            return self._faults.popleft() if self._faults else Fault()

    def _record(self, entry: dict[str, Any]) -> None:
        with self._lock:
            self._requests.append(entry)
            self.calls[entry["route"]] += 1

    @contextlib.contextmanager
    def _tracking(self) -> Iterator[None]:
        with self._lock:
            self._in_flight += 1
            self.max_concurrency_seen = max(self.max_concurrency_seen, self._in_flight)
        try:
            yield
        finally:
            with self._lock:
                self._in_flight -= 1

    def complete(self, body: Request) -> dict[str, Any]:
        """The ChatCompletion answering one request (raises ApiError for a bad request or a policy failure)."""
        check_request(body)
        model = body["model"]
        if self.known_models is not None and model not in self.known_models:
            raise ApiError(404, f"The model `{model}` does not exist or you do not have access to it.",
                           code="model_not_found")
        try:
            reply = self.policy(body)
        except Exception as exc:
            message = f"fake policy failed: {type(exc).__name__}: {exc}"
            with self._lock:
                self.policy_errors.append(message)
            raise ApiError(400, message) from exc
        message = {"role": "assistant", "content": None, "refusal": None, **reply.get("message", {})}
        prompt, cached = self._cache.account(model, prompt_segments(body))
        output = max(1, estimate_tokens([message.get("content"), message.get("tool_calls")]))
        usage = reply.get("usage") or {
            "prompt_tokens": prompt, "completion_tokens": output, "total_tokens": prompt + output,
            "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                          "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
        }
        self._add_usage(usage)
        finish = reply.get("finish_reason") or ("tool_calls" if message.get("tool_calls") else "stop")
        return {
            "id": _new_id("chatcmpl-"), "object": "chat.completion", "created": int(time.time()), "model": model,
            "system_fingerprint": "fp_fake", "service_tier": "default",
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
            "usage": usage,
        }

    def _add_usage(self, usage: Mapping[str, Any]) -> None:
        with self._lock:
            self._usage["completions"] += 1
            for key in ("prompt_tokens", "completion_tokens"):
                self._usage[key] += int(usage.get(key) or 0)
            self._usage["cached_tokens"] += int((usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like the real API; every reply sets Content-Length
    server_version = "fake-openai-api"
    disable_nagle_algorithm = True  # headers and body go out in separate writes; Nagle would hold the body ~40 ms

    @property
    def api(self) -> FakeOpenAIAPI:
        return self.server.api  # type: ignore[attr-defined,no-any-return]

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: nothing is logged, least of all a credential."""

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def _dispatch(self, method: str) -> None:
        path = urlsplit(self.path).path
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        body, parse_error = _parse_json(raw)
        route = ROUTE if (method, path) == ("POST", ROUTE) else "(unknown)"
        headers = {k.lower(): v for k, v in self.headers.items() if k.lower() not in CREDENTIAL_HEADERS}
        self.api._record({"method": method, "path": path, "route": route, "headers": headers, "body": body})
        try:
            authorization = self.headers.get("authorization") or ""
            key = authorization.removeprefix("Bearer ").strip() if authorization.startswith("Bearer ") else ""
            if not key or key in self.api.rejected_keys:
                raise ApiError(401, "Incorrect API key provided. You can find your API key at "
                                    "https://platform.openai.com/account/api-keys.", code="invalid_api_key")
            if route != ROUTE:
                raise ApiError(404, f"no route for {method} {path} in this fake", code="unknown_url")
            if parse_error:
                raise ApiError(400, f"We could not parse the JSON body of your request: {parse_error}")
            with self.api._tracking():
                self._completion(body)
        except ApiError as exc:
            self._send(exc.status, _compact(exc.body()).encode("utf-8"), exc.headers)

    def _completion(self, body: Any) -> None:
        api = self.api
        fault = api._next_fault()
        if fault.delay:
            time.sleep(fault.delay)
        if fault.status:
            headers = {"retry-after": f"{fault.retry_after:g}"} if fault.retry_after is not None else {}
            raise ApiError(fault.status, fault.message or f"injected fault: HTTP {fault.status}",
                           fault.code, headers)
        completion = api.complete(body)
        if api.latency_s:
            time.sleep(api.latency_s)
        data = _compact(completion).encode("utf-8")
        self._send(200, data[: len(data) // 2] if fault.malformed else data)

    def _send(self, status: int, data: bytes, headers: Mapping[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("x-request-id", _new_id("req_"))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


def _parse_json(raw: bytes) -> tuple[Any, str | None]:
    if not raw:
        return None, None
    try:
        return json.loads(raw), None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return None, str(exc)


# --- as a process -----------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve a fake OpenAI Chat Completions API on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free port)")
    parser.add_argument("--latency-ms", type=float, default=0.0, help="delay added to every completion")
    parser.add_argument("--policy", default="sim", help="sim (sim:lexical), sim:skim or echo (always 'ok')")
    args = parser.parse_args(argv)
    policy: Policy = (lambda request: text_reply("ok")) if args.policy == "echo" else SimPolicy(
        "lexical" if args.policy == "sim" else args.policy)
    with FakeOpenAIAPI(policy, latency_s=args.latency_ms / 1000, port=args.port) as api:
        print(api.base_url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
