"""The Messages API's server-side tool search, emulated around a policy of the fake API.

`ServerToolSearch(policy)` is itself a policy. For a request without a search tool it is `policy`. With one
(`tool_search_tool_bm25_20251119` or `tool_search_tool_regex_20251119`) it does what the API does:
- the model (the wrapped policy) sees the tools not marked `defer_loading`, the deferred tools an earlier search
  of this conversation loaded (`tool_reference`s in `tool_search_tool_result` blocks), and the search itself as a
  tool named `tool_search` taking `query`;
- when the model calls that search, the fake searches the deferred tools itself (BM25 over name, description and
  parameter descriptions, or the regular expression; top 5), answers with a `server_tool_use` block and a
  `tool_search_tool_result` block holding `tool_reference`s, loads the found tools and asks the model again
  within the same response, as the API runs server tools inside one response;
- a `tool_use` of a deferred tool that was never loaded is a policy error (the real API refuses it).
Each search is recorded in `searches` as (query, names found).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import Any

from optimizer.definitions import Exposed
from optimizer.tool_search import SEARCH_TOOL, ToolSearch, search_tool

from .anthropic_api import _blocks, request_tools

Request = dict[str, Any]
Reply = dict[str, Any]
SEARCH_TYPES = {"tool_search_tool_bm25_20251119": "bm25", "tool_search_tool_bm25": "bm25",
                "tool_search_tool_regex_20251119": "regex", "tool_search_tool_regex": "regex"}
MAX_SEARCHES = 4


class ServerToolSearch:
    """A policy wrapper emulating the server-side tool search (see the module docstring)."""

    def __init__(self, policy: Callable[[Request], Reply]) -> None:
        self.policy = policy
        self.searches: list[tuple[str, tuple[str, ...]]] = []
        self._lock = threading.Lock()

    def __call__(self, request: Request) -> Reply:
        tools = [t for t in request.get("tools") or [] if isinstance(t, dict)]
        server = next((t for t in tools if t.get("type") in SEARCH_TYPES), None)
        if server is None:
            return self.policy(request)
        mode = SEARCH_TYPES[server["type"]]
        client = [t for t in tools if "input_schema" in t]
        deferred = {t["name"] for t in client if t.get("defer_loading")}
        index = ToolSearch(Exposed(tuple(request_tools({"tools": [t for t in client if t["name"] in deferred]})),
                                   {}), mode)  # type: ignore[arg-type]
        messages = _for_model(request.get("messages") or [])
        loaded = _loaded(request.get("messages") or [])
        content: list[dict[str, Any]] = []
        for _ in range(MAX_SEARCHES + 1):
            shown = [t for t in client if t["name"] not in deferred or t["name"] in loaded]
            search = search_tool(mode)
            view = {**request, "messages": messages,
                    "tools": [{"name": search.name, "description": search.description,
                               "input_schema": search.input_schema}, *shown]}
            reply = self.policy(view)
            blocks = list(reply.get("content") or [])
            asked = [b for b in blocks if b.get("type") == "tool_use" and b.get("name") == SEARCH_TOOL]
            for block in blocks:
                if block.get("type") == "tool_use" and block["name"] in deferred and block["name"] not in loaded:
                    raise ValueError(f"tool {block['name']} is deferred and was not loaded by a tool search")
            if not asked:
                return {**reply, "content": content + blocks}
            for block in asked:
                query = str((block.get("input") or {}).get("query") or "")
                result = index.search(query)
                found = result.names
                with self._lock:
                    self.searches.append((query, found))
                loaded.update(found)
                use_id = f"srvtoolu_{uuid.uuid4().hex[:12]}{_suffix(block['id'])}"
                content += [
                    {"type": "server_tool_use", "id": use_id, "name": server["name"], "input": {"query": query}},
                    {"type": "tool_search_tool_result", "tool_use_id": use_id,
                     "content": {"type": "tool_search_tool_search_result",
                                 "tool_references": [{"type": "tool_reference", "tool_name": n} for n in found]}},
                ]
                messages = [*messages,
                            {"role": "assistant", "content": [block]},
                            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": block["id"],
                                                          "content": index.result_text(result)}]}]
        raise ValueError("the model kept searching without calling a tool")


def _suffix(tool_use_id: str) -> str:
    """The agent's own call id carried along ("_sim_search_0"), so the conversation maps back to its calls."""
    marker = tool_use_id.find("_sim_")
    return tool_use_id[marker:] if marker >= 0 else ""


def _loaded(messages: list[dict[str, Any]]) -> set[str]:
    return {ref["tool_name"] for m in messages if m.get("role") == "assistant" for b in _blocks(m.get("content"))
            if b.get("type") == "tool_search_tool_result"
            for ref in (b.get("content") or {}).get("tool_references") or []}


def _for_model(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation as the model saw it: each server search becomes its `tool_search` call and result."""
    out: list[dict[str, Any]] = []
    for message in messages:
        blocks = _blocks(message.get("content"))
        if message.get("role") != "assistant" or not any(b.get("type") == "server_tool_use" for b in blocks):
            out.append(message)
            continue
        queries: dict[str, dict[str, Any]] = {}
        current: list[dict[str, Any]] = []
        for block in blocks:
            if block.get("type") == "server_tool_use":
                call_id = "toolu_000000000000" + _suffix(block["id"])
                queries[block["id"]] = {"id": call_id, "query": str((block.get("input") or {}).get("query") or "")}
                current.append({"type": "tool_use", "id": call_id, "name": SEARCH_TOOL,
                                "input": {"query": queries[block["id"]]["query"]}})
            elif block.get("type") == "tool_search_tool_result":
                asked = queries.get(block.get("tool_use_id"), {"id": "toolu_000000000000", "query": ""})
                names = [r["tool_name"] for r in (block.get("content") or {}).get("tool_references") or []]
                text = ("Loaded: " + ", ".join(names)) if names else "No tool matched."
                out += [{"role": "assistant", "content": current},
                        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": asked["id"],
                                                      "content": text}]}]
                current = []
            else:
                current.append(block)
        if current:
            out.append({"role": "assistant", "content": current})
    return out
