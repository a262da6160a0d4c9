"""A local fake of the Anthropic Messages API, for tests and benchmarks. Nothing leaves 127.0.0.1.

Contract:
- `FakeAnthropicAPI(policy=...)` serves on 127.0.0.1 at an OS-chosen port (a stdlib `ThreadingHTTPServer` in a
  daemon thread) while used as a context manager (or between `start()` and `stop()`). Point the real SDK at it:
  `anthropic.AsyncAnthropic(api_key="test", base_url=api.base_url)`.
- Endpoints, in the wire format the SDK parses: `POST /v1/messages`, `POST /v1/messages/count_tokens`,
  `POST /v1/messages/batches`, `GET /v1/messages/batches/{id}` and `GET /v1/messages/batches/{id}/results`
  (JSONL; the batch object carries it as an absolute `results_url` once the batch has ended). A batch ends on
  the `finish_after_polls`-th retrieve (default 1; 0 ends it at creation); its requests are answered then.
- Every request needs `Authorization: Bearer …` or `x-api-key` (else 401 `authentication_error`; so do keys
  listed in `rejected_keys`). Every request
  is recorded in `api.requests` as {method, path, route, headers, body}, with the credential headers removed;
  the key is never stored or logged.
- Replies come from a policy, `policy(request_body) -> {"content": [...blocks], "stop_reason": ...}`; the fake
  adds id, type, role, model, stop_sequence and usage (keys the reply already has win; a missing
  stop_reason is "tool_use" when there is a tool_use block, else "end_turn"). `ScriptedPolicy` returns given
  replies in order, `SimPolicy` runs the project's offline agent (`tests/fakes/sim`). The fake
  does not enforce `tool_choice`: with `{"type": "tool", "name": X}` a ScriptedPolicy reply is passed through
  exactly as scripted. A policy that raises gives a 400 `invalid_request_error` naming the exception (never
  retried by the SDK) and is listed in `api.policy_errors`; inside a batch it gives an `errored` result.
- Tokens are estimated deterministically: ceil(len(compact JSON) / 4) per tool, system block and message
  content block (`cache_control` left out). Prompt caching is honest about prefixes: the prefix runs in the
  real API's order (tools, system, messages) up to and including a block carrying `cache_control`. A prefix
  (hash of its canonical JSON plus the model name) written before in this fake's lifetime is read
  (`cache_read_input_tokens`); otherwise it is written (`cache_creation_input_tokens`) and remembered. The
  longest prefix already written is read; later breakpoints are written. `input_tokens` is what follows the
  last breakpoint. Prefixes shorter than `min_cacheable_tokens` (default 0) are not cached.
- Faults, consumed in order by the next `/v1/messages` requests: `api.inject(status=429, retry_after=0.1,
  times=2)`, `inject(status=529)`, `inject(status=500)`, `inject(malformed=True)` (a 200 whose JSON body is cut
  short), `inject(delay=2.0)` (a slow reply). Error bodies have the real shape
  `{"type": "error", "error": {"type": ..., "message": ...}, "request_id": ...}`. `latency_s` delays every
  successful `/v1/messages` reply; `max_concurrency_seen` is the peak number of `/v1/messages` requests in flight.
- Counters: `api.calls` (HTTP requests per route, e.g. "/v1/messages/batches/{id}"), `api.usage_totals()`,
  `api.cache_stats()`.

As a process, for benchmarks: `python -m tests.fakes.anthropic_api --port N [--latency-ms 200] [--policy sim]`
prints its base URL and serves until interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import itertools
import json
import math
import re
import threading
import time
import uuid
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

from optimizer.definitions import ToolDef
from optimizer.models.base import Message, ToolCall, ToolResult, Turn

from .sim import SimAgent

Request = dict[str, Any]
Reply = dict[str, Any]
Policy = Callable[[Request], Reply]

CREDENTIAL_HEADERS = frozenset({"authorization", "x-api-key"})
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    413: "request_too_large",
    429: "rate_limit_error",
    504: "timeout_error",
    529: "overloaded_error",
}
"""Error type per HTTP status; any other status gives `api_error`."""


def _new_id(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:24]}"


# --- replies and policies ---------------------------------------------------------------------------


def text_reply(text: str, stop_reason: str = "end_turn") -> Reply:
    """A reply with one text block."""
    return {"content": [{"type": "text", "text": text}], "stop_reason": stop_reason}


def tool_use_reply(name: str, input: Mapping[str, Any], text: str = "") -> Reply:
    """A reply calling one tool (with an optional text block before it); the tool_use id is new each time."""
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    blocks.append({"type": "tool_use", "id": _new_id("toolu_01"), "name": name, "input": dict(input)})
    return {"content": blocks, "stop_reason": "tool_use"}


class PolicyError(RuntimeError):
    """A policy cannot answer this request (the fake replies 400 `invalid_request_error`)."""


class ScriptedPolicy:
    """Returns `replies` in order, one per request; an entry may be a callable of the request body."""

    def __init__(self, replies: Iterable[Reply | Policy]) -> None:
        self._replies: deque[Reply | Policy] = deque(replies)
        self._lock = threading.Lock()

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._replies)

    def __call__(self, request: Request) -> Reply:
        with self._lock:
            if not self._replies:
                raise PolicyError("ScriptedPolicy has no replies left")
            reply = self._replies.popleft()
        return reply(request) if callable(reply) else reply


class SimPolicy:
    """Answers with the project's offline agent: the request's tools and messages become `ToolDef`s and
    `Message`s, `SimAgent(name).turn(...)` runs with a seed derived from the first user message, and the
    `Turn` becomes Anthropic blocks. Thinking blocks in the history are ignored.

    `tool_choice` is approximated: `{"type": "tool", "name": X}` shows the agent only X, `{"type": "none"}`
    shows it no tools, and with "tool" or "any" a turn that calls tools carries no text (as the real API does).
    """

    def __init__(self, name: str = "lexical", *, noise: float = 0.0, seed: int = 0) -> None:
        self.habit = name.removeprefix("sim:")
        self.noise = noise
        self.seed = seed
        self._shared = self._agent()  # an unknown name fails here, not on the first request
        self._lock = threading.Lock()
        self._tool_lists: dict[str, list[ToolDef]] = {}

    def _agent(self) -> SimAgent:
        return SimAgent(self.habit, seed=self.seed, noise=self.noise)

    def _tools(self, request: Request) -> list[ToolDef]:
        """The same list object for the same tools, so the agent reads each tool list once (as it does in the
        harness), which keeps the fake's CPU per request small next to the latency it emulates."""
        key = hashlib.sha256(_compact(request.get("tools") or []).encode()).hexdigest()
        if key not in self._tool_lists:
            if len(self._tool_lists) > 256:
                self._tool_lists.clear()
            self._tool_lists[key] = request_tools(request)
        return self._tool_lists[key]

    def __call__(self, request: Request) -> Reply:
        choice = request.get("tool_choice") or {}
        with self._lock:
            tools = self._tools(request)
        if choice.get("type") == "tool":
            tools = [t for t in tools if t.name == choice.get("name")]
        elif choice.get("type") == "none":
            tools = []
        messages = request_messages(request)
        seed = stable_seed(next((m.text for m in messages if m.role == "user"), ""))
        with self._lock:
            turn = asyncio.run(self._shared.turn(system_text(request), tools, messages, seed=seed))
        return turn_to_reply(turn, forced=choice.get("type") in ("tool", "any"))


