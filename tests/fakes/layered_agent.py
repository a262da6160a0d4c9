"""A fake agent for tests/servers/layered_server.py, behind the fake Messages API: it reads the request's tools and
prompt as a careless model would. It calls list_stations for a question about stations, else get_flow with the
station named in the prompt and, in the prompt's own words, the unit (after "in"), the band ("high flow", "low
flow") and the window ("the past month") when the prompt has them — unless a parameter's description lists values
(`listed_options`), when it sends the listed value sharing the most words with the prompt. After a tool result it
answers with the result's text."""

from __future__ import annotations

import re
from typing import Any

from fakes.anthropic_api import request_messages, text_reply, tool_use_reply
from fakes.sim.options import listed_options
from optimizer.text.tokens import words

SAID = {"unit": r"\bin ([a-z ]+?)(?: over\b|\?)", "band": r"\b((?:high|low) flow)\b", "window": r"\bthe (past \w+)"}


class LayeredAgent:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        messages = request_messages(request)
        if messages[-1].role == "tool":
            return text_reply(messages[-1].tool_results[0].content)
        prompt = next(m.text for m in messages if m.role == "user")
        tools = {t["name"]: t for t in request.get("tools") or [] if "name" in t}
        if "stations" in prompt:
            name = next(n for n in tools if "list_stations" in n)
            return tool_use_reply(name, {})
        name = next(n for n in tools if "get_flow" in n)
        properties = tools[name]["input_schema"]["properties"]
        arguments: dict[str, Any] = {"station": re.search(r"\b[a-z]+-[a-z]+\b", prompt).group(0)}  # type: ignore
        for parameter, pattern in SAID.items():
            said = re.search(pattern, prompt)
            if said:
                listed = listed_options(str(properties[parameter].get("description") or ""))
                arguments[parameter] = max(listed, key=lambda v: len(set(words(v)) & set(words(prompt))),
                                           default=said.group(1))
        self.calls.append((name, arguments))
        return tool_use_reply(name, arguments)


class LedgerProposer:
    """A fake proposer for the same server: for each parameter the request's ledger says the server refused, it writes
    the values the ledger says results show as the parameter's allowed values, in one candidate (the others keep
    their text). Agent turns go to `agent`. Every proposer request's user text is kept in `requests`."""

    LINE = re.compile(r"^(\w+)\.(\w+): refused [^\n]*?results of [\w.]+ show ([^;\n]+)", re.MULTILINE)

    def __init__(self, agent: LayeredAgent) -> None:
        self.agent = agent
        self.requests: list[str] = []

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        if (request.get("tool_choice") or {}).get("name") != "submit_candidates":
            return self.agent(request)
        text = "\n".join(b.get("text", "") for m in request["messages"] for b in m["content"]
                         if isinstance(b, dict) and b.get("type") == "text")
        self.requests.append(text)
        edits: dict[str, dict[str, str]] = {}
        for tool, parameter, shown in self.LINE.findall(text):
            values = re.findall(r"'([^']+)'", shown)
            edits.setdefault(tool, {})[parameter] = f"One of: {' or '.join(values)}."
        tools = [{"tool": tool, "parameters": parameters} for tool, parameters in sorted(edits.items())]
        return tool_use_reply("submit_candidates", {"candidates": [
            {"rationale": "the values the server's results show for each refused parameter",
             "namespace": {"scheme": "none"}, "tools": tools}]})
