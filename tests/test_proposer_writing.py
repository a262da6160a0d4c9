"""The rules proposer's writing parts, one by one: the fields results show, the facts of a validation message,
invented examples, and the English of purpose, result and boundary phrases."""

from __future__ import annotations

import json
import re

import pytest

from optimizer.definitions import Catalog, ToolDef
from optimizer.propose.base import CallSeen, EpisodeSeen
from optimizer.propose.fields import counted_noun, labels_in, result_fields, subject, substantive
from optimizer.propose.formats import Format, invent, read_gloss, read_message
from optimizer.propose.parameters import parameter_hints
from optimizer.propose.wording import action, gerund, imperative, job, purpose, returns, spell_out, spelled_out

BOOKS = [
    "Book B-2001: Dune - author Frank Herbert, shelf 4A, status on loan, due 2031-03-04, copies 3.",
    "Book B-2002: Emma - author Jane Austen, shelf 2C, status available, copies 1.",
    "Book B-2003: Ulysses - author James Joyce, shelf 7F, status available, copies 2. Note: rare edition.",
]


def test_fields_are_the_labels_most_results_show_never_their_values() -> None:
    assert result_fields(BOOKS) == ["book", "author", "shelf", "copies", "status"]  # "due", "note": one in three
    assert labels_in(BOOKS[0]) == ["book", "author", "shelf", "due", "copies"]  # "status on loan": not a pair
    for value in ("dune", "frank", "herbert", "loan", "available", "rare"):
        assert value not in " ".join(result_fields(BOOKS)), value


def test_a_title_is_not_a_field() -> None:
    listing = ["- a/1.md (D-1): Postmortem: login outage (2030), updated 2030-01-02",
               "- a/2.md (D-2): Spec: dark mode (2031), updated 2031-02-03"]
    assert result_fields(listing) == ["updated date"]


def test_a_record_repeated_by_two_listings_is_not_a_field() -> None:
    one = "2 loans match 'a':\nL-1 Dune (reader Ann, due 2031-01-02)\nL-2 Emma cover torn 3 times (reader Bo)"
    two = "2 loans match 'b':\nL-3 Ulysses (reader Cy, due 2031-02-03)\nL-2 Emma cover torn 3 times (reader Bo)"
    assert result_fields([one, two]) == ["reader", "due"]  # not "cover torn": the same line twice


def test_one_result_counts_only_the_labels_it_marks_plainly() -> None:
    prose = "Loan policy: Standard loans last 21 days; renewals cost $1.50, otherwise free. Note: see desk."
    assert result_fields([prose]) == ["loan policy", "note"]
    assert result_fields([BOOKS[0]]) == []  # "author Frank Herbert": a field only when other records agree


def test_fields_of_label_lines_and_structured_results() -> None:
    lines = "Station WS-12\nTemperature: 21.4 C\nWind speed: 12 km/h\nLast reading: 2031-04-05 10:00"
    assert labels_in(lines) == ["station", "temperature", "wind speed", "last reading"]
    assert labels_in(json.dumps({"timezone": "Europe/Oslo", "is_dst": False, "day_of_week": "Monday"})) == [
        "timezone", "is dst", "day of week"]
    assert labels_in(str([{"name": "ada", "totalVisits": 4}])) == ["name", "total visits"]  # a Python literal
    assert labels_in("Shipped 2031-02-03 via Rail, placed 2031-02-01.") == ["shipped date", "placed date"]
    assert labels_in("Created page notes/plan.md (revision r-4f2a).") == ["revision"]  # an event, not a field


def test_nouns_results_open_with_or_count() -> None:
    assert subject(BOOKS) == "book"
    assert subject(["Created wiki page a/b.md (6 words).", "Created wiki page c/d.md (2 words)."]) == "wiki page"
    assert counted_noun(["3 loans match 'x':\n- L-1", "1 loan matches 'y':\n- L-2", "No loans match 'z'."]) == "loans"
    assert counted_noun(["A supervisor replies within 4 business hours."]) is None
    assert substantive(["No loans match 'z'.", "1 loan matches 'y'"]) == ["1 loan matches 'y'"]


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


def test_invented_examples_keep_the_shape_and_copy_nothing() -> None:
    prompts = ["Renew LC-24680 today", "what about #24680 and 2031-05-17?"]
    assert invent("prefixed_id", "LC-20412", prompts) == "LC-46801"
    assert invent("hash_id", "#10042", prompts) == "#46801"
    assert invent("date", "", prompts) == "2032-06-18"  # still a date
    assert invent("path", "/srv/data/reports/q1.csv", []) == "/folder/subfolder/notes/example.csv"
    assert invent("email", "", []) == "name@example.com"
    assert invent("prefixed_id", "LC-20412", [], avoid={"LC-24680"}) == "LC-46801"


def test_english_forms() -> None:
    assert [gerund(v) for v in ("track", "create", "get", "search", "see", "edit", "tie")] == [
        "tracking", "creating", "getting", "searching", "seeing", "editing", "tying"]
    assert [imperative(w) for w in ("Reads", "Searches", "Lists", "Access", "Status")] == [
        "Read", "Search", "List", "Access", "Status"]


