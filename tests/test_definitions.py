"""Candidates applied to catalogs: renames, descriptions, parameter descriptions, namespaces, routing,
errors, and the content hashes that key the episode cache."""

from __future__ import annotations

import pytest

from optimizer.definitions import Candidate, Catalog, DefinitionError, ToolDef, ToolEdit, apply, canonical_json

SEARCH_SCHEMA = {
    "type": "object",
    "properties": {
        "email": {"type": "string"},
        "filters": {
            "type": "object",
            "properties": {"start": {"type": "string"}, "end": {"type": "string", "description": "old"}},
        },
    },
    "required": ["email"],
}


def catalog(server_name: str = "Support Desk") -> Catalog:
    return Catalog(
        server_name=server_name,
        tools=(
            ToolDef("get_customer", "Get customer info", SEARCH_SCHEMA, annotations={"readOnlyHint": True}),
            ToolDef("lookup_order", "Get order details",
                    {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}),
            ToolDef("track_shipment", "Get status", title="Track"),
        ),
    )


def by_name(tools: tuple[ToolDef, ...]) -> dict[str, ToolDef]:
    return {t.name: t for t in tools}


def test_rename_and_description_edits_reach_the_exposed_tools_and_route_back() -> None:
    cat = catalog()
    candidate = Candidate(edits={
        "get_customer": ToolEdit(name="find_customer", description="Look up a customer by email."),
        "track_shipment": ToolEdit(description="Track a parcel."),
    })
    exposed = apply(cat, candidate)
    tools = by_name(exposed.tools)
    assert list(tools) == ["find_customer", "lookup_order", "track_shipment"]
    assert tools["find_customer"].description == "Look up a customer by email."
    assert tools["find_customer"].input_schema == SEARCH_SCHEMA
    assert tools["find_customer"].annotations == {"readOnlyHint": True}
    assert tools["lookup_order"].description == "Get order details"
    assert tools["track_shipment"].description == "Track a parcel."
    assert tools["track_shipment"].title == "Track"
    assert exposed.routing == {"find_customer": "get_customer", "lookup_order": "lookup_order",
                               "track_shipment": "track_shipment"}
    assert exposed.original("find_customer") == "get_customer"
    assert exposed.original("get_customer") is None


def test_an_empty_description_edit_is_applied_not_ignored() -> None:
    exposed = apply(catalog(), Candidate(edits={"lookup_order": ToolEdit(description="")}))
    assert by_name(exposed.tools)["lookup_order"].description == ""


def test_parameter_descriptions_top_level_and_nested_without_touching_the_catalog() -> None:
    cat = catalog()
    candidate = Candidate(edits={"get_customer": ToolEdit(parameters={
        "email": "The customer's email, e.g. a@b.com.",
        "filters.start": "First day, YYYY-MM-DD.",
    })})
    schema = by_name(apply(cat, candidate).tools)["get_customer"].input_schema
    assert schema["properties"]["email"]["description"] == "The customer's email, e.g. a@b.com."
    nested = schema["properties"]["filters"]["properties"]
    assert nested["start"]["description"] == "First day, YYYY-MM-DD."
    assert nested["end"]["description"] == "old"
    assert schema["required"] == ["email"]
    # the original definitions are untouched (deep copy, not an edit in place)
    assert "description" not in cat.get("get_customer").input_schema["properties"]["email"]
    assert "description" not in SEARCH_SCHEMA["properties"]["filters"]["properties"]["start"]


@pytest.mark.parametrize(
    ("scheme", "word", "expected"),
    [
        ("prefix", None, "support_desk_lookup_order"),
        ("suffix", None, "lookup_order_support_desk"),
        ("prefix", "acme", "acme_lookup_order"),
        ("suffix", "Acme Corp!", "lookup_order_acme_corp"),
        ("none", "acme", "lookup_order"),
    ],
)
def test_namespace_scheme_and_word(scheme: str, word: str | None, expected: str) -> None:
    exposed = apply(catalog("Support Desk"), Candidate(scheme=scheme, word=word))  # type: ignore[arg-type]
    assert expected in exposed.routing
    assert exposed.routing[expected] == "lookup_order"
    assert len(exposed.tools) == 3


def test_namespace_applies_after_a_rename_and_routes_to_the_original() -> None:
    candidate = Candidate(edits={"get_customer": ToolEdit(name="find_customer")}, scheme="prefix", word="support")
    exposed = apply(catalog(), candidate)
    assert [t.name for t in exposed.tools] == ["support_find_customer", "support_lookup_order",
                                              "support_track_shipment"]
    assert exposed.original("support_find_customer") == "get_customer"


