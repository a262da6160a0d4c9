"""Argument filling of the simulated agents (test doubles), kind by kind, on synthetic schemas: paths, quoted
strings, ids, names, dates and times, time zones written out, enums, arrays, free text, globs and SQL written out —
and what must NOT happen (an IANA zone read as a path, the whole request stuffed into a parameter)."""

from __future__ import annotations

from typing import Any

import pytest
from fakes.sim.fill import fill_arguments

from optimizer.text.values import find_values


def schema(required: list[str] | None = None, **props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(props) if required is None else required}


def fill(spec: dict[str, Any], prompt: str, results: tuple[str, ...] = (), tool: str = "") -> dict[str, Any]:
    return fill_arguments(spec, prompt, prompt, list(results), tool=tool)


STRING: dict[str, Any] = {"type": "string"}
PATH = schema(path={"type": "string"})
TZ_HINT = "IANA timezone name (e.g., 'America/New_York', 'Europe/London'). Use 'UTC' as local timezone if none given."


# --- paths ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("prompt", "expected"), [
    ("Which branches exist in the git repository at /path/to/repo?", "/path/to/repo"),
    ("Load /srv/data/x.csv into the table.", "/srv/data/x.csv"),
    ("Open docs/setup.md please", "docs/setup.md"),
    ("What is in ./notes?", "./notes"),
    ("List ~/projects for me", "~/projects"),
    ("Read report.pdf and summarise it.", "report.pdf"),
    ("Check config.yaml for the port", "config.yaml"),
    ("Create notes/standup-2026-05-04.md now", "notes/standup-2026-05-04.md"),
    ("Show the structure of web/, subfolders too.", "web/"),
])
def test_paths_keep_their_shape(prompt: str, expected: str) -> None:
    assert fill(PATH, prompt) == {"path": expected}


def test_an_optional_path_with_nothing_named_stays_out() -> None:
    assert fill(schema(required=[], path=STRING, query=STRING), "Search for 'budget'") == {"query": "budget"}


def test_an_iana_zone_is_not_a_path() -> None:
    kinds = {f.value: f.kind for f in find_values("Convert from America/New_York to Europe/London", 0)}
    assert kinds == {"America/New_York": "timezone", "Europe/London": "timezone"}
    assert fill(PATH, "What time is it in America/New_York?") == {}


def test_web_domains_and_abbreviations_are_not_file_names() -> None:
    assert [f.kind for f in find_values("see example.com, e.g. the docs", 0)] == []


def test_two_paths_go_to_source_and_destination() -> None:
    move = schema(destination=STRING, source=STRING)  # the target listed first still takes the second path
    assert fill(move, "Move drafts/a.md to archive/a.md") == {"destination": "archive/a.md", "source": "drafts/a.md"}


# --- quoted strings, names, identifiers ----------------------------------------------------------


def test_a_quoted_string_wins_for_text_parameters() -> None:
    for quote in ('"rate limits"', "'rate limits'", "“rate limits”"):
        assert fill(schema(query=STRING), f"Search the wiki for {quote} in the docs") == {"query": "rate limits"}
    content = schema(path=STRING, content=STRING)
    assert fill(content, "Create notes/todo.md containing the line '- buy milk'.") == {
        "path": "notes/todo.md", "content": "- buy milk"}


def test_a_quoted_phrase_holding_a_date_stays_one_phrase() -> None:
    search = schema(required=["query"], query=STRING, date={"type": "string", "format": "date"})
    assert fill(search, 'Find "standup on 2026-03-04" notes') == {"query": "standup on 2026-03-04"}


def test_proper_names_fill_name_parameters() -> None:
    person = schema(name={"type": "string", "description": "The person's full name."})
    assert fill(person, "Find Alice Chen in the directory") == {"name": "Alice Chen"}
    names = schema(names={"type": "array", "items": STRING, "description": "Entity names to open."})
    assert fill(names, "What do Elena Petrova and Acme Corp have in common?") == {
        "names": ["Elena Petrova", "Acme Corp"]}


def test_a_sentence_opening_verb_is_not_a_name() -> None:
    person = schema(name=STRING)
    assert fill(person, "Show Priya Raman's profile") == {"name": "Priya Raman"}
    assert fill(person, "Identify the caller") != {"name": "Identify"}


