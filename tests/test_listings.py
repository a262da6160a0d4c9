"""The rules proposer names what a server lists on the parameters that refer to it (`propose.listings`)."""

from __future__ import annotations

from collections.abc import Sequence

from optimizer.definitions import Catalog, ToolDef
from optimizer.propose.base import CallSeen, EpisodeSeen
from optimizer.propose.listings import MAX_NAMES, listing_hints

TABLES = "[{'name': 'suppliers'}, {'name': 'products'}, {'name': 'order_items'}]"
KNOWN = "Known tables: suppliers, products and order_items (from list_tables)."


def tool(name: str, params: dict[str, str], description: str = "") -> ToolDef:
    props = {p: {"type": "string", "description": d} for p, d in params.items()}
    return ToolDef(name, description or name, {"type": "object", "properties": props, "required": list(props)})


CATALOG = Catalog("db", (
    tool("read_query", {"query": "SELECT SQL query to execute"}),
    tool("write_query", {"query": "SQL query to execute"}),
    tool("describe_table", {"table_name": "Name of the table to describe"}),
    tool("list_tables", {}),
))


def seen(calls: Sequence[tuple[str, str, bool]]) -> list[EpisodeSeen]:
    return [EpisodeSeen("t1", "sim:lexical", "Which products are out of stock?", False, ("read_query",), (),
                        tuple(name for name, _, _ in calls), tuple(CallSeen(name, name, {}, error, result)
                                                                  for name, result, error in calls), "", "")]


def test_a_read_only_statement_names_the_listed_tables_a_name_parameter_and_a_writer_do_not() -> None:
    hints = listing_hints(CATALOG, seen([("list_tables", TABLES, False)]), {})
    assert hints == {"read_query": {"query": f"SELECT SQL query to execute. {KNOWN}"}}


def test_the_sentence_follows_the_hint_already_written_and_replaces_an_earlier_rounds_list() -> None:
    earlier = {"read_query": {"query": "A SELECT statement. Known tables: suppliers and products (from list_tables)."},
               "write_query": {"query": "An INSERT, UPDATE or DELETE statement."}}
    hints = listing_hints(CATALOG, seen([("list_tables", TABLES, False)]), earlier)
    assert hints["read_query"] == {"query": f"A SELECT statement. {KNOWN}"}
    assert hints["write_query"] == earlier["write_query"]


def test_nothing_is_named_without_a_short_listing_from_a_tool_that_changes_nothing() -> None:
    many = "[" + ", ".join(f"{{'name': 't{n}'}}" for n in range(MAX_NAMES + 1)) + "]"
    for calls in ([], [("list_tables", TABLES, True)], [("list_tables", "[{'name': 'only'}]", False)],
                  [("list_tables", many, False)]):
        assert listing_hints(CATALOG, seen(calls), {}) == {}, calls
    writer = Catalog("db", (*CATALOG.tools[:3], tool("drop_tables", {})))
    assert listing_hints(writer, seen([("drop_tables", TABLES, False)]), {}) == {}
