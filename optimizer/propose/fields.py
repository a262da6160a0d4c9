"""What a tool's successful results show: the field labels that come back, and the noun a result counts.

Contract of `result_fields`: labels (lower-case, one to three words) that at least half of the given results
show (all of them when there is one result), in the order they first appear. A label is a JSON or Python-literal
key (top level, and one level into objects and lists of objects), a "Label: value" pair, or a short run of
lower-case words that opens a clause and is followed by a value ("balance due $4.10", "tier gold"). Values
themselves (ids, emails, dates, names, numbers, quoted text) are never labels. General English only: no word
list of any domain.
"""

from __future__ import annotations

import ast
import itertools
import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from optimizer.text import STOPWORDS, words
from optimizer.values import find_values

LINKS = frozenset(("via", "per", "each", "at", "on", "in", "by", "for", "with", "to", "from", "of", "as", "and",
                   "or", "the", "a", "an", "is", "are", "was", "were", "no", "not", "than", "into", "onto", "since",
                   "until", "till", "within", "over", "under", "about", "between", "across", "around", "otherwise",
                   "then", "also", "only", "just"))
"""Words that join a label to its value or to another label; a label never starts or ends with one."""
PARTICIPLES = frozenset(("found", "sent", "made", "done", "shown", "given", "taken", "seen", "held", "left", "kept",
                         "paid", "set", "put", "run", "built", "bought", "sold", "told", "won", "lost", "met", "read"))
"""Irregular past participles: like "shipped", a verb form rather than a field."""
MAX_WORDS = 3
_IDS = frozenset(("prefixed_id", "hash_id", "code", "token", "path", "url", "email"))
_SEPARATOR = re.compile(r"\s*(?:[,;|()\[\]{}\n]|:(?=\s|$)|(?:(?<=\w)|^)[.!?](?=\s|$)|\s[-–—]\s)\s*")
_TOKEN = re.compile(r"[A-Za-z][A-Za-z'-]*|\S")
_MARKED = re.compile(r"[^\s,;()]*[\d/][^\s,;()]*?(?=[.:!?]*(?:\s|$|[,;()]))|[\w-]+(?:\.[\w-]+)+")
"""A token holding a digit or a slash (without the punctuation after it), or a dotted one (`app.py`): a value
whatever its kind."""
_COUNT_NOUN = re.compile(r"^\W*(\d+|[Nn]o)\s+([a-z]{3,})\s+[a-z]")
_UNITS = frozenset(("words", "characters", "bytes", "lines", "items", "results", "matches", "seconds", "minutes",
                    "hours", "days", "times", "records", "rows"))
Token = tuple[str, str]
"""("w", word) for a lower-case word (or a capitalised one opening a clause), ("v", kind) for a value,
("|", separator) between clauses."""


def result_fields(texts: Sequence[str]) -> list[str]:
    """Field labels most of `texts` show (see the module docstring), each on two different lines when two results
    show it (listings that repeat one record's line repeat no field). From a single result
    only the labels it marks plainly count ("Label: value" or a JSON key): one record cannot tell a field from
    prose."""
    seen: Counter[str] = Counter()
    lines: dict[str, set[str]] = defaultdict(set)
    first: dict[str, tuple[int, int]] = {}
    for number, text in enumerate(texts):
        found = [(label, line) for line in _lines(text) for label, plain in _labels(line) if plain or len(texts) > 1]
        for position, (label, line) in enumerate(found):
            first.setdefault(label, (number, position))
            lines[label].add(line.strip())
        seen.update({label for label, _ in found})
    floor = 1 if len(texts) < 2 else (len(texts) + 1) // 2
    kept = [label for label, count in seen.items() if count >= floor and len(lines[label]) >= min(count, 2)]
    return sorted(kept, key=first.__getitem__)


def _lines(text: str) -> list[str]:
    """A result's lines, or the whole of it when it is JSON or a Python literal."""
    return [text] if parse_literal(text.strip()) is not None else [line for line in text.splitlines() if line.strip()]


def labels_in(text: str) -> list[str]:
    """The labels of one result, in order."""
    return [label for label, _ in _labels(text)]


def _labels(text: str) -> list[tuple[str, bool]]:
    """(label, whether the result marks it plainly, "Label: value") for one result."""
    data = parse_literal(text.strip())
    if data is not None:
        return [(" ".join(words(key)), True) for key in _keys(data) if 0 < len(words(key)) <= MAX_WORDS + 1]
    out: list[tuple[str, bool]] = []
    segments = list(_segments(_tokens(text)))
    for number, (segment, before, after) in enumerate(segments):
        following = segments[number + 1][0][0][1] if number + 1 < len(segments) else ""
        opening = not before.strip() or not re.search(r"[^.!?\n]", before.strip())
        label, value = _label(segment, before.strip(), after, opening, following)
        if label:
            out.append((label, after == ":" and all(kind == "w" for kind, _ in segment)))
    return out


