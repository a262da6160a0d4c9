"""Simulated agents — test doubles for the harness, never quality evidence (labelled OFFLINE wherever shown).

The harness needs an agent that makes tool calls and answers: tests of episodes, faults, resume, the gate and the
search run with these. They read only what a real model reads (exposed tool names, descriptions, parameter schemas,
tool results), but no rule here exists to read any server's definitions well, and no figure they produce says how
good a definition is (the offline readers, `optimizer.readers`, measure findability).

`sim:lexical` ranks tools by BM25 word overlap between the request and each tool's name tokens, description and
parameter descriptions, and honours boundary sentences ("not for …", "use X instead", a deprecation notice's
replacement). `sim:skim` weights name tokens by position and reads only each description's first sentence. Both
score a tool lower when its parameters cannot take the kinds of value the request gives (`fit.py`), split the task
into clauses and make one call per clause, fill arguments from the values the text holds by their kind
(`fill.py`), retry once after an error result they can learn from, and answer with what the tools returned. A
request for information never goes to a tool whose name says it changes something while another tool is offered.

Model strings: `sim:lexical?seed=3&noise=0.2&latency_ms=50`; the same seed gives the same turns.
"""

from __future__ import annotations

import asyncio
import functools
import math
import random
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from optimizer.definitions import ToolDef, canonical_json
from optimizer.lint.vocabulary import DEPRECATED, KEEPING_VERBS, VERB_CLASS, WRITE_VERBS
from optimizer.models.base import Message, ModelSpecError, ToolCall, Turn, Usage
from optimizer.text.tokens import (
    STOPWORDS,
    estimate_tokens,
    first_sentence,
    sentences,
    shared_prefix,
    stem,
    terms,
    words,
)
from optimizer.text.values import describe_values, property_kinds, shapes_in
from optimizer.tool_search import SEARCH_TOOL

from .fill import fill_arguments
from .fit import capacity, fit_factors
from .request import QUESTION, asks_only, clauses

HABITS = ("lexical", "skim")
_BOUNDARY = re.compile(r"\b(not for|not to be used|do not use|don't use|instead|rather than)\b", re.IGNORECASE)
_BOUNDARY_WORDS = frozenset(terms("use used using instead rather"))
_RETRYABLE = re.compile(r"\b(transient|temporar|try again|retry)", re.IGNORECASE)
_HOPELESS = re.compile(r"\b(business|permission|not allowed|forbidden|cannot be)\b", re.IGNORECASE)
_WRITE_STEMS = frozenset(stem(w) for w in WRITE_VERBS | KEEPING_VERBS)
K1, B = 1.2, 0.75
_SAME_VERB = {form: verb for form, verb in VERB_CLASS.items() if verb in ("create", "update", "delete")}
"""Verbs any reader takes for one another: change/modify/edit an entry, remove/erase it, add/make one."""


def _words(text: str) -> tuple[str, ...]:
    """The terms an agent matches, a verb of a `_SAME_VERB` class read as that class's verb."""
    return tuple(_SAME_VERB.get(t, t) for t in terms(text))


@dataclass(frozen=True)
class Profile:
    """Scored view of one exposed tool."""

    name: str
    fields: dict[str, tuple[str, ...]]
    boundaries: list[tuple[list[str], str | None]]
    takes: dict[str, int]
    replaced_by: str | None = None
    """The tool a deprecation notice sends readers to ("Deprecated: use read_text_file instead.")."""