def test_a_table_named_in_words() -> None:
    table = schema(table_name={"type": "string", "description": "Name of the table to describe"})
    assert fill(table, "Which columns does the customers table have?") == {"table_name": "customers"}
    assert fill(table, "Describe the table named order_items") == {"table_name": "order_items"}
    # nothing names a table: no phrase of the request is sent as one
    assert fill(table, "Do we keep supplier information anywhere?") == {}


@pytest.mark.parametrize(("prompt", "expected"), [
    ("Fetch run 123e4567-e89b-12d3-a456-426614174000", "123e4567-e89b-12d3-a456-426614174000"),
    ("Show commit a1b2c3d", "a1b2c3d"),
    ("Open ticket ENG-142", "ENG-142"),
    ("Open ticket 42", "42"),
    ("Deploy the api-gateway service", "api-gateway"),
])
def test_identifiers(prompt: str, expected: str) -> None:
    assert fill(schema(id={"type": "string", "description": "The identifier."}), prompt) == {"id": expected}


# --- dates, times, zones -------------------------------------------------------------------------


@pytest.mark.parametrize("written", ["2026-03-04", "March 4, 2026", "4 March 2026", "4th of March 2026",
                                     "2026-03-04T09:00:00Z"])
def test_dates_in_several_forms_become_iso_dates(written: str) -> None:
    day = schema(day={"type": "string", "description": "The day, YYYY-MM-DD."})
    assert fill(day, f"What is booked on {written}?") == {"day": "2026-03-04"}


@pytest.mark.parametrize(("written", "expected"), [
    ("14:30", "14:30"), ("2:30 pm", "14:30"), ("9am", "09:00"), ("noon", "12:00"),
    ("half past three in the afternoon", "15:30"), ("quarter to nine in the morning", "08:45"),
])
def test_times_become_the_24_hour_form_asked_for(written: str, expected: str) -> None:
    time = schema(time={"type": "string", "description": "Time in 24-hour format (HH:MM)"})
    assert fill(time, f"Set the alarm for {written} please") == {"time": expected}


def test_a_time_in_the_form_a_description_asks_for() -> None:
    twelve = schema(at={"type": "string", "description": "Start time, 12-hour clock with AM/PM"})
    assert fill(twelve, "Book it at 14:30") == {"at": "2:30 PM"}
    seconds = schema(time={"type": "string", "description": "Time as HH:MM:SS"})
    assert fill(seconds, "Book it at 9am") == {"time": "09:00:00"}


def test_a_date_time_parameter_joins_the_date_and_the_time() -> None:
    start = schema(start={"type": "string", "format": "date-time"})
    assert fill(start, "Schedule it on March 4, 2026 at 2:30 pm") == {"start": "2026-03-04T14:30:00"}


def test_a_zone_parameter_takes_a_zone_the_text_writes_out_and_nothing_else() -> None:
    zone = schema(timezone={"type": "string", "description": TZ_HINT})
    assert fill(zone, "What time is it in Europe/London?") == {"timezone": "Europe/London"}
    assert fill(zone, "What time is it in Tokyo?") == {}  # a place is not a zone's name
    convert = schema(
        source_timezone={"type": "string", "description": "Source " + TZ_HINT},
        time={"type": "string", "description": "Time to convert in 24-hour format (HH:MM)"},
        target_timezone={"type": "string", "description": "Target " + TZ_HINT},
    )
    assert fill(convert, "Convert 14:30 from America/New_York to Europe/London") == {
        "source_timezone": "America/New_York", "time": "14:30", "target_timezone": "Europe/London"}


def test_a_required_time_with_no_time_in_the_text_gets_no_words() -> None:
    time = schema(time={"type": "string", "description": "Time in 24-hour format (HH:MM)"})
    assert fill(time, "Does Honolulu observe daylight saving time?") == {}


# --- enums and closed lists ----------------------------------------------------------------------


def test_enum_options_match_by_words_stems_and_prefixes() -> None:
    sort = schema(order={"type": "string", "enum": ["ascending", "descending"]})
    assert fill(sort, "List them newest first, in descending order") == {"order": "descending"}
    short = schema(order={"type": "string", "enum": ["asc", "desc"]})
    assert fill(short, "Sort descending by size") == {"order": "desc"}
    status = schema(status={"type": "string", "enum": ["open", "in_progress", "closed"]})
    assert fill(status, "Which tickets are in progress?") == {"status": "in_progress"}


