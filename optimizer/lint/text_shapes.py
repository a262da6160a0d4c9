"""The text shapes the text-* rules look for: glossary lists, error messages, promotion, tool references.

Contracts:
- Everything here is a pure function of its text (and of the schemas it is given); patterns are English and
  general, never keyed to one server.
- `glossary_items` and `parameter_lists` return the exact text they matched, as it appears in the input.
- `identifier_references` returns identifiers used as tool names, in text order, each once.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any

from optimizer.definitions import ToolDef
from optimizer.lint.vocabulary import KNOWN_VERBS, VERB_CLASS, name_words

# --- glossary lists ------------------------------------------------------------------------------------------------

_PAREN = re.compile(r"\(([^()]{2,240})\)")
_ASIDE_START = re.compile(
    r"(?:e\.?\s?g\b|i\.?\s?e\b|eg\b|ie\b|cf\b|such\s+as|like|for\s+(?:example|instance)|including|incl\b|see"
    r"|defaults?|optional|required|in|as|from|not|no|only|at\s+(?:most|least)|up\s+to|max|min|one\s+of|either|per"
    r"|except|excluding|and|or|plus|etc)\b", re.IGNORECASE)
_VALUE_CHARS = re.compile(r"[\d'\"`/#@=_$%+*<>\[\]{}|\\:;!?.]")
_LAST_JOIN = re.compile(r"\s+(?:or|and)\s+")
MAX_ITEM_WORDS = 6
_LITERALS = frozenset({"true", "false", "null", "none"})


def glossary_items(text: str) -> Iterator[tuple[str, list[str]]]:
    """Parenthesised lists of plain words or phrases that gloss a topic word of a for- or about-clause (two or
    more items) or that are mostly verbs (three or more): (match, items)."""
    for m in _PAREN.finditer(text):
        inner = re.sub(r",?\s*(?:etc\.?|…|\.\.\.)\s*$", "", m.group(1).strip())
        if _ASIDE_START.match(inner):
            continue
        items = _items(inner)
        if items and (_glosses_a_topic(text[: m.start()]) or (len(items) >= 3 and _mostly_verbs(items))):
            yield m.group(0), items


def _items(inner: str) -> list[str] | None:
    parts = [p.strip() for p in inner.split(",")]
    last = _LAST_JOIN.split(parts[-1], maxsplit=1)
    items = [*parts[:-1], *(p.strip() for p in last)]
    if len(items) < 2 or any(not item for item in items) or {i.lower() for i in items} & _LITERALS:
        return None
    for position, item in enumerate(items):
        if _VALUE_CHARS.search(item) or len(item.split()) > MAX_ITEM_WORDS:
            return None
        if re.search(r"[A-Z]", item[1:] if position == 0 else item):
            return None  # names, codes and formats are values, not glossary words
    return items


_TOPIC = re.compile(r"\b(?:for|about|regarding)\s+(?:[\w-]+(?:\s*,\s*|\s+(?:or|and)\s+))*[\w-]+\s*$", re.IGNORECASE)


def _glosses_a_topic(before: str) -> bool:
    """The list follows one word (or a run of single words joined by commas, or, and) that a for- or about-clause
    of the same sentence names: "use it for customers (", "Not for billing (", "about documents, files (" ."""
    clause = re.split(r"[.;:!?\n]", re.sub(r"\([^()]*\)", "", before))[-1]
    return bool(_TOPIC.search(clause))


_PARTICLES = frozenset("up out in on off down over back through away".split())  # noqa: SIM905


def _mostly_verbs(items: Sequence[str]) -> bool:
    """Three or more of the items, and at least half, are verbs alone or with a particle ("look up"): synonyms of an
    action. A verb with an object ("fix a line") is an example of a use, not a synonym."""
    verbs = sum(_verb_item(item.lower().split()) for item in items)
    return verbs >= 3 and 2 * verbs >= len(items)


def _verb_item(parts: list[str]) -> bool:
    return (parts[0] in KNOWN_VERBS or parts[0] in VERB_CLASS) and all(p in _PARTICLES for p in parts[1:])


_COLON_LIST = re.compile(r":\s+([^.:;\n]+?)\s*(?:[.;\n]|$)")
_PARAM_ITEM = re.compile(r"([A-Za-z_][\w-]*)(?:\s*\([^()]*\))?$")


def parameter_lists(text: str, parameters: Collection[str]) -> Iterator[str]:
    """Colon lists of two or more items that are each just one of `parameters` (with an optional aside)."""
    if len(parameters) < 2:
        return
    for m in _COLON_LIST.finditer(text):
        parts = [p.strip() for p in re.split(r",\s*|\s+(?:and|or)\s+", m.group(1)) if p.strip()]
        names = [_PARAM_ITEM.match(p) for p in parts]
        if len(parts) >= 2 and all(n and n.group(1) in parameters for n in names):
            yield m.group(0).strip(" .;\n")


# --- error messages ------------------------------------------------------------------------------------------------

_SENTENCE_START = r"(?:^|(?<=[.!?]\s)|(?<=\n))"
_VALUE_END = r"(?:'[^'\n]{1,60}'|\"[^\"\n]{1,60}\"|`[^`\n]{1,60}`|:\s*\S+?)\s*(?:[.!](?=\s|$)|$|(?=\n))"
ERROR_SHAPES: tuple[re.Pattern[str], ...] = (
    re.compile(_SENTENCE_START + r"(?:invalid|bad|unknown|unrecognized|unrecognised|unsupported|illegal|malformed"
               r"|missing|no\s+such|not\s+found|could\s+not|couldn't|unable\s+to|failed\s+to)\b"
               r"[^.!?\n'\"`]{0,80}?" + _VALUE_END, re.IGNORECASE),
    re.compile(r"\(got\s*:?\s*[^)\n]{0,60}\)", re.IGNORECASE),
    re.compile(_SENTENCE_START + r"(?:Error|ERROR|Exception|[A-Z][A-Za-z]*(?:Error|Exception))\s*:\s*\S[^\n]{0,60}"),
    re.compile(r"Traceback \(most recent call last\)|File \"[^\"\n]+\", line \d+|\bat [\w.$<>]+ \([^()\s]+:\d+:\d+\)"),
)
"""Error messages and stack traces: a short sentence starting like an error and ending on its one quoted value
(or a colon and a value), a "(got …)" echo, an `Error:` line, and stack-trace lines."""

# --- promotion -----------------------------------------------------------------------------------------------------

_TOOL_NOUN = r"(?:tools?|functions?|options?|choices?|sources?|solutions?|services?|apis?|methods?|ways?)"
_OTHERS = r"(?:any|all|every|the)?\s*other\s+(?:tools?|functions?|options|methods|servers?|apis?)"
PROMOTION = re.compile(
    r"\b(?:the\s+)?(?:best|most\s+(?:reliable|accurate|powerful|complete|comprehensive|trusted|trustworthy|capable"
    rf"|advanced|robust|useful|helpful|versatile|popular|authoritative|effective)|ultimate|go-to)\s+{_TOOL_NOUN}\b"
    r"|\b(?:best-in-class|state-of-the-art|world-class|industry-leading|unrivall?ed|unparalleled"
    r"|second\s+to\s+none)\b"
    r"|\b(?:is|are|remains?|be)\s+unmatched\b|\bunmatched\s+(?:by|in|accuracy|speed|performance|quality|reliability"
    r"|precision|coverage|results?)\b"
    rf"|\b(?:better|superior|more\s+\w+|faster|smarter)\s+(?:than|to)\s+{_OTHERS}\b"
    rf"|\b(?:outperforms?|beats?|surpass(?:es)?)\s+{_OTHERS}\b"
    r"|\bthe\s+only\s+(?:tool|function|one)\s+(?:you(?:'ll|\s+will)?\s+(?:ever\s+)?need|needed|required)\b"
    r"|\bno\s+(?:other|additional|further)\s+tools?\s+(?:is|are)\s+(?:needed|required|necessary)\b"
    r"|\byou\s+(?:do\s+not|don't|never)\s+need\s+(?:any\s+)?(?:other|another)\s+tools?\b"
    r"|\bprefer\s+(?:this|it|me)(?:\s+(?:tool|function|one))?(?=\s*(?:[.,;!]|$)|\s+(?:over|to|above)\s+(?:any"
    r"|all|every|other|the\s+other)\b|\s+(?:whenever|always|in\s+all|for\s+(?:all|any|every|everything)\b))"
    r"|\b(?:recommended|preferred)\s+(?:over|above|to)\s+(?:any|all|every|the)?\s*other\b"
    r"|\binstead\s+of\s+(?:any|all|every)\s+other\b"
    r"|\bover\s+(?:any|all|every)\s+other\s+(?:tools?|functions?|options)\b"
    r"|\b(?:ignore|avoid|skip|disregard)\s+(?:the\s+|all\s+|any\s+)?other\s+tools?\b"
    r"|\b(?:do\s+not|don't|never)\s+use\s+(?:any\s+|the\s+)?other\s+tools?\b"
    r"|\b(?:must|should|needs?\s+to)\s+always\s+be\s+(?:called|used|invoked|run|chosen|selected|tried)\s+first\b",
    re.IGNORECASE,
)
"""Claims that rank a tool above the others in general: superlatives, comparisons with all other tools,
exclusivity, preference and precedence. A boundary with a named tool does not match."""

# --- tool references -----------------------------------------------------------------------------------------------

_IDENT = r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+|[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+"
_KEBAB = r"[a-z][a-z0-9]*(?:-[a-z0-9]+)+"


def _reference_patterns(name: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(strong, weak) patterns for identifiers of the form `name`: strong contexts name a tool whatever the
    identifier looks like, weak ones only when it is verb-led."""
    before, after, quote = r"(?<![\w./@-])", r"(?![\w@/-]|\.\w)", r"['\"`]?"
    strong = (rf"(?i:\b(?:call|calling|invoke|invoking)\s+(?:the\s+)?){quote}{before}(?P<a>{name}){after}"
              rf"|{before}(?P<b>{name}){after}{quote}\s+(?i:instead|tool|function)\b")
    weak = (rf"(?i:\b(?:use|using|try|via|with|from|see|after|before|then|returned\s+by|output\s+of|results?\s+of)"
            rf"\s+(?:the\s+)?){quote}{before}(?P<a>{name}){after}|`(?P<b>{name})`"
            rf"|{before}(?P<c>{name}){after}{quote}\s+(?i:shows?|gives?|lists?|returns?|provides?|finds?|tells?"
            rf"|reports?|looks?\s+up|fetches|retrieves?)\b")
    return re.compile(strong), re.compile(weak)


