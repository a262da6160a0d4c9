"""A parameter's format as the evidence shows it, written in the proposer's own words with invented examples.

What a validation message says is read for its facts only (the kinds of value it names, each with its noun and
the shape of its example, a closed list of values, a short value-free constraint such as "a positive whole
number"); the message itself, and any value an agent sent, are never written. `Format.text` renders the facts:
"A customer id, e.g. C-2468, or an email address, e.g. name@example.com." Example values are invented by
`invent`: same shape, never a value of the `avoid` set nor one `leaked_phrases` finds in the prompts.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from optimizer.propose.evidence import listed, listing
from optimizer.propose.leakage import leaked_phrases
from optimizer.text.tokens import STOPWORDS, words
from optimizer.text.values import KIND_WORDS, find_values

NOUNS = {"email": "email address", "phone": "phone number", "date": "ISO date", "date_text": "date", "url": "URL",
         "path": "path", "hash_id": "number", "prefixed_id": "id", "code": "code", "time": "time", "money": "amount"}
"""What to call a value of each kind when nothing better is known."""
FIXED = {"date": "YYYY-MM-DD", "time": "HH:MM"}
"""Kinds whose format is worth spelling out before the example."""
SHOWN = frozenset(NOUNS)
_PRESENCE = re.compile(r"(?:provided|given|specified|supplied|set|present|included|non-?empty|true|false)\b",
                       re.IGNORECASE)
"""What "must be provided" / "must be true" asks: that a value be there or a flag be on, not a kind of value."""
_ASKS = re.compile(r"\b(?:must(?:\s+be|\s+look\s+like)?|should\s+be|expected|expects|needs\s+to\s+be|is\s+not|"
                   r"isn't|requires?|accepts?|takes?)\b\s*", re.IGNORECASE)
_EXAMPLE = re.compile(r"\s*,?\s*\b(like|such as|e\.g\.|for example|for instance)\s*:?\s*", re.IGNORECASE)
_TIME = re.compile(r"\b(?:[01]?\d|2[0-3]):[0-5]\d\b")
_ARTICLE = re.compile(r"^(?:an?|the|one|any)\s+", re.IGNORECASE)
_PATTERN = re.compile(r"\b(?:(?:DD|MM|YYYY|YY)[/.-]){1,2}(?:DD|MM|YYYY|YY)\b")
"""A date written as its pattern ("DD/MM/YYYY", "MM/YYYY"): said as it stands, with an example in that pattern."""
_COPULA = re.compile(r"^(?:an?|the)\s+([a-z][a-z ]{1,30}?)\s+(?:is|are)\s+(?!not\b)(.+)$", re.IGNORECASE)
"""A requirement stated as "an employee id is E- and five digits, like E-00042": what it is, then an example of
its shape ("the account is locked" asks for nothing)."""


@dataclass
class Alternative:
    """One kind of value a parameter takes: what to call it, its kind (`values` kinds, "time" or "") and a
    value of its shape seen in server text ("" when none)."""

    noun: str
    kind: str = ""
    shape: str = ""


@dataclass
class Format:
    gloss: str = ""
    """what the server calls the parameter ("the new status")"""
    alternatives: list[Alternative] = field(default_factory=list)
    options: list[str] = field(default_factory=list)
    """a closed list of values"""
    cents: bool = False
    constraint: str = ""
    """a short value-free requirement ("a positive whole number")"""
    listed: list[str] = field(default_factory=list)
    """values the server itself showed for it (its results, or a probe it passed), not a closed list"""

    def known(self) -> bool:
        return bool(self.gloss or self.alternatives or self.options or self.cents or self.constraint or self.listed)

    def text(self, prompts: Sequence[str], avoid: Iterable[str] = (), *, examples: bool = True) -> str:
        """The facts as one or two sentences, or ""; with `examples`, an invented value of each shape."""
        avoid = set(avoid)
        parts = []
        kinds = [a for a in self.alternatives if a.noun]
        if kinds:
            parts.append(_shown(kinds, prompts, avoid, examples=examples))
        if self.cents:
            amount = invent("money", "", prompts, avoid) if examples else ""
            cents = re.sub(r"\D", "", amount)
            parts.append(f"an amount in cents, e.g. {cents} for {amount}" if amount else "an amount in cents")
        if self.constraint and not kinds:
            parts.append(self.constraint)
        head = self.gloss if self.gloss and not any(self.gloss.lower() in p.lower() for p in parts) else ""
        if self.options:
            parts.append(f"one of: {listing(self.options)}")
        elif self.listed:
            parts.append(f"values the server lists: {listing(self.listed)}")
        if head:
            parts.insert(0, head)
        text = "; ".join(p for p in parts if p)
        return f"{text[:1].upper()}{text[1:]}." if text else ""


def read_message(message: str, sent: Iterable[str]) -> Format:
    """The facts of one validation message about a parameter; `sent` are the values agents gave it, never
    taken as examples. A message that asks for nothing it can name gives an empty Format."""
    text = re.split(r"\s*\(got\b|\s+-\s+|;\s*(?:got|received|you sent)\b", message, maxsplit=1)[0].strip().rstrip(".")
    text = re.sub(r"\be\.g\.", "like", text)
    for value in sorted({str(v) for v in sent if str(v).strip()}, key=len, reverse=True):
        text = re.sub(rf"(?<![\w-]){re.escape(value)}(?![\w-])", " ", text)
    text = re.sub(r"([\"'“])[^\"'“”]*[\"'”]", " ", text)  # quoted text is what was sent, not what is asked
    pattern = _PATTERN.search(text)
    if pattern and pattern[0] != "YYYY-MM-DD":  # the ISO form reads as "an ISO date" below
        return Format(alternatives=[Alternative("month" if "DD" not in pattern[0] else "date", "pattern", pattern[0])])
    copula = _COPULA.match(text.strip())
    if copula and not _ASKS.search(text):
        example = (_EXAMPLE.split(copula[2], maxsplit=1) + ["", ""])[2].strip()
        text = f"must be a {copula[1]} like {example}" if example else text  # a shape shown, or nothing asked
    asked = _ASKS.split(text, maxsplit=1)
    if len(asked) < 2:
        return Format()
    what = re.split(r";|\.\s", asked[1], maxsplit=1)[0].strip()
    out = Format()
    if re.match(r"not\b", what, re.IGNORECASE) or _PRESENCE.match(what):
        return out
    options = listed(what)
    if "one of:" in options:
        out.options = [o.strip() for o in re.split(r",|\bor\b", options.split("one of:", 1)[1]) if o.strip()]
        head = options.split("one of:", 1)[0].strip().rstrip(",")
        out.gloss = _noun(head) if head else ""
        return out
    # "or", a comma before an article, or a comma before a middle item of a list ("an email address, phone number or
    # customer id"), not one before a qualifier ("a date, in YYYY-MM-DD form")
    for part in re.split(r",?\s+\bor\b\s+|,\s+(?=an?\s)|,\s+(?=[a-z][a-z ]{0,30}(?:,|\s+or\s))", what):
        if re.match(r"\s*not\b", part, re.IGNORECASE):
            continue
        alternative = _alternative(part)
        same = [a for a in out.alternatives if alternative and a.kind == alternative.kind]
        if alternative and not (same and alternative.noun == NOUNS.get(alternative.kind)):  # "ENG-1 or OPS-2"
            out.alternatives.append(alternative)
    phrase = re.match(r"(?:an?|the)\s[^,;:]+$", what.strip(), re.IGNORECASE)  # "a positive whole number", whole
    if not out.alternatives and phrase and not find_values(what, 0):
        plain = _noun(what, limit=5)
        out.constraint = plain if len(words(plain)) >= 2 else ""
    return out


def read_gloss(gloss: str) -> Format:
    """What a message calls a parameter, "user (an assignee email)": a noun phrase, with the kind it names; or
    the values it lists, "status (open, closed)"."""
    if gloss.lower().startswith("one of:"):
        return Format(options=[o.strip() for o in re.split(r",|\bor\b", gloss[7:]) if o.strip()])
    if find_values(gloss, 0) or len(words(gloss)) > 6 or gloss.lower().startswith("got"):
        return Format()
    noun = _noun(gloss)
    kind = _named_kind(noun)
    lead = re.match(r"the\s+", gloss.strip(), re.IGNORECASE)
    return Format(alternatives=[Alternative(noun, kind)]) if kind else Format(gloss=f"{'the ' if lead else ''}{noun}")


def _alternative(part: str) -> Alternative | None:
    """One "a customer id like C-1042" / "an ISO date YYYY-MM-DD" / "an email address" as facts: the noun
    before the example, the example's kind and shape (a token of unknown kind is kept as a shape to renumber)."""
    head, _, tail = (*_EXAMPLE.split(part, maxsplit=1), "", "")[:3]
    values = [f for text in (tail, head) for f in find_values(text, 0) if f.kind in SHOWN]
    times = _TIME.findall(f"{tail} {head}")
    if values:
        shape, kind = values[0].value, values[0].kind
    elif times:
        shape, kind = times[0], "time"
    elif tail.split():
        shape, kind = tail.split()[0].rstrip(".,;:"), _named_kind(head) or "token"
    else:
        shape, kind = "", _named_kind(head)
    head = head.replace(shape, " ") if shape else head
    noun = _noun(re.sub(r"\b(?:YYYY-MM-DD|HH:MM|ISO\s*8601|format)\b", " ", head))
    if (kind in KIND_WORDS or kind == "time") and noun and not set(words(noun)) & (set(words(NOUNS[kind]))
                                                                           | _kind_words(kind)):
        noun = f"{noun} {NOUNS[kind]}" if len(words(noun)) < 3 else NOUNS[kind]
    noun = noun or NOUNS.get(kind, "")
    return Alternative(noun, kind, shape) if noun else None


