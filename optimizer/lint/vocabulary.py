"""Word lists and name parsing that several lint rule modules share.

Contracts:
- Verb lists hold lower-case words as they appear in tool names; `VERB_CLASS` maps stemmed forms
  (via `optimizer.text.tokens.stem`) to a canonical verb, so similar verbs count as one word.
- `name_words` splits a tool name into lower-case words (snake, kebab, camel and dotted names alike).
- `name_style` classifies a multi-word name; it returns None for one plain lower-case word.
"""

from __future__ import annotations

import re

from optimizer.text.tokens import stem, words

DEPRECATED = re.compile(r"\b(deprecated|obsolete|superseded)\b", re.IGNORECASE)
"""A notice that a tool is retired, usually naming its replacement ("DEPRECATED: Use read_text_file instead.")."""


def vocab(text: str) -> frozenset[str]:
    """The whitespace-separated words of `text`, as a set."""
    return frozenset(text.split())


_VERB_CLASSES = {
    "get": "get fetch retrieve read check show view lookup look describe display obtain load",
    "search": "search find query locate browse discover",
    "create": "create add make insert register",
    "update": "update edit modify change set patch alter amend",
    "delete": "delete remove drop destroy erase purge",
    "list": "list enumerate",
}


def _inflections(word: str) -> set[str]:
    return {word, stem(word), stem(word + "s"), stem(word + "ed"), stem(word + "ing"), stem(word + "es")}


VERB_CLASS = {form: canon for canon, verbs in _VERB_CLASSES.items() for w in vocab(verbs) for form in _inflections(w)}
"""Stemmed verb -> canonical verb; similar verbs count as the same word in the overlap measure."""
CANONICAL_VERBS = frozenset(_VERB_CLASSES)
DESTRUCTIVE_VERBS = vocab("""delete remove drop revoke destroy purge erase wipe truncate overwrite reset kill terminate
    cancel close archive unlink uninstall disable ban block evict rm del""")
WRITE_VERBS = DESTRUCTIVE_VERBS | vocab("""send create update write set post publish put patch insert upload submit
    refund charge pay transfer move rename edit modify assign escalate schedule book invite approve reject merge
    deploy commit push revert""")
KEEPING_VERBS = vocab("add append save store record remember")
"""Verbs that usually keep something new ("add_note", "save_draft") but read as arithmetic or a sign-in elsewhere
("add two numbers", "log in"): not WRITE_VERBS for lint; a reason to treat an unannotated tool as changing state."""
KNOWN_VERBS = WRITE_VERBS | vocab("""get list search find fetch retrieve read lookup look query check show view
    describe count validate verify compare calculate compute convert analyze analyse summarize extract parse format
    render generate translate echo ping track watch monitor resolve explain estimate preview download export import
    sync add run execute start stop open load save store record log notify email print test trigger call process
    handle manage apply request ask answer reply respond review score rank sort filter match plan predict recommend
    suggest select pick choose clear refresh reload fix build compile install configure login logout authenticate
    authorize sign subscribe unsubscribe enable toggle annotate tag label comment share fork clone copy encode decode
    hash encrypt decrypt lock unlock grant upsert sum multiply divide subtract diff navigate click scroll capture fill
    wait sleep sample take make issue identify inspect measure lint evaluate go""")


def canon(term: str) -> str:
    """The canonical verb for a stemmed term, or the term itself."""
    return VERB_CLASS.get(term, term)


def name_words(name: str) -> list[str]:
    """The lower-case words of a tool name; dots separate words too."""
    return words(name.replace(".", " "))


def action_verb(name: str) -> str | None:
    """The verb a tool name starts with, skipping one namespace word (`asana_delete_task` -> delete)."""
    parts = name_words(name)
    if not parts:
        return None
    if parts[0] in KNOWN_VERBS or len(parts) == 1:
        return parts[0]
    return parts[1] if parts[1] in KNOWN_VERBS else parts[0]


_STYLES = (
    ("snake_case", re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")),
    ("kebab-case", re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)+")),
    ("camelCase", re.compile(r"[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+")),
    ("PascalCase", re.compile(r"(?:[A-Z][a-z0-9]*)+")),
    ("SCREAMING_CASE", re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*")),
)


def name_style(name: str) -> str | None:
    """The naming style of a multi-word name (ignoring a dotted namespace prefix); None for one plain word."""
    base = name.rsplit(".", 1)[-1] if "." in name else name
    if re.fullmatch(r"[a-z0-9]+", base):
        return None
    for style, pattern in _STYLES:
        if pattern.fullmatch(base):
            return style
    return "mixed"