def subject(texts: Sequence[str]) -> str | None:
    """The noun most results open with, right before an id, path or link ("Ticket T-505 …", "Order #10004 …",
    "Created wiki page a/b.md": a leading verb form is not part of it), when at least half of them do."""
    heads: Counter[str] = Counter()
    for text in texts:
        tokens = _tokens(text.strip())
        opening = [t for _, t in itertools.takewhile(lambda token: token[0] == "w", tokens)]
        after = tokens[len(opening)] if len(opening) < len(tokens) else ("", "")
        noun = opening[1:] if len(opening) > 1 and opening[0].endswith("ed") else opening
        event = len(noun) == 1 and (noun[0].endswith("ed") or noun[0] in PARTICIPLES)  # "Scheduled EVT-1": no noun
        if 0 < len(noun) <= 2 and after[1] in _IDS and not set(noun) & (STOPWORDS | LINKS) and not event:
            heads[" ".join(noun)] += 1
    ranked = sorted(heads.items(), key=lambda item: (-item[1], item[0]))
    return ranked[0][0] if ranked and ranked[0][1] * 2 >= len(texts) else None


def substantive(texts: Sequence[str]) -> list[str]:
    """The results that hold something: not those whose first line says nothing was found ("No events
    match …", "0 results")."""
    return [t for t in texts if not re.match(r"\s*(?:no|0|none|nothing)\b", t, re.IGNORECASE)]


def says_error(text: str) -> bool:
    """A result that is an error in all but its flag: it opens with "Error" or "<Something> error" ("Database
    error: near …"), or it is a JSON object whose first key is "error"."""
    if re.match(r"\s*(?:[A-Za-z]+\s)?(?:error|exception)\b", text, re.IGNORECASE):
        return True
    data = parse_literal(text.strip())
    return isinstance(data, dict) and bool(data) and next(iter(data)) in ("error", "errors")


def counted_noun(texts: Sequence[str]) -> str | None:
    """The plural noun most results open by counting ("3 documents match", "1 event matches", "No issues
    with …"), when at least half of them do."""
    counts: Counter[str] = Counter()
    for text in texts:
        found = _COUNT_NOUN.match(text.strip())
        if found:
            noun = found.group(2) if found.group(1) != "1" else _plural(found.group(2))
            counts[noun] += noun.endswith("s") and noun not in _UNITS
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return ranked[0][0] if ranked and ranked[0][1] and ranked[0][1] * 2 >= len(texts) else None


def _plural(noun: str) -> str:
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    return noun[:-1] + "ies" if noun.endswith("y") and noun[-2:-1] not in "aeiou" else noun + "s"


def parse_literal(text: str) -> Any:
    """A JSON or Python-literal object or list, or None."""
    if not text or text[0] not in "[{":
        return None
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


def _keys(data: Any, depth: int = 0) -> Iterable[str]:
    """Keys of an object (and of the objects its values hold, one level down, in place of the key that holds one:
    `source: {timezone, datetime}` shows timezone and datetime, not "source"); of a list, its objects' keys."""
    if isinstance(data, list):
        for item in data[:20]:
            yield from _keys(item, depth)
    elif isinstance(data, dict):
        for key, value in data.items():
            if isinstance(key, str) and not (depth == 0 and isinstance(value, dict) and value):
                yield key
            if depth == 0 and isinstance(value, dict | list):
                yield from _keys(value, depth + 1)


def _tokens(text: str) -> list[Token]:
    """Words, values and clause separators in reading order."""
    out: list[Token] = []
    last = 0
    for start, end, kind in _value_spans(text):
        out += _plain(text[last:start], _inside(out, text[:last]))
        out.append(("v", kind))
        last = end
    out += _plain(text[last:], _inside(out, text))
    return out


def _value_spans(text: str) -> list[tuple[int, int, str]]:
    """Where values sit: what `find_values` finds (quotes included), and any token with a digit or a slash."""
    spans = []
    for found in find_values(text, 0):
        start = text.find(found.value, found.position)
        if found.kind == "quoted":
            start, end = found.position, found.position + len(found.value) + 2
        else:
            end = start + len(found.value)
        spans.append((start, end, found.kind))
    spans += [(m.start(), m.end(), "token") for m in _MARKED.finditer(text)]
    merged: list[tuple[int, int, str]] = []
    for start, end, kind in sorted(spans):
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]), merged[-1][2])
        else:
            merged.append((start, end, kind))
    return merged


