"""How the rules proposer words a fact: a validation message read for its facts only, glosses, cents and closed lists,
and invented examples that keep a value's shape and copy nothing."""

from __future__ import annotations

import pytest

from optimizer.propose.formats import Format, invent, read_gloss, read_message


@pytest.mark.parametrize(("message", "sent", "expected"), [
    ("since must be an ISO date YYYY-MM-DD, e.g. 2030-01-02 (got 'Jan 2')", ["Jan 2"],
     "An ISO date, YYYY-MM-DD, e.g. 2031-05-17."),
    ("card must be a card number like LC-20412 or a patron email (got 'bob')", ["bob"],
     "A card number or patron email, e.g. LC-24680."),
    ("shelf must be one of: fiction, history or science (got 'maths')", ["maths"],
     "One of: fiction, history or science."),
    ("copies must be a positive whole number (got 0)", ["0"], "A positive whole number."),
    ("at must be 24-hour HH:MM, e.g. 07:30 (got '7pm')", ["7pm"], "A 24-hour time, HH:MM, e.g. 16:45."),
    ("Bad member value 'L-1234'.", ["L-1234"], ""),
    ("Invalid arguments for tool tag: Invalid input: expected array, received string at labels", ["x"], ""),
    ("title must not be empty", [""], ""),
    ("station looks wrong (got 'WS-9')", ["WS-9"], ""),
    ("query must be an email address, phone number or customer id", [],  # a list without articles
     "An email address, phone number or customer id."),
    ("date must be DD/MM/YYYY, e.g. 14/03/2025 (got '12 March')", ["12 March"],  # a pattern is said as it stands
     "A date, DD/MM/YYYY, e.g. 17/05/2031."),
    ("month must be MM/YYYY, e.g. 07/2026 (got '2026-07')", ["2026-07"], "A month, MM/YYYY, e.g. 05/2031."),
    ("an employee id is E- and five digits, e.g. E-00042 (got '42')", ["42"],  # "X is Y": what X is, its shape
     "An employee id, e.g. E-24680."),
    ("the account is locked", [], ""),
])
def test_a_validation_message_is_read_for_its_facts_only(message: str, sent: list[str], expected: str) -> None:
    text = read_message(message, sent).text(["Renew LC-20412 for bob by 2030-01-02."], sent)
    assert text == expected
    for value in sent:
        assert not value or value not in text


def test_glosses_name_a_parameter_and_formats_render_cents_and_lists() -> None:
    assert read_gloss("the new shelf").text([]) == "The new shelf."
    assert read_gloss("a patron email").text([]) == "A patron email, e.g. name@example.com."
    assert read_gloss("got 'x'").text([]) == ""
    assert Format(cents=True).text([]) == "An amount in cents, e.g. 2468 for $24.68."
    assert Format(gloss="the new shelf", options=["a", "b"]).text([]) == "The new shelf; one of: a or b."
    assert Format(cents=True).text([], examples=False) == "An amount in cents."


def test_invented_examples_keep_the_shape_and_copy_nothing() -> None:
    prompts = ["Renew LC-24680 today", "what about #24680 and 2031-05-17?"]
    assert invent("prefixed_id", "LC-20412", prompts) == "LC-46801"
    assert invent("hash_id", "#10042", prompts) == "#46801"
    assert invent("date", "", prompts) == "2032-06-18"  # still a date
    assert invent("path", "/srv/data/reports/q1.csv", []) == "/folder/subfolder/notes/example.csv"
    assert invent("email", "", []) == "name@example.com"
    assert invent("prefixed_id", "LC-20412", [], avoid={"LC-24680"}) == "LC-46801"
