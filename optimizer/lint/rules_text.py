"""Rules on the written text of descriptions and parameter descriptions: text-glossary, text-copied,
text-promotion and text-unknown-tool.

Contracts:
- `check_text(tools, observed)` reads every tool's description and parameter descriptions; no model,
  no network, deterministic. Findings' fields are `description` or `parameters.PATH`, and each message starts
  with the quoted text it is about.
- Without `observed` (as in `optimizer lint`), text-copied looks only for the shapes of error messages and
  stack traces. With it (as in optimize's screening), text also counts as copied when it repeats a run of
  words from a tool result, text from an error around a value, or a value an agent sent in a failed call.
- Orders aimed at the agent ("always call this tool", "ignore previous instructions") are not checked here:
  they belong to the optimize safety screen (`optimizer.propose.safety`). text-promotion covers claims.
- `added_text_problems` is what screening rejects a candidate for: the hits of these rules in the candidate's
  definitions that the original tool at the same position does not have in the same field, one line each.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from optimizer.definitions import SCHEMES, Candidate, Catalog, ToolDef, apply, namespace_word, namespaced
from optimizer.lint.findings import Finding, Rule, finding, rule
from optimizer.lint.schema import iter_params
from optimizer.lint.text_shapes import (
    ERROR_SHAPES,
    PROMOTION,
    glossary_items,
    identifier_references,
    parameter_lists,
    schema_words,
)
from optimizer.text.tokens import STOPWORDS, words
from optimizer.text.values import find_values

COPIED_RUN = 6
"""Words in a row, at least half of them content words, that make text a copy of a tool result."""
_EXAMPLE = re.compile(r"(?:\blike|\be\.?\s?g\.?,?|\bsuch\s+as|\bfor\s+(?:example|instance),?|\bexample:?|\bformat:?)\s*"
                      r"['\"`]?$", re.IGNORECASE)

DECLARED: dict[str, Rule] = {r.id: r for r in (
    rule("text-glossary", "text", "warning", "Text is written in sentences, not glossary lists.", """
        A parenthesised list of words or phrases that glosses a topic ("use it for customers (who someone is,
        contact details, profile) or files (folders, paths, attachments)", "Not for billing (invoices, payments,
        balances owed)") stands in for a sentence: it reads as keywords for matching, not as an explanation a
        model can reason from. It fires on a list of two or more items that follows a single word (or words joined
        by commas, or, and) of a for- or about-clause, and on a list of three or more items that are mostly verbs,
        alone or with a particle ("Create (new, add, write, file, log or raise)"; a verb with its object, as in
        "(change a value, fix a line)", is an example of use). Every item must be a plain word or phrase of at most six
        words: lists with digits, quotes, code, paths, capitals, true/false, or that start with e.g., i.e., such
        as, like, including, in, one of and similar asides are values or examples and are left alone, as are lists
        of the schema's own enum values and lists after any other word ("account status (active, suspended,
        closed)"). A colon followed only by the tool's own parameter names ("Inputs: id (required), reason
        (optional)") fires too, since it restates the schema. Fix: say in a sentence what the tool is for and
        when, e.g. "Use to find out who a customer is from their email or phone." """),
    rule("text-copied", "text", "warning", "Text is not copied from tool results or error messages.", """
        A description is read as the tool's documentation; an error message pasted into it ("Bad member value
        'L-1234'.") documents one failed call, often with the wrong value. It fires on error-message shapes: a short
        sentence that starts with invalid, bad, unknown, unsupported, malformed, missing, not found, no such,
        could not, unable to, failed to or a similar word and ends on its one quoted value (or a colon and a
        value); an echo such as "(got 'x')"; a sentence starting with Error:, Exception: or a name ending in Error
        or Exception; and stack-trace lines. In optimize's screening it also fires on text that repeats six or more
        words in a row (half of them content words) of a tool result the run observed, six or more words of an
        observed error message around a value the error reports (values it gives as examples, after like or e.g.,
        do not count), or a value an agent sent in a call that failed; values and phrases the server's own
        definitions use are allowed. Fix: describe the rule the error enforces ("An order number like #NNNNN")
        instead of the error or the call."""),
    rule("text-promotion", "text", "warning", "Text describes the tool instead of promoting it.", """
        Text written to win selection rather than to describe the tool turns a definition into a
        tool-preference attack: superlatives ("the best tool", "the most reliable source", "best-in-class"),
        claims over the other tools ("better than any other tool", "the only tool you need", "recommended over
        other tools", "use this instead of any other"), requests to prefer it or to ignore the others ("prefer
        this tool", "ignore other tools") and precedence ("must always be called first"). A boundary with a named
        tool ("for text files use read_text_file instead") is not promotion. Orders aimed at the agent ("always
        call this tool") are rejected by optimize's safety screen. Fix: state what the tool does and when it is
        the right one, and let the other tools' descriptions draw their own lines."""),
    rule("text-unknown-tool", "text", "warning", "Text names only tools that exist.", """
        A description that points to a tool the server does not list ("use get_invoice instead") sends a model
        looking for a tool it cannot call. An identifier (snake_case or camelCase; kebab-case only on servers that
        name tools that way) counts as a tool name after call or invoke, or before instead, tool or function;
        after use, try, via, with, from, see, after, before, then or returned by, before shows, gives, lists,
        returns, provides, finds, tells, reports, looks up, fetches or retrieves, or in backticks, it counts only
        when its first word (or its second, after a namespace word) is a verb, so parameters and fields such as
        file_path or created_at mentioned in prose do not. All-capital identifiers never count. Names of the
        server's tools, property names and enum values of any schema, and, when a candidate renames tools or adds a
        namespace, every other name of a tool are not reported. Fix: name the tool as the server lists it, or drop
        the reference; for a tool on another server, say which server."""),
)}