def _inside(tokens: list[Token], before: str) -> bool:
    """Whether the next word sits inside a clause, rather than opening a sentence or a line."""
    return bool(tokens) and not re.search(r"(?:^|[.!?]|\n)\s*$", before)


def _plain(text: str, inside: bool) -> list[Token]:
    """Tokens of text without values. A capitalised word is a name (a value) unless it opens a sentence or a line."""
    out: list[Token] = []
    for piece in re.split(f"({_SEPARATOR.pattern})", text):
        if not piece:
            continue
        if _SEPARATOR.fullmatch(piece):
            out.append(("|", piece.strip() or " "))
            inside = not re.search(r"[.!?\n]|\s[-–—]\s", piece)
            continue
        for token in _TOKEN.findall(piece):
            if not token[0].isalpha():
                out.append(("v", "symbol"))
            elif token[0].isupper() and (inside or any(c.isupper() for c in token[1:])):
                out.append(("v", "name"))
            else:
                out += [("w", part) for part in words(token)]  # "isDirectory": two words
            inside = True
    return out


def _segments(tokens: list[Token]) -> Iterable[tuple[list[Token], str, str]]:
    """Clauses (tokens between separators), each with the separators before and after it."""
    current: list[Token] = []
    before = ""
    for kind, text in tokens:
        if kind == "|":
            if current:
                yield current, before, text
                before = ""
            before += text
            current = []
        else:
            current.append((kind, text))
    if current:
        yield current, before, ""


def _label(segment: list[Token], before: str, after: str, opening: bool, following: str) -> tuple[str, str]:
    """The label a clause opens with, and the kind of value after it: all of the clause before ":" (its value
    opens the next clause, `following`); else one to three words right before a value, after at most one value
    that is not a count ("#NNNNN placed 2026-01-02", not "2 orders for …"); or the first of two words that make
    a whole clause of a list ("…, tier gold, …"). A sentence opening with a verb form is an event, not a field
    ("Created page X", "Successfully created X"), unless it dates one ("Shipped 2026-01-02": "shipped date")."""
    kinds = [k for k, _ in segment]
    if after == ":" and kinds and all(k == "w" for k in kinds) and len(kinds) <= MAX_WORDS + 1:
        return clean_label([t for _, t in segment], following, True), following
    if segment[0] == ("v", "number") or (kinds[0] == "w" and segment[0][1] in STOPWORDS | LINKS):
        return "", ""  # a count or a sentence ("2 orders for …", "No events match …", "A reply comes …")
    start = 1 if kinds[:1] == ["v"] and segment[0][1] in _IDS else 0  # "#NNNNN placed …", not "Rate limiter …"
    if kinds[:1] == ["v"] and not start:
        return "", ""
    end = start
    while end < len(segment) and kinds[end] == "w":
        end += 1
    head = [t for _, t in segment[start:end]]
    if end < len(segment):  # a value follows the words
        event = opening and len(head) > 1 and any(w.endswith(("ed", "ly")) or w in PARTICIPLES for w in head)
        if not head or head[-1] in LINKS or event:
            return "", ""
        return clean_label(head, segment[end][1], False), segment[end][1]
    listed = bool(before) and before[-1] in ",;|:" and after[:1] in ("", ",", ";", "|", ".")  # "…, tier gold, …"
    if start == 0 and len(head) == 2 and head[1] not in LINKS and listed:
        return clean_label(head[:1], "word", False), "word"
    return "", ""


def clean_label(parts: Sequence[str], value_kind: str, explicit: bool) -> str:
    """Link words trimmed, cut at the first inner link word, at most three words; a lone participle
    ("placed 2026-01-02") names its date, or is dropped."""
    parts = [p for p in parts if p]
    while parts and (parts[0] in LINKS or parts[0] in STOPWORDS):
        parts = parts[1:]
    for index, part in enumerate(parts):
        if part in LINKS or part in STOPWORDS:
            parts = parts[:index]
            break
    if not parts or len(parts) > MAX_WORDS or any(len(p) < 2 for p in parts):
        return ""
    participle = len(parts) == 1 and (parts[0].endswith("ed") or parts[0] in PARTICIPLES)
    if participle and value_kind in ("date", "date_text"):
        return f"{parts[0]} date"
    if not explicit and len(parts) == 1 and (participle or parts[0].endswith("ing")):
        return ""
    return " ".join(parts)
