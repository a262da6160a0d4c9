"""How the simulated agents (test doubles) fill tool arguments: values found in the task text (then in earlier tool
results, see `optimizer.text.values`), matched to parameters by their kind — type, enum, format, pattern, name and
description say which. Values are written in the shape the parameter asks for (`shapes.py`); parameters that take
words get a phrase of the request (`phrases.py`), never the whole request. Optional parameters get a value only
when the text gives a confident one. No rule here reads any one server's definitions."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

from optimizer.text.tokens import terms, words
from optimizer.text.values import (
    ENTITY_KINDS,
    FREE_TEXT_WORDS,
    ID_WORDS,
    PROSE_WORDS,
    Found,
    property_kinds,
    takes_sql,
)

from . import phrases, shapes
from .options import (
    boolean_value,
    choose_option,
    described_default,
    listed_options,
    number_claims,
    numeric_value,
)
from .reading import Reading, flat

NAME_WORDS = frozenset({"name", "names", "person", "people", "author", "owner", "label"})
_NEGATION_WORDS = frozenset({"exclude", "excluded", "excludes", "exclusion", "ignore", "ignored", "skip", "except",
                             "omit", "without"})
_NEGATION_CUE = re.compile(r"\b(?:exclud\w*|except|ignor\w*|skip\w*|omit\w*|without|but not|other than)\b",
                           re.IGNORECASE)
_SOURCE_WORDS = frozenset({"source", "src", "from", "origin", "original", "old"})
_TARGET_WORDS = frozenset({"target", "destination", "dest", "to", "new", "into"})
_GENERIC = frozenset(terms("name names id ids path paths key value values"))
_MAX_ITEMS = 12
# kinds of value that words never stand in for: a phrase is not a date, an email or a path
_VALUE_KINDS = frozenset({"email", "url", "date", "datetime", "time", "timezone", "phone", "path"})


def fill_arguments(
    schema: Mapping[str, Any], clause: str, prompt: str, results: Sequence[str],
    prefer: AbstractSet[str] = frozenset(), tool: str = "", error: str = "",
) -> dict[str, Any]:
    """Arguments for a call: every required parameter, plus optional ones with a confident value.
    Parameters that ask for a kind of value (an email, a date, an id shape) choose first, so a vague
    parameter listed before them cannot take the value they name; a glob chooses before a path
    ("setup.md" is what to look for, not where); of two parameters for the same kind, the source
    ("from") chooses before the target ("to"). `tool` is the tool's name (its words are not a request's
    topic). `prefer`: shapes the error result `error` asked for, used for the parameters it names."""
    reading = Reading(clause, prompt, list(results), prefer, frozenset(terms(tool)), error=error)
    return _fill_object(schema, reading)


def _fill_object(schema: Mapping[str, Any], reading: Reading) -> dict[str, Any]:
    """The arguments of one object schema (the call's, or an item's), in the schema's own order."""
    props = {n: flat(p) for n, p in (schema.get("properties") or {}).items() if isinstance(p, Mapping)}
    required = set(schema.get("required") or [])
    outer = reading.claims, reading.numeric, reading.siblings
    reading.siblings = frozenset(props)
    reading.claims = number_claims(props, reading.clause)
    reading.numeric = sum(1 for p in props.values() if p.get("type") in ("integer", "number"))
    rank = {name: 0 if prop.get("type") != "array" and _wants_glob(set(words(name)), str(prop.get("description")))
            else 1 if set().union(*property_kinds(name, prop)[:2]) else 2 for name, prop in props.items()}
    args: dict[str, Any] = {}
    for name in sorted(props, key=lambda n: (rank[n], _role(n))):
        value = _value_for(name, props[name], reading, required=name in required)
        if value is not None:
            args[name] = value
            reading.used.update(str(v) for v in (value if isinstance(value, list) else [value]))
    reading.claims, reading.numeric, reading.siblings = outer
    return {name: args[name] for name in props if name in args}