_LABELS = {"text-glossary": "glossary list", "text-copied": "copied text", "text-promotion": "promotional text",
           "text-unknown-tool": "unknown tool"}


@dataclass(frozen=True)
class Observed:
    """What a run saw: result texts of calls that succeeded, error texts, and the arguments of calls that failed.

    `without(known)` is the same, except that values and runs of words that occur in `known` (the server's own
    definitions) no longer count as copied."""

    results: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    failed_arguments: tuple[Mapping[str, Any], ...] = ()
    known: str = ""

    def without(self, known: str) -> Observed:
        return Observed(self.results, self.errors, self.failed_arguments, known.lower())

    @cached_property
    def known_words(self) -> str:
        return " " + " ".join(words(self.known)) + " "

    @cached_property
    def result_runs(self) -> frozenset[tuple[str, ...]]:
        return frozenset(g for text in self.results for g in _runs(text))

    @cached_property
    def error_runs(self) -> frozenset[tuple[str, ...]]:
        """Runs of error text that hold a whole value the error reports (an id, a quoted string, a number…);
        values it gives as examples ("like #10042", "e.g. 2026-03-01") do not count."""
        out: set[tuple[str, ...]] = set()
        for text in self.errors:
            examples = {f.value for f in find_values(text, 0) if _EXAMPLE.search(text[: f.position])}
            for segment in _segments(text):
                spans = _value_spans(segment, examples)
                out.update(g for i, g in _indexed_runs(words(segment))
                           if any(i <= start and end <= i + COPIED_RUN for start, end in spans))
        return frozenset(out)

    @cached_property
    def failed_values(self) -> frozenset[str]:
        """String values agents sent in failed calls that look like data: 4 to 80 characters with a digit or a
        symbol, not only digits, and not in the server's own text."""
        return frozenset(v for args in self.failed_arguments for v in _strings(args)
                         if 4 <= len(v) <= 80 and re.search(r"[\d@#/:_.-]", v) and not v.isdigit()
                         and v.lower() not in self.known)


@dataclass(frozen=True)
class _Hit:
    rule: str
    field: str
    snippet: str
    message: str


def check_text(tools: Sequence[ToolDef], observed: Observed | None = None) -> dict[int, list[Finding]]:
    """text-* findings by tool position."""
    return {i: [finding(DECLARED[h.rule], tools[i], h.field, h.message) for h in hits]
            for i, hits in _hits(tools, observed, ()).items() if hits}


def added_text_problems(catalog: Catalog, candidate: Candidate, observed: Observed | None = None) -> list[str]:
    """One line per text-* hit of the candidate's definitions that the original tool at the same position (the
    one it replaces; `apply()` keeps the order) lacks in the same field, e.g. "glossary list in get_customer:
    '(who someone is, contact details, profile)'". Other names of a tool (original, renamed, with or without
    the namespace) do not count as unknown tools. The candidate must apply (`DefinitionError` otherwise)."""
    exposed = apply(catalog, candidate).tools
    before = {(i, h.rule, h.field, h.snippet.lower()) for i, hits in _hits(catalog.tools, observed, ()).items()
              for h in hits}
    out = []
    for i, hits in _hits(exposed, observed, _other_names(catalog, candidate)).items():
        for h in hits:
            if (i, h.rule, h.field, h.snippet.lower()) not in before:
                where = "" if h.field == "description" else f" parameter {h.field.removeprefix('parameters.')}"
                out.append(f"{_LABELS[h.rule]} in {catalog.tools[i].name}{where}: {_quote(h.snippet)}")
    return out


def _other_names(catalog: Catalog, candidate: Candidate) -> set[str]:
    word = namespace_word(catalog, candidate)
    bases = {tool.name for tool in catalog.tools} | {edit.name for edit in candidate.edits.values() if edit.name}
    return {namespaced(base, scheme, word) for base in bases for scheme in SCHEMES}


