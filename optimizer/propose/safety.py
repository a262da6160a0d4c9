"""Safety screen for model-written definition text: what a candidate must not put in front of an agent.

Contract:
- `unsafe_reasons(catalog, candidate)` is pure and never raises for a malformed candidate; it returns
  one short line per problem (`<original tool> <field>: <why>`), in edit order, empty when the
  candidate is safe. `Screen.reason` (`optimize/screening.py`) rejects a candidate with any reason, whatever
  `--allow-leakage` says.
- Only text the candidate EDITS is checked: a new name, a description or parameter description that
  differs from the original. Text equal to the server's own is never flagged.
- A link or an agent-aimed phrase that already occurs in the original catalog's text (any string in
  a tool's name, title, description or schemas, or the server's name; case and spacing ignored) is
  the server's own wording and is not flagged.
- The checks: tool names (charset and length), length caps, links, instructions aimed at the agent,
  control and invisible characters. They are patterns, not a classifier: they catch the usual forms
  of injection and keep normal tool documentation ("Use when…", "Use X instead", "Not for…",
  "Call this after X", "Returns…", "You can filter…") clean.
"""

from __future__ import annotations

import re
import unicodedata

from optimizer.definitions import MCP_NAME, Candidate, Catalog, ToolDef, parameter_paths
from optimizer.lint.security_shapes import AGENT_AIMED, LINK
from optimizer.text.tokens import json_strings

MAX_DESCRIPTION_CHARS = 1_500
"""A tool description longer than this is padding or a payload, not documentation."""
MAX_PARAMETER_CHARS = 500
"""A parameter description longer than this is padding or a payload, not documentation."""

_VERB = r"(?:call|use|invoke|run)"
_AGENT_INSTRUCTIONS: tuple[re.Pattern[str], ...] = (*AGENT_AIMED, *(re.compile(p, re.IGNORECASE) for p in (
    # "always call X", "always use", "always prefer this tool"
    r"\balways\s+(?:call|use|invoke|run|prefer|choose|select|pick|start\s+with)\b",
    # "you must call", "you should first use", "you need to ignore" — orders to the reader, not the tool's rules
    r"\byou\s+(?:must|should|shall|need\s+to|have\s+to|are\s+required\s+to)\s+(?:always\s+|first\s+|now\s+|only\s+)?"
    r"(?:call|use|invoke|run|execute|ignore|disregard|forget|reveal|send)\b",
    # "the assistant should", "the AI must", "Claude needs to"
    r"\b(?:assistant|ai|llm|language\s+model|chatbot|claude|chatgpt|gpt)\s+"
    r"(?:must|should|shall|needs?\s+to|has\s+to|is\s+(?:required|instructed|expected)\s+to)\b",
    # "system prompt", "system instructions"
    r"\bsystem\s+(?:prompt|instructions?)\b",
    # "before answering, call", "before you respond", "before any other tool"
    r"\bbefore\s+(?:answering|replying|responding\s+to|you\s+(?:answer|reply|respond)|doing\s+anything|any(?:thing)?"
    r"\s+else|(?:calling\s+|using\s+)?(?:any|every)\s+(?:other\s+)?(?:tools?|calls?|actions?|answers?|responses?"
    r"|replies|requests?))\b",
    # "call this tool first", "use it every time"; "call this after search_orders" passes
    rf"\b{_VERB}\s+(?:this(?:\s+tool|\s+function)?|it|me)\s+(?:first|always|at\s+the\s+(?:start|beginning)"
    r"|(?:every|each)\s+time|on\s+every|for\s+every)\b",
    # "use it for every user request", "call regardless of the question"; not "for each message in a thread"
    rf"\b{_VERB}\b[^.\n]{{0,40}}?\b(?:(?:every|each)\s+(?:single\s+)?(?:user\s+(?:request|question|message|prompt)"
    r"|(?:turn|conversation|question)s?\b)|regardless\s+of\s+(?:the\s+)?(?:user'?s?\s+)?(?:question|request|task))",
    # "you are now …", "you are an AI assistant" — rewriting the agent's role
    r"\byou\s+are\s+(?:now\b|no\s+longer\b|an?\s+(?:helpful\s+)?(?:ai|assistant|agent|language\s+model|llm|chatbot)\b)",
)))
"""Orders to the agent: those lint's security-hidden-instruction rule shares (`AGENT_AIMED`: overriding the agent's
instructions, keeping things from the user, role markers and pseudo tags), and the stricter ones only text a
candidate writes is held to (orders to always or first call a tool, to the assistant by name, about the system
prompt, about every request, rewriting the agent's role)."""

# Characters a reader cannot see or that reorder text: control characters other than tab and newlines, format
# characters (zero-width space/joiners, bidi embeddings/overrides U+202A–U+202E and isolates U+2066–U+2069, BOM,
# Unicode tag characters), private-use, surrogate and unassigned code points, line/paragraph separators, variation
# selectors and the Hangul fillers that render as blanks.
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"})
_ALLOWED_CONTROLS = frozenset("\t\n\r")
_BLANK_LETTERS = frozenset({"\u115f", "\u1160", "\u3164", "\uffa0"})


