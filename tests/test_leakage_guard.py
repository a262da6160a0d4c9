"""The leakage guard flags copying, not the domain's language: every planted leak of the labelled corpus is caught
and no careful rewrite is flagged; then each signal on its own (common English words, copied values, names, the
server's own text, runs shared by many prompts, long runs, expected answers)."""

from __future__ import annotations

import json
import tomllib
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from optimizer.propose.leakage import LONG_RUN, SHARED, _Finder, common_words, leaked_phrases, proper_nouns
from optimizer.tasks import load_tasks

ROOT = Path(__file__).resolve().parent.parent
CORPUS = json.loads((ROOT / "tests" / "fixtures" / "leakage_corpus.json").read_text(encoding="utf-8"))
KINDS = ("id", "number", "email", "phone", "person", "company", "date", "url", "path", "answer", "run")


@cache
def server(name: str) -> dict[str, Any]:
    """The train prompts and expected answers of the server's task set, and its own definitions as known text."""
    train = load_tasks(ROOT / CORPUS["servers"][name]["tasks"]).split("train")
    return {"prompts": [t.prompt for t in train], "answers": [t.expect.answer for t in train],
            "known_text": [CORPUS["servers"][name]["known_text"]]}


def judged(entry: dict[str, Any]) -> list[str]:
    return leaked_phrases(entry["text"], **server(entry["server"]))


def entry_id(entry: dict[str, Any]) -> str:
    return f"{entry['label']}-{entry.get('kind', '')}-{entry['server']}-{entry['tool']}-{entry['field']}"


LEAKS = [e for e in CORPUS["entries"] if e["label"] == "leak"]
CAREFUL = [e for e in CORPUS["entries"] if e["label"] == "careful"]


def test_the_corpus_holds_30_careful_rewrites_and_two_leaks_of_every_kind() -> None:
    assert len(CAREFUL) >= 30
    kinds = Counter(e["kind"] for e in LEAKS)
    assert all(kinds[kind] >= 2 for kind in KINDS), kinds
    assert {e["server"] for e in CORPUS["entries"]} == set(CORPUS["servers"])


@pytest.mark.parametrize("entry", LEAKS, ids=entry_id)
def test_every_planted_leak_is_caught(entry: dict[str, Any]) -> None:
    assert judged(entry), entry["note"]


@pytest.mark.parametrize("entry", CAREFUL, ids=entry_id)
def test_no_careful_rewrite_is_flagged(entry: dict[str, Any]) -> None:
    assert judged(entry) == [], entry["note"]


LIBRARY = ["How many copies of the atlas are on the shelf for a member?",
           "Card LIB-20417 asks how much is owed in late fees.",
           "What is the current time in the reading room?"]


def test_short_runs_of_common_words_pass() -> None:
    """The issue's phrases: ordinary words a careful description shares with the prompts."""
    text = "Check how many copies a branch holds, for a member, and what is owed in late fees; not the current time in"
    assert leaked_phrases(text, LIBRARY) == []


def test_the_same_run_with_a_rare_word_or_a_copied_value_is_flagged() -> None:
    prompts = ["Is the late florbix fee waived for members?", "Refund $4.50 of the late return fee."]
    assert leaked_phrases("Says whether the late return fee is waived.", prompts) == []
    assert leaked_phrases("Says whether the late florbix fee is waived.", prompts) == ["the late florbix fee"]
    assert leaked_phrases("Says whether the late return fee of $4.50 is waived.", prompts) == ["$4.50"]
    assert leaked_phrases("The library card, e.g. LIB-20417.", LIBRARY) == ["20417", "LIB-20417"]


def test_a_run_the_server_already_says_is_not_copied() -> None:
    prompts = ["Is the late florbix fee waived for members?"]
    text = "Says whether the late florbix fee is waived."
    assert leaked_phrases(text, prompts, known_text=["get_fees: the florbix fee of a loan, in cents"]) == []
    assert leaked_phrases("A card like LIB-20417.", LIBRARY, known_text=["card: a card number like LIB-20417"]) == []


def test_a_run_shared_by_many_prompts_is_the_domains_language() -> None:
    few = ["Open the florbix ledger of May.", "Close the florbix ledger."]
    many = [*few, "Who signed the florbix ledger?"]
    assert len(many) == SHARED
    assert leaked_phrases("Reads the florbix ledger of a branch.", few) == ["the florbix ledger of"]
    assert leaked_phrases("Reads the florbix ledger of a branch.", many) == []


def test_a_long_run_is_flagged_whatever_its_words() -> None:
    prompts = ["Can you tell me when the next delivery of the week comes in?"]
    assert LONG_RUN == 6
    assert leaked_phrases("Use it to find when the next delivery of the week comes.", prompts) == [
        "when the next delivery of the week comes"]
    assert leaked_phrases("Use it to find when the next delivery arrives.", prompts) == []  # 4 words: ordinary


def test_names_are_capitalised_words_a_prompt_uses_mid_sentence() -> None:
    prompts = ["Does Mirela Kostova still work for Harbor Freightways?", "Refund the order that Dana says broke.",
               "Which port does the REST API use?", "Shipping starts Friday."]
    assert leaked_phrases("Find who works where, e.g. Mirela Kostova.", prompts) == ["Mirela Kostova"]
    assert leaked_phrases("An employer such as Harbor Freightways.", prompts) == ["Harbor Freightways"]
    assert leaked_phrases("Say who, e.g. Dana.", prompts) == ["Dana"]  # one word, but not a sentence's first
    # a sentence's first word, an abbreviation and a weekday are no evidence of a name
    assert leaked_phrases("Refund an order over the REST API by Friday.", prompts) == []
    assert leaked_phrases("e.g. Dana.", prompts, known_text=["user: a first name like Dana"]) == []


