"""The leakage guard: what a text copies from train prompts (literal values, digit runs, 3-word phrases).

Used by every proposer's output screen and by the rules proposer on each text it writes."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from optimizer.text import STOPWORDS, words
from optimizer.values import find_values


def leaked_phrases(text: str, prompts: Iterable[str]) -> list[str]:
    """What `text` copies from `prompts`, sorted and unique: values (emails, ids, urls, paths, dates,
    money, phones, codes, numbers of 3+ digits) and phrases of 3+ consecutive words with at least two
    content words, within one clause of each (commas and other punctuation end a phrase)."""
    values, runs, phrases = _prompt_index(tuple(prompts))
    lowered = text.lower()
    found = {v for v in values if re.search(rf"(?<![\w@#$-]){re.escape(v.lower())}(?![\w@-])", lowered)}
    found.update(run for run in runs if re.search(rf"(?<!\d){run}(?!\d)", text))
    found.update(" ".join(g) for segment in _segments(text) for g in _grams(segment) if g in phrases)
    return sorted(found)


@functools.lru_cache(maxsize=64)
def _prompt_index(prompts: tuple[str, ...]) -> tuple[frozenset[str], frozenset[str], frozenset[tuple[str, ...]]]:
    """The values, digit runs (3+) and 3-word phrases of a set of prompts, computed once per set."""
    values = {f.value for p in prompts for f in find_values(p, 0)
              if f.kind != "quoted" and not (f.kind == "number" and len(re.sub(r"\D", "", f.value)) < 3)}
    runs = {run for p in prompts for run in re.findall(r"\d{3,}", p)}
    phrases = {g for p in prompts for segment in _segments(p) for g in _grams(segment)}
    return frozenset(values), frozenset(runs), frozenset(phrases)


def _segments(text: str) -> list[list[str]]:
    return [words(part) for part in re.split(r"[,.;:!?()\[\]\"“”{}]+", text) if part.strip()]


def _grams(seq: list[str]) -> Iterable[tuple[str, ...]]:
    for i in range(len(seq) - 2):
        if sum(w not in STOPWORDS for w in seq[i : i + 3]) >= 2:
            yield tuple(seq[i : i + 3])
