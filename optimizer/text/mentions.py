"""Where a text names a tool, and the same text with those names replaced.

Contracts:
- A mention is an exact, case-sensitive occurrence of one of the given names, standing alone: not inside a longer
  identifier, path, address or dotted name (`pay` is not mentioned by `pay_fines`, `a/pay` or `pay.x`).
- A name shaped like an identifier (it holds `_`, `-`, `.`, a digit or an inner capital: `list_loans`,
  `getUser`) is a mention wherever it stands alone. A plain word (`pay`, `search`) is one only where the text
  uses it as a name: in backticks, after call, invoke or use (then followed by instead), or before "tool".
- Pure functions of their arguments; where two names overlap, the longer one wins.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from functools import lru_cache

_SHAPED = re.compile(r"[_\-.\d]|[a-z][A-Z]")
_CALLED_BEFORE = re.compile(r"(?i:\b(?:call|calling|invoke|invoking)\s+(?:the\s+)?)['\"]?$")
_USED_BEFORE = re.compile(r"(?i:\buse\s+(?:the\s+)?)['\"]?$")
_INSTEAD_AFTER = re.compile(r"['\"]?\s+instead\b")
_TOOL_AFTER = re.compile(r"['\"]?\s+tool\b")


def shaped_like_identifier(name: str) -> bool:
    return bool(_SHAPED.search(name))


@lru_cache(maxsize=512)
def _pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    alternation = "|".join(re.escape(n) for n in sorted(names, key=lambda n: (-len(n), n)))
    return re.compile(rf"(?<![\w\-./@])(?:{alternation})(?![\w\-/@]|\.\w)")


def _used_as_name(text: str, start: int, end: int) -> bool:
    before, after = text[:start], text[end:]
    if before.endswith("`") and after.startswith("`"):
        return True
    if _CALLED_BEFORE.search(before) or _TOOL_AFTER.match(after):
        return True
    return bool(_USED_BEFORE.search(before) and _INSTEAD_AFTER.match(after))


def mention_spans(text: str, names: Collection[str]) -> list[tuple[int, int, str]]:
    """(start, end, name) of every mention of `names` in `text`, in text order (see the module docstring)."""
    wanted = tuple(sorted({n for n in names if n}))
    if not text or not wanted:
        return []
    return [(m.start(), m.end(), m.group(0)) for m in _pattern(wanted).finditer(text)
            if shaped_like_identifier(m.group(0)) or _used_as_name(text, m.start(), m.end())]


def mentioned(text: str, names: Collection[str]) -> list[str]:
    """The names of `names` that `text` mentions, each once, in text order."""
    out: list[str] = []
    for _, _, name in mention_spans(text, names):
        if name not in out:
            out.append(name)
    return out


def renamed(text: str, mapping: Mapping[str, str], *, mark_plain: bool = False) -> str:
    """`text` with every mention of a key of `mapping` replaced by its value. With `mark_plain`, a new name that is
    a plain word goes in backticks (unless it already stands in them), so that it still reads as a tool's name."""
    changing = [name for name, new in mapping.items() if new != name]
    if not changing:
        return text
    out, last = [], 0
    for start, end, name in mention_spans(text, changing):
        new = mapping[name]
        if mark_plain and not shaped_like_identifier(new) and not text[:start].endswith("`"):
            new = f"`{new}`"
        out.append(text[last:start] + new)
        last = end
    return "".join(out) + text[last:]