def stable_seed(text: str) -> int:
    """A seed that depends only on the text (Python's `hash` of a str changes per process)."""
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:8], 16)


def request_tools(request: Request) -> list[ToolDef]:
    """The request's client tools (those with an input_schema; server tools are skipped) as ToolDefs."""
    return [
        ToolDef(name=t["name"], description=t.get("description") or "", input_schema=t["input_schema"])
        for t in request.get("tools") or []
        if isinstance(t, dict) and "input_schema" in t
    ]


def system_text(request: Request) -> str:
    system = request.get("system") or ""
    if isinstance(system, str):
        return system
    return "\n\n".join(b.get("text", "") for b in system if b.get("type") == "text")


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def _text_of(content: Any) -> str:
    return "\n".join(b.get("text", "") for b in _blocks(content) if b.get("type") == "text")


_SIM_ID = re.compile(r"toolu_[0-9a-f]{12}_sim_(.+)")


def _sim_call_id(tool_use_id: str) -> str:
    """The agent's own call id ("call_0_0") inside a tool_use id this fake made, else the id as is."""
    match = _SIM_ID.fullmatch(tool_use_id)
    return match.group(1) if match else tool_use_id


def request_messages(request: Request) -> list[Message]:
    """Anthropic messages as the agent's Messages: user text, assistant text and tool calls, and tool results
    (role "tool"; a user turn with results and text gives the results first, then the text)."""
    out: list[Message] = []
    for entry in request.get("messages") or []:
        blocks = _blocks(entry.get("content"))
        text = "\n".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        if entry.get("role") == "assistant":
            calls = tuple(
                ToolCall(_sim_call_id(b["id"]), b["name"], dict(b.get("input") or {}))
                for b in blocks if b.get("type") == "tool_use"
            )
            out.append(Message("assistant", text, calls))
            continue
        results = tuple(
            ToolResult(_sim_call_id(b["tool_use_id"]), _text_of(b.get("content")), bool(b.get("is_error")))
            for b in blocks if b.get("type") == "tool_result"
        )
        if results:
            out.append(Message("tool", tool_results=results))
        if text or not results:
            out.append(Message("user", text))
    return out


