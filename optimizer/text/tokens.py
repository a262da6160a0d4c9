"""Small text utilities shared by the offline agents, lint and evidence: tokens, stems, sentences,
and a local estimate of how many model tokens a text costs."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any

STOPWORDS = frozenset(
    """a about above after again all also am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers him his how i if in into is it its itself just me more most my myself no nor
    not now of off on once only or other our ours out over own please same she should so some such than
    that the their theirs them then there these they this those through to too under until up very was
    we were what when where which while who whom why will with would you your yours yourself want need
    know like hi hello thanks thank could can't don't i'm it's""".split()  # noqa: SIM905
)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*|[0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(#])")


def words(text: str) -> list[str]:
    """Lower-cased words, splitting snake_case, kebab-case and camelCase."""
    return list(_short_words(text) if len(text) <= 400 else _words(text))


@lru_cache(maxsize=32_768)
def _short_words(text: str) -> tuple[str, ...]:
    return _words(text)


def _words(text: str) -> tuple[str, ...]:
    out: list[str] = []
    for raw in _WORD.findall(text.replace("_", " ").replace("-", " ")):
        out.extend(part.lower() for part in _CAMEL.sub(" ", raw).split())
    return tuple(out)


def inflection_base(word: str) -> str:
    """The word without its inflection: orders → order, shipped → ship, created → creat, replies → reply. The
    base of a plain word is the word itself, so it can be looked up in a list of English words."""
    for suffix, keep in (("ies", "y"), ("ing", ""), ("ied", "y"), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)] + keep
            if suffix in ("ing", "ed") and len(base) > 3 and base[-1] == base[-2]:
                base = base[:-1]
            if suffix == "es" and not base.endswith(("s", "x", "z", "ch", "sh")):
                base = word[:-1]
            return base
    return word


@lru_cache(maxsize=32_768)
def stem(word: str) -> str:
    """A light, deterministic stem (order/orders, shipped/shipping, create/creating/created meet): the inflection
    base without a final silent "e". A stem need not be a word ("creat"): compare stems only with stems."""
    base = inflection_base(word)
    return base[:-1] if base.endswith("e") and len(base) > 3 else base


@lru_cache(maxsize=65_536)
def terms(text: str) -> tuple[str, ...]:
    """Content words, stemmed, stopwords removed: what lexical matching compares."""
    return tuple(stem(w) for w in words(text) if w not in STOPWORDS and len(w) > 1)


def shared_prefix(names: Sequence[str]) -> str:
    """The leading words and separators every one of two or more names starts with: a namespace (`git_` of
    `git_log`, `git_commit`; `files_server_` of `files_server_read_file`), not a verb or an object."""
    return _shared_prefix(tuple(names))


@lru_cache(maxsize=1024)
def _shared_prefix(names: tuple[str, ...]) -> str:
    if len(names) < 2:
        return ""
    prefix = ""
    while True:
        heads = {m.group(0) if (m := re.match(r"[A-Za-z0-9]+[_.-]", n[len(prefix):])) else "" for n in names}
        head = heads.pop()
        if heads or not head or any(len(n) == len(prefix) + len(head) for n in names):
            return prefix
        prefix += head


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text.strip()) if s.strip()]


def first_sentence(text: str) -> str:
    parts = sentences(text)
    return parts[0] if parts else ""


def estimate_tokens(text: str) -> int:
    """Local token estimate, no network: about one token per 4 characters of English or JSON,
    counted as max(whitespace-separated words × 1.3, characters ÷ 4) so that dense JSON and prose
    both land near the counts Claude's tokenizer reports."""
    if not text:
        return 0
    return max(1, round(max(len(text.split()) * 1.3, len(text) / 4)))


def points(delta: float, digits: int = 0) -> str:
    """An accuracy change in percentage points, signed: +0.33 -> "+33 pts" (not "+33%", which reads as relative)."""
    return f"{delta * 100:+.{digits}f} pts"


def json_strings(value: Any) -> Iterator[str]:
    """Every string in a JSON-like value, mapping keys included, depth first."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield str(key)
            yield from json_strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from json_strings(item)