def test_a_required_enum_the_text_does_not_name_takes_the_default_then_the_first() -> None:
    kind = {"type": "string", "enum": ["local", "remote", "all"]}
    assert fill(schema(kind={**kind, "default": "all"}), "Which branches exist?") == {"kind": "all"}
    assert fill(schema(kind=kind), "Which branches exist?") == {"kind": "local"}
    assert fill(schema(required=[], kind={**kind, "default": "all"}), "Which branches exist?") == {}


def test_quoted_options_in_a_description_are_a_closed_list() -> None:
    branch = schema(branch_type={"type": "string", "description": (
        "Whether to list local branches ('local'), remote branches ('remote') or all branches ('all').")})
    assert fill(branch, "Which remote branches exist?") == {"branch_type": "remote"}
    # none named: the first option, never the request's words
    assert fill(branch, "Which branches exist in the git repository at /path/to/repo?") == {"branch_type": "local"}


def test_an_option_is_chosen_by_half_its_words_else_the_first() -> None:
    topic = schema(topic={"type": "string", "description": "One of: returns, shipping, warranty, price match."})
    assert fill(topic, "Will you match a cheaper price elsewhere?") == {"topic": "price match"}
    assert fill(topic, "How much must I spend to get free delivery?") == {"topic": "returns"}


def test_a_colon_list_in_a_description_is_a_closed_list() -> None:
    update = schema(customer_id={"type": "string", "description": "Customer id like C-1004."},
                    field={"type": "string", "description": "Which field to change: email, phone or address."},
                    value={"type": "string", "description": "The new value."})
    prompt = 'George (C-1007) has moved. Set his shipping address to "9 Harbor Street, Salem, MA 01970".'
    assert fill(update, prompt) == {"customer_id": "C-1007", "field": "address",
                                    "value": "9 Harbor Street, Salem, MA 01970"}


def test_a_repository_question_fills_the_path_and_an_option_not_the_prompt() -> None:
    branches = schema(
        required=["repo_path", "branch_type"], repo_path=STRING,
        branch_type={"type": "string", "description": "Whether to list local branches ('local'), remote branches "
                                                      "('remote') or all branches ('all')."},
        contains={"type": "string", "description": "The commit sha that branch should contain."},
    )
    prompt = "Which branches exist in the git repository at /path/to/repo?"
    assert fill(branches, prompt, tool="git_branch") == {"repo_path": "/path/to/repo", "branch_type": "local"}


# --- arrays --------------------------------------------------------------------------------------


def test_an_array_of_strings_takes_every_value_of_its_kind() -> None:
    paths = schema(paths={"type": "array", "items": STRING, "description": "File paths to read."})
    assert fill(paths, "Compare src/app.py with web/src/app.js and README.md") == {
        "paths": ["src/app.py", "web/src/app.js", "README.md"]}
    emails = schema(to={"type": "array", "items": {"type": "string", "format": "email"}})
    assert fill(emails, "Invite ann@x.io and bo@y.org") == {"to": ["ann@x.io", "bo@y.org"]}


def test_an_array_of_objects_is_filled_only_when_its_required_fields_are() -> None:
    person = {"type": "object", "required": ["name", "email"], "properties": {
        "name": {"type": "string", "description": "The person's full name"},
        "email": {"type": "string", "description": "The person's email address"}}}
    people = schema(people={"type": "array", "items": person})
    assert fill(people, "Add Alice Chen, alice@x.io") == {"people": [{"name": "Alice Chen", "email": "alice@x.io"}]}
    assert fill(people, "Add something about the weather") == {}


def test_an_exclusion_list_is_filled_only_from_what_the_text_excludes() -> None:
    search = schema(required=["pattern"], pattern=STRING,
                    excludePatterns={"type": "array", "items": STRING, "default": []})
    assert fill(search, "Find the *.md files") == {"pattern": "*.md"}
    assert fill(search, "Find the *.md files, excluding drafts.md") == {
        "pattern": "*.md", "excludePatterns": ["drafts.md"]}


# --- free text, globs, SQL -----------------------------------------------------------------------


