"""Screening: what is rejected before any eval, with the reason — tool edits that write unsafe text, add glossary
lists, copied tool output, promotion or unknown tool names (the lint text rules), add lint errors the original did
not have, or copy literal values or distinctive phrases from train prompts (unless leakage is allowed); and whole
candidates that do not apply, exceed the token budget, or have no edit left."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from optimizer.definitions import Candidate, Catalog, DefinitionError, apply
from optimizer.lint import Observed, added_text_problems, new_errors
from optimizer.optimize.tokens import definition_tokens
from optimizer.propose.base import Evidence
from optimizer.propose.leakage import leaked_phrases
from optimizer.propose.safety import catalog_text, unsafe_reasons
from optimizer.tasks import Task


def _edited_texts(catalog: Catalog, candidate: Candidate) -> list[str]:
    texts = []
    for name, edit in candidate.edits.items():
        if edit.description is not None and edit.description != catalog.get(name).description:
            texts.append(edit.description)
        texts.extend(edit.parameters.values())
        if edit.name:
            texts.append(edit.name)
    return texts


def observed_in(catalog: Catalog, evidence: Evidence) -> Observed:
    """The results, errors and failed calls' arguments of the evidence's episodes, for the text-copied rule;
    values and phrases the catalog's own definitions use are not counted as copied."""
    calls = [call for episode in (*evidence.failures, *evidence.successes) for call in episode.calls]
    return Observed(results=tuple(c.result for c in calls if not c.is_error),
                    errors=tuple(c.result for c in calls if c.is_error),
                    failed_arguments=tuple(c.arguments for c in calls if c.is_error)).without(catalog_text(catalog))


@dataclass(frozen=True)
class Screened:
    """What screening made of one proposal: the candidate to search (`kept`: the proposal less its rejected tool
    edits) or None when nothing of it can be used, why each dropped tool edit was rejected, and why the whole
    proposal was (`reason`, when `kept` is None)."""

    proposal: Candidate
    kept: Candidate | None
    dropped: dict[str, str] = field(default_factory=dict)
    """original tool name -> why its edit was rejected"""
    reason: str | None = None

    def rejections(self) -> list[dict[str, str]]:
        """The round log's entries: the whole proposal's when nothing of it is kept (its reason names the dropped
        edits), else one per dropped edit, with its tool."""
        if self.kept is None:
            return [{"candidate": self.proposal.key, "reason": str(self.reason)}]
        return [{"candidate": self.proposal.key, "tool": tool, "reason": why} for tool, why in self.dropped.items()]


class Screen:
    """Rejects, before any eval, what cannot be used: text that is unsafe (safety.py), that the lint text rules flag
    (judged against the round's evidence when given), that adds lint errors or leaks train text — one tool edit at
    a time, so that a bad edit costs only itself — and candidates that do not apply or exceed the definition-token
    budget (when one is set). A proposal whose every tool edit is rejected is rejected whole."""

    def __init__(self, catalog: Catalog, train: Sequence[Task], *, allow_leakage: bool,
                 max_tokens: int | None = None) -> None:
        self.catalog = catalog
        self.prompts = [t.prompt for t in train]
        self.answers = [t.expect.answer for t in train]
        self.known_text = [catalog_text(catalog)]
        """the server's own words: text that repeats them copies nothing from the tasks"""
        self.allow_leakage = allow_leakage
        self.max_tokens = max_tokens

    def __call__(self, proposals: Sequence[Candidate],
                 evidence: Evidence | None = None) -> tuple[list[Candidate], list[dict[str, str]]]:
        """The candidates to search (distinct, in proposal order) and every rejection (see `Screened.rejections`)."""
        screened = self.screen(proposals, evidence)
        return accepted_of(screened), [entry for s in screened for entry in s.rejections()]

    def screen(self, proposals: Sequence[Candidate], evidence: Evidence | None = None) -> list[Screened]:
        observed = observed_in(self.catalog, evidence) if evidence is not None else None
        return [self.screen_one(candidate, observed) for candidate in proposals]

    def screen_one(self, candidate: Candidate, observed: Observed | None = None) -> Screened:
        problem = check_candidate(self.catalog, candidate)
        if problem:
            return Screened(candidate, None, reason=problem)
        whole = self.reason(candidate, observed)
        if whole is None:  # the common case, at a tenth of the cost of screening edit by edit
            return Screened(candidate, candidate)
        dropped = {}
        for tool, edit in candidate.edits.items():
            if edit.empty:
                continue
            why = self._text_reason(replace(candidate, edits={tool: edit}), observed)
            if why is not None:
                dropped[tool] = why
        if not dropped:  # no edit is wrong on its own: together they are (lint errors between tools, the budget)
            return Screened(candidate, None, reason=whole)
        kept = replace(candidate, edits={t: e for t, e in candidate.edits.items() if t not in dropped and not e.empty})
        if not kept.edits:
            whole = (next(iter(dropped.values())) if len(dropped) == 1 else
                     "every tool edit was rejected: " + "; ".join(f"{t}: {why}" for t, why in dropped.items()))
            return Screened(candidate, None, dropped, reason=whole)
        why = self.reason(kept, observed)
        return Screened(candidate, None if why else kept, dropped, reason=why)

    def reason(self, candidate: Candidate, observed: Observed | None = None) -> str | None:
        """Why `candidate` as a whole cannot be searched, or None."""
        problem = check_candidate(self.catalog, candidate)
        if problem:
            return problem
        why = self._text_reason(candidate, observed)
        if why is not None:
            return why
        if self.max_tokens is not None:
            tokens = definition_tokens(self.catalog, candidate)
            if tokens > self.max_tokens:
                return f"definitions take {tokens} tokens, over --max-definition-tokens {self.max_tokens}"
        return None

    def _text_reason(self, candidate: Candidate, observed: Observed | None) -> str | None:
        unsafe = unsafe_reasons(self.catalog, candidate)
        if unsafe:  # rejected even with --allow-leakage
            return "unsafe text: " + "; ".join(unsafe[:3])
        text = added_text_problems(self.catalog, candidate, observed)
        if text:
            return "; ".join(text[:3])
        errors = new_errors(self.catalog, apply(self.catalog, candidate).tools)
        if errors:
            return "adds lint errors: " + "; ".join(f"{e.tool or 'server'}: {e.rule}" for e in errors[:5])
        texts = _edited_texts(self.catalog, candidate)
        leaks = sorted({p for text in texts
                        for p in leaked_phrases(text, self.prompts, known_text=self.known_text, answers=self.answers)})
        if leaks and not self.allow_leakage:
            return "copies text from train prompts: " + ", ".join(repr(p) for p in leaks[:5])
        return None


def accepted_of(screened: Sequence[Screened]) -> list[Candidate]:
    """The searchable candidates of a screening, distinct by key, in proposal order."""
    out: dict[str, Candidate] = {}
    for s in screened:
        if s.kept is not None:
            out.setdefault(s.kept.key, s.kept)
    return list(out.values())


def check_candidate(catalog: Catalog, candidate: Candidate) -> str | None:
    """Why a candidate cannot be used as it is, or None."""
    try:
        apply(catalog, candidate)
    except DefinitionError as exc:
        return str(exc)
    return None
