"""Which words the train requests of each tool use: documents per tool (train prompts, split into the clauses each
tool serves), counted by word family. The rules proposer reads from here which of a tool's result fields its
requests ask about; it never writes these words."""

from __future__ import annotations

import itertools
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence

from optimizer.propose.base import EpisodeSeen
from optimizer.propose.fields import says_error
from optimizer.text import STOPWORDS, sentences, stem, terms, words
from optimizer.values import describe_values

KIND_WORDS = frozenset(terms("email number id date amount phone link path"))
INFLECTIONS = ("s", "es", "e", "y", "ing", "ings", "ed", "er", "ers", "ion", "ions", "ment", "ments")
_CLAUSE = re.compile(r"\s*(?:;|,?\s+and then\s+|,?\s+then\s+|,?\s+after that,?\s+)\s*", re.IGNORECASE)
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9']*")
Doc = tuple[list[tuple[str, str]], float]
"""One document of a tool: its (stem, surface word) pairs and its weight."""


class TermTable:
    """Documents per tool, and how many of a tool's documents use each word family (a stem and its
    inflections: meet/meeting)."""

    def __init__(self, docs: Mapping[str, list[Doc]]) -> None:
        self.docs = docs
        self.family = families({t for items in docs.values() for pairs, _ in items for t, _ in pairs})
        self.df: dict[str, Counter[str]] = {}
        for tool, items in docs.items():
            df = self.df.setdefault(tool, Counter())
            for pairs, weight in items:
                for family in {self.family[t] for t, _ in pairs}:
                    df[family] += weight >= 1  # a prompt shared by several tools counts for none of them

    def count(self, tool: str, term: str) -> int:
        """How many of the tool's documents use the term's family."""
        return self.df.get(tool, Counter())[self.family.get(term, term)]


def families(stems: Iterable[str]) -> dict[str, str]:
    """Stem -> its family: the shortest stem of four or more letters it extends by an inflection."""
    out: dict[str, str] = {}
    roots: list[str] = []
    for term in sorted(stems, key=lambda t: (len(t), t)):
        out[term] = next((r for r in roots if term.startswith(r) and term[len(r):] in INFLECTIONS), term)
        if out[term] == term and len(term) >= 4:
            roots.append(term)
    return out


def tool_docs(
    prompts_by_tool: Mapping[str, Sequence[str]], order: Mapping[str, Sequence[str]], lower: set[str]
) -> dict[str, list[Doc]]:
    """Per tool, the documents of its train prompts. A prompt's clauses map in order onto its expected
    tools when the counts agree (the order the episodes give, else the one that best fits each tool's
    name and single-tool prompts); otherwise each tool gets the whole prompt, weighted 1/n."""
    tools_of: dict[str, list[str]] = defaultdict(list)
    for tool, prompts in prompts_by_tool.items():
        for prompt in prompts:
            tools_of[prompt].append(tool)
    out: dict[str, list[Doc]] = defaultdict(list)
    profile: dict[str, Counter[str]] = defaultdict(Counter)
    for prompt, tools in sorted(tools_of.items(), key=lambda item: (len(item[1]) > 1, item[0])):
        clauses = _clauses(prompt, lower, len(tools))
        if len(tools) == 1:
            out[tools[0]].append((content_words(prompt, lower), 1.0))
            profile[tools[0]].update({t for t, _ in out[tools[0]][-1][0]})
        elif len(clauses) == len(tools):
            ordered = [t for t in order.get(prompt, ()) if t in tools] or _aligned(clauses, tools, profile, lower)
            for tool, clause in zip(ordered, clauses, strict=True):
                out[tool].append((content_words(clause, lower), 1.0))
        else:
            for tool in tools:
                out[tool].append((content_words(prompt, lower), 1.0 / len(tools)))
    return out


def _aligned(clauses: list[str], tools: list[str], profile: Mapping[str, Counter[str]], lower: set[str]) -> list[str]:
    """The order of `tools` whose names and single-tool prompts best fit the clauses in turn."""
    def fit(order: tuple[str, ...]) -> float:
        score = 0.0
        for tool, clause in zip(order, clauses, strict=True):
            known = profile.get(tool, Counter())
            score += sum(3.0 if t in terms(tool) else known[t] / (1 + sum(known.values()))
                         for t in sorted({t for t, _ in content_words(clause, lower)}))
        return score

    best = max(sorted(itertools.permutations(sorted(tools))), key=fit)
    return list(best)


def _clauses(prompt: str, lower: set[str], wanted: int = 0) -> list[str]:
    """Sentences and "then"-parts; unless there are exactly `wanted` of them, a part with fewer than
    two content words joins the one before (as the offline agents read a task)."""
    pieces = [c for s in sentences(prompt) for c in _CLAUSE.split(s) if c and c.strip()]
    if len(pieces) == wanted:
        return pieces
    merged: list[str] = []
    for piece in pieces:
        if merged and (len(content_words(piece, lower)) < 2 or len(content_words(merged[-1], lower)) < 2):
            merged[-1] = f"{merged[-1]} {piece}"
        else:
            merged.append(piece)
    return merged or [prompt]


def lowercase(texts: Iterable[str]) -> set[str]:
    return {w for text in texts for w in re.findall(r"\b[a-z][a-z']*\b", text)}


def content_words(text: str, lower: set[str]) -> list[tuple[str, str]]:
    """(stem, word) for a text's content words, values read as their kinds ("email"); words with digits
    and capitalised words inside a sentence never seen in lower case (names, acronyms) left out."""
    text = describe_values(text).replace("_", " ").replace("-", " ")
    out = []
    for match in _TOKEN.finditer(text):
        raw, before = match.group(0), text[: match.start()].rstrip()
        opening = not before or before[-1] in ".!?"
        if any(c.isdigit() for c in raw) or (raw[0].isupper() and raw.lower() not in lower and not opening):
            continue
        out += [(stem(w), w) for w in words(raw) if w not in STOPWORDS and len(w) > 2]
    return out


def results_by_tool(episodes: Sequence[EpisodeSeen]) -> dict[str, list[str]]:
    """Distinct results of calls that succeeded, per original tool name (a result that reads as an error is not a
    success, whatever its flag says)."""
    out: dict[str, list[str]] = defaultdict(list)
    for call in (c for ep in episodes for c in ep.calls):
        if call.tool and not call.is_error and not says_error(call.result) and call.result not in out[call.tool]:
            out[call.tool].append(call.result)
    return out
