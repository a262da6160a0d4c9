"""The offline rules proposer: deterministic rewrites of tool definitions from train evidence.

What it writes for a tool (PRINCIPLES: what + when, boundary, inputs, about 200-400 characters):
- a trigger first sentence, all a skimming reader sees: the purpose (from the name and the old
  description, no preamble), everyday words for a generic operation ("update" -> change, move, …),
  and the concepts its requests are about, named in general words from `lexicon` ("deliveries (where
  a package or parcel is, the courier, tracking, arrival)"): first those its name signals, then those
  of its train tasks (concepts in two or more of its prompts, ranked by `TermTable.ranked`), then those
  of its old description;
- "Also fits requests about …" with more concepts, "Typical requests mention …" with at most a few
  plain words that three or more of its prompts use (never values, proper nouns or rare words), and
  the field labels its results show;
- "Not for …; use X instead." on a tool agents called when X was expected, with X's concepts;
- parameter descriptions from validation errors, what errors call a parameter, schemas, amounts
  that came back divided by 100 (cents), same-named parameters of other tools and accepted shapes;
- verb_object renames of bare generic verbs and generic objects (`search`, `get_item`).

Contract: `propose` returns up to k distinct candidates, none equal to `current`, each built on
`current` (tools it does not rewrite keep their edits; a rewritten tool keeps its parameter
descriptions unless the evidence says more, and its boundary relations), deterministic for (catalog,
current, evidence, k, seed). No text it writes copies ids, emails, numbers or 3-word phrases from
the train prompts: every text passes `leaked_phrases`, and values shown by example are synthesised.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from optimizer.definitions import Candidate, Catalog, ToolDef, ToolEdit, namespace_word, namespaced
from optimizer.propose.base import Evidence
from optimizer.propose.evidence import listing
from optimizer.propose.leakage import leaked_phrases
from optimizer.propose.lexicon import concept, concepts_in
from optimizer.propose.parameters import parameter_hints
from optimizer.propose.term_table import (
    BOUNDARY_TERMS,
    KIND_WORDS,
    TermTable,
    content_words,
    first_part,
    lowercase,
    results_by_tool,
    tool_docs,
)
from optimizer.text import STOPWORDS, first_sentence, sentences, stem, terms, words
from optimizer.values import describe_values

GENERIC_VERBS = frozenset(("search", "get", "list", "create", "query", "find", "fetch", "update", "delete", "run",
                          "read", "lookup", "add", "remove", "set", "make", "show", "view", "edit", "new", "do"))
GENERIC_OBJECTS = frozenset(terms("item entry data record object thing resource info detail stuff value element "
                                  "entity result"))
REQUEST_VERBS = frozenset(terms("look tell show find get give check open pull read see list search set make create "
                                "file log raise move mark send book schedule write add update change help hand "
                                "put run let say ask use take keep call go come happen"))
UNITS = frozenset(("words", "characters", "bytes", "lines", "items", "results", "matches", "seconds", "minutes",
                   "hours", "days", "times"))
VERB_WORDS = {  # everyday words for generic operations (plain English, not any one server's)
    **dict.fromkeys(("get", "fetch", "read", "lookup", "view"), ("open", "read", "show", "look up")),
    "list": ("list", "show all", "how many"),
    **dict.fromkeys(("search", "query", "find"), ("search", "find", "look for", "any about")),
    **dict.fromkeys(("create", "add", "new"), ("create", "new", "add", "write", "file", "log", "raise")),
    **dict.fromkeys(("update", "edit", "set", "modify"), ("update", "change", "set", "move", "mark", "reassign")),
    **dict.fromkeys(("delete", "remove"), ("delete", "remove", "cancel")),
}
RECOVERY = "After an error, read its message: it says whether to fix the input or try something else."
SHORT, LONG = 200, 400
_BOUNDARY = re.compile(r"\b(not for|not to be used|do not use|don't use|instead|rather than)\b", re.IGNORECASE)
_PREAMBLE = re.compile(r"^(?:this|the)\s+(?:tool|function|endpoint|api|method)\s+(?:allows|lets|enables|helps)?\s*"
                       r"(?:you|users|the user|the agent)?\s*(?:to|is used to|can be used to|will|is for)?\s*", re.I)
_LABEL = re.compile(r"(?:^|\n|[.;]\s)([A-Z][a-z]+(?: [a-z]+)?):\s")
_COUNT_NOUN = re.compile(r"\b(?:\d+|[Nn]o)\s+([a-z]{3,}s)\b")
"""A document: (stem, surface word) pairs and a weight (1 for a clause of its own, 1/n for a share)."""


@dataclass(frozen=True)
class Variant:
    """One way of rewriting: trigger / "Also fits" concept counts, "Typical requests" words, result
    labels, how concepts are ranked (`TermTable.ranked` modes), everyday verbs, renames, boundary sentences,
    and which tools ("all" with train tasks or failures, or only "failing" ones)."""

    vocab: int = 3
    extra: int = 3
    mentions: int = 3
    returns: int = 4
    mode: str = "share"
    verbs: bool = True
    rename: bool = True
    boundaries: bool = True
    scope: str = "all"


VARIANTS = (
    Variant(vocab=3, extra=3, mentions=0),
    Variant(vocab=3, extra=3, mode="common", scope="failing"),
    Variant(vocab=2, extra=3, mentions=0, mode="spread"),
    Variant(vocab=4, extra=4, mentions=2, returns=6, mode="mixed"),
    Variant(vocab=2, extra=2, mentions=0, returns=6, rename=False, verbs=False),
    Variant(vocab=1, extra=2, returns=2, mode="spread", rename=False),
    Variant(vocab=3, extra=0, mentions=0, returns=0, boundaries=False, verbs=False),
    Variant(vocab=2, extra=2, mentions=2, mode="mixed", boundaries=False),
)


class RulesProposer:
    """Deterministic, offline proposer (see the module docstring)."""

    name = "rules"
    offline = True

    def __init__(self, variants: Sequence[Variant] = VARIANTS) -> None:
        self.variants = tuple(variants)

    async def propose(
        self, catalog: Catalog, current: Candidate, evidence: Evidence, *, k: int, seed: int
    ) -> list[Candidate]:
        """Up to k distinct candidates, none equal to `current`; the seed rotates the variant order."""
        study = _Study(catalog, current, evidence)
        start = seed % len(self.variants)
        out: list[Candidate] = []
        keys = {current.key}
        for variant in [*self.variants[start:], *self.variants[:start]]:
            candidate = study.candidate(variant) if len(out) < k else None
            if candidate is not None and candidate.key not in keys:
                keys.add(candidate.key)
                out.append(candidate)
        return out

    def last_report(self) -> dict[str, Any]:
        """Nothing to report: no requests, no cost."""
        return {}

    def rationale(self, key: str) -> str | None:
        return None


class _Study:
    """What the evidence says about each tool: task and result vocabulary, object noun, parameter
    descriptions. Built once per `propose` call."""

    def __init__(self, catalog: Catalog, current: Candidate, evidence: Evidence) -> None:
        self.catalog, self.current, self.evidence = catalog, current, evidence
        episodes = [*evidence.failures, *evidence.successes]
        self.prompts = sorted({p for ps in evidence.prompts_by_tool.values() for p in ps}
                              | {e.prompt for e in episodes})
        order = {e.prompt: e.expected_tools for e in episodes}
        self.tasks = TermTable(tool_docs(evidence.prompts_by_tool, order, lowercase(self.prompts)))
        self.concepts = TermTable({tool: [([(k, k) for k in concepts_in({t for t, _ in pairs} - KIND_WORDS)], weight)
                                       for pairs, weight in docs] for tool, docs in self.tasks.docs.items()})
        self.results = results_by_tool(episodes)
        lower = lowercase(describe_values(text) for texts in self.results.values() for text in texts)
        self.outputs = TermTable({tool: [(content_words(text, lower), 1.0) for text in texts]
                               for tool, texts in self.results.items()})
        self.nouns: dict[str, Counter[str]] = defaultdict(Counter)  # surface words of result nouns
        self.hints = parameter_hints(catalog, episodes, self.prompts, evidence.prompts_by_tool, current)
        self.failing = {t for e in evidence.failures for t in (*e.expected_tools[:1], *e.chosen_tools[:1])}

    def word(self, term: str) -> str:
        counts = self.tasks.surface.get(term) or self.outputs.surface.get(term) or self.nouns.get(term)
        return min(counts, key=lambda w: (-counts[w], len(w), w)) if counts else term

    def noun(self, tool: ToolDef, tasks: bool) -> str | None:
        """The object a generic tool acts on (singular): two points for a plural noun most of its results
        count in their first line ("3 documents match"), one for a word of its own text and, with
        `tasks`, the number of its prompts using a word at most half of the tools use; None below 2.
        Words users type make strong name tokens that pull in every prompt using them, so `renames`
        names a lone tool from its results and text only."""
        scores: defaultdict[str, float] = defaultdict(float)
        for term in self.tasks.ranked(tool.name, 1, "spread") if tasks else ():
            scores[term] += self.tasks.count(tool.name, term)
        results = self.results.get(tool.name, [])
        heads = [text.strip().split("\n")[0] for text in results]
        plurals = Counter(p for head in heads for p in dict.fromkeys(_COUNT_NOUN.findall(head)) if p not in UNITS)
        for plural, count in plurals.items():
            if len(results) >= 2 and count * 2 >= len(results):
                scores[stem(plural)] += 2.0
                self.nouns[stem(plural)][plural] += 1
        own = " ".join([tool.description, *(str(p.get("description", "")) for p in tool.properties.values())])
        for term in set(terms(own)):
            scores[term] += 1.0
        banned = GENERIC_VERBS | GENERIC_OBJECTS | REQUEST_VERBS | KIND_WORDS | BOUNDARY_TERMS | set(terms(tool.name))
        ranked = sorted((-score, term) for term, score in scores.items()
                        if term not in banned and len(term) > 2 and not self.word(term).endswith("ed"))
        return _singular(self.word(ranked[0][1])) if ranked and -ranked[0][0] >= 2 else None

    def returns(self, tool: str) -> list[str]:
        """What the tool's results hold: the field labels most of them show ("Status:", "Owner:")."""
        results = self.results.get(tool, [])
        labels = Counter(label for text in results for label in dict.fromkeys(_LABEL.findall(text)))
        out = [t for label, n in labels.most_common() if n * 2 >= len(results) for t in terms(label)
               if t not in KIND_WORDS]
        return list(dict.fromkeys(out))

    # --- candidates -----------------------------------------------------------------------------------

    def candidate(self, variant: Variant) -> Candidate:
        targets = [t for t in self.catalog.tools if t.name in self.tasks.docs or t.name in self.failing]
        if variant.scope == "failing":
            targets = [t for t in targets if t.name in self.failing]
        edits = dict(self.current.edits)
        names = {t.name: (edits.get(t.name) or ToolEdit()).name or t.name for t in self.catalog.tools}
        if variant.rename:
            names.update(self.renames(targets, names))
        word = namespace_word(self.catalog, self.current)
        exposed = {orig: namespaced(name, self.current.scheme, word) for orig, name in names.items()}
        for tool in targets:
            old = edits.get(tool.name) or ToolEdit()
            edits[tool.name] = ToolEdit(name=None if names[tool.name] == tool.name else names[tool.name],
                                        description=self.describe(tool, variant, exposed, names[tool.name]),
                                        parameters={**old.parameters, **self.hints.get(tool.name, {})})
        for tool in self.catalog.tools:  # renamed tools that are not rewritten keep their old text
            if names[tool.name] != tool.name:
                edits[tool.name] = replace(edits.get(tool.name) or ToolEdit(), name=names[tool.name])
        return Candidate(edits=edits, scheme=self.current.scheme, word=self.current.word)

    def renames(self, targets: Sequence[ToolDef], names: Mapping[str, str]) -> dict[str, str]:
        """verb_object names for tools named by a bare generic verb or a generic verb + generic object
        (`search`, `get_item`); tools sharing a generic object share the noun most of them point to
        (by their results and text, else by their tasks)."""
        generic = {t.name: parts for t in targets if (parts := words(names[t.name])) and parts[0] in GENERIC_VERBS
                   and (len(parts) == 1 or (len(parts) == 2 and stem(parts[1]) in GENERIC_OBJECTS))}
        nouns = {name: self.noun(self.catalog.get(name), tasks=False) for name in generic}
        siblings: dict[str, list[str]] = defaultdict(list)
        for name, parts in generic.items():
            siblings[stem(parts[1]) if len(parts) == 2 else name].append(name)
        for members in (m for m in siblings.values() if len(m) > 1):
            votes = Counter(nouns[m] for m in members if nouns[m]) or Counter(
                n for m in members if (n := self.noun(self.catalog.get(m), tasks=True)))
            if votes:
                nouns.update(dict.fromkeys(members, votes.most_common(1)[0][0]))
        taken, out = set(names.values()), {}
        for name, parts in generic.items():
            noun = nouns[name]
            new = f"{parts[0]}_{_plural(noun) if parts[0] in ('search', 'list', 'query') else noun}" if noun else ""
            if new and new not in taken and not leaked_phrases(new.replace("_", " "), self.prompts):
                taken.add(new)
                out[name] = new
        return out

    def describe(self, tool: ToolDef, variant: Variant, exposed: Mapping[str, str], name: str) -> str:
        """Trigger and "Use when" sentences naming the concepts of the tool's train tasks (`lexicon`) and
        of its own text, what its results show, boundaries, then inputs and recovery while short; fitted
        to the length band, and no concept whose phrase `leaked_phrases` flags."""
        own = set(terms(name))
        said = terms(f"{name} {tool.name}")
        named = sorted(concepts_in(set(said)), key=lambda k: [t in concept(k).signals for t in said].index(True))
        found = self.concepts.ranked(tool.name, 2, variant.mode)
        vocab = list(dict.fromkeys([*named, *found, *concepts_in(set(terms(tool.description)))]))
        returns = [t for t in self.returns(tool.name) if t not in own]
        phrased = {t for k in vocab for t in terms(concept(k).phrase)}
        floor = 3
        mentions = [t for t in self.tasks.ranked(tool.name, floor, "share")
                    if t not in own | phrased | REQUEST_VERBS | GENERIC_VERBS][: variant.mentions]
        boundaries = self.boundaries(tool, exposed, set(vocab)) if variant.boundaries else []
        purpose, verb = _purpose(tool, name), (words(name) or [""])[0]
        if variant.verbs and verb in VERB_WORDS:  # what people call a generic operation
            called = [w for w in VERB_WORDS[verb] if not set(terms(w)) <= set(terms(purpose))]
            purpose += f" ({listing(called)})" if called else ""
        shape = [variant.vocab, variant.extra, variant.returns, min(2, len(boundaries)), 0]
        text = ""
        for _ in range(60):
            text = self._compose(purpose, vocab, mentions, returns, boundaries, tool, shape)
            leaks = leaked_phrases(text, self.prompts)
            leaky = {k for k in vocab if any(leak in concept(k).phrase.lower() for leak in leaks)}
            bad = {t for leak in leaks for t in terms(leak)}
            if leaks and not leaky and not bad & set(mentions):
                return _strip(text, leaks)
            if leaks:
                vocab, mentions = [k for k in vocab if k not in leaky], [t for t in mentions if t not in bad]
            elif len(text) > LONG and (shape[1] or shape[3] > 1 or shape[2] > 2 or shape[0] > 1):
                shape[1 if shape[1] else 3 if shape[3] > 1 else 2 if shape[2] > 2 else 0] -= 1
            elif len(text) < SHORT and (shape[0] + shape[1] < len(vocab) or shape[4] < 2):
                shape[1 if shape[0] + shape[1] < len(vocab) else 4] += 1
            else:
                break
        return text

    def _compose(self, purpose: str, vocab: list[str], mentions: list[str], returns: list[str],
                 boundaries: list[str], tool: ToolDef, shape: list[int]) -> str:
        first, extra, returned, bounded, padding = shape
        named = [_phrase(k) for k in vocab]
        trigger = purpose + (f": use it for {listing(named[:first])}" if first and named else "")
        parts = [trigger + "."]
        if extra and named[first:]:
            parts.append(f"Also fits requests about {listing(named[first : first + extra])}.")
        if mentions:
            parts.append(f"Typical requests mention {listing([self.word(t) for t in mentions])}.")
        if returned and returns:
            parts.append(f"Results show {_and([self.word(t) for t in returns[:returned]])}.")
        parts += boundaries[:bounded]
        parts += [_inputs(tool, self.hints.get(tool.name, {})) if padding else "", RECOVERY if padding > 1 else ""]
        return " ".join(p for p in parts if p)

    def boundaries(self, tool: ToolDef, exposed: Mapping[str, str], mine: set[str]) -> list[str]:
        """"Not for …; use X instead." for the (at most two) tools X most often expected when agents
        chose this one, counting those its current description already names that way. The concepts
        are X's, those of the lost tasks first, none of this tool's own."""
        wrong: Counter[str] = Counter()
        for expected, row in self.evidence.confusions.items():
            if expected != tool.name and expected in exposed and row.get(tool.name):
                wrong[expected] += row[tool.name]
        edit = self.current.edits.get(tool.name)
        old = [s for s in sentences(edit.description or "")[1:] if _BOUNDARY.search(s)] if edit else []
        word = namespace_word(self.catalog, self.current)
        for other in self.catalog.tools:
            name = namespaced((self.current.edits.get(other.name) or ToolEdit()).name or other.name,
                              self.current.scheme, word)
            if other.name != tool.name and any(re.search(rf"\b{re.escape(name)}\b", s) for s in old):
                wrong[other.name] += 1
        out = []
        for expected, _count in sorted(wrong.items(), key=lambda x: (-x[1], x[0]))[:2]:
            lost = Counter(k for e in self.evidence.failures if e.expected_tools[:1] == (expected,)
                           and e.chosen_tools[:1] == (tool.name,) for k in concepts_in(set(terms(first_part(e)))))
            other = self.catalog.get(expected)
            ranked = list(dict.fromkeys([*self.concepts.ranked(expected, 1),
                                         *concepts_in(set(terms(f"{other.name} {other.description}")))]))
            theirs = [k for k in sorted(ranked, key=lambda k: (-lost[k], ranked.index(k))) if k not in mine][:2]
            if theirs:
                out.append(f"Not for {listing([_phrase(k) for k in theirs])}; use {exposed[expected]} instead.")
        return out