def _named_kind(text: str) -> str:
    """The kind of value a phrase names by its words ("an ISO date", "an email"), or ""."""
    lowered = text.lower()
    if "yyyy" in lowered or re.search(r"\biso\b.*\bdate\b", lowered):
        return "date"
    if "hh:mm" in lowered:
        return "time"
    tokens = set(words(text))
    for kind in ("email", "phone", "url", "path", "date"):
        if tokens & _kind_words(kind):
            return kind
    return ""


def _kind_words(kind: str) -> frozenset[str]:
    return KIND_WORDS.get(kind, frozenset()) - {"when", "start", "end", "since", "due", "day", "file"}


def _noun(text: str, limit: int = 4) -> str:
    """A short noun phrase: article, trailing link words and punctuation dropped; "" when longer than `limit`."""
    text = _ARTICLE.sub("", re.sub(r"[^\w\s'’-]", " ", text).strip())
    parts = text.split()
    while parts and parts[-1].lower() in STOPWORDS | {"like", "such", "as"}:
        parts.pop()
    return " ".join(parts) if 0 < len(parts) <= limit else ""


def _shown(kinds: Sequence[Alternative], prompts: Sequence[str], avoid: set[str], *, examples: bool = True) -> str:
    """ "an ISO date, YYYY-MM-DD, e.g. 2031-05-17"; "an email address, phone number or customer id, e.g.
    +2-468-0135 or C-2468" (an email address needs no example among others)."""
    nouns = [a.noun for a in kinds]
    article = "an" if nouns[0][:1].lower() in "aeiou" and not nouns[0].lower().startswith(("us", "uni")) else "a"
    fixed = (kinds[0].shape if kinds[0].kind == "pattern" else FIXED.get(kinds[0].kind, "")) if len(kinds) == 1 else ""
    fixed = f", {fixed}" if fixed and fixed.lower() not in nouns[0].lower() else ""
    invented = [invent(a.kind, a.shape, prompts, avoid) for a in kinds
                if examples and (a.kind != "email" or len(kinds) == 1)]
    invented = [e for e in invented if e]
    text = f"{article} {nouns[0] if len(nouns) == 1 else ', '.join(nouns[:-1]) + ' or ' + nouns[-1]}{fixed}"
    return text + (f", e.g. {' or '.join(invented)}" if invented else "")


