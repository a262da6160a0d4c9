"""The users' own wording in a rewrite (`asked_phrases`), a dropped sentence about one parameter kept with that
parameter (`moved`), and the offline agents reading a proper name as a question about a name."""

from __future__ import annotations

import asyncio

from optimizer.definitions import ToolDef
from optimizer.models.base import Message
from optimizer.models.sim import SimAgent
from optimizer.propose.asks import asked_phrases
from optimizer.propose.leakage import leaked_phrases
from optimizer.propose.rules import moved

CLOCK = (
    "What's the offset from UTC in the harbour office right now?",
    "How far is the warehouse clock ahead of UTC, and what is its offset from UTC?",
    "Tell me the offset from UTC for the night shift.",
)
CONVERT = ("Convert 09:30 at the harbour office to warehouse time.", "Turn 18:00 into the night shift's time.")
BY_TOOL = {"current_time": CLOCK, "convert_time": CONVERT}


def test_a_phrase_several_lost_requests_share_is_their_way_of_asking() -> None:
    phrases = asked_phrases("current_time", BY_TOOL, lost=CLOCK, said="current_time Get the current time in a zone.")
    assert phrases[0] == "offset from UTC"
    assert not leaked_phrases(" ".join(phrases), [*CLOCK, *CONVERT])


def test_nothing_unless_two_requests_agents_sent_elsewhere_use_it() -> None:
    assert asked_phrases("current_time", BY_TOOL, lost=CLOCK[:1], said="current_time") == []
    assert asked_phrases("current_time", BY_TOOL, lost=(), said="current_time") == []


def test_words_the_tool_already_says_or_other_tools_requests_use_are_not_its_phrases() -> None:
    said = "current_time Get the current time and its offset from UTC."
    assert not any("offset" in p or "UTC" in p for p in asked_phrases("current_time", BY_TOOL, CLOCK, said))
    shared = {"current_time": CLOCK, "convert_time": (*CONVERT, *(f"Convert 10:00 by the offset from UTC {n}."
                                                                  for n in ("today", "again")))}
    assert "offset from UTC" not in asked_phrases("current_time", shared, CLOCK, "current_time")


def test_one_request_for_another_tool_that_uses_the_phrase_is_enough_to_leave_it_out() -> None:
    # three clock requests say "offset from UTC", one conversion does too: written into the clock tool, the phrase
    # would pull that conversion over
    once = {"current_time": CLOCK, "convert_time": (*CONVERT, "Convert 10:00 by the offset from UTC.")}
    assert not any("offset" in p or "UTC" in p for p in asked_phrases("current_time", once, CLOCK, "current_time"))


def test_no_name_no_number_no_everyday_word_alone() -> None:
    prompts = ("Has Priya Raman got two top seats?", "Did Priya Raman book two top seats?",
               "Are two top seats left for Priya Raman?")
    phrases = asked_phrases("book", {"book": prompts}, lost=prompts, said="book")
    assert not [p for p in phrases if "Priya" in p or "Raman" in p or p in ("two", "top", "two top")]
    assert phrases == ["top seats"]


def test_a_dropped_sentence_about_one_parameter_moves_to_that_parameter() -> None:
    tool = ToolDef("search_files", "Search for files matching a pattern. Use pattern like '*.ext' for one folder and "
                   "'**/*.ext' for every folder. Only works within allowed directories.",
                   {"type": "object", "properties": {"path": {"type": "string"},
                                                     "pattern": {"type": "string", "description": "A glob."}}})
    kept = "Search for files matching a pattern."
    assert moved(tool, kept, {}) == {"pattern": "A glob. Use pattern like '*.ext' for one folder and '**/*.ext' "
                                                "for every folder."}
    assert moved(tool, tool.description, {}) == {}  # nothing dropped, nothing moved


def test_a_question_naming_someone_goes_to_the_tool_that_opens_records_by_name() -> None:
    tools = (
        ToolDef("read_graph", "Read the entire knowledge graph.", {"type": "object", "properties": {}}),
        ToolDef("open_nodes", "Open specific nodes in the knowledge graph by their names.",
                {"type": "object", "properties": {"names": {"type": "array", "items": {"type": "string"}}},
                 "required": ["names"]}),
    )
    for habit in ("lexical", "skim"):
        turn = asyncio.run(SimAgent(habit).turn("", tools, [Message("user", "Who does Yuki Tanaka work for?")]))
        assert [c.name for c in turn.tool_calls] == ["open_nodes"], habit
        turn = asyncio.run(SimAgent(habit).turn("", tools, [Message("user", "Who works where these days?")]))
        assert [c.name for c in turn.tool_calls] == ["read_graph"], habit


def test_the_letters_inside_a_value_are_not_an_abbreviation() -> None:
    prompts = ("Which order does the parcel with tracking number 1Z999AA10123456784 belong to?",
               "Is the parcel with tracking 1Z999AA10123456790 out with the driver?")
    phrases = asked_phrases("track", {"track": prompts}, lost=prompts, said="track", limit=3)
    assert phrases and not any("AA" in p for p in phrases), phrases
