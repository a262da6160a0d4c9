"""Phrases the simulated agents (test doubles) lift from a request for parameters that take words rather than a
value of a kind: the phrase after a cue ("notes about X" → X), proper names ("Alice Chen", "Acme Corp"), the word a
noun is named by ("the users table" → users), and the request's key words with the tool's own words and request verbs
left out. English reading only: nothing here knows a server or a task."""

from __future__ import annotations

import re

from optimizer.text.tokens import STOPWORDS, stem, terms

# Words that ask for something rather than name it: a request's verb is not its topic, nor part of a name.
REQUEST_VERBS = frozenset(terms(
    "find show list get give tell fetch look search read open check see display return print create add make "
    "write save store record remember put insert append update change set edit rename move copy delete "
    "remove drop clear run execute convert describe count compute calculate exist happen schedule "
    "send let help pull lookup"
))
_DISCOURSE = frozenset({"today", "tomorrow", "yesterday", "next", "first", "last", "finally", "also", "then", "now",
                        "ok", "okay", "yes", "no", "hey"})
_MONTH_DAY = frozenset(terms("january february march april may june july august september october november "
                             "december monday tuesday wednesday thursday friday saturday sunday"))
_DETERMINERS = r"(?:the|a|an|any|all|some|my|our|their|his|her|its|this|that|these|those)"
_STRONG_CUES = (r"about|regarding|concerning|mentioning|that mentions?|containing|that contains?|matching|named|"
                r"called|titled|labell?ed|saying|that says|with the (?:text|title|name|content|word|phrase|"
                r"message|note)s?|related to|on the (?:topic|subject) of")
_PHRASE_END = re.compile(r"[.?!;,:()\[\]]|\s(?:and then|then|and also|so that|because|in order)\s|"
                         r"\s(?:in|inside|under|within|from|at|into|to)\s+(?:the|my|our|this|that|a|an)\s|"
                         r"\s(?:in|inside|under|within|from|at|into|to)\s+[\w.~-]*/", re.IGNORECASE)
# adjectives that say which one, not its name ("the same folder", "the new table")
_WHICH = frozenset({"new", "same", "whole", "entire", "given", "following", "existing", "other", "parent", "top",
                    "main", "default", "empty", "right", "correct", "specific", "named", "above", "below",
                    "only", "last", "first", "next", "previous", "old", "latest"})


def cue_phrase(text: str) -> str | None:
    """The phrase after a cue word that says what to look for: "notes about the Q3 budget" → "Q3 budget"."""
    for match in re.finditer(rf"\b(?:{_STRONG_CUES})\s+(.+)", text, re.IGNORECASE):
        rest = match.group(1)
        end = _PHRASE_END.search(" " + rest + " ")
        phrase = rest[: max(0, end.start() - 1)] if end else rest
        phrase = re.sub(rf"^(?:{_DETERMINERS}\s+)+", "", phrase.strip(" '\"“”‘’"), flags=re.IGNORECASE)
        phrase = re.sub(r"\s+(?:please|for me|now)$", "", phrase, flags=re.IGNORECASE).strip(" '\"“”‘’")
        if terms(phrase):
            return phrase
    return None


_NAME_TOKEN = r"(?:[A-Z][a-z]+(?:[-'’][A-Z]?[a-z]+)?|[A-Z][a-z]*[A-Z][A-Za-z]*|[A-Z]{2,}|[A-Z]\.)"
_NAME = re.compile(rf"(?<![\w'’@#/.-]){_NAME_TOKEN}(?:(?: |\s(?:of|de|van|von|da|&)\s){_NAME_TOKEN})*(?![\w@/-])")


