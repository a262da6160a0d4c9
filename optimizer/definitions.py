"""Tool definitions, edits to them, and what a model sees after the edits.

Invariants:
- A `Candidate` is keyed by ORIGINAL tool names; `apply()` never changes what the real server is
  called with: the routing map sends every exposed name back to its original.
- The baseline is the empty candidate (`Candidate()`), whose `apply()` leaves the catalog as it is.
- Content hashes (`ToolDef.digest`, `Candidate.key`) depend only on content, never on order of
  dictionary insertion.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from optimizer.schema_metadata import drop_metadata
from optimizer.text.mentions import renamed

Scheme = Literal["none", "prefix", "suffix"]
SCHEMES: tuple[Scheme, ...] = ("none", "prefix", "suffix")
MCP_NAME = re.compile(r"^[A-Za-z0-9_\-.]{1,64}$")
"""Tool names MCP clients accept everywhere: letters, digits, `_`, `-`, `.`; at most 64 characters."""


class DefinitionError(ValueError):
    """An overlay, candidate or catalog that cannot be applied; the message says where and why."""


def canonical_json(value: Any) -> str:
    """The one JSON rendering used for hashes, dumps and patches: sorted keys, 2-space indent, newline."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def digest(value: Any) -> str:
    """A stable hex digest of any JSON-serialisable value."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ToolDef:
    """One tool as an MCP server lists it (wire field names, camelCase inside the schemas)."""

    name: str
    description: str = ""
    input_schema: Mapping[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    output_schema: Mapping[str, Any] | None = None
    annotations: Mapping[str, Any] | None = None
    title: str | None = None

    def canonical(self) -> dict[str, Any]:
        """The fields a model reads, as written by `optimizer dump` and diffed by patches."""
        out: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "input_schema": copy.deepcopy(dict(self.input_schema)),
        }
        if self.title:
            out["title"] = self.title
        if self.output_schema:
            out["output_schema"] = copy.deepcopy(dict(self.output_schema))
        if self.annotations:
            out["annotations"] = dict(self.annotations)
        return out

    @classmethod
    def from_canonical(cls, data: Mapping[str, Any]) -> ToolDef:
        return cls(
            name=data["name"],
            description=data.get("description") or "",
            input_schema=data.get("input_schema") or {"type": "object", "properties": {}},
            output_schema=data.get("output_schema"),
            annotations=data.get("annotations"),
            title=data.get("title"),
        )

    @property
    def digest(self) -> str:
        return digest(self.canonical())

    @property
    def properties(self) -> dict[str, dict[str, Any]]:
        """Top-level parameters by name (empty when the schema has none)."""
        return dict(self.input_schema.get("properties") or {})

    @property
    def required(self) -> list[str]:
        return list(self.input_schema.get("required") or [])

    def hint(self, key: str) -> Any:
        """An annotation by its wire name (`readOnlyHint`, `destructiveHint`, …), or None."""
        return (self.annotations or {}).get(key)


@dataclass(frozen=True)
class Catalog:
    """The tools of one server, in the order the server listed them."""

    server_name: str
    tools: tuple[ToolDef, ...]

    def __post_init__(self) -> None:
        names = [t.name for t in self.tools]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise DefinitionError(f"the server lists these tool names more than once: {', '.join(dupes)}")

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.tools]

    def get(self, name: str) -> ToolDef:
        for tool in self.tools:
            if tool.name == name:
                return tool
        raise KeyError(name)

    def __contains__(self, name: object) -> bool:
        return any(t.name == name for t in self.tools)

    def hinted(self, key: str) -> list[str]:
        """Names of the tools whose annotation `key` (`destructiveHint`, `readOnlyHint`, …) is true, in order."""
        return [t.name for t in self.tools if t.hint(key) is True]

    @property
    def digest(self) -> str:
        return digest([t.canonical() for t in self.tools])


@dataclass(frozen=True)
class ToolEdit:
    """Changes to one tool; every field optional. `parameters` maps a parameter path
    (`email`, or `filters.start` for a nested property) to its new description; `lean_schema` drops the input
    schema's metadata a model gets nothing from (`optimizer.schema_metadata`)."""

    name: str | None = None
    description: str | None = None
    parameters: Mapping[str, str] = field(default_factory=dict)
    lean_schema: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.name is not None:
            out["name"] = self.name
        if self.description is not None:
            out["description"] = self.description
        if self.parameters:
            out["parameters"] = dict(sorted(self.parameters.items()))
        if self.lean_schema:
            out["lean_schema"] = True
        return out

    @property
    def empty(self) -> bool:
        return self.name is None and self.description is None and not self.parameters and not self.lean_schema


@dataclass(frozen=True)
class Candidate:
    """A full proposal for the whole catalog. Edits are keyed by ORIGINAL tool name."""

    edits: Mapping[str, ToolEdit] = field(default_factory=dict)
    scheme: Scheme = "none"
    word: str | None = None
    """The namespace word; None means the server's name."""

    def to_json(self) -> dict[str, Any]:
        """The overlay file format (DESIGN, Files)."""
        out: dict[str, Any] = {}
        if self.scheme != "none":
            out["namespace"] = {"scheme": self.scheme, **({"word": self.word} if self.word else {})}
        tools = {name: edit.to_json() for name, edit in sorted(self.edits.items()) if not edit.empty}
        if tools:
            out["tools"] = tools
        return out

    @property
    def key(self) -> str:
        """Content hash; the baseline's key is the hash of `{}`."""
        return digest(self.to_json())[:16]

    @property
    def is_baseline(self) -> bool:
        return not self.to_json()