def turn_to_reply(turn: Turn, *, forced: bool = False) -> Reply:
    """A text block when there is text (none when a forced choice made calls), one tool_use block per call."""
    blocks: list[dict[str, Any]] = []
    if turn.text and not (forced and turn.tool_calls):
        blocks.append({"type": "text", "text": turn.text})
    for call in turn.tool_calls:
        tool_use_id = f"toolu_{uuid.uuid4().hex[:12]}_sim_{call.id}"
        blocks.append({"type": "tool_use", "id": tool_use_id, "name": call.name, "input": dict(call.arguments)})
    return {"content": blocks, "stop_reason": "tool_use" if turn.tool_calls else "end_turn"}


# --- token estimates and the prompt cache -----------------------------------------------------------


def _compact(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def estimate_tokens(value: Any) -> int:
    """ceil(len(compact JSON) / 4): deterministic, roughly what a tokenizer gives for JSON and prose."""
    return math.ceil(len(_compact(value)) / 4)


@dataclass(frozen=True)
class Segment:
    """One cacheable unit of the prompt: a tool, a system block or a message content block."""

    value: Any
    tokens: int
    ttl: str | None
    """"5m" or "1h" when the block carries a cache_control breakpoint, else None."""


def _segment(block: Mapping[str, Any], context: Mapping[str, Any] | None = None) -> Segment:
    control = block.get("cache_control")
    value = {k: v for k, v in block.items() if k != "cache_control"}
    if context:
        value = {**context, "block": value}
    ttl = (control.get("ttl") or "5m") if isinstance(control, dict) else None
    return Segment(value, estimate_tokens(value), ttl)


def prompt_segments(request: Request) -> list[Segment]:
    """Tools, then system blocks, then message content blocks: the real API's prefix order."""
    segments = [_segment(t) for t in request.get("tools") or [] if isinstance(t, dict)]
    system = request.get("system")
    if system:
        segments += [_segment({"type": "system", **b}) for b in _blocks(system)]
    for entry in request.get("messages") or []:
        segments += [_segment(b, {"role": entry.get("role")}) for b in _blocks(entry.get("content"))]
    return segments


def count_input_tokens(request: Request) -> int:
    return sum(s.tokens for s in prompt_segments(request))


class PromptCache:
    """Prefixes written so far (by hash) and running totals; thread-safe."""

    def __init__(self, min_cacheable_tokens: int = 0) -> None:
        self.min_cacheable_tokens = min_cacheable_tokens
        self._entries: set[str] = set()
        self._stats: Counter[str] = Counter()
        self._lock = threading.Lock()

    def account(self, model: str, segments: list[Segment]) -> dict[str, Any]:
        """Usage input fields for one request, reading and writing prefixes."""
        cumulative = list(itertools.accumulate(s.tokens for s in segments))
        breakpoints = self._breakpoints(model, segments, cumulative)
        creation = {"5m": 0, "1h": 0}
        with self._lock:
            hit = max((i for i, key in breakpoints if key in self._entries), default=-1)
            read = cumulative[hit] if hit >= 0 else 0
            done = read
            for i, key in breakpoints:
                if i > hit:
                    creation[segments[i].ttl or "5m"] += cumulative[i] - done
                    done = cumulative[i]
                    self._entries.add(key)
            self._count(read, sum(creation.values()))
        cached_end = breakpoints[-1][0] if breakpoints else -1
        uncached = (cumulative[-1] if cumulative else 0) - (cumulative[cached_end] if cached_end >= 0 else 0)
        return {
            "input_tokens": uncached,
            "cache_creation_input_tokens": sum(creation.values()),
            "cache_read_input_tokens": read,
            "cache_creation": {
                "ephemeral_5m_input_tokens": creation["5m"],
                "ephemeral_1h_input_tokens": creation["1h"],
            },
        }

    def _breakpoints(self, model: str, segments: list[Segment], cumulative: list[int]) -> list[tuple[int, str]]:
        """(segment index, prefix hash) for every breakpoint whose prefix is long enough to cache."""
        digest = hashlib.sha256(model.encode("utf-8"))
        out: list[tuple[int, str]] = []
        for i, segment in enumerate(segments):
            digest.update(_compact(segment.value).encode("utf-8") + b"\x1e")
            if segment.ttl and cumulative[i] >= self.min_cacheable_tokens:
                out.append((i, digest.hexdigest()))
        return out

    def _count(self, read: int, written: int) -> None:
        self._stats["requests"] += 1
        self._stats["cache_read_input_tokens"] += read
        self._stats["cache_creation_input_tokens"] += written
        self._stats["hits"] += bool(read)
        self._stats["writes"] += bool(written)

    def stats(self) -> dict[str, int]:
        with self._lock:
            keys = ("requests", "hits", "writes", "cache_read_input_tokens", "cache_creation_input_tokens")
            return {**{k: self._stats[k] for k in keys}, "entries": len(self._entries)}


# --- faults and batches -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Fault:
    status: int | None = None
    retry_after: float | None = None
    malformed: bool = False
    delay: float = 0.0


@dataclass
class Batch:
    id: str
    requests: list[dict[str, Any]]
    created_at: datetime
    polls_left: int
    ended_at: datetime | None = None
    results: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self, base_url: str) -> dict[str, Any]:
        ended = self.ended_at is not None
        kinds = Counter(r["result"]["type"] for r in self.results)
        return {
            "id": self.id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": {
                "processing": 0 if ended else len(self.requests),
                "succeeded": kinds["succeeded"],
                "errored": kinds["errored"],
                "canceled": 0,
                "expired": 0,
            },
            "created_at": _rfc3339(self.created_at),
            "expires_at": _rfc3339(self.created_at + timedelta(hours=24)),
            "ended_at": _rfc3339(self.ended_at) if ended else None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"{base_url}/v1/messages/batches/{self.id}/results" if ended else None,
        }