def _hits(tools: Sequence[ToolDef], observed: Observed | None, also_known: Collection[str]) -> dict[int, list[_Hit]]:
    names = {t.name for t in tools} | set(also_known)
    known_words = schema_words(tools)
    kebab = any("-" in t.name for t in tools)
    out: dict[int, list[_Hit]] = {}
    for i, tool in enumerate(tools):
        hits: list[_Hit] = []
        params = list(iter_params(tool.input_schema)) if isinstance(tool.input_schema, Mapping) else []
        enum_values = schema_words([tool], values_only=True)
        param_names = {p.name for p in params}
        texts = [("description", tool.description)] + [(f"parameters.{p.path}", p.description) for p in params]
        for where, text in texts:
            if not text:
                continue
            hits.extend(_glossary(where, text, enum_values, param_names))
            hits.extend(_copied(where, text, observed))
            hits.extend(_promotion(where, text))
            hits.extend(_Hit("text-unknown-tool", where, name,
                             f"'{name}' is not a tool of this server; name a tool as the server lists it, or say "
                             "which server it is on.")
                        for name in identifier_references(text, kebab=kebab)
                        if name not in names and name not in known_words)
        out[i] = _unique(hits)
    return out


def _glossary(where: str, text: str, enum_values: Collection[str], param_names: Collection[str]) -> Iterator[_Hit]:
    for snippet, items in glossary_items(text):
        if {item.lower() for item in items} <= {v.lower() for v in enum_values}:
            continue
        yield _Hit("text-glossary", where, snippet,
                   f"'{snippet}' is a glossary list standing in for a sentence; say in a sentence what the tool is "
                   "for and when to use it.")
    for snippet in parameter_lists(text, param_names):
        yield _Hit("text-glossary", where, snippet,
                   f"'{snippet}' lists the parameter names the schema already gives; say what the inputs mean or "
                   "drop the list.")


def _copied(where: str, text: str, observed: Observed | None) -> Iterator[_Hit]:
    for pattern in ERROR_SHAPES:
        for m in pattern.finditer(text):
            yield _Hit("text-copied", where, m.group(0).strip(),
                       f"'{m.group(0).strip()}' reads as an error message, not documentation; describe the rule it "
                       "enforces (the format or the allowed values) instead.")
    if observed is None:
        return
    lowered = text.lower()
    for value in sorted(observed.failed_values):
        if re.search(rf"(?<![\w@#$-]){re.escape(value.lower())}(?![\w@-])", lowered):
            yield _Hit("text-copied", where, value,
                       f"'{value}' is a value an agent sent in a call that failed; describe the format instead.")
    for source, runs in (("a tool result", observed.result_runs), ("an error message", observed.error_runs)):
        if not runs:
            continue
        for segment in _segments(text):
            seq = words(segment)
            for _, gram in _indexed_runs(seq):
                if gram in runs and f" {' '.join(gram)} " not in observed.known_words:
                    snippet = " ".join(gram)
                    yield _Hit("text-copied", where, snippet,
                               f"'{snippet}' is copied from {source} the run observed; describe the tool, not one "
                               "call's output.")
                    break


def _promotion(where: str, text: str) -> Iterator[_Hit]:
    for m in PROMOTION.finditer(text):
        yield _Hit("text-promotion", where, m.group(0).strip(),
                   f"'{m.group(0).strip()}' promotes the tool instead of describing it; say what it does and when "
                   "it is the right tool.")


def _unique(hits: Iterable[_Hit]) -> list[_Hit]:
    seen: set[tuple[str, str, str]] = set()
    out = []
    for h in hits:
        key = (h.rule, h.field, h.snippet.lower())
        if key not in seen:
            seen.add(key)
            out.append(h)
    return out


def _segments(text: str) -> list[str]:
    """Clauses of prose or of the strings inside JSON: sentence punctuation and JSON syntax end a run."""
    return [part for part in re.split(r"[.;:!?]+(?=\s|$)|[()\[\]{}\"“”\n]+", text) if part.strip()]


def _indexed_runs(seq: list[str]) -> Iterator[tuple[int, tuple[str, ...]]]:
    for i in range(len(seq) - COPIED_RUN + 1):
        gram = tuple(seq[i : i + COPIED_RUN])
        if 2 * sum(w not in STOPWORDS for w in gram) >= COPIED_RUN:
            yield i, gram


def _runs(text: str) -> Iterator[tuple[str, ...]]:
    for segment in _segments(text):
        for _, gram in _indexed_runs(words(segment)):
            yield gram


def _value_spans(segment: str, examples: Collection[str]) -> list[tuple[int, int]]:
    """Word spans (start, end) in `words(segment)` of the values found in the segment, except `examples`."""
    spans = []
    for found in find_values(segment, 0):
        if (found.kind == "number" and len(found.value) < 2) or found.value in examples:
            continue
        start = len(words(segment[: found.position]))
        spans.append((start, start + max(1, len(words(found.value)))))
    return spans


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value.strip()
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def _quote(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    short = text if len(text) <= limit else text[: limit - 1] + "…"
    return "'" + short.replace("'", "’") + "'"