def _value_for(name: str, prop: Mapping[str, Any], reading: Reading, *, required: bool, strict: bool = False) -> Any:
    """The value of one parameter, or None. `strict`: only values the text holds (items of an array)."""
    if not required and not strict and set(words(name)) & _NEGATION_WORDS:
        cue = _NEGATION_CUE.search(reading.clause)  # "excludePatterns" only from "… excluding X"
        if not cue:
            return None
        reading = reading.narrowed(reading.clause[cue.end():])
    ptype = prop.get("type")
    if "enum" in prop:
        return choose_option(prop["enum"], reading.clause, prop.get("default"), required and not strict)
    if ptype == "boolean":
        return boolean_value(name, prop, reading.clause, required)
    if ptype in ("integer", "number"):
        return numeric_value(name, prop, reading, required)
    if ptype == "array":
        return _array_value(name, prop, reading, required)
    if ptype == "object" and prop.get("properties"):
        return _object_value(prop, reading)
    return _string_value(name, prop, reading, required, strict)


def _object_value(prop: Mapping[str, Any], reading: Reading) -> dict[str, Any] | None:
    """An object whose required fields all come from the text, else nothing."""
    value = _fill_object(prop, reading)
    return value if value and set(prop.get("required") or []) <= set(value) else None


def _array_value(name: str, prop: Mapping[str, Any], reading: Reading, required: bool) -> list[Any] | None:
    """Every fitting value of the item's kind the text holds (all the paths, all the names); objects
    when their required fields come from the text; a required array gets at least its best guess."""
    items = flat(prop.get("items") or {})
    if items.get("type") == "object" and items.get("properties"):
        one = _object_value(items, reading)
        return [one] if one else None
    if "enum" in items:
        named = [o for o in items["enum"] if choose_option([o], reading.clause, None, False) is not None]
        return named or ([choose_option(items["enum"], reading.clause, prop.get("default"), True)] if required
                         else None)
    item_name = re.sub(r"(?<=[a-z])s$", "", name) or name
    item = {**items, "description": f"{prop.get('description') or ''} {items.get('description') or ''}".strip()}
    values: list[Any] = []
    for _ in range(_MAX_ITEMS):
        value = _value_for(item_name, item, reading, required=False, strict=True)
        if value is None or value in values:
            break
        values.append(value)
        reading.used.add(str(value))
    if not values and required:
        value = _value_for(item_name, item, reading, required=True)
        values = [value] if value is not None else []
    for value in values:
        reading.used.discard(str(value))  # the caller marks the whole list as taken
    return values or None


def _string_value(name: str, prop: Mapping[str, Any], reading: Reading, required: bool, strict: bool) -> Any:
    kinds, shown, hint = property_kinds(name, prop)
    description = str(prop.get("description") or "")
    tokens = set(words(name))
    shaped = shown | set(reading.prefers(name, kinds | shown))
    if takes_sql(hint):  # a statement the text writes out, whatever names the description lists
        written = shapes.sql_statement(reading.clause, hint) or shapes.sql_statement(reading.prompt, hint)
        return reading.unused(written)
    listed = listed_options(description)
    if listed:
        return choose_option(listed, reading.clause, described_default(description), required and not strict)
    timed = _clock_or_date(kinds | shaped, hint, reading)
    if timed is not None:
        return timed
    if _wants_glob(tokens, hint):
        glob = reading.unused(shapes.glob_for(reading.clause))
        reading.used.update(f.value for f in reading.free("path") if glob and glob.endswith(f.value))
        return glob
    value = _kind_value(kinds, shaped, reading)
    if value is not None:
        return value
    if "path" in kinds and not strict:
        return _named(frozenset(terms(name)) - _GENERIC, reading)
    if kinds & _VALUE_KINDS or ((kinds - {"money"}) and not required):
        return described_default(description) if required and not strict else None
    return _words_value(name, tokens, description, reading, required, strict)