# --- invented examples ----------------------------------------------------------------------------------

_PLAIN = {"email": ("name@example.com", "someone@example.org", "person@example.net"),
          "date": ("2031-05-17", "2032-06-18", "2033-07-19"), "date_text": ("May 17, 2031", "June 18, 2032"),
          "time": ("16:45", "17:50", "08:15"), "url": ("https://example.com/page", "https://example.org/item"),
          "money": ("$24.68", "$35.79", "$46.80")}
"""Kinds whose examples are picked from a short list (renumbering would break a date or a time)."""


def invent(kind: str, shape: str, prompts: Sequence[str], avoid: Iterable[str] = ()) -> str:
    """A value of `kind` shaped like `shape` that is not `shape`, not in `avoid`, and not in the prompts; ""
    when none of the tries is free."""
    avoid = {a.lower() for a in avoid} | {shape.lower()}
    base = _path(shape) if kind == "path" else shape
    tries = list(_PLAIN.get(kind, ())) or ([_renumbered(base, shift) for shift in range(10)] if base else [])
    if kind == "pattern":
        tries = [_dated(shape, day) for day in _PLAIN["date"]]
    if kind == "path":
        tries.insert(0, base)
    return next((t for t in tries if t.lower() not in avoid and not leaked_phrases(t, prompts)), "")


def _dated(pattern: str, day: str) -> str:
    """An ISO day ("2031-05-17") written in a pattern ("DD/MM/YYYY" -> "17/05/2031")."""
    year, month, date = day.split("-")
    parts = {"YYYY": year, "YY": year[2:], "MM": month, "DD": date}
    return re.sub(r"YYYY|YY|MM|DD", lambda found: parts[found.group(0)], pattern)


def _renumbered(value: str, shift: int) -> str:
    """`value` with its digits replaced, in turn, by those of a fixed cycle started at `shift`."""
    digits = itertools.cycle("2468013579"[shift:] + "2468013579"[:shift])
    return re.sub(r"\d", lambda _match: next(digits), value)


def _path(shape: str) -> str:
    """A path with as many parts as `shape` and its extension: "folder/subfolder/name.md"."""
    parts = [p for p in shape.split("/") if p]
    if not parts:
        return ""
    ext = re.search(r"\.[A-Za-z0-9]{1,5}$", parts[-1])
    names = ["folder", "subfolder", "notes", "drafts", "archive"]
    made = [*(names[i % len(names)] for i in range(len(parts) - 1)), "example" + (ext.group(0) if ext else "")]
    return ("/" if shape.startswith("/") else "") + "/".join(made)
