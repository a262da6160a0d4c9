"""Rules on a tool's name: name-invalid, name-style and name-length.

Contracts:
- Checks read the tool's name (and the server's name, to recognise a namespace prefix) only.
- Duplicate names are found by the server-level check in `rules_catalog`, which reports them as name-invalid too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from optimizer.definitions import MCP_NAME, ToolDef
from optimizer.lint.findings import Finding, Rule, Severity, finding, rule
from optimizer.lint.vocabulary import KNOWN_VERBS, name_style, name_words
from optimizer.text.tokens import words

LONG_NAME = 40

DECLARED: dict[str, Rule] = {r.id: r for r in (
    rule("name-invalid", "names", "error", "Tool names use MCP's allowed characters.", """
        MCP clients accept tool names of 1 to 64 characters made of letters, digits, underscore, hyphen and dot;
        other names are rejected or mangled by some clients. Two tools with the same name are an error too. Fix:
        rename the tool within those characters."""),
    rule("name-style", "names", "warning", "Names are verb_object snake_case.", """
        A name like search_customers says the action and its object, and snake_case is what models complete most
        reliably. It fires when a name is camelCase, PascalCase, kebab-case or mixed (suggesting the snake_case
        form), when it is a single word (search, customers), or when the verb comes last (invoice_create). A
        leading word is taken as a namespace prefix, not an object, when it is the server's name (asana_search
        on the asana server) or when a verb and an object follow it (asana_search_tasks)."""),
    rule("name-length", "names", "warning", "Names are short.", """
        Names longer than 40 characters are hard to tell apart at a glance, get truncated in client interfaces
        and leave no room for a namespace prefix within MCP's 64-character limit. Fix: drop words that the
        description can carry."""),
)}


def _finding(rule_id: str, tool: ToolDef, field: str, message: str, severity: Severity | None = None) -> Finding:
    return finding(DECLARED[rule_id], tool, field, message, severity)


def check_name(tool: ToolDef, server_name: str = "") -> list[Finding]:
    """name-invalid, name-length, name-style (`server_name` marks a namespace prefix)."""
    name = tool.name
    out: list[Finding] = []
    if not MCP_NAME.match(name):
        bad = sorted({c for c in name if not re.match(r"[A-Za-z0-9_\-.]", c)})
        why = f"it has {len(name)} characters (at most 64)" if len(name) > 64 else (
            "it is empty" if not name else f"it contains {' '.join(repr(c) for c in bad)}")
        out.append(_finding("name-invalid", tool, "name",
                            f"{name!r} is not a valid MCP tool name: {why}; use letters, digits, '_', '-' and '.' "
                            "only, at most 64 characters."))
    elif len(name) > LONG_NAME:
        out.append(_finding("name-length", tool, "name",
                            f"the name has {len(name)} characters; keep it under {LONG_NAME} so it stays readable and "
                            "leaves room for a namespace prefix."))
    parts = name_words(name)
    snake = "_".join(parts)
    style = name_style(name)
    if style not in (None, "snake_case") and snake:
        out.append(_finding("name-style", tool, "name",
                            f"{name} is {style}; use verb_object snake_case ({snake})."))
    elif len(parts) == 1:
        hint = f"{parts[0]}_<object>" if parts[0] in KNOWN_VERBS else f"<verb>_{parts[0]}"
        out.append(_finding("name-style", tool, "name",
                            f"{name} is a single word; name the action and what it acts on ({hint})."))
    elif parts and parts[0] not in KNOWN_VERBS and parts[-1] in KNOWN_VERBS and not _namespaced(parts, server_name):
        suggestion = "_".join([parts[-1], *parts[:-1]])
        out.append(_finding("name-style", tool, "name",
                            f"{name} puts the verb last; use verb_object order ({suggestion})."))
    return out


def _namespaced(parts: Sequence[str], server_name: str) -> bool:
    """The first word is a namespace prefix: the server's name, or followed by a verb and an object."""
    server = words(server_name)
    if server and parts[: len(server)] == server:
        return True
    return len(parts) >= 3 and parts[1] in KNOWN_VERBS
