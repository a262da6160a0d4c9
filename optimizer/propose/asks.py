"""What the train requests for a tool ask in their own words: the short phrases several of them use, that the
requests for other tools do not, and that the tool's text does not say yet — "offset from UTC" for a clock tool
agents kept passing over. A person who read the failed transcripts writes these into the description; the
held-out split then shows whether the words carry over to requests nobody trained on.

Only the domain's plain language qualifies: common English words (the leakage guard's list), no capitalised
name, no value, no digit, and a phrase two or more requests share. The leakage guard screens the sentence the
phrases go into like any other text."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from optimizer.propose.leakage import common_words, word_ranks
from optimizer.text import STOPWORDS, stem
from optimizer.values import NUMBER_WORDS, find_values

_TOKEN = re.compile(r"[A-Za-z][A-Za-z'’-]*[A-Za-z]|[A-Za-z]|\S")
_LONGEST = 3
MIN_REQUESTS = 2
"""A phrase one request uses is that request's wording; two or more make it the users' way of asking."""
EVERYDAY = 1000
"""The most frequent English words ("top", "two", "right", "case"): a phrase of these alone says nothing about a
tool."""


@dataclass(frozen=True)
class Phrase:
    text: str
    stems: tuple[str, ...]


def asked_phrases(tool: str, prompts_by_tool: Mapping[str, Sequence[str]], lost: Iterable[str], said: str,
                  limit: int = 2) -> list[str]:
    """Up to `limit` phrases (1–3 words, opening and closing on a content word) from the train prompts that expect
    `tool`: in MIN_REQUESTS or more of them that agents sent elsewhere (`lost`), in none of the prompts expecting
    only other tools (a phrase users say to two tools does not tell them apart: written into one tool's text, it
    pulls the other tool's requests over), holding a word rarer than the EVERYDAY most frequent, and adding
    a content word `said` (the tool's name and text) does not have. Most shared first (a longer phrase weighs more),
    then longer; none repeating another's words."""
    mine = tuple(dict.fromkeys(prompts_by_tool.get(tool, ())))
    others = {p for name, ps in prompts_by_tool.items() if name != tool for p in ps} - set(mine)
    lost_here = set(lost) & set(mine)
    if not lost_here:
        return []
    known = {stem(w.lower()) for w in _TOKEN.findall(said)}
    seen_in = {p: _stem_text(p) for p in (*mine, *others)}
    ranks = word_ranks()
    scored: dict[tuple[str, ...], tuple[float, int, int, str]] = {}
    for order, prompt in enumerate(mine):
        for phrase in _phrases(prompt):
            if phrase.stems in scored or not {s for s in phrase.stems if s not in _STOP_STEMS} - known:
                continue
            if all(ranks.get(w.lower(), EVERYDAY) < EVERYDAY for w in phrase.text.split()):
                continue
            pattern = f" {' '.join(phrase.stems)} "
            holders = [p for p in mine if pattern in seen_in[p]]
            if len(holders) < MIN_REQUESTS or len(lost_here & set(holders)) < MIN_REQUESTS:
                continue
            if any(pattern in seen_in[p] for p in others):
                continue
            scored[phrase.stems] = (len(holders) * (1 + len(phrase.stems)) / 2, len(phrase.stems), -order,
                                    phrase.text)
    out: list[str] = []
    taken: set[str] = set()
    for stems, (*_rank, text) in sorted(scored.items(), key=lambda kv: kv[1][:3], reverse=True):
        content = {s for s in stems if s not in _STOP_STEMS}
        if content & taken:
            continue
        taken |= content
        out.append(text)
        if len(out) == limit:
            break
    return out


_STOP_STEMS = frozenset(stem(w) for w in STOPWORDS)
_DANGLING = frozenset("""a an the of to in on at for from by with about into and or but nor if than as is are was were
    be been do does did has have had can could will would should may might i you he she we they it me him her us them
    my your his our their its this that these those which who whom what how when where why""".split())  # noqa: SIM905
"""Function words a phrase cannot end on ("offset from"); an adverb can ("right now")."""


def _phrases(prompt: str) -> Iterable[Phrase]:
    """Runs of 1–3 plain words within a clause, opening and closing on a content word."""
    common = common_words()
    for found in find_values(prompt, 0):  # a value is no words: "AA" of 1Z999AA10123456784 is not an abbreviation
        if found.kind not in ("quoted", "number"):
            prompt = prompt.replace(found.value, ".")
    for clause in re.split(r"[.,;:!?()\"“”]+", prompt):
        tokens = _TOKEN.findall(clause)
        for start in range(len(tokens)):
            for end in range(start + 1, min(start + _LONGEST, len(tokens)) + 1):
                run = tokens[start:end]
                if not all(_plain(t, common) for t in run):
                    break
                if run[0].lower() in STOPWORDS or run[-1].lower() in _DANGLING:
                    continue
                yield Phrase(" ".join(run), tuple(stem(t.lower()) for t in run))


def _plain(token: str, common: frozenset[str]) -> bool:
    """A common English word in lower case, or an abbreviation in capitals: no name (a capitalised word, even one
    opening a sentence, may be one), no value, no number, spelled out or not."""
    word = token.lower().strip("'’-")
    if not word.isalpha() or (word not in common and word not in STOPWORDS) or word in NUMBER_WORDS:
        return False
    if token.isupper() and len(token) > 1:
        return len(token) <= 5
    return token == token.lower() or token.lower() in STOPWORDS


def _stem_text(prompt: str) -> str:
    return f" {' '.join(stem(t.lower()) for t in _TOKEN.findall(prompt))} "
