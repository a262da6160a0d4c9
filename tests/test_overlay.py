"""Overlay files (hand-written or saved) and canonical definition dumps (patch.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from optimizer.definitions import Candidate, Catalog, DefinitionError, ToolDef, ToolEdit, apply
from optimizer.files.patch import dump_definitions, load_definitions, load_overlay, save_overlay

CATALOG = Catalog(
    "support",
    (
        ToolDef("get_customer", "Get customer info",
                {"type": "object", "properties": {"email": {"type": "string"},
                                                  "filters": {"type": "object",
                                                              "properties": {"since": {"type": "string"}}}}}),
        ToolDef("lookup_order", "Get order details",
                {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
                annotations={"readOnlyHint": True}),
    ),
)

DESIGN_EXAMPLE = {
    "namespace": {"scheme": "prefix", "word": "support"},
    "tools": {"get_customer": {"name": "find_customer",
                               "description": "Look up a customer account by email, phone or id.",
                               "parameters": {"email": "The customer's email address, e.g. a@b.com."}}},
}


def write(path: Path, value: object) -> Path:
    path.write_text(value if isinstance(value, str) else json.dumps(value, indent=2), encoding="utf-8")
    return path


def test_the_design_example_loads_and_applies(tmp_path: Path) -> None:
    candidate = load_overlay(write(tmp_path / "overlay.json", DESIGN_EXAMPLE), CATALOG)
    assert candidate.scheme == "prefix"
    assert candidate.word == "support"
    assert candidate.edits["get_customer"] == ToolEdit(
        name="find_customer", description="Look up a customer account by email, phone or id.",
        parameters={"email": "The customer's email address, e.g. a@b.com."})
    exposed = apply(CATALOG, candidate)
    assert exposed.original("support_find_customer") == "get_customer"
    assert exposed.original("support_lookup_order") == "lookup_order"


@pytest.mark.parametrize(
    ("content", "scheme", "edits"),
    [
        ({}, "none", {}),
        ({"tools": {}}, "none", {}),
        ({"namespace": {"scheme": "suffix"}}, "suffix", {}),
        ({"tools": {"lookup_order": {}}}, "none", {"lookup_order": ToolEdit()}),
        ({"tools": {"get_customer": {"parameters": {"filters.since": "ISO date"}}}}, "none",
         {"get_customer": ToolEdit(parameters={"filters.since": "ISO date"})}),
    ],
)
def test_every_field_is_optional(tmp_path: Path, content: dict, scheme: str, edits: dict) -> None:
    candidate = load_overlay(write(tmp_path / "o.json", content), CATALOG)
    assert candidate.scheme == scheme
    assert candidate.word is None
    assert dict(candidate.edits) == edits


def test_json_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path / "broken.json", '{\n  "tools": {\n    "get_customer": {"name": "x",}\n  }\n}\n')
    with pytest.raises(DefinitionError) as info:
        load_overlay(path)
    assert str(info.value).startswith(f"{path}:3:")
    assert "not valid JSON" in str(info.value)


def test_missing_file_names_it(tmp_path: Path) -> None:
    path = tmp_path / "absent.json"
    with pytest.raises(DefinitionError, match="overlay file not found") as info:
        load_overlay(path)
    assert str(info.value).startswith(str(path))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ({"tool": {}}, "unknown top-level key(s) tool"),
        ({"namespace": {"scheme": "prefix"}, "extra": 1}, "unknown top-level key(s) extra"),
        ({"tools": {"get_customer": {"desc": "x"}}}, "tools.get_customer: unknown key(s) desc"),
        ({"namespace": {"scheme": "infix"}}, "namespace scheme 'infix' is not one of none, prefix, suffix"),
        ({"namespace": "prefix"}, "'namespace' must be an object"),
        ({"namespace": {"scheme": "prefix", "word": " "}}, "namespace word must be a non-empty string"),
        ({"tools": {"get_customer": {"description": 42}}}, "tools.get_customer.description must be a string"),
        ({"tools": {"get_customer": {"name": ["a"]}}}, "tools.get_customer.name must be a string"),
        ({"tools": {"get_customer": {"parameters": {"email": 1}}}}, "tools.get_customer.parameters maps"),
        ({"tools": {"get_customer": "find it"}}, "tools.get_customer must be an object"),
        ({"tools": ["get_customer"]}, "'tools' must be an object"),
        ([], "an overlay is a JSON object"),
    ],
)
def test_schema_errors_name_the_file_and_the_problem(tmp_path: Path, content: object, message: str) -> None:
    path = write(tmp_path / "bad.json", content)
    with pytest.raises(DefinitionError) as info:
        load_overlay(path)
    text = str(info.value)
    assert text.startswith(f"{path}: ")
    assert message in text


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ({"tools": {"get_custmer": {"description": "x"}}}, "get_custmer"),
        ({"tools": {"get_customer": {"parameters": {"phone": "x"}}}}, "get_customer has no parameter 'phone'"),
        ({"tools": {"get_customer": {"parameters": {"filters.until": "x"}}}}, "'filters.until'"),
        ({"tools": {"get_customer": {"name": "find customer"}}}, "not a valid MCP tool name"),
        ({"tools": {"get_customer": {"name": "lookup_order"}}}, "both be exposed as 'lookup_order'"),
    ],
)
def test_catalog_errors_only_with_a_catalog(tmp_path: Path, content: dict, message: str) -> None:
    path = write(tmp_path / "o.json", content)
    load_overlay(path)  # without a catalog the file is well-formed
    with pytest.raises(DefinitionError) as info:
        load_overlay(path, CATALOG)
    assert str(info.value).startswith(f"{path}: ")
    assert message in str(info.value)


def test_save_then_load_round_trip(tmp_path: Path) -> None:
    candidate = Candidate(
        edits={"lookup_order": ToolEdit(description="Find one order by its #NNNNN number."),
               "get_customer": ToolEdit(name="find_customer",
                                        parameters={"filters.since": "YYYY-MM-DD", "email": "e"})},
        scheme="suffix",
        word="acme",
    )
    path = tmp_path / "nested" / "overlay.json"
    save_overlay(path, candidate)
    text = path.read_text(encoding="utf-8")
    assert text.endswith("}\n")
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    loaded = load_overlay(path, CATALOG)
    assert loaded == candidate
    assert loaded.key == candidate.key
    assert [p.name for p in path.parent.iterdir()] == ["overlay.json"]


def test_baseline_saves_as_an_empty_object(tmp_path: Path) -> None:
    save_overlay(tmp_path / "o.json", Candidate())
    assert (tmp_path / "o.json").read_text(encoding="utf-8") == "{}\n"
    assert load_overlay(tmp_path / "o.json").is_baseline


def test_dump_definitions_writes_canonical_files_under_exposed_names(tmp_path: Path) -> None:
    candidate = Candidate(edits={"get_customer": ToolEdit(name="find_customer", description="Find a customer.")})
    out = tmp_path / "defs"
    written = dump_definitions(CATALOG, candidate, out)
    assert sorted(p.name for p in written) == ["find_customer.json", "lookup_order.json"]
    assert sorted(p.name for p in out.iterdir()) == ["find_customer.json", "lookup_order.json"]
    text = (out / "lookup_order.json").read_text(encoding="utf-8")
    assert text == (
        "{\n"
        '  "annotations": {\n    "readOnlyHint": true\n  },\n'
        '  "description": "Get order details",\n'
        '  "input_schema": {\n'
        '    "properties": {\n      "order_id": {\n        "type": "string"\n      }\n    },\n'
        '    "required": [\n      "order_id"\n    ],\n'
        '    "type": "object"\n'
        "  },\n"
        '  "name": "lookup_order"\n'
        "}\n"
    )
    renamed = json.loads((out / "find_customer.json").read_text(encoding="utf-8"))
    assert renamed["name"] == "find_customer"
    assert renamed["description"] == "Find a customer."


def test_load_definitions_reads_a_dump_back(tmp_path: Path) -> None:
    candidate = Candidate(edits={"lookup_order": ToolEdit(parameters={"order_id": "Like #12345."})}, scheme="prefix")
    dump_definitions(CATALOG, candidate, tmp_path)
    loaded = load_definitions(tmp_path)
    exposed = apply(CATALOG, candidate)
    assert loaded == sorted(exposed.tools, key=lambda t: t.name)
    assert {t.name for t in loaded} == {"support_get_customer", "support_lookup_order"}


def test_load_definitions_errors_name_the_bad_file(tmp_path: Path) -> None:
    with pytest.raises(DefinitionError, match="not a directory"):
        load_definitions(tmp_path / "missing")
    write(tmp_path / "ok.json", ToolDef("ok").canonical())
    bad = write(tmp_path / "zz.json", {"description": "no name"})
    with pytest.raises(DefinitionError) as info:
        load_definitions(tmp_path)
    assert str(info.value).startswith(f"{bad}: not a canonical tool definition")