def test_server_name_without_letters_falls_back_to_server() -> None:
    exposed = apply(catalog("!!!"), Candidate(scheme="prefix"))
    assert exposed.original("server_lookup_order") == "lookup_order"


def test_edit_of_an_unknown_tool_is_an_error_naming_it() -> None:
    with pytest.raises(DefinitionError, match="no_such_tool"):
        apply(catalog(), Candidate(edits={"no_such_tool": ToolEdit(description="x")}))


@pytest.mark.parametrize("path", ["phone", "filters.middle", "email.inner"])
def test_unknown_parameter_path_is_an_error_naming_tool_and_path(path: str) -> None:
    with pytest.raises(DefinitionError, match=rf"get_customer has no parameter '{path}'"):
        apply(catalog(), Candidate(edits={"get_customer": ToolEdit(parameters={path: "x"})}))


@pytest.mark.parametrize("bad", ["find customer", "a" * 65, "", "café", "find/customer"])
def test_invalid_mcp_names_are_rejected(bad: str) -> None:
    with pytest.raises(DefinitionError, match="not a valid MCP tool name"):
        apply(catalog(), Candidate(edits={"get_customer": ToolEdit(name=bad)}))


def test_sixty_four_characters_is_still_a_valid_name() -> None:
    name = "a" * 64
    assert apply(catalog(), Candidate(edits={"get_customer": ToolEdit(name=name)})).original(name) == "get_customer"


def test_namespace_can_push_a_name_over_the_limit() -> None:
    candidate = Candidate(edits={"get_customer": ToolEdit(name="a" * 60)}, scheme="prefix", word="support")
    with pytest.raises(DefinitionError, match="not a valid MCP tool name"):
        apply(catalog(), candidate)


def test_two_tools_renamed_to_the_same_name_collide() -> None:
    candidate = Candidate(edits={"track_shipment": ToolEdit(name="lookup_order")})
    with pytest.raises(DefinitionError, match="'lookup_order'"):
        apply(catalog(), candidate)


def test_a_swap_of_names_is_not_a_collision() -> None:
    candidate = Candidate(edits={"lookup_order": ToolEdit(name="track_shipment"),
                                 "track_shipment": ToolEdit(name="lookup_order")})
    exposed = apply(catalog(), candidate)
    assert exposed.routing == {"get_customer": "get_customer", "track_shipment": "lookup_order",
                               "lookup_order": "track_shipment"}


def test_duplicate_names_in_a_catalog_are_an_error() -> None:
    with pytest.raises(DefinitionError, match="more than once: a"):
        Catalog("s", (ToolDef("a"), ToolDef("b"), ToolDef("a")))


def test_candidate_key_ignores_dict_insertion_order() -> None:
    one = Candidate(edits={
        "get_customer": ToolEdit(description="A", parameters={"email": "e", "filters.start": "s"}),
        "lookup_order": ToolEdit(name="find_order"),
    }, scheme="prefix", word="acme")
    two = Candidate(edits={
        "lookup_order": ToolEdit(name="find_order"),
        "get_customer": ToolEdit(parameters={"filters.start": "s", "email": "e"}, description="A"),
    }, scheme="prefix", word="acme")
    assert one.key == two.key
    assert len(one.key) == 16


@pytest.mark.parametrize(
    "other",
    [
        Candidate(edits={"lookup_order": ToolEdit(name="find_orders")}, scheme="prefix", word="acme"),
        Candidate(edits={"lookup_order": ToolEdit(name="find_order")}, scheme="suffix", word="acme"),
        Candidate(edits={"lookup_order": ToolEdit(name="find_order")}, scheme="prefix", word="acme2"),
        Candidate(edits={"lookup_order": ToolEdit(name="find_order")}, scheme="prefix"),
        Candidate(edits={"lookup_order": ToolEdit(description="find_order")}, scheme="prefix", word="acme"),
        Candidate(edits={"track_shipment": ToolEdit(name="find_order")}, scheme="prefix", word="acme"),
    ],
)
def test_candidate_key_differs_for_different_content(other: Candidate) -> None:
    base = Candidate(edits={"lookup_order": ToolEdit(name="find_order")}, scheme="prefix", word="acme")
    assert base.key != other.key


def test_baseline_candidate_exposes_the_catalog_unchanged() -> None:
    cat = catalog()
    baseline = Candidate()
    assert baseline.is_baseline
    assert baseline.to_json() == {}
    exposed = apply(cat, baseline)
    assert exposed.tools == cat.tools
    assert exposed.digest == cat.digest
    assert all(exposed.original(n) == n for n in cat.names)