@dataclass(frozen=True)
class Exposed:
    """What a model sees under a candidate, and how to route its calls back."""

    tools: tuple[ToolDef, ...]
    routing: Mapping[str, str]
    """exposed name -> original name"""

    def original(self, exposed_name: str) -> str | None:
        return self.routing.get(exposed_name)

    @property
    def digest(self) -> str:
        return digest([t.canonical() for t in self.tools])


def namespaced(name: str, scheme: Scheme, word: str) -> str:
    if scheme == "prefix":
        return f"{word}_{name}"
    if scheme == "suffix":
        return f"{name}_{word}"
    return name


def namespace_word(catalog: Catalog, candidate: Candidate) -> str:
    raw = candidate.word or catalog.server_name or "server"
    word = re.sub(r"[^A-Za-z0-9]+", "_", raw).strip("_").lower()
    return word or "server"


def apply(catalog: Catalog, candidate: Candidate) -> Exposed:
    """Apply a candidate: renames, descriptions, parameter descriptions, lean schemas, then the namespace scheme.
    Every text (description or parameter description, edited or the server's own) that mentions a tool by another
    of its names (original or new, with or without a namespace; see `mentions`) is brought to the name the tool is
    exposed under.

    Raises DefinitionError for an edit of a tool the catalog lacks, an unknown parameter, a name MCP
    does not allow, or two tools ending up with the same exposed name.
    """
    unknown = sorted(set(candidate.edits) - set(catalog.names))
    if unknown:
        raise DefinitionError(f"edits name tools the server does not have: {', '.join(unknown)}")
    word = namespace_word(catalog, candidate)
    exposed: list[ToolDef] = []
    routing: dict[str, str] = {}
    for tool in catalog.tools:
        edit = candidate.edits.get(tool.name, ToolEdit())
        name = namespaced(tool.name if edit.name is None else edit.name, candidate.scheme, word)
        if not MCP_NAME.match(name):
            raise DefinitionError(f"{name!r} (for {tool.name}) is not a valid MCP tool name")
        if name in routing:
            raise DefinitionError(f"two tools would both be exposed as {name!r}")
        routing[name] = tool.name
    aliases = {alias: name for alias, name in _aliases(catalog, candidate, word, routing).items() if alias != name}
    for name, original in routing.items():
        tool, edit = catalog.get(original), candidate.edits.get(original, ToolEdit())
        schema = _with_parameter_descriptions(tool, edit.parameters, aliases)
        if edit.lean_schema:
            drop_metadata(tool.name, schema)  # `schema` is this tool's own copy
        description = renamed(tool.description if edit.description is None else edit.description, aliases)
        exposed.append(
            ToolDef(
                name=name,
                description=description,
                input_schema=schema,
                output_schema=tool.output_schema,
                annotations=tool.annotations,
                title=tool.title,
            )
        )
    return Exposed(tools=tuple(exposed), routing=routing)


def _aliases(catalog: Catalog, candidate: Candidate, word: str, routing: Mapping[str, str]) -> dict[str, str]:
    """Other names of each tool (original, edited, under every scheme) -> the name it is exposed under."""
    final = {original: name for name, original in routing.items()}
    out: dict[str, str] = {}
    for tool in catalog.tools:
        edit = candidate.edits.get(tool.name, ToolEdit())
        for base in {tool.name, edit.name or tool.name}:
            for scheme in SCHEMES:
                alias = namespaced(base, scheme, word)
                if alias not in routing or routing[alias] == tool.name:
                    out.setdefault(alias, final[tool.name])
    return out


def _with_parameter_descriptions(tool: ToolDef, parameters: Mapping[str, str],
                                 aliases: Mapping[str, str]) -> dict[str, Any]:
    schema = copy.deepcopy(dict(tool.input_schema))
    for path, text in parameters.items():
        node = _property_node(schema, path.split("."))
        if node is None:
            raise DefinitionError(f"{tool.name} has no parameter {path!r}")
        if text:
            node["description"] = text
        else:  # "" removes the description (a shrink's cut)
            node.pop("description", None)
    if aliases:
        for _, node in parameter_paths(schema):
            if isinstance(node.get("description"), str):
                node["description"] = renamed(node["description"], aliases)
    return schema


def _property_node(schema: dict[str, Any], parts: list[str]) -> dict[str, Any] | None:
    node: dict[str, Any] | None = schema
    for part in parts:
        props = (node or {}).get("properties")
        if not isinstance(props, dict) or part not in props:
            return None
        node = props[part]
    return node


def parameter_paths(schema: Mapping[str, Any], prefix: str = "") -> Iterable[tuple[str, dict[str, Any]]]:
    """Every property in a schema with its dotted path, depth first."""
    for name, prop in (schema.get("properties") or {}).items():
        if not isinstance(prop, dict):
            continue
        path = f"{prefix}{name}"
        yield path, prop
        if isinstance(prop.get("properties"), dict):
            yield from parameter_paths(prop, prefix=f"{path}.")