def _purpose(tool: ToolDef, name: str) -> str:
    """What the tool does, no preamble: a long old first sentence as it is; a short one naming all the
    name says, without value words ("Get by id" -> "Get"); else the name's words plus the old
    description's other content words (its leading verb dropped)."""
    old = _PREAMBLE.sub("", first_sentence(tool.description or "")).strip().rstrip(".")
    old = "" if _BOUNDARY.search(old) else old
    if len(old) >= 60:
        return old[:1].upper() + old[1:]
    own, tokens = set(terms(name)), re.findall(r"[A-Za-z][\w-]*", old)
    if old and own <= set(terms(old)) and len(tokens) <= 8:
        kept = [w for w in tokens if stem(w.lower()) not in KIND_WORDS]
        while kept and kept[-1].lower() in STOPWORDS:
            kept.pop()
    else:
        kept = [*words(name), *(w for w in tokens[1:] if w.lower() not in STOPWORDS
                                and stem(w.lower()) not in own | GENERIC_OBJECTS | KIND_WORDS)]
    text = " ".join(kept)
    return text[:1].upper() + text[1:]


def _inputs(tool: ToolDef, hints: Mapping[str, str]) -> str:
    """ "Inputs: id (required, an issue key like ENG-234), user (optional)." with the first clause of
    each parameter's description."""
    parts = []
    for name in tool.properties:
        hint = re.split(r"[;.](?:\s|$)", hints.get(name, "").removeprefix("Optional. "), maxsplit=1)[0].strip()
        flag = "required" if name in tool.required else "optional"
        parts.append(f"{name} ({flag}{', ' + hint[:1].lower() + hint[1:] if hint else ''})")
    return f"Inputs: {', '.join(parts)}." if parts else ""


def _phrase(key: str) -> str:
    """A concept as written in a description: "deliveries (where a package or parcel is, …)"."""
    return concept(key).phrase


def _and(items: Sequence[str]) -> str:
    return listing(items).rsplit(" or ", 1)[0] + (" and " + items[-1] if len(items) > 1 else "")


def _singular(word: str) -> str:
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ses", "xes", "ches", "shes")):
        return word[:-2]
    return word[:-1] if word.endswith("s") and not word.endswith(("ss", "us")) else word


def _plural(noun: str) -> str:
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    return noun[:-1] + "ies" if noun.endswith("y") and noun[-2:-1] not in "aeiou" else noun + "s"


def _strip(text: str, leaks: Sequence[str]) -> str:
    for leak in leaks:
        text = re.sub(re.escape(leak), "", text, flags=re.IGNORECASE)
    return re.sub(r"\s{2,}", " ", text).strip()
