"""Values read as what they are (`optimizer.text.values`, the precise reading task generation uses): a dotted code is
not a number, a day-first date with dots or slashes is not a phone number, an amount in €, £ or $ (sign before or
after) is money, and `amount` gives the number it states. The proposers' evidence keeps the reading its recordings
were made with."""

from __future__ import annotations

import pytest

from optimizer.tasks.explore import kind_of
from optimizer.text.values import amount, find_values


@pytest.mark.parametrize("value", ["4.2.1", "AB.12.7", "v1.2.3"])
def test_a_dotted_code_is_a_code_not_a_number(value: str) -> None:
    assert kind_of(value) == "code"
    assert [(f.value, f.kind) for f in find_values(f"See section {value} first.", 2, precise=True)] == [(value, "code")]


@pytest.mark.parametrize("value", ["07.12.2026", "7.12.2026", "13/10/2026"])
def test_a_day_first_date_is_a_date_not_a_phone(value: str) -> None:
    assert kind_of(value) == "date_text"
    assert [f.kind for f in find_values(f"Seen on {value} at the clinic", 2, precise=True)] == ["date_text"]


def test_what_is_not_a_code_or_a_date_keeps_its_kind() -> None:
    assert kind_of("2.14") == "number" and kind_of("+44 20 7946 0100") == "phone"
    assert kind_of("12.31.2026") != "date_text"  # no 31st month: not a day-first date


@pytest.mark.parametrize(("text", "stated"), [("€12.50", 12.5), ("£1,200", 1200.0), ("12,50 €", 12.5),
                                              ("$1,200.50", 1200.5), ("€ 0,5", 0.5), ("1.234,56 €", 1234.56)])
def test_an_amount_in_any_currency_is_money_with_its_number(text: str, stated: float) -> None:
    assert kind_of(text) == "money" and amount(text) == stated


def test_amount_states_no_number_for_what_is_not_an_amount() -> None:
    assert amount("twelve euros") is None and amount("€12.50 and €3") is None


def test_the_evidence_reading_is_the_one_the_recordings_were_made_with() -> None:
    text = "Fee €12.50 on 07.12.2026 for INV-2026-0052, rule 4.2.1"
    precise = {(f.kind, f.value) for f in find_values(text, 2, precise=True)}
    evidence = {(f.kind, f.value) for f in find_values(text, 2)}
    assert {("money", "€12.50"), ("date_text", "07.12.2026"), ("prefixed_id", "INV-2026-0052"),
            ("code", "4.2.1")} <= precise
    assert not {("money", "€12.50"), ("date_text", "07.12.2026"), ("code", "4.2.1")} & evidence
