"""Lean schemas: the metadata a model gets nothing from goes, everything that constrains or explains a value stays;
overlays carry the choice per tool, `apply` honours it, and a source patch says it cannot."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from optimizer.cli.review import render_change
from optimizer.definitions import Candidate, Catalog, DefinitionError, ToolDef, ToolEdit, apply
from optimizer.files.patch import load_overlay, overlay_from_json, save_overlay
from optimizer.optimize.tokens import definition_tokens
from optimizer.review import ToolChange
from optimizer.schema_metadata import SAFE_INTEGER, lean_schema
from optimizer.source import source_patch
from optimizer.source.patch import LEAN_SCHEMA_NOTE

PYDANTIC = {  # what FastMCP lists for `def search_orders(customer_id: str, max_results: int = 10, status: ...)`
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "title": "search_ordersArguments",
    "properties": {
        "customer_id": {"type": "string", "title": "Customer Id"},
        "max_results": {"type": "integer", "title": "Max Results", "default": 10, "minimum": 1, "maximum": 100},
        "status": {"anyOf": [{"$ref": "#/$defs/Status"}, {"type": "null"}], "default": None, "title": "Status"},
        "since": {"type": "string", "format": "date", "title": "Placed on or after (YYYY-MM-DD)"},
        "title": {"type": "string", "title": "Title", "description": "The order's title, as the customer wrote it."},
    },
    "required": ["customer_id"],
    "additionalProperties": False,
    "$defs": {"Status": {"type": "string", "enum": ["open", "shipped"], "title": "Status"}},
}
ZOD = {  # what zod-to-json-schema lists for z.object({ depth: z.number().int().optional() })
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {"depth": {"type": "integer", "minimum": -SAFE_INTEGER, "maximum": SAFE_INTEGER},
                   "items": {"type": "array", "items": {"type": "integer", "maximum": SAFE_INTEGER, "minimum": 0}}},
}


def test_generated_titles_the_dialect_and_safe_integer_bounds_go() -> None:
    lean = lean_schema("search_orders", PYDANTIC)
    assert "$schema" not in lean.schema and "title" not in lean.schema
    props = lean.schema["properties"]
    assert all("title" not in props[name] for name in ("customer_id", "max_results", "status"))
    assert "title" not in lean.schema["$defs"]["Status"]
    assert lean.dropped == ("$schema at root", "title at root", "title at properties.customer_id",
                            "title at properties.max_results", "title at properties.status",
                            "title at properties.title", "title at $defs.Status")
    zod = lean_schema("walk", ZOD)
    assert zod.schema["properties"]["depth"] == {"type": "integer"}
    assert zod.schema["properties"]["items"]["items"] == {"type": "integer", "minimum": 0}


def test_everything_that_constrains_or_explains_a_value_stays() -> None:
    props = lean_schema("search_orders", PYDANTIC).schema["properties"]
    assert props["since"]["title"] == "Placed on or after (YYYY-MM-DD)"  # says more than its name
    assert props["max_results"] == {"type": "integer", "default": 10, "minimum": 1, "maximum": 100}
    assert props["status"]["anyOf"] == [{"$ref": "#/$defs/Status"}, {"type": "null"}]
    assert props["title"] == {"type": "string", "description": "The order's title, as the customer wrote it."}
    lean = lean_schema("search_orders", PYDANTIC).schema
    assert lean["required"] == ["customer_id"] and lean["additionalProperties"] is False
    assert lean["$defs"]["Status"]["enum"] == ["open", "shipped"]


def test_the_given_schema_is_not_changed_and_a_lean_schema_is_a_fixed_point() -> None:
    before = copy.deepcopy(PYDANTIC)
    lean = lean_schema("search_orders", PYDANTIC)
    assert before == PYDANTIC
    again = lean_schema("search_orders", lean.schema)
    assert again.schema == lean.schema and again.dropped == ()


CATALOG = Catalog("shop", (ToolDef("search_orders", "Find a customer's orders.", PYDANTIC),
                           ToolDef("walk", "Walk a tree.", ZOD)))


def test_apply_leans_only_the_tools_whose_edit_asks_and_after_their_new_descriptions() -> None:
    edit = ToolEdit(parameters={"customer_id": "The customer's id (C-1004)."}, lean_schema=True)
    exposed = apply(CATALOG, Candidate(edits={"search_orders": edit}))
    search, walk = exposed.tools
    assert search.input_schema["properties"]["customer_id"] == {"type": "string",
                                                               "description": "The customer's id (C-1004)."}
    assert "$schema" not in search.input_schema and walk.input_schema == ZOD
    assert definition_tokens(CATALOG, Candidate(edits={"search_orders": ToolEdit(lean_schema=True)})) < \
        definition_tokens(CATALOG, Candidate())


def test_overlays_carry_lean_schema_per_tool_and_refuse_what_is_not_a_boolean(tmp_path: Path) -> None:
    candidate = Candidate(edits={"walk": ToolEdit(lean_schema=True)})
    assert candidate.to_json() == {"tools": {"walk": {"lean_schema": True}}}
    assert not candidate.is_baseline and not candidate.edits["walk"].empty
    path = tmp_path / "overlay.json"
    save_overlay(path, candidate)
    assert load_overlay(path, CATALOG) == candidate
    with pytest.raises(DefinitionError, match=r"tools\.walk\.lean_schema must be true or false"):
        overlay_from_json({"tools": {"walk": {"lean_schema": "yes"}}})
    path.write_text(json.dumps({"tools": {"walk": {"lean": True}}}), encoding="utf-8")
    with pytest.raises(DefinitionError, match="unknown key"):
        load_overlay(path, CATALOG)


def test_a_source_patch_says_it_cannot_carry_a_lean_schema(tmp_path: Path) -> None:
    (tmp_path / "server.py").write_text('@server.tool()\ndef walk(depth: int) -> str:\n    """Walk a tree."""\n',
                                        encoding="utf-8")
    patch = source_patch(tmp_path, CATALOG, Candidate(edits={"walk": ToolEdit(lean_schema=True)}))
    assert patch.text == "" and patch.changed == [] and patch.unlocated == [f"walk {LEAN_SCHEMA_NOTE}"]
    described = Candidate(edits={"walk": ToolEdit(description="Walk a tree, depth first.", lean_schema=True)})
    patch = source_patch(tmp_path, CATALOG, described)
    assert patch.changed == ["walk"] and patch.unlocated == [f"walk {LEAN_SCHEMA_NOTE}"]


def test_review_shows_what_a_lean_schema_drops() -> None:
    before = CATALOG.get("search_orders")
    edit = ToolEdit(lean_schema=True)
    after = apply(CATALOG, Candidate(edits={"search_orders": edit})).tools[0]
    change = ToolChange(original="search_orders", edit=edit, before=before, after=after, lint_before=0,
                        lint_after=0, fixed_rules=(), new_rules=(), evals=())
    console = Console(width=400, no_color=True, file=io.StringIO())
    console.print(render_change(change, 1, 1, markers=True))
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "as the server lists it" in text and "lean, without $schema at root, title at root" in text
