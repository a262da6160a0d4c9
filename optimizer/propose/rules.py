"""The offline rules proposer: it writes only what the server itself showed, and nothing else.

What it writes:
- parameter descriptions stating the facts `parameters.parameter_facts` finds: what a validation error asked for,
  the unit results showed, the schema's enum or format and the accepted shape for a parameter calls got wrong —
  with invented examples of the value's shape, or none;
- "Use X instead." after a tool's description when every train call of the tool failed with errors naming one other
  tool of the catalog (a retired tool whose errors point to its replacement).

It never renames a tool, never rewrites the server's description of what a tool does, and never takes a value, a
name or a field label from tool results or train prompts, except the values the run's ledger shows the server itself
gave for a parameter whose values it refused (`parameters.server_values`). A tool with nothing grounded is left as it
is; with nothing grounded anywhere, `propose` returns no candidate.

Contract: `propose` returns up to k distinct candidates, none equal to `current`, each built on `current` (tools
it has nothing to say about keep their edits), deterministic for (catalog, current, evidence, k, seed).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from optimizer.definitions import Candidate, Catalog, ToolEdit
from optimizer.propose.base import EpisodeSeen, Evidence, OfflineProposer
from optimizer.propose.leakage import leaked_phrases
from optimizer.propose.parameters import parameter_facts
from optimizer.text.mentions import mentioned
from optimizer.text.tokens import terms


@dataclass(frozen=True)
class Variant:
    """One way of writing the facts: with invented examples or without, on every tool or only on tools a failed
    train episode expected or chose first."""

    examples: bool = True
    scope: str = "all"

    def summary(self) -> str:
        parts = ["grounded facts", "with invented examples" if self.examples else "without examples",
                 "on tools of failed tasks only" if self.scope == "failing" else "on every tool"]
        return "rules: " + ", ".join(parts)


VARIANTS = (Variant(), Variant(examples=False), Variant(scope="failing"), Variant(examples=False, scope="failing"))


class RulesProposer(OfflineProposer):
    """Deterministic, offline proposer (see the module docstring); the seed rotates the variants."""

    def __init__(self, variants: Sequence[Variant] = VARIANTS) -> None:
        super().__init__(variants)

    def prepare(self, catalog: Catalog, current: Candidate, evidence: Evidence) -> None:
        self.episodes = [*evidence.failures, *evidence.successes]
        self.prompts = sorted({p for ps in evidence.prompts_by_tool.values() for p in ps}
                              | {e.prompt for e in self.episodes})
        self.failing = {t for e in evidence.failures for t in (*e.expected_tools[:1], *e.chosen_tools[:1])}
        self.pointers = replacements(catalog, self.episodes)

    def write(self, way: Variant, catalog: Catalog, current: Candidate, evidence: Evidence) -> Candidate:
        facts = parameter_facts(catalog, self.episodes, self.prompts, examples=way.examples, ledger=evidence.ledger)
        scope = self.failing if way.scope == "failing" else set(catalog.names)
        return _written(catalog, current, facts, self.pointers, scope, self.prompts)


_STEP_BEFORE = re.compile(r"\b(?:first|before|beforehand|prior\s+to)\b", re.IGNORECASE)
"""An error that names another tool as a step to take first ("use git_set_working_dir first") names no replacement."""


def replacements(catalog: Catalog, episodes: Sequence[EpisodeSeen]) -> dict[str, str]:
    """Tool -> the other catalog tool its errors name, for a tool whose every train call failed (and was called
    at least twice) with errors that name exactly that one other tool, never as a step to take first
    (`_STEP_BEFORE`)."""
    results: dict[str, list[tuple[bool, str]]] = {}
    for episode in episodes:
        for call in episode.calls:
            if call.tool is not None:
                results.setdefault(call.tool, []).append((call.is_error, call.result))
    out = {}
    for tool, seen in results.items():
        if len(seen) < 2 or not all(error and not _STEP_BEFORE.search(text) for error, text in seen):
            continue
        named = {name for _, text in seen for name in mentioned(text, catalog.names) if name != tool}
        if len(named) == 1:
            out[tool] = named.pop()
    return out


def _written(catalog: Catalog, current: Candidate, facts: Mapping[str, Mapping[str, str]],
             pointers: Mapping[str, str], scope: set[str], prompts: Sequence[str]) -> Candidate:
    """`current` with the facts added to the parameter descriptions, and the pointers to the descriptions, of the
    tools in `scope`."""
    edits = dict(current.edits)
    for tool in catalog.tools:
        if tool.name not in scope:
            continue
        edit = edits.get(tool.name) or ToolEdit()
        parameters = dict(edit.parameters)
        for name, fact in facts.get(tool.name, {}).items():
            said = parameters.get(name, str(tool.properties[name].get("description") or ""))
            if (joined := _joined(said, fact)) != said:
                parameters[name] = joined
        description = edit.description
        if tool.name in pointers:
            old = tool.description if description is None else description
            line = _joined(old, f"Use {pointers[tool.name]} instead.")
            description = line if line != old and not leaked_phrases(line, prompts, known_text=[old]) else description
        if parameters != edit.parameters or description != edit.description:
            edits[tool.name] = replace(edit, description=description, parameters=parameters)
    return Candidate(edits=edits, scheme=current.scheme, word=current.word)


def _joined(said: str, fact: str) -> str:
    """`said` followed by the fact, unless `said` holds every word of it (its example aside) already."""
    if said and set(terms(re.sub(r",?\s*e\.g\..*", "", fact))) <= set(terms(said)):
        return said
    said = said.strip()
    return f"{said if said.endswith(('.', '!', '?')) or not said else said + '.'} {fact}".strip()