def _words_value(name: str, tokens: set[str], description: str, reading: Reading, required: bool,
                 strict: bool) -> Any:
    """A parameter that takes words: a name, a query or prose, or an id with no kind named. The last word of the
    parameter's name says which ("entityName" is a name)."""
    head = (words(name) or [""])[-1]
    quoted = [f.value for f in reading.free("quoted")]
    names = [n for _, n in phrases.proper_names(reading.clause) if n not in reading.used]
    if head in NAME_WORDS or tokens & NAME_WORDS:
        named = _named(frozenset(terms(name)) - _GENERIC, reading)
        value = next((v for v in [*quoted, named, *names] if v and v not in reading.used), None)
        if value is not None or strict or set(words(name)) - NAME_WORDS - PROSE_WORDS:
            return value  # "table_name" names a thing; the request's words are not its name
    if tokens & (FREE_TEXT_WORDS | PROSE_WORDS):
        cue = reading.unused(phrases.cue_phrase(reading.masked()))
        entity = next((f.value for f in reading.found if f.kind in ENTITY_KINDS and f.origin == 0
                       and f.value not in reading.used), None)
        first = quoted[0] if quoted else cue or entity or (names[0] if names else None)
        if first is not None or strict:
            return first
        return _phrase(reading, limit=6 if tokens & FREE_TEXT_WORDS else 12) if required else None
    entities = [f for f in sorted(reading.found, key=lambda f: (f.origin, f.position))
                if f.kind in ENTITY_KINDS and f.value not in reading.used]
    if entities and (required or tokens & ID_WORDS):
        return entities[0].value
    if tokens & ID_WORDS:  # "ticket 42", "the api-gateway service"
        numbers = [f.value for f in reading.free("number") if f.position not in reading.claims]
        slug = next((v for v in phrases.slugs(reading.masked()) if v not in reading.used), None)
        if numbers or slug:
            return numbers[0] if numbers else slug
    if strict or not required:
        return None
    return (quoted[0] if quoted else None) or described_default(description) or _phrase(reading)


def _phrase(reading: Reading, limit: int = 6) -> str | None:
    """The request's key words, values other parameters took and the tool's own words left out."""
    return reading.unused(phrases.key_words(reading.masked(), reading.skip, limit))


def _named(nouns: frozenset[str], reading: Reading) -> str | None:
    return reading.unused(phrases.named_noun(nouns, reading.clause))


def _kind_value(kinds: set[str], shaped: set[str], reading: Reading) -> str | None:
    """A value of the kind the parameter names or shows (an email, an id like C-1004, a path), found in
    the text or converted to the shape asked for."""
    wanted = shaped | (kinds - {"money"})
    pool = [f for f in reading.found if f.value not in reading.used and f.kind not in ("number", "money")]
    ranked = sorted(pool, key=lambda f: (f.origin, f.position))
    for f in ranked:
        if f.kind in shaped:
            return f.value
    converted = _convert(reading.found, shaped)
    if converted is not None and converted not in reading.used:
        return converted
    for f in ranked:
        if f.kind in wanted or (f.kind == "date_text" and "date" in wanted):
            return f.value
    if "path" in wanted:  # a quoted file name with spaces ("Q3 report.pdf") is still a path
        return next((f.value for f in ranked if f.kind == "quoted" and re.search(r"\.\w{1,5}$|/", f.value)), None)
    return None


def _convert(found: list[Found], shaped: set[str]) -> str | None:
    """Reformat a value toward a shape the definition or an error asked for (`#` ids, ISO dates)."""
    for f in sorted(found, key=lambda f: f.origin):
        if "hash_id" in shaped and f.kind == "number" and re.fullmatch(r"\d{3,}", f.value):
            return f"#{f.value}"
        if "date" in shaped and f.kind in ("date_text", "datetime"):
            return shapes.iso_date(f.value)
    return None


def _clock_or_date(wanted: set[str], hint: str, reading: Reading) -> str | None:
    """A time of day, date-time or date in the form the parameter asks for."""
    if not wanted & {"time", "datetime"}:
        return None
    ranked = sorted((f for f in reading.found if f.value not in reading.used and f.origin < 2),
                    key=lambda f: (f.origin, f.position))
    date = next((f for f in ranked if f.kind in ("date", "date_text", "datetime")), None)
    clock = next((shapes.clock(f.value) for f in ranked if f.kind == "time"), None)
    if "datetime" in wanted or ("date" in wanted and date and clock):
        if date is not None and date.kind == "datetime" and clock is None:
            return date.value
        day = shapes.iso_date(date.value) if date else None
        return shapes.iso_datetime(day, clock or shapes.clock(date.value[11:] if date else "")) if day else None
    if clock is None and date is not None and date.kind == "datetime":
        clock = shapes.clock(date.value[11:])
    return shapes.format_time(clock, hint) if clock else None


def _role(name: str) -> int:
    """0 for a source ("source_timezone", "from"), 2 for a target ("destination"), 1 for neither."""
    tokens = set(words(name))
    return 0 if tokens & _SOURCE_WORDS else 2 if tokens & _TARGET_WORDS else 1


def _wants_glob(tokens: set[str], hint: str) -> bool:
    lowered = hint.lower()
    if "regex" in lowered or "regular expression" in lowered:
        return False
    return bool(tokens & {"glob", "pattern", "patterns"}) or "glob" in lowered or "wildcard" in lowered