def test_free_text_gets_the_phrase_that_fits_not_the_request() -> None:
    query = schema(query={"type": "string", "description": "Search query"})
    assert fill(query, "Find notes about the Q3 budget in the finance folder.") == {"query": "Q3 budget"}
    assert fill(query, "Which languages does Priya Raman speak?") == {"query": "Priya Raman"}
    unquoted = fill(query, "Search the docs for rate limits on uploads", tool="search_docs")["query"]
    assert "rate limits" in unquoted and "Search" not in unquoted and "the" not in unquoted.split()


def test_a_required_free_text_parameter_with_nothing_fitting_gets_no_prompt() -> None:
    query = schema(query={"type": "string", "description": "Search query"})
    prompt = "Which branches exist in the git repository at /path/to/repo?"
    filled = fill(query, prompt, tool="git_branch")
    assert filled.get("query") != prompt
    assert len(filled.get("query", "").split()) <= 3
    assert fill(query, "List the branches, please.", tool="list_branches") == {}


def test_an_optional_free_text_parameter_needs_a_confident_value() -> None:
    search = schema(required=["path"], path=STRING, query=STRING)
    assert fill(search, "List docs/guides please") == {"path": "docs/guides"}


@pytest.mark.parametrize(("prompt", "expected"), [
    ("List *.py here", "*.py"), ("Find docs/**/*.md", "docs/**/*.md"), ("Is there more than one setup.md?", "setup.md"),
    ("Find the markdown files", None),
])
def test_a_glob_parameter_gets_a_glob_the_text_writes_out_or_a_file_name(prompt: str, expected: str | None) -> None:
    glob = schema(pattern={"type": "string", "description": "Glob pattern; '**/*.ext' matches in all subdirectories"})
    assert fill(glob, prompt).get("pattern") == expected


def test_a_regex_pattern_is_not_given_a_glob() -> None:
    regex = schema(pattern={"type": "string", "description": "A regular expression to match lines"})
    assert "*" not in fill(regex, "Find the .md files").get("pattern", "")


def test_an_sql_parameter_takes_only_a_statement_the_text_writes_out() -> None:
    read = schema(query={"type": "string", "description": "SELECT SQL query to execute"})
    assert fill(read, "Run SELECT name FROM users WHERE id = 3.") == {"query": "SELECT name FROM users WHERE id = 3"}
    assert fill(read, "Show every row of the customers table") == {}
    listed = ("[{'name': 'orders'}, {'name': 'customers'}]",)
    assert fill(read, "How many orders are there?", listed) == {}
    write = schema(query={"type": "string", "description": "SQL query to execute"})
    assert fill(write, "Run UPDATE products SET price = 3 WHERE id = 1") == {
        "query": "UPDATE products SET price = 3 WHERE id = 1"}
    # a description that lists tables does not make a table's name a statement
    known = schema(query={"type": "string", "description": "SELECT SQL query to execute. Known tables: orders, "
                                                           "customers and order_items (from list_tables)."})
    assert fill(known, "How many customers do we have?") == {}


# --- numbers and booleans ------------------------------------------------------------------------


def test_numbers_go_to_the_parameter_whose_words_stand_next_to_them() -> None:
    read = schema(required=["path"], path=STRING,
                  head={"type": "number", "description": "If provided, returns only the first N lines of the file"},
                  tail={"type": "number", "description": "If provided, returns only the last N lines of the file"})
    assert fill(read, "Show me only the last two lines of notes/todo.md.") == {"path": "notes/todo.md", "tail": 2}
    assert fill(read, "Just the first 4 lines of CHANGELOG.md") == {"path": "CHANGELOG.md", "head": 4}
    assert fill(read, "Read CHANGELOG.md") == {"path": "CHANGELOG.md"}


def test_booleans_only_when_the_text_says_them() -> None:
    edit = schema(required=["path"], path=STRING, dryRun={"type": "boolean", "default": False})
    assert fill(edit, "Do a dry run of the change to a.txt") == {"path": "a.txt", "dryRun": True}
    assert fill(edit, "Change a.txt") == {"path": "a.txt"}
    recursive = schema(recursive={"type": "boolean"})
    assert fill(recursive, "List it recursively") == {"recursive": True}
    assert fill(recursive, "List it") == {"recursive": False}


def test_nullable_parameters_read_as_their_type() -> None:
    nullable = schema(required=[], since={"anyOf": [{"type": "string", "format": "date"}, {"type": "null"}]})
    assert fill(nullable, "Orders since March 4, 2026") == {"since": "2026-03-04"}