class SimAgent:
    """A deterministic offline agent (noise makes it stochastic per episode seed)."""

    offline = True
    batch = False

    def __init__(self, habit: str, *, seed: int = 0, noise: float = 0.0, latency_ms: float = 0.0) -> None:
        if habit not in HABITS:
            raise ModelSpecError(f"unknown offline agent sim:{habit}; choose one of: sim:lexical, sim:skim")
        if not 0 <= noise <= 1:
            raise ModelSpecError("sim option noise must be between 0 and 1")
        self.habit = habit
        self.seed = seed
        self.noise = noise
        self.latency_ms = latency_ms
        self.id = f"sim:{habit}"
        self.settings: dict[str, Any] = {"seed": seed, "noise": noise}
        self._tool_cache: dict[int, tuple[Sequence[ToolDef], list[Profile], int, _Index]] = {}
        self._plans: dict[tuple[int, str, int], tuple[Sequence[ToolDef], list[tuple[str, str]]]] = {}

    async def check_access(self) -> None:
        """Nothing to check: no provider, no key."""

    async def turn(
        self, system: str, tools: Sequence[ToolDef], messages: Sequence[Message], *, seed: int = 0
    ) -> Turn:
        started = time.perf_counter()
        rng = random.Random(f"{self.seed}:{seed}")
        prompt = messages[0].text if messages else ""
        search = next((t for t in tools if t.name == SEARCH_TOOL), None)
        usable = tuple(t for t in tools if t is not search) if search is not None else tools
        profiles, tool_tokens, index = self._read_tools(usable)
        if search is not None:
            tool_tokens += estimate_tokens(canonical_json(search.canonical()))
        if search is not None and not _searched(messages):
            calls, text = _searches(prompt, search), "I'll search for the tools this needs."
        else:
            plan = self._cached_plan(usable, prompt, seed, lambda: self._plan(prompt, profiles, index, rng))
            calls, text = self._next_calls(plan, prompt, usable, messages)
        seen = [system, *(m.text for m in messages), *(r.content for m in messages for r in m.tool_results)]
        written = [text, *(str(c.arguments) for c in calls)]
        usage = Usage(
            input_tokens=tool_tokens + sum(estimate_tokens(s) for s in seen),
            output_tokens=sum(estimate_tokens(s) for s in written) + 10 * len(calls),
        )
        if self.latency_ms:  # a request takes latency_ms in all, the agent's own reading included
            await asyncio.sleep(max(0.0, self.latency_ms / 1000 - (time.perf_counter() - started)))
        return Turn(text=text, tool_calls=tuple(calls), usage=usage, stop_reason="tool_use" if calls else "end_turn")

    # --- reading the tools -------------------------------------------------------------------------

    def _read_tools(self, tools: Sequence[ToolDef]) -> tuple[list[Profile], int, _Index]:
        """Profiles, token cost and BM25 statistics of a tool list, computed once per distinct list."""
        cached = self._tool_cache.get(id(tools))
        if cached is None or cached[0] is not tools:  # the held reference keeps the id from being reused
            names = [t.name for t in tools]
            profiles = [self._profile(t, names) for t in tools]
            tokens = sum(estimate_tokens(canonical_json(t.canonical())) for t in tools)
            cached = self._tool_cache[id(tools)] = (tools, profiles, tokens, _index(profiles))
            if len(self._tool_cache) > 64:
                self._tool_cache.pop(next(iter(self._tool_cache)))
        return cached[1], cached[2], cached[3]

    def _cached_plan(
        self, tools: Sequence[ToolDef], prompt: str, seed: int, make: Callable[[], list[tuple[str, str]]]
    ) -> list[tuple[str, str]]:
        """The plan depends only on the tools, the task and the episode seed: make it once per episode."""
        key = (id(tools), prompt, seed)
        cached = self._plans.get(key)
        if cached is None or cached[0] is not tools:
            cached = self._plans[key] = (tools, make())
            if len(self._plans) > 4096:
                self._plans.pop(next(iter(self._plans)))
        return cached[1]

    def _profile(self, tool: ToolDef, names: list[str]) -> Profile:
        read = self._read(tool)
        params = " ".join(f"{n} {p.get('description', '')}" for n, p in tool.properties.items())
        kept = " ".join(s for s in sentences(read) if not _BOUNDARY.search(s))
        # An exclusion is what the tool is NOT for: words it also claims in its name or its positive
        # sentences ("order" in "…for an order. Not for order totals") and the boundary's own
        # wording ("use … instead") do not tell the two apart.
        own = set(_words(tool.name)) | set(_words(kept)) | _BOUNDARY_WORDS
        boundaries, replaced_by = [], None
        for sentence in sentences(read):
            if _BOUNDARY.search(sentence):
                named = _named_tool(sentence, tool.name, names)
                excluded = [t for t in _words(_strip_names(sentence, names)) if t not in own]
                boundaries.append((excluded, named))
                replaced_by = replaced_by or (named if DEPRECATED.search(sentence) else None)
        return Profile(
            name=tool.name,
            fields={"name": _words(tool.name), "description": _words(kept), "params": _words(params)},
            boundaries=boundaries,
            replaced_by=replaced_by,
            takes=capacity(tool, read_descriptions=self.habit != "skim"),
        )

    def _read(self, tool: ToolDef) -> str:
        """The part of a tool's description this agent reads: all of it, or its first sentence (skim)."""
        return first_sentence(tool.description or "") if self.habit == "skim" else tool.description or ""

    def _scores(self, query: dict[str, float], profiles: list[Profile], index: _Index) -> dict[str, float]:
        """BM25 of each tool against weighted query terms, then the boundary sentences."""
        weights = {"name": 2.0, "description": 1.0, "params": 0.4}
        if self.habit == "skim":
            weights = {"name": 2.5, "description": 1.0, "params": 0.0}
        n = len(profiles)
        scores = {p.name: 0.0 for p in profiles}
        for field, weight in weights.items():
            if not weight:
                continue
            avg, df, per_tool = index[field]
            for profile, (doc, counts) in zip(profiles, per_tool, strict=True):
                for term, qweight in query.items():
                    tf = counts.get(term, 0)
                    if not tf:
                        continue
                    idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
                    pos = self._position_weight(doc, term) if field == "name" else 1.0
                    saturation = tf * (K1 + 1) / (tf + K1 * (1 - B + B * len(doc) / avg))
                    scores[profile.name] += qweight * weight * pos * idf * saturation
        self._apply_boundaries(query, profiles, scores)
        return scores

    def _position_weight(self, name_terms: Sequence[str], term: str) -> float:
        if self.habit != "skim":
            return 1.0
        return 1.6 / (1 + 0.6 * name_terms.index(term))

    @staticmethod
    def _apply_boundaries(query: dict[str, float], profiles: list[Profile], scores: dict[str, float]) -> None:
        """Exclusions the request hits move score to the named alternative; a deprecated tool's whole score goes
        to its replacement, whatever the request says."""
        for profile in profiles:
            if profile.replaced_by in scores:
                replacement = profile.replaced_by
                scores[replacement] = max(scores[replacement], scores[profile.name])
                scores[profile.name] = min(scores[profile.name], 0.0) - 1.0
        for profile in profiles:
            for excluded, alternative in profile.boundaries:
                overlap = sum(query.get(t, 0.0) for t in set(excluded))
                if not overlap:
                    continue
                shift = 1.5 * overlap
                scores[profile.name] -= shift
                if alternative in scores:
                    scores[alternative] += shift

    # --- planning ----------------------------------------------------------------------------------

    def _plan(
        self, prompt: str, profiles: list[Profile], index: _Index, rng: random.Random
    ) -> list[tuple[str, str]]:
        """(clause, tool) steps: one per clause that clearly asks for something, in order."""
        if not profiles:
            return []
        order = {p.name: i for i, p in enumerate(profiles)}
        context = {t: 0.25 for t in _words(describe_values(prompt))}
        candidates: list[tuple[str, str, float]] = []
        for clause in clauses(prompt):
            query = context | {t: 1.0 for t in _words(describe_values(clause))}
            scores = self._scores(query, profiles, index)
            factors = fit_factors(clause, {p.name: p.takes for p in profiles})
            # below zero words, the fit still breaks a tie: a reader who matches nothing goes by what a tool can take
            scores = {name: score * factors[name] if score > 0 else score - (1 - factors[name]) / 1000
                      for name, score in scores.items()}
            if self.noise:
                spread = max(scores.values()) - min(scores.values()) or 1.0
                for name in scores:
                    scores[name] += self.noise * spread * rng.gauss(0, 1)
            best = self._pick(scores, order, clause)
            # the fit chooses between tools; how clearly the clause asks for something is its words' score
            candidates.append((clause, best, scores[best] / factors[best] if scores[best] > 0 else scores[best]))
        top = max(score for _, _, score in candidates)
        steps: list[tuple[str, str]] = []
        for clause, tool, score in candidates:
            if score <= 0 or score < 0.45 * top:
                continue
            if steps and steps[-1][1] == tool:
                steps[-1] = (steps[-1][0] + " " + clause, tool)
                continue
            steps.append((clause, tool))
        return steps or [(prompt, candidates[0][1])]

    @staticmethod
    def _pick(scores: dict[str, float], order: dict[str, int], clause: str) -> str:
        """The best-scoring tool. A request for information ("What was the last commit?", "Give its message.", not
        "Can you …") goes to the best tool whose name does not say it changes something, when there is one; between
        tools that score the same (as when no tool shares a word with the request), any question goes to a tool that
        does not write; then the tool listed first. A prefix every tool's name shares (`git_`) is not the verb."""
        shared = shared_prefix(list(scores))
        writes = {name: _writes(name[len(shared):]) for name in scores}
        if asks_only(clause):
            reading = {name: score for name, score in scores.items() if not writes[name]}
            if reading:
                scores = reading
        top = max(scores.values())
        tied = [name for name in scores if scores[name] >= top - 1e-9]
        asks = bool(QUESTION.search(clause))
        return max(tied, key=lambda name: (not (asks and writes[name]), -order[name]))

    def _next_calls(
        self, plan: list[tuple[str, str]], prompt: str, tools: Sequence[ToolDef], messages: Sequence[Message]
    ) -> tuple[list[ToolCall], str]:
        history = _history(messages)
        results = [r for _, _, r, is_error in history if not is_error]
        by_name = {t.name: t for t in tools}
        done_steps = {step for step, _, _, _ in history}
        last_step = max(done_steps, default=-1)
        if history:
            step, attempt, text, is_error = history[-1]
            if is_error and attempt == 0 and step < len(plan) and _worth_retrying(text):
                clause, tool = plan[step]
                args = fill_arguments(by_name[tool].input_schema, clause, prompt, results, shapes_in(text),
                                      tool=tool, error=text)
                if args != _last_arguments(messages, f"call_{step}_0") or _RETRYABLE.search(text):
                    return [ToolCall(f"call_{step}_1", tool, args)], f"That failed ({_first_line(text)}); retrying."
        calls: list[ToolCall] = []
        for step in range(last_step + 1, len(plan)):
            clause, tool = plan[step]
            schema = by_name[tool].input_schema
            args = fill_arguments(schema, clause, prompt, results, tool=tool)
            if calls and _needs_results(schema, args):
                break
            calls.append(ToolCall(f"call_{step}_0", tool, args))
        if calls:
            return calls, f"I'll use {', '.join(c.name for c in calls)}."
        return [], _answer(messages)


