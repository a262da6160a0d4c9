"""Reading a tool's result text: whether it is an error in all but its flag, whether it holds anything, the
literal it is, and a short field label from the words before a value. Task generation uses it to read what a
server returns; proposers never write from results."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from typing import Any

from optimizer.text.tokens import STOPWORDS

LINKS = frozenset(("via", "per", "each", "at", "on", "in", "by", "for", "with", "to", "from", "of", "as", "and",
                   "or", "the", "a", "an", "is", "are", "was", "were", "no", "not", "than", "into", "onto", "since",
                   "until", "till", "within", "over", "under", "about", "between", "across", "around", "otherwise",
                   "then", "also", "only", "just"))
"""Words that join a label to its value or to another label; a label never starts or ends with one."""
PARTICIPLES = frozenset(("found", "sent", "made", "done", "shown", "given", "taken", "seen", "held", "left", "kept",
                         "paid", "set", "put", "run", "built", "bought", "sold", "told", "won", "lost", "met", "read"))
"""Irregular past participles: like "shipped", a verb form rather than a field."""
MAX_WORDS = 3


def substantive(texts: Sequence[str]) -> list[str]:
    """The results that hold something: not those whose first line says nothing was found ("No events
    match …", "0 results")."""
    return [t for t in texts if not re.match(r"\s*(?:no|0|none|nothing)\b", t, re.IGNORECASE)]


def says_error(text: str) -> bool:
    """A result that is an error in all but its flag: it opens with "Error" or "<Something> error" ("Database
    error: near …"), or it is a JSON object whose first key is "error"."""
    if re.match(r"\s*(?:[A-Za-z]+\s)?(?:error|exception)\b", text, re.IGNORECASE):
        return True
    data = parse_literal(text.strip())
    return isinstance(data, dict) and bool(data) and next(iter(data)) in ("error", "errors")


def parse_literal(text: str) -> Any:
    """A JSON or Python-literal object or list, or None."""
    if not text or text[0] not in "[{":
        return None
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


def clean_label(parts: Sequence[str], value_kind: str, explicit: bool) -> str:
    """Link words trimmed, cut at the first inner link word, at most three words; a lone participle
    ("placed 2026-01-02") names its date, or is dropped."""
    parts = [p for p in parts if p]
    while parts and (parts[0] in LINKS or parts[0] in STOPWORDS):
        parts = parts[1:]
    for index, part in enumerate(parts):
        if part in LINKS or part in STOPWORDS:
            parts = parts[:index]
            break
    if not parts or len(parts) > MAX_WORDS or any(len(p) < 2 for p in parts):
        return ""
    participle = len(parts) == 1 and (parts[0].endswith("ed") or parts[0] in PARTICIPLES)
    if participle and value_kind in ("date", "date_text"):
        return f"{parts[0]} date"
    if not explicit and len(parts) == 1 and (participle or parts[0].endswith("ing")):
        return ""
    return " ".join(parts)


_FIELD_LINE = re.compile(r"^[ \t]*[-*]?[ \t]*([A-Za-z][A-Za-z0-9 _-]{0,30}?)[ \t]*[:=][ \t]+(\S[^\n]{0,100}?)\s*$",
                         re.MULTILINE)


def result_fields(text: str) -> list[tuple[str, Any]]:
    """(field, value) for every scalar of a JSON or Python-literal result, named by its innermost key (a list's
    items by the key above them), else for every "Field: value" line; in the order they stand."""
    data = parse_literal(text.strip())
    if data is None:
        return [(label.strip(), value.strip().rstrip(".")) for label, value in _FIELD_LINE.findall(text)]
    out: list[tuple[str, Any]] = []
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        key, item = stack.pop()
        if isinstance(item, dict):
            stack.extend(reversed([(str(k), v) for k, v in item.items()]))
        elif isinstance(item, list):
            stack.extend(reversed([(key, v) for v in item[:50]]))
        elif key and item is not None and not isinstance(item, bool):
            out.append((key, item))
    return out