def test_purpose_result_and_boundary_phrases() -> None:
    assert purpose("get_book", "Get book", ["book id or ISBN"]) == "Look up a book by book id or ISBN"
    assert purpose("renew_loan", "", ["card number"], ["ISO date"]) == \
        "Renew a loan by card number, optionally by ISO date"
    assert purpose("update_item", "Update", ["loan id"], ["new shelf"], noun="loan") == \
        "Update a loan by loan id, setting a new shelf"
    assert purpose("convert_units", "Convert units between metric and imperial", []) == \
        "Convert units between metric and imperial"  # the server's own sentence says more than the name
    assert purpose("search", "Search", ["keywords"], noun="book") == "Search books by keywords"
    book = action("get_book")
    assert returns(book, ["author", "shelf", "status"]) == "returns its author, shelf and status"
    assert returns(action("list_loans"), ["due date"]) == "returns each loan's due date"
    assert returns(action("get_current_time"), ["timezone", "is dst", "sku"]) == \
        "returns its timezone and SKU, and whether it is DST"  # a short word English does not have is an abbreviation
    assert job(book, ["shelf"]) == "a book's shelf"
    assert job(book, []) == "books"
    assert job(action("renew_loan"), []) == "renewing a loan"
    assert job(action("list_loans"), ["due date"]) == "listing loans with their due date"


def test_an_author_sentence_in_the_third_person_lends_a_verbless_name_its_verb_and_object() -> None:
    checkout = action("checkout", None, "Switches branches")
    assert (checkout.verb, checkout.object) == ("switch", "branches")
    assert job(checkout, [], gerund_form=True) == "switching branches"  # not "showing a checkout"
    assert purpose("checkout", "Switches branches", ["repo path"]) == "Switch branches by repo path"
    assert purpose("reset", "Unstages all staged changes", ["repo path"]) == "Unstages all staged changes"
    assert purpose("status", "Status of the repository", ["repo path"]) == "Status of the repository"  # no verb: kept


def test_an_abbreviation_is_spelled_out_in_the_words_the_requests_use_for_it() -> None:
    asked = ["Is Phoenix observing daylight saving time right now?", "What is Dubai's time zone called?"]
    assert spell_out("is dst", asked) == "is daylight saving time (DST)"
    assert returns(action("get_current_time"), [spell_out("is dst", asked)]) == \
        "returns whether it is daylight saving time (DST)"
    assert spelled_out("dob", ["What is the date of birth on file?"]) == "date of birth"
    assert spelled_out("etd", ["When is the estimated time of departure?"]) == "estimated time of departure"
    assert spelled_out("sku", ["Which Stock Keeping Unit is it?"]) == "stock keeping unit"
    assert spelled_out("dts", asked) is None  # "Dubai's time": a name's possessive spells nothing
    assert spelled_out("dst", ["dark storage tier", "daylight saving time"]) is None  # spelled two ways
    assert spelled_out("time", asked) is None  # an English word is no abbreviation
    assert spell_out("is dst", ["How late is it?"]) == "is dst"


PATH_SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


def path_hints(tools: dict[str, str], called: str, paths: tuple[str, ...], result: str) -> dict[str, dict[str, str]]:
    """`parameter_hints` for tools taking one `path`, after one episode that called `called` with each path."""
    catalog = Catalog(server_name="files", tools=tuple(ToolDef(n, d, PATH_SCHEMA) for n, d in tools.items()))
    calls = tuple(CallSeen(called, called, {"path": path}, False, result) for path in paths)
    episode = EpisodeSeen("t1", "sim:lexical", "Do it.", True, (called,), (), (called,), calls, "", "")
    return parameter_hints(catalog, [episode], ["Do it."])


def test_a_folder_tool_lent_a_file_path_example_shows_a_folder() -> None:
    hints = path_hints({"read_text_file": "Read a file.", "create_directory": "Create a directory."},
                       "read_text_file", ("notes/todo.md", "docs/faq.md"), "text")
    file_example = hints["read_text_file"]["path"].split("e.g. ")[1]
    assert re.fullmatch(r"\w+/\w+\.md\.", file_example)  # invented, not a value an agent sent
    assert hints["create_directory"]["path"] == hints["read_text_file"]["path"].replace(".md.", ".")


def test_a_file_tool_lent_a_folder_example_shows_a_file_but_a_search_keeps_its_folder() -> None:
    hints = path_hints({"list_directory": "List a folder.", "read_text_file": "Read a file.",
                        "search_files": "Search for files."},
                       "list_directory", ("notes/drafts", "docs/archive"), "[FILE] a.md")
    folder = hints["list_directory"]["path"]
    assert re.fullmatch(r"A path, e\.g\. \w+/\w+\.", folder)
    assert hints["read_text_file"]["path"] == folder.removesuffix(".") + ".txt."
    assert hints["search_files"]["path"] == folder


def test_the_example_shows_the_form_most_accepted_values_had() -> None:
    hints = path_hints({"open_thing": "Open it."}, "open_thing",
                       ("notes/drafts", "docs/faq.md", "web/app.js"), "ok")  # once a folder, mostly files
    example = hints["open_thing"]["path"].split("e.g. ")[1]
    assert re.fullmatch(r"\w+/\w+\.(md|js)\.", example), example


def test_a_key_holding_an_object_shows_the_objects_fields_not_itself() -> None:
    result = json.dumps({"source": {"timezone": "Asia/Tokyo", "datetime": "x"}, "time_difference": "+9.0h",
                         "items": [{"sku": "A"}]})
    assert labels_in(result) == ["timezone", "datetime", "time difference", "items", "sku"]


def test_a_result_that_reads_as_an_error_is_not_a_result_whatever_its_flag() -> None:
    from optimizer.propose.term_table import results_by_tool

    said = ("Database error: near \"Quinn\": syntax error", "[{'cid': 0, 'name': 'id', 'type': 'INTEGER'}]",
            '{"error": "no such table"}')
    calls = tuple(CallSeen("describe_table", "describe_table", {"table_name": str(n)}, False, text)
                  for n, text in enumerate(said))
    episode = EpisodeSeen("t1", "sim:lexical", "Which columns?", False, ("describe_table",), (),
                          ("describe_table",), calls, "", "")
    assert results_by_tool([episode]) == {"describe_table": [said[1]]}
