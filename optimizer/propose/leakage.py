"""The leakage guard: what a text copies from train prompts and expected answers — not the domain's language.

Copied, and flagged:
- values: emails, urls, paths, ids, codes, phones, amounts, dates, zones, and times and numbers with 3+ digits; and
  runs of 3+ digits inside them (a year alone is no value; a run in SHARED prompts is a format, like a 555 prefix);
- names: capitalised words a prompt uses mid-sentence, or two or more in a row anywhere (people, companies, places,
  products), and an answer that is itself a name;
- word runs: LONG_RUN words in a row from one prompt or answer with two content words among them; a shorter run
  (SHORT_RUN+) only when one of its words is distinctive; and a whole answer with a word rare in English in it.
A word is distinctive when it is not one of the common English words of `optimizer/data/english_words.txt`
(wordfreq's most frequent; see bench/build_word_list.py), does not occur in the server's own text (`known_text`)
and occurs in fewer than SHARED train prompts. Whatever the server's own text holds is not counted as copied.

Used by every proposer's output screen and by the rules proposer on each text it writes."""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources

from optimizer.text.tokens import STOPWORDS, inflection_base, stem, words
from optimizer.text.values import PATTERNS, TZ_AREAS, find_values

LONG_RUN = 6
"""Words in a row from one prompt that are copying whatever the words (two of them content words)."""
SHORT_RUN = 3
"""The shortest run that can be copying, when a distinctive word is in it."""
SHARED = 3
"""A word, run or digit run in this many train prompts (or answers) is the domain's language, not one task's."""
ALWAYS = frozenset({"email", "url", "path", "uuid", "hash_id", "prefixed_id", "code", "phone", "money", "date",
                    "datetime", "date_text", "timezone"})
"""Value kinds that are copying at any length; times and plain numbers need 3+ digits."""
CALENDAR = frozenset("""january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday
    mon tue tues wed thu thur thurs fri sat sun celsius fahrenheit kelvin""".split())  # noqa: SIM905
"""Calendar words and units named after people: capitalised in English wherever they stand, so no evidence of a
name."""
TITLES = frozenset("""mr mrs ms mx dr prof sir madam st mt ft no nos vol pp inc ltd llc plc co corp bros jr sr
    dept ave rd blvd hon rev fr sgt capt lt col gen gov pres""".split())  # noqa: SIM905
"""Titles and abbreviations that stand before or after names ("Dr. Kim", "Kettle & Co"): no names on their own."""
_CAP = r"[A-Z][^\W\d_]*(?:['’-][^\W\d_]+)*(?![\w-])"
_NAMES = re.compile(rf"{_CAP}(?:(?: &)? {_CAP})*")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|\n)[\W\d]*$")
_AFTER_TITLE = re.compile(r"(?<![\w.])(?:" + "|".join(sorted(TITLES)) + r")\.\s+$", re.IGNORECASE)
_REFERENCE = re.compile(r"\b[A-Za-z]{1,6}-(?=[A-Za-z0-9]*\d)[A-Za-z0-9]{4,}\b")  # RF-7a1b2c, which values.py skips
_YEAR = re.compile(r"(?:19|20)\d\d")
_CLAUSE = re.compile(r"[,.;:!?()\[\]\"“”{}]+")
_REGEX_SYNTAX = re.compile(r"\\[sdbwSDBW][*+?]?|\\(.)|\[[^\]]*\][*+?]?|\(\?(?:<?[=!]|:|[a-z]+\))|\.\*|[()^$*+?|]")


@dataclass(frozen=True)
class _Index:
    """What the train prompts and answers hold, computed once per set."""

    find_values: _Finder
    """the copied values: emails, ids, dates, … (see the module docstring)"""
    find_names: _Finder
    find_answers: _Finder
    """the answers' literal parts"""
    digits: frozenset[str]
    grams: Counter[tuple[str, ...]]
    """Word runs (SHORT_RUN..LONG_RUN words, within a clause) -> how many prompts or answers hold each."""
    counts: Counter[str]
    """Stemmed word -> how many prompts or answers hold it."""


class _Finder:
    """Finds which of many strings a text holds, each standing between the given boundaries, in one pass over the
    text whatever their number: the strings are bucketed by their first characters, and only the places where one
    may start are looked up. `fold`: strings and text compared lower-cased."""

    PREFIX = 3

    def __init__(self, strings: Iterable[str], *, fold: bool, before: str, after: str) -> None:
        self.fold = fold
        self.buckets: dict[str, list[tuple[str, str]]] = {}
        for original in strings:
            needle = original.lower() if fold else original
            if needle:
                self.buckets.setdefault(needle[: self.PREFIX], []).append((needle, original))
        self.lengths = sorted({len(key) for key in self.buckets}, reverse=True)
        self.starts = re.compile(rf"(?<!{before})(?=\S)")
        self.end = re.compile(rf"(?!{after})")

    def __call__(self, text: str) -> list[tuple[str, int]]:
        """Each string the text holds with the index where it ends, in the order found."""
        if not self.buckets:
            return []
        hay = text.lower() if self.fold else text
        found = []
        for start in (m.start() for m in self.starts.finditer(hay)):
            for length in self.lengths:
                key = hay[start : start + length]
                for needle, original in self.buckets.get(key, ()) if len(key) == length else ():
                    end = start + len(needle)
                    if hay.startswith(needle, start) and self.end.match(hay, end):
                        found.append((original, end))
        return found


