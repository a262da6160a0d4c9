"""The offline rules proposer: deterministic rewrites of tool definitions from what the server and the train
evidence show, with no vocabulary of any domain.

What it writes for a tool (PRINCIPLES: what + when, boundary, inputs; one to three sentences, at most 400
characters):
- a first sentence, verb first, which is all a skimming reader sees: what the tool does (the old first sentence
  when it says more than the name, else the name's action and object: "Look up a customer"), the kinds of input
  it goes by ("by email address, phone number or customer id", from the parameters' formats) and what comes
  back ("returns its tier, status and shipping address": field labels its successful train results show,
  those the tool's train requests ask about first);
- "Not for <the other tool's job>; use <other tool> instead." for the tools agents expected when they picked
  this one, the job said from the other tool's own name and result fields;
- parameter descriptions stating the format with an invented example (`parameters`);
- verb_object renames of bare generic names (`search`, `get_item`).

Contract: `propose` returns up to k distinct candidates, none equal to `current`, each built on `current` (tools
it does not rewrite keep their edits; a rewritten tool keeps its parameter descriptions unless the evidence says
more, and its boundary relations), deterministic for (catalog, current, evidence, k, seed). No text it writes
holds an error message, a value an agent sent, or anything `leaked_phrases` finds in the train prompts that the
server's own text does not hold.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from optimizer.definitions import Candidate, Catalog, ToolDef, ToolEdit, namespace_word, namespaced
from optimizer.lint.vocabulary import DEPRECATED
from optimizer.propose.asks import asked_phrases
from optimizer.propose.base import Evidence
from optimizer.propose.evidence import NO_CALL, ArgumentNote, argument_notes
from optimizer.propose.fields import counted_noun, result_fields, subject, substantive
from optimizer.propose.formats import read_message
from optimizer.propose.leakage import leaked_phrases
from optimizer.propose.listings import listing_hints
from optimizer.propose.parameters import GENERIC_PARAMETERS, format_of, parameter_hints
from optimizer.propose.safety import catalog_text
from optimizer.propose.term_table import KIND_WORDS, TermTable, lowercase, results_by_tool, tool_docs
from optimizer.propose.wording import (
    BOUNDARY,
    FILLER,
    action,
    job,
    old_trigger,
    or_,
    plural,
    purpose,
    returns,
    singular,
    spell_out,
)
from optimizer.text import sentences, shared_prefix, stem, terms, words
from optimizer.values import FREE_TEXT_WORDS, find_values

GENERIC_VERBS = frozenset(("search", "get", "list", "create", "query", "find", "fetch", "update", "delete", "run",
                          "read", "lookup", "add", "remove", "set", "make", "show", "view", "edit", "new", "do"))
GENERIC_OBJECTS = frozenset(terms(" ".join(FILLER)))
LONG = 400
LOOKUPS = frozenset(("get", "search", "list"))
"""Verb classes whose job is the information they return: a boundary line names the other tool's fields."""


@dataclass(frozen=True)
class Variant:
    """One way of rewriting: how many result fields the first sentence names, whether it names the inputs,
    how many boundary lines (and how many of the other tool's fields each names), renames, whether descriptions
    are rewritten at all (False: parameter descriptions only), and which tools ("all" with train tasks or
    failures, or "failing" ones)."""

    fields: int = 3
    inputs: bool = True
    boundaries: int = 2
    boundary_fields: int = 1
    rename: bool = True
    describe: bool = True
    scope: str = "all"
    asks: int = 0

    def summary(self) -> str:
        if not self.describe:
            return "rules: parameter descriptions only"
        parts = [f"{self.fields} result fields" if self.fields else "no result fields",
                 "inputs named" if self.inputs else "inputs not named",
                 f"up to {self.boundaries} boundary lines" if self.boundaries else "no boundary lines",
                 "generic names renamed" if self.rename else "names kept",
                 f"up to {self.asks} asked phrases" if self.asks else "",
                 "failing tools only" if self.scope == "failing" else ""]
        return "rules: " + ", ".join(p for p in parts if p)


VARIANTS = (  # every run of four in a row (the seed picks where one starts) holds two full rewrites, one asking
    Variant(asks=2),
    Variant(fields=0, boundary_fields=0),
    Variant(fields=4, boundary_fields=2),
    Variant(boundaries=0, asks=2),
    Variant(fields=5, rename=False),
    Variant(describe=False),
    Variant(fields=2, scope="failing", asks=2),
    Variant(fields=2, inputs=False, boundaries=1, boundary_fields=0, asks=1),
)


