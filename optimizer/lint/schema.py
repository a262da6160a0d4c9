"""Walking a tool's input schema: its properties at every depth, and what a property's schema declares.

Contracts:
- Only local `$ref`s (`#/...`) are followed, each at most once per branch, so recursive schemas end.
- Nothing here raises on a malformed schema: what is not a mapping or list where one is expected is skipped.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Param:
    """One property of an input schema: dotted path (`[]` marks array items), its own schema with local
    $refs resolved, and its depth (1 for a top-level parameter)."""

    path: str
    name: str
    node: Mapping[str, Any]
    depth: int

    @property
    def description(self) -> str:
        text = self.node.get("description")
        return text.strip() if isinstance(text, str) else ""


def _resolve(node: Mapping[str, Any], root: Mapping[str, Any], seen: frozenset[str]) -> tuple[Mapping[str, Any],
                                                                                            frozenset[str]]:
    for _ in range(16):
        ref = node.get("$ref")
        if not isinstance(ref, str) or not ref.startswith("#/") or ref in seen:
            return node, seen
        target: Any = root
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            target = target.get(part) if isinstance(target, Mapping) else None
        if not isinstance(target, Mapping):
            return node, seen
        seen = seen | {ref}
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return node, seen


def _variants(node: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    out = [node]
    for key in ("anyOf", "oneOf", "allOf"):
        options = node.get(key)
        if isinstance(options, list):
            out.extend(o for o in options if isinstance(o, Mapping))
    return out


def iter_params(schema: Mapping[str, Any], root: Mapping[str, Any] | None = None, prefix: str = "", depth: int = 1,
                seen: frozenset[str] = frozenset()) -> Iterator[Param]:
    """Every property of an object schema, depth first, through nested objects, array items (`name[].child`),
    anyOf/oneOf/allOf and local $refs (each $ref is followed once per branch, so recursive schemas end)."""
    root = schema if root is None else root
    for obj, suffix, refs in object_schemas(schema, root, seen):
        for name, raw in obj["properties"].items():
            if not isinstance(raw, Mapping):
                continue
            node, node_refs = _resolve(raw, root, refs)
            path = f"{prefix}{suffix}.{name}" if prefix else f"{suffix}{name}"
            yield Param(path, str(name), node, depth)
            yield from iter_params(node, root, path, depth + 1, node_refs)


def object_schemas(node: Mapping[str, Any], root: Mapping[str, Any],
                   seen: frozenset[str]) -> list[tuple[Mapping[str, Any], str, frozenset[str]]]:
    """The object schemas that hold `node`'s properties: itself, its anyOf/oneOf/allOf variants and its array
    items (path suffix `[]`), each with the $refs followed to reach it."""
    out: list[tuple[Mapping[str, Any], str, frozenset[str]]] = []
    for variant in _variants(node):
        variant, refs = _resolve(variant, root, seen)
        if isinstance(variant.get("properties"), Mapping) and not any(o is variant for o, _, _ in out):
            out.append((variant, "", refs))
        items = variant.get("items")
        if isinstance(items, Mapping) and items is not node:
            out.extend((obj, "[]" + suffix, r) for obj, suffix, r in object_schemas(items, root, refs)
                       if not any(o is obj for o, _, _ in out))
    return out


def value_types(node: Mapping[str, Any]) -> set[str]:
    """The JSON types the schema allows, over its anyOf/oneOf/allOf variants, "null" left out."""
    out: set[str] = set()
    for variant in _variants(node):
        kind = variant.get("type")
        if isinstance(kind, str):
            out.add(kind)
        elif isinstance(kind, list):
            out.update(k for k in kind if isinstance(k, str))
    return out - {"null"}


def is_closed(node: Mapping[str, Any]) -> bool:
    """The schema itself lists the allowed values (enum or const, on the value or its array items)."""
    for variant in _variants(node):
        if any(k in variant for k in ("enum", "const")):
            return True
        items = variant.get("items")
        if isinstance(items, Mapping) and any(k in items for k in ("enum", "const")):
            return True
    return False


def has_format(node: Mapping[str, Any]) -> bool:
    """The schema shows the format itself: enum/const, format, pattern, examples, or a non-empty string default."""
    if is_closed(node) or any(k in v for v in _variants(node) for k in ("format", "pattern", "examples", "example")):
        return True
    default = node.get("default")
    return isinstance(default, str) and bool(default.strip())

