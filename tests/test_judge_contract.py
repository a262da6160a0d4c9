"""The `Judge` contract, one suite for every judge: the offline stand-in, Claude through the real SDK against the
local fake Messages API (its policy passes an answer that contains the expected text), and the run store's
cache around each."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes.anthropic_api import FakeAnthropicAPI, tool_use_reply

from optimizer.files.store import RunStore
from optimizer.judge import MAX_REASON, TOOL_NAME, ClaudeJudge, Judge, JudgeCache, JudgeVerdict, LexicalJudge
from optimizer.models.anthropic import AnthropicClient
from optimizer.models.base import Usage
from optimizer.prompt_files import FENCE

QUESTION = "How much was order #10007 in total?"
EXPECTED = "$219.40"


def contains_expected(request: dict[str, Any]) -> dict[str, Any]:
    """Reads the fenced expected answer and agent answer from the request; passes when one contains the other."""
    text = request["messages"][0]["content"]
    blocks = dict(re.findall(rf'<untrusted source="([^"]*)">\n{FENCE}\n(.*?)\n{FENCE}\n</untrusted>', text, re.S))
    passed = blocks["expected answer"] in blocks["agent answer"]
    return tool_use_reply(TOOL_NAME, {"passed": passed, "reason": "The total matches." if passed else
                                      "The answer does not give the total."})


@pytest.fixture(params=["sim:judge", "claude-via-fake", "cached sim:judge", "cached claude-via-fake"])
def judge(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Judge | JudgeCache]:
    with FakeAnthropicAPI(contains_expected) as api:
        inner: Judge = (LexicalJudge() if "sim:judge" in request.param else
                        ClaudeJudge("claude-haiku-5-5", AnthropicClient(api_key="contract-key", base_url=api.base_url)))
        if request.param.startswith("cached"):
            store = RunStore.create(tmp_path, "judge-contract")
            yield JudgeCache(inner, store)
            store.close()
        else:
            yield inner


def grade(judge: Judge | JudgeCache, answer: str) -> JudgeVerdict:
    async def go() -> JudgeVerdict:
        verdict = await judge.grade(QUESTION, EXPECTED, answer)
        client = getattr(getattr(judge, "judge", judge), "client", None)
        if isinstance(client, AnthropicClient):
            await client.close()
            judge_object = getattr(judge, "judge", judge)
            judge_object.client = AnthropicClient(api_key="contract-key", base_url=str(client.sdk.base_url))
        return verdict

    return asyncio.run(go())


def test_identity(judge: Judge | JudgeCache) -> None:
    assert isinstance(judge.id, str) and judge.id and isinstance(judge.offline, bool)
    assert isinstance(judge.template, str) and judge.template and isinstance(judge.usage, Usage)


def test_the_expected_answer_passes_and_a_wrong_one_fails(judge: Judge | JudgeCache) -> None:
    right = grade(judge, "The order came to $219.40 including shipping.")
    wrong = grade(judge, "I could not find that order.")
    assert right.passed and not wrong.passed
    for verdict in (right, wrong):
        assert isinstance(verdict.reason, str) and 0 < len(verdict.reason) <= MAX_REASON


def test_the_same_answer_gets_the_same_verdict(judge: Judge | JudgeCache) -> None:
    first, second = grade(judge, "Total: $219.40."), grade(judge, "Total: $219.40.")
    assert first.passed == second.passed and first.reason == second.reason