class RulesProposer:
    """Deterministic, offline proposer (see the module docstring)."""

    name = "rules"
    offline = True

    def __init__(self, variants: Sequence[Variant] = VARIANTS) -> None:
        self.variants = tuple(variants)
        self._why: dict[str, str] = {}

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
                self._why[candidate.key] = variant.summary()
        return out

    def last_report(self) -> dict[str, Any]:
        """Nothing to report: no requests, no cost."""
        return {}

    def rationale(self, key: str) -> str | None:
        """Which way of rewriting made the candidate (`Variant.summary`)."""
        return self._why.get(key)


class _Study:
    """What the evidence says about each tool: its result fields and nouns, its inputs' formats, its parameter
    descriptions, the tools agents confused it with. Built once per `propose` call."""

    def __init__(self, catalog: Catalog, current: Candidate, evidence: Evidence) -> None:
        self.catalog, self.current, self.evidence = catalog, current, evidence
        episodes = [*evidence.failures, *evidence.successes]
        self.prompts = sorted({p for ps in evidence.prompts_by_tool.values() for p in ps}
                              | {e.prompt for e in episodes})
        order = {e.prompt: e.expected_tools for e in episodes}
        self.tasks = TermTable(tool_docs(evidence.prompts_by_tool, order, lowercase(self.prompts)))
        self.results = results_by_tool(episodes)
        self.hints = listing_hints(catalog, episodes, parameter_hints(catalog, episodes, self.prompts,
                                                                      evidence.prompts_by_tool, current))
        notes = argument_notes(episodes, {t.name: list(t.properties) for t in catalog.tools})
        self.formats = {t.name: {p: format_of(p, prop, (notes.get(t.name) or {}).get(p) or ArgumentNote())
                                 for p, prop in t.properties.items()} for t in catalog.tools}
        self.failing = {t for e in evidence.failures for t in (*e.expected_tools[:1], *e.chosen_tools[:1])}
        self.lost = {e.prompt for e in evidence.failures if e.expected_tools[:1] != e.chosen_tools[:1]}
        for tool in catalog.tools:  # a parameter known only by its description (`_borrow`): read what it asks for
            for param, hint in self.hints.get(tool.name, {}).items():
                if param in self.formats[tool.name] and not self.formats[tool.name][param].known():
                    asked = re.split(r",?\s+e\.g\.\s", hint.removeprefix("Optional. "))[0]  # not its example
                    self.formats[tool.name][param] = read_message(f"{param} must be {asked}", ())
        self.fields = {t.name: self._ranked_fields(t) for t in catalog.tools}
        self.prefix = shared_prefix([t.name for t in catalog.tools])
        self.known = (catalog_text(catalog),)

    def leaks(self, text: str) -> bool:
        """Whether `text` copies a train request (`leaked_phrases`); the server's own text never counts as copied,
        as in screening: a request that quotes a description does not bar the description's words."""
        return bool(leaked_phrases(text, self.prompts, known_text=self.known))

    def bare(self, name: str) -> str:
        """A name without the prefix every tool's name shares: `git_diff` does "diff", not "git"."""
        return name.removeprefix(self.prefix) or name

    def _ranked_fields(self, tool: ToolDef) -> list[str]:
        """Result fields, those whose words the tool's train requests use first, then in result order; none
        that only repeats the tool's name. An abbreviation the requests or the server's descriptions spell out is said
        in words ("is daylight saving time (DST)")."""
        own = set(terms(tool.name.replace("_", " "))) | set(terms(self.noun(tool) or ""))
        said = [*self.evidence.prompts_by_tool.get(tool.name, ()), *(t.description for t in self.catalog.tools)]
        labels = [spell_out(f, said) for f in result_fields(substantive(self.results.get(tool.name, [])))
                  if not set(terms(f)) <= own]
        asked = {f: sum(self.tasks.count(tool.name, t) for t in terms(f) if t not in KIND_WORDS | own) for f in labels}
        valued = {f: bool(set(terms(f)) & KIND_WORDS) for f in labels}  # "email": a word requests carry as values
        return sorted(labels, key=lambda f: (valued[f], -min(asked[f], 2), labels.index(f)))

    def noun(self, tool: ToolDef, borrow: bool = True) -> str | None:
        """The singular thing a tool is about: the noun its results open with before an id, else the one they
        count ("3 documents match"), else the word its first required input's kinds share ("document path or
        document id"), else (with `borrow`) the noun of the tool whose result records open with ids of the
        letters the requests for this tool carry (requests with ENG-1 ids; another tool lists "ENG-2 …" records
        and counts "issues")."""
        texts = self.results.get(tool.name, [])
        found = subject(substantive(texts)) or counted_noun(texts)
        if found:
            return singular(found)
        for param in [p for p in tool.required if p in tool.properties][:1]:
            heads = {a.noun.split()[0] for a in self.formats[tool.name][param].alternatives if len(a.noun.split()) > 1}
            if len(heads) == 1 and not set(terms(next(iter(heads)))) & KIND_WORDS and "'" not in next(iter(heads)):
                return heads.pop()
        return self._noun_by_ids(tool) if borrow else None

    def _noun_by_ids(self, tool: ToolDef) -> str | None:
        asked = {f.value.split("-")[0].upper() for prompt in self.evidence.prompts_by_tool.get(tool.name, ())
                 if self._alone(prompt) for f in find_values(prompt, 0) if f.kind == "prefixed_id"}
        owners: Counter[str] = Counter()
        for other in self.catalog.tools:
            listed = {opening for text in self.results.get(other.name, []) for line in text.splitlines()
                      if (opening := _record_id(line))}
            if other.name != tool.name and asked & listed and (noun := self.noun(other, borrow=False)):
                owners[noun] += len(asked & listed)
        ranked = owners.most_common(2)
        return ranked[0][0] if ranked and (len(ranked) == 1 or ranked[0][1] > ranked[1][1]) else None

    def _alone(self, prompt: str) -> bool:
        """Whether only one tool's train tasks hold this prompt."""
        return sum(prompt in prompts for prompts in self.evidence.prompts_by_tool.values()) == 1

    # --- candidates ---------------------------------------------------------------------------------------

    def candidate(self, variant: Variant) -> Candidate:
        targets = [t for t in self.catalog.tools if t.name in self.tasks.docs or t.name in self.failing]
        if variant.scope == "failing":
            targets = [t for t in targets if t.name in self.failing]
        edits = dict(self.current.edits)
        names = {t.name: (edits.get(t.name) or ToolEdit()).name or t.name for t in self.catalog.tools}
        if variant.rename and variant.describe:
            names.update(self.renames(targets, names))
        word = namespace_word(self.catalog, self.current)
        exposed = {orig: namespaced(name, self.current.scheme, word) for orig, name in names.items()}
        for tool in targets:
            old = edits.get(tool.name) or ToolEdit()
            text = self.describe(tool, variant, exposed, names) if variant.describe else old.description
            parameters = {**old.parameters, **self.hints.get(tool.name, {})}
            edits[tool.name] = ToolEdit(name=None if names[tool.name] == tool.name else names[tool.name],
                                        description=text, parameters={**parameters, **moved(tool, text, parameters)})
        for tool in self.catalog.tools:  # renamed tools that are not rewritten keep their old text
            if names[tool.name] != tool.name:
                edits[tool.name] = replace(edits.get(tool.name) or ToolEdit(), name=names[tool.name])
        return Candidate(edits=edits, scheme=self.current.scheme, word=self.current.word)

    def renames(self, targets: Sequence[ToolDef], names: Mapping[str, str]) -> dict[str, str]:
        """verb_object names for tools named by a bare generic verb or a generic verb + generic object
        (`search`, `get_item`), the object being the noun their results are about; tools sharing a generic
        object share the noun most of them point to."""
        generic = {t.name: parts for t in targets if (parts := words(names[t.name])) and parts[0] in GENERIC_VERBS
                   and (len(parts) == 1 or (len(parts) == 2 and stem(parts[1]) in GENERIC_OBJECTS))}
        nouns = {name: self.noun(self.catalog.get(name)) for name in generic}
        siblings: dict[str, list[str]] = defaultdict(list)
        for name, parts in generic.items():
            siblings[stem(parts[1]) if len(parts) == 2 else name].append(name)
        for members in (m for m in siblings.values() if len(m) > 1):
            votes = Counter(nouns[m] for m in members if nouns[m])
            if votes:
                nouns.update(dict.fromkeys(members, votes.most_common(1)[0][0]))
        taken, out = set(names.values()), {}
        for name, parts in generic.items():
            noun = (nouns[name] or "").rpartition(" ")[2]  # the head noun: "wiki page" names a tool `create_page`
            many = parts[0] in ("search", "list", "query", "find")
            new = f"{parts[0]}_{plural(noun) if many else noun}" if noun else ""
            new = re.sub(r"[^a-z0-9_]+", "_", new.lower()).strip("_")
            if new and new not in taken and not self.leaks(new.replace("_", " ")):
                taken.add(new)
                out[name] = new
        return out

    def describe(self, tool: ToolDef, variant: Variant, exposed: Mapping[str, str], names: Mapping[str, str]) -> str:
        """The first sentence (purpose, inputs, what comes back) and the boundary lines, within 400 characters:
        result fields go first, then boundary lines, until it fits; no part `leaked_phrases` flags (the old
        first sentence included: then the proposer's own words say it)."""
        name, noun = names[tool.name], self.noun(tool)
        bare = self.bare(name)
        act = action(bare, noun, tool.description)
        inputs = self.inputs(tool) if variant.inputs else ([], [])
        count = counted_noun(self.results.get(tool.name, []))
        old = tool.description
        triggers = [purpose(bare, said, *ins, noun=noun, with_article=articled) for said in (old, "")
                    for ins in (inputs, (inputs[0], []), ([], [])) for articled in (True, False)]
        trigger = next((t for t in triggers if not self.leaks(t)), " ".join(words(bare)))
        trigger = trigger[:1].upper() + trigger[1:]
        asked = asked_phrases(tool.name, self.evidence.prompts_by_tool, self.lost,
                              " ".join([name, tool.name, old, trigger]), variant.asks) if variant.asks else []
        fields = [] if re.search(r"\breturn", old if trigger == old_trigger(old) else trigger, re.I) else [
            f for f in self.fields[tool.name] if not self.leaks(returns(act, [f], count))]
        fields = fields[: variant.fields]
        bounds = self.boundaries(tool, variant, exposed, names)[: variant.boundaries]
        if trigger == old_trigger(old) and any(_USAGE.search(s) for s in sentences(old)[1:]):
            bounds = bounds[:1]  # the author's "when to use it" sentence keeps its place among the three
        notice = next((s for s in sentences(old) if DEPRECATED.search(s) and s not in trigger), "")
        if notice:  # the server's word that the tool is retired leads, where even a skimming reader sees it
            bounds, notice = [], notice + " "
        for asking in range(len(asked), -1, -1):
            quoted = ['"' + phrase + '"' for phrase in asked[:asking]]
            about = f", for requests that mention {or_(quoted)}" if asking else ""
            for shown in range(len(bounds), -1, -1):
                for named in range(len(fields), -1, -1):
                    said = returns(act, fields[:named], count)
                    first = f"{trigger}{about}{'; ' + said if said else ''}."
                    text = notice + " ".join([first, *bounds[:shown]])
                    if len(text) <= LONG and not self.leaks(text):
                        return notice + " ".join([self._more_of_old(first, old, text), *bounds[:shown]])
        return f"{notice}{trigger}."

    def _more_of_old(self, first: str, old: str, whole: str) -> str:
        """When the first sentence is the server's own, its next sentences after it (when to use it first, then what
        it returns, then limits and formats in order) while the whole text stays within three sentences and 400
        characters."""
        if first.rstrip(".") != old_trigger(old):
            return first
        rest = [s for s in sentences(old)[1:] if not BOUNDARY.search(s) and not self.leaks(s)]
        for sentence in sorted(rest, key=lambda s: (not _USAGE.search(s),
                                                    not re.search(r"\breturn", s, re.IGNORECASE))):
            if len(sentences(whole)) >= 3 or len(whole) + len(sentence) + 1 > LONG:
                break
            first, whole = f"{first} {sentence.strip()}", f"{whole} {sentence.strip()}"
        return first

    def inputs(self, tool: ToolDef) -> tuple[list[str], list[str]]:
        """What the tool goes by: per required parameter (two at most) the kinds of value its format names
        ("email address or customer id"), "keywords" for a free-text query, what errors call it ("new
        status"), the parameter's name when it takes one of a list, else a specific parameter name; and the
        same for the (two at most) optional parameters whose format is known."""
        required, optional = [], []
        ordered = [p for p in tool.required if p in tool.properties]
        for param in [*ordered, *(p for p in tool.properties if p not in ordered)]:
            fmt = self.formats[tool.name][param]
            nouns = list(dict.fromkeys(a.noun for a in fmt.alternatives if a.noun))
            said = or_(nouns) if nouns else re.sub(r"^the\s+", "", fmt.gloss) if fmt.gloss else ""
            said = said or (" ".join(words(param)) if fmt.options else "")  # "status", one of a closed list
            if param in tool.required:
                free = "keywords" if set(words(param)) & FREE_TEXT_WORDS else ""
                named = param.lower() not in GENERIC_PARAMETERS and not set(terms(param)) <= set(terms(tool.name))
                specific = " ".join(words(param)) if named else ""
                required += [t for t in [said or free or specific] if t]
            elif said:
                optional.append(said)
        return required[:2], optional[:2]

    def boundaries(self, tool: ToolDef, variant: Variant, exposed: Mapping[str, str],
                   names: Mapping[str, str]) -> list[str]:
        """"Not for <job>; use X instead." for the tools X agents expected when they picked this one, most
        often first, and the tools its current description already draws a line to. X's job is said from X's
        name and result fields (those X's lost requests ask about first), none of which this tool's own words
        or a value kind ("email") would match. X is named by its original name, which `apply` turns into the
        name it is exposed under whatever edits the search combines. (The reverse line, on the tool agents
        should have picked, would exclude the very words its own requests use.)"""
        wrong: Counter[str] = Counter()
        for expected, row in self.evidence.confusions.items():
            if expected != tool.name and row.get(tool.name):
                wrong[expected] += row[tool.name]
        edit = self.current.edits.get(tool.name)
        old = [s for s in sentences(edit.description or "")[1:] if BOUNDARY.search(s)] if edit else []
        for other in self.catalog.tools:
            called = {other.name, names[other.name], exposed[other.name]}
            if other.name != tool.name and any(f"use {c} instead" in s for c in called for s in old):
                wrong[other.name] += 1
        mine = " ".join([names[tool.name], tool.name, old_trigger(tool.description), *sum(self.inputs(tool), [])])
        own = set(terms(mine))
        own |= {t for f in self.fields[tool.name] for t in terms(f)}
        out = []
        for other_name, _count in sorted(wrong.items(), key=lambda x: (-x[1], x[0])):
            if other_name in (tool.name, NO_CALL) or other_name not in exposed:
                continue
            other = self.catalog.get(other_name)
            act = action(self.bare(names[other_name]), self.noun(other), other.description)
            theirs = set(terms(act.object)) | own | KIND_WORDS
            lookup = act.kind in LOOKUPS or bool((other.annotations or {}).get("readOnlyHint"))
            fields = [f for f in self.fields[other_name] if not set(terms(f)) & theirs] if lookup else []
            lost = Counter(t for e in self.evidence.failures if e.expected_tools[:1] == (other_name,)
                           and e.chosen_tools[:1] == (tool.name,) for t in set(terms(e.prompt)))
            fields.sort(key=lambda f: -sum(lost[t] for t in terms(f)))  # those the lost requests ask about first
            phrases = [job(act, fields[:shown]) for shown in range(min(len(fields), variant.boundary_fields), -1, -1)]
            phrases.append(job(act, [], gerund_form=True))  # "looking up a task": when the thing is this tool's too
            for phrase in phrases:
                line = f"Not for {phrase}; use {other_name} instead."
                if (act.object or fields) and set(terms(phrase)) - own and not self.leaks(line):
                    out.append(line)
                    break
        return out


