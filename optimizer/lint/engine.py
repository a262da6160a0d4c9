"""Running the lint rules over a catalog: per-tool and server reports, scores, and comparing two catalogs.

Contracts:
- `lint(catalog)` reads definitions only: no model, no network, deterministic. Rules and their ids are in
  `optimizer.lint.registry.RULES`, documented one paragraph each in docs/lint.md.
- Scores run from 0 (worst) to 100 (no findings). A tool starts at 100 and loses 25 per error, 8 per
  warning and 2 per info, floor 0. The server score is the mean tool score (100 for an empty server)
  minus the same penalties for each server-level finding, floor 0, rounded to one decimal.
- Token counts are local estimates (`optimizer.text.tokens.estimate_tokens` over each definition's canonical JSON).
- A tool's findings are ordered most severe first; within a severity, in the order `lint_tools` runs the
  checks (description, look-alikes, parameters, returns, mechanics, annotations, name, definition size, text,
  security).
- `observed` (what a run saw tools return) only widens text-copied; `optimizer lint` runs without it.
- `new_errors` matches tools by POSITION in catalog order (which `apply()` preserves), so renamed candidates
  are compared with the tool they replace.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from optimizer.definitions import Catalog, ToolDef
from optimizer.lint.findings import SEVERITIES, Finding
from optimizer.lint.rules_annotations import check_annotations
from optimizer.lint.rules_catalog import check_neighbours, check_server
from optimizer.lint.rules_description import (
    check_description,
    check_mechanics,
    check_returns,
    check_tokens,
    definition_tokens,
)
from optimizer.lint.rules_names import check_name
from optimizer.lint.rules_parameters import check_parameters
from optimizer.lint.rules_security import check_security, check_security_server
from optimizer.lint.rules_text import Observed, check_text
from optimizer.lint.similarity import Similarity

DEFAULT_MAX_TOOLS = 20
PENALTY: Mapping[str, int] = {"error": 25, "warning": 8, "info": 2}


@dataclass(frozen=True)
class ToolReport:
    """One tool's findings (most severe first), score (0-100) and estimated definition tokens."""

    name: str
    position: int
    score: int
    tokens: int
    findings: tuple[Finding, ...]

    def to_json(self) -> dict[str, Any]:
        return {"score": self.score, "tokens": self.tokens, "findings": [f.to_json() for f in self.findings]}


@dataclass(frozen=True)
class LintReport:
    """A server's lint result. `tools` are in catalog order; `score` is the server score."""

    server_name: str
    tools: tuple[ToolReport, ...]
    server_findings: tuple[Finding, ...]
    score: float
    tokens: int

    @property
    def findings(self) -> list[Finding]:
        """Every finding: tools in catalog order, then server-level ones."""
        return [f for t in self.tools for f in t.findings] + list(self.server_findings)

    def worst_first(self) -> list[ToolReport]:
        """Tools by ascending score, then by catalog position."""
        return sorted(self.tools, key=lambda t: (t.score, t.position))

    def to_json(self) -> dict[str, Any]:
        """The `optimizer lint --json` document."""
        return {
            "score": self.score,
            "tools": {t.name: t.to_json() for t in self.tools},
            "server_findings": [f.to_json() for f in self.server_findings],
            "tokens": self.tokens,
        }


def lint(catalog: Catalog, *, max_tools: int = DEFAULT_MAX_TOOLS, observed: Observed | None = None) -> LintReport:
    """Check every rule against a server's tool definitions; see the module docstring for the scores."""
    return lint_tools(catalog.server_name, catalog.tools, max_tools=max_tools, observed=observed)


def lint_tools(server_name: str, tools: Sequence[ToolDef], *, max_tools: int = DEFAULT_MAX_TOOLS,
               observed: Observed | None = None) -> LintReport:
    """`lint` over a plain sequence of tools, which may repeat names (reported as name-invalid errors)."""
    tools = list(tools)
    pairwise = check_neighbours(tools, Similarity(tools))
    text = check_text(tools, observed)
    security = check_security(server_name, tools)
    reports = []
    for position, tool in enumerate(tools):
        tokens = definition_tokens(tool)
        found = [*check_description(tool), *pairwise.get(position, []), *check_parameters(tool),
                 *check_returns(tool), *check_mechanics(tool), *check_annotations(tool),
                 *check_name(tool, server_name), *check_tokens(tool, tokens), *text.get(position, []),
                 *security.get(position, [])]
        reports.append(ToolReport(tool.name, position, _score(found), tokens, tuple(_ordered(found))))
    server = [*check_server(server_name, tools, max_tools), *check_security_server(tools)]
    mean = sum(r.score for r in reports) / len(reports) if reports else 100.0
    score = round(max(0.0, mean - sum(PENALTY[f.severity] for f in server)), 1)
    return LintReport(server_name, tuple(reports), tuple(_ordered(server)), score, sum(r.tokens for r in reports))


def _score(findings: Sequence[Finding]) -> int:
    return max(0, 100 - sum(PENALTY[f.severity] for f in findings))


def _ordered(findings: Sequence[Finding]) -> list[Finding]:
    """Most severe first; within a severity, the order the checks produced them."""
    return sorted(findings, key=lambda f: SEVERITIES.index(f.severity))


def new_errors(original: Catalog, candidate_tools: Sequence[ToolDef], *, max_tools: int = DEFAULT_MAX_TOOLS,
               before: LintReport | None = None) -> list[Finding]:
    """Error-level findings of the candidate definitions that the original catalog does not have (`before`: its
    lint report, when the caller keeps it for many candidates).

    Findings are compared by (rule, tool position in catalog order, field), so a renamed tool is compared
    with the original it replaces; server-level errors are compared by (rule, field, message)."""
    before = before or lint(original, max_tools=max_tools)
    after = lint_tools(original.server_name, candidate_tools, max_tools=max_tools)
    known = {(f.rule, t.position, f.field) for t in before.tools for f in t.findings if f.severity == "error"}
    known_server = {(f.rule, f.field, f.message) for f in before.server_findings if f.severity == "error"}
    out = [f for t in after.tools for f in t.findings
           if f.severity == "error" and (f.rule, t.position, f.field) not in known]
    out += [f for f in after.server_findings
            if f.severity == "error" and (f.rule, f.field, f.message) not in known_server]
    return out


def findings_as_evidence(report: LintReport) -> list[dict[str, Any]]:
    """Every finding as a plain dict (rule, severity, tool, field, message), most severe first, for a proposer."""
    return [f.to_json() for f in _ordered(report.findings)]
