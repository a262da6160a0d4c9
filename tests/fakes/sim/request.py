"""How the simulated agents (test doubles) read a request: its clauses (one call each), which of them only state how
things are, and whether a clause asks for information or for a change."""

from __future__ import annotations

import re

from optimizer.text.tokens import sentences, terms
from optimizer.text.values import KIND_AS_WORD, describe_values, find_values

from .phrases import only_states

_CLAUSE_BREAK = re.compile(r"\s*(?:;|,?\s+and then\s+|,?\s+then\s+|,?\s+after that,?\s+|,?\s+also\s+)\s*",
                           re.IGNORECASE)
QUESTION = re.compile(r"\?\s*$|^\s*(who|what|which|when|where|why|how|is|are|was|were|do|does|did|can|could|"
                      r"has|have|should|will|would)\b", re.IGNORECASE)
PLAIN_QUESTION = re.compile(r"^\s*(?:(?:who|what|which|when|where|why|how|is|are|was|were|does|did|has|have)"
                            r"\b(?!\s+you\b)|(?:tell|show|list|give|find|look|check|describe|explain|count)\b)"
                            r"|^[^?]*,\s*(?:who|what|which|when|where|why|how)\b(?!\s+you\b)[^?]*\?\s*$",
                            re.IGNORECASE)
"""A request for information: a question ("Can you …", "Would you …" and "Do you …" are requests phrased as
questions), also after a lead-in ("According to the guide, which version …?"), or an imperative that asks to be
told or shown something."""
_VALUE_WORDS = frozenset(terms(" ".join(KIND_AS_WORD.values())))


def clauses(prompt: str) -> list[str]:
    """Sentences and "then"-joined parts; a fragment with one content word besides its values
    ("Order #10007.") belongs to the clause before it (or after it, when it comes first)."""
    pieces: list[str] = []
    for sentence in sentences(prompt):
        pieces.extend(p for p in _CLAUSE_BREAK.split(sentence) if p and p.strip())
    merged: list[str] = []
    for piece in pieces:
        if merged and (_content_words(piece) < 2 or _content_words(merged[-1]) < 2):
            merged[-1] = f"{merged[-1]} {piece}"
        else:
            merged.append(piece)
    return _with_their_statements(merged) or [prompt]


def asks_only(clause: str) -> bool:
    """A request for information, read sentence by sentence: "My parcel hasn't come. Where is it now?" asks and
    states; nothing in it tells the reader to change anything."""
    said = sentences(clause) or [clause]
    return any(PLAIN_QUESTION.search(s) for s in said) and all(
        PLAIN_QUESTION.search(s) or _states(s) for s in said)


def _with_their_statements(parts: list[str]) -> list[str]:
    """Clauses with each statement ("The courier says it was left outside.") joined after the request it sets the
    scene for, the next one (the one before, when it comes last): one request, read whole, when any clause asks."""
    states = [_states(c) for c in parts]
    if all(states) or not any(states):
        return parts
    out: list[str] = []
    waiting = ""
    for clause, stating in zip(parts, states, strict=True):
        if stating:
            waiting = f"{waiting} {clause}".strip()
            continue
        out.append(f"{clause} {waiting}".strip())  # the request first: it says what kind of request this is
        waiting = ""
    if waiting:
        out[-1] = f"{out[-1]} {waiting}"
    return out


def _content_words(text: str) -> int:
    return len([t for t in terms(describe_values(text)) if t not in _VALUE_WORDS])


def _states(clause: str) -> bool:
    """`only_states`, a clause that opens with a value ("C-1006 says …") taking the value for its subject."""
    return only_states(clause, any(f.position == 0 for f in find_values(clause.lstrip(), 0)))