_SNAKE_PATTERNS = _reference_patterns(_IDENT)
_KEBAB_PATTERNS = _reference_patterns(_KEBAB)  # only the strong one is used


def identifier_references(text: str, *, kebab: bool = False) -> list[str]:
    """Identifiers used as tool names: any identifier after call/invoke or before instead/tool; a verb-led one
    after use, with, from, via and the like, before shows, gives, returns, lists and the like, or in backticks.
    Kebab-case counts only when `kebab` is true (the server names tools that way), and then only after call/invoke
    or before instead/tool, since English writes compounds that way (read-only); all-capital identifiers (constants,
    formats) never count."""
    found: list[tuple[int, str]] = []
    patterns = [(_SNAKE_PATTERNS[0], False), (_SNAKE_PATTERNS[1], True)]
    if kebab:
        patterns.append((_KEBAB_PATTERNS[0], False))
    for pattern, needs_verb in patterns:
        for m in pattern.finditer(text):
            name = next(g for g in m.groups() if g)
            if name.isupper() or (needs_verb and not _verb_led(name)):
                continue
            found.append((m.start(), name))
    out: list[str] = []
    for _, name in sorted(found):
        if name not in out:
            out.append(name)
    return out


def _verb_led(name: str) -> bool:
    parts = name_words(name)
    return len(parts) >= 2 and (parts[0] in KNOWN_VERBS or (len(parts) >= 3 and parts[1] in KNOWN_VERBS))


def schema_words(tools: Sequence[ToolDef], *, values_only: bool = False) -> set[str]:
    """Property names and enum/const string values of every schema of `tools` (only the values when asked)."""
    out: set[str] = set()
    for tool in tools:
        for schema in (tool.input_schema, tool.output_schema):
            _collect(schema, out, values_only)
    return out


def _collect(node: Any, out: set[str], values_only: bool) -> None:
    if isinstance(node, Mapping):
        for key, value in node.items():
            if key in ("properties", "$defs", "definitions") and isinstance(value, Mapping) and not values_only:
                out.update(str(k) for k in value)
            if key in ("enum", "const"):
                values = value if isinstance(value, list) else [value]
                out.update(v for v in values if isinstance(v, str))
            _collect(value, out, values_only)
    elif isinstance(node, list):
        for item in node:
            _collect(item, out, values_only)