def unsafe_reasons(catalog: Catalog, candidate: Candidate) -> list[str]:
    """One line per unsafe piece of text the candidate writes; empty when it writes none."""
    known = catalog_text(catalog)
    reasons: list[str] = []
    for original, edit in candidate.edits.items():
        tool = _find(catalog, original)
        if edit.name is not None and edit.name != original:
            reasons.extend(f"{original} name: {why}" for why in name_problems(edit.name))
        if edit.description is not None and edit.description != (tool.description if tool else None):
            reasons.extend(f"{original} description: {why}"
                           for why in text_problems(edit.description, known, MAX_DESCRIPTION_CHARS))
        params = dict(parameter_paths(tool.input_schema)) if tool else {}
        for path, text in edit.parameters.items():
            if text == params.get(path, {}).get("description"):
                continue
            reasons.extend(f"{original} parameter {path}: {why}"
                           for why in text_problems(text, known, MAX_PARAMETER_CHARS))
    return reasons


def name_problems(name: str) -> list[str]:
    """Why a new tool name is unsafe: letters, digits, `_` and `-` only, 1 to 64 characters (MCP_NAME without
    the `.` it also admits, which some model APIs reject in tool names)."""
    if MCP_NAME.match(name) and "." not in name:
        return []
    return [f"not a valid tool name ({_quote(name)}; letters, digits, _ and - only, 1-64 characters)"]


def text_problems(text: str, known: str, cap: int) -> list[str]:
    """Why a new description is unsafe: over `cap` characters, invisible characters, links or agent-aimed
    phrases that `known` (the catalog's own text, from `catalog_text`) does not contain."""
    out: list[str] = []
    if len(text) > cap:
        out.append(f"{len(text):,} characters (cap {cap:,})")
    hidden = invisible_characters(text)
    if hidden:
        out.append("invisible or control characters (" + ", ".join(f"U+{ord(c):04X}" for c in hidden[:3]) + ")")
    links = [u for u in links_in(text) if not _occurs(u.split("://", 1)[-1], known)]
    if links:
        out.append(f"link not in the server's definitions ({_quote(links[0])})")
    phrases = [p for p in agent_instructions(text) if not _occurs(p, known)]
    if phrases:
        out.append(f"instruction aimed at the agent ({_quote(phrases[0].lower())})")
    return out


def invisible_characters(text: str) -> list[str]:
    """The distinct control or invisible characters in `text`, in order of first appearance."""
    seen: dict[str, None] = {}
    for char in text:
        if char in _ALLOWED_CONTROLS:
            continue
        if (unicodedata.category(char) in _INVISIBLE_CATEGORIES or char in _BLANK_LETTERS
                or "\ufe00" <= char <= "\ufe0f" or "\U000e0100" <= char <= "\U000e01ef"):
            seen[char] = None
    return list(seen)


def links_in(text: str) -> list[str]:
    """Links in `text` (scheme, `www.` or bare-domain), without trailing punctuation."""
    return [m.group(0).rstrip(".,;:!?") for m in LINK.finditer(text)]


def agent_instructions(text: str) -> list[str]:
    """The phrases of `text` that address the agent instead of describing the tool, in text order (longest first
    where two start together)."""
    hits = [(m.start(), -len(m.group(0)), m.group(0))
            for pattern in _AGENT_INSTRUCTIONS for m in pattern.finditer(text)]
    return [phrase for _, _, phrase in sorted(hits)]


def catalog_strings(catalog: Catalog) -> list[str]:
    """Every string of the original catalog (names, titles, descriptions, schemas), as the server wrote it: what the
    leakage guard reads as the server's own text (its words are read before lower-casing: "PivotTable")."""
    return [catalog.server_name, *(s for tool in catalog.tools for s in json_strings(tool.canonical()))]


def catalog_text(catalog: Catalog) -> str:
    """`catalog_strings`, normalised (lower-cased, whitespace collapsed), one per line."""
    return "\n".join(_norm(s) for s in catalog_strings(catalog))


def _find(catalog: Catalog, name: str) -> ToolDef | None:
    return catalog.get(name) if name in catalog else None


def _occurs(needle: str, known: str) -> bool:
    """Whether `needle` occurs in `known` as a whole (`acme.co` does not occur in `acme.com`)."""
    return re.search(rf"(?<![\w.-]){re.escape(_norm(needle))}(?![\w-])", known) is not None


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def _quote(text: str, limit: int = 40) -> str:
    """Untrusted text for a one-line reason: whitespace collapsed, invisible characters dropped, shortened."""
    visible = "".join(c for c in " ".join(text.split()) if not invisible_characters(c))
    short = visible if len(visible) <= limit else visible[: limit - 1] + "…"
    return '"' + short.replace('"', "'") + '"'
