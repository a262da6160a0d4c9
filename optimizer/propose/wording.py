"""The sentences of a tool description, built from what the server shows: the tool's name, its old description,
its inputs and the fields its results hold. General English only (verb forms, articles, plurals).

- `purpose`: the trigger, verb first: "Look up a customer by email address or customer id".
- `returns`: what comes back: "returns its tier, status and shipping address".
- `job`: another tool's job for a boundary line, from its own name and result fields: "tracking a
  shipment's last scan or estimated delivery".
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from optimizer.lint.rules_description import FILLER as LINT_FILLER
from optimizer.lint.vocabulary import KNOWN_VERBS, VERB_CLASS, WRITE_VERBS
from optimizer.propose.leakage import common_words
from optimizer.text import STOPWORDS, first_sentence, stem, words
from optimizer.values import KIND_AS_WORD

LOOK_UP = frozenset(("get", "fetch", "retrieve", "lookup", "obtain", "load"))
"""Verbs whose plain English for a reader is "look up"."""
FILLER = frozenset(("info", "information", "detail", "details", "data", "item", "items", "entry", "entries", "record",
                    "records", "object", "objects", "thing", "things", "stuff", "value", "result", "results",
                    "resource", "element", "entity"))
VALUE_WORDS = frozenset(stem(w) for w in KIND_AS_WORD.values())
"""What a value is called ("id", "email"): "Get by id" says no more than `get`."""
NOUN_ENDINGS = ("tion", "sion", "ity", "ment", "ness", "ory", "ure", "ance", "ence", "ship", "ist", "al", "ent",
                "er", "or", "ics", "age")
"""Endings of nouns and adjectives ("directory", "current"): such a first word does not make a name verb_object."""
BY_VERBS = frozenset(("get", "search", "list", "delete"))
"""Verb classes (lint's `VERB_CLASS`) that take their inputs "by" something; others take them "with"."""
_PREAMBLE = re.compile(r"^(?:this|the)\s+(?:tool|function|endpoint|api|method)\s+(?:allows|lets|enables|helps)?\s*"
                       r"(?:you|users|the user|the agent)?\s*(?:to|is used to|can be used to|will|is for)?\s*", re.I)
BOUNDARY = re.compile(r"\b(not for|not to be used|do not use|don't use|instead|rather than)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Action:
    """What a tool name says: a verb as a reader says it ("look up"), its class, and its object ("customer")."""

    verb: str
    kind: str
    object: str

    @property
    def plural(self) -> bool:
        last = (self.object.split() or [""])[-1]
        return last != singular(last)


def action(name: str, noun: str | None = None, old: str = "") -> Action:
    """The action a name says: its first word when that is a known verb, or when the name reads verb_object
    and the first word does not look like a noun (`renew_loan`, not `directory_tree`). A name without a verb
    takes the old description's first word when that is one ("Check availability."), or its verb and object when
    it opens in the third person ("Switches branches." for `checkout`: switch branches), else "show"; a name
    without an object (or only filler, `get_item`) takes `noun`."""
    parts = words(name.replace(".", " "))
    nounlike = bool(parts) and (parts[0].endswith(NOUN_ENDINGS) or parts[0] in FILLER)
    verb = parts[0] if parts and (parts[0] in KNOWN_VERBS or (len(parts) > 1 and not nounlike)) else ""
    rest = [p for p in (parts[1:] if verb else parts) if p not in FILLER]
    opening = words(first_sentence(old))
    lead = (opening or [""])[0]
    if not verb and lead not in KNOWN_VERBS and opening and _opens_with_verb(opening):
        verb = _base_form(lead)  # "Switches branches." for `checkout`: the author's verb and object
        rest = list(itertools.takewhile(lambda w: w not in STOPWORDS, itertools.dropwhile(
            lambda w: w in STOPWORDS, opening[1:])))[:3] or rest
    if not verb:
        verb = lead if lead in KNOWN_VERBS else "show"
    kind = VERB_CLASS.get(stem(verb), verb)
    obj = " ".join(rest) or (plural(noun) if noun and kind in ("search", "list") else noun or "")
    said = "look up" if verb in LOOK_UP else "search" if verb == "query" else verb
    return Action(said, kind, obj)


def purpose(name: str, old: str, inputs: Sequence[str], optional: Sequence[str] = (), *, noun: str | None = None,
            with_article: bool = True) -> str:
    """The trigger, verb first, no preamble: the old first sentence when it says more than the name (40+
    characters), else the name's action and object (with its article unless `with_article` is False), the kinds of
    input it goes by and, when known, one optional input ("Update an issue by issue key, setting a new
    status"; "Find events by keywords, optionally by ISO date")."""
    kept = old_trigger(old)
    if len(kept) >= 40 or says_more(kept, name):
        return kept
    act = action(name, noun, old)
    if kept and act.verb == "show" and words(name)[:1] != ["show"]:
        return kept  # a name without a verb gives no better one than the author's sentence
    obj = object_phrase(act) if with_article else act.object
    if not obj and not inputs:  # nothing known beyond the name: its old words, or its own
        return kept or " ".join(words(name)).capitalize()
    text = f"{act.verb} {obj}".strip()
    writes = act.kind in ("create", "update") or (act.kind not in BY_VERBS and act.verb in WRITE_VERBS)
    if inputs:
        said = [f"a {i}" if i.split()[0].endswith("'s") else i for i in inputs[:2]]  # "a person's email address"
        text += (" with " if writes and act.kind != "update" else " by ") + and_(said)
    if optional:
        setting = act.kind in ("update", "create")
        extra = [f"{article(o)} {o}" if (setting and singular(o.split()[-1]) == o.split()[-1])
                 or o.split()[0].endswith("'s") else o for o in optional]
        text += (", setting " if setting else ", optionally by ") + or_(extra[:2])
    return text[:1].upper() + text[1:]


def says_more(sentence: str, name: str) -> bool:
    """Whether a short old first sentence is worth keeping: it opens with a verb and either names the name's
    object and something more ("Convert time between timezones" for `convert_time`), or explains a name that
    holds no verb ("Add a business insight to the memo" for `append_insight`)."""
    said = words(sentence)
    if not said or not _opens_with_verb(said):
        return False
    parts = words(name.replace(".", " "))
    if parts and parts[0] not in KNOWN_VERBS:
        return len(said) >= 3
    own = {stem(p) for p in parts} | {stem(w) for w in FILLER} | set(LINT_FILLER) | VALUE_WORDS
    rest = {stem(w) for w in said[1:] if w not in STOPWORDS}
    return {stem(p) for p in parts[1:]} <= rest and bool(rest - own)


def _base_form(third_person: str) -> str:
    """switches -> switch, unstages -> unstage, copies -> copy."""
    if third_person.endswith("ies"):
        return third_person[:-3] + "y"
    if third_person.endswith(("ches", "shes", "xes", "sses", "zes")):
        return third_person[:-2]
    return third_person[:-1]


def _opens_with_verb(said: Sequence[str]) -> bool:
    """A known verb, or a word in the third person a description opens with ("Switches branches", "Unstages all
    staged changes"; not "Details of …", "Status")."""
    first = said[0]
    third_person = len(said) > 1 and re.fullmatch(r"[a-z]{3,}[^su]s", first) and said[1] not in ("of", "for", "and")
    return first in KNOWN_VERBS or bool(third_person)


def old_trigger(old: str) -> str:
    """The old description's first sentence without preamble, in the imperative ("Reads a file" -> "Read a
    file"), or "" when it draws a boundary."""
    text = _PREAMBLE.sub("", first_sentence(old or "")).strip().rstrip(".")
    if not text or BOUNDARY.search(text):
        return ""
    first, _, rest = text.partition(" ")
    bare = imperative(first)
    return f"{bare[:1].upper()}{bare[1:]} {rest}".strip()


def _spelled(label: str) -> str:
    """A field label as it is written: a short word English does not have is an abbreviation ("is dst" ->
    "is DST", "sku" -> "SKU")."""
    return " ".join(w.upper() if len(w) <= 4 and abbreviation(w) else w for w in label.split())


def abbreviation(word: str) -> bool:
    """A short word English does not have: "dst", "sku", "etd"."""
    lower = word.lower()
    return 2 <= len(word) <= 5 and word.isalpha() and lower not in STOPWORDS and lower not in common_words()


def spelled_out(short: str, texts: Iterable[str]) -> str | None:
    """The words an abbreviation stands for, when the texts say them: a run of common English words in one clause
    whose initials spell it, all in lower case or all capitalised, a function word between two of them skipped or
    spelled ("dst" -> "daylight saving time", "etd" -> "estimated time of departure", "dob" -> "date of birth");
    None when no text does, or when the texts spell it two ways."""
    letters = short.lower()
    if not abbreviation(letters):
        return None
    common = common_words()
    found: set[str] = set()
    for text in texts:
        for clause in re.split(r"[.,;:!?()\"“”\n]+", text):
            tokens = re.findall(r"[A-Za-z][A-Za-z'’]*", clause)
            lowered = [t.lower() for t in tokens]
            for start in range(len(tokens)):
                run = _initials_run(lowered, start, letters, common)
                cased = {t[:1].isupper() for t in tokens[start:start + len(run)] if t.lower() not in STOPWORDS}
                if run and len(cased) == 1:  # lower case, or Title Case throughout; not a name beside words
                    found.add(" ".join(run))
    return found.pop() if len(found) == 1 else None


def _initials_run(tokens: Sequence[str], start: int, letters: str, common: frozenset[str]) -> list[str]:
    run: list[str] = []
    at = start
    for index, letter in enumerate(letters):
        inner = 0 < index < len(letters) - 1
        word = tokens[at] if at < len(tokens) else ""
        if run and word in STOPWORDS and not (inner and word[:1] == letter) and at + 1 < len(tokens):
            run.append(word)  # "time of arrival" spells "eta"
            at += 1
            word = tokens[at]
        function = word in STOPWORDS and not inner
        if word[:1] != letter or function or (word not in common and word not in STOPWORDS) or word == letters:
            return []
        run.append(word)
        at += 1
    return run


def spell_out(label: str, texts: Iterable[str]) -> str:
    """A field label with each abbreviation the texts spell out said in words first: "is dst" -> "is daylight saving
    time (DST)"."""
    said = list(texts)
    out = []
    for word in label.split():
        words_for = spelled_out(word, said)
        out.append(f"{words_for} ({word.upper()})" if words_for else word)
    return " ".join(out)


def returns(act: Action, fields: Sequence[str], count_noun: str | None = None) -> str:
    """ "returns its tier and status" / "returns each document's owner and excerpt" / "returns matching
    documents"; "" when nothing is known."""
    if not fields:
        return f"returns matching {count_noun}" if count_noun and act.kind == "search" else ""
    own = set(words(act.object))
    shown = [_spelled(f) for f in fields if not set(words(f)) <= own]
    if not shown:
        return ""
    flags = [f for f in shown if f.split()[0] in ("is", "has", "can") and len(f.split()) > 1]
    plain = [f for f in shown if f not in flags]
    whether = [f"whether it {f}" for f in flags]  # a yes/no field, `is_dst`: "whether it is DST"
    if not plain:
        return f"returns {and_(whether)}"
    if act.plural or count_noun:
        thing = singular((act.object.split() or [""])[-1]) or singular(count_noun or "")
        listed = f"each {thing}'s {and_(plain)}" if thing else and_(plain)
    else:
        listed = f"its {and_(plain)}"
    return f"returns {listed}{', and ' + and_(whether) if whether else ''}"


def job(act: Action, fields: Sequence[str], gerund_form: bool = False) -> str:
    """Another tool's job as a phrase: what a lookup returns ("a customer's tier or status", "policies") unless
    `gerund_form`, else the action as a gerund ("tracking a shipment's last scan", "looking up a task")."""
    obj = object_phrase(act)
    if act.verb == "look up" and not gerund_form:  # what a lookup is for is the thing it returns
        bare = fields or not act.object or act.plural or uncountable(act.object)
        verb, obj = "", (obj if bare else plural(act.object))
    else:
        verb = " ".join([gerund(act.verb.split()[0]), *act.verb.split()[1:]])
    if fields and obj:
        if act.plural:
            return f"{verb} {obj} with their {or_(list(fields))}".strip()
        if uncountable(act.object):
            return f"{verb} {obj}, its {or_(list(fields))}".strip()
        return f"{verb} {obj}'s {or_(list(fields))}".strip()
    return f"{verb} {obj}".strip()


def object_phrase(act: Action) -> str:
    """The object with an article when it is one thing ("a customer"), bare when plural ("orders")."""
    if not act.object or act.plural or uncountable(act.object):
        return act.object
    return f"{article(act.object)} {act.object}"


# --- English forms -------------------------------------------------------------------------------------------

def gerund(verb: str) -> str:
    """track -> tracking, create -> creating, get -> getting, see -> seeing."""
    if verb.endswith("ie"):
        return verb[:-2] + "ying"
    if verb.endswith("e") and not verb.endswith(("ee", "ye", "oe")) and len(verb) > 2:
        return verb[:-1] + "ing"
    vowels = re.findall(r"[aeiou]+", verb)
    if len(vowels) == 1 and re.search(r"[^aeiou][aeiou][^aeiouwxy]$", verb):
        return verb + verb[-1] + "ing"
    return verb + "ing"


def imperative(word: str) -> str:
    """A third-person verb as an imperative when it is a known verb ("Reads" -> "Read"), else the word."""
    lower = word.lower()
    for cut in ("es", "s"):
        base = lower[: -len(cut)] if lower.endswith(cut) and not lower.endswith("ss") else ""
        if base in KNOWN_VERBS:
            return word[: len(base)]
    return word


def uncountable(noun: str) -> bool:
    """Abstract nouns that take no article ("availability", "readiness")."""
    return noun.endswith(("ity", "ness"))


def article(noun: str) -> str:
    return "an" if noun[:1].lower() in "aeiou" and not noun.lower().startswith(("us", "uni", "one")) else "a"


def singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ses", "xes", "ches", "shes")):
        return word[:-2]
    return word[:-1] if word.endswith("s") and not word.endswith(("ss", "us", "is")) else word


def plural(noun: str) -> str:
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    return noun[:-1] + "ies" if noun.endswith("y") and noun[-2:-1] not in "aeiou" else noun + "s"


def and_(items: Sequence[str]) -> str:
    return _joined(items, "and")


def or_(items: Sequence[str]) -> str:
    return _joined(items, "or")


def _joined(items: Sequence[str], word: str) -> str:
    items = [i for i in items if i]
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} {word} {items[-1]}" if items else ""


def content(text: str) -> set[str]:
    """Lower-case content words of a text."""
    return {w for w in words(text) if w not in STOPWORDS}
