"""Screening: candidates rejected before any eval, with the reason — ones that do not apply, write unsafe text,
add lint errors the original did not have, or copy literal values or distinctive phrases from train prompts
(unless leakage is allowed)."""

from __future__ import annotations

from collections.abc import Sequence

from optimizer.definitions import Candidate, Catalog, DefinitionError, apply
from optimizer.lint import new_errors
from optimizer.optimize.tokens import definition_tokens
from optimizer.propose.leakage import leaked_phrases
from optimizer.propose.safety import unsafe_reasons
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


class Screen:
    """Rejects candidates before any eval: ones that do not apply, write unsafe text (safety.py), add lint
    errors, exceed the definition-token budget (when one is set), or leak train text."""

    def __init__(self, catalog: Catalog, train: Sequence[Task], *, allow_leakage: bool,
                 max_tokens: int | None = None) -> None:
        self.catalog = catalog
        self.prompts = [t.prompt for t in train]
        self.allow_leakage = allow_leakage
        self.max_tokens = max_tokens

    def __call__(self, proposals: Sequence[Candidate]) -> tuple[list[Candidate], list[dict[str, str]]]:
        accepted: list[Candidate] = []
        rejected: list[dict[str, str]] = []
        for candidate in proposals:
            reason = self.reason(candidate)
            if reason is None:
                accepted.append(candidate)
            else:
                rejected.append({"candidate": candidate.key, "reason": reason})
        return accepted, rejected

    def reason(self, candidate: Candidate) -> str | None:
        problem = check_candidate(self.catalog, candidate)
        if problem:
            return problem
        unsafe = unsafe_reasons(self.catalog, candidate)
        if unsafe:  # rejected even with --allow-leakage
            return "unsafe text: " + "; ".join(unsafe[:3])

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