_USAGE = re.compile(r"\b(?:when (?:you|the user)|use (?:it|this)|useful|great|perfect|ideal|helpful|essential)\b",
                    re.IGNORECASE)
"""An author's sentence on when to use the tool ("Great for finding files when you don't know their location")."""


def moved(tool: ToolDef, text: str | None, parameters: Mapping[str, str]) -> dict[str, str]:
    """Parameter descriptions taking the old description's sentences (after the first) that the new text drops and
    that are about one parameter, named as such ("Use the 'head' parameter to …", "Use pattern like '*.ext' …"; a
    name the tool's own name holds, `member` of `get_member`, says nothing): a format or usage note belongs with the
    input it is about, not lost."""
    if text is None or not tool.description:
        return {}
    out: dict[str, str] = {}
    own = set(words(tool.name))
    for sentence in sentences(tool.description)[1:]:  # the first says what the tool does
        if sentence in text or BOUNDARY.search(sentence):
            continue
        named = [p for p in tool.properties if not set(words(p)) <= own
                 and re.search(rf"(?<![\w-])['\"`]?{re.escape(p)}['\"`]?(?![\w-])", sentence)
                 and (len(p) >= 4 or f"'{p}'" in sentence)]
        if len(named) != 1:
            continue
        param = named[0]
        said = out.get(param) or parameters.get(param) or str(tool.properties[param].get("description") or "")
        if sentence not in said and len(said) + len(sentence) < LONG:
            out[param] = f"{said.rstrip()} {sentence}".strip()
    return out


def _record_id(line: str) -> str:
    """The letters of the prefixed id a result line opens with ("ENG-131 [open] …" -> "ENG"), or ""."""
    found = find_values(line.strip().lstrip("-* "), 0)
    first = found[0] if found else None
    return first.value.split("-")[0].upper() if first and first.kind == "prefixed_id" and first.position == 0 else ""
