"""Screening: candidates rejected before any eval, with the reason — ones that do not apply, write unsafe text,
add glossary lists, copied tool output, promotion or unknown tool names (the lint text rules), add lint errors the
original did not have, or copy literal values or distinctive phrases from train prompts (unless leakage is
allowed)."""

from __future__ import annotations

from collections.abc import Sequence

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


class Screen:
    """Rejects candidates before any eval: ones that do not apply, write unsafe text (safety.py), add text the
    lint text rules flag (judged against the round's evidence when given), add lint errors, exceed the
    definition-token budget (when one is set), or leak train text."""

    def __init__(self, catalog: Catalog, train: Sequence[Task], *, allow_leakage: bool,
                 max_tokens: int | None = None) -> None:
        self.catalog = catalog
        self.prompts = [t.prompt for t in train]
        self.allow_leakage = allow_leakage
        self.max_tokens = max_tokens

    def __call__(self, proposals: Sequence[Candidate],
                 evidence: Evidence | None = None) -> tuple[list[Candidate], list[dict[str, str]]]:
        accepted: list[Candidate] = []
        rejected: list[dict[str, str]] = []
        observed = observed_in(self.catalog, evidence) if evidence is not None else None
        for candidate in proposals:
            reason = self.reason(candidate, observed)
            if reason is None:
                accepted.append(candidate)
            else:
                rejected.append({"candidate": candidate.key, "reason": reason})
        return accepted, rejected

    def reason(self, candidate: Candidate, observed: Observed | None = None) -> str | None:
        problem = check_candidate(self.catalog, candidate)
        if problem:
            return problem
        unsafe = unsafe_reasons(self.catalog, candidate)
        if unsafe:  # rejected even with --allow-leakage
            return "unsafe text: " + "; ".join(unsafe[:3])
        text = added_text_problems(self.catalog, candidate, observed)
        if text:
            return "; ".join(text[:3])

        errors = new_errors(self.catalog, apply(self.catalog, candidate).tools)
        if errors:
            return "adds lint errors: " + "; ".join(f"{e.tool or 'server'}: {e.rule}" for e in errors[:5])
        if self.max_tokens is not None:
            tokens = definition_tokens(self.catalog, candidate)
            if tokens > self.max_tokens:
                return f"definitions take {tokens} tokens, over --max-definition-tokens {self.max_tokens}"
        texts = _edited_texts(self.catalog, candidate)
        leaks = sorted({p for text in texts for p in leaked_phrases(text, self.prompts)})
        if leaks and not self.allow_leakage:
            return "copies text from train prompts: " + ", ".join(repr(p) for p in leaks[:5])
        return None


def check_candidate(catalog: Catalog, candidate: Candidate) -> str | None:
    """Why a candidate cannot be used as it is, or None."""
    try:
        apply(catalog, candidate)
    except DefinitionError as exc:
        return str(exc)
    return None