@dataclass(frozen=True)
class _Known:
    """The server's own text: lower-cased, its words (and their stems), its words in order, its word runs."""

    text: str
    words: frozenset[str]
    joined: str
    grams: frozenset[tuple[str, ...]]


def leaked_phrases(text: str, prompts: Iterable[str], *, known_text: Iterable[str] = (),
                   answers: Iterable[str | None] = ()) -> list[str]:
    """What `text` copies from the train `prompts` and expected `answers` (regex answers are read for their
    literal parts), sorted and unique: values, digit runs, names and word runs, as the module docstring says.
    `known_text` is the server's own text (names, descriptions, schemas): nothing it holds counts as copied."""
    index = _index(tuple(prompts), tuple(a for a in answers if a))
    known = _known(tuple(known_text))
    found = {v for v, _ in index.find_values(text) if v.lower() not in known.text}
    found.update(run for run in set(re.findall(r"\d+", text)) & index.digits if run not in known.text)
    found.update(n for n, end in index.find_names(text)
                 if not (n in TZ_AREAS and text[end:end + 1] == "/") and not _holds(known, words(n)))
    found.update(a for a, _ in index.find_answers(text) if any(_distinctive(w, None, known) for w in words(a))
                 and not _holds(known, words(a)))
    found.update(_runs(text, index, known))
    return sorted(found)


def _runs(text: str, index: _Index, known: _Known) -> list[str]:
    """Maximal spans of `text` made of copied runs, each span as its words."""
    out = []
    for seq in _segments(text):
        spans: list[tuple[int, int]] = []
        for i in range(len(seq)):
            for n in range(min(LONG_RUN, len(seq) - i), SHORT_RUN - 1, -1):
                gram = tuple(seq[i : i + n])
                if not 0 < index.grams[gram] < SHARED or gram in known.grams:
                    continue
                if sum(_content(w) for w in gram) >= 2 and (
                        n == LONG_RUN or any(_distinctive(w, index, known) for w in gram)):
                    spans.append((i, i + n))
                    break
        for start, end in _merged(spans):
            out.append(" ".join(seq[start:end]))
    return out


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _content(word: str) -> bool:
    return word not in STOPWORDS and len(word) > 1 and not word.isdigit()


def _distinctive(word: str, index: _Index | None, known: _Known) -> bool:
    """Rare in English, not the server's own word, nor made from a common or the server's word by a derivational
    ending ("refundable" from refund), and (with an index) in fewer than SHARED prompts or answers."""
    base = stem(word)
    common = common_words()
    return (_content(word) and word.isalpha() and word not in common and inflection_base(word) not in common
            and word not in known.words and base not in known.words
            and not any(root in common or root in known.words for root in _roots(word))
            and (index is None or index.counts[base] < SHARED))


_DERIVATIONAL = ("able", "ible", "ment", "ness", "ation", "ition", "ion", "ity", "ful", "less", "ive", "ize", "ise",
                 "ly", "er", "al")


def _roots(word: str) -> list[str]:
    """What `word` may be made from by one derivational ending: refundable → refund, payment → pay, usable → use."""
    out = []
    for suffix in _DERIVATIONAL:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            root = word[: -len(suffix)]
            out += [root, root + "e"]
    return out


def _holds(known: _Known, seq: list[str]) -> bool:
    """The server's own text holds these words in this order."""
    return bool(seq) and f" {' '.join(seq)} " in known.joined


@functools.cache
def common_words() -> frozenset[str]:
    """The common English words the package ships (see bench/build_word_list.py for where they come from)."""
    return frozenset(word_ranks())


@functools.cache
def word_ranks() -> dict[str, int]:
    """Each common English word → its rank by frequency (0 = the most frequent)."""
    data = resources.files("optimizer").joinpath("data").joinpath("english_words.txt").read_text(encoding="utf-8")
    ranks: dict[str, int] = {}
    for line in (line.strip() for line in data.splitlines() if not line.startswith("#")):
        if line:
            ranks.setdefault(line, len(ranks))
    return ranks