def _rfc3339(moment: datetime | None) -> str | None:
    return moment.isoformat().replace("+00:00", "Z") if moment else None


class ApiError(Exception):
    """An error reply: HTTP status, error type and message."""

    def __init__(self, status: int, message: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.type = ERROR_TYPES.get(status, "api_error")
        self.headers = dict(headers or {})


def _check_message_params(params: Any) -> None:
    if not isinstance(params, dict):
        raise ApiError(400, "the request body must be a JSON object")
    for name in ("model", "max_tokens", "messages"):
        if name not in params:
            raise ApiError(400, f"{name}: Field required")


# --- the server ------------------------------------------------------------------------------------


class FakeAnthropicAPI:
    """The fake API server; see the module docstring for the contract."""

    def __init__(
        self,
        policy: Policy | None = None,
        *,
        latency_s: float = 0.0,
        finish_after_polls: int = 1,
        min_cacheable_tokens: int = 0,
        port: int = 0,
        rejected_keys: Iterable[str] = (),
    ) -> None:
        self.policy: Policy = policy or ScriptedPolicy([])
        self.rejected_keys = frozenset(rejected_keys)
        self.latency_s = latency_s
        self.finish_after_polls = finish_after_polls
        self.port = port
        self.calls: Counter[str] = Counter()
        self.policy_errors: list[str] = []
        self.max_concurrency_seen = 0
        self._cache = PromptCache(min_cacheable_tokens)
        self._requests: list[dict[str, Any]] = []
        self._faults: deque[Fault] = deque()
        self._batches: dict[str, Batch] = {}
        self._usage: Counter[str] = Counter()
        self._in_flight = 0
        self._lock = threading.Lock()
        self._batch_lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle

    def start(self) -> FakeAnthropicAPI:
        server = ThreadingHTTPServer(("127.0.0.1", self.port), _Handler)
        server.daemon_threads = True
        server.block_on_close = False
        server.api = self  # type: ignore[attr-defined]
        self._server = server
        self.port = int(server.server_address[1])
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02},
                                        name="fake-anthropic-api", daemon=True)
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

    def __enter__(self) -> FakeAnthropicAPI:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # inspection

    @property
    def requests(self) -> list[dict[str, Any]]:
        """A snapshot of every request so far: {method, path, route, headers (no credentials), body}."""
        with self._lock:
            return list(self._requests)

    def usage_totals(self) -> dict[str, int]:
        """Summed usage of every message answered (direct and in batches)."""
        keys = ("messages", "input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        with self._lock:
            return {k: self._usage[k] for k in keys}

    def cache_stats(self) -> dict[str, int]:
        """Requests, hits, writes, cache read/creation token totals and the number of prefixes written."""
        return self._cache.stats()

    # faults

    def inject(
        self,
        status: int | None = None,
        *,
        retry_after: float | None = None,
        malformed: bool = False,
        delay: float = 0.0,
        times: int = 1,
    ) -> None:
        """Queue a fault for each of the next `times` /v1/messages requests (after those queued before)."""
        if status is None and not malformed and not delay:
            raise ValueError("inject needs a status, malformed=True or a delay")
        if status is not None and status < 400:
            raise ValueError("an injected status must be an error status (>= 400)")
        with self._lock:
            self._faults.extend([Fault(status, retry_after, malformed, delay)] * times)

    @property
    def pending_faults(self) -> int:
        with self._lock:
            return len(self._faults)

    def _next_fault(self) -> Fault | None:
        with self._lock:
            return self._faults.popleft() if self._faults else None

    # bookkeeping used by the handler

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

    # the API's behaviour

    def complete(self, params: Request, *, service_tier: str = "standard") -> dict[str, Any]:
        """The Message object answering one Messages request (raises ApiError for a policy failure)."""
        _check_message_params(params)
        try:
            reply = self.policy(params)
        except Exception as exc:
            message = f"fake policy failed: {type(exc).__name__}: {exc}"
            with self._lock:
                self.policy_errors.append(message)
            raise ApiError(400, message) from exc
        content = list(reply.get("content") or [])
        calls_tool = any(b.get("type") == "tool_use" for b in content)
        usage = self._cache.account(str(params["model"]), prompt_segments(params))
        usage |= {"output_tokens": max(1, estimate_tokens(content)), "service_tier": service_tier}
        self._add_usage(usage)
        return {
            "id": _new_id("msg_01"),
            "type": "message",
            "role": "assistant",
            "model": params["model"],
            "stop_sequence": None,
            **reply,
            "content": content,
            "stop_reason": reply.get("stop_reason") or ("tool_use" if calls_tool else "end_turn"),
            "usage": reply.get("usage") or usage,
        }

    def _add_usage(self, usage: Mapping[str, Any]) -> None:
        with self._lock:
            self._usage["messages"] += 1
            for key in ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"):
                self._usage[key] += int(usage.get(key) or 0)

    def create_batch(self, body: Request) -> dict[str, Any]:
        requests = body.get("requests")
        if not isinstance(requests, list) or not requests:
            raise ApiError(400, "requests: a non-empty list is required")
        ids = [r.get("custom_id") if isinstance(r, dict) else None for r in requests]
        if None in ids or len(set(ids)) != len(ids) or not all(isinstance(r.get("params"), dict) for r in requests):
            raise ApiError(400, "requests: each needs a unique custom_id and params")
        batch = Batch(_new_id("msgbatch_01"), requests, datetime.now(UTC), self.finish_after_polls)
        with self._batch_lock:
            self._batches[batch.id] = batch
            if batch.polls_left <= 0:
                self._finish(batch)
            return batch.to_json(self.base_url)

    def poll_batch(self, batch_id: str) -> dict[str, Any]:
        with self._batch_lock:
            batch = self._batch(batch_id)
            batch.polls_left -= 1
            if batch.ended_at is None and batch.polls_left <= 0:
                self._finish(batch)
            return batch.to_json(self.base_url)

    def batch_results(self, batch_id: str) -> bytes:
        with self._batch_lock:
            batch = self._batch(batch_id)
            if batch.ended_at is None:
                raise ApiError(404, f"batch {batch_id} has not ended; its results are not available yet")
            return b"".join(_compact(r).encode("utf-8") + b"\n" for r in batch.results)

    def _batch(self, batch_id: str) -> Batch:
        if batch_id not in self._batches:
            raise ApiError(404, f"no message batch with id {batch_id}")
        return self._batches[batch_id]

    def _finish(self, batch: Batch) -> None:
        batch.results = [self._batch_result(r) for r in batch.requests]
        batch.ended_at = datetime.now(UTC)

    def _batch_result(self, entry: dict[str, Any]) -> dict[str, Any]:
        try:
            result = {"type": "succeeded", "message": self.complete(entry["params"], service_tier="batch")}
        except ApiError as exc:
            result = {"type": "errored", "error": _error_body(exc)}
        return {"custom_id": entry["custom_id"], "result": result}


def _error_body(exc: ApiError) -> dict[str, Any]:
    return {"type": "error", "error": {"type": exc.type, "message": str(exc)}, "request_id": _new_id("req_01")}


_ROUTES: list[tuple[str, re.Pattern[str], str]] = [
    ("POST", re.compile(r"/v1/messages"), "/v1/messages"),
    ("POST", re.compile(r"/v1/messages/count_tokens"), "/v1/messages/count_tokens"),
    ("POST", re.compile(r"/v1/messages/batches"), "/v1/messages/batches"),
    ("GET", re.compile(r"/v1/messages/batches/(?P<id>[^/]+)"), "/v1/messages/batches/{id}"),
    ("GET", re.compile(r"/v1/messages/batches/(?P<id>[^/]+)/results"), "/v1/messages/batches/{id}/results"),
]


def _route(method: str, path: str) -> tuple[str, dict[str, str]] | None:
    for verb, pattern, route in _ROUTES:
        match = pattern.fullmatch(path)
        if verb == method and match:
            return route, match.groupdict()
    return None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like the real API; every reply sets Content-Length
    server_version = "fake-anthropic-api"
    disable_nagle_algorithm = True  # headers and body go out in separate writes; Nagle would hold the body ~40 ms

    @property
    def api(self) -> FakeAnthropicAPI:
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
        found = _route(method, path)
        headers = {k.lower(): v for k, v in self.headers.items() if k.lower() not in CREDENTIAL_HEADERS}
        route = found[0] if found else "(unknown)"
        self.api._record({"method": method, "path": path, "route": route, "headers": headers, "body": body})
        try:
            key = (self.headers.get("authorization") or "").removeprefix("Bearer ") or self.headers.get("x-api-key")
            if not key:
                raise ApiError(401, "x-api-key header is required")
            if key in self.api.rejected_keys:
                raise ApiError(401, "invalid x-api-key")
            if found is None:
                raise ApiError(404, f"no route for {method} {path} in this fake")
            if parse_error:
                raise ApiError(400, f"the request body is not JSON: {parse_error}")
            self._serve(route, found[1], body)
        except ApiError as exc:
            self._send_json(exc.status, _error_body(exc), exc.headers)

    def _serve(self, route: str, params: dict[str, str], body: Any) -> None:
        api = self.api
        if route == "/v1/messages":
            with api._tracking():
                self._messages(body)
        elif route == "/v1/messages/count_tokens":
            self._send_json(200, {"input_tokens": count_input_tokens(body or {})})
        elif route == "/v1/messages/batches":
            self._send_json(200, api.create_batch(body or {}))
        elif route == "/v1/messages/batches/{id}":
            self._send_json(200, api.poll_batch(params["id"]))
        else:
            self._send(200, api.batch_results(params["id"]), "application/x-jsonl")

    def _messages(self, body: Any) -> None:
        api = self.api
        fault = api._next_fault() or Fault()
        if fault.delay:
            time.sleep(fault.delay)
        if fault.status:
            retry = {"retry-after": f"{fault.retry_after:g}"} if fault.retry_after is not None else {}
            raise ApiError(fault.status, f"injected fault: HTTP {fault.status}", retry)
        message = api.complete(body)
        if api.latency_s:
            time.sleep(api.latency_s)
        data = _compact(message).encode("utf-8")
        if fault.malformed:
            data = data[: len(data) // 2]
        self._send(200, data, "application/json")

    def _send_json(self, status: int, value: Any, headers: Mapping[str, str] | None = None) -> None:
        self._send(status, _compact(value).encode("utf-8"), "application/json", headers)

    def _send(self, status: int, data: bytes, content_type: str, headers: Mapping[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", _new_id("req_01"))
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


def _policy_named(name: str) -> Policy:
    if name == "echo":
        return lambda request: text_reply("ok")
    return SimPolicy("lexical" if name == "sim" else name)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve a fake Anthropic Messages API on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free port)")
    parser.add_argument("--latency-ms", type=float, default=0.0, help="delay added to every /v1/messages reply")
    parser.add_argument("--policy", default="sim", help="sim (sim:lexical), sim:skim or echo (always 'ok')")
    parser.add_argument("--finish-after-polls", type=int, default=1, help="retrieves before a batch ends")
    args = parser.parse_args(argv)
    api = FakeAnthropicAPI(_policy_named(args.policy), latency_s=args.latency_ms / 1000,
                           finish_after_polls=args.finish_after_polls, port=args.port)
    with api:
        print(api.base_url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
