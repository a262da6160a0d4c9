"""The overlap measure: how alike two tools' names and descriptions are, for the overlap and boundary rules.

Contracts:
- Similarity is a Jaccard index over content words (stemmed, stopwords dropped, similar verbs folded into
  one, see `vocabulary.VERB_CLASS`), with boundary clauses and mentions of other tools' names removed first.
- `similar_pairs` is exact: it returns every pair at or above the threshold and no other, whatever the
  catalog's size.
- Deterministic for the same tools in the same order.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from optimizer.definitions import ToolDef
from optimizer.lint.vocabulary import CANONICAL_VERBS, canon, name_words, vocab
from optimizer.text.tokens import STOPWORDS, stem, words

NEIGHBOUR_SIMILARITY = 0.25
"""Two tools at least this similar are neighbours: each should say where its boundary is."""
OVERLAP_SIMILARITY = 0.5
"""Two tools at least this similar are too alike to tell apart."""

SIMILARITY_STOP = frozenset(stem(w) for w in vocab("use used instead tool call e g eg like example optional return"))
BOUNDARY = re.compile(
    r"\bnot\s+(?:for|to\s+be\s+used|meant|intended|suitable|used)\b|\binstead\b|\bdo(?:es)?\s*n[o']t\s+use\b"
    r"|\brather\s+than\b|\bunlike\b|\bonly\s+(?:for|when|use)\b|\bnever\s+(?:for|use)\b|\bprefer\b",
    re.IGNORECASE,
)
"""Words that draw a boundary ("not for", "instead"): left out of the measure, and what the boundary rule wants."""
NAME_TOKEN = re.compile(r"[A-Za-z0-9_.\-]+")
"""A run of characters that may be a tool name mentioned in prose."""
_CLAUSE_END = re.compile(r"[.;!?:]\s+|\s[—–]\s|\s-\s|\n")


def _mentionable(names: Sequence[str]) -> frozenset[str]:
    """Tool names distinctive enough to be recognised as mentions inside prose (not plain words)."""
    return frozenset(n for n in names if re.search(r"[_.\-]|[a-z][A-Z]", n))


def _similarity_text(description: str, mentionable: frozenset[str]) -> str:
    """The description without clauses that draw a boundary (they describe the neighbour) and without
    mentions of other tools' names."""
    kept = [c for c in _CLAUSE_END.split(description) if c.strip() and not BOUNDARY.search(c)]
    text = " ".join(kept)
    if mentionable:
        text = NAME_TOKEN.sub(lambda m: "" if m.group(0).strip(".-") in mentionable else m.group(0), text)
    return text


def _term_words(text: str) -> dict[str, str]:
    """Content terms (stemmed, verbs folded) -> the first word they came from."""
    out: dict[str, str] = {}
    for word in words(text):
        if word in STOPWORDS or len(word) < 2:
            continue
        term = canon(stem(word))
        if term not in SIMILARITY_STOP:
            out.setdefault(term, term if term in CANONICAL_VERBS else word)
    return out


@dataclass(frozen=True)
class TermSets:
    """Per tool: name + description terms, description terms, and a display word for every term."""

    full: list[frozenset[str]]
    desc: list[frozenset[str]]
    shown: list[dict[str, str]]


def similarity_sets(tools: Sequence[ToolDef]) -> TermSets:
    """The overlap measure's inputs: verbs folded, boundary clauses and other tools' names removed."""
    mentionable = _mentionable([t.name for t in tools])
    sets = TermSets([], [], [])
    for tool in tools:
        desc = _term_words(_similarity_text(tool.description, mentionable))
        name = _term_words(" ".join(name_words(tool.name)))
        sets.desc.append(frozenset(desc))
        sets.full.append(frozenset(desc) | frozenset(name))
        sets.shown.append({**desc, **name})
    return sets


def similar_pairs(sets: Sequence[frozenset[str]], threshold: float) -> dict[tuple[int, int], float]:
    """Pairs (i < j) whose Jaccard index is at least `threshold` (> 0), exactly. Prefix filtering over an
    inverted index: with every set's terms ordered rarest first, two sets that reach the threshold share a term
    among their first |s| - ceil(threshold * |s|) + 1, so only those are indexed and probed, and the cost grows
    with shared rare terms rather than with n squared."""
    freq = Counter(t for s in sets for t in s)
    rank = {t: k for k, t in enumerate(sorted(freq, key=lambda t: (freq[t], t)))}
    sizes = [len(s) for s in sets]
    index: dict[str, list[int]] = defaultdict(list)
    out: dict[tuple[int, int], float] = {}
    for i, s in enumerate(sets):
        n = sizes[i]
        if not n:
            continue
        prefix = sorted(s, key=rank.__getitem__)[: n - math.ceil(threshold * n - 1e-9) + 1]
        candidates: set[int] = set()
        for term in prefix:
            candidates.update(index[term])
        low, high = threshold * n, n / threshold
        for j in candidates:
            m = sizes[j]
            if m < low or m > high:
                continue
            shared = len(s & sets[j])
            if shared >= threshold * (n + m - shared) - 1e-9:
                out[(j, i)] = shared / (n + m - shared)
        for term in prefix:
            index[term].append(i)
    return out


class Neighbour(NamedTuple):
    """Another tool's position in the catalog and its similarity to this one."""

    position: int
    similarity: float


class Similarity:
    """The overlap measure over one catalog: `near[i]` lists tool i's neighbours, most similar first, with
    their similarity (the larger of the name + description and the description-only Jaccard index). Neighbours
    are at least NEIGHBOUR_SIMILARITY similar over name + description, or OVERLAP_SIMILARITY over descriptions
    alone (a lower description-only match between differently named tools is not a confusion signal)."""

    def __init__(self, tools: Sequence[ToolDef]) -> None:
        self.sets = similarity_sets(tools)
        full, desc = self.sets.full, self.sets.desc
        best = similar_pairs(full, NEIGHBOUR_SIMILARITY)
        for pair, score in similar_pairs(desc, OVERLAP_SIMILARITY).items():
            if score > best.get(pair, 0.0):
                best[pair] = score
        verbs = CANONICAL_VERBS
        only_verbs = [s <= verbs for s in full]
        near: dict[int, list[Neighbour]] = defaultdict(list)
        for (i, j), score in best.items():
            if not (only_verbs[i] or only_verbs[j]) and (full[i] & full[j] or desc[i] & desc[j]) <= verbs:
                continue  # they share only a common verb and both say something else
            near[i].append(Neighbour(j, -score))
            near[j].append(Neighbour(i, -score))
        self.near: dict[int, list[Neighbour]] = {}
        for i, items in near.items():
            items.sort(key=lambda n: (n.similarity, n.position))  # most similar first
            self.near[i] = [Neighbour(n.position, -n.similarity) for n in items]

    def shared(self, i: int, j: int) -> list[str]:
        """The words tools i and j have in common, as tool i wrote them."""
        full, desc, shown = self.sets.full, self.sets.desc, self.sets.shown[i]
        return sorted(shown[t] for t in (full[i] & full[j] or desc[i] & desc[j]))

