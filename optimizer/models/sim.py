"""Offline simulated agents — honest stand-ins for real models, labelled OFFLINE wherever shown.

They read only what a real model reads: exposed tool names, descriptions, parameter schemas and
tool results. `sim:lexical` ranks tools with BM25 over name tokens, the whole description and the
parameter descriptions, and honours boundary sentences ("not for …", "use X instead"). `sim:skim`
weights name tokens by position and reads only each description's first sentence. Both split the
task into clauses and make one call per clause, fill arguments from the text, retry once after an
error result they can learn from, and answer with what the tools returned.

Model strings: `sim:lexical?seed=3&noise=0.2&latency_ms=50`.
"""

from __future__ import annotations

import asyncio
import math
import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from optimizer.definitions import ToolDef, canonical_json
from optimizer.models.base import Message, ModelSpecError, ToolCall, Turn, Usage
from optimizer.models.sim_fill import describe_values, fill_arguments, shapes_in
from optimizer.text import estimate_tokens, first_sentence, sentences, terms

HABITS = ("lexical", "skim")
_CLAUSE_BREAK = re.compile(r"\s*(?:;|,?\s+and then\s+|,?\s+then\s+|,?\s+after that,?\s+|,?\s+also\s+)\s*",
                           re.IGNORECASE)
_BOUNDARY = re.compile(r"\b(not for|not to be used|do not use|don't use|instead|rather than)\b", re.IGNORECASE)
_BOUNDARY_WORDS = frozenset(terms("use used using instead rather"))
_RETRYABLE = re.compile(r"\b(transient|temporar|try again|retry)", re.IGNORECASE)
_HOPELESS = re.compile(r"\b(business|permission|not allowed|forbidden|cannot be)\b", re.IGNORECASE)
K1, B = 1.2, 0.75


@dataclass(frozen=True)
class Profile:
    """Scored view of one exposed tool."""

    name: str
    fields: dict[str, list[str]]
    boundaries: list[tuple[list[str], str | None]]


class SimAgent:
    """A deterministic offline agent (noise makes it stochastic per episode seed)."""

    offline = True

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

    async def turn(
        self, system: str, tools: Sequence[ToolDef], messages: Sequence[Message], *, seed: int = 0
    ) -> Turn:
        if self.latency_ms:
            await asyncio.sleep(self.latency_ms / 1000)
        rng = random.Random(f"{self.seed}:{seed}")
        prompt = messages[0].text if messages else ""
        names = [t.name for t in tools]
        profiles = [self._profile(t, names) for t in tools]
        plan = self._plan(prompt, profiles, rng)
        calls, text = self._next_calls(plan, prompt, tools, messages)
        seen = [system, *(canonical_json(t.canonical()) for t in tools)]
        seen += [m.text for m in messages] + [r.content for m in messages for r in m.tool_results]
        written = [text, *(str(c.arguments) for c in calls)]
        usage = Usage(
            input_tokens=sum(estimate_tokens(s) for s in seen),
            output_tokens=sum(estimate_tokens(s) for s in written) + 10 * len(calls),
        )
        return Turn(text=text, tool_calls=tuple(calls), usage=usage, stop_reason="tool_use" if calls else "end_turn")

    # --- reading the tools -------------------------------------------------------------------------

    def _profile(self, tool: ToolDef, names: list[str]) -> Profile:
        description = tool.description or ""
        read = first_sentence(description) if self.habit == "skim" else description
        params = " ".join(f"{n} {p.get('description', '')}" for n, p in tool.properties.items())
        kept = " ".join(s for s in sentences(read) if not _BOUNDARY.search(s))
        # An exclusion is what the tool is NOT for: words it also claims in its name or its positive
        # sentences ("order" in "…for an order. Not for order totals") and the boundary's own
        # wording ("use … instead") do not tell the two apart.
        own = set(terms(tool.name)) | set(terms(kept)) | _BOUNDARY_WORDS
        boundaries = []
        for sentence in sentences(read):
            if _BOUNDARY.search(sentence):
                named = _named_tool(sentence, tool.name, names)
                excluded = [t for t in terms(_strip_names(sentence, names)) if t not in own]
                boundaries.append((excluded, named))
        return Profile(
            name=tool.name,
            fields={"name": terms(tool.name), "description": terms(kept), "params": terms(params)},
            boundaries=boundaries,
        )

    def _scores(self, query: dict[str, float], profiles: list[Profile]) -> dict[str, float]:
        """BM25 of each tool against weighted query terms, then the boundary sentences."""
        weights = {"name": 2.0, "description": 1.0, "params": 0.4}
        if self.habit == "skim":
            weights = {"name": 2.5, "description": 1.0, "params": 0.0}
        n = len(profiles)
        scores = {p.name: 0.0 for p in profiles}
        for field, weight in weights.items():
            if not weight:
                continue
            docs = [p.fields[field] for p in profiles]
            avg = sum(len(d) for d in docs) / max(1, n) or 1.0
            df = Counter(t for d in docs for t in set(d))
            for profile, doc in zip(profiles, docs, strict=True):
                counts = Counter(doc)
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

    def _position_weight(self, name_terms: list[str], term: str) -> float:
        if self.habit != "skim":
            return 1.0
        return 1.6 / (1 + 0.6 * name_terms.index(term))

    @staticmethod
    def _apply_boundaries(query: dict[str, float], profiles: list[Profile], scores: dict[str, float]) -> None:
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

    def _plan(self, prompt: str, profiles: list[Profile], rng: random.Random) -> list[tuple[str, str]]:
        """(clause, tool) steps: one per clause that clearly asks for something, in order."""
        if not profiles:
            return []
        context = {t: 0.25 for t in terms(describe_values(prompt))}
        candidates: list[tuple[str, str, float]] = []
        for clause in _clauses(prompt):
            query = context | {t: 1.0 for t in terms(describe_values(clause))}
            scores = self._scores(query, profiles)
            if self.noise:
                spread = max(scores.values()) - min(scores.values()) or 1.0
                for name in scores:
                    scores[name] += self.noise * spread * rng.gauss(0, 1)
            best = max(scores, key=lambda k: (scores[k], k))
            candidates.append((clause, best, scores[best]))
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
                args = fill_arguments(by_name[tool].input_schema, clause, prompt, results, shapes_in(text))
                if args != _last_arguments(messages, f"call_{step}_0"):
                    return [ToolCall(f"call_{step}_1", tool, args)], f"That failed ({_first_line(text)}); retrying."
        calls: list[ToolCall] = []
        for step in range(last_step + 1, len(plan)):
            clause, tool = plan[step]
            schema = by_name[tool].input_schema
            args = fill_arguments(schema, clause, prompt, results)
            if calls and _needs_results(schema, args):
                break
            calls.append(ToolCall(f"call_{step}_0", tool, args))
        if calls:
            return calls, f"I'll use {', '.join(c.name for c in calls)}."
        return [], _answer(history)


def _clauses(prompt: str) -> list[str]:
    pieces: list[str] = []
    for sentence in sentences(prompt):
        pieces.extend(p for p in _CLAUSE_BREAK.split(sentence) if p and p.strip())
    return pieces or [prompt]


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
    return any(name not in args for name in schema.get("required") or [])


def _worth_retrying(error_text: str) -> bool:
    if _HOPELESS.search(error_text):
        return False
    return bool(_RETRYABLE.search(error_text) or shapes_in(error_text) or "format" in error_text.lower())


def _answer(history: list[tuple[int, int, str, bool]]) -> str:
    if not history:
        return "<response>I could not find a tool for this request.</response>"
    parts = [text for _, _, text, _ in history]
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
