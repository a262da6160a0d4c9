"""The `Proposer` contract, one suite for every proposer: the offline rules proposer directly, and the Claude
proposer through the real SDK against the local fake Messages API (its replies rewrite every tool the request
lists, plainly), also as the shrink goal has it (with lean schemas)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from fakes.anthropic_api import FakeAnthropicAPI, tool_use_reply

from optimizer.definitions import Candidate, Catalog, ToolDef, ToolEdit, apply
from optimizer.files.store import StoredEpisode
from optimizer.models.anthropic import AnthropicClient
from optimizer.propose.base import Evidence, Proposer
from optimizer.propose.claude import TOOL_NAME, ClaudeProposer
from optimizer.propose.evidence import build_evidence
from optimizer.propose.lean import LeanSchemas
from optimizer.propose.rules import RulesProposer
from optimizer.tasks import Expect, Task


def tool(name: str, description: str, param: str) -> ToolDef:
    return ToolDef(name, description, {"type": "object", "properties": {param: {"type": "string"}},
                                       "required": [param]})


CATALOG = Catalog("library", (
    ToolDef("find_book", "Books", {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                                   "properties": {"query": {"type": "string", "title": "Query"}}}),
    tool("get_member", "Member", "member_id"),
    tool("list_loans", "Loans", "member_id"),
))
TASKS = {
    "copies": Task("copies", "How many copies of The Hobbit can I borrow?", Expect(tools=("find_book",)), "train"),
    "loans": Task("loans", "Which books does member M-2231 have out right now?", Expect(tools=("list_loans",)),
                  "train"),
    "who": Task("who", "What is the email on file for member M-2231?", Expect(tools=("get_member",)), "train"),
}


def episode(task_id: str, called: str, passed: bool, result: str = "ok") -> StoredEpisode:
    task = TASKS[task_id]
    call = {"id": "c1", "name": called, "original": called, "arguments": {"member_id": "2231"}, "result": result,
            "is_error": result != "ok"}
    data = {"prompt": task.prompt, "answer": "", "verdict": {"passed": passed, "reason": "wrong tool"},
            "expected_tools": list(task.expect.tools), "calls": [call]}
    return StoredEpisode(f"{task_id}-e", "sim:lexical", task_id, "train", "base", 0, "completed", passed, data)


REFUSED = "validation: member_id must be a member number like M-1001 (got '2231')."
EVIDENCE = build_evidence([episode("copies", "list_loans", False), episode("loans", "get_member", False, REFUSED),
                           episode("who", "get_member", True)], TASKS)
CURRENT = Candidate(edits={"get_member": ToolEdit(description="Look up a library member by member id.")})


def plain_rewrites(request: dict[str, Any]) -> dict[str, Any]:
    """Two candidates that describe every tool the submit tool allows, in plain words."""
    submit = next(t for t in request["tools"] if t["name"] == TOOL_NAME)
    names = submit["input_schema"]["properties"]["candidates"]["items"]["properties"]["tools"]["items"][
        "properties"]["tool"]["enum"]
    entries = []
    for style in ("Use it to work with", "Call it for"):
        entries.append({"rationale": f"{style}: each tool says what it is for.", "namespace": {"scheme": "none"},
                        "tools": [{"tool": n, "description": f"{style} {n.replace('_', ' ')} requests."}
                                  for n in names]})
    return tool_use_reply(TOOL_NAME, {"candidates": entries})


@pytest.fixture(params=["rules", "claude-via-fake", "shrink-claude-via-fake"])
def proposer(request: pytest.FixtureRequest) -> Iterator[Proposer]:
    if request.param == "rules":
        yield RulesProposer()
        return
    with FakeAnthropicAPI(plain_rewrites) as api:
        client = AnthropicClient(api_key="contract-key", base_url=api.base_url)
        if request.param == "claude-via-fake":
            yield ClaudeProposer("claude-opus-5-5", client)
        else:
            yield LeanSchemas(ClaudeProposer("claude-opus-5-5", client, goal="shrink"))


def propose(proposer: Proposer, k: int, current: Candidate = CURRENT,
            evidence: Evidence = EVIDENCE) -> Sequence[Candidate]:
    async def go() -> Sequence[Candidate]:
        try:
            return await proposer.propose(CATALOG, current, evidence, k=k, seed=0)
        finally:
            inner = proposer.inner if isinstance(proposer, LeanSchemas) else proposer
            if isinstance(inner, ClaudeProposer):
                await inner.client.close()

    return asyncio.run(go())


def test_identity(proposer: Proposer) -> None:
    assert isinstance(proposer, Proposer) and isinstance(proposer.name, str) and proposer.name
    assert isinstance(proposer.offline, bool)


def test_at_most_k_distinct_candidates_that_apply_and_change_something(proposer: Proposer) -> None:
    candidates = propose(proposer, k=2)
    assert 1 <= len(candidates) <= 2
    keys = [c.key for c in candidates]
    assert len(set(keys)) == len(keys) and CURRENT.key not in keys
    for candidate in candidates:
        assert set(candidate.edits) <= set(CATALOG.names)
        apply(CATALOG, candidate)  # raises DefinitionError when it does not apply


def test_one_candidate_when_one_is_asked_for(proposer: Proposer) -> None:
    assert len(propose(proposer, k=1)) == 1


def test_reports_are_json_and_rationales_are_text(proposer: Proposer) -> None:
    candidates = propose(proposer, k=2)
    report = proposer.last_report()
    assert isinstance(report, dict)
    json.dumps(report)
    for candidate in candidates:
        rationale = proposer.rationale(candidate.key)
        assert rationale is None or (isinstance(rationale, str) and rationale)
    assert proposer.rationale("no-such-candidate") is None
