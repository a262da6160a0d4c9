"""Closed choices and numbers for the simulated agents (test doubles): which enum option the text names, the
options and default a description states in words, booleans, and which number belongs to which numeric parameter."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from optimizer.text.tokens import terms, words
from optimizer.text.values import NUMBER_WORDS, amount, find_values, property_kinds, wants_cents

from .reading import Reading

_GENERIC = frozenset(terms("name id path key value if provided given optional number"))


def choose_option(options: Sequence[Any], clause: str, default: Any, required: bool) -> Any:
    """The option the text names: all its words or stems; else a word it begins or is the start of ("desc"
    for "descending"); else half or more of its words. The most specific, then the earliest wins. Nothing named:
    when required, the schema's default, then the first option."""
    text_terms = set(terms(clause))
    text_words = [w.lower() for w in words(clause)]
    best: tuple[float, int, Any] | None = None
    for option in options:
        if not isinstance(option, str):
            continue
        own = set(terms(option))
        lowered = option.lower()
        if own and own <= text_terms:
            score = 10.0 + len(own)
        elif len(lowered) >= 3 and any(w.startswith(lowered) or (len(w) >= 4 and lowered.startswith(w))
                                       for w in text_words):
            score = 5.0
        elif own and len(own & text_terms) * 2 >= len(own):
            score = 3.0 + len(own & text_terms) / len(own)
        else:
            continue
        spot = clause.lower().find(min(own, default=lowered)[:4])
        spot = spot if spot >= 0 else len(clause)
        if best is None or (score, -spot) > (best[0], -best[1]):
            best = (score, spot, option)
    if best is not None:
        return best[2]
    if not required or not options:
        return None
    return default if default in options else options[0]


def listed_options(description: str) -> list[str]:
    """Values a description offers as a closed list: "one of: a, b or c", "Which field: email, phone or
    address", or two or more quoted values that are not examples ("'local', 'remote' or 'all'";
    "e.g. 'America/New_York'" is an example)."""
    offered = re.sub(r"\b(?:e\.g\.?|for example|for instance|such as|like|i\.e\.?)[,:]?[^.;)]*", " ", description,
                     flags=re.IGNORECASE)
    for pattern in (r"\b(?:one of|either|must be|can be)[:\s]+([^.;()]+)", r":\s*([^.;():]+)"):
        match = re.search(pattern, offered, re.IGNORECASE)
        if match:
            options = [o.strip(" '\"`") for o in re.split(r",|\bor\b|\band\b", match.group(1))]
            options = [o for o in options if o]
            if len(options) >= 2 and all(len(o.split()) <= 3 for o in options):
                return options
    quoted = [a or b or c for a, b, c in re.findall(r"'([^'\s]{1,30})'|\"([^\"\s]{1,30})\"|`([^`\s]{1,30})`",
                                                     offered)]
    return list(dict.fromkeys(quoted)) if len(set(quoted)) >= 2 else []


def described_default(description: str) -> str | None:
    """A default the description states: "defaults to 'main'", "Default: 10"."""
    stated = re.search(r"\bdefaults?(?:\s+(?:is|to|value is))?[:\s]+['\"`]?([\w/.:+-]+)", description, re.IGNORECASE)
    if stated and stated.group(1).lower() not in ("the", "a", "an", "none", "null", "if", "when"):
        return stated.group(1).strip(".")
    return None


def boolean_value(name: str, prop: Mapping[str, Any], clause: str, required: bool) -> bool | None:
    """True when the text says the parameter's words ("recursive", "dry run") with no "not" before them; else,
    when required, its default or False."""
    said = [w.lower() for w in words(clause)]
    own = [w for w in words(name) if len(w) >= 3]
    spots = [next((i for i, s in enumerate(said) if s[:5] == w[:5]), -1) for w in own]
    if own and all(i >= 0 for i in spots):
        negated = set(said[max(0, min(spots) - 3):min(spots)]) & {"not", "no", "without", "don", "dont", "never"}
        if not negated:
            return True
        return False if required else None
    return bool(prop.get("default", False)) if required else None


def number_claims(props: Mapping[str, Mapping[str, Any]], clause: str) -> dict[int, str]:
    """Position of each number in the clause → the numeric parameter whose own words stand next to it
    ("the first 4 lines" → the parameter described as "the first N lines"); a tie claims nothing."""
    numeric = {name: set(terms(f"{name} {prop.get('description') or ''}")) - _GENERIC
               for name, prop in props.items() if prop.get("type") in ("integer", "number")}
    claims: dict[int, str] = {}
    if not numeric:
        return claims
    for position, _value, _spelled in numbers_in(clause):
        near = set(terms(clause[max(0, position - 25):position + 30]))
        scores = sorted(((len(own & near), name) for name, own in numeric.items()), reverse=True)
        if scores[0][0] and (len(scores) == 1 or scores[0][0] > scores[1][0]):
            claims[position] = scores[0][1]
    return claims


def numbers_in(text: str) -> list[tuple[int, float, bool]]:
    """(position, value, spelled out) of the numbers in the text: digits, and one to twelve as words."""
    out = [(f.position, float(f.value), False) for f in find_values(text, 0) if f.kind == "number"]
    for match in re.finditer(r"\b(" + "|".join(NUMBER_WORDS) + r")\b", text, re.IGNORECASE):
        out.append((match.start(), float(NUMBER_WORDS[match.group(1).lower()]), True))
    return sorted(out)


def numeric_value(name: str, prop: Mapping[str, Any], reading: Reading, required: bool) -> Any:
    """Money (in cents when the description says so), else the number next to the parameter's own words,
    else — when the parameter is required or the call's only numeric one — the first free number."""
    kinds, _, hint = property_kinds(name, prop)
    ptype = prop.get("type")
    money = [f for f in reading.found if f.kind == "money" and f.origin < 2]
    numbers = [(p, v, s) for p, v, s in numbers_in(reading.clause) if _text(v) not in reading.used]
    if money and ("money" in kinds or not numbers):
        stated = amount(money[0].value) or 0.0
        if wants_cents(hint):
            return int(round(stated * 100))
        return int(stated) if ptype == "integer" else stated
    mine = [v for p, v, _ in numbers if reading.claims.get(p) == name]
    free = [v for p, v, spelled in numbers if p not in reading.claims and not spelled]
    value = mine[0] if mine else free[0] if free and (required or reading.numeric == 1) else None
    if value is None and required:
        elsewhere = [float(f.value) for f in reading.free("number", origin=1)]
        value = elsewhere[0] if elsewhere else prop.get("default", prop.get("minimum", 1))
    if value is None:
        return None
    return int(value) if ptype == "integer" or value == int(value) else value


def _text(value: float) -> str:
    return str(int(value)) if value == int(value) else str(value)