def proper_names(text: str) -> list[tuple[int, str]]:
    """(position, name) for capitalised names: "Alice Chen", "Acme Corp". Leading request verbs and
    function words are not part of a name ("Find Alice Chen" → Alice Chen), and a lone capitalised word
    that opens a sentence is not taken for one ("Identify the customer", "Log a ticket")."""
    out: list[tuple[int, str]] = []
    for match in _NAME.finditer(text):
        tokens = match.group(0).split(" ")
        start = match.start()
        opens = not text[:start].strip() or text[:start].rstrip()[-1] in ".?!:;\"“"
        while tokens and _not_a_name(tokens[0], opens):
            start += len(tokens[0]) + 1
            tokens.pop(0)
            opens = False
        while tokens and tokens[-1].lower() in ("of", "de", "van", "von", "da", "&"):
            tokens.pop()
        name = re.sub(r"['’]s?$", "", " ".join(tokens))  # Priya Raman's → Priya Raman
        if not tokens or (len(tokens) == 1 and (opens or len(name) <= 3 or (name.isupper() and len(name) <= 5))):
            continue  # "Log …", PhD, SQL, UTC
        if len(tokens) == 1 and stem(name.lower()) in _MONTH_DAY:
            continue
        out.append((start, name))
    return out


def _not_a_name(token: str, opens: bool) -> bool:
    """A function word, or — opening a sentence — a request verb ("Open" in "Open the Tide Dataset", not in
    "the Open Tide Dataset")."""
    lowered = re.sub(r"['’](?:s|re|ll|ve|d|m|t)$", "", token.lower().strip("."))
    verb = opens and stem(lowered) in REQUEST_VERBS
    return lowered in STOPWORDS or lowered in _DISCOURSE or verb or len(lowered) < 2


def named_noun(nouns: frozenset[str], text: str) -> str | None:
    """The word that names one of `nouns` in the text: "the docs folder", "the table named users",
    "a folder called archive" → docs, users, archive. "current" and "home" come back as they are."""
    if not nouns:
        return None
    noun = "|".join(sorted(rf"{re.escape(n)}\w*" for n in nouns))
    before = re.compile(rf"\b{_DETERMINERS}\s+['\"`]?([\w.~-]+)['\"`]?\s+(?:{noun})\b", re.IGNORECASE)
    after = re.compile(rf"\b(?:{noun})\s+(?:named|called|titled)\s+['\"`]?([\w.~/-]+)", re.IGNORECASE)
    marked = re.compile(rf"\b(?:{noun})\s+([A-Za-z]*[_\d][\w.-]*|`[^`]+`)", re.IGNORECASE)
    for pattern in (after, before, marked):
        for match in pattern.finditer(text):
            word = match.group(1).strip("`.,")
            if word.lower() in STOPWORDS or word.lower() in _WHICH or stem(word.lower()) in REQUEST_VERBS:
                continue
            return word
    return None


_SLUG = re.compile(r"(?<![\w./@#$-])(?=[a-z0-9_-]*[a-z])[a-z0-9]+(?:[-_][a-z0-9]+)+(?![\w./@-])")


def slugs(text: str) -> list[str]:
    """Lower-case identifiers joined by hyphens or underscores: my-project, order_items, api-v2."""
    return [m.group(0) for m in _SLUG.finditer(text)]


def key_words(text: str, skip: frozenset[str], limit: int = 6) -> str | None:
    """The request's own words: stopwords, request verbs and `skip` terms (the tool's name) left out;
    None when nothing is left."""
    kept = []
    for raw in re.findall(r"[\w@.#/'’-]+", text):
        word = raw.strip(".,'’")
        lowered = word.lower()
        if not word or lowered in STOPWORDS or lowered in _DISCOURSE:
            continue
        if set(terms(word)) and set(terms(word)) <= (skip | REQUEST_VERBS):
            continue
        if not terms(word) and not re.search(r"\d", word):
            continue
        kept.append(word)
    return " ".join(kept[:limit]) or None


_SUBJECT = re.compile(rf"^\s*(?:{_DETERMINERS}|i|i'm|i’m|we|we're|he|she|they|it|it's|there|someone|somebody|"
                      r"everyone|nobody)\b", re.IGNORECASE)
_WISH = re.compile(r"^\s*(?:i|we)\s*(?:'d|’d|would)?\s+(?:need|want|like|wish|have to|must)\b", re.IGNORECASE)


def only_states(clause: str, opens_with_value: bool) -> bool:
    """Whether a clause tells how things are rather than asks for something: a statement with its subject first
    ("The courier says it was dropped off.", "My parcel hasn't come.", "C-1006 says checkout fails." when
    `opens_with_value`), not a question, a command or a wish ("I need the invoice")."""
    if clause.rstrip().endswith("?") or _WISH.match(clause):
        return False
    return opens_with_value or bool(_SUBJECT.match(clause))
