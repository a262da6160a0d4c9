"""Recorded answers to the proposer's requests (tests/fixtures/proposals/), replayed through the fake Messages API.

A fixture holds one `request` and its `answer`, or, when `optimize` split the proposal by groups of tools, one
`{"request", "answer"}` per group under `groups`. A replayed request is matched to the recorded one over the same
tools (the `tool` enum of its submit_candidates schema), and each recorded answer is given once."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from fakes.anthropic_api import tool_use_reply
from optimizer.propose.claude_reply import TOOL_NAME

Policy = Callable[[dict[str, Any]], Any]


def exchanges(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The fixture's request/answer pairs (an answer may be missing: not recorded yet)."""
    if "groups" in data:
        return [dict(group) for group in data["groups"]]
    return [{key: data[key] for key in ("request", "answer") if key in data}]


def submitted_tools(request: Mapping[str, Any]) -> frozenset[str]:
    """The tools a proposer request asks about: the enum of its submit_candidates `tool` field."""
    candidates = request["tools"][0]["input_schema"]["properties"]["candidates"]
    return frozenset(candidates["items"]["properties"]["tools"]["items"]["properties"]["tool"]["enum"])


def is_proposer_request(request: Mapping[str, Any]) -> bool:
    return (request.get("tool_choice") or {}).get("name") == TOOL_NAME


class RecordedProposals:
    """The fake API's policy: a proposer request over the tools of a recorded one gets that one's recorded answer,
    once; any other proposer request (a group nobody answered, the repair request that sends rejected edits back) is
    refused, since no model answered it. Every proposer request is kept in `requests`. Other requests go to
    `agent` (refused when there is none)."""

    def __init__(self, recorded: Sequence[Mapping[str, Any]], agent: Policy | None = None) -> None:
        self.unanswered = {submitted_tools(e["request"]): e["answer"] for e in recorded if e.get("answer")}
        self.requests: list[dict[str, Any]] = []
        self.agent = agent

    def __call__(self, request: dict[str, Any]) -> Any:
        if is_proposer_request(request):
            self.requests.append(request)
            answer = self.unanswered.pop(submitted_tools(request), None)
            if answer is None:
                raise RuntimeError("no recorded answer for this request")
            return tool_use_reply(TOOL_NAME, answer)
        if self.agent is None:
            raise RuntimeError("only the proposer is expected to call this fake")
        return self.agent(request)
