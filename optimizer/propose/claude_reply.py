"""Reading the Claude proposer's replies: each `submit_candidates` call checked for structure (the tool was called,
the input follows the schema, tools and parameters exist, names are valid MCP names under the namespace scheme and
do not clash, the candidate changes something), with one line per problem for the repair request."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from optimizer.definitions import (
    MCP_NAME,
    SCHEMES,
    Candidate,
    Catalog,
    DefinitionError,
    Scheme,
    ToolEdit,
    apply,
    parameter_paths,
)
from optimizer.models.base import Reply

TOOL_NAME = "submit_candidates"
MAX_DESCRIPTION = 1024
"""Hard cap on a tool description, in characters (the prompt asks for 200-400)."""


@dataclass
class Reading:
    """One reply, read: valid (candidate, rationale) pairs and what was wrong, per tool call."""

    valid: list[tuple[Candidate, str]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """one line per problem, for the repair message"""
    by_call: dict[str, list[str]] = field(default_factory=dict)
    """tool_use id -> its problems"""
    rejected: list[dict[str, Any]] = field(default_factory=list)
    entries: int = 0
    invalid: int = 0
    """invalid entries, or 1 for a reply that could not be read at all"""


class Kept:
    """The candidates kept so far: distinct keys, never `current`, at most k."""

    def __init__(self, current: Candidate, k: int) -> None:
        self.keys, self.k = {current.key}, k
        self.candidates: list[Candidate] = []
        self.rationales: dict[str, str] = {}

    def add(self, pairs: Sequence[tuple[Candidate, str]]) -> int:
        """Keep what is new, up to k; return how many were duplicates or over k."""
        skipped = 0
        for candidate, rationale in pairs:
            if candidate.key in self.keys or len(self.candidates) >= self.k:
                skipped += 1
                continue
            self.keys.add(candidate.key)
            self.candidates.append(candidate)
            self.rationales[candidate.key] = rationale
        return skipped


def read_reply(reply: Reply, catalog: Catalog, current: Candidate, *, attempt: int) -> Reading:
    out = Reading()
    cut = " The reply was cut off at max_tokens: write shorter candidates." if reply.stop_reason == "max_tokens" else ""
    calls = reply.tool_calls
    if not calls:
        what = "was refused" if reply.stop_reason == "refusal" else "did not call submit_candidates"
        _unusable(out, None, f"The reply {what}.{cut}", attempt)
        return out
    for call in calls:
        if call.name != TOOL_NAME:
            _unusable(out, call.id, f"There is no tool {call.name!r}; the only tool is {TOOL_NAME}.", attempt)
            continue
        entries = call.arguments.get("candidates")
        if not isinstance(entries, list) or not entries:
            problem = ("`candidates` is empty" if isinstance(entries, list)
                       else "`candidates` is missing or not a list of candidate objects")
            _unusable(out, call.id, f"{problem}.{cut}", attempt)
            continue
        out.by_call[call.id] = []
        for index, entry in enumerate(entries):
            out.entries += 1
            errors, candidate, rationale = _entry(entry, catalog, current)
            if candidate is not None and not errors:
                out.valid.append((candidate, rationale))
                continue
            out.invalid += 1
            line = f"candidates[{index}]" + (f" ({shorten(rationale)})" if rationale else "") + ": " + "; ".join(errors)
            out.problems.append(line)
            out.by_call[call.id].append(line)
            out.rejected.append({"reason": "; ".join(errors), "rationale": rationale, "attempt": attempt})
        if cut and out.by_call[call.id]:
            out.by_call[call.id].append(cut.strip())
    return out


def _unusable(out: Reading, call_id: str | None, problem: str, attempt: int) -> None:
    out.invalid += 1
    out.problems.append(problem)
    if call_id is not None:
        out.by_call[call_id] = [problem]
    out.rejected.append({"reason": problem, "rationale": "", "attempt": attempt})


def _entry(entry: Any, catalog: Catalog, current: Candidate) -> tuple[list[str], Candidate | None, str]:
    """Errors, the candidate (None when it cannot be built) and the rationale of one submitted entry."""
    if not isinstance(entry, dict):
        return ["it is not an object with rationale, namespace and tools"], None, ""
    errors: list[str] = []
    raw = entry.get("rationale")
    rationale = " ".join(raw.split()) if isinstance(raw, str) else ""
    if not rationale:
        errors.append("`rationale` must be a non-empty string")
    errors += [f"unknown field {key!r}" for key in sorted(set(entry) - {"rationale", "namespace", "tools"})]
    namespace = entry.get("namespace")
    given = namespace.get("scheme") if isinstance(namespace, dict) else None
    scheme = _scheme(given)
    if scheme is None:
        errors.append(f"`namespace.scheme` must be one of {', '.join(SCHEMES)} (got {given!r})")
    elif isinstance(namespace, dict) and set(namespace) - {"scheme"}:
        errors.append("`namespace` takes only `scheme`")
    tools = entry.get("tools")
    if not isinstance(tools, list):
        errors.append("`tools` must be a list (empty to change only the namespace scheme)")
        tools = []
    edits = dict(current.edits)
    seen: set[str] = set()
    for number, item in enumerate(tools):
        problems, name, edit = _tool_edit(item, catalog, edits)
        where = f"tools[{number}]" + (f" ({name})" if name else "")
        if name in seen:
            problems.append(f"{name} is listed twice")
        seen.add(name or "")
        errors += [f"{where}: {p}" for p in problems]
        if name and edit is not None and not problems:
            edits[name] = edit
    if errors or scheme is None:  # scheme is None only with its error listed
        return errors, None, rationale
    candidate = Candidate(edits={n: e for n, e in edits.items() if not e.empty}, scheme=scheme, word=current.word)
    try:
        apply(catalog, candidate)
    except DefinitionError as exc:
        return [str(exc)], None, rationale
    if candidate.key == current.key:
        return ["it changes nothing: it equals the current definitions"], None, rationale
    return [], candidate, rationale


def _scheme(value: object) -> Scheme | None:
    """`value` as one of SCHEMES, None when it is not one."""
    return next((scheme for scheme in SCHEMES if scheme == value), None)


def _tool_edit(
    item: Any, catalog: Catalog, edits: Mapping[str, ToolEdit]
) -> tuple[list[str], str | None, ToolEdit | None]:
    """Problems, the original tool name and the merged edit (current's edit overlaid) of one tools[] item."""
    if not isinstance(item, dict):
        return ["it is not an object with tool, name, description and parameters"], None, None
    tool = item.get("tool")
    if not isinstance(tool, str) or tool not in catalog:
        names = ", ".join(catalog.names[:40]) + (", …" if len(catalog.names) > 40 else "")
        return [f"{tool!r} is not a tool of this server; `tool` must be an original name, one of: {names}"], None, None
    original = catalog.get(tool)
    problems = [f"unknown field {key!r}" for key in sorted(set(item) - {"tool", "name", "description", "parameters"})]
    old = edits.get(tool) or ToolEdit()
    name = item.get("name", old.name)
    if "name" in item and not (isinstance(name, str) and MCP_NAME.match(name)):
        problems.append(f"name {name!r} is not a valid MCP tool name (letters, digits, _, - and . only, "
                        "1 to 64 characters)")
    description = item.get("description", old.description)
    if "description" in item and not (isinstance(description, str) and description.strip()):
        problems.append("description must be a non-empty string")
    elif isinstance(description, str) and len(description) > MAX_DESCRIPTION:
        problems.append(f"description has {len(description)} characters; the maximum is {MAX_DESCRIPTION}")
    paths = {path: prop for path, prop in parameter_paths(original.input_schema)}
    parameters = dict(old.parameters)
    given = item.get("parameters", {})
    if not isinstance(given, dict):
        problems.append("parameters must be an object mapping parameter path -> description")
        given = {}
    for path, text in given.items():
        if path not in paths:
            problems.append(f"{tool} has no parameter {path!r}; its parameters: {', '.join(paths) or '(none)'}")
        elif not (isinstance(text, str) and text.strip()):
            problems.append(f"parameters.{path} must be a non-empty string")
        elif text == paths[path].get("description"):
            parameters.pop(path, None)  # back to the server's own text
        else:
            parameters[path] = text
    if problems:
        return problems, tool, None
    return [], tool, ToolEdit(name=None if name == tool else name,
                              description=None if description == original.description else description,
                              parameters=parameters, lean_schema=old.lean_schema)


# --- the repair turn -----------------------------------------------------------------------------------


def shorten(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
