"""Schema metadata a model reading a tool definition gets nothing from, and the schema without it.

Schema generators write keywords for validators and form builders: the dialect (`$schema`), a `title` made from the
name of what it titles (pydantic's "Max Results" on `max_results`, FastMCP's "search_ordersArguments" on the
arguments of `search_orders`), and JavaScript's safe-integer range on every integer (zod's ±9007199254740991). A
lean schema drops exactly those, anywhere in the schema, and keeps everything that constrains or explains a value:
types, `required`, `enum`, `default`, `additionalProperties`, formats, patterns, other bounds, descriptions, and
every title that says more than its name. The server keeps validating with its own schema; only what a model reads
changes.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from optimizer.text.tokens import terms

SAFE_INTEGER = 2**53 - 1
"""JavaScript's Number.MAX_SAFE_INTEGER: a bound at ±this says only "a number"."""
GENERATED_TITLE_WORDS = frozenset(terms("arguments args input params parameters request schema model"))
"""Words schema generators add to a model's name when they make its title ("…Arguments", "…Input")."""
_NAMED = ("properties", "$defs", "definitions")
_NESTED = ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames")
_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")


@dataclass(frozen=True)
class LeanSchema:
    schema: dict[str, Any]
    dropped: tuple[str, ...]
    """What was dropped, as `keyword at path` ("$schema at root", "title at properties.limit"), in schema order."""


def lean_schema(tool_name: str, schema: dict[str, Any]) -> LeanSchema:
    """`schema` (not modified) without the metadata the module docstring names; the root's title is read against
    `tool_name`, a property's against its name, a `$defs` entry's against its key."""
    out = copy.deepcopy(schema)
    return LeanSchema(out, drop_metadata(tool_name, out))


def drop_metadata(tool_name: str, schema: dict[str, Any]) -> tuple[str, ...]:
    """`lean_schema` in place, on a schema the caller owns: what it dropped."""
    return tuple(f"{keyword} at {path}" for path, keyword in _strip(schema, tool_name, "root"))


def _strip(node: Any, name: str, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(node, list):
        for index, item in enumerate(node):
            yield from _strip(item, name, f"{path}[{index}]")
        return
    if not isinstance(node, dict):
        return
    if "$schema" in node:
        del node["$schema"]
        yield path, "$schema"
    if isinstance(node.get("title"), str) and set(terms(node["title"])) <= set(terms(name)) | GENERATED_TITLE_WORDS:
        del node["title"]
        yield path, "title"
    for keyword, sign in (("minimum", -1), ("maximum", 1)):
        if node.get(keyword) == sign * SAFE_INTEGER and not isinstance(node.get(keyword), bool):
            del node[keyword]
            yield path, keyword
    for keyword in _NAMED:
        children = node.get(keyword)
        if isinstance(children, dict):
            for key, child in children.items():
                yield from _strip(child, key, f"{_child(path, keyword)}.{key}")
    for keyword in (*_NESTED, *_LISTS):
        if keyword in node:
            yield from _strip(node[keyword], name, _child(path, keyword))


def _child(path: str, keyword: str) -> str:
    return keyword if path == "root" else f"{path}.{keyword}"
