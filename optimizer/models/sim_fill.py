"""How the offline agents fill tool arguments: values found in the task text (then in earlier tool
results, see `optimizer.values`), matched to parameters by type, enum, format, pattern, name and
description — the same things a real model reads."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

from optimizer.text import STOPWORDS, terms, words
from optimizer.values import (
    ENTITY_KINDS,
    FREE_TEXT_WORDS,
    ID_WORDS,
    MONTHS,
    PROSE_WORDS,
    Found,
    find_values,
    property_kinds,
    wants_cents,
)


def fill_arguments(
    schema: Mapping[str, Any], clause: str, prompt: str, results: Sequence[str], prefer: AbstractSet[str] = frozenset()
) -> dict[str, Any]:
    """Arguments for a call: every required parameter, plus optional ones with a confident value.
    Parameters that ask for a kind of value (an email, a date, an id shape) choose first, so a vague
    parameter listed before them cannot take the value they name."""
    found = find_values(clause, 0) + find_values(prompt, 1)
    for text in results:  # successful results only: an error's example value is not data
        found += find_values(text, 2)
    props: Mapping[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    args: dict[str, Any] = {}
    used: set[str] = set()
    typed = {name: bool(set().union(*property_kinds(name, prop)[:2])) for name, prop in props.items()
             if isinstance(prop, Mapping)}
    for name in sorted(typed, key=lambda n: not typed[n]):
        value = _value_for(name, props[name], found, used, clause, prefer, required=name in required)
        if value is not None:
            args[name] = value
            used.add(str(value))
    return {name: args[name] for name in props if name in args}


def _value_for(
    name: str, prop: Mapping[str, Any], found: list[Found], used: set[str], clause: str, prefer: AbstractSet[str],
    *, required: bool,
) -> Any:
    kinds, shapes, hint = property_kinds(name, prop)
    ptype = prop.get("type")
    if "enum" in prop:
        return _enum_value(prop["enum"], clause, required)
    if ptype == "boolean":
        return None
    if ptype in ("integer", "number"):
        return _numeric_value(found, ptype, hint, kinds, required)
    listed = _listed_options(str(prop.get("description") or ""))
    if listed:
        return _enum_value(listed, clause, required=False) or (_keywords(clause) if required else None)
    shaped = shapes | prefer
    wanted = shaped | (kinds - {"money"})
    pool = [f for f in found if f.value not in used and f.kind not in ("number", "money")]
    ranked = sorted(pool, key=lambda f: (f.origin, f.position))
    for f in ranked:
        if f.kind in shaped:
            return f.value
    converted = _convert(found, shaped)
    if converted is not None:
        return converted
    for f in ranked:
        if f.kind in wanted or (f.kind == "date_text" and "date" in wanted):
            return f.value
    tokens = set(words(name))
    if wanted and not required:
        return None
    entities = [f for f in ranked if f.kind in ENTITY_KINDS]
    if tokens & FREE_TEXT_WORDS:
        quoted = [f.value for f in found if f.kind == "quoted" and f.origin == 0]
        local = [f.value for f in entities if f.origin == 0]
        return quoted[0] if quoted else local[0] if local else _keywords(clause)
    if tokens & PROSE_WORDS and not wanted:
        quoted = [f.value for f in found if f.kind == "quoted" and f.value not in used]
        return quoted[0] if quoted else (clause.strip() if required else None)
    if entities and (required or tokens & ID_WORDS):
        return entities[0].value
    return _keywords(clause) if required else None


def _convert(found: list[Found], shaped: set[str]) -> str | None:
    """Reformat a value toward a shape the definition or an error asked for (`#` ids, ISO dates)."""
    for f in sorted(found, key=lambda f: f.origin):
        if "hash_id" in shaped and f.kind == "number" and re.fullmatch(r"\d{3,}", f.value):
            return f"#{f.value}"
        if "date" in shaped and f.kind == "date_text":
            return _iso(f.value)
    return None


def _iso(text: str) -> str:
    parts = re.findall(r"[A-Za-z]+|\d+", text)
    month = next(MONTHS[p[:3].lower()] for p in parts if p[:3].lower() in MONTHS)
    numbers = [int(p) for p in parts if p.isdigit()]
    year = next(n for n in numbers if n > 31)
    day = next(n for n in numbers if n <= 31)
    return f"{year:04d}-{month:02d}-{day:02d}"


def _listed_options(description: str) -> list[str]:
    """Values a description offers as a closed list ("one of: a, b or c")."""
    match = re.search(r"\b(?:one of|either|must be|can be)[:\s]+([^.;()]+)", description, re.IGNORECASE)
    if not match:
        return []
    options = [o.strip(" '\"`") for o in re.split(r",|\bor\b", match.group(1))]
    return [o for o in options if o and len(o.split()) <= 3]


def _enum_value(options: Sequence[Any], clause: str, required: bool) -> Any:
    lowered = set(terms(clause))
    for option in options:
        if isinstance(option, str) and set(terms(option)) and set(terms(option)) <= lowered:
            return option
    return options[0] if required and options else None


def _numeric_value(found: list[Found], ptype: Any, hint: str, kinds: set[str], required: bool) -> Any:
    money = [f for f in found if f.kind == "money" and f.origin < 2]
    numbers = [f for f in found if f.kind == "number" and f.origin < 2]
    if money and ("money" in kinds or not numbers):
        amount = float(money[0].value.replace("$", "").replace(",", "").strip())
        if wants_cents(hint):
            return int(round(amount * 100))
        return int(amount) if ptype == "integer" else amount
    if numbers:
        value = float(numbers[0].value)
        return int(value) if ptype == "integer" else value
    return None if not required else 1


def _keywords(text: str) -> str:
    kept = [w.strip(".,") for w in re.findall(r"[\w@.#/-]+", text) if w.lower().strip(".,") not in STOPWORDS]
    return " ".join(kept[:8]) or text.strip()