def test_expected_answers_are_copied_values_names_and_rare_words() -> None:
    answers = ["George Lindqvist", "Louisville", "devbox up", r"(?=.*Asia/Dubai)(?=.*(\+04:00|\+\s*4\b))",
               "out for delivery", None]
    found = leaked_phrases("Returns the city (e.g. Louisville) and whether it is out for delivery.", [],
                           answers=answers)
    assert found == ["Louisville"]  # an ordinary answer ("out for delivery") is the domain's language
    assert leaked_phrases("Run it, e.g. devbox up, for George Lindqvist.", [], answers=answers) == [
        "George Lindqvist", "devbox up"]
    assert leaked_phrases("An IANA zone like Asia/Dubai, offset +04:00.", [], answers=answers) == [
        "04:00", "Asia/Dubai", "Dubai"]  # a regex answer is read for its literal parts


def test_years_and_formats_shared_by_many_prompts_are_not_values() -> None:
    prompts = ["Call +1-555-0107 today.", "Who is +1-555-0102?", "Is +1-555-0101 ours?", "Orders since March 2, 2026?"]
    assert leaked_phrases("A phone like +1-555-0142, a date like 2026-01-15.", prompts) == []
    assert leaked_phrases("A phone like +1-555-0107.", prompts) == ["+1-555-0107", "0107"]


def test_the_old_two_argument_call_still_works() -> None:
    assert leaked_phrases("Write to jane@x.org.", ["Mail jane@x.org now."]) == ["jane@x.org"]


def test_the_word_list_ships_with_the_package_and_names_its_source() -> None:
    path = ROOT / "optimizer" / "data" / "english_words.txt"
    header = [line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("#")]
    assert any("wordfreq" in line for line in header) and any("CC BY-SA 4.0" in line for line in header)
    assert any("bench/build_word_list.py" in line for line in header)
    assert len(common_words()) >= 20_000 and {"copies", "late", "fees", "member"} <= common_words()
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-data"]
    assert "*.txt" in data["optimizer.data"]


def test_titles_units_calendar_words_and_common_capitalised_words_are_not_names() -> None:
    """A title is not a name ("DR-WEB for a Dr. Weber" copies nothing from "Dr. Kim"); neither is a lone capitalised
    word that English writes in lower case too, a calendar word or a unit."""
    prompts = ["Book me with Dr. Kim on Friday.", "Ask Mr Patel about the Priority of ticket 5.",
               "Set it to Urgent before Mon.", "Convert 30 Celsius for Ms. Okafor."]
    careful = "A doctor code, e.g. DR-WEB for a Dr. Weber. Priority is Urgent or Normal; days run Mon to Sun; Celsius."
    assert leaked_phrases(careful, prompts) == []
    assert leaked_phrases("e.g. a code for Dr. Kim.", prompts) == ["Kim"]  # the name after the title still counts
    assert leaked_phrases("e.g. ask Patel or Okafor.", prompts) == ["Okafor", "Patel"]


def test_a_name_a_dictionary_writes_only_capitalised_counts_alone() -> None:
    prompts = ["Send the invoice to Weber now.", "Refund what Harriet paid."]
    assert leaked_phrases("e.g. Weber or Harriet.", prompts) == ["Harriet", "Weber"]
    assert {"kim", "weber", "harriet", "london"} <= proper_nouns() and not {"rose", "status", "colour"} & proper_nouns()


def test_a_company_suffix_keeps_the_name_whole_and_a_zone_area_is_the_formats_word() -> None:
    assert leaked_phrases("e.g. marking every product of Kettle & Co.", [], answers=["Kettle & Co"]) == ["Kettle & Co"]
    prompts = ["How many hours ahead of UTC is Darwin, Australia?", "What time is it in Kathmandu now?"]
    assert leaked_phrases("An IANA zone, e.g. 'Australia/Sydney'.", prompts) == []
    assert leaked_phrases("An IANA zone, e.g. Asia/Kathmandu.", prompts) == ["Kathmandu"]
    assert leaked_phrases("Places in Australia.", prompts) == ["Australia"]


def test_a_word_made_from_a_common_or_the_servers_word_is_not_distinctive() -> None:
    text = "Returns the refund id, the amount refunded and the refundable balance left."
    assert leaked_phrases(text, ["Refund order 5"], answers=["exceeds the refundable balance"]) == []
    assert leaked_phrases("It holds the postmortem balance.", [], answers=["the postmortem balance"]) == [
        "the postmortem balance"]


def test_strings_are_found_at_every_start_between_their_boundaries_however_many_share_a_prefix() -> None:
    find = _Finder(["RF-1234", "rf-1234-9", "ab", "a"], fold=True, before=r"[\w@#$-]", after=r"[\w@-]")
    assert sorted(s for s, _ in find("see rf-1234-9 and Rf-1234, ab. xrf-1234 a")) == ["RF-1234", "a", "ab",
                                                                                        "rf-1234-9"]
    assert find("RF-12345 rf-1234x -ab") == []
    names = _Finder(["Sydney", "New York"], fold=False, before=r"\w", after=r"\w")
    assert names("to New York, then sydney and Sydney/Australia") == [("New York", 11), ("Sydney", 35)]


def test_one_screen_of_many_texts_reads_each_text_once_not_once_per_prompt() -> None:
    prompts = [f"Refund order ORD-{n:05d} for customer{n}@example.com now." for n in range(2000)]
    text = "Refunds an order by its id (ORD- and five digits), e.g. ORD-00017; customer17@example.com gets a mail."
    assert leaked_phrases(text, prompts) == ["00017", "ORD-00017", "customer17@example.com"]