def _searched(messages: Sequence[Message]) -> bool:
    return any(c.name == SEARCH_TOOL for m in messages for c in m.tool_calls)


def _searches(prompt: str, search: ToolDef) -> list[ToolCall]:
    """One search per clause of the task, in its content words (alternatives of a pattern when the search tool
    asks for a regular expression)."""
    pattern = "regular expression" in (search.description or "") + str(search.input_schema)
    calls = []
    for number, clause in enumerate(clauses(prompt)):
        kept = [w for w in words(describe_values(clause)) if w not in STOPWORDS and len(w) > 2][:8]
        if kept:
            query = "|".join(dict.fromkeys(kept)) if pattern else " ".join(kept)
            calls.append(ToolCall(f"search_{number}", SEARCH_TOOL, {"query": query}))
    return calls or [ToolCall("search_0", SEARCH_TOOL, {"query": prompt[:200]})]


@functools.lru_cache(maxsize=4096)
def _writes(name: str) -> bool:
    """Whether a tool's name opens with a verb that changes something (`delete_entities`, `add_note`)."""
    parts = words(name)
    return bool(parts) and stem(parts[0]) in _WRITE_STEMS


_Index = dict[str, tuple[float, Counter[str], list[tuple[tuple[str, ...], Counter[str]]]]]