@functools.lru_cache(maxsize=64)
def _index(prompts: tuple[str, ...], answers: tuple[str, ...]) -> _Index:
    chunks = tuple(c for a in answers for c in _literals(a))
    sources = prompts + chunks
    values = {f.value for s in sources for f in find_values(s, 0) if f.kind in ALWAYS or (
        f.kind in ("time", "number") and len(re.sub(r"\D", "", f.value)) >= 3 and not _YEAR.fullmatch(f.value))}
    values |= {m.group(0) for s in sources for pattern in (PATTERNS["date"], _REFERENCE) for m in pattern.finditer(s)}
    digit_counts = Counter(run for s in sources for run in set(re.findall(r"\d{3,}", s)))
    digits = {run for run, count in digit_counts.items() if count < SHARED and not _YEAR.fullmatch(run)}
    names = {n for s in prompts for n in _names(s)} | {n for c in chunks for n in _names(c, whole=True)}
    grams: Counter[tuple[str, ...]] = Counter()
    counts: Counter[str] = Counter()
    for source in sources:
        grams.update({g for seq in _segments(source) for g in _grams(seq)})
        counts.update({stem(w) for w in words(source)})
    return _Index(find_values=_Finder(values, fold=True, before=r"[\w@#$-]", after=r"[\w@-]"),
                  find_names=_Finder(names, fold=False, before=r"\w", after=r"\w"),
                  find_answers=_Finder(chunks, fold=True, before=r"\w", after=r"\w"),
                  digits=frozenset(digits), grams=grams, counts=counts)


@functools.lru_cache(maxsize=16)
def _known(texts: tuple[str, ...]) -> _Known:
    """Words are read before lower-casing, so the server's "PivotTable" is the words a text's "PivotTable" is."""
    text = "\n".join(texts)
    said = words(text)
    return _Known(text.lower(), frozenset(said) | {stem(w) for w in said}, f" {' '.join(said)} ",
                  frozenset(g for seq in _segments(text) for g in _grams(seq)))


def _names(text: str, whole: bool = False) -> list[str]:
    """Capitalised runs that are names by evidence: two or more capitalised words in a row, or one mid-sentence
    (after the sentence's own first word, or after a title: "Dr. Kim"); a run of capitals only (UTC, REST API) is an
    abbreviation. A run loses its leading titles (Dr) and, at a sentence's start, an ordinary first word ("Ask")
    followed by more than titles ("Kettle & Co" stays whole); a lone word is a name only when it is not ordinary
    (`_ordinary`). With `whole` (an answer), a text made only of capitalised words is a name too ("Louisville")."""
    found = []
    for match in _NAMES.finditer(text):
        parts = [re.sub(r"['’]s$", "", p) for p in match.group(0).split(" ")]
        before = text[: match.start()]
        lead = _SENTENCE_START.search(before) is not None and not _AFTER_TITLE.search(before)
        while parts and (parts[0].lower() in STOPWORDS | TITLES | {"&"} or (lead and _ordinary(parts[0]) and any(
                p.lower() not in TITLES | {"&"} for p in parts[1:]))):
            parts, lead = parts[1:], False  # "Ask Dr Kim": the sentence's first word and the title are no name
        named = [p for p in parts if p != "&"]
        if not named or not any(p != p.upper() for p in named) or (len(named) == 1 and _ordinary(named[0])):
            continue
        if len(named) > 1 or not lead or (whole and match.group(0) == text.strip()):
            found.append(" ".join(parts))
    return found


def _ordinary(word: str) -> bool:
    """A lone capitalised word that is no evidence of a name: a calendar word or unit, a title, or a word common in
    English that a dictionary writes in lower case (Status, Express, Rose)."""
    lower = word.lower()
    return lower in CALENDAR or lower in TITLES or (lower in common_words() and lower not in proper_nouns())


@functools.cache
def proper_nouns() -> frozenset[str]:
    """Common English words that no dictionary writes in lower case (see bench/build_proper_nouns.py)."""
    data = resources.files("optimizer").joinpath("data").joinpath("proper_nouns.txt").read_text(encoding="utf-8")
    return frozenset(line.strip() for line in data.splitlines() if line.strip() and not line.startswith("#"))


def _literals(answer: str) -> list[str]:
    """An answer's literal parts: the answer itself, or the alternatives and groups of a regex answer."""
    if not re.search(r"\\|\(\?|\||\.\*|\[[^\]]+\][*+?]", answer):
        return [answer.strip()]
    text = _REGEX_SYNTAX.sub(lambda m: m.group(1) or "\n", answer)
    return [c for c in (" ".join(part.split()) for part in text.split("\n")) if len(c) > 1]


def _segments(text: str) -> list[list[str]]:
    return [words(part) for part in _CLAUSE.split(text) if part.strip()]


def _grams(seq: list[str]) -> Iterable[tuple[str, ...]]:
    for n in range(SHORT_RUN, LONG_RUN + 1):
        for i in range(len(seq) - n + 1):
            yield tuple(seq[i : i + n])
