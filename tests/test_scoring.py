"""Verifiers, tool checks and aggregation."""

from __future__ import annotations

import pytest

from optimizer.scoring import (
    ScoringError,
    Verdict,
    accuracy_table,
    confusion,
    expected_problem,
    parse_number,
    response_text,
    score,
    verify_answer,
    wilson,
)
from optimizer.tasks import Expect

# --- verifiers -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "expected", "match", "passed"),
    [
        ("The order has SHIPPED.", "shipped", "contains", True),
        ("Status:\n  out   for\tdelivery", "Out for delivery", "contains", True),
        ("The order is pending.", "shipped", "contains", False),
        ("out for\ndelivery", "out fordelivery", "contains", False),
        ("  Pro\n", "Pro", "exact", True),
        ("Pro  plan", "Pro plan", "exact", True),
        ("pro", "Pro", "exact", False),
        ("The Pro plan", "Pro", "exact", False),
        ("mail: ANN@EXAMPLE.COM", r"\b\S+@example\.com\b", "regex", True),
        ("line one\nline two", "one.line", "regex", True),
        ("no mail here", r"\S+@\S+", "regex", False),
    ],
)
def test_text_verifiers(answer: str, expected: str, match: str, passed: bool) -> None:
    assert verify_answer(answer, expected, match) is passed


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("$11,614.72", "11614.72"),
        ("11614.72", "$11,614.72"),
        ("The final amount is $11,614.720.", "11614.72"),
        ("Total: 1,200 units", "1200"),
        ("1200", "1,200"),
        ("Growth was 12.5% this year", "12.5%"),
        ("Growth was 12.5% this year", "12.5"),
        ("The balance is -$42.50", "-42.5"),
        ("The balance is $-42.50", "-42.50"),
        ("delta: −3", "-3"),
        ("€1.234,00 is not US style but 1,234.00 is", "€1,234"),
        ("E = 3.61e-19 J", "3.61e-19"),
        ("Rooms 2 and 7 are free", "7"),
    ],
)
def test_number_tolerates_formatting(answer: str, expected: str) -> None:
    assert verify_answer(answer, expected, "number")


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("3.14159", "3.14"),  # strict: no rounding
        ("11614.7", "11614.72"),
        ("$11,614.72", "-11614.72"),
        ("about eleven thousand", "11614.72"),
        ("order #123456", "12345"),
        ("shipped on 2024-05-03", "-5"),  # the dash of a date is not a minus sign
        ("version 1.2.3", "2.3"),
    ],
)
def test_number_rejects_other_numbers(answer: str, expected: str) -> None:
    assert not verify_answer(answer, expected, "number")


def test_parse_number() -> None:
    assert parse_number(" $11,614.72 ") == 11614.72
    assert parse_number("-5%") == -5.0
    assert parse_number("12 apples") is None
    assert parse_number("1 2") is None


@pytest.mark.parametrize(
    ("answer", "passed"),
    [
        ('{"status": "shipped", "id": 12345}', True),
        ('Here it is:\n```json\n{"id": 12345.0, "status": "shipped"}\n```\nAnything else?', True),
        ('The order {"id": 12345, "status": "shipped"} is on its way.', True),
        ('[draft] then {"id": 12345, "status": "shipped"}', True),
        ('{"id": 12345, "status": "pending"}', False),
        ('{"id": 12345, "status": "shipped", "extra": 1}', False),
        ("no json at all", False),
    ],
)
def test_json_verifier(answer: str, passed: bool) -> None:
    assert verify_answer(answer, '{"id": 12345, "status": "shipped"}', "json") is passed


def test_json_true_is_not_one() -> None:
    assert not verify_answer('{"ok": 1}', '{"ok": true}', "json")
    assert verify_answer('{"ok": true}', '{"ok": true}', "json")
    assert verify_answer("[1, 2, 3]", "[1,2,3]", "json")
    assert not verify_answer("[1, 3, 2]", "[1,2,3]", "json")


def test_response_tags_last_block_only() -> None:
    text = (
        "<summary>I first guessed 10000 then computed.</summary>"
        "<response>draft: 10000</response> more thinking <response>\n$11,614.72\n</response>"
    )
    assert response_text(text) == "\n$11,614.72\n"
    assert verify_answer(text, "11614.72", "number")
    assert not verify_answer(text, "10000", "number")
    assert not verify_answer(text, "guessed", "contains")
    assert verify_answer(text, "11,614.72", "exact") is False  # exact compares the block text
    assert verify_answer(text, "$11,614.72", "exact")
    assert verify_answer('<RESPONSE>{"a": 1}</RESPONSE>', '{"a": 1}', "json")
    assert response_text("no tags") == "no tags"


def test_judge_gets_expected_and_the_response_block() -> None:
    seen: list[tuple[str, str]] = []

    def judge(expected: str, answer: str) -> bool:
        seen.append((expected, answer))
        return "paris" in answer.lower()

    assert verify_answer("thinking… <response>Paris</response>", "Paris, France", "judge", judge=judge)
    assert not verify_answer("<response>Lyon</response>", "Paris, France", "judge", judge=judge)
    assert seen == [("Paris, France", "Paris"), ("Paris, France", "Lyon")]
    with pytest.raises(ScoringError, match="the judge verifier needs a Claude model"):
        verify_answer("Paris", "Paris", "judge")