def _index(profiles: list[Profile]) -> _Index:
    """Per field: average length, document frequencies, and each tool's terms with their counts."""
    out: _Index = {}
    for field in ("name", "description", "params"):
        docs = [p.fields[field] for p in profiles]
        avg = sum(len(d) for d in docs) / max(1, len(docs)) or 1.0
        out[field] = (avg, Counter(t for d in docs for t in set(d)), [(d, Counter(d)) for d in docs])
    return out


def _history(messages: Sequence[Message]) -> list[tuple[int, int, str, bool]]:
    """(step, attempt, result text, is_error) for every call made so far, from the call ids."""
    out: list[tuple[int, int, str, bool]] = []
    for message in messages:
        for result in message.tool_results:
            match = re.fullmatch(r"call_(\d+)_(\d+)", result.call_id)
            if match:
                out.append((int(match.group(1)), int(match.group(2)), result.content, result.is_error))
    return out


def _last_arguments(messages: Sequence[Message], call_id: str) -> dict[str, Any] | None:
    for message in messages:
        for call in message.tool_calls:
            if call.id == call_id:
                return call.arguments
    return None


def _needs_results(schema: dict[str, Any] | Any, args: dict[str, Any]) -> bool:
    """A required value is missing, or is not of the shape its description shows (an email where
    "an id like C-1004" is asked for): an earlier call's result should supply it."""
    props = schema.get("properties") or {}
    for name in schema.get("required") or []:
        if name not in args:
            return True
        prop = props.get(name)
        if isinstance(prop, dict) and isinstance(args[name], str):
            shapes = property_kinds(name, prop)[1]
            if shapes and not shapes & shapes_in(args[name]):
                return True
    return False


def _worth_retrying(error_text: str) -> bool:
    if _HOPELESS.search(error_text):
        return False
    return bool(_RETRYABLE.search(error_text) or shapes_in(error_text) or "format" in error_text.lower())


def _answer(messages: Sequence[Message]) -> str:
    """What every call returned (tool searches not), in the order the results came."""
    parts = [r.content for m in messages for r in m.tool_results if r.call_id.startswith("call_")]
    if not parts:
        return "<response>I could not find a tool for this request.</response>"
    return "Here is what the tools returned.\n<response>\n" + "\n".join(parts) + "\n</response>"


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0][:120]


def _named_tool(sentence: str, own: str, names: list[str]) -> str | None:
    """The first other tool the sentence names (the alternative in "use X instead")."""
    hits = [(m.start(), name) for name in names if name != own
            for m in [re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", sentence)] if m]
    return min(hits)[1] if hits else None


def _strip_names(sentence: str, names: list[str]) -> str:
    for name in sorted(names, key=len, reverse=True):
        sentence = re.sub(rf"(?<![\w-]){re.escape(name)}(?![\w-])", " ", sentence)
    return sentence
