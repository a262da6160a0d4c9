"""Screening: what is rejected before any eval, with the reason — tool edits that write unsafe text, add glossary
lists, copied tool output, promotion or unknown tool names (the lint text rules), add lint errors the original did
not have, or copy literal values or distinctive phrases from train prompts (unless leakage is allowed); and whole
candidates that do not apply, exceed the token budget, or have no edit left."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from optimizer.definitions import Candidate, Catalog, DefinitionError, apply
from optimizer.lint import LintReport, Observed, added_text_problems, lint, new_errors
from optimizer.optimize.tokens import definition_tokens
from optimizer.propose.base import Evidence
from optimizer.propose.leakage import leaked_phrases
from optimizer.propose.ledger import Ledger
from optimizer.propose.safety import catalog_strings, catalog_text, unsafe_reasons
from optimizer.references import given_names, settled, unexposed
from optimizer.search.study import SearchResult, without
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


def observed_in(catalog: Catalog, evidence: Evidence, grounded: Sequence[str] = ()) -> Observed:
    """The results, errors and failed calls' arguments of the evidence's episodes, for the text-copied rule;
    values and phrases the catalog's own definitions use, and the values the server showed (`grounded`), are not
    counted as copied."""
    calls = [call for episode in (*evidence.failures, *evidence.successes) for call in episode.calls]
    return Observed(results=tuple(c.result for c in calls if not c.is_error),
                    errors=tuple(c.result for c in calls if c.is_error),
                    failed_arguments=tuple(c.arguments for c in calls if c.is_error)).without(
                        "\n".join([catalog_text(catalog), *(g.lower() for g in grounded)]))


@dataclass(frozen=True)
class Screened:
    """What screening made of one proposal: the candidate to search (`kept`: the proposal less its rejected tool
    edits, its texts naming tools as `kept` does) or None when nothing of it can be used; why the proposal as
    written failed (`whole`, None when it passed whole), why each dropped tool edit was rejected, and why nothing
    of it is kept (`reason`, when `kept` is None)."""

    proposal: Candidate
    kept: Candidate | None
    dropped: dict[str, str] = field(default_factory=dict)
    """original tool name -> why its edit was rejected"""
    reason: str | None = None
    whole: str | None = None

    def rejections(self) -> list[dict[str, str]]:
        """The round log's entries: first the proposal's own, with the reason it failed as written and its
        `outcome` ("rejected": nothing searched; "trimmed": searched without the dropped edits; `then`: why what was
        left failed too, when that differs), then one per dropped edit, with its tool. None when it passed whole."""
        whole = self.whole or (self.reason if self.kept is None else None)
        if whole is None:
            return []
        head = {"candidate": self.proposal.key, "reason": whole,
                "outcome": "rejected" if self.kept is None else "trimmed"}
        if self.kept is None and self.reason and self.reason != whole:
            head["then"] = self.reason
        edits = [{"candidate": self.proposal.key, "tool": tool, "reason": why} for tool, why in self.dropped.items()]
        one_edit = self.kept is None and list(self.dropped.values()) == [whole]  # its line would say it again
        return [head] if one_edit else [head, *edits]


class Screen:
    """Rejects, before any eval, what cannot be used: text that is unsafe (safety.py), that the lint text rules flag
    (judged against the round's evidence when given), that adds lint errors or leaks train text — one tool edit at
    a time when the proposal fails as a whole, so that a bad edit costs only itself; an edit is judged with its
    proposal's names for the tools it mentions — and candidates that do not apply or exceed the definition-token
    budget (when one is set). A proposal whose every tool edit is rejected is rejected whole.

    It remembers every name the screened proposals gave a tool, so that `final` can tell whether a candidate the
    search mixed names a tool it does not expose."""

    def __init__(self, catalog: Catalog, train: Sequence[Task], *, allow_leakage: bool,
                 max_tokens: int | None = None) -> None:
        self.catalog = catalog
        self.prompts = [t.prompt for t in train]
        self.answers = [t.expect.answer for t in train]
        self.known_text = catalog_strings(catalog)
        """the server's own words: text that repeats them copies nothing from the tasks"""
        self.allow_leakage = allow_leakage
        self.max_tokens = max_tokens
        self.ledger: Ledger | None = None
        """what the server accepted and refused, from the last evidence screened with (`screen`)"""
        self.grounded: list[str] = []
        """values the server showed as parameters' (`Ledger.grounded`): no text stating one copies a task"""
        self.names: dict[str, str] = {}
        """every new name a screened proposal gave a tool -> the tool's original name"""

    @functools.cached_property
    def original_lint(self) -> LintReport:
        """The server's own definitions, linted once for every candidate's `new_errors`."""
        return lint(self.catalog)

    def __call__(self, proposals: Sequence[Candidate],
                 evidence: Evidence | None = None) -> tuple[list[Candidate], list[dict[str, str]]]:
        """The candidates to search (distinct, in proposal order) and every rejection (see `Screened.rejections`)."""
        screened = self.screen(proposals, evidence)
        return accepted_of(screened), [entry for s in screened for entry in s.rejections()]

    def screen(self, proposals: Sequence[Candidate], evidence: Evidence | None = None) -> list[Screened]:
        if evidence is not None and evidence.ledger is not None:
            self.ledger, self.grounded = evidence.ledger, evidence.ledger.grounded(self.answers)
        observed = observed_in(self.catalog, evidence, self.grounded) if evidence is not None else None
        return [self.screen_one(candidate, observed) for candidate in proposals]

    def screen_one(self, candidate: Candidate, observed: Observed | None = None) -> Screened:
        problem = check_candidate(self.catalog, candidate)
        if problem:
            return Screened(candidate, None, reason=problem, whole=problem)
        for name, tool in given_names(candidate).items():
            self.names.setdefault(name, tool)
        whole = self.reason(candidate, observed)
        if whole is None:  # the common case, at a tenth of the cost of screening edit by edit
            return Screened(candidate, candidate)
        dropped = {}
        for tool, edit in candidate.edits.items():
            if edit.empty:
                continue
            why = self._text_reason(settled(replace(candidate, edits={tool: edit}), candidate), observed)
            if why is not None:
                dropped[tool] = why
        if not dropped:  # no edit is wrong on its own: together they are (lint errors between tools, the budget)
            return Screened(candidate, None, reason=whole, whole=whole)
        rest = {t: e for t, e in candidate.edits.items() if t not in dropped and not e.empty}
        if not rest:
            return Screened(candidate, None, dropped, reason=whole, whole=whole)
        kept = settled(replace(candidate, edits=rest), candidate)
        why = self.reason(kept, observed)
        return Screened(candidate, None if why else kept, dropped, reason=why, whole=whole)

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

    def final(self, candidate: Candidate) -> str | None:
        """Why a candidate the search made (edits mixed from several proposals) cannot ship, or None: any reason a
        whole candidate is rejected for, or a text that names a tool the candidate does not expose — by a name a
        proposal gave it or by its original name, with or without the namespace."""
        why = self.reason(candidate)
        if why is not None:
            return why
        ghosts = unexposed(self.catalog, candidate, self.names)
        return f"names tools it does not expose: {', '.join(ghosts)}" if ghosts else None

    def shippable(self, outcome: SearchResult) -> tuple[SearchResult | None, dict[str, str]]:
        """The search's result less the trials whose candidate fails `final` (None when no complete trial is left),
        and why each such candidate failed, by key."""
        verdicts: dict[str, str | None] = {}
        for trial in outcome.trials:
            key = trial.candidate.key
            if key not in verdicts:
                verdicts[key] = None if trial.candidate.is_baseline else self.final(trial.candidate)
        unfit = {key: why for key, why in verdicts.items() if why is not None}
        return without(outcome, set(unfit)), unfit

    def _text_reason(self, candidate: Candidate, observed: Observed | None) -> str | None:
        unsafe = unsafe_reasons(self.catalog, candidate)
        if unsafe:  # rejected even with --allow-leakage
            return "unsafe text: " + "; ".join(unsafe[:3])
        text = added_text_problems(self.catalog, candidate, observed)
        if text:
            return "; ".join(text[:3])
        errors = new_errors(self.catalog, apply(self.catalog, candidate).tools, before=self.original_lint)
        if errors:
            return "adds lint errors: " + "; ".join(f"{e.tool or 'server'}: {e.rule}" for e in errors[:5])
        refused = self._teaches_refused(candidate)
        if refused:
            return "; ".join(refused[:3])
        texts = _edited_texts(self.catalog, candidate)
        known = [*self.known_text, *self.grounded]
        leaks = sorted({p for text in texts
                        for p in leaked_phrases(text, self.prompts, known_text=known, answers=self.answers)})
        if leaks and not self.allow_leakage:
            return "copies text from train prompts: " + ", ".join(repr(p) for p in leaks[:5])
        return None

    def _teaches_refused(self, candidate: Candidate) -> list[str]:
        """Each value an edit states for a parameter that the server refused for it in this run (`Ledger`)."""
        if self.ledger is None:
            return []
        out = []
        for tool, edit in sorted(candidate.edits.items()):
            original = self.catalog.get(tool)
            texts = {name: text for name, text in edit.parameters.items()
                     if text != str((original.properties.get(name) or {}).get("description") or "")}
            if edit.description is not None and edit.description != original.description:
                texts[""] = edit.description
            out += self.ledger.teaching_refused(tool, texts) if texts else []
        return out


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