def test_verifier_errors() -> None:
    with pytest.raises(ScoringError, match="unknown match"):
        verify_answer("x", "x", "fuzzy")
    with pytest.raises(ScoringError, match="regex"):
        verify_answer("x", "([", "regex")
    with pytest.raises(ScoringError, match="not a number"):
        verify_answer("x", "ten", "number")
    with pytest.raises(ScoringError, match="JSON"):
        verify_answer("x", "{", "json")


def test_expected_problem() -> None:
    assert expected_problem("shipped", "contains") is None
    assert expected_problem("$1,200", "number") is None
    assert "not a number" in (expected_problem("lots", "number") or "")
    assert "regex" in (expected_problem("(", "regex") or "")
    assert "JSON" in (expected_problem("{'a': 1}", "json") or "")
    assert "empty" in (expected_problem("  ", "contains") or "")


# --- score -----------------------------------------------------------------------------------------------


def test_score_all_checks_pass() -> None:
    expect = Expect(answer="shipped", tools=("lookup_order",), forbid=("get_customer",))
    verdict = score(expect, "It has shipped.", ["lookup_order", "lookup_order"])
    assert verdict == Verdict(True, {"answer": True, "tools": True, "forbid": True}, "all checks passed")


def test_score_reports_each_failure() -> None:
    expect = Expect(answer="42.50", match="number", tools=("refund_order",), forbid=("get_customer",))
    verdict = score(expect, "Refunded $40.", ["get_customer"])
    assert not verdict.passed
    assert verdict.checks == {"answer": False, "tools": False, "forbid": False}
    assert verdict.reason == (
        "answer lacks the number 42.50; expected tool refund_order not called;"
        " forbidden tool get_customer called"
    )
    contains = score(Expect(answer="42.50"), "<response>\n42\n</response>", [])
    assert contains.reason == "answer lacks '42.50'" and "\n" not in contains.reason


def test_score_with_tools_only_and_answer_only() -> None:
    tools_only = Expect(tools=("cancel_order", "notify"))
    verdict = score(tools_only, "anything", ["cancel_order"])
    assert verdict.checks == {"tools": False}
    assert verdict.reason == "expected tool notify not called"
    assert score(tools_only, "", ["notify", "cancel_order"]).passed
    answer_only = score(Expect(answer="hi"), "HI there", [])
    assert answer_only.checks == {"answer": True} and answer_only.passed
    forbid_passes = score(Expect(answer="hi", forbid=("x",)), "hi", ["y"])
    assert forbid_passes.checks == {"answer": True, "forbid": True}


def test_score_judge_needs_a_model() -> None:
    with pytest.raises(ScoringError):
        score(Expect(answer="Paris", match="judge"), "Paris", [])
    verdict = score(Expect(answer="Paris", match="judge"), "Lyon", [], judge=lambda e, a: e == a)
    assert not verdict.passed and verdict.reason.startswith("judge rejected the answer")


def test_long_expected_is_shortened_in_reason() -> None:
    verdict = score(Expect(answer="word " * 40), "nope", [])
    assert len(verdict.reason) < 90 and verdict.reason.endswith("…'")


# --- statistics --------------------------------------------------------------------------------------


def test_wilson_known_values() -> None:
    low, high = wilson(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-4)
    assert high == pytest.approx(0.9433, abs=1e-4)
    assert wilson(0, 0) == (0.0, 1.0)
    assert wilson(0, 10)[0] == 0.0 and wilson(0, 10)[1] == pytest.approx(0.2775, abs=1e-4)
    assert wilson(10, 10)[1] == pytest.approx(1.0) and wilson(10, 10)[0] == pytest.approx(0.7225, abs=1e-4)
    low50, high50 = wilson(50, 100)
    assert low50 == pytest.approx(1 - high50)
    with pytest.raises(ScoringError):
        wilson(11, 10)


def test_confusion_renders_none_and_sorts() -> None:
    pairs = [
        ("lookup_order", "lookup_order"),
        ("lookup_order", "get_customer"),
        ("lookup_order", None),
        (None, "get_customer"),
        ("lookup_order", "lookup_order"),
    ]
    table = confusion(pairs)
    assert table == {
        "(no tool)": {"get_customer": 1},
        "lookup_order": {"(no tool)": 1, "get_customer": 1, "lookup_order": 2},
    }
    assert list(table) == ["(no tool)", "lookup_order"]
    assert list(table["lookup_order"]) == ["(no tool)", "get_customer", "lookup_order"]
    assert confusion([]) == {}


def test_accuracy_table() -> None:
    rows = [("sim:skim", "train", True)] + [("sim:lexical", "train", True)] * 8
    rows += [("sim:lexical", "train", False)] * 2 + [("sim:lexical", "heldout", False)]
    table = accuracy_table(rows)
    assert list(table) == ["sim:lexical", "sim:skim"]
    assert list(table["sim:lexical"]) == ["heldout", "train"]
    assert table["sim:lexical"]["train"] == {
        "accuracy": 0.8,
        "ci_high": 0.9433,
        "ci_low": 0.4902,
        "n": 10,
        "passed": 8,
    }
    assert table["sim:lexical"]["heldout"]["accuracy"] == 0.0
    assert table["sim:skim"]["train"]["passed"] == 1
    assert accuracy_table([]) == {}
