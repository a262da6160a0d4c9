"""A proposal request past its budget is split by groups of tools, confused tools together, each request within the
budget, and the answers joined candidate by candidate — through the real SDK and the local fake Messages API."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from fakes.anthropic_api import FakeAnthropicAPI, tool_use_reply

from optimizer.definitions import Candidate, Catalog, ToolDef, ToolEdit, apply
from optimizer.models.anthropic import AnthropicClient
from optimizer.propose.base import CallSeen, EpisodeSeen, Evidence
from optimizer.propose.claude import REQUEST_BUDGET, TOOL_NAME, ClaudeProposer, request_tokens
from optimizer.propose.groups import merged, tool_groups

FAMILIES = ("order", "invoice", "customer", "ticket", "shipment", "product", "refund", "coupon", "review", "store",
            "supplier", "warehouse", "payment", "return", "subscription")
VERBS = ("get", "list", "search", "create", "update", "cancel", "archive", "export", "import", "count")
LONG = ("Works on the records of the current account; results are paged fifty at a time and sorted newest first. "
        "Ids are case-sensitive and look like ABC-1234. Returns an error when nothing matches. ") * 3


def big_catalog() -> Catalog:
    return Catalog("shop", tuple(
        ToolDef(f"{verb}_{family}", f"{verb.title()} {family} records. {LONG}",
                {"type": "object", "properties": {"id": {"type": "string", "description": f"The {family} id"}},
                 "required": ["id"]})
        for family in FAMILIES for verb in VERBS))


def confused(expected: str, chosen: str) -> EpisodeSeen:
    call = CallSeen(chosen, chosen, {"id": "X-1"}, False, "ok")
    return EpisodeSeen("t", "m", "a request", False, (expected,), (), (chosen,), (call,), "", "")


EVIDENCE = Evidence(text="(evidence)", failures=(confused("get_order", "search_warehouse"),), successes=(),
                    confusions={"get_order": {"search_warehouse": 3}})


def rewrite_every_tool(request: dict[str, Any]) -> dict[str, Any]:
    names = request["tools"][0]["input_schema"]["properties"]["candidates"]["items"]["properties"]["tools"][
        "items"]["properties"]["tool"]["enum"]
    return tool_use_reply(TOOL_NAME, {"candidates": [
        {"rationale": f"style {n}", "namespace": {"scheme": "none"},
         "tools": [{"tool": t, "description": f"Style {n}: {t.replace('_', ' ')}."} for t in names]}
        for n in (1, 2)]})


def test_a_request_past_its_budget_is_split_by_groups_and_the_answers_joined() -> None:
    catalog = big_catalog()
    seen: list[dict[str, Any]] = []

    def policy(request: dict[str, Any]) -> dict[str, Any]:
        seen.append(request)
        return rewrite_every_tool(request)

    async def go() -> tuple[list[Candidate], ClaudeProposer]:
        with FakeAnthropicAPI(policy) as api:
            proposer = ClaudeProposer("claude-opus-5-5", AnthropicClient(api_key="k", base_url=api.base_url))
            try:
                return await proposer.propose(catalog, Candidate(), EVIDENCE, k=2, seed=0), proposer
            finally:
                await proposer.client.close()

    whole = ClaudeProposer("claude-opus-5-5", AnthropicClient(api_key="k")).request(catalog, Candidate(), EVIDENCE, 2)
    assert request_tokens(whole) > REQUEST_BUDGET  # the premise: one request would not fit
    candidates, proposer = asyncio.run(go())
    report = proposer.last_report()
    groups = report["groups"]
    assert len(seen) == len(groups) > 1
    assert sorted(n for g in groups for n in g) == sorted(catalog.names)  # every tool once
    assert any({"get_order", "search_warehouse"} <= set(g) for g in groups)  # confused tools asked together
    for request in seen:
        assert request_tokens(request) <= REQUEST_BUDGET
    assert len(candidates) == 2
    for n, candidate in enumerate(candidates, start=1):
        assert set(candidate.edits) == set(catalog.names)  # every group's answer is in
        assert all(e.description.startswith(f"Style {n}:") for e in candidate.edits.values())
        apply(catalog, candidate)
        assert json.dumps(proposer.rationale(candidate.key)).count("style") == len(groups)


def test_groups_keep_confused_tools_together_and_merge_takes_each_groups_jth_answer() -> None:
    catalog = big_catalog()
    groups = tool_groups(catalog, EVIDENCE, lambda name: 10, budget=100)
    assert all(len(g) <= 10 for g in groups) and sum(map(len, groups)) == len(catalog.names)
    assert any({"get_order", "search_warehouse"} <= set(g) for g in groups)
    one = [Candidate(edits={"get_order": ToolEdit(description="A1")}),
           Candidate(edits={"get_order": ToolEdit(description="A2")})]
    two = [Candidate(edits={"get_invoice": ToolEdit(description="B1")})]
    joined = merged([one, two], Candidate(), k=3)
    assert [c.edits["get_order"].description for c in joined] == ["A1", "A2"]
    assert [c.edits["get_invoice"].description for c in joined] == ["B1", "B1"]  # fewer answers: its last


def test_a_group_whose_request_fails_leaves_the_others_answers() -> None:
    catalog = big_catalog()
    asked: list[int] = []

    def policy(request: dict[str, Any]) -> dict[str, Any]:
        asked.append(1)
        if len(asked) == 2:
            raise RuntimeError("the second request fails")
        return rewrite_every_tool(request)

    async def go() -> tuple[list[Candidate], ClaudeProposer]:
        with FakeAnthropicAPI(policy) as api:
            client = AnthropicClient(api_key="k", base_url=api.base_url, max_retries=0)
            proposer = ClaudeProposer("claude-opus-5-5", client)
            try:
                return await proposer.propose(catalog, Candidate(), EVIDENCE, k=2, seed=0), proposer
            finally:
                await proposer.client.close()

    candidates, proposer = asyncio.run(go())
    report = proposer.last_report()
    assert "request 2 of" in (report["error"] or "")
    assert candidates and 0 < len(candidates[0].edits) < len(catalog.names)