def test_empty_edits_count_as_baseline_but_a_real_edit_does_not() -> None:
    assert Candidate(edits={"lookup_order": ToolEdit()}).key == Candidate().key
    assert Candidate(edits={"lookup_order": ToolEdit()}).is_baseline
    edited = Candidate(edits={"lookup_order": ToolEdit(description="Get order details")})
    assert not edited.is_baseline
    # the same text as the original still changes the key (a candidate is keyed by its content) ...
    assert edited.key != Candidate().key
    # ... but not what the model sees
    assert apply(catalog(), edited).digest == catalog().digest


def test_exposed_digest_changes_with_any_edit() -> None:
    cat = catalog()
    digests = {
        apply(cat, c).digest
        for c in (
            Candidate(),
            Candidate(scheme="prefix"),
            Candidate(edits={"lookup_order": ToolEdit(description="Find an order.")}),
            Candidate(edits={"get_customer": ToolEdit(parameters={"email": "x"})}),
        )
    }
    assert len(digests) == 4


def test_tooldef_canonical_round_trip() -> None:
    tool = ToolDef(
        "lookup_order",
        "Get order details",
        {"type": "object", "properties": {"order_id": {"type": "string", "description": "e.g. #12345"}}},
        output_schema={"type": "object", "properties": {"total": {"type": "number"}}},
        annotations={"readOnlyHint": True},
        title="Lookup",
    )
    data = tool.canonical()
    assert set(data) == {"name", "description", "input_schema", "output_schema", "annotations", "title"}
    assert ToolDef.from_canonical(data) == tool
    assert ToolDef.from_canonical(data).digest == tool.digest
    bare = ToolDef("ping")
    assert set(bare.canonical()) == {"name", "description", "input_schema"}
    assert ToolDef.from_canonical(bare.canonical()) == bare


def test_canonical_is_a_copy_the_caller_may_edit() -> None:
    tool = ToolDef("t", "d", {"type": "object", "properties": {"a": {"type": "string"}}})
    before = tool.digest
    tool.canonical()["input_schema"]["properties"]["a"]["type"] = "integer"
    assert tool.digest == before


def test_canonical_json_is_sorted_indented_with_newline() -> None:
    expected = '{\n  "a": {\n    "c": "é",\n    "d": 2\n  },\n  "b": 1\n}\n'
    assert canonical_json({"b": 1, "a": {"d": 2, "c": "é"}}) == expected


@pytest.mark.parametrize(
    "written", ["lookup_order", "find_order", "support_desk_find_order", "lookup_order_support_desk"]
)
def test_a_tool_named_by_another_of_its_names_is_named_as_it_is_exposed(written: str) -> None:
    """Edits chosen from different proposals may name a neighbour by a name it no longer has: every mention, in
    descriptions and parameter descriptions, edited or the server's own, is brought to the exposed name."""
    candidate = Candidate(edits={
        "get_customer": ToolEdit(description=f"Customers. Not for orders; use {written} instead. Not to lookup_order.",
                                 parameters={"email": f"An email address ({written} takes order numbers)."}),
        "lookup_order": ToolEdit(name="find_order"),
    }, scheme="prefix")
    tool = by_name(apply(catalog(), candidate).tools)["support_desk_get_customer"]
    assert tool.description == ("Customers. Not for orders; use support_desk_find_order instead. "
                                "Not to support_desk_find_order.")
    assert tool.properties["email"]["description"] == "An email address (support_desk_find_order takes order numbers)."


def test_a_plain_word_counts_as_a_tool_name_only_where_the_text_uses_it_as_one() -> None:
    tools = (ToolDef("pay", "Pay a fine. Not for loans; use loans instead.",
                     {"type": "object", "properties": {"fine": {"type": "string", "description": "see `loans`"}}}),
             ToolDef("loans", "Loans of a member; to pay a fine, call pay. Member loans_2 and pay_x stay."))
    exposed = by_name(apply(Catalog("lib", tools), Candidate(scheme="suffix")).tools)
    assert exposed["pay_lib"].description == "Pay a fine. Not for loans; use loans_lib instead."
    assert exposed["pay_lib"].properties["fine"]["description"] == "see `loans_lib`"
    assert exposed["loans_lib"].description == ("Loans of a member; to pay a fine, call pay_lib. Member loans_2 and "
                                                "pay_x stay.")


def test_use_instead_keeps_names_of_no_tool_and_the_baseline_text() -> None:
    candidate = Candidate(edits={"lookup_order": ToolEdit(description="Orders. Use the web page instead.")})
    assert by_name(apply(catalog(), candidate).tools)["lookup_order"].description == "Orders. Use the web page instead."
    assert apply(catalog(), Candidate()).tools == catalog().tools
